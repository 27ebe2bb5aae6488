use super::*;
use serde_json::json;

fn typed(raw: &str, schema: Value) -> String {
    typed_json(raw, Some(&schema))
}

#[test]
fn typing_table() {
    let s = json!({"type": "string"});
    let i = json!({"type": "integer"});
    let n = json!({"type": "number"});
    let b = json!({"type": "boolean"});
    let o = json!({"type": "object"});
    let a = json!({"type": "array"});
    let int_or_null = json!({"type": ["integer", "null"]});
    let str_or_int = json!({"type": ["string", "integer"]});
    let str_or_null = json!({"type": "string", "nullable": true});
    let any_of = json!({"anyOf": [{"type": "integer"}, {"type": "array", "items": {}}]});
    let one_of_obj = json!({"oneOf": [{"type": "object"}, {"type": "null"}]});
    let enum_int = json!({"enum": [1, 2, 3]});
    let enum_str = json!({"enum": ["a", "b"]});
    let nested_any = json!({"anyOf": [{"anyOf": [{"type": "boolean"}]}]});
    let props = json!({"properties": {"a": {"type": "string"}}});
    let reference = json!({"$ref": "#/$defs/Thing"});
    let table: &[(&str, &Value, &str)] = &[
        // strings: verbatim, even when they look like something else
        (" NYC \n", &s, "\" NYC \\n\""),
        ("null", &s, "\"null\""),
        ("{\"a\": 1}", &s, "\"{\\\"a\\\": 1}\""),
        ("42", &s, "\"42\""),
        // integers, exact
        ("42", &i, "42"),
        (" -7 ", &i, "-7"),
        ("+5", &i, "5"),
        ("007", &i, "7"),
        ("140.0", &i, "140"),
        ("9007199254740993", &i, "9007199254740993"),
        (
            "123456789012345678901234567890",
            &i,
            "123456789012345678901234567890",
        ),
        ("1.5", &i, "\"1.5\""),
        ("abc", &i, "\"abc\""),
        ("1e3", &i, "\"1e3\""),
        ("null", &i, "null"),
        ("NULL", &i, "null"),
        // numbers keep their literal
        ("9007199254740993", &n, "9007199254740993"),
        (
            "3.14159265358979323846264338327950288",
            &n,
            "3.14159265358979323846264338327950288",
        ),
        ("1e3", &n, "1e3"),
        (".5", &n, "0.5"),
        ("5.", &n, "5"),
        ("-0.25E-2", &n, "-0.25E-2"),
        ("1E3", &str_or_int, "\"1E3\""),
        ("NaN", &n, "\"NaN\""),
        ("Infinity", &n, "\"Infinity\""),
        ("1.2.3", &n, "\"1.2.3\""),
        ("", &n, "\"\""),
        ("-", &n, "\"-\""),
        // booleans
        ("true", &b, "true"),
        ("False", &b, "false"),
        ("TRUE\n", &b, "true"),
        ("1", &b, "true"),
        ("0", &b, "false"),
        ("maybe", &b, "\"maybe\""),
        // objects and arrays: JSON or Python literals
        (
            "{\"a\": 1, \"b\": [true, null]}",
            &o,
            "{\"a\":1,\"b\":[true,null]}",
        ),
        (
            "{'a': 'x', 'b': True, 'c': None, 'd': (1, 2.5,)}",
            &o,
            "{\"a\":\"x\",\"b\":true,\"c\":null,\"d\":[1,2.5]}",
        ),
        (
            "{'it\\'s': \"q\\\"\", 'n': -1e5}",
            &o,
            "{\"it's\":\"q\\\"\",\"n\":-1e+5}",
        ),
        ("{1: 'one'}", &o, "{\"1\":\"one\"}"),
        (
            "{'big': 9007199254740993}",
            &o,
            "{\"big\":9007199254740993}",
        ),
        ("[1, 2, 3]", &o, "\"[1, 2, 3]\""),
        ("not json", &o, "\"not json\""),
        ("{'a': }", &o, "\"{'a': }\""),
        ("{'a' 1}", &o, "\"{'a' 1}\""),
        ("{'a': 1} extra", &o, "\"{'a': 1} extra\""),
        ("['x', 'y',]", &a, "[\"x\",\"y\"]"),
        ("[]", &a, "[]"),
        ("('a',)", &a, "[\"a\"]"),
        ("{'a', 'b'}", &a, "[\"a\",\"b\"]"),
        ("\"5\"", &i, "5"),
        (" \"2.5\" ", &n, "2.5"),
        ("\"true\"", &b, "true"),
        ("\"5\"", &str_or_int, "\"\\\"5\\\"\""),
        ("\"x\"", &i, "\"\\\"x\\\"\""),
        ("{1, -2.5,}", &a, "[1,-2.5]"),
        ("{'a': {1}}", &o, "{\"a\":[1]}"),
        ("{'a': 1, 'b'}", &o, "\"{'a': 1, 'b'}\""),
        ("[1, [2, [3]]]", &a, "[1,[2,[3]]]"),
        ("[1, 2", &a, "\"[1, 2\""),
        ("{\"a\": 1}", &a, "\"{\\\"a\\\": 1}\""),
        ("null", &a, "null"),
        // unions
        ("5", &int_or_null, "5"),
        ("null", &int_or_null, "null"),
        ("None", &int_or_null, "null"),
        ("x", &int_or_null, "\"x\""),
        ("5", &str_or_int, "5"),
        ("05", &str_or_int, "\"05\""),
        ("5.0", &str_or_int, "\"5.0\""),
        ("null", &str_or_int, "\"null\""),
        ("null", &str_or_null, "null"),
        ("None", &str_or_null, "\"None\""),
        ("hello", &str_or_null, "\"hello\""),
        ("3", &any_of, "3"),
        ("[3]", &any_of, "[3]"),
        ("{'k': [1]}", &one_of_obj, "{\"k\":[1]}"),
        ("2", &enum_int, "2"),
        ("a", &enum_str, "\"a\""),
        ("true", &nested_any, "true"),
        ("{\"a\": \"b\"}", &props, "{\"a\":\"b\"}"),
        ("{\"a\": 1}", &reference, "{\"a\":1}"),
        ("celsius", &reference, "\"celsius\""),
        ("{'a': 1}", &reference, "\"{'a': 1}\""),
    ];
    for (raw, schema, want) in table {
        assert_eq!(typed(raw, (*schema).clone()), *want, "{raw:?} as {schema}");
    }
}

#[test]
fn template_json_spacing() {
    let v = json!({"a": [1, "x, y: z"], "b": {"c": null}, "q": "\\\"", "n": 9007199254740993u64});
    assert_eq!(
        template_json(&v),
        "{\"a\": [1, \"x, y: z\"], \"b\": {\"c\": null}, \"q\": \"\\\\\\\"\", \"n\": 9007199254740993}"
    );
}

#[test]
fn unknown_and_untyped_parameters_stay_strings() {
    assert_eq!(typed_json("42", None), "\"42\"");
    assert_eq!(typed_json("null", None), "\"null\"");
    assert_eq!(typed("42", json!({})), "\"42\"");
    assert_eq!(typed("42", json!(true)), "\"42\"");
    assert_eq!(typed("42", json!({"type": "whatever"})), "\"42\"");
    assert_eq!(typed("42", json!({"description": "n"})), "\"42\"");
    assert!(is_string_typed(None));
    assert!(is_string_typed(Some(&json!({"type": "string"}))));
    assert!(is_string_typed(Some(&json!({"enum": ["a", "b"]}))));
    assert!(!is_string_typed(Some(&json!({"type": ["string", "null"]}))));
    assert!(!is_string_typed(Some(&json!({"type": "integer"}))));
}

#[test]
fn python_literals_convert_or_refuse() {
    let ok: &[(&str, &str)] = &[
        ("{'a'}", "[\"a\"]"),
        ("{'a': 'b'}", "{\"a\":\"b\"}"),
        ("'\\x41\\u00e9\\n\\t\\101'", "\"Aé\\n\\tA\""),
        ("[True, False, None]", "[true,false,null]"),
        ("{}", "{}"),
        ("  ( )  ", "[]"),
        (
            "{'a': {'b': [1, {'c': ()}]}}",
            "{\"a\":{\"b\":[1,{\"c\":[]}]}}",
        ),
    ];
    for (text, want) in ok {
        assert_eq!(
            python_literal_to_json(text).as_deref(),
            Some(*want),
            "{text}"
        );
    }
    for bad in [
        "",
        "[",
        "]",
        "{'a':}",
        "{'a': 1,,}",
        "[1 2]",
        "'open",
        "foo",
        "[1](2)",
        "{,}",
        "[,]",
        "{'a': 1]",
        "(1]",
        "'\\xZZ'",
        "'a\nb'",
    ] {
        let got = python_literal_to_json(bad);
        assert!(
            got.as_deref().is_none_or(|j| !crate::json::is_valid(j)),
            "{bad:?} gave {got:?}"
        );
    }
}

#[test]
fn lone_surrogate_escapes_become_replacement_characters() {
    let array = json!({"type": "array", "items": {"type": "string"}});
    assert_eq!(
        typed(r#"["a\udbeeb", "\udc00", "\ud83d\ude00"]"#, array.clone()),
        "[\"a\u{fffd}b\",\"\u{fffd}\",\"\u{1f600}\"]"
    );
    // An escaped backslash is not an escape; a lone surrogate at the end of a string is.
    assert_eq!(
        typed(r#"["\\udbee", "x\ud83d"]"#, array.clone()),
        r#"["\\udbee","x�"]"#
    );
    // Not JSON for another reason: the text stays a string.
    assert_eq!(typed(r#"["\udbee""#, array), r#""[\"\\udbee\"""#);
}

#[test]
fn hostile_nesting_does_not_overflow() {
    let deep = "[".repeat(200_000) + &"]".repeat(200_000);
    assert_eq!(python_literal_to_json(&deep), None);
    let schema = json!({"type": "array"});
    let out = typed(&deep, schema.clone());
    assert!(out.starts_with("\"[[[["));
    let ok = "[".repeat(60) + &"]".repeat(60);
    assert_eq!(typed(&ok, schema), ok);
    let dict_deep = "{'a': ".repeat(50_000) + "1" + &"}".repeat(50_000);
    assert!(typed(&dict_deep, json!({"type": "object"})).starts_with('"'));
    // A self-referencing-looking deep schema is walked with a bound.
    let mut s = json!({"type": "integer"});
    for _ in 0..50 {
        s = json!({"anyOf": [s]});
    }
    assert_eq!(typed("5", s), "\"5\"");
}
