//! Harmony behaviour the shared matrix does not see: the analysis channel as reasoning, markers
//! that arrive as special tokens, argument streaming before a call closes, the exact render, and
//! the raw text kept in issues.

use serde_json::{json, Value};
use toolwire_core::message::Message;
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}}}}}
    ]))
    .unwrap()
}

fn config(reasoning: Option<&str>) -> ParserConfig {
    ParserConfig::new("harmony", tools(), reasoning).unwrap()
}

fn args(message: &Message, i: usize) -> Value {
    serde_json::from_str(&message.tool_calls[i].arguments).unwrap()
}

#[test]
fn aliases_resolve() {
    for name in ["harmony", "gpt-oss", "gpt_oss", "openai", "GPT-OSS"] {
        assert_eq!(
            ParserConfig::new(name, ToolSet::empty(), None)
                .unwrap()
                .spec
                .syntax
                .name,
            "harmony"
        );
    }
}

#[test]
fn analysis_channel_is_reasoning_whatever_the_setting() {
    let text = "<|channel|>analysis<|message|>User asks: \"What is 2 + 2?\" Simple arithmetic.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>";
    for setting in [None, Some("think"), Some("native")] {
        let message = parse(&config(setting), text);
        assert_eq!(
            message.reasoning, "User asks: \"What is 2 + 2?\" Simple arithmetic.",
            "{setting:?}"
        );
        assert_eq!(message.content, "2 + 2 = 4.", "{setting:?}");
        assert!(message.issues.is_empty());
    }
}

#[test]
fn analysis_calls_are_not_reasoning() {
    let text = "<|channel|>analysis<|message|>Need to search.<|end|><|start|>assistant<|channel|>analysis to=functions.search code<|message|>{\"query\":\"foo\"}<|call|>";
    let message = parse(&config(None), text);
    assert_eq!(message.reasoning, "Need to search.");
    assert_eq!(message.content, "");
    assert_eq!(message.tool_calls.len(), 1);
    assert_eq!(args(&message, 0), json!({"query": "foo"}));
}

#[test]
fn arguments_stream_before_the_call_closes() {
    let mut stream = StreamParser::new(config(None));
    let deltas = stream
        .feed("<|channel|>analysis<|message|>Look it up")
        .unwrap();
    let reasoning: String = deltas.iter().filter_map(|d| d.reasoning.clone()).collect();
    assert_eq!(reasoning, "Look it up");
    stream
        .feed(".<|end|><|start|>assistant<|channel|>commentary to=functions.sea")
        .unwrap();
    let deltas = stream
        .feed("rch <|constrain|>json<|message|>{\"query\": \"abc")
        .unwrap();
    let calls: Vec<_> = deltas.iter().flat_map(|d| d.tool_calls.iter()).collect();
    assert_eq!(calls[0].name.as_deref(), Some("search"));
    let streamed: String = calls.iter().map(|c| c.arguments.as_str()).collect();
    assert_eq!(streamed, "{\"query\": \"abc");
    let deltas = stream.feed("def\"}<|ca").unwrap();
    let streamed: String = deltas
        .iter()
        .flat_map(|d| d.tool_calls.iter())
        .map(|c| c.arguments.as_str())
        .collect();
    assert_eq!(streamed, "def\"}");
    stream.feed("ll|>").unwrap();
    stream.finish(None).unwrap();
    let message = stream.message();
    assert_eq!(message.tool_calls[0].arguments, "{\"query\": \"abcdef\"}");
    assert_eq!(message.finish_reason.as_deref(), Some("tool_calls"));
}

/// Pieces of model output: special tokens, or text (whose marker-like characters are just text).
enum Piece {
    Tok(&'static str),
    Text(&'static str),
}

fn token_stream(pieces: &[Piece]) -> Message {
    let config = config(None);
    let mut stream = StreamParser::new(config.clone());
    stream.use_special_markers(&config.special_marker_texts());
    let mut input = String::new();
    for piece in pieces {
        match piece {
            Piece::Tok(t) => {
                input.push_str(stream.markers().sentinel_for(t).expect("special marker"))
            }
            Piece::Text(t) => input.push_str(t),
        }
    }
    for c in input.chars() {
        stream.feed(&c.to_string()).unwrap();
    }
    stream.finish(None).unwrap();
    stream.message()
}

#[test]
fn special_tokens_only_match_as_tokens() {
    use Piece::{Text, Tok};
    let message = token_stream(&[
        Tok("<|channel|>"),
        Text("analysis"),
        Tok("<|message|>"),
        Text("The <|end|> token closes a message."),
        Tok("<|end|>"),
        Tok("<|start|>"),
        Text("assistant"),
        Tok("<|channel|>"),
        Text("commentary to=functions.search "),
        Tok("<|constrain|>"),
        Text("json"),
        Tok("<|message|>"),
        Text("{\"query\": \"<|call|>\"}"),
        Tok("<|call|>"),
        Tok("<|start|>"),
        Text("assistant"),
        Tok("<|channel|>"),
        Text("final"),
        Tok("<|message|>"),
        Text("Type <|start|>assistant to begin."),
        Tok("<|return|>"),
    ]);
    assert_eq!(message.reasoning, "The <|end|> token closes a message.");
    assert_eq!(message.content, "Type <|start|>assistant to begin.");
    assert_eq!(message.tool_calls.len(), 1);
    assert_eq!(args(&message, 0), json!({"query": "<|call|>"}));
    assert!(message.issues.is_empty(), "{:?}", message.issues);
}

#[test]
fn a_special_token_inside_an_open_string_ends_the_call() {
    use Piece::{Text, Tok};
    let message = token_stream(&[
        Tok("<|channel|>"),
        Text("commentary to=functions.search"),
        Tok("<|message|>"),
        Text("{\"query\": \"abc"),
        Tok("<|call|>"),
        Tok("<|start|>"),
        Text("assistant"),
        Tok("<|channel|>"),
        Text("final"),
        Tok("<|message|>"),
        Text("Sorry."),
        Tok("<|return|>"),
    ]);
    assert_eq!(message.content, "Sorry.");
    assert!(message.tool_calls.is_empty());
    assert_eq!(message.issues.len(), 1);
    assert_eq!(message.issues[0].kind.as_str(), "malformed_json");
    assert_eq!(
        message.issues[0].raw,
        "<|channel|>commentary to=functions.search<|message|>{\"query\": \"abc<|call|>"
    );
}

#[test]
fn issues_keep_the_raw_call() {
    let text = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"NYC\"<|call|><|start|>assistant<|channel|>final<|message|>Sorry.<|return|>";
    let message = parse(&config(None), text);
    assert_eq!(message.issues.len(), 1);
    assert_eq!(
        message.issues[0].raw,
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"NYC\"<|call|>"
    );
    let cut = "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"N";
    let message = parse(&config(None), cut);
    assert_eq!(message.issues[0].kind.as_str(), "truncated");
    assert_eq!(message.issues[0].raw, cut);
}

#[test]
fn deep_nesting_is_read_without_recursion() {
    let depth = 50_000;
    let text = format!(
        "<|channel|>commentary to=functions.search<|message|>{{\"query\": {}{}}}<|call|>",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let message = parse(&config(None), &text);
    assert_eq!(message.tool_calls.len(), 1);
    assert!(message.issues.is_empty());
}

#[test]
fn render_writes_what_gpt_oss_writes() {
    let spec = toolwire_core::formats::lookup("harmony").unwrap();
    let calls = vec![
        RenderCall {
            name: "get_weather".into(),
            arguments: json!({"location": "NYC"}),
            id: None,
        },
        RenderCall {
            name: "search".into(),
            arguments: json!({"query": "x"}),
            id: None,
        },
    ];
    assert_eq!(
        spec.render(&calls, None),
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"NYC\"}<|call|>\
         <|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>{\"query\":\"x\"}<|call|>"
    );
    assert_eq!(
        spec.render(&calls[..1], Some("Checking.")),
        "<|channel|>commentary<|message|>Checking.<|end|>\
         <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"NYC\"}<|call|>"
    );
    assert_eq!(
        spec.render(&[], Some("Hi.")),
        "<|channel|>final<|message|>Hi.<|return|>"
    );
    let message = parse(&config(None), &spec.render(&calls, Some("Checking.")));
    assert_eq!(message.content, "Checking.");
    assert_eq!(message.tool_calls.len(), 2);
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "<|start|>",
        "<|channel|>",
        "<|message|>",
        "<|constrain|>",
        "<|end|>",
        "<|call|>",
        "<|return|>",
        "assistant",
        "analysis",
        "commentary",
        "final",
        " to=functions.search",
        " to=python",
        "to=functions.",
        " json",
        " code",
        "{",
        "}",
        "[",
        "]",
        "\"",
        "\\",
        ":",
        ",",
        " ",
        "\n",
        "x",
        "é",
        "🌧",
        "<|",
        "|>",
        "<",
        "{\"query\": \"a\"}",
    ];

    type Shape = (
        String,
        String,
        Vec<(String, String)>,
        Vec<(&'static str, String)>,
    );

    fn shape(m: &Message) -> Shape {
        (
            m.content.clone(),
            m.reasoning.clone(),
            m.tool_calls
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone()))
                .collect(),
            m.issues
                .iter()
                .map(|i| (i.kind.as_str(), i.raw.clone()))
                .collect(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        #[test]
        fn any_piece_soup_parses_the_same_in_any_chunking(
            picks in proptest::collection::vec(0..PIECES.len(), 0..40),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let text: String = picks.iter().map(|&i| PIECES[i]).collect();
            let config = config(None);
            let whole = parse(&config, &text);
            for call in &whole.tool_calls {
                prop_assert!(serde_json::from_str::<Value>(&call.arguments).is_ok());
            }
            let bounds: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            let mut points: Vec<usize> = cuts.iter().map(|c| bounds[c.index(bounds.len())]).collect();
            points.sort_unstable();
            points.dedup();
            let mut stream = StreamParser::new(config);
            let mut last = 0;
            for p in points.into_iter().chain([text.len()]) {
                stream.feed(&text[last..p]).unwrap();
                last = p;
            }
            stream.finish(None).unwrap();
            prop_assert_eq!(shape(&stream.message()), shape(&whole), "{:?}", text);
        }

        #[test]
        fn token_mode_soup_parses_the_same_in_any_chunking(
            picks in proptest::collection::vec((0..PIECES.len(), any::<bool>()), 0..40),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let config = config(None);
            let special = config.special_marker_texts();
            let fresh = || {
                let mut s = StreamParser::new(config.clone());
                s.use_special_markers(&special);
                s
            };
            let probe = fresh();
            // A marker piece arrives as its special token, or (when the flag says so) as text.
            let text: String = picks
                .iter()
                .map(|&(i, as_token)| match probe.markers().sentinel_for(PIECES[i]) {
                    Some(s) if as_token => s.to_owned(),
                    _ => PIECES[i].to_owned(),
                })
                .collect();
            let mut whole = fresh();
            whole.feed(&text).unwrap();
            whole.finish(None).unwrap();
            let whole = whole.message();
            for call in &whole.tool_calls {
                prop_assert!(serde_json::from_str::<Value>(&call.arguments).is_ok());
            }
            let bounds: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            let mut points: Vec<usize> = cuts.iter().map(|c| bounds[c.index(bounds.len())]).collect();
            points.sort_unstable();
            points.dedup();
            let mut stream = fresh();
            let mut last = 0;
            for p in points.into_iter().chain([text.len()]) {
                stream.feed(&text[last..p]).unwrap();
                last = p;
            }
            stream.finish(None).unwrap();
            prop_assert_eq!(shape(&stream.message()), shape(&whole), "{:?}", text);
        }
    }
}
