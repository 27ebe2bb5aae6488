use serde_json::{json, Value};

use super::keyer::tail_need;
use super::plan::is_ws_regex;
use super::xml::{border_free, name_in};
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
fn xml_plans_need_a_provable_value_end() {
    let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
    assert_eq!(plan.describe(), "triggered(prefix=[], tags=[xml])");
    assert_eq!(plan.anchors(), ["free", "xml"]);
    // a regex value may hold the close: not followed
    let regex = qwen_xml(json!({"type": "regex", "pattern": ".*"}));
    assert_eq!(
        KeyPlan::from_tag(GID, &regex).anchors(),
        ["free", "unfollowed"]
    );
    assert_eq!(
        KeyPlan::from_tag(GID, &regex).describe(),
        "triggered(prefix=[], tags=[unknown])"
    );
    // raw text that does not exclude the close either
    let loose = qwen_xml(json!({"type": "any_text", "excludes": ["<tool_call>"]}));
    assert_eq!(
        KeyPlan::from_tag(GID, &loose).describe(),
        "triggered(prefix=[], tags=[unknown])"
    );
    // JSON whose strings may hold `<`, and JSON that excludes it
    let json_value = |excludes: Value| {
        qwen_xml(padded(
            json!({"type": "json_schema", "style": "json", "excludes": excludes,
            "json_schema": {"type": "array", "items": {"type": "string"}}}),
        ))
    };
    assert!(KeyPlan::from_tag(GID, &json_value(json!([])))
        .describe()
        .ends_with("[unknown])"));
    assert!(KeyPlan::from_tag(GID, &json_value(json!(["<"])))
        .describe()
        .ends_with("[xml])"));
    assert!(border_free(b"</parameter>"));
    assert!(!border_free(b"abab"));
}

#[test]
fn xml_values_are_forgotten_at_their_close() {
    let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
    let after_location = |location: &str| {
        let mut k = StateKeyer::new(&plan);
        let call = weather(location, None, None);
        let cut = call.find("</parameter>").unwrap() + "</parameter>".len();
        feed(&mut k, &call[..cut]);
        assert_eq!((k.mode(), k.family()), (Mode::Content, family::XML));
        k.key()
    };
    assert_eq!(
        after_location("Paris"),
        after_location("Rio de Janeiro, <b>BR</b>")
    );
    // the value's interior shares the key of its start where nothing is half matched
    let mut k = StateKeyer::new(&plan);
    feed(
        &mut k,
        "<tool_call>\n<function=get_weather>\n<parameter=location>",
    );
    let start = k.key();
    feed(&mut k, "\nSão Paulo ");
    assert_eq!(k.key(), start);
    k.accept(0, b"</param");
    assert_ne!(k.key(), start, "a half-written close is not canonical");
    k.accept(0, b"x ");
    assert_eq!(k.key(), start);
    k.accept(0, &"é".as_bytes()[..1]);
    assert_ne!(k.key(), start);
}

#[test]
fn xml_json_values_are_keyed_by_position_not_by_values() {
    let items = padded(
        json!({"type": "json_schema", "style": "json", "excludes": ["<"],
        "json_schema": {"type": "array", "items": {"type": "object",
            "properties": {"id": {"type": "integer"}, "note": {"type": "string"}},
            "required": ["id"], "additionalProperties": false}}}),
    );
    let plan = KeyPlan::from_tag(GID, &qwen_xml(items));
    assert_eq!(plan.describe(), "triggered(prefix=[], tags=[xml])");
    let head = "<tool_call>\n<function=get_weather>\n<parameter=location>\n";
    let key_after = |value: &str| {
        let mut k = StateKeyer::new(&plan);
        feed(&mut k, head);
        feed(&mut k, value);
        assert_ne!(k.mode(), Mode::Lost, "{value}");
        k.key()
    };
    // after a member's value, and inside a number: the position and the number's state
    assert_eq!(key_after("[{\"id\": 1}"), key_after("[{\"id\": 333}"));
    assert_eq!(
        key_after("[{\"id\": 1}, {\"id\": 2"),
        key_after("[{\"id\": 9, \"note\": \"x\"}, {\"id\": 7")
    );
    // after the whole value, with or without its trailing newline
    let done = key_after("[{\"id\": 1}]");
    assert_eq!(
        done,
        key_after("[{\"id\": 4, \"note\": \"tea\"}, {\"id\": 5}]")
    );
    assert_ne!(done, key_after("[{\"id\": 1}]\n"));
    assert_eq!(key_after("[{\"id\": 1}]\n"), key_after("[]\n"));
    // an unbounded array's items are not counted; a member's end, an item's, the array's differ
    assert_eq!(
        key_after("[{\"id\": 1}"),
        key_after("[{\"id\": 1}, {\"id\": 2}")
    );
    assert_ne!(
        key_after("[{\"id\": 1}"),
        key_after("[{\"id\": 1, \"note\": \"x\"")
    );
    assert_ne!(key_after("[{\"id\": 1}"), done);
    // a string's interior is keyed by its text (the value excludes `<`: not collapsed)
    assert_ne!(
        key_after("[{\"id\": 1, \"note\": \"a"),
        key_after("[{\"id\": 1, \"note\": \"b")
    );
    // the value's end is the parameter's, whatever it held
    let mut k = StateKeyer::new(&plan);
    feed(&mut k, head);
    feed(&mut k, "[{\"id\": 8}]\n</parameter>");
    let mut other = StateKeyer::new(&plan);
    feed(&mut other, head);
    feed(&mut other, "[]</parameter>");
    assert_eq!(
        (k.mode(), k.family(), k.key()),
        (Mode::Content, family::XML, other.key())
    );
}

#[test]
fn xml_keys_depend_on_the_parameter_not_on_those_before() {
    let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
    let after_days = |call: String| {
        let mut k = StateKeyer::new(&plan);
        let cut = call.rfind("</parameter>").unwrap() + "</parameter>".len();
        feed(&mut k, &call[..cut]);
        k.key()
    };
    let a = after_days(weather("Oslo", Some("celsius"), Some(3)));
    let b = after_days(weather("Lima", None, Some(12)));
    assert_eq!(a, b);
    let c = after_days(weather("Lima", Some("celsius"), None));
    assert_ne!(a, c, "after unit, days may still follow");
    // the call's end returns to the free text with one call done
    let mut k = StateKeyer::new(&plan);
    feed(&mut k, &weather("Oslo", Some("celsius"), Some(3)));
    assert_eq!(
        (k.mode(), k.family(), k.calls()),
        (Mode::Free, family::FREE, 1)
    );
    let mut other = StateKeyer::new(&plan);
    feed(&mut other, "Sure. ");
    feed(&mut other, &weather("Lima", None, None));
    assert_eq!(k.key(), other.key());
}

#[test]
fn xml_openings_with_whitespace_pieces() {
    // GLM: <arg_key>k</arg_key> [ws] <arg_value>v</arg_value>
    let param = |name: &str| {
        json!({"type": "sequence", "elements": [
            {"type": "regex", "pattern": "[ \\t\\r\\n]*"},
            {"type": "const_string", "value": format!("<arg_key>{name}</arg_key>")},
            {"type": "regex", "pattern": "[ \\t\\r\\n]*"},
            {"type": "const_string", "value": "<arg_value>"},
            {"type": "any_text", "excludes": ["</arg_value>", "<arg_key>", "</tool_call>"]},
            {"type": "const_string", "value": "</arg_value>"},
            {"type": "regex", "pattern": "[ \\t\\r\\n]*"}]})
    };
    let tag = json!({"type": "structural_tag", "format": {
        "type": "triggered_tags", "triggers": ["<tool_call>"],
        "tags": [{"type": "tag", "begin": "<tool_call>f\n",
            "content": {"type": "sequence", "elements": [
                {"type": "optional", "content": param("a")}, param("b")]},
            "end": "</tool_call>"}]}});
    let plan = KeyPlan::from_tag(GID, &tag);
    assert_eq!(plan.describe(), "triggered(prefix=[], tags=[xml])");
    let keys: Vec<_> = [
        "<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key> <arg_value>x",
        "<arg_key>b</arg_key><arg_value>yy",
    ]
    .iter()
    .map(|body| {
        let mut k = StateKeyer::new(&plan);
        feed(&mut k, &format!("<tool_call>f\n{body}"));
        assert_eq!(k.mode(), Mode::Content);
        k.key()
    })
    .collect();
    assert_eq!(keys[0], keys[1]);
    let mut k = StateKeyer::new(&plan);
    feed(
        &mut k,
        "<tool_call>f\n<arg_key>b</arg_key><arg_value>y</arg_value></tool_call>",
    );
    assert_eq!((k.mode(), k.calls()), (Mode::Free, 1));
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

#[test]
fn json_members_are_forgotten_once_their_value_ends() {
    let plan = KeyPlan::from_tag(GID, &json_tag(flat_schema()));
    // after a member, only the keys written so far matter: not the values
    let a = key_after(&plan, r#"{"q": "short", "n": 7, "#);
    let b = key_after(&plan, r#"{"q": "a much longer one", "n": -12045, "#);
    assert_eq!(a, b);
    assert_ne!(a, key_after(&plan, r#"{"n": 7, "#), "other keys, other key");
    assert_eq!(
        key_after(&plan, r#"{"b": true, "o": {"a": 1}"#),
        key_after(&plan, r#"{"b": false, "o": {"a": 99}"#)
    );
    assert_eq!(
        key_after(&plan, r#"{"tags": ["x", "yy", "z"]"#),
        key_after(&plan, r#"{"tags": []"#),
        "an unbounded array's length is not part of the key"
    );
    assert_ne!(
        key_after(&plan, r#"{"pair": [1, "#),
        key_after(&plan, r#"{"pair": [1, 2, "#),
        "a bounded array's is"
    );
    assert_eq!(
        key_after(&plan, r#"{"pair": [1, "#),
        key_after(&plan, r#"{"pair": [30, "#)
    );
    let any = KeyPlan::from_tag(
        GID,
        &json_tag(json!({"type": "object", "properties": {"free": {}}})),
    );
    assert_ne!(
        key_after(&any, r#"{"free": [{"a": 1}, "#),
        key_after(&any, r#"{"free": {"a": [1], "#),
        "arrays and objects of any JSON at one depth are told apart"
    );
    assert_eq!(
        key_after(&any, r#"{"free": [{"a": 1}, "#),
        key_after(&any, r#"{"free": [[], "#)
    );
    let whole = |args: &str| {
        let mut k = StateKeyer::new(&plan);
        feed(
            &mut k,
            &format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {args}"),
        );
        (k.mode(), k.key())
    };
    let (mode, done) = whole(r#"{"n": 1}"#);
    assert_eq!(mode, Mode::End);
    assert_eq!(
        done,
        whole(r#"{"q": "x", "o": {"a": 2}}"#).1,
        "after the value only the tag matters"
    );
}

#[test]
fn ordered_objects_key_by_the_last_member_alone() {
    let tag = json_tag(flat_schema());
    let unordered = KeyPlan::from_tag(GID, &tag);
    let plan = KeyPlan::from_tag(GID, &tag).with_ordered_objects(true);
    let (skipped, all) = (
        r#"{"q": "x", "b": true, "#,
        r#"{"q": "x", "n": 1, "x": 2.5, "b": false, "#,
    );
    assert_ne!(key_after(&unordered, skipped), key_after(&unordered, all));
    assert_eq!(
        key_after(&plan, skipped),
        key_after(&plan, all),
        "which optional members came before is not part of the key"
    );
    assert_eq!(key_after(&plan, r#"{"b": true, "#), key_after(&plan, all));
    assert_ne!(
        key_after(&plan, r#"{"q": "x", "n": 1, "#),
        key_after(&plan, all),
        "the last key is"
    );
    assert_eq!(
        key_after(&plan, r#"{"n": 1, "o": {"a": 3}"#),
        key_after(&plan, r#"{"q": "y", "o": {"a": 4}"#),
        "nor in an object around a member"
    );
    assert_eq!(
        key_after(&plan, r#"{"n": 1, "o": {"a": 3"#),
        key_after(&plan, r#"{"q": "y", "b": true, "o": {"a": 4"#),
    );
    assert_ne!(
        key_after(&plan, r#"{"n": 1, "o": {"a": 3"#),
        key_after(&plan, r#"{"n": 1, "o": {"a": 3}"#),
        "inside and after a nested object differ"
    );
    assert_eq!(
        key_after(&plan, r#"{"q": "x", "n": 1"#),
        key_after(&plan, r#"{"n": 7"#),
        "numbers: keyed by their automaton state and their key"
    );
    let undeclared = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["z"]});
    let plan = KeyPlan::from_tag(GID, &json_tag(undeclared)).with_ordered_objects(true);
    assert_ne!(
        key_after(&plan, r#"{"a": 1, "b": 2, "#),
        key_after(&plan, r#"{"b": 2, "#),
        "a required name not declared: every key written stays in the key"
    );
}

#[test]
fn inside_a_tag_the_call_count_is_not_part_of_the_key() {
    let plan = KeyPlan::from_tag(GID, &json_tag(flat_schema()));
    let call = "\n{\"name\": \"f\", \"arguments\": {\"q\": \"x\", \"n\": 12";
    let mut first = StateKeyer::new(&plan);
    let mut second = StateKeyer::new(&plan);
    feed(
        &mut second,
        "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call> ",
    );
    assert_eq!(second.calls(), 1);
    assert_ne!(first.key(), second.key(), "in free text it is");
    // a half-written trigger is still free text; from the whole trigger on, the keys agree
    assert_ne!(
        feed(&mut first, "<tool_call"),
        feed(&mut second, "<tool_call")
    );
    assert_eq!(feed(&mut first, ">"), feed(&mut second, ">"));
    assert_eq!(feed(&mut first, call), feed(&mut second, call));
    feed(&mut first, "}}\n</tool_call>");
    feed(&mut second, "}}\n</tool_call>");
    assert_eq!(
        first.key(),
        second.key(),
        "one call or two: the count is capped at one"
    );
    assert_eq!(
        (first.calls(), second.calls(), first.mode()),
        (1, 2, Mode::Free)
    );
}

/// DeepSeek V3's shape: a section tag holding calls with a separator between them.
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

#[test]
fn sections_of_calls_anchor_between_their_calls() {
    assert_eq!(
        KeyPlan::from_tag(GID, &section_tag()).anchors(),
        ["free", "json", "section"]
    );
    let plan = KeyPlan::from_tag(GID, &section_tag());
    assert_eq!(plan.describe(), "triggered(prefix=[], tags=[section])");
    let call = |name: &str, args: &str| {
        format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜>")
    };
    let keyed = |text: &str| {
        let mut k = StateKeyer::new(&plan);
        feed(&mut k, text);
        (k.mode(), k.key())
    };
    let open = "Let me check.<｜tool▁calls▁begin｜>";
    let (mode, start) = keyed(open);
    assert_eq!(mode, Mode::Section);
    let (mode, after_f) = keyed(&format!("{open}{}", call("f", r#"{"q": "x", "n": 1}"#)));
    assert_eq!(mode, Mode::Section);
    assert_ne!(start, after_f, "after a call a separator is due");
    assert_eq!(
        after_f,
        keyed(&format!("{open}{}", call("g", r#"{"o": {"a": 5}}"#))).1,
        "which call and what it held are forgotten"
    );
    let two = format!("{open}{}\n{}", call("f", "{}"), call("g", r#"{"n": 3}"#));
    assert_eq!(keyed(&two), (Mode::Section, after_f));
    // inside a call the JSON anchors work as in a plain tag, keyed apart from other calls
    let inside = |name: &str| {
        let begin = format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n");
        keyed(&format!("{open}{begin}{{\"q\": \"x\", ")).1
    };
    assert_ne!(inside("f"), inside("g"));
    let (mode, done) = keyed(&format!("{two}<｜tool▁calls▁end｜>"));
    assert_eq!(mode, Mode::Free);
    assert_eq!(
        done,
        keyed(&format!(
            "Hi<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>",
            call("g", "{}")
        ))
        .1
    );
}

#[test]
fn required_sections_are_followed_through_their_end() {
    // tool_choice="required": whitespace, the section's begin, the calls, the section's end
    let calls = section_tag()["format"]["tags"][0]["content"].clone();
    let tag = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "regex", "pattern": "[ \\t\\n]{0,3}"},
        {"type": "sequence", "elements": [
            {"type": "const_string", "value": "<｜tool▁calls▁begin｜>"},
            calls,
            {"type": "const_string", "value": "<｜tool▁calls▁end｜>"}]}]}});
    let plan = KeyPlan::from_tag(GID, &tag);
    assert_eq!(
        plan.describe(),
        "separator(prefix=[ws,const], tags=[json,json], suffix)"
    );
    let call = |name: &str, args: &str| {
        format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜>")
    };
    let keyed = |text: &str| {
        let mut k = StateKeyer::new(&plan);
        feed(&mut k, text);
        (k.mode(), k.family(), k.key())
    };
    let (mode, family, after_one) = keyed(&format!(
        "\n <｜tool▁calls▁begin｜>{}",
        call("f", r#"{"n": 1}"#)
    ));
    assert_eq!((mode, family), (Mode::Between, family::AFTER));
    assert_eq!(
        after_one,
        keyed(&format!(
            "<｜tool▁calls▁begin｜>{}\n{}",
            call("g", "{}"),
            call("f", r#"{"q": "s"}"#)
        ))
        .2
    );
    let (mode, _, done) = keyed(&format!(
        "<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>",
        call("g", "{}")
    ));
    assert_eq!(mode, Mode::Done);
    assert_eq!(
        done,
        keyed(&format!(
            " <｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>",
            call("f", r#"{"x": 2.5}"#)
        ))
        .2
    );
    assert_eq!(
        keyed(&format!(
            "<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>x",
            call("g", "{}")
        ))
        .0,
        Mode::Lost
    );
    // a constant that could be read as the whitespace is not followed
    let mut ambiguous = tag.clone();
    ambiguous["format"]["elements"][1]["elements"][0]["value"] = json!(" <x>");
    assert_eq!(
        KeyPlan::from_tag(GID, &ambiguous).describe(),
        "whole output (text)"
    );
}

#[test]
fn json_after_a_call_id_is_followed() {
    // Kimi K2: `functions.f:<id><|tool_call_argument_begin|>{...}` inside a section
    let mut tag = section_tag();
    let call = json!({"type": "tag", "begin": "<|tool_call_begin|>functions.f:",
        "content": {"type": "sequence", "elements": [
            {"type": "regex", "pattern": "0|[1-9][0-9]{0,5}"},
            {"type": "const_string", "value": "<|tool_call_argument_begin|>"},
            {"type": "json_schema", "json_schema": flat_schema(), "style": "json"}]},
        "end": "<|tool_call_end|>"});
    tag["format"]["tags"][0]["content"]["tags"] = json!([call]);
    let plan = KeyPlan::from_tag(GID, &tag);
    let keyed = |id: &str, args: &str| {
        let mut k = StateKeyer::new(&plan);
        feed(
            &mut k,
            &format!("<｜tool▁calls▁begin｜><|tool_call_begin|>functions.f:{id}<|tool_call_argument_begin|>{args}"),
        );
        (k.mode(), k.key())
    };
    let (mode, key) = keyed("0", r#"{"q": "x", "#);
    assert_eq!(mode, Mode::Content);
    assert_eq!(
        key,
        keyed("17", r#"{"q": "a longer one", "#).1,
        "the id is forgotten with the value"
    );
    assert_ne!(
        keyed("0", "{").1,
        keyed("17", "{").1,
        "before the first anchor the id is text"
    );
    let (mode, _) = keyed("3", r#"{"n": 1}<|tool_call_end|>"#);
    assert_eq!(mode, Mode::Section);
}

#[test]
fn plain_numbers_are_keyed_by_their_automaton_state() {
    let plan = KeyPlan::from_tag(GID, &json_tag(flat_schema()));
    let n = |digits: &str| key_after(&plan, &format!(r#"{{"q": "s", "n": {digits}"#));
    let x = |digits: &str| key_after(&plan, &format!(r#"{{"x": {digits}"#));
    assert_eq!(n("1"), n("12345"));
    assert_eq!(n("-1"), n("98"));
    assert_ne!(n("-"), n("9"));
    assert_ne!(n("0"), n("9"), "no digit may follow a leading zero");
    assert_eq!(x("1.5"), x("-30.25"));
    assert_ne!(x("1."), x("1.5"));
    assert_eq!(x("2e"), x("0.1E"));
    assert_ne!(x("2e"), x("2e+"));
    assert_eq!(x("2e+1"), x("7E33"));
    // a bounded integer is not a plain one: its digits stay in the key
    let bounded = KeyPlan::from_tag(
        GID,
        &json_tag(
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3}}}),
        ),
    );
    assert_ne!(
        key_after(&bounded, r#"{"n": 1"#),
        key_after(&bounded, r#"{"n": 12"#)
    );
}

#[test]
fn combinators_keep_values_in_the_key() {
    // anyOf ties the members together: the rest can depend on what was chosen
    let schema = json!({"type": "object", "properties": {
        "v": {"anyOf": [{"type": "object", "properties": {"k": {"type": "string"}, "a": {"type": "integer"}}},
                        {"type": "object", "properties": {"k": {"type": "integer"}, "b": {"type": "integer"}}}]},
        "w": {"type": "integer"}}});
    let plan = KeyPlan::from_tag(GID, &json_tag(schema));
    assert_ne!(
        key_after(&plan, r#"{"v": {"k": "s", "#),
        key_after(&plan, r#"{"v": {"k": 1, "#)
    );
    // the object around the anyOf is still a product: after `v` its value is forgotten
    assert_eq!(
        key_after(&plan, r#"{"v": {"k": "s"}, "#),
        key_after(&plan, r#"{"v": {"k": 1, "b": 2}, "#)
    );
    let loose =
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 1});
    let plan = KeyPlan::from_tag(GID, &json_tag(loose));
    assert_ne!(
        key_after(&plan, r#"{"a": 1, "#),
        key_after(&plan, r#"{"a": 2, "#)
    );
}

#[test]
fn xml_number_values_and_pending_closes() {
    let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
    let at = |days: &str, rest: &str| {
        let mut k = StateKeyer::new(&plan);
        let call = weather("Paris", None, None);
        let head = &call[..call.find("</function>").unwrap()];
        feed(&mut k, &format!("{head}<parameter=days>{days}{rest}"));
        k.key()
    };
    assert_eq!(at("\n7", ""), at("\n2045", ""));
    assert_ne!(at("\n7", ""), at("\n", ""));
    assert_ne!(at("\n0", ""), at("\n7", ""));
    assert_eq!(at("\n7\n", "</para"), at("\n123\n", "</para"));
    assert_eq!(at("7", "</para"), at("123", "</para"));
    assert_eq!(
        at("7\n", "</para"),
        at("7", "</para"),
        "inside the close, the trail is behind"
    );
    assert_ne!(at("7\n", ""), at("7", ""));
    // raw text: the half-written close, not the text before it, names the state
    let raw = |text: &str| {
        let mut k = StateKeyer::new(&plan);
        feed(
            &mut k,
            &format!("<tool_call>\n<function=get_weather>\n<parameter=location>{text}"),
        );
        k.key()
    };
    assert_eq!(raw("\nParis\n</par"), raw("\nSão Paulo, BR\n</par"));
    assert_ne!(raw("\nParis\n</par"), raw("\nParis\n</pa"));
    assert_ne!(raw("\nParis\n</par"), raw("\nParis"));
}

#[test]
fn xml_parameters_are_read_with_the_registered_tags() {
    let call = |param: Value| {
        json!({"type": "structural_tag", "format": {
            "type": "triggered_tags", "triggers": ["<tool_call>"],
            "tags": [{"type": "tag", "begin": "<tool_call>\n<function=f>\n", "content": param,
                "end": "\n</function>\n</tool_call>"}]}})
    };
    let ws = json!({"type": "regex", "pattern": "[ \\t\\r\\n]*"});
    let param = |open: &str, close: &str, between: bool| {
        let mut elements = vec![
            json!({"type": "const_string", "value": open}),
            json!({"type": "const_string", "value": "Paris"}),
            json!({"type": "const_string", "value": close}),
        ];
        if between {
            elements.insert(0, ws.clone());
            elements.push(ws.clone());
        }
        call(json!({"type": "sequence", "elements": elements}))
    };
    let described = |tag: &Value| KeyPlan::from_tag(GID, tag).describe();
    let xml = "triggered(prefix=[], tags=[xml])";
    let unknown = "triggered(prefix=[], tags=[unknown])";
    assert_eq!(
        described(&param("<parameter=city>", "</parameter>", true)),
        xml
    );
    // qwen3_coder's tags allow whitespace between parameters: the builder writes it
    assert_eq!(
        described(&param("<parameter=city>", "</parameter>", false)),
        unknown
    );
    // texts no registered format writes
    assert_eq!(described(&param("<param=city>", "</param>", true)), unknown);
    assert_eq!(
        described(&param("<parameter=city>", "</param>", true)),
        unknown
    );
    // DSML's `string` attribute, filled in as the builder does
    let dsml = |string: &str| {
        param(
            &format!("<｜DSML｜parameter name=\"city\" string=\"{string}\">"),
            "</｜DSML｜parameter>",
            true,
        )
    };
    assert_eq!(described(&dsml("true")), xml);
    assert_eq!(described(&dsml("maybe")), unknown);
    assert_eq!(
        name_in(b"<parameter=city>", "<parameter={key}>"),
        Some((b"city".to_vec(), None))
    );
    assert_eq!(name_in(b"<parameter=>", "<parameter={key}>"), None);
}
