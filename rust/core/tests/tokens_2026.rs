//! The formats added in 2026 (Kimi K3, Inkling, Muse), from token ids: each marker arrives as one
//! id of a byte-level vocabulary (ids 0..=255 are bytes) that has the family's special tokens, and
//! the same characters typed as text are content. Kimi K3's blocks are several tokens each:
//! `<|open|>`, `<|close|>` and `<|sep|>` are special, the channel names and attributes between them
//! are text.

use std::sync::Arc;

use serde_json::{json, Value};
use toolwire_core::message::Message;
use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;
use toolwire_core::vocab::Vocab;

/// Model output as pieces: a special token, or text encoded byte by byte.
enum Piece {
    Tok(&'static str),
    Text(&'static str),
}
use Piece::{Text, Tok};

fn vocab(special: &[&'static str]) -> Arc<Vocab> {
    let bytes = (0u32..=255).map(|b| (b, vec![b as u8], false));
    let special = (256u32..)
        .zip(special)
        .map(|(id, t)| (id, t.as_bytes().to_vec(), true));
    Arc::new(Vocab::from_pieces(bytes.chain(special)).unwrap())
}

fn ids(special: &[&'static str], pieces: &[Piece]) -> Vec<u32> {
    let mut out = Vec::new();
    for piece in pieces {
        match piece {
            Tok(t) => out.push(256 + special.iter().position(|s| s == t).unwrap() as u32),
            Text(t) => out.extend(t.bytes().map(u32::from)),
        }
    }
    out
}

/// The message from `pieces` fed `chunk` ids at a time.
fn parse_ids(
    format: &str,
    reasoning: Option<&str>,
    special: &[&'static str],
    pieces: &[Piece],
    chunk: usize,
) -> Message {
    let vocab = vocab(special);
    let config = ParserConfig::new(format, ToolSet::empty(), reasoning).unwrap();
    let mut stream = StreamParser::new(config);
    for part in ids(special, pieces).chunks(chunk) {
        stream.feed_tokens(&vocab, part).unwrap();
    }
    stream.finish(None).unwrap();
    stream.message()
}

fn args(message: &Message, i: usize) -> Value {
    serde_json::from_str(&message.tool_calls[i].arguments).unwrap()
}

/// The special tokens a format's spec declares are the ones the vocabulary test uses.
fn declared_special(format: &str) -> Vec<&'static str> {
    ParserConfig::new(format, ToolSet::empty(), None)
        .unwrap()
        .special_marker_texts()
}

const K3_SPECIAL: &[&str] = &["<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"];

#[test]
fn kimi_k3_markers_are_its_special_tokens() {
    let mut declared = declared_special("kimi_k3");
    declared.sort_unstable();
    let mut expected = K3_SPECIAL.to_vec();
    expected.sort_unstable();
    assert_eq!(declared, expected);
}

#[test]
fn kimi_k3_from_token_ids() {
    let pieces = [
        Text("Weighing <|open|>tools<|sep|> as text."),
        Tok("<|close|>"),
        Text("think"),
        Tok("<|sep|>"),
        Tok("<|open|>"),
        Text("response"),
        Tok("<|sep|>"),
        Text("Typed <|close|>response<|sep|> stays."),
        Tok("<|close|>"),
        Text("response"),
        Tok("<|sep|>"),
        Tok("<|open|>"),
        Text("tools"),
        Tok("<|sep|>"),
        Tok("<|open|>"),
        Text("call tool=\"get_weather\" index=\"1\""),
        Tok("<|sep|>"),
        Tok("<|open|>"),
        Text("argument key=\"city\" type=\"string\""),
        Tok("<|sep|>"),
        Text("P <|close|>argument<|sep|> ok"),
        Tok("<|close|>"),
        Text("argument"),
        Tok("<|sep|>"),
        Tok("<|open|>"),
        Text("argument key=\"days\" type=\"number\""),
        Tok("<|sep|>"),
        Text("3"),
        Tok("<|close|>"),
        Text("argument"),
        Tok("<|sep|>"),
        Tok("<|close|>"),
        Text("call"),
        Tok("<|sep|>"),
        Tok("<|close|>"),
        Text("tools"),
        Tok("<|sep|>"),
        Tok("<|close|>"),
        Text("message"),
        Tok("<|sep|>"),
        Tok("<|end_of_msg|>"),
    ];
    for chunk in [1, 2, 3, 7, 1000] {
        let m = parse_ids("kimi_k3", Some("closing_only"), K3_SPECIAL, &pieces, chunk);
        assert_eq!(
            m.reasoning, "Weighing <|open|>tools<|sep|> as text.",
            "{chunk}"
        );
        assert_eq!(
            m.content, "Typed <|close|>response<|sep|> stays.",
            "{chunk}"
        );
        assert_eq!(m.tool_calls.len(), 1, "{chunk}: {m:?}");
        assert_eq!(m.tool_calls[0].name, "get_weather");
        assert_eq!(
            args(&m, 0),
            json!({"city": "P <|close|>argument<|sep|> ok", "days": 3})
        );
        assert!(m.issues.is_empty(), "{:?}", m.issues);
    }
}

const INKLING_SPECIAL: &[&str] = &[
    "<|message_model|>",
    "<|content_text|>",
    "<|content_thinking|>",
    "<|content_invoke_tool_json|>",
    "<|content_invoke_tool_text|>",
    "<|end_message|>",
    "<|content_model_end_sampling|>",
];

#[test]
fn inkling_markers_are_its_special_tokens() {
    let mut declared = declared_special("inkling");
    declared.sort_unstable();
    declared.dedup();
    let mut expected = INKLING_SPECIAL.to_vec();
    expected.sort_unstable();
    assert_eq!(declared, expected);
}

#[test]
fn inkling_from_token_ids() {
    let pieces = [
        Tok("<|content_thinking|>"),
        Text("Typed <|end_message|> is text."),
        Tok("<|end_message|>"),
        Tok("<|message_model|>"),
        Tok("<|content_text|>"),
        Text("See <|content_invoke_tool_json|>{} here."),
        Tok("<|end_message|>"),
        Tok("<|message_model|>"),
        Text("search"),
        Tok("<|content_invoke_tool_json|>"),
        Text("{\"name\":\"search\",\"args\":{\"query\":\"<|end_message|>\"}}"),
        Tok("<|end_message|>"),
        Tok("<|content_model_end_sampling|>"),
    ];
    for chunk in [1, 2, 3, 7, 1000] {
        let m = parse_ids("inkling", None, INKLING_SPECIAL, &pieces, chunk);
        assert_eq!(m.reasoning, "Typed <|end_message|> is text.", "{chunk}");
        assert_eq!(
            m.content, "See <|content_invoke_tool_json|>{} here.",
            "{chunk}"
        );
        assert_eq!(m.tool_calls.len(), 1, "{chunk}: {m:?}");
        assert_eq!(m.tool_calls[0].name, "search");
        assert_eq!(args(&m, 0), json!({"query": "<|end_message|>"}));
        assert!(m.issues.is_empty(), "{:?}", m.issues);
    }
}

const MUSE_SPECIAL: &[&str] = &["<|start|>", "<|message|>", "<|eom|>", "<|eot|>"];

#[test]
fn muse_markers_are_its_special_tokens() {
    let mut declared = declared_special("muse");
    declared.sort_unstable();
    let mut expected = MUSE_SPECIAL.to_vec();
    expected.sort_unstable();
    assert_eq!(declared, expected);
}

#[test]
fn muse_from_token_ids() {
    let pieces = [
        Text(" to=self"),
        Tok("<|message|>"),
        Text("Typed <|eom|> and <atem:invoke name=\"x\"> stay text."),
        Tok("<|eom|>"),
        Tok("<|start|>"),
        Text("assistant to=get_weather"),
        Tok("<|message|>"),
        Text("<atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">P <|eot|> x</atem:parameter>\n</atem:invoke>\n</atem:function_calls>"),
        Tok("<|eom|>"),
        Tok("<|start|>"),
        Text("assistant to=user"),
        Tok("<|message|>"),
        Text("Type <|start|>assistant to begin."),
        Tok("<|eot|>"),
    ];
    for chunk in [1, 2, 3, 7, 1000] {
        let m = parse_ids("muse", None, MUSE_SPECIAL, &pieces, chunk);
        assert_eq!(
            m.reasoning, "Typed <|eom|> and <atem:invoke name=\"x\"> stay text.",
            "{chunk}"
        );
        assert_eq!(m.content, "Type <|start|>assistant to begin.", "{chunk}");
        assert_eq!(m.tool_calls.len(), 1, "{chunk}: {m:?}");
        assert_eq!(m.tool_calls[0].name, "get_weather");
        assert_eq!(args(&m, 0), json!({"city": "P <|eot|> x"}));
        assert!(m.issues.is_empty(), "{:?}", m.issues);
    }
}
