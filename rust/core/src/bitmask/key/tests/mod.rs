//! The state keyers' tests: plans, free text, markers and token boundaries here; keys inside
//! JSON arguments in `json_keys`, inside XML parameters in `xml_keys`. The helpers building
//! tags and feeding keyers are shared by all three.

use serde_json::{json, Value};

use super::keyer::tail_need;
use super::plan::is_ws_regex;
use super::*;

const GID: [u8; 16] = [7; 16];

fn hermes(extra: Value) -> Value {
    let mut fmt = json!({
        "type": "triggered_tags",
        "triggers": ["<tool_call>"],
        "tags": [
            {"type": "tag", "begin": "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ",
             "content": {"type": "json_schema", "json_schema": {"type": "object", "properties": {
                 "city": {"type": "string"}, "days": {"type": "integer"}}}},
             "end": "}\n</tool_call>"},
            {"type": "tag", "begin": "<tool_call>\n{\"name\": \"get_time\", \"arguments\": ",
             "content": {"type": "json_schema", "json_schema": {"type": "object"}},
             "end": "}\n</tool_call>"}
        ],
        "excludes": ["<think>", "</think>"]
    });
    if let (Value::Object(f), Value::Object(e)) = (&mut fmt, extra) {
        f.extend(e);
    }
    json!({"type": "structural_tag", "format": fmt})
}

fn feed(k: &mut StateKeyer, text: &str) -> Vec<[u8; KEY_LEN]> {
    // one character per "token", to cross every marker boundary
    text.chars()
        .map(|c| {
            k.accept(0, c.to_string().as_bytes());
            k.key()
        })
        .collect()
}

#[test]
fn plans() {
    let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
    assert_eq!(plan.describe(), "triggered(prefix=[], tags=[json,json])");
    let seq = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "regex", "pattern": "[ \\t\\n]{0,3}"},
        {"type": "tags_with_separator", "tags": hermes(json!({}))["format"]["tags"], "separator": "\n"}]}});
    assert_eq!(
        KeyPlan::from_tag(GID, &seq).describe(),
        "separator(prefix=[ws], tags=[json,json])"
    );
    let token = json!({"type": "structural_tag", "format": {"type": "token_triggered_tags", "trigger_tokens": [1], "tags": []}});
    assert_eq!(
        KeyPlan::from_tag(GID, &token).describe(),
        "whole output (tokens)"
    );
    let or = json!({"type": "structural_tag", "format": {"type": "or", "elements": []}});
    assert_eq!(
        KeyPlan::from_tag(GID, &or).describe(),
        "whole output (text)"
    );
    assert_eq!(plan.anchors(), ["free", "json"]);
    assert_eq!(KeyPlan::from_tag(GID, &seq).anchors(), ["after", "json"]);
    assert!(KeyPlan::from_tag(GID, &or).anchors().is_empty());
    let mut text_call = hermes(json!({}));
    text_call["format"]["tags"][1]["content"] = json!({"type": "any_text"});
    assert_eq!(
        KeyPlan::from_tag(GID, &text_call).anchors(),
        ["free", "json"]
    );
    text_call["format"]["tags"][1]["content"] = json!({"type": "or", "elements": []});
    assert_eq!(
        KeyPlan::from_tag(GID, &text_call).anchors(),
        ["free", "json", "unfollowed"]
    );
    for (p, ok) in [
        ("[ \\t\\n]{0,3}", true),
        ("\\s*", true),
        ("[ ]+", true),
        ("[a ]*", false),
        ("[ ]", false),
        ("x*", false),
    ] {
        assert_eq!(is_ws_regex(p), ok, "{p}");
    }
}

#[test]
fn free_text_shares_one_key_and_calls_return_to_it() {
    let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
    let mut k = StateKeyer::new(&plan);
    let start = k.key();
    let keys = feed(&mut k, "Hello there, 東京.");
    assert!(keys.iter().all(|key| *key == start));
    feed(
        &mut k,
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa",
    );
    assert_eq!(k.mode(), Mode::Content);
    let in_string = k.key();
    feed(&mut k, "ris and more");
    assert_eq!(k.key(), in_string, "string interiors collapse");
    feed(&mut k, "\", \"days\": 3}}\n</tool_call>");
    assert_eq!((k.mode(), k.calls()), (Mode::Free, 1));
    let after = k.key();
    assert_ne!(after, start, "the call count is part of the key");
    feed(&mut k, "more text");
    assert_eq!(k.key(), after);
}

#[test]
fn a_string_is_forgotten_after_its_closing_quote() {
    let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
    let run = |city: &str| {
        let mut k = StateKeyer::new(&plan);
        feed(&mut k, &format!("<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\", \"days"));
        k.key()
    };
    assert_eq!(
        run("Paris"),
        run("A much longer \\\"quoted\\\" \\u00e9 name")
    );
}

#[test]
fn partial_markers_and_characters_are_not_canonical() {
    let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
    let mut k = StateKeyer::new(&plan);
    let start = k.key();
    k.accept(0, b"ok <tool");
    assert_ne!(k.key(), start);
    k.accept(0, b"s> fine");
    assert_eq!(k.key(), start);
    k.accept(0, &"é".as_bytes()[..1]);
    assert_ne!(k.key(), start);
    k.accept(0, &"é".as_bytes()[1..]);
    assert_eq!(k.key(), start);
    // inside a string, a pending escape is not canonical either
    feed(
        &mut k,
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"",
    );
    let quote = k.key();
    k.accept(0, b"a\\");
    assert_ne!(k.key(), quote);
    k.accept(0, b"n");
    assert_eq!(k.key(), quote);
}

#[test]
fn keys_do_not_depend_on_token_boundaries() {
    let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
    let text = "Hi <tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"a\": [1, {\"b\": null}]}}\n</tool_call> bye";
    let mut a = StateKeyer::new(&plan);
    feed(&mut a, text);
    let mut b = StateKeyer::new(&plan);
    for chunk in text.as_bytes().chunks(5) {
        b.accept(0, chunk);
    }
    assert_eq!(a.key(), b.key());
    assert_eq!(a.calls(), 1);
}

#[test]
fn lost_structure_still_keys_by_text() {
    let mut tag = hermes(json!({}));
    tag["format"]["tags"][0]["content"]["style"] = json!("qwen_xml");
    let plan = KeyPlan::from_tag(GID, &tag);
    let mut k = StateKeyer::new(&plan);
    feed(
        &mut k,
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ",
    );
    assert_eq!(k.mode(), Mode::Lost);
    let before = k.key();
    k.accept(0, b"x");
    assert_ne!(k.key(), before);
}

#[test]
fn token_level_grammars_key_by_ids() {
    let plan = KeyPlan::opaque(GID);
    let mut a = StateKeyer::new(&plan);
    let mut b = StateKeyer::new(&plan);
    a.accept(1, b"x");
    b.accept(2, b"x");
    assert_ne!(a.key(), b.key());
    assert_eq!(a.family(), family::START_IDS);
}

#[test]
fn separator_format_with_whitespace_prefix() {
    let tags = hermes(json!({}))["format"]["tags"].clone();
    let tag = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "regex", "pattern": "[ \\t\\n]{0,3}"},
        {"type": "tags_with_separator", "tags": tags, "separator": "\n", "at_least_one": true}]}});
    let plan = KeyPlan::from_tag(GID, &tag);
    let call = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
    let mut keys = Vec::new();
    for lead in ["", "  "] {
        let mut k = StateKeyer::new(&plan);
        feed(&mut k, lead);
        feed(&mut k, &format!("{call}\n{call}"));
        assert_eq!((k.mode(), k.calls()), (Mode::Between, 2));
        keys.push(k.key());
    }
    assert_eq!(keys[0], keys[1]);
}

#[test]
fn reasoning_prefix() {
    let tag = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"},
        {"type": "const_string", "value": "\n\n"},
        hermes(json!({}))["format"]]}});
    let plan = KeyPlan::from_tag(GID, &tag);
    let mut k = StateKeyer::new(&plan);
    feed(&mut k, "<think>maybe <tool_call> here</think>\n\n");
    assert_eq!((k.mode(), k.family()), (Mode::Free, family::FREE));
}

fn xml_param(name: &str, value: Value) -> Value {
    json!({"type": "sequence", "elements": [
        {"type": "regex", "pattern": "[ \\t\\r\\n]*"},
        {"type": "const_string", "value": format!("<parameter={name}>")},
        value,
        {"type": "const_string", "value": "</parameter>"},
        {"type": "regex", "pattern": "[ \\t\\r\\n]*"}]})
}

fn raw_text() -> Value {
    json!({"type": "any_text", "excludes": ["</function>", "</parameter>", "</tool_call>",
        "<function=", "<parameter=", "<tool_call>"], "max_chars": null})
}

fn padded(value: Value) -> Value {
    let nl = json!({"type": "optional", "content": {"type": "const_string", "value": "\n"}});
    json!({"type": "sequence", "elements": [nl, value, nl]})
}

/// qwen3_coder as `grammar.structural_tag` builds it: a required raw location, an optional
/// enum unit, an optional integer days.
fn qwen_xml(location: Value) -> Value {
    let unit = padded(json!({"type": "or", "elements": [
        {"type": "const_string", "value": "celsius"},
        {"type": "const_string", "value": "fahrenheit"}]}));
    let days = padded(
        json!({"type": "json_schema", "json_schema": {"type": "integer"},
        "style": "json", "excludes": []}),
    );
    json!({"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["<tool_call>"],
        "tags": [{"type": "tag", "begin": "<tool_call>\n<function=get_weather>\n",
            "content": {"type": "sequence", "elements": [
                xml_param("location", location),
                {"type": "optional", "content": xml_param("unit", unit)},
                {"type": "optional", "content": xml_param("days", days)}]},
            "end": "\n</function>\n</tool_call>"}],
        "excludes": ["<think>", "</think>"]}})
}

fn weather(location: &str, unit: Option<&str>, days: Option<u32>) -> String {
    let mut call = format!(
        "<tool_call>\n<function=get_weather>\n<parameter=location>\n{location}\n</parameter>\n"
    );
    if let Some(unit) = unit {
        call += &format!("<parameter=unit>\n{unit}\n</parameter>\n");
    }
    if let Some(days) = days {
        call += &format!("<parameter=days>\n{days}\n</parameter>\n");
    }
    call + "</function>\n</tool_call>"
}

#[test]
fn utf8_tails() {
    assert_eq!(tail_need(b"abc"), 0);
    assert_eq!(tail_need(&"é".as_bytes()[..1]), 1);
    assert_eq!(tail_need(&"🦩".as_bytes()[..2]), 2);
    assert_eq!(tail_need("🦩".as_bytes()), 0);
    assert_eq!(tail_need(&[0x80, 0x80]), 0);
}

fn json_tag(schema: Value) -> Value {
    json!({"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["<tool_call>"],
        "tags": [{"type": "tag", "begin": "<tool_call>\n{\"name\": \"f\", \"arguments\": ",
            "content": {"type": "json_schema", "json_schema": schema, "style": "json"},
            "end": "}\n</tool_call>"}]}})
}

fn key_after(plan: &KeyPlan, arguments: &str) -> [u8; KEY_LEN] {
    let mut k = StateKeyer::new(plan);
    feed(
        &mut k,
        &format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {arguments}"),
    );
    k.key()
}

fn flat_schema() -> Value {
    json!({"type": "object", "properties": {
        "q": {"type": "string", "maxLength": 40}, "n": {"type": "integer"},
        "x": {"type": "number"}, "b": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "pair": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
        "o": {"type": "object", "properties": {"a": {"type": "integer"}}}}})
}

fn section_tag() -> Value {
    let call = |name: &str| {
        json!({"type": "tag",
            "begin": format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n"),
            "content": {"type": "json_schema", "json_schema": flat_schema(), "style": "json"},
            "end": "\n```<｜tool▁call▁end｜>"})
    };
    json!({"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["<｜tool▁calls▁begin｜>"],
        "tags": [{"type": "tag", "begin": "<｜tool▁calls▁begin｜>",
            "content": {"type": "tags_with_separator", "tags": [call("f"), call("g")],
                "separator": "\n", "at_least_one": true, "stop_after_first": false},
            "end": "<｜tool▁calls▁end｜>"}]}})
}

mod json_keys;
mod xml_keys;
