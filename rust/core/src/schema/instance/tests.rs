use serde_json::Value;

use super::*;

/// The `Value` serde_json builds from the same text, rebuilt from the flat tree.
fn to_value(doc: &Doc<'_>, value: Val) -> Value {
    match value {
        Val::Null => Value::Null,
        Val::Bool(flag) => Value::Bool(flag),
        Val::Number(span) => Value::Number(doc.number(span).parse().expect("number literal")),
        Val::String(text) => Value::String(doc.text(text).to_string()),
        Val::Array(span) => Value::Array(
            doc.items(span)
                .iter()
                .map(|item| to_value(doc, *item))
                .collect(),
        ),
        Val::Object(span) => Value::Object(
            doc.members(span)
                .iter()
                .map(|member| {
                    (
                        doc.text(member.key).to_string(),
                        to_value(doc, member.value),
                    )
                })
                .collect(),
        ),
    }
}

/// Holds the parser to serde_json: same accept/reject, same tree, same compact spelling.
fn agrees_with_serde(text: &str) {
    let expected = serde_json::from_str::<Value>(text);
    let ours = with_document(text, SERDE_NESTING_LIMIT, |doc| {
        let mut written = String::new();
        doc.write_json(doc.root, &mut written);
        (to_value(doc, doc.root), written)
    });
    match (expected, ours) {
        (Ok(expected), Ok((value, written))) => {
            assert_eq!(value, expected, "tree of {text:?}");
            let keys_in_order = |v: &Value| serde_json::to_string(v).expect("serializes");
            assert_eq!(written, keys_in_order(&expected), "spelling of {text:?}");
        }
        (Err(_), Err(NotJson)) => {}
        (expected, ours) => panic!(
            "{text:?}: serde_json says {:?}, this parser {:?}",
            expected.map(|_| "ok"),
            ours.map(|_| "ok")
        ),
    }
}

#[test]
fn matches_serde_on_edge_cases() {
    for text in [
        "{}",
        "[]",
        " { \"a\" : [1, -0, 2.5e+3, 1E-2, 123456789012345678901234567890] } ",
        r#"{"a": 1, "b": 2, "a": 3}"#,
        r#"{"a": 1, "a": {"x": 1, "x": 2}, "c": null, "a": [true, false]}"#,
        r#""plain""#,
        r#""esc \" \\ \/ \b \f \n \r \t \u0041 \u00e9 \ud83d\ude00 é""#,
        r#"{"k\u00e9y": "v\nw", "kéy": 2}"#,
        r#""\ud800""#,
        r#""\ud800\u0041""#,
        r#""\udc00""#,
        r#""\ud800\udbff""#,
        r#""\x""#,
        r#""\u12""#,
        r#""\u12G4""#,
        "\"tab\there\"",
        "\"\u{7f}\u{1}\"",
        "\"unterminated",
        "01",
        "-",
        "-01",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "1.5E07",
        "NaN",
        "Infinity",
        "tru",
        "truex",
        "nul",
        "null null",
        "[1,]",
        "[,1]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{a: 1}",
        "{\"a\":}",
        "[1 2]",
        "",
        "   ",
        "\u{feff}{}",
        "[[[]]]",
        "{\"a\":{\"b\":{}}}",
        "[1]x",
        "{}\n\t\r ",
    ] {
        agrees_with_serde(text);
    }
}

#[test]
fn nesting_limit_matches_serde() {
    for depth in [126, 127, 128, 129] {
        agrees_with_serde(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
        agrees_with_serde(&format!("{}1{}", "[".repeat(depth), "]".repeat(depth)));
        let objects = format!("{}{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        agrees_with_serde(&objects.replacen("{\"a\":}", "{}", 1));
    }
}

#[test]
fn large_objects_resolve_duplicates_like_serde() {
    let mut text = String::from("{");
    for index in 0..40 {
        text.push_str(&format!("\"k{}\": {index},", index % 25));
    }
    text.push_str("\"last\": true}");
    agrees_with_serde(&text);
}

#[test]
fn plain_runs_stop_at_the_first_special_byte() {
    let text = "abcdefgh\u{e9}\u{1f600}ijklmnopq";
    for stop in ["\"", "\\", "\u{0}", "\u{1f}", "\n"] {
        for at in 0..=text.len() {
            if !text.is_char_boundary(at) {
                continue;
            }
            let probe = format!("{}{stop}{}", &text[..at], &text[at..]);
            assert_eq!(plain_run(probe.as_bytes()), Some(at), "{probe:?}");
        }
    }
    assert_eq!(plain_run(text.as_bytes()), None);
    assert_eq!(plain_run("\u{7f}\u{80} ~".as_bytes()), None);
}

#[test]
fn scratch_is_reused_and_results_stay_independent() {
    let first = with_document(
        r#"{"a": "x\ny", "b": [1, 2]}"#,
        SERDE_NESTING_LIMIT,
        |doc| to_value(doc, doc.root),
    );
    let second = with_document(r#"["z"]"#, SERDE_NESTING_LIMIT, |doc| {
        to_value(doc, doc.root)
    });
    assert_eq!(first, Ok(serde_json::json!({"a": "x\ny", "b": [1, 2]})));
    assert_eq!(second, Ok(serde_json::json!(["z"])));
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,5})?([eE][-+]?[0-9]{1,3})?"
                .prop_map(|text| Value::Number(text.parse().expect("number literal"))),
            "\\PC{0,8}|[\"\\\\\\n\\t\\u{0}-\\u{1f}a-c]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-d\"\\\\é]{0,3}", inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn serialized_values_parse_back(value in json_value(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&value)
            } else {
                serde_json::to_string(&value)
            }
            .expect("serializes");
            agrees_with_serde(&text);
        }

        #[test]
        fn arbitrary_text_is_accepted_exactly_when_serde_accepts(
            text in "[\\[\\]{}\":,0-9eE.+\\-tfnrulas\\\\ \\n]{0,24}"
        ) {
            agrees_with_serde(&text);
        }

        #[test]
        fn mutated_json_is_accepted_exactly_when_serde_accepts(
            value in json_value(),
            cut in any::<prop::sample::Index>(),
            insert in "[\\[\\]{}\":,0-9\\\\u ]",
        ) {
            let mut text = serde_json::to_string(&value).expect("serializes");
            let mut at = cut.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.insert_str(at, &insert);
            agrees_with_serde(&text);
        }
    }
}
