//! What the shared case matrix cannot express for DeepSeek V3 / V3.1, Kimi K2 and Gemma 4:
//! native reasoning, special-token input, the model's call ids, the raw text kept in issues,
//! argument streaming, hostile nesting, and the rendered text itself.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolwire_core::message::{IssueKind, Message};
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;
use toolwire_core::{formats, message::Delta};

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}
    ]))
    .unwrap()
}

fn config(format: &str, reasoning: Option<&str>) -> ParserConfig {
    ParserConfig::new(format, tools(), reasoning).unwrap()
}

fn calls(message: &Message) -> Vec<(String, Value)> {
    message
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), serde_json::from_str(&c.arguments).unwrap()))
        .collect()
}

fn kinds(message: &Message) -> Vec<IssueKind> {
    message.issues.iter().map(|i| i.kind).collect()
}

/// Parse char by char, as the slowest stream would deliver it.
fn stream_chars(config: &ParserConfig, text: &str) -> (Message, Vec<Delta>) {
    let mut stream = StreamParser::new(config.clone());
    let mut deltas = Vec::new();
    let mut buf = [0u8; 4];
    for c in text.chars() {
        deltas.extend(stream.feed(c.encode_utf8(&mut buf)).unwrap());
    }
    deltas.extend(stream.finish(None).unwrap());
    (stream.message(), deltas)
}

/// Token-id input: the format's special markers arrive as sentinels, so only those count.
fn parse_tokens(config: &ParserConfig, pieces: &[(&str, bool)]) -> Message {
    let special = config.special_marker_texts();
    let mut stream = StreamParser::new(config.clone());
    stream.use_special_markers(&special);
    let mut text = String::new();
    for (piece, is_special) in pieces {
        if *is_special {
            let sentinel = stream
                .markers()
                .sentinel_for(piece)
                .unwrap_or_else(|| panic!("{piece} is not a special marker"));
            text.push_str(sentinel);
        } else {
            text.push_str(piece);
        }
    }
    for c in text.chars() {
        stream.feed(&c.to_string()).unwrap();
    }
    stream.finish(None).unwrap();
    stream.message()
}

#[test]
fn deepseek_r1_reasoning_opened_by_the_prompt() {
    // R1's generation prompt ends with `<think>\n`; the completion closes it.
    let text = "Let me think.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"timezone\": \"UTC\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    let message = parse(&config("deepseek_r1", Some("closing_only")), text);
    assert_eq!(message.reasoning, "Let me think.\n");
    assert_eq!(
        calls(&message),
        vec![("get_time".into(), json!({"timezone": "UTC"}))]
    );
    assert!(message.is_valid(), "{:?}", message.issues);
}

#[test]
fn deepseek_v3_1_tool_block_inside_reasoning_is_not_a_call() {
    let text = "I could write <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜> here.</think>Plain answer.";
    let message = parse(&config("deepseek_v3_1", Some("closing_only")), text);
    assert!(message.reasoning.contains("<｜tool▁calls▁begin｜>"));
    assert_eq!(message.content, "Plain answer.");
    assert!(message.tool_calls.is_empty());
}

#[test]
fn kimi_thinking_then_calls_keep_the_model_ids() {
    let text = "<think>Need weather and time.</think>Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\": \"Oslo\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"timezone\": \"CET\"}<|tool_call_end|><|tool_calls_section_end|>";
    let (message, deltas) = stream_chars(&config("kimi", Some("native")), text);
    assert_eq!(message.reasoning, "Need weather and time.");
    assert_eq!(message.content, "Checking.");
    let ids: Vec<&str> = message.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["functions.get_weather:0", "functions.get_time:1"]);
    let streamed: Vec<&str> = deltas
        .iter()
        .flat_map(|d| d.tool_calls.iter())
        .filter_map(|c| c.id.as_deref())
        .collect();
    assert_eq!(streamed, ids);
    assert!(message.is_valid(), "{:?}", message.issues);
}

#[test]
fn kimi_duplicate_ids_are_reported_once_with_the_second_call() {
    let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{\"timezone\": \"CET\"}<|tool_call_end|><|tool_calls_section_end|>";
    let message = parse(&config("kimi_k2", None), text);
    assert_eq!(message.tool_calls.len(), 2);
    assert_eq!(kinds(&message), vec![IssueKind::DuplicateCallId]);
    assert_eq!(message.issues[0].index, Some(1));
    // Minted ids never count as duplicates.
    let text = "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>";
    assert!(parse(&config("hermes", None), text).is_valid());
}

#[test]
fn gemma_thought_channel_label_is_stripped() {
    let text = "<|channel>thought\nThe user wants the time.<channel|><|tool_call>call:get_time{timezone:<|\"|>UTC<|\"|>}<tool_call|>";
    let cfg = config("gemma4", Some("native"));
    for message in [parse(&cfg, text), stream_chars(&cfg, text).0] {
        assert_eq!(message.reasoning, "The user wants the time.");
        assert_eq!(message.content_or_none(), None);
        assert_eq!(
            calls(&message),
            vec![("get_time".into(), json!({"timezone": "UTC"}))]
        );
    }
    // Opened by the prompt: the label is still the first thing the model writes.
    let message = parse(
        &config("gemma4", Some("closing_only")),
        "thought\nHmm.<channel|>Hello.",
    );
    assert_eq!(message.reasoning, "Hmm.");
    assert_eq!(message.content, "Hello.");
    // The label belongs to Gemma's own delimiters only.
    let message = parse(
        &config("gemma4", Some("think")),
        "<think>thought\nx</think>y",
    );
    assert_eq!(message.reasoning, "thought\nx");
}

#[test]
fn issues_keep_the_raw_text_with_markers() {
    let text = "<｜tool▁call▁begin｜>get_current_weather宽带}{location\": \"Tokyo\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    let message = parse(&config("deepseek_v3_1", None), text);
    assert_eq!(message.content_or_none(), None);
    assert_eq!(kinds(&message), vec![IssueKind::MalformedJson]);
    assert_eq!(
        message.issues[0].raw,
        "<｜tool▁call▁begin｜>get_current_weather宽带}{location\": \"Tokyo\"}<｜tool▁call▁end｜>"
    );

    let text = "Before <｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"NYC\"}<｜tool▁call▁end｜><｜tool▁call▁end｜><｜tool▁call▁end｜>";
    let message = parse(&config("deepseek_v3_1", None), text);
    assert_eq!(message.content, "Before ");
    assert_eq!(kinds(&message), vec![IssueKind::UnexpectedText]);
    assert_eq!(
        message.issues[0].raw,
        "<｜tool▁call▁end｜><｜tool▁call▁end｜>"
    );

    let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":";
    let message = parse(&config("kimi_k2", None), text);
    assert_eq!(kinds(&message), vec![IssueKind::Truncated]);
    assert_eq!(message.issues[0].raw, text);

    let text = "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|><tool_call|>";
    let message = parse(&config("gemma4", None), text);
    assert_eq!(kinds(&message), vec![IssueKind::MalformedJson]);
    assert_eq!(message.issues[0].raw, text);
}

#[test]
fn special_tokens_only_count_as_tokens() {
    // The marker typed as text inside a Gemma string does not close it.
    let cfg = config("gemma4", None);
    let message = parse_tokens(
        &cfg,
        &[
            ("<|tool_call>", true),
            ("call:search{query:", false),
            ("<|\"|>", true),
            ("say <|\"|> and <tool_call|> literally", false),
            ("<|\"|>", true),
            ("}", false),
            ("<tool_call|>", true),
        ],
    );
    assert_eq!(
        calls(&message),
        vec![(
            "search".into(),
            json!({"query": "say <|\"|> and <tool_call|> literally"})
        )]
    );
    assert!(message.is_valid(), "{:?}", message.issues);

    // Typed markers in content stay content.
    let cfg = config("kimi_k2", None);
    let message = parse_tokens(
        &cfg,
        &[("Use <|tool_calls_section_begin|> to start.", false)],
    );
    assert_eq!(
        message.content,
        "Use <|tool_calls_section_begin|> to start."
    );
    assert!(message.tool_calls.is_empty() && message.is_valid());

    // A special token inside JSON arguments means the arguments were cut off.
    let cfg = config("deepseek_v3_1", None);
    let message = parse_tokens(
        &cfg,
        &[
            ("<｜tool▁calls▁begin｜>", true),
            ("<｜tool▁call▁begin｜>", true),
            ("get_weather", false),
            ("<｜tool▁sep｜>", true),
            ("{\"location\": \"NY", false),
            ("<｜tool▁call▁end｜>", true),
            ("<｜tool▁call▁begin｜>", true),
            ("get_time", false),
            ("<｜tool▁sep｜>", true),
            ("{\"timezone\": \"EST\"}", false),
            ("<｜tool▁call▁end｜>", true),
            ("<｜tool▁calls▁end｜>", true),
        ],
    );
    assert_eq!(
        calls(&message),
        vec![("get_time".into(), json!({"timezone": "EST"}))]
    );
    assert_eq!(kinds(&message), vec![IssueKind::MalformedJson]);
    assert_eq!(
        message.issues[0].raw,
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": \"NY<｜tool▁call▁end｜>"
    );
}

#[test]
fn arguments_stream_before_the_call_closes() {
    let cfg = config("gemma4", None);
    let mut stream = StreamParser::new(cfg);
    stream
        .feed("<|tool_call>call:search{query:<|\"|>long \"quoted\" te")
        .unwrap();
    let deltas = stream.feed("xt").unwrap();
    let args: String = deltas
        .iter()
        .flat_map(|d| d.tool_calls.iter())
        .map(|c| c.arguments.as_str())
        .collect();
    assert_eq!(args, "xt");
    stream.feed("<|\"|>}<tool_call|>").unwrap();
    stream.finish(None).unwrap();
    assert_eq!(
        stream.message().tool_calls[0].arguments,
        "{\"query\":\"long \\\"quoted\\\" text\"}"
    );

    let cfg = config("deepseek_v3", None);
    let mut stream = StreamParser::new(cfg);
    let deltas = stream
        .feed("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"query\": \"ab")
        .unwrap();
    let call = &deltas.last().unwrap().tool_calls[0];
    assert_eq!(call.name.as_deref(), Some("search"));
    assert_eq!(call.arguments, "{\"query\": \"ab");
}

#[test]
fn hostile_nesting_is_not_recursive() {
    let depth = 100_000;
    let body = "[".repeat(depth) + &"]".repeat(depth);
    let text = format!("<|tool_call>call:search{{query:{body}}}<tool_call|>");
    let message = parse(&config("gemma4", None), &text);
    // The converted text is complete; serde's own depth limit rejects it as JSON.
    assert_eq!(message.tool_calls.len() + message.issues.len(), 1);

    let text = format!(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{{\"query\":{body}}}<|tool_call_end|><|tool_calls_section_end|>"
    );
    let message = parse(&config("kimi_k2", None), &text);
    assert_eq!(message.tool_calls.len() + message.issues.len(), 1);
}

#[test]
fn long_arguments_stream_in_linear_time() {
    let big = "x".repeat(200_000);
    let cases = [
        ("gemma4", format!("<|tool_call>call:search{{query:<|\"|>{big}<|\"|>}}<tool_call|>")),
        ("kimi_k2", format!("<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{{\"query\":\"{big}\"}}<|tool_call_end|><|tool_calls_section_end|>")),
        ("deepseek_v3", format!("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{{\"query\":\"{big}\"}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>")),
        ("deepseek_v3_1", format!("<｜tool▁calls▁begin｜>{}<｜tool▁call▁begin｜>search<｜tool▁sep｜>{{\"query\":\"{big}\"}}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", " ".repeat(50_000))),
    ];
    for (format, text) in cases {
        let start = Instant::now();
        let (message, _) = stream_chars(&config(format, None), &text);
        assert_eq!(message.tool_calls.len(), 1, "{format}");
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{format}: {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn render_matches_the_chat_templates() {
    let two = vec![
        RenderCall {
            name: "get_weather".into(),
            arguments: json!({"location": "NYC", "days": 2}),
            id: None,
        },
        RenderCall {
            name: "get_time".into(),
            arguments: json!({"timezone": "EST"}),
            id: Some("functions.get_time:7".into()),
        },
    ];
    let render =
        |name: &str, content: Option<&str>| formats::lookup(name).unwrap().render(&two, content);
    assert_eq!(
        render("deepseek_v3", None),
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\":\"NYC\",\"days\":2}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"timezone\":\"EST\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    );
    assert_eq!(
        render("deepseek_v3_1", Some("Sure.")),
        "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"NYC\",\"days\":2}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\":\"EST\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    );
    assert_eq!(
        render("kimi_k2", None),
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"NYC\",\"days\":2}<|tool_call_end|><|tool_call_begin|>functions.get_time:7<|tool_call_argument_begin|>{\"timezone\":\"EST\"}<|tool_call_end|><|tool_calls_section_end|>"
    );
    // Gemma: keys sorted and bare (the template's dictsort), strings between <|"|>, calls first.
    assert_eq!(
        render("gemma4", Some("Done.")),
        "<|tool_call>call:get_weather{days:2,location:<|\"|>NYC<|\"|>}<tool_call|><|tool_call>call:get_time{timezone:<|\"|>EST<|\"|>}<tool_call|>Done."
    );
    let nested = vec![RenderCall {
        name: "search".into(),
        arguments: json!({"q": "a\\b \"c\"", "f": {"z": null, "a": [1, true, "x"]}}),
        id: None,
    }];
    let text = formats::lookup("gemma4").unwrap().render(&nested, None);
    assert_eq!(text, "<|tool_call>call:search{f:{a:[1,true,<|\"|>x<|\"|>],z:null},q:<|\"|>a\\b \"c\"<|\"|>}<tool_call|>");
    let message = parse(&config("gemma4", None), &text);
    assert_eq!(
        calls(&message),
        vec![("search".into(), nested[0].arguments.clone())]
    );
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁calls▁end｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁sep｜>",
        "<｜tool",
        "function",
        "```json\n",
        "```",
        "\n",
        "<|tool_calls_section_begin|>",
        "<|tool_calls_section_end|>",
        "<|tool_call_begin|>",
        "<|tool_call_end|>",
        "<|tool_call_argument_begin|>",
        "<|tool_call_section_end|>",
        "functions.",
        ":0",
        "<|tool_call>",
        "<tool_call|>",
        "<|\"|>",
        "call:",
        "<|channel>",
        "thought\n",
        "<channel|>",
        "<think>",
        "</think>",
        "get_time",
        "search",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "\\",
        "q",
        "1",
        "true",
        "None",
        " ",
        "東",
        "🌧",
        "<",
        "|",
    ];

    type Shape = (
        String,
        String,
        Vec<(String, String, String)>,
        Vec<(Option<usize>, IssueKind, String)>,
    );

    fn shape(m: &Message) -> Shape {
        (
            m.content.clone(),
            m.reasoning.clone(),
            m.tool_calls
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        c.arguments.clone(),
                        if c.id.starts_with("call_") {
                            String::new()
                        } else {
                            c.id.clone()
                        },
                    )
                })
                .collect(),
            m.issues
                .iter()
                .map(|i| (i.index, i.kind, i.raw.clone()))
                .collect(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn any_output_parses_the_same_whole_and_streamed(
            picks in proptest::collection::vec(0..PIECES.len(), 0..40),
            format in 0usize..4,
            reasoning in 0usize..3,
        ) {
            let name = ["deepseek_v3", "deepseek_v3_1", "kimi_k2", "gemma4"][format];
            let choice = [None, Some("native"), Some("closing_only")][reasoning];
            let cfg = config(name, choice);
            let text: String = picks.iter().map(|&p| PIECES[p]).collect();
            let whole = parse(&cfg, &text);
            let (streamed, deltas) = stream_chars(&cfg, &text);
            prop_assert_eq!(shape(&whole), shape(&streamed), "{} {:?}", name, text);
            for call in &whole.tool_calls {
                prop_assert!(serde_json::from_str::<Value>(&call.arguments).is_ok());
            }
            let content: String = deltas.iter().filter_map(|d| d.content.as_deref()).collect();
            prop_assert_eq!(content, streamed.content.clone());
        }
    }
}
