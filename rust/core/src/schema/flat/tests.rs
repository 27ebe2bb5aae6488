use serde_json::{json, Value};

use super::super::compile::compile;
use super::super::instance::{with_document, SERDE_NESTING_LIMIT};
use super::super::node::CompiledSchema;
use super::super::validate;

const TOOL: &str = r#"{"type": "object", "properties": {
    "city": {"type": "string", "description": "where"},
    "days": {"type": "integer"},
    "unit": {"type": "string", "enum": ["C", "F"]},
    "ratio": {"type": ["number", "null"]},
    "loud": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}}
  }, "required": ["city"]}"#;

fn compiled(schema: &Value) -> CompiledSchema {
    compile(schema).expect("a valid schema")
}

/// What the general path says of `text`: `None` when it is not JSON.
fn general(schema: &CompiledSchema, text: &str) -> Option<bool> {
    with_document(text, SERDE_NESTING_LIMIT, |doc| {
        validate::is_valid(schema, doc)
    })
    .ok()
}

fn accepts(schema: &CompiledSchema, text: &str) -> bool {
    schema.flat.as_ref().expect("a plan").accepts(text)
}

#[test]
fn accepts_fitting_arguments_and_leaves_the_rest() {
    let schema = compiled(&serde_json::from_str(TOOL).unwrap());
    for text in [
        r#"{"city": "Oslo", "days": 7}"#,
        r#"  {"days":7,"city":"Oslo"}  "#,
        "{\n\t\"city\" :\r\n\"Oslo\" , \"unit\": \"F\"}\n",
        r#"{"city": "Oslo", "days": 7.0, "ratio": -1.5e3}"#,
        r#"{"city": "Oslo", "ratio": null, "loud": false, "other": true}"#,
        r#"{"city": "Zürich", "other": 12, "other": "again"}"#,
    ] {
        assert_eq!(general(&schema, text), Some(true), "{text}");
        assert!(accepts(&schema, text), "{text}");
    }
    let left = [
        // invalid, or not JSON
        r#"{"days": 7}"#,
        r#"{"city": 3}"#,
        r#"{"city": "Oslo", "days": 7.5}"#,
        r#"{"city": "Oslo", "unit": "K"}"#,
        r#"{"city": Paris}"#,
        r#"{"city": "Oslo",}"#,
        r#"{"city": "Oslo"} x"#,
        r#"{"city": "Oslo", "days": 07}"#,
        r#"{"city": "Oslo", "loud": tru}"#,
        "{\"city\": \"Os\u{1}lo\"}",
        r#"["city"]"#,
        "",
        // valid, but beyond the quick check
        r#"{"city": "Os\nlo"}"#,
        r#"{"ci\u0074y": "Oslo"}"#,
        r#"{"city": "Oslo", "city": "Bergen"}"#,
        r#"{"city": "Oslo", "tags": ["a"]}"#,
        r#"{"city": "Oslo", "other": {}}"#,
    ];
    for text in left {
        assert!(!accepts(&schema, text), "{text}");
    }
    assert_eq!(general(&schema, left[left.len() - 1]), Some(true));
}

#[test]
fn plans_only_object_schemas_it_can_answer_for() {
    let planned = [
        json!({"type": "object"}),
        json!({"properties": {"a": {}}}),
        json!({"type": ["object", "null"], "required": ["a"], "additionalProperties": false}),
        json!({"type": "object", "properties": {"a": {"enum": ["x", 1]}, "b": false}}),
    ];
    for schema in planned {
        assert!(compiled(&schema).flat.is_some(), "{schema}");
    }
    let not_planned = [
        json!(true),
        json!({"type": "array"}),
        json!({"type": "object", "minProperties": 1}),
        json!({"patternProperties": {"^a": {}}}),
        json!({"$ref": "#/$defs/a", "$defs": {"a": {"type": "object"}}}),
        json!({"type": "object", "anyOf": [{"required": ["a"]}]}),
    ];
    for schema in not_planned {
        assert!(compiled(&schema).flat.is_none(), "{schema}");
    }
}

/// A deterministic stream of choices, so a failure names its case number.
struct Choices(u64);

impl Choices {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % bound as u64) as usize
    }

    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.below(options.len())]
    }
}

const NAMES: [&str; 5] = ["a", "b", "city", "x y", "é"];

fn property_schema(choices: &mut Choices, tame: bool) -> Value {
    let tame_options = [
        json!({}),
        json!({"type": "string"}),
        json!({"type": "integer"}),
        json!({"type": "number"}),
        json!({"type": "boolean"}),
        json!({"type": "null"}),
        json!({"type": ["string", "integer"]}),
        json!({"type": "string", "enum": ["p", "q"]}),
        json!({"const": "p", "description": "only p"}),
    ];
    let wild_options = [
        json!({"enum": ["p", 1, null]}),
        json!({"type": "string", "minLength": 2}),
        json!({"type": "object"}),
        json!({"type": "array"}),
        json!(false),
        json!(true),
        json!({"enum": [1.0]}),
        json!({"type": "integer", "const": "p"}),
    ];
    let total = tame_options.len() + if tame { 0 } else { wild_options.len() };
    let k = choices.below(total);
    tame_options
        .get(k)
        .unwrap_or_else(|| &wild_options[k - tame_options.len()])
        .clone()
}

fn object_schema(choices: &mut Choices, tame: bool) -> Value {
    let mut properties = serde_json::Map::new();
    for _ in 0..choices.below(5) {
        let name = NAMES[choices.below(NAMES.len())];
        properties.insert(name.to_string(), property_schema(choices, tame));
    }
    let mut required: Vec<&str> = NAMES
        .iter()
        .copied()
        .filter(|name| properties.contains_key(*name) && choices.below(2) == 0)
        .collect();
    if !tame && choices.below(4) == 0 {
        required.push("z");
    }
    let mut schema = json!({"type": "object", "properties": properties, "required": required});
    let additional = match (tame, choices.below(4)) {
        (_, 0) => None,
        (_, 1) => Some(json!(true)),
        (false, 2) => Some(json!(false)),
        (false, _) => Some(json!({"type": "string"})),
        (true, _) => None,
    };
    if let Some(additional) = additional {
        schema["additionalProperties"] = additional;
    }
    if !tame && choices.below(8) == 0 {
        schema["type"] = json!(["object", "string"]);
    }
    schema
}

fn space(choices: &mut Choices) -> &'static str {
    choices.pick(&["", "", " ", "\n", "\t ", "\r\n  "])
}

/// Arguments text for `object_schema`: members in random order and spacing. Tame texts have no
/// escapes, nested values or repeated keys; wild ones have all of these, and some are not JSON.
fn arguments(choices: &mut Choices, tame: bool) -> String {
    let tame_values = [
        "\"p\"",
        "\"q\"",
        "\"Oslo\"",
        "\"\"",
        "7",
        "-3",
        "0",
        "7.0",
        "1e2",
        "0.5",
        "-0.25E-2",
        "123456789012345678901234567890",
        "true",
        "false",
        "null",
    ];
    let wild_values = [
        "\"a\\nb\"",
        "\"\\u0070\"",
        "{}",
        "[]",
        "[1, \"p\"]",
        "{\"k\": 1}",
        "01",
        "1.",
        "-",
        "tru",
        "nul",
        "\"open",
        "Paris",
        "1e",
    ];
    let mut text = String::from(space(choices));
    text.push('{');
    let mut used: Vec<&str> = Vec::new();
    for _ in 0..choices.below(5) {
        let mut key = if choices.below(6) == 0 {
            "z"
        } else {
            NAMES[choices.below(NAMES.len())]
        };
        if tame && used.contains(&key) {
            continue;
        }
        used.push(key);
        if !tame && choices.below(10) == 0 {
            key = "\\u0061";
        }
        if used.len() > 1 {
            text.push(',');
        }
        text.push_str(space(choices));
        text.push('"');
        text.push_str(key);
        text.push('"');
        text.push_str(space(choices));
        text.push(':');
        text.push_str(space(choices));
        let total = tame_values.len() + if tame { 0 } else { wild_values.len() };
        let k = choices.below(total);
        text.push_str(
            tame_values
                .get(k)
                .copied()
                .unwrap_or_else(|| wild_values[k - tame_values.len()]),
        );
        text.push_str(space(choices));
    }
    text.push('}');
    text.push_str(space(choices));
    if !tame && choices.below(12) == 0 {
        text.push_str(choices.pick(&["x", ",", "}", "{}"]));
    }
    text
}

/// Never "valid" where the general path disagrees; on tame schemas and texts (nothing it leaves
/// on purpose), "valid" exactly where the general path says so.
#[test]
fn agrees_with_the_general_path() {
    let mut choices = Choices(0x7001_3ee5);
    let (mut accepted, mut left_valid, mut tame_accepted) = (0, 0, 0);
    for case in 0..40_000 {
        let tame = case % 2 == 0;
        let schema = object_schema(&mut choices, tame);
        let compiled = compiled(&schema);
        let Some(plan) = compiled.flat.as_ref() else {
            assert!(!tame, "case {case}: no plan for {schema}");
            continue;
        };
        let text = arguments(&mut choices, tame);
        let quick = plan.accepts(&text);
        let decided = general(&compiled, &text);
        if quick {
            assert_eq!(
                decided,
                Some(true),
                "case {case}: accepted {text:?} for {schema}"
            );
            accepted += 1;
            tame_accepted += usize::from(tame);
        } else if tame {
            assert_ne!(
                decided,
                Some(true),
                "case {case}: left valid {text:?} for {schema}"
            );
        } else if decided == Some(true) {
            left_valid += 1;
        }
        let parsed: Result<Value, _> = serde_json::from_str(&text);
        assert_eq!(parsed.is_ok(), decided.is_some(), "case {case}: {text:?}");
    }
    assert!(
        accepted > 5_000 && tame_accepted < accepted,
        "{accepted} accepted, {tame_accepted} tame"
    );
    assert!(
        left_valid > 500,
        "{left_valid} valid wild texts left to the general path"
    );
}
