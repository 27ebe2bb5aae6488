//! Keys inside XML parameter formats: values forgotten at their close, JSON values keyed by
//! position, heads keyed by the parameters they may name, parameters read with the registered
//! tags.

use super::*;
use crate::bitmask::key::xml::{border_free, name_in};

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
fn xml_heads_are_keyed_by_the_parameters_they_may_still_name() {
    let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
    let after = |before: &str, head: &str| {
        let mut k = StateKeyer::new(&plan);
        let mut call = weather("Oslo", Some("celsius"), None);
        call.truncate(call.find(before).unwrap() + before.len());
        feed(&mut k, &(call + head));
        k.key()
    };
    let (location, unit) = ("Oslo\n</parameter>\n", "celsius\n</parameter>\n");
    assert_eq!(
        after(location, "<parameter=d"),
        after(unit, "<parameter=d"),
        "days is the one parameter either may name"
    );
    assert_eq!(
        after(location, "</func"),
        after(unit, "</func"),
        "the call's end"
    );
    assert_ne!(
        after(location, "<parameter="),
        after(unit, "<parameter="),
        "after the location, the unit may come too"
    );
    assert_ne!(
        after(location, "<parameter=d"),
        after(location, "<parameter=da")
    );
    assert_ne!(after(location, "<parameter=d"), after(unit, "</func"));
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
