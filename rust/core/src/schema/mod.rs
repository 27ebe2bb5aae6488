//! JSON Schema validation of tool-call arguments, without Python.
//!
//! A parsed tool call is only usable if its arguments fit the `parameters` schema the request
//! declared for that tool. Serving code reports misfits as `schema_violation` issues and RL reward
//! code scores them, for every call, so the check has to be cheap and must not need a Python
//! interpreter. [`Validator::compile`] turns a schema into a tree of nodes once (resolving `$ref`
//! up front), and [`Validator::is_valid`] / [`Validator::validate`] walk that tree against each
//! instance without touching the schema JSON again and, while the instance is valid, without
//! allocating (except for `propertyNames` and for `uniqueItems` on arrays over 32 items). For
//! the commonest tool schema, an object of scalar properties, arguments text that plainly fits is
//! answered from one read of the text, without the tree (`flat`).
//!
//! Supported (draft 2020-12 semantics): `type` (with `integer` accepting `1.0`), `enum`, `const`,
//! the numeric, string, array and object assertions, `properties`, `patternProperties`,
//! `additionalProperties`, `propertyNames`, `dependentRequired`, `dependentSchemas`, `prefixItems`,
//! `items`, `contains`, `allOf`/`anyOf`/`oneOf`/`not`, `if`/`then`/`else`, boolean schemas,
//! `$ref` within the document (JSON pointers into `$defs`, `definitions` or anywhere else, written
//! as `#...` or as the top-level `$id` followed by `#...`), and `format` as an assertion for date-time, date, time, duration, email,
//! idn-email, hostname, ipv4, ipv6, uri, uri-reference, iri, iri-reference, uri-template, uuid,
//! json-pointer, relative-json-pointer and regex. Numbers are compared as exact decimals.
//! For schemas written for older drafts or OpenAPI 3.0, it also reads `nullable: true`, boolean
//! `exclusiveMinimum`/`exclusiveMaximum` next to `minimum`/`maximum`, `dependencies`, and the
//! array form of `items` with `additionalItems`.
//!
//! Not supported: `$ref` to other documents, `$id` on nested schemas, `$anchor`, `$dynamicRef`,
//! `unevaluatedProperties`, `unevaluatedItems` and `$vocabulary`. Unknown keywords are listed by
//! [`Validator::unsupported_keywords`] and otherwise ignored, as are unknown formats and
//! `idn-hostname`. Patterns follow ECMA-262, translated to the `regex` crate; lookaround and
//! backreferences have no equivalent there, so such a `pattern` is skipped and listed as
//! unsupported, and such a `patternProperties` key is a [`SchemaError`]. A `$ref` cycle that
//! never descends into the instance is a [`SchemaError`], and an instance that drives validation
//! more than 1024 subschemas deep (several hundred levels of nesting) gets a `depth` violation
//! rather than risking the stack.

mod compile;
mod ecma_regex;
mod equality;
mod flat;
mod format;
mod instance;
mod node;
mod number;
mod validate;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// A compiled schema. Cheap to clone (shared), and usable from many threads.
#[derive(Clone, Debug)]
pub struct Validator {
    compiled: Arc<node::CompiledSchema>,
}

impl Validator {
    pub fn compile(schema: &Value) -> Result<Validator, SchemaError> {
        Ok(Validator {
            compiled: Arc::new(compile::compile(schema)?),
        })
    }

    /// Every violation found; empty when the instance is valid.
    pub fn validate(&self, instance: &Value) -> Vec<Violation> {
        instance::with_value_document(instance, |doc| validate::violations(&self.compiled, doc))
    }

    /// Stops at the first failing keyword and builds no error reports.
    pub fn is_valid(&self, instance: &Value) -> bool {
        instance::with_value_document(instance, |doc| validate::is_valid(&self.compiled, doc))
    }

    /// [`Validator::validate`] for JSON text, such as a tool call's `arguments`, without building
    /// a `serde_json::Value`. `Err` exactly when `serde_json::from_str::<Value>` would fail.
    pub fn validate_json(&self, text: &str) -> Result<Vec<Violation>, NotJson> {
        if self.quickly_valid(text) {
            return Ok(Vec::new());
        }
        instance::with_document(text, instance::SERDE_NESTING_LIMIT, |doc| {
            if validate::is_valid(&self.compiled, doc) {
                Vec::new()
            } else {
                validate::violations(&self.compiled, doc)
            }
        })
        .map_err(|_| NotJson)
    }

    /// The violations of JSON text in one buffer: what [`Validator::validate_json`] finds, without
    /// a `schema_path` and without an allocation per violation (for callers that copy the
    /// strings out anyway, such as the Python binding).
    pub fn report_json(&self, text: &str) -> Result<Report, NotJson> {
        if self.quickly_valid(text) {
            return Ok(Report::default());
        }
        instance::with_document(text, instance::SERDE_NESTING_LIMIT, |doc| {
            if validate::is_valid(&self.compiled, doc) {
                Report::default()
            } else {
                validate::compact_report(&self.compiled, doc)
            }
        })
        .map_err(|_| NotJson)
    }

    /// [`Validator::is_valid`] for JSON text; `Err` exactly when serde_json would reject it.
    pub fn is_valid_json(&self, text: &str) -> Result<bool, NotJson> {
        if self.quickly_valid(text) {
            return Ok(true);
        }
        instance::with_document(text, instance::SERDE_NESTING_LIMIT, |doc| {
            validate::is_valid(&self.compiled, doc)
        })
        .map_err(|_| NotJson)
    }

    /// True when the quick check of an object of scalar properties ([`flat`]) is sure that
    /// `text` is valid; false sends it to the general path.
    fn quickly_valid(&self, text: &str) -> bool {
        self.compiled
            .flat
            .as_ref()
            .is_some_and(|flat| flat.accepts(text))
    }

    /// Keywords seen in the schema that this validator does not apply, sorted and deduplicated.
    pub fn unsupported_keywords(&self) -> &[String] {
        &self.compiled.unsupported
    }
}

/// The arguments text is not JSON (serde_json's error says why: `serde_json::from_str`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotJson;

impl fmt::Display for NotJson {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("arguments are not JSON")
    }
}

impl std::error::Error for NotJson {}

/// Violations written into one string: see [`Validator::report_json`].
#[derive(Clone, Debug, Default)]
pub struct Report {
    text: String,
    entries: Vec<ReportEntry>,
}

/// Offsets into [`Report`]'s text: `start..pointer_end` is the pointer, `start..end` is the
/// violation as `Display` writes it and `message_start..end` its message.
#[derive(Clone, Copy, Debug)]
struct ReportEntry {
    keyword: &'static str,
    start: u32,
    pointer_end: u32,
    message_start: u32,
    end: u32,
}

impl Report {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = ReportedViolation<'_>> {
        self.entries.iter().map(|entry| {
            let slice = |from: u32, to: u32| &self.text[from as usize..to as usize];
            ReportedViolation {
                pointer: slice(entry.start, entry.pointer_end),
                keyword: entry.keyword,
                message: slice(entry.message_start, entry.end),
                display: slice(entry.start, entry.end),
            }
        })
    }
}

/// One violation of a [`Report`], borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportedViolation<'a> {
    /// As [`Violation::pointer`].
    pub pointer: &'a str,
    pub keyword: &'static str,
    pub message: &'a str,
    /// As [`Violation`]'s `Display`: `"{pointer or /}: {message}"`.
    pub display: &'a str,
}

/// One way an instance fails its schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// RFC 6901 JSON pointer to the failing value in the instance; `""` for the root.
    pub pointer: String,
    /// The keyword that failed, such as `"required"` or `"type"`.
    pub keyword: String,
    /// JSON pointer to the failing keyword in the schema document.
    pub schema_path: String,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(formatter, "{at}: {}", self.message)
    }
}

/// The schema itself cannot be used: a malformed keyword, an unresolvable `$ref`, a bad regex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "invalid schema: {}", self.message)
    }
}

impl std::error::Error for SchemaError {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn compile(schema: Value) -> Validator {
        Validator::compile(&schema).expect("schema compiles")
    }

    fn weather_tool_parameters() -> Value {
        json!({
            "type": "object",
            "properties": {
                "location": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "minLength": 1},
                        "country": {"type": "string", "pattern": "^[A-Z]{2}$"}
                    },
                    "required": ["city"],
                    "additionalProperties": false
                },
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "fields": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["temperature", "wind", "rain"]},
                    "uniqueItems": true
                },
                "a/b~c": {"type": "boolean"}
            },
            "required": ["location", "unit"],
            "additionalProperties": false
        })
    }

    fn summary(violations: &[Violation]) -> Vec<(&str, &str)> {
        violations
            .iter()
            .map(|violation| (violation.pointer.as_str(), violation.keyword.as_str()))
            .collect()
    }

    #[test]
    fn valid_tool_arguments_pass() {
        let validator = compile(weather_tool_parameters());
        let arguments = json!({
            "location": {"city": "Paris", "country": "FR"},
            "unit": "celsius",
            "days": 3.0,
            "fields": ["wind", "rain"],
            "a/b~c": true
        });
        assert!(validator.is_valid(&arguments));
        assert!(validator.validate(&arguments).is_empty());
        assert!(validator.unsupported_keywords().is_empty());
    }

    #[test]
    fn reports_pointer_and_keyword_for_each_violation() {
        let validator = compile(weather_tool_parameters());
        let arguments = json!({
            "location": {"country": "France", "zip": "75001"},
            "unit": "kelvin",
            "days": 30,
            "fields": ["wind", 7, "wind"],
            "a/b~c": "yes",
            "extra": 1
        });
        assert!(!validator.is_valid(&arguments));
        let violations = validator.validate(&arguments);
        let mut found = summary(&violations);
        found.sort();
        assert_eq!(
            found,
            vec![
                ("/a~1b~0c", "type"),
                ("/days", "maximum"),
                ("/extra", "additionalProperties"),
                ("/fields", "uniqueItems"),
                ("/fields/1", "enum"),
                ("/fields/1", "type"),
                ("/location", "required"),
                ("/location/country", "pattern"),
                ("/location/zip", "additionalProperties"),
                ("/unit", "enum"),
            ]
        );
        let required = violations
            .iter()
            .find(|violation| violation.keyword == "required")
            .expect("required violation");
        assert_eq!(required.schema_path, "/properties/location/required");
        assert!(
            required.message.contains("\"city\""),
            "{}",
            required.message
        );
        let extra = violations
            .iter()
            .find(|violation| violation.pointer == "/extra")
            .expect("extra violation");
        assert_eq!(extra.schema_path, "/additionalProperties");
        assert!(extra.message.contains("\"extra\""), "{}", extra.message);
        let days = violations
            .iter()
            .find(|violation| violation.pointer == "/days")
            .expect("days violation");
        assert_eq!(days.schema_path, "/properties/days/maximum");
    }

    #[test]
    fn missing_top_level_required_points_at_root() {
        let validator = compile(weather_tool_parameters());
        let violations = validator.validate(&json!({"unit": "celsius"}));
        assert_eq!(summary(&violations), vec![("", "required")]);
        assert_eq!(violations[0].schema_path, "/required");
        assert_eq!(
            violations[0].to_string(),
            "/: missing required property \"location\""
        );
    }

    #[test]
    fn refs_report_target_schema_paths() {
        let validator = compile(json!({
            "$defs": {"positive": {"type": "integer", "exclusiveMinimum": 0}},
            "type": "object",
            "properties": {"count": {"$ref": "#/$defs/positive"}}
        }));
        let violations = validator.validate(&json!({"count": -1}));
        assert_eq!(summary(&violations), vec![("/count", "exclusiveMinimum")]);
        assert_eq!(
            violations[0].schema_path,
            "/$defs/positive/exclusiveMinimum"
        );
    }

    #[test]
    fn nullable_adds_null_to_type() {
        let validator = compile(json!({
            "type": "object",
            "properties": {
                "note": {"type": "string", "nullable": true},
                "strict": {"type": "string", "nullable": false},
                "untyped": {"nullable": true, "minLength": 2}
            }
        }));
        assert!(validator.is_valid(&json!({"note": null})));
        assert!(validator.is_valid(&json!({"note": "hi"})));
        assert!(!validator.is_valid(&json!({"note": 3})));
        assert!(!validator.is_valid(&json!({"strict": null})));
        assert!(validator.is_valid(&json!({"untyped": null})));
        assert!(validator.unsupported_keywords().is_empty());
        let violations = validator.validate(&json!({"note": 3}));
        assert_eq!(summary(&violations), vec![("/note", "type")]);
        assert_eq!(
            violations[0].message,
            "expected one of null, string, got integer"
        );
    }

    #[test]
    fn openapi_boolean_exclusive_bounds() {
        let validator = compile(json!({
            "type": "number",
            "minimum": 0,
            "exclusiveMinimum": true,
            "maximum": 10,
            "exclusiveMaximum": false
        }));
        assert!(!validator.is_valid(&json!(0)));
        assert!(validator.is_valid(&json!(0.5)));
        assert!(validator.is_valid(&json!(10)));
        assert!(!validator.is_valid(&json!(10.5)));
        let violations = validator.validate(&json!(0));
        assert_eq!(summary(&violations), vec![("", "exclusiveMinimum")]);
        assert!(validator.unsupported_keywords().is_empty());
    }

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("valid JSON")
    }

    #[test]
    fn big_integers_compare_exactly() {
        let validator = Validator::compile(&parse(
            r#"{"type": "integer", "minimum": 18446744073709551616, "maximum": 1e30, "multipleOf": 2}"#,
        ))
        .expect("compiles");
        assert!(validator.is_valid(&parse("18446744073709551616")));
        assert!(validator.is_valid(&parse("123456789012345678901234567890")));
        assert!(!validator.is_valid(&parse("18446744073709551615")));
        assert!(!validator.is_valid(&parse("18446744073709551617")));
        assert!(!validator.is_valid(&parse("1000000000000000000000000000002")));
        assert!(validator.is_valid(&parse("1.8446744073709551616e19")));

        let exact = Validator::compile(&parse(r#"{"const": 123456789012345678901234567890}"#))
            .expect("compiles");
        assert!(exact.is_valid(&parse("123456789012345678901234567890.0")));
        assert!(exact.is_valid(&parse("1.2345678901234567890123456789e29")));
        assert!(!exact.is_valid(&parse("123456789012345678901234567891")));

        let integer = compile(json!({"type": "integer"}));
        assert!(integer.is_valid(&parse(
            "-98249283749234923498293171823948729348710298301928331"
        )));
        assert!(!integer.is_valid(&parse(
            "98249283749234923498293171823948729348710298301928331.5"
        )));
    }

    #[test]
    fn lists_unsupported_keywords() {
        let validator = compile(json!({
            "type": "object",
            "unevaluatedProperties": false,
            "properties": {
                "a": {"$dynamicRef": "#meta", "x-internal": true},
                "b": {"pattern": "^(?=a)"}
            },
            "$anchor": "top",
            "title": "ignored"
        }));
        assert_eq!(
            validator.unsupported_keywords(),
            ["$anchor", "$dynamicRef", "pattern", "unevaluatedProperties"]
        );
        assert!(validator.is_valid(&json!({"b": "zzz"})));
    }

    #[test]
    fn schema_errors() {
        for schema in [
            json!({"$ref": "#/$defs/missing"}),
            json!({"$ref": "https://example.com/other.json"}),
            json!({"pattern": "("}),
            json!({"type": "text"}),
            json!({"minLength": -1}),
            json!({"multipleOf": 0}),
            json!({"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "$ref": "#/$defs/loop"}),
            json!({"anyOf": [{"type": "string"}, {"$ref": "#"}]}),
            json!({"patternProperties": {"^(?!x)": {}}}),
            json!(3),
        ] {
            let error = Validator::compile(&schema).expect_err("schema is rejected");
            assert!(!error.message.is_empty());
            assert!(error.to_string().starts_with("invalid schema: "));
        }
    }

    #[test]
    fn recursive_schemas_follow_the_instance() {
        let validator = compile(json!({
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                    },
                    "required": ["value"]
                }
            },
            "$ref": "#/$defs/node"
        }));
        let mut tree = json!({"value": 0});
        for depth in 1..100 {
            tree = json!({"value": depth, "children": [tree]});
        }
        assert!(validator.is_valid(&tree));
        let mut broken = json!({"value": "leaf"});
        for depth in 1..5 {
            broken = json!({"value": depth, "children": [broken]});
        }
        let violations = validator.validate(&broken);
        assert_eq!(
            summary(&violations),
            vec![("/children/0/children/0/children/0/children/0/value", "type")]
        );
    }

    #[test]
    fn depth_limit_is_a_violation_not_a_crash() {
        let validator =
            compile(json!({"$defs": {"a": {"items": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"}));
        let mut deep = json!([]);
        for _ in 0..validate::MAX_DEPTH {
            deep = Value::Array(vec![deep]);
        }
        assert!(!validator.is_valid(&deep));
        let violations = validator.validate(&deep);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].keyword, "depth");
    }

    #[test]
    fn deeply_nested_schema_is_an_error_not_a_crash() {
        let mut schema = json!({"type": "integer"});
        for _ in 0..1000 {
            schema = Value::Object(std::iter::once(("not".to_string(), schema)).collect());
        }
        let error = Validator::compile(&schema).expect_err("too deep");
        assert!(
            error.message.contains("nested too deeply"),
            "{}",
            error.message
        );
    }

    #[test]
    fn validator_is_shareable() {
        fn assert_traits<T: Send + Sync + Clone + fmt::Debug>() {}
        assert_traits::<Validator>();
        assert_traits::<Violation>();
        assert_traits::<SchemaError>();
    }
}
