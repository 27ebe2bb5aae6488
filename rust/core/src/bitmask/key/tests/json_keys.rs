//! Keys inside JSON arguments and sections of calls: members forgotten once their value ends,
//! a member's value keyed from its key on, ordered objects, numbers by automaton state,
//! combinators.

use super::*;

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
fn a_members_value_is_keyed_from_its_key_on() {
    let plan = KeyPlan::from_tag(GID, &json_tag(flat_schema())).with_ordered_objects(true);
    // what came before the key `b` (other members, spacing) is forgotten at its closing quote
    for inside in [r#""b""#, r#""b": "#, r#""b": tr"#, r#""b": true"#] {
        assert_eq!(
            key_after(&plan, &format!(r#"{{"q": "x", {inside}"#)),
            key_after(&plan, &format!(r#"{{"n": 7,"x": 2.5 , {inside}"#)),
            "{inside}"
        );
    }
    assert_eq!(
        key_after(&plan, r#"{"q": "x", "o": {"a": "#),
        key_after(&plan, r#"{"n": 1, "o": {"a": "#),
        "in a nested object too"
    );
    assert_ne!(
        key_after(&plan, r#"{"q": "x", "b""#),
        key_after(&plan, r#"{"q": "x", "n""#),
        "the key itself is part of the key"
    );
    assert_ne!(
        key_after(&plan, r#"{"q": "x", "b""#),
        key_after(&plan, r#"{"q": "x", "b": true"#),
        "after the key and after its value differ"
    );
    assert_ne!(
        key_after(&plan, r#"{"q": "x", "b"#),
        key_after(&plan, r#"{"n": 7, "b"#),
        "inside the key the members before it still count (they decide which names may follow)"
    );
    // unordered objects keep every key written, so the anchor does not merge them
    let unordered = KeyPlan::from_tag(GID, &json_tag(flat_schema()));
    assert_ne!(
        key_after(&unordered, r#"{"q": "x", "b": "#),
        key_after(&unordered, r#"{"n": 7, "b": "#)
    );
    // a member tied to another by a combinator is no product: no anchor inside it
    let tied = json!({"type": "object", "properties": {
        "v": {"anyOf": [{"type": "object", "properties": {"k": {"type": "string"}, "a": {"type": "integer"}}},
                        {"type": "object", "properties": {"k": {"type": "integer"}, "b": {"type": "integer"}}}]}}});
    let plan = KeyPlan::from_tag(GID, &json_tag(tied)).with_ordered_objects(true);
    assert_ne!(
        key_after(&plan, r#"{"v": {"k": "s", "a""#),
        key_after(&plan, r#"{"v": {"k": 1, "a""#)
    );
}

#[test]
fn a_key_of_declared_members_only_is_keyed_by_the_members_it_may_name() {
    let strict = json!({"type": "object", "properties": {
        "x1": {"type": "integer"}, "x2": {"type": "integer"}, "x3": {"type": "integer"},
        "req": {"type": "string"}, "y": {"type": "boolean"}},
        "required": ["req"], "additionalProperties": false});
    let plan = KeyPlan::from_tag(GID, &json_tag(strict.clone())).with_ordered_objects(true);
    assert_eq!(
        key_after(&plan, r#"{"x1": 1, "x3"#),
        key_after(&plan, r#"{"x2": 5,"x3"#),
        "x3 is the one member either may name"
    );
    assert_eq!(
        key_after(&plan, r#"{"r"#),
        key_after(&plan, r#"{"x2": 5, "r"#)
    );
    assert_eq!(
        key_after(&plan, r#"{"x1": 1, "re"#),
        key_after(&plan, r#"{"x3": 2, "re"#)
    );
    assert_ne!(
        key_after(&plan, r#"{"x"#),
        key_after(&plan, r#"{"x1": 1, "x"#),
        "after x1, x1 may not come again: other members, other key"
    );
    assert_ne!(
        key_after(&plan, r#"{"x1": 1, "x"#),
        key_after(&plan, r#"{"x2": 1, "x"#)
    );
    assert_ne!(
        key_after(&plan, r#"{"x1": 1, "x3"#),
        key_after(&plan, r#"{"x1": 1, "x"#),
        "the key's bytes are part of it"
    );
    // after the required member, the members before it are not candidates
    assert_eq!(
        key_after(&plan, r#"{"req": "a", "y"#),
        key_after(&plan, r#"{"x1": 2, "req": "b", "y"#)
    );
    // where other members may come (additionalProperties not false), or the object's order is
    // not the grammar's, the members before still count
    let mut open = strict.clone();
    open["additionalProperties"] = json!(true);
    let plan = KeyPlan::from_tag(GID, &json_tag(open)).with_ordered_objects(true);
    assert_ne!(
        key_after(&plan, r#"{"x1": 1, "x3"#),
        key_after(&plan, r#"{"x2": 5, "x3"#)
    );
    let unordered = KeyPlan::from_tag(GID, &json_tag(strict.clone()));
    assert_ne!(
        key_after(&unordered, r#"{"x1": 1, "x3"#),
        key_after(&unordered, r#"{"x2": 5, "x3"#)
    );
    // an escape in a key is not followed
    let plan = KeyPlan::from_tag(GID, &json_tag(strict)).with_ordered_objects(true);
    assert_ne!(
        key_after(&plan, r#"{"x1": 1, "x\"#),
        key_after(&plan, r#"{"x2": 5, "x\"#)
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
