//! poolside_v1, minicpm5, gigachat35, plamo3 and solar_open2 beyond the shared matrix: the engines' names,
//! rendering as the chat templates write calls, reasoning opened by the prompt. Their special-token
//! input is tested with the other formats' in `more_formats.rs`.

use serde_json::{json, Value};
use toolwire_core::formats;
use toolwire_core::message::Message;
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{parse, ParserConfig};
use toolwire_core::tools::ToolSet;

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "filters": {"type": "object"}}}}}
    ]))
    .unwrap()
}

fn arguments(message: &Message, k: usize) -> Value {
    serde_json::from_str(&message.tool_calls[k].arguments).unwrap()
}

#[test]
fn engine_names_resolve() {
    for (alias, name) in [
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
            arguments: json!({"filters": {"a": [1, "x"]}, "query": "a <b> & c"}),
            id: None,
        },
    ];
    let render = |format: &str, content: Option<&str>| {
        (formats::lookup(format).unwrap().render)(&calls, content)
    };
    assert_eq!(
        render("poolside_v1", Some("Sure.")),
        "Sure.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Tokyo</arg_value>\n\
         <arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>search\n\
         <arg_key>filters</arg_key>\n<arg_value>{\"a\": [1, \"x\"]}</arg_value>\n\
         <arg_key>query</arg_key>\n<arg_value>a <b> & c</arg_value>\n</tool_call>"
    );
    assert_eq!(
        render("minicpm5", Some("Sure.")),
        "Sure.\n<function name=\"get_weather\"><param name=\"city\">Tokyo</param>\
         <param name=\"days\">3</param></function>\n<function name=\"search\">\
         <param name=\"filters\">{\"a\": [1, \"x\"]}</param>\
         <param name=\"query\"><![CDATA[a <b> & c]]></param></function>"
    );
    assert_eq!(
        render("gigachat35", Some("Sure.")),
        "Sure.\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n\
         <｜GCML｜parameter name=\"city\" string=\"true\">Tokyo</｜GCML｜parameter>\n\
         <｜GCML｜parameter name=\"days\" string=\"false\">3</｜GCML｜parameter>\n</｜GCML｜invoke>\n\
         <｜GCML｜invoke name=\"search\">\n\
         <｜GCML｜parameter name=\"filters\" string=\"false\">{\"a\": [1, \"x\"]}</｜GCML｜parameter>\n\
         <｜GCML｜parameter name=\"query\" string=\"true\">a <b> & c</｜GCML｜parameter>\n\
         </｜GCML｜invoke>\n</｜GCML｜tool_calls>"
    );
    assert_eq!(
        render("solar_open2", Some("Sure.")),
        "Sure.<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Tokyo<|tool_arg:end|>\n\
         <|tool_arg:start|>days<|tool_arg:value|>3<|tool_arg:end|>\n<|tool_call:end|>\n\
         <|tool_call:start|>search\n<|tool_arg:start|>filters<|tool_arg:value|>{\"a\": [1, \"x\"]}<|tool_arg:end|>\n\
         <|tool_arg:start|>query<|tool_arg:value|>a <b> & c<|tool_arg:end|>\n<|tool_call:end|>"
    );
    assert_eq!(
        render("plamo3", Some("Sure.")),
        "Sure.<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>\
         <|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|>\
         <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"city\":\"Tokyo\",\"days\":3}\
         <|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:begin_tool_request:plamo|>\
         <|plamo:begin_tool_name:plamo|>search<|plamo:end_tool_name:plamo|>\
         <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>\
         {\"filters\":{\"a\":[1,\"x\"]},\"query\":\"a <b> & c\"}\
         <|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>"
    );
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
