//! seed_oss, step3, functiongemma, hunyuan, hy_v4, poolside_v1, minicpm5, gigachat35, plamo3 and
//! solar_open2 beyond the shared matrix: aliases, native reasoning, special-token input (markers
//! typed as text stay text), rendering, hostile input.

use serde_json::{json, Value};
use toolwire_core::formats;
use toolwire_core::message::Message;
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}, "unit": {"type": "string"}, "city": {"type": "string"},
            "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "filters": {"type": "object"}}}}}
    ]))
    .unwrap()
}

fn arguments(message: &Message, k: usize) -> Value {
    serde_json::from_str(&message.tool_calls[k].arguments).unwrap()
}

#[test]
fn aliases_resolve() {
    for (alias, name) in [
        ("seed-oss", "seed_oss"),
        ("Seed_OSS", "seed_oss"),
        ("step-3", "step3"),
        ("function_gemma", "functiongemma"),
        ("hy_v3", "hunyuan"),
        ("hy3", "hunyuan"),
        ("hy4", "hy_v4"),
        ("qwen3_xml", "qwen3_coder"),
        ("step3p5", "qwen3_coder"),
        ("nanbeige", "qwen3_coder"),
        ("mimo", "qwen3_coder"),
        ("ling3", "glm45"),
        ("deepseekv41", "deepseek_v4_1"),
        ("apertus2509", "apertus"),
        ("gigachat", "gigachat3"),
        ("lfm2.5", "lfm2"),
        ("dots", "dots"),
        ("iquest", "iquest_q1"),
        ("spark25", "glm45"),
        ("trinity", "hermes"),
        ("poolside_v1", "poolside_v1"),
        ("laguna", "poolside_v1"),
        ("minicpm5", "minicpm5"),
        ("minicpm5xml", "minicpm5"),
        ("gigachat35", "gigachat35"),
        ("gigachat3.5", "gigachat35"),
        ("plamo3", "plamo3"),
        ("solar_open2", "solar_open2"),
        ("glm53_flash", "glm47"),
        ("nemotron_v3", "qwen3_coder"),
    ] {
        assert_eq!(formats::lookup(alias).unwrap().syntax.name, name, "{alias}");
    }
}

/// vLLM `tool_call_unlimited_thinking_budget` (Seed-OSS-36B-Instruct): the model spells a call
/// out while thinking; with native reasoning only the call after `</seed:think>` is made.
#[test]
fn seed_call_written_while_thinking_stays_reasoning() {
    let thought = "\nGot it, let's see. The user asked for the weather in Barcelona, Spain. \
First, I need to remember the function I can use: get_weather. The function requires a \
location (city and country) which is \"Barcelona, Spain\" here, and unit is optional. Since \
the user didn't specify the unit, the default in the function is Celsius, right? Wait, \
let me check the function docstring again. Oh, the function says unit is optional, and \
returns temperature in Celsius. So I should call get_weather with location \"Barcelona, \
Spain\" and maybe omit unit or set to Celsius. Let me format the function call correctly. \
The format is <seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, \
Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>. \
Wait, but does the unit parameter accept \"celsius\"? The docstring says unit is the unit \
of temperature, but the return is in Celsius anyway. Maybe even if I don't pass unit, \
it's okay, but to be explicit, maybe pass \"celsius\". Let me go with that. So the function \
call should be as above. Then wait for the result to come back and tell the user the \
temperature in Celsius.";
    let text = format!(
        "<seed:think>{thought}</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=location>\
         Barcelona, Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>"
    );
    let config = ParserConfig::new("seed_oss", tools(), Some("native")).unwrap();
    for chunk in [1, 5, text.len()] {
        let mut stream = StreamParser::new(config.clone());
        let mut k = 0;
        while k < text.len() {
            let mut end = (k + chunk).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            stream.feed(&text[k..end]).unwrap();
            k = end;
        }
        stream.finish(None).unwrap();
        let m = stream.message();
        assert_eq!(m.reasoning, thought);
        assert_eq!(m.content_or_none(), None);
        assert_eq!(m.tool_calls.len(), 1, "{m:?}");
        assert_eq!(
            arguments(&m, 0),
            json!({"location": "Barcelona, Spain", "unit": "celsius"})
        );
        assert!(m.issues.is_empty(), "{:?}", m.issues);
    }
}

/// vLLM `tool_call_512_thinkg_budget`: budget notes stay inside the reasoning.
#[test]
fn seed_budget_reflections_are_reasoning() {
    let thought =
        "The user's current thinking budget is 512.</seed:cot_budget_reflect>\nLet me analyze \
the question.\n<seed:cot_budget_reflect>I have used 131 tokens, and there are 381 tokens remaining \
for use.</seed:cot_budget_reflect>\n The unit parameter can be omitted since it's optional.";
    let text = format!(
        "<seed:think>{thought}</seed:think>\n<seed:tool_call>\n<function=get_weather>\n\
         <parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>"
    );
    let config = ParserConfig::new("seed_oss", tools(), Some("native")).unwrap();
    let m = parse(&config, &text);
    assert_eq!(m.reasoning, thought);
    assert_eq!(m.content_or_none(), None);
    assert_eq!(arguments(&m, 0), json!({"location": "Barcelona, Spain"}));
}

#[test]
fn step3_and_hunyuan_native_reasoning() {
    let step3 = ParserConfig::new("step3", tools(), Some("native")).unwrap();
    let m = parse(
        &step3,
        "<think>plan</think>\n<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>\
         <steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Tokyo</steptml:parameter>\
         </steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
    );
    assert_eq!(m.reasoning, "plan");
    assert_eq!(arguments(&m, 0), json!({"city": "Tokyo"}));

    let hy4 = ParserConfig::new("hy_v4", tools(), Some("native")).unwrap();
    let m = parse(
        &hy4,
        "<think:opensource>plan</think:opensource>ok<tool_calls:opensource><tool_call:opensource>get_weather\
         <arg_key:opensource>days</arg_key:opensource><arg_value:opensource>3</arg_value:opensource>\
         </tool_call:opensource></tool_calls:opensource>",
    );
    assert_eq!(m.reasoning, "plan");
    assert_eq!(m.content, "ok");
    assert_eq!(arguments(&m, 0), json!({"days": 3}));
}

/// Feed `text` with `⟦MARKER⟧` replaced by MARKER's special-token sentinel, one char at a time.
fn token_mode(format: &str, text: &str) -> Message {
    let config = ParserConfig::new(format, tools(), None).unwrap();
    let special = config.special_marker_texts();
    let mut stream = StreamParser::new(config);
    stream.use_special_markers(&special);
    let mut encoded = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('⟦') {
        encoded.push_str(&rest[..open]);
        let after = &rest[open + '⟦'.len_utf8()..];
        let close = after.find('⟧').unwrap();
        let marker = &after[..close];
        let sentinel = stream
            .markers()
            .sentinel_for(marker)
            .unwrap_or_else(|| panic!("{format}: {marker} is not special"));
        encoded.push_str(sentinel);
        rest = &after[close + '⟧'.len_utf8()..];
    }
    encoded.push_str(rest);
    for c in encoded.chars() {
        stream.feed(&c.to_string()).unwrap();
    }
    stream.finish(None).unwrap();
    stream.message()
}

#[test]
fn special_token_markers_match_by_token_only() {
    let m = token_mode(
        "seed_oss",
        "typed <seed:tool_call> stays text ⟦<seed:tool_call>⟧\n<function=get_weather>\n\
         <parameter=location>see </seed:tool_call> here</parameter>\n</function>\n⟦</seed:tool_call>⟧",
    );
    assert_eq!(m.content, "typed <seed:tool_call> stays text ");
    assert_eq!(
        arguments(&m, 0),
        json!({"location": "see </seed:tool_call> here"})
    );
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    let m = token_mode(
        "step3",
        "typed <｜tool_calls_begin｜> and <｜tool_calls_end｜> stay text ⟦<｜tool_calls_begin｜>⟧\
         ⟦<｜tool_call_begin｜>⟧function⟦<｜tool_sep｜>⟧<steptml:invoke name=\"get_weather\">\
         <steptml:parameter name=\"city\">a <｜tool_call_end｜> b</steptml:parameter></steptml:invoke>\
         ⟦<｜tool_call_end｜>⟧⟦<｜tool_calls_end｜>⟧",
    );
    assert_eq!(
        m.content,
        "typed <｜tool_calls_begin｜> and <｜tool_calls_end｜> stay text "
    );
    assert_eq!(arguments(&m, 0), json!({"city": "a <｜tool_call_end｜> b"}));
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    let m = token_mode(
        "functiongemma",
        "⟦<start_function_call>⟧call:search{query:⟦<escape>⟧say <escape> twice⟦<escape>⟧}\
         ⟦<end_function_call>⟧",
    );
    assert_eq!(arguments(&m, 0), json!({"query": "say <escape> twice"}));
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    let m = token_mode(
        "apertus",
        "typed <|tools_prefix|> stays text ⟦<|tools_prefix|>⟧[{\"search\": {\"query\": \"<|tools_suffix|>\"}}]⟦<|tools_suffix|>⟧",
    );
    assert_eq!(m.content, "typed <|tools_prefix|> stays text ");
    assert_eq!(arguments(&m, 0), json!({"query": "<|tools_suffix|>"}));
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    let m = token_mode(
        "lfm2",
        "typed <|tool_call_start|>[f()] stays text ⟦<|tool_call_start|>⟧[search(query='<|tool_call_end|>')]⟦<|tool_call_end|>⟧",
    );
    assert_eq!(m.content, "typed <|tool_call_start|>[f()] stays text ");
    assert_eq!(arguments(&m, 0), json!({"query": "<|tool_call_end|>"}));
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    let m = token_mode(
        "gigachat3",
        "Sure.⟦<|message_sep|>⟧\n\nfunction call⟦<|role_sep|>⟧\n{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}⟦</s>⟧",
    );
    assert_eq!(m.content, "Sure.");
    assert_eq!(arguments(&m, 0), json!({"query": "x"}));
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    let m = token_mode(
        "hunyuan",
        "⟦<tool_calls>⟧⟦<tool_call>⟧get_weather⟦<tool_sep>⟧⟦<arg_key>⟧city⟦</arg_key>⟧⟦<arg_value>⟧\
         see </arg_value> and <tool_call>⟦</arg_value>⟧⟦</tool_call>⟧⟦</tool_calls>⟧",
    );
    assert_eq!(
        arguments(&m, 0),
        json!({"city": "see </arg_value> and <tool_call>"})
    );
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    // Laguna: the call tags are tokens, the argument tags text.
    let m = token_mode(
        "poolside_v1",
        "typed <tool_call> stays text ⟦<tool_call>⟧get_weather\n<arg_key>city</arg_key>\n\
         <arg_value>see <tool_call> and </tool_call> here</arg_value>\n⟦</tool_call>⟧",
    );
    assert_eq!(m.content, "typed <tool_call> stays text ");
    assert_eq!(
        arguments(&m, 0),
        json!({"city": "see <tool_call> and </tool_call> here"})
    );
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    // MiniCPM5: `<function`, `</function>`, `<param`, `</param>` are tokens; a typed closing
    // tag inside a value is text.
    let m = token_mode(
        "minicpm5",
        "typed <function name=\"x\"> stays text ⟦<function⟧ name=\"get_weather\">⟦<param⟧ \
         name=\"city\">a </param> b⟦</param>⟧⟦<param⟧ name=\"days\">3⟦</param>⟧⟦</function>⟧",
    );
    assert_eq!(m.content, "typed <function name=\"x\"> stays text ");
    assert_eq!(arguments(&m, 0), json!({"city": "a </param> b", "days": 3}));
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    // GigaChat 3.5: only the `｜GCML｜` prefix is a token; a typed tag is text.
    let m = token_mode(
        "gigachat35",
        "typed <｜GCML｜tool_calls> stays text\n\n<⟦｜GCML｜⟧tool_calls>\n<⟦｜GCML｜⟧invoke name=\"get_weather\">\n\
         <⟦｜GCML｜⟧parameter name=\"city\" string=\"true\">a</｜GCML｜parameter>b</⟦｜GCML｜⟧parameter>\n\
         </⟦｜GCML｜⟧invoke>\n</⟦｜GCML｜⟧tool_calls>",
    );
    assert_eq!(m.content, "typed <｜GCML｜tool_calls> stays text\n\n");
    assert_eq!(arguments(&m, 0), json!({"city": "a</｜GCML｜parameter>b"}));
    assert!(m.issues.is_empty(), "{:?}", m.issues);

    // Solar Open 2: every marker is a token, so typed ones inside a value are text.
    let m = token_mode(
        "solar_open2",
        "typed <|tool_call:start|> stays text ⟦<|tool_call:start|>⟧get_weather\n⟦<|tool_arg:start|>⟧city\
         ⟦<|tool_arg:value|>⟧ a <|tool_arg:end|><|tool_call:end|>⟦<|tool_arg:end|>⟧\n⟦<|tool_call:end|>⟧",
    );
    assert_eq!(m.content, "typed <|tool_call:start|> stays text ");
    assert_eq!(
        arguments(&m, 0),
        json!({"city": " a <|tool_arg:end|><|tool_call:end|>"})
    );
    assert!(m.issues.is_empty(), "{:?}", m.issues);
}

#[test]
fn render_matches_the_chat_templates() {
    let calls = vec![
        RenderCall {
            name: "get_weather".into(),
            arguments: json!({"city": "Tokyo", "days": 3}),
            id: None,
        },
        RenderCall {
            name: "search".into(),
            arguments: json!({"filters": {"a": [1, "x"]}, "query": "q"}),
            id: None,
        },
    ];
    let render = |format: &str, content: Option<&str>| {
        formats::lookup(format).unwrap().render(&calls, content)
    };
    assert_eq!(
        render("step3", Some("Sure.")),
        "Sure.<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\">\n\
         <steptml:parameter name=\"city\">Tokyo</steptml:parameter>\n<steptml:parameter name=\"days\">3</steptml:parameter>\n\
         </steptml:invoke><｜tool_call_end｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"search\">\n\
         <steptml:parameter name=\"filters\">{\"a\": [1, \"x\"]}</steptml:parameter>\n<steptml:parameter name=\"query\">q</steptml:parameter>\n\
         </steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>"
    );
    assert_eq!(
        render("functiongemma", Some("Sure.")),
        "Sure.<start_function_call>call:get_weather{city:<escape>Tokyo<escape>,days:3}<end_function_call>\
         <start_function_call>call:search{filters:{a:[1,<escape>x<escape>]},query:<escape>q<escape>}<end_function_call>"
    );
    assert_eq!(
        render("hunyuan", None),
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Tokyo</arg_value>\n\
         <arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>search<tool_sep>\n\
         <arg_key>filters</arg_key>\n<arg_value>{\"a\": [1, \"x\"]}</arg_value>\n<arg_key>query</arg_key>\n\
         <arg_value>q</arg_value>\n</tool_call>\n</tool_calls>"
    );
    assert_eq!(
        render("hy_v4", None),
        "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource>\
         <arg_value:opensource>Tokyo</arg_value:opensource><arg_key:opensource>days</arg_key:opensource>\
         <arg_value:opensource>3</arg_value:opensource></tool_call:opensource><tool_call:opensource>search\
         <arg_key:opensource>filters</arg_key:opensource><arg_value:opensource>{\"a\": [1, \"x\"]}</arg_value:opensource>\
         <arg_key:opensource>query</arg_key:opensource><arg_value:opensource>q</arg_value:opensource>\
         </tool_call:opensource></tool_calls:opensource>"
    );
    assert_eq!(
        render("poolside_v1", Some("Sure.")),
        "Sure.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Tokyo</arg_value>\n\
         <arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>search\n\
         <arg_key>filters</arg_key>\n<arg_value>{\"a\": [1, \"x\"]}</arg_value>\n\
         <arg_key>query</arg_key>\n<arg_value>q</arg_value>\n</tool_call>"
    );
    assert_eq!(
        render("minicpm5", Some("Sure.")),
        "Sure.\n<function name=\"get_weather\"><param name=\"city\">Tokyo</param>\
         <param name=\"days\">3</param></function>\n<function name=\"search\">\
         <param name=\"filters\">{\"a\": [1, \"x\"]}</param>\
         <param name=\"query\">q</param></function>"
    );
    assert_eq!(
        render("gigachat35", Some("Sure.")),
        "Sure.\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n\
         <｜GCML｜parameter name=\"city\" string=\"true\">Tokyo</｜GCML｜parameter>\n\
         <｜GCML｜parameter name=\"days\" string=\"false\">3</｜GCML｜parameter>\n</｜GCML｜invoke>\n\
         <｜GCML｜invoke name=\"search\">\n\
         <｜GCML｜parameter name=\"filters\" string=\"false\">{\"a\": [1, \"x\"]}</｜GCML｜parameter>\n\
         <｜GCML｜parameter name=\"query\" string=\"true\">q</｜GCML｜parameter>\n\
         </｜GCML｜invoke>\n</｜GCML｜tool_calls>"
    );
    assert_eq!(
        render("solar_open2", Some("Sure.")),
        "Sure.<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Tokyo<|tool_arg:end|>\n\
         <|tool_arg:start|>days<|tool_arg:value|>3<|tool_arg:end|>\n<|tool_call:end|>\n\
         <|tool_call:start|>search\n<|tool_arg:start|>filters<|tool_arg:value|>{\"a\": [1, \"x\"]}<|tool_arg:end|>\n\
         <|tool_arg:start|>query<|tool_arg:value|>q<|tool_arg:end|>\n<|tool_call:end|>"
    );
    assert_eq!(
        render("plamo3", Some("Sure.")),
        "Sure.<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>\
         <|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|>\
         <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"city\":\"Tokyo\",\"days\":3}\
         <|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:begin_tool_request:plamo|>\
         <|plamo:begin_tool_name:plamo|>search<|plamo:end_tool_name:plamo|>\
         <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>\
         {\"filters\":{\"a\":[1,\"x\"]},\"query\":\"q\"}\
         <|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>"
    );
}

#[test]
fn hostile_input_is_linear_and_never_panics() {
    // Ends in text: a value's last `\n` is formatting in seed_oss.
    let long = format!("{}end", "x\n".repeat(100_000));
    for (format, text) in [
        (
            "seed_oss",
            format!("<seed:tool_call>\n<function=search>\n<parameter=query>{long}</parameter>\n</function>\n</seed:tool_call>"),
        ),
        (
            "step3",
            format!("<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"search\"><steptml:parameter name=\"query\">{long}</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>"),
        ),
        (
            "functiongemma",
            format!("<start_function_call>call:search{{query:<escape>{long}<escape>}}<end_function_call>"),
        ),
        (
            "hunyuan",
            format!("<tool_calls>\n<tool_call>search<tool_sep>\n<arg_key>query</arg_key>\n<arg_value>{long}</arg_value>\n</tool_call>\n</tool_calls>"),
        ),
    ] {
        let config = ParserConfig::new(format, tools(), None).unwrap();
        let start = std::time::Instant::now();
        let mut stream = StreamParser::new(config.clone());
        let mut k = 0;
        while k < text.len() {
            let mut end = (k + 7).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            stream.feed(&text[k..end]).unwrap();
            k = end;
        }
        stream.finish(None).unwrap();
        assert!(start.elapsed().as_secs() < 20, "{format}: too slow");
        let m = stream.message();
        assert!(
            arguments(&m, 0)["query"].as_str() == Some(long.as_str()),
            "{format}: value changed"
        );
        // Deep nesting and junk: no panic, no recursion.
        let deep = "{a:".repeat(50_000);
        for junk in [
            "<seed:tool_call><function=".to_owned(),
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"".to_owned(),
            "<｜tool_calls_begin｜><｜tool_sep｜><｜tool_sep｜>x<steptml:parameter name=\"a\">".to_owned(),
            format!("<start_function_call>call:f{deep}"),
            "<tool_calls><tool_call><tool_sep><arg_key>".to_owned(),
            "<tool_calls></tool_call></tool_calls></tool_calls>".to_owned(),
            "<tool_calls:opensource><tool_call:opensource>f<arg_key:opensource>k".to_owned(),
        ] {
            let _ = parse(&config, &junk);
        }
    }
}

/// The prompt opens reasoning (`<think>` at the end of the generation prompt): the completion
/// starts inside it, and the call after `</think>` is made.
#[test]
fn reasoning_opened_by_the_prompt() {
    for (format, text) in [
        (
            "poolside_v1",
            "Need Paris.</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n",
        ),
        (
            "minicpm5",
            "\nNeed Paris.\n</think>\n\n<function name=\"get_weather\"><param name=\"city\">Paris</param></function>",
        ),
        (
            "gigachat35",
            "Need Paris.</think>\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n\
             <｜GCML｜parameter name=\"city\" string=\"true\">Paris</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
        ),
        (
            "plamo3",
            "Need Paris.<|plamo:end_think:plamo|><|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>\
             <|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>\
             <|plamo:constrain|>json<|plamo:msg|>{\"city\": \"Paris\"}<|plamo:end_tool_arguments:plamo|>\
             <|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
        ),
    ] {
        let config = ParserConfig::new(format, tools(), Some("closing_only")).unwrap();
        let m = parse(&config, text);
        assert!(m.reasoning.contains("Need Paris."), "{format}: {m:?}");
        assert_eq!(m.tool_calls.len(), 1, "{format}: {m:?}");
        assert_eq!(arguments(&m, 0), json!({"city": "Paris"}), "{format}");
    }
}
