//! Property tests for `toolwire_core::schema`: compiling and validating never panic, the two
//! entry points agree, and every reported pointer exists in the instance.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolwire_core::schema::Validator;

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1.0e6f64..1.0e6).prop_map(|number| json!(number)),
        "[a-z0-9 .@:/~-]{0,8}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ]
}

fn property_name() -> impl Strategy<Value = String> {
    prop_oneof!["[a-c]", "[a-c/~]{0,3}", Just("$ref".to_string())]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((property_name(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

fn count() -> impl Strategy<Value = Value> {
    (0u64..4).prop_map(Value::from)
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i64..5).prop_map(Value::from),
        (-5.0f64..5.0).prop_map(|number| json!(number)),
        Just(json!(0.5)),
        "(1e40|-1e-40|123456789012345678901234567890)"
            .prop_map(|text| serde_json::from_str(&text).unwrap_or(Value::Null)),
    ]
}

fn single(keyword: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(keyword.to_string(), value);
    Value::Object(map)
}

fn leaf_schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![
            "null", "boolean", "object", "array", "number", "string", "integer"
        ])
        .prop_map(|name| json!({ "type": name })),
        prop::collection::vec(
            prop::sample::select(vec!["null", "object", "array", "integer", "string"]),
            1..3
        )
        .prop_map(|names| json!({ "type": names, "nullable": true })),
        number().prop_map(|bound| single("minimum", bound)),
        number().prop_map(|bound| single("exclusiveMaximum", bound)),
        prop_oneof![Just(json!(2)), Just(json!(0.25)), Just(json!(1e-8))]
            .prop_map(|divisor| single("multipleOf", divisor)),
        count().prop_map(|bound| single("minLength", bound)),
        count().prop_map(|bound| single("maxItems", bound)),
        count().prop_map(|bound| single("minProperties", bound)),
        "[a-c.*+?|()\\[\\]^$\\\\dws{}0-9,-]{0,8}"
            .prop_map(|pattern| single("pattern", Value::String(pattern))),
        prop::sample::select(vec![
            "date-time",
            "date",
            "time",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uri",
            "uri-reference",
            "iri",
            "uuid",
            "json-pointer",
            "relative-json-pointer",
            "regex",
            "uri-template",
            "unknown"
        ])
        .prop_map(|format| single("format", Value::String(format.to_string()))),
        prop::collection::vec(json_value(), 0..4)
            .prop_map(|options| single("enum", Value::Array(options))),
        json_value().prop_map(|value| single("const", value)),
        prop::collection::vec(property_name(), 0..3).prop_map(|names| json!({ "required": names })),
        Just(json!({"uniqueItems": true})),
        Just(json!({"$ref": "#"})),
        Just(json!({"$ref": "#/$defs/a"})),
        prop::sample::select(vec![
            "x-extension",
            "title",
            "unevaluatedProperties",
            "$anchor"
        ])
        .prop_map(|keyword| single(keyword, json!("z"))),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf_schema().prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec((property_name(), inner.clone()), 0..3)
                .prop_map(|entries| single("properties", Value::Object(entries.into_iter().collect()))),
            ("[a-c^$.*]{0,3}", inner.clone()).prop_map(|(pattern, schema)| {
                let mut patterns = Map::new();
                patterns.insert(pattern, schema);
                single("patternProperties", Value::Object(patterns))
            }),
            inner.clone().prop_map(|schema| single("additionalProperties", schema)),
            inner.clone().prop_map(|schema| single("items", schema)),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|schemas| single("prefixItems", Value::Array(schemas))),
            (inner.clone(), count()).prop_map(|(schema, minimum)| json!({"contains": schema, "minContains": minimum})),
            inner.clone().prop_map(|schema| single("propertyNames", schema)),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|schemas| single("anyOf", Value::Array(schemas))),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|schemas| single("oneOf", Value::Array(schemas))),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|schemas| single("allOf", Value::Array(schemas))),
            inner.clone().prop_map(|schema| single("not", schema)),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(condition, then, otherwise)| json!({"if": condition, "then": then, "else": otherwise})),
            (property_name(), inner.clone()).prop_map(|(trigger, schema)| {
                let mut rules = Map::new();
                rules.insert(trigger, schema);
                single("dependentSchemas", Value::Object(rules))
            }),
            (inner.clone(), inner).prop_map(|(left, right)| match (left, right) {
                (Value::Object(mut left), Value::Object(right)) => {
                    left.extend(right);
                    Value::Object(left)
                }
                (left, _) => left,
            }),
        ]
    })
}

fn document() -> impl Strategy<Value = Value> {
    (schema(), schema()).prop_map(|(root, definition)| match root {
        Value::Object(mut map) => {
            map.insert("$defs".to_string(), json!({ "a": definition }));
            Value::Object(map)
        }
        other => other,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    #[test]
    fn compiled_schemas_validate_consistently(schema in document(), instance in json_value()) {
        if let Ok(validator) = Validator::compile(&schema) {
            let violations = validator.validate(&instance);
            prop_assert_eq!(validator.is_valid(&instance), violations.is_empty(), "{:?}", violations);
            for violation in &violations {
                prop_assert!(
                    instance.pointer(&violation.pointer).is_some(),
                    "pointer {:?} not in instance {}",
                    violation.pointer,
                    instance
                );
                prop_assert!(!violation.keyword.is_empty());
                prop_assert!(!violation.message.is_empty());
            }
            let mut sorted = validator.unsupported_keywords().to_vec();
            sorted.sort();
            sorted.dedup();
            prop_assert_eq!(sorted.as_slice(), validator.unsupported_keywords());
        }
    }

    #[test]
    fn arbitrary_json_never_panics_as_a_schema(schema in json_value(), instance in json_value()) {
        if let Ok(validator) = Validator::compile(&schema) {
            prop_assert_eq!(validator.is_valid(&instance), validator.validate(&instance).is_empty());
        }
    }
}
