//! Beam behaviour the shared matrix does not see: markers that arrive as special tokens (token ids
//! through a hand-built vocabulary: no source gives Beam's tokenizer, so the Harmony ids of
//! o200k_harmony are used), the analysis channel as the format's reasoning block, string
//! arguments streaming before a call closes, the raw text kept in issues, the exact render.

use std::sync::Arc;

use serde_json::{json, Value};
use toolwire_core::message::Message;
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;
use toolwire_core::vocab::Vocab;

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "filters": {"type": "object"}}}}}
    ]))
    .unwrap()
}

fn config(reasoning: Option<&str>) -> ParserConfig {
    ParserConfig::new("beam", tools(), reasoning).unwrap()
}

fn args(message: &Message, i: usize) -> Value {
    serde_json::from_str(&message.tool_calls[i].arguments).unwrap()
}

#[test]
fn aliases_resolve() {
    for name in ["beam", "BEAM", "harmony_xml", "harmony-xml"] {
        let config = ParserConfig::new(name, ToolSet::empty(), None).unwrap();
        assert_eq!(config.spec.syntax.name, "beam");
    }
}

#[test]
fn analysis_channel_is_reasoning_in_every_mode() {
    let text = "<|channel|>analysis<|message|>User wants Paris weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">Paris</rfl:parameter><|call|>";
    for setting in [None, Some("native"), Some("think")] {
        let message = parse(&config(setting), text);
        assert_eq!(
            message.reasoning, "User wants Paris weather.",
            "{setting:?}"
        );
        assert_eq!(message.content, "", "{setting:?}");
        assert_eq!(args(&message, 0), json!({"location": "Paris"}));
        assert!(message.issues.is_empty(), "{:?}", message.issues);
    }
}

#[test]
fn native_reasoning_is_the_analysis_block() {
    let spec = toolwire_core::formats::lookup("beam").unwrap();
    assert_eq!(
        spec.syntax.reasoning,
        Some(("<|channel|>analysis<|message|>", "<|end|>"))
    );
    // The reasoning block may end at the next message when `<|end|>` is missing.
    let text = "<|channel|>analysis<|message|>Think<|start|>assistant<|channel|>final<|message|>Answer<|return|>";
    let message = parse(&config(Some("native")), text);
    assert_eq!(message.reasoning, "Think");
    assert_eq!(message.content, "Answer");
    assert!(message.issues.is_empty());
}

#[test]
fn prompt_opened_analysis_is_reasoning() {
    // The prompt ended `<|start|>assistant<|channel|>analysis<|message|>`.
    let text = "The user wants NYC.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">NYC</rfl:parameter><|call|>";
    let message = parse(&config(Some("closing_only")), text);
    assert_eq!(message.reasoning, "The user wants NYC.");
    assert_eq!(message.content, "");
    assert_eq!(args(&message, 0), json!({"location": "NYC"}));
    // Without the setting the same text is content, and the call is still read.
    let message = parse(&config(None), text);
    assert_eq!(message.content, "The user wants NYC.");
    assert_eq!(message.tool_calls.len(), 1);
}

#[test]
fn string_arguments_stream_before_the_call_closes() {
    let mut stream = StreamParser::new(config(None));
    stream
        .feed("<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant to=sea")
        .unwrap();
    let deltas = stream
        .feed("rch<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"query\">abc")
        .unwrap();
    let calls: Vec<_> = deltas.iter().flat_map(|d| d.tool_calls.iter()).collect();
    assert_eq!(calls[0].name.as_deref(), Some("search"));
    let streamed: String = calls.iter().map(|c| c.arguments.as_str()).collect();
    assert_eq!(streamed, "{\"query\": \"abc");
    // A `\n` and a partial end tag are held back until they are decided.
    let deltas = stream.feed("def\n</rfl:para").unwrap();
    let streamed: String = deltas
        .iter()
        .flat_map(|d| d.tool_calls.iter())
        .map(|c| c.arguments.as_str())
        .collect();
    assert_eq!(streamed, "def");
    stream.feed("meter><|ca").unwrap();
    stream.feed("ll|>").unwrap();
    stream.finish(None).unwrap();
    let message = stream.message();
    assert_eq!(message.tool_calls[0].arguments, "{\"query\": \"abcdef\"}");
    assert_eq!(message.finish_reason.as_deref(), Some("tool_calls"));
}

const SPECIAL: &[(&str, u32)] = &[
    ("<|return|>", 200002),
    ("<|constrain|>", 200003),
    ("<|channel|>", 200005),
    ("<|start|>", 200006),
    ("<|end|>", 200007),
    ("<|message|>", 200008),
    ("<|call|>", 200012),
];

/// Single bytes as ordinary tokens 0..=255, and the channel tokens at their o200k_harmony ids.
fn vocab() -> Arc<Vocab> {
    let bytes = (0u32..=255).map(|b| (b, vec![b as u8], false));
    let special = SPECIAL
        .iter()
        .map(|(text, id)| (*id, text.as_bytes().to_vec(), true));
    Arc::new(Vocab::from_pieces(bytes.chain(special)).unwrap())
}

/// Pieces of model output: special tokens, or text (whose marker-like characters are just text).
enum Piece {
    Tok(&'static str),
    Text(&'static str),
}

fn ids(pieces: &[Piece]) -> Vec<u32> {
    let mut out = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Tok(t) => out.push(SPECIAL.iter().find(|(s, _)| s == t).unwrap().1),
            Piece::Text(t) => out.extend(t.bytes().map(u32::from)),
        }
    }
    out
}

fn token_stream(pieces: &[Piece], chunk: usize) -> Message {
    token_stream_with(config(None), pieces, chunk)
}

fn token_stream_with(config: ParserConfig, pieces: &[Piece], chunk: usize) -> Message {
    let vocab = vocab();
    let mut stream = StreamParser::new(config);
    for part in ids(pieces).chunks(chunk) {
        stream.feed_tokens(&vocab, part).unwrap();
    }
    stream.finish(None).unwrap();
    stream.message()
}

#[test]
fn special_tokens_only_match_as_tokens() {
    use Piece::{Text, Tok};
    let pieces = [
        Tok("<|channel|>"),
        Text("analysis"),
        Tok("<|message|>"),
        Text("The <|end|> token closes a message."),
        Tok("<|end|>"),
        Tok("<|start|>"),
        Text("assistant to=search"),
        Tok("<|channel|>"),
        Text("analysis "),
        Tok("<|constrain|>"),
        Text("xml"),
        Tok("<|message|>"),
        Text("<rfl:parameter name=\"query\">what does <|call|> do?</rfl:parameter>"),
        Tok("<|call|>"),
        Tok("<|start|>"),
        Text("assistant"),
        Tok("<|channel|>"),
        Text("final"),
        Tok("<|message|>"),
        Text("Type <|start|>assistant to begin."),
        Tok("<|return|>"),
    ];
    for chunk in [1, 2, 3, 7, 1000] {
        let message = token_stream(&pieces, chunk);
        assert_eq!(message.reasoning, "The <|end|> token closes a message.");
        assert_eq!(message.content, "Type <|start|>assistant to begin.");
        assert_eq!(message.tool_calls.len(), 1, "{chunk}");
        assert_eq!(message.tool_calls[0].name, "search");
        assert_eq!(
            args(&message, 0),
            json!({"query": "what does <|call|> do?"})
        );
        assert!(message.issues.is_empty(), "{:?}", message.issues);
    }
}

#[test]
fn reasoning_settings_work_on_token_ids() {
    use Piece::{Text, Tok};
    let turn = [
        Tok("<|channel|>"),
        Text("analysis"),
        Tok("<|message|>"),
        Text("Plan <|end|> here."),
        Tok("<|end|>"),
        Tok("<|start|>"),
        Text("assistant"),
        Tok("<|channel|>"),
        Text("final"),
        Tok("<|message|>"),
        Text("Done."),
        Tok("<|return|>"),
    ];
    for setting in [None, Some("native")] {
        let message = token_stream_with(config(setting), &turn, 3);
        assert_eq!(message.reasoning, "Plan <|end|> here.", "{setting:?}");
        assert_eq!(message.content, "Done.", "{setting:?}");
        assert!(message.issues.is_empty(), "{:?}", message.issues);
    }
    // The prompt opened the analysis message.
    let message = token_stream_with(config(Some("closing_only")), &turn[3..], 2);
    assert_eq!(message.reasoning, "Plan <|end|> here.");
    assert_eq!(message.content, "Done.");
}

#[test]
fn a_special_token_inside_an_open_value_ends_the_call() {
    use Piece::{Text, Tok};
    let message = token_stream(
        &[
            Tok("<|channel|>"),
            Text("analysis"),
            Tok("<|message|>"),
            Text("Go."),
            Tok("<|end|>"),
            Tok("<|start|>"),
            Text("assistant to=get_weather"),
            Tok("<|channel|>"),
            Text("analysis "),
            Tok("<|constrain|>"),
            Text("xml"),
            Tok("<|message|>"),
            Text("<rfl:parameter name=\"location\">Oslo"),
            Tok("<|call|>"),
        ],
        4,
    );
    // The end tag is missing; the call's stop token closes the value and the call.
    assert_eq!(args(&message, 0), json!({"location": "Oslo"}));
    assert!(message.issues.is_empty(), "{:?}", message.issues);
}

#[test]
fn issues_keep_the_raw_call() {
    let text = "<|channel|>analysis<|message|>Go.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|>Oslo please<|call|><|start|>assistant<|channel|>final<|message|>Sorry.<|return|>";
    let message = parse(&config(None), text);
    assert_eq!(message.content, "Sorry.");
    assert_eq!(message.issues.len(), 1);
    assert_eq!(message.issues[0].kind.as_str(), "unexpected_text");
    assert_eq!(
        message.issues[0].raw,
        "<|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|>Oslo please<|call|>"
    );
    let cut = "<|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">Os";
    let message = parse(&config(None), cut);
    assert_eq!(message.issues[0].kind.as_str(), "truncated");
    assert_eq!(message.issues[0].raw, cut);
    assert!(message.tool_calls.is_empty());
}

#[test]
fn schema_violations_are_reported_on_typed_values() {
    let text = "<|channel|>analysis<|message|>Go.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">Oslo</rfl:parameter><rfl:parameter name=\"days\">soon</rfl:parameter><|call|>";
    let message = parse(&config(None), text);
    assert_eq!(
        args(&message, 0),
        json!({"location": "Oslo", "days": "soon"})
    );
    assert_eq!(message.issues.len(), 1);
    assert_eq!(message.issues[0].kind.as_str(), "schema_violation");
    assert_eq!(message.issues[0].pointer.as_deref(), Some("/days"));
}

#[test]
fn render_writes_a_beam_turn() {
    let spec = toolwire_core::formats::lookup("beam").unwrap();
    let calls = vec![
        RenderCall {
            name: "get_weather".into(),
            arguments: json!({"location": "NYC", "days": 3}),
            id: None,
        },
        RenderCall {
            name: "search".into(),
            arguments: json!({"query": "\nline\n", "filters": {"a": [1, "b"]}}),
            id: None,
        },
    ];
    assert_eq!(
        spec.render(&calls, None),
        "<|channel|>analysis<|message|><|end|>\
         <|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|>\
         <rfl:parameter name=\"location\">NYC</rfl:parameter><rfl:parameter name=\"days\">3</rfl:parameter><|call|>\
         <|start|>assistant to=search<|channel|>analysis <|constrain|>xml<|message|>\
         <rfl:parameter name=\"query\">\n\nline\n\n</rfl:parameter><rfl:parameter name=\"filters\">{\"a\": [1, \"b\"]}</rfl:parameter><|call|>"
    );
    assert_eq!(
        spec.render(&[], Some("Hi.")),
        "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>"
    );
    let message = parse(&config(None), &spec.render(&calls, Some("Done.")));
    assert_eq!(message.content, "Done.");
    assert_eq!(message.reasoning, "");
    assert_eq!(args(&message, 0), json!({"location": "NYC", "days": 3}));
    assert_eq!(
        args(&message, 1),
        json!({"query": "\nline\n", "filters": {"a": [1, "b"]}})
    );
    assert!(message.issues.is_empty(), "{:?}", message.issues);
}

#[test]
fn long_values_and_many_parameters_are_read_in_one_pass() {
    let value = "x".repeat(200_000);
    let mut text = String::from("<|channel|>analysis<|message|><|end|><|start|>assistant to=search<|channel|>analysis <|constrain|>xml<|message|>");
    text.push_str(&format!(
        "<rfl:parameter name=\"query\">{value}</rfl:parameter>"
    ));
    for k in 0..2_000 {
        text.push_str(&format!("<rfl:parameter name=\"p{k}\">{k}</rfl:parameter>"));
    }
    text.push_str("<|call|>");
    let mut stream = StreamParser::new(config(None));
    for chunk in text.as_bytes().chunks(7) {
        stream.feed(std::str::from_utf8(chunk).unwrap()).unwrap();
    }
    stream.finish(None).unwrap();
    let message = stream.message();
    let got = args(&message, 0);
    assert_eq!(got["query"].as_str().map(str::len), Some(200_000));
    assert_eq!(got["p1999"], json!("1999"));
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
        "final",
        " to=",
        "to=",
        "get_weather",
        "search",
        "xml",
        "<rfl:parameter name=\"",
        "query",
        "days",
        "\">",
        "</rfl:parameter>",
        "</rfl:para",
        "<rfl:",
        "\n",
        " ",
        "\"",
        "7",
        "{\"a\": [1]}",
        "é東",
        "text",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Any mix of the format's fragments, cut anywhere, streams to the one-shot message,
        /// and every call's arguments are valid JSON whose deltas add up to it.
        #[test]
        fn fragments_stream_like_one_shot(
            picks in prop::collection::vec(0..PIECES.len(), 0..40),
            cuts in prop::collection::vec(0usize..400, 0..8),
        ) {
            let text: String = picks.iter().map(|&k| PIECES[k]).collect();
            let whole = parse(&config(None), &text);
            let mut points: Vec<usize> = cuts
                .iter()
                .map(|c| c % (text.len() + 1))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            points.sort_unstable();
            points.dedup();
            let mut stream = StreamParser::new(config(None));
            let mut deltas = Vec::new();
            let mut last = 0;
            for p in points.into_iter().chain([text.len()]) {
                deltas.extend(stream.feed(&text[last..p]).unwrap());
                last = p;
            }
            deltas.extend(stream.finish(None).unwrap());
            let streamed = stream.message();
            prop_assert_eq!(&streamed.content, &whole.content);
            prop_assert_eq!(&streamed.reasoning, &whole.reasoning);
            prop_assert_eq!(streamed.tool_calls.len(), whole.tool_calls.len());
            for (a, b) in streamed.tool_calls.iter().zip(&whole.tool_calls) {
                prop_assert_eq!(&a.arguments, &b.arguments);
                prop_assert!(serde_json::from_str::<Value>(&a.arguments).is_ok());
                let fragments: String = deltas
                    .iter()
                    .flat_map(|d| d.tool_calls.iter())
                    .filter(|c| c.index == a.index)
                    .map(|c| c.arguments.as_str())
                    .collect();
                prop_assert_eq!(&fragments, &a.arguments);
            }
            let kinds = |m: &Message| m.issues.iter().map(|i| (i.kind.as_str(), i.raw.clone())).collect::<Vec<_>>();
            prop_assert_eq!(kinds(&streamed), kinds(&whole));
        }
    }
}
