//! Evaluation of a compiled schema against an instance.
//!
//! One generic walk serves both entry points: with [`FirstFailure`] it stops at the first
//! failing keyword and builds nothing; with [`Collector`] it records every violation. Instance
//! locations are a chain of borrowed segments on the stack and become a JSON pointer only when a
//! violation is recorded.

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::{Map, Value};

use super::compile::{
    escape_pointer_token, CompiledSchema, ItemRules, Keyword, Node, NodeId, PropertyRules,
};
use super::number::{self, OwnedDecimal};
use super::Violation;

/// Deeper recursion is reported as a violation instead of risking the stack.
pub(crate) const MAX_DEPTH: u32 = 1024;

/// Arrays up to this length are checked for duplicates pairwise, without allocating.
const PAIRWISE_UNIQUE_LIMIT: usize = 32;

pub(crate) trait Sink {
    const COLLECT: bool;
    fn push(&mut self, violation: Violation);
}

pub(crate) struct FirstFailure;

impl Sink for FirstFailure {
    const COLLECT: bool = false;
    fn push(&mut self, _violation: Violation) {}
}

pub(crate) struct Collector(pub(crate) Vec<Violation>);

impl Sink for Collector {
    const COLLECT: bool = true;
    fn push(&mut self, violation: Violation) {
        self.0.push(violation);
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    pub(crate) fn pointer(&self) -> String {
        let mut segments = Vec::new();
        let mut current = self;
        while let Path::Key(parent, _) | Path::Index(parent, _) = current {
            segments.push(current);
            current = parent;
        }
        let mut pointer = String::new();
        for segment in segments.iter().rev() {
            pointer.push('/');
            match segment {
                Path::Key(_, key) => escape_pointer_token(key, &mut pointer),
                Path::Index(_, index) => pointer.push_str(&index.to_string()),
                Path::Root => {}
            }
        }
        pointer
    }
}

pub(crate) fn is_valid(schema: &CompiledSchema, instance: &Value) -> bool {
    let evaluator = Evaluator {
        nodes: &schema.nodes,
    };
    evaluator.node(
        schema.root,
        instance,
        &Path::Root,
        "false",
        &mut FirstFailure,
        0,
    )
}

pub(crate) fn violations(schema: &CompiledSchema, instance: &Value) -> Vec<Violation> {
    let evaluator = Evaluator {
        nodes: &schema.nodes,
    };
    let mut collector = Collector(Vec::new());
    evaluator.node(
        schema.root,
        instance,
        &Path::Root,
        "false",
        &mut collector,
        0,
    );
    collector.0
}

fn violation(path: &Path, location: &str, keyword: &str, message: String) -> Violation {
    Violation {
        pointer: path.pointer(),
        keyword: keyword.to_string(),
        schema_path: format!("{location}/{keyword}"),
        message,
    }
}

const PREVIEW_LIMIT: usize = 60;

/// A short JSON rendering of a value for messages.
fn preview(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= PREVIEW_LIMIT {
        return text;
    }
    let mut shortened: String = text.chars().take(PREVIEW_LIMIT).collect();
    shortened.push('…');
    shortened
}

fn preview_str(text: &str) -> String {
    preview(&Value::String(text.to_string()))
}

fn kind_of(instance: &Value) -> &'static str {
    match instance {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(value) if number::is_integer(value) => "integer",
        Value::Number(_) => "number",
    }
}

pub(crate) fn json_equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(left), Value::Bool(right)) => left == right,
        (Value::Number(left), Value::Number(right)) => number::numbers_equal(left, right),
        (Value::String(left), Value::String(right)) => left == right,
        (Value::Array(left), Value::Array(right)) => {
            left.len() == right.len()
                && left
                    .iter()
                    .zip(right)
                    .all(|(left, right)| json_equal(left, right))
        }
        (Value::Object(left), Value::Object(right)) => {
            left.len() == right.len()
                && left.iter().all(|(key, value)| {
                    right.get(key).is_some_and(|other| json_equal(value, other))
                })
        }
        _ => false,
    }
}

/// Hashes consistently with [`json_equal`]: key order is ignored and `1` hashes like `1.0`.
fn hash_json<H: Hasher>(value: &Value, state: &mut H) {
    match value {
        Value::Null => state.write_u8(0),
        Value::Bool(flag) => {
            state.write_u8(1);
            flag.hash(state);
        }
        Value::Number(value) => {
            state.write_u8(2);
            number::hash_number(value, state);
        }
        Value::String(text) => {
            state.write_u8(3);
            text.hash(state);
        }
        Value::Array(items) => {
            state.write_u8(4);
            items.len().hash(state);
            for item in items {
                hash_json(item, state);
            }
        }
        Value::Object(entries) => {
            state.write_u8(5);
            entries.len().hash(state);
            let combined = entries.iter().fold(0u64, |combined, (key, value)| {
                let mut entry = DefaultHasher::new();
                key.hash(&mut entry);
                hash_json(value, &mut entry);
                combined.wrapping_add(entry.finish())
            });
            state.write_u64(combined);
        }
    }
}

/// Indexes of two equal items, if any.
fn find_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() <= PAIRWISE_UNIQUE_LIMIT {
        for (first, item) in items.iter().enumerate() {
            for (offset, other) in items[first + 1..].iter().enumerate() {
                if json_equal(item, other) {
                    return Some((first, first + 1 + offset));
                }
            }
        }
        return None;
    }
    let mut hashed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let mut state = DefaultHasher::new();
            hash_json(item, &mut state);
            (state.finish(), index)
        })
        .collect();
    hashed.sort_unstable();
    for (position, &(hash, index)) in hashed.iter().enumerate() {
        for &(other_hash, other_index) in &hashed[position + 1..] {
            if other_hash != hash {
                break;
            }
            if json_equal(&items[index], &items[other_index]) {
                return Some((index.min(other_index), index.max(other_index)));
            }
        }
    }
    None
}

fn compare(instance: &serde_json::Number, bound: &OwnedDecimal) -> Option<Ordering> {
    number::compare_to(instance, bound)
}

struct Evaluator<'s> {
    nodes: &'s [Node],
}

fn report<S: Sink>(
    sink: &mut S,
    path: &Path,
    location: &str,
    keyword: &'static str,
    message: impl FnOnce() -> String,
) -> bool {
    if S::COLLECT {
        sink.push(violation(path, location, keyword, message()));
    }
    false
}

/// The recursive path (`node` → `applicator` → `node`) keeps small stack frames; everything that
/// does not recurse lives in [`assertion`], which is never inlined into it.
impl Evaluator<'_> {
    /// `via` names the keyword that applied this node; it labels a violation of a `false` schema.
    fn node<S: Sink>(
        &self,
        id: NodeId,
        instance: &Value,
        path: &Path,
        via: &'static str,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let Some(node) = self.nodes.get(id) else {
            return true;
        };
        match node {
            Node::Any => true,
            Node::Never { location } => {
                if S::COLLECT {
                    report_never(sink, path, location, via);
                }
                false
            }
            Node::Checks { location, keywords } => {
                if depth > MAX_DEPTH {
                    return report(sink, path, location, "depth", || {
                        format!("validation nested deeper than {MAX_DEPTH} subschemas was stopped")
                    });
                }
                let mut valid = true;
                for keyword in keywords.iter() {
                    let passed = if keyword.applies_subschemas() {
                        self.applicator(keyword, location, instance, path, sink, depth)
                    } else {
                        assertion(keyword, location, instance, path, sink)
                    };
                    if !passed {
                        if !S::COLLECT {
                            return false;
                        }
                        valid = false;
                    }
                }
                valid
            }
        }
    }

    fn quietly(&self, id: NodeId, instance: &Value, path: &Path, depth: u32) -> bool {
        self.node(id, instance, path, "false", &mut FirstFailure, depth + 1)
    }

    fn applicator<S: Sink>(
        &self,
        keyword: &Keyword,
        location: &str,
        instance: &Value,
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        match (keyword, instance) {
            (Keyword::Ref(target), _) => {
                self.node(*target, instance, path, "$ref", sink, depth + 1)
            }
            (Keyword::AllOf(targets), _) => self.all_of(targets, instance, path, sink, depth),
            (Keyword::AnyOf(targets), _) => {
                targets
                    .iter()
                    .any(|target| self.quietly(*target, instance, path, depth))
                    || report(sink, path, location, "anyOf", || {
                        "value does not match any of the anyOf schemas".to_string()
                    })
            }
            (Keyword::OneOf(targets), _) => {
                self.one_of(targets, location, instance, path, sink, depth)
            }
            (Keyword::Not(target), _) => {
                !self.quietly(*target, instance, path, depth)
                    || report(sink, path, location, "not", || {
                        "value must not match the schema in \"not\"".to_string()
                    })
            }
            (
                Keyword::Conditional {
                    condition,
                    then_branch,
                    else_branch,
                },
                _,
            ) => {
                let (branch, via) = if self.quietly(*condition, instance, path, depth) {
                    (then_branch, "then")
                } else {
                    (else_branch, "else")
                };
                match branch {
                    Some(branch) => self.node(*branch, instance, path, via, sink, depth + 1),
                    None => true,
                }
            }
            (Keyword::Items(rules), Value::Array(items)) => {
                self.items(rules, items, path, sink, depth)
            }
            (Keyword::Contains { schema, min, max }, Value::Array(items)) => {
                self.contains(*schema, *min, *max, location, items, path, sink, depth)
            }
            (Keyword::Properties(rules), Value::Object(entries)) => {
                self.properties(rules, entries, path, sink, depth)
            }
            (Keyword::PropertyNames(schema), Value::Object(entries)) => {
                self.property_names(*schema, location, entries, path, sink, depth)
            }
            (Keyword::DependentSchemas(rules), Value::Object(entries)) => {
                let mut valid = true;
                for (trigger, schema) in rules.iter() {
                    if entries.contains_key(trigger.as_ref())
                        && !self.node(*schema, instance, path, "dependentSchemas", sink, depth + 1)
                    {
                        if !S::COLLECT {
                            return false;
                        }
                        valid = false;
                    }
                }
                valid
            }
            _ => true,
        }
    }

    fn all_of<S: Sink>(
        &self,
        targets: &[NodeId],
        instance: &Value,
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut valid = true;
        for target in targets {
            if !self.node(*target, instance, path, "allOf", sink, depth + 1) {
                if !S::COLLECT {
                    return false;
                }
                valid = false;
            }
        }
        valid
    }

    fn one_of<S: Sink>(
        &self,
        targets: &[NodeId],
        location: &str,
        instance: &Value,
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut matching = targets
            .iter()
            .enumerate()
            .filter(|(_, target)| self.quietly(**target, instance, path, depth))
            .map(|(index, _)| index);
        match (matching.next(), matching.next()) {
            (Some(_), None) => true,
            (None, _) => report(sink, path, location, "oneOf", || {
                "value does not match any of the oneOf schemas".to_string()
            }),
            (Some(first), Some(second)) => report(sink, path, location, "oneOf", || {
                format!("value matches more than one oneOf schema (indexes {first} and {second})")
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn contains<S: Sink>(
        &self,
        schema: NodeId,
        min: u64,
        max: Option<u64>,
        location: &str,
        items: &[Value],
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut count: u64 = 0;
        for (index, item) in items.iter().enumerate() {
            if self.quietly(schema, item, &Path::Index(path, index), depth) {
                count += 1;
                if !S::COLLECT && count >= min && max.is_none() {
                    return true;
                }
            }
        }
        let mut valid = true;
        if count < min {
            let keyword = if min == 1 { "contains" } else { "minContains" };
            valid = report(sink, path, location, keyword, || {
                format!("array has {count} items matching \"contains\", at least {min} required")
            });
        }
        if let Some(max) = max.filter(|max| count > *max) {
            valid = report(sink, path, location, "maxContains", || {
                format!("array has {count} items matching \"contains\", at most {max} allowed")
            });
        }
        valid
    }

    fn property_names<S: Sink>(
        &self,
        schema: NodeId,
        location: &str,
        entries: &Map<String, Value>,
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut valid = true;
        for key in entries.keys() {
            let name = Value::String(key.clone());
            if !self.quietly(schema, &name, path, depth) {
                valid = report(sink, path, location, "propertyNames", || {
                    format!("property name {} is not allowed", preview(&name))
                });
                if !S::COLLECT {
                    return false;
                }
            }
        }
        valid
    }

    fn items<S: Sink>(
        &self,
        rules: &ItemRules,
        items: &[Value],
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut valid = true;
        for (index, item) in items.iter().enumerate() {
            let (schema, via) = match rules.prefix.get(index) {
                Some(schema) => (*schema, rules.prefix_keyword),
                None => match rules.rest {
                    Some(schema) => (schema, rules.rest_keyword),
                    None => break,
                },
            };
            if !self.node(
                schema,
                item,
                &Path::Index(path, index),
                via,
                sink,
                depth + 1,
            ) {
                if !S::COLLECT {
                    return false;
                }
                valid = false;
            }
        }
        valid
    }

    fn properties<S: Sink>(
        &self,
        rules: &PropertyRules,
        entries: &Map<String, Value>,
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut valid = true;
        for (key, value) in entries {
            let here = Path::Key(path, key);
            let mut matched = false;
            if let Ok(position) = rules
                .named
                .binary_search_by(|(name, _)| name.as_ref().cmp(key.as_str()))
            {
                matched = true;
                let schema = rules.named[position].1;
                valid &= self.node(schema, value, &here, "properties", sink, depth + 1);
            }
            for (pattern, schema) in rules.patterns.iter() {
                if pattern.regex.is_match(key) {
                    matched = true;
                    valid &= self.node(*schema, value, &here, "patternProperties", sink, depth + 1);
                }
            }
            if !matched {
                if let Some(schema) = rules.additional {
                    valid &= self.node(
                        schema,
                        value,
                        &here,
                        "additionalProperties",
                        sink,
                        depth + 1,
                    );
                }
            }
            if !valid && !S::COLLECT {
                return false;
            }
        }
        valid
    }
}

#[cold]
#[inline(never)]
fn report_never<S: Sink>(sink: &mut S, path: &Path, location: &str, via: &'static str) {
    sink.push(Violation {
        pointer: path.pointer(),
        keyword: via.to_string(),
        schema_path: location.to_string(),
        message: never_message(path, via),
    });
}

/// Keywords that look only at the instance itself.
#[inline(never)]
fn assertion<S: Sink>(
    keyword: &Keyword,
    location: &str,
    instance: &Value,
    path: &Path,
    sink: &mut S,
) -> bool {
    let fail = |sink: &mut S, name: &'static str, message: &dyn Fn() -> String| {
        report(sink, path, location, name, message)
    };
    match (keyword, instance) {
        (Keyword::Type(allowed), _) => {
            allowed.matches(instance)
                || fail(sink, "type", &|| {
                    let names: Vec<&str> = allowed.names().collect();
                    let expected = match names.as_slice() {
                        [single] => (*single).to_string(),
                        _ => format!("one of {}", names.join(", ")),
                    };
                    format!("expected {expected}, got {}", kind_of(instance))
                })
        }
        (Keyword::Const(expected), _) => {
            json_equal(instance, expected)
                || fail(sink, "const", &|| {
                    format!("value must be {}", preview(expected))
                })
        }
        (Keyword::Enum(options), _) => {
            options.iter().any(|option| json_equal(instance, option))
                || fail(sink, "enum", &|| {
                    let listed: Vec<String> = options.iter().take(10).map(preview).collect();
                    let more = if options.len() > 10 { ", …" } else { "" };
                    format!(
                        "{} is not one of {}{more}",
                        preview(instance),
                        listed.join(", ")
                    )
                })
        }
        (Keyword::Minimum(bound), Value::Number(value)) => {
            compare(value, bound) != Some(Ordering::Less)
                || fail(sink, "minimum", &|| {
                    format!(
                        "{} is less than the minimum of {}",
                        preview(instance),
                        bound.literal()
                    )
                })
        }
        (Keyword::Maximum(bound), Value::Number(value)) => {
            compare(value, bound) != Some(Ordering::Greater)
                || fail(sink, "maximum", &|| {
                    format!(
                        "{} is greater than the maximum of {}",
                        preview(instance),
                        bound.literal()
                    )
                })
        }
        (Keyword::ExclusiveMinimum(bound), Value::Number(value)) => {
            compare(value, bound).is_none_or(|order| order == Ordering::Greater)
                || fail(sink, "exclusiveMinimum", &|| {
                    format!(
                        "{} must be greater than {}",
                        preview(instance),
                        bound.literal()
                    )
                })
        }
        (Keyword::ExclusiveMaximum(bound), Value::Number(value)) => {
            compare(value, bound).is_none_or(|order| order == Ordering::Less)
                || fail(sink, "exclusiveMaximum", &|| {
                    format!(
                        "{} must be less than {}",
                        preview(instance),
                        bound.literal()
                    )
                })
        }
        (Keyword::MultipleOf(divisor), Value::Number(value)) => {
            number::is_multiple_of(value, divisor)
                || fail(sink, "multipleOf", &|| {
                    format!(
                        "{} is not a multiple of {}",
                        preview(instance),
                        divisor.literal()
                    )
                })
        }
        (Keyword::MinLength(minimum), Value::String(text)) => {
            let bytes = text.len() as u64;
            let long_enough = bytes >= minimum.saturating_mul(4)
                || (bytes >= *minimum && text.chars().count() as u64 >= *minimum);
            long_enough
                || fail(sink, "minLength", &|| {
                    format!("{} is shorter than {minimum} characters", preview(instance))
                })
        }
        (Keyword::MaxLength(maximum), Value::String(text)) => {
            let short_enough =
                text.len() as u64 <= *maximum || text.chars().count() as u64 <= *maximum;
            short_enough
                || fail(sink, "maxLength", &|| {
                    format!("{} is longer than {maximum} characters", preview(instance))
                })
        }
        (Keyword::Pattern(pattern), Value::String(text)) => {
            pattern.regex.is_match(text)
                || fail(sink, "pattern", &|| {
                    format!(
                        "{} does not match the pattern {}",
                        preview(instance),
                        preview_str(&pattern.source)
                    )
                })
        }
        (Keyword::Format(format), Value::String(text)) => {
            format.is_valid(text)
                || fail(sink, "format", &|| {
                    format!("{} is not a valid {}", preview(instance), format.name())
                })
        }
        (Keyword::MinItems(minimum), Value::Array(items)) => {
            items.len() as u64 >= *minimum
                || fail(sink, "minItems", &|| {
                    format!(
                        "array has {} items, at least {minimum} required",
                        items.len()
                    )
                })
        }
        (Keyword::MaxItems(maximum), Value::Array(items)) => {
            items.len() as u64 <= *maximum
                || fail(sink, "maxItems", &|| {
                    format!("array has {} items, at most {maximum} allowed", items.len())
                })
        }
        (Keyword::UniqueItems, Value::Array(items)) => match find_duplicate(items) {
            None => true,
            Some((first, second)) => fail(sink, "uniqueItems", &|| {
                format!("items at indexes {first} and {second} are equal")
            }),
        },
        (Keyword::Required(names), Value::Object(entries)) => {
            let mut valid = true;
            for name in names.iter() {
                if !entries.contains_key(name.as_ref()) {
                    valid = fail(sink, "required", &|| {
                        format!("missing required property {}", preview_str(name))
                    });
                    if !S::COLLECT {
                        return false;
                    }
                }
            }
            valid
        }
        (Keyword::MinProperties(minimum), Value::Object(entries)) => {
            entries.len() as u64 >= *minimum
                || fail(sink, "minProperties", &|| {
                    format!(
                        "object has {} properties, at least {minimum} required",
                        entries.len()
                    )
                })
        }
        (Keyword::MaxProperties(maximum), Value::Object(entries)) => {
            entries.len() as u64 <= *maximum
                || fail(sink, "maxProperties", &|| {
                    format!(
                        "object has {} properties, at most {maximum} allowed",
                        entries.len()
                    )
                })
        }
        (Keyword::DependentRequired(rules), Value::Object(entries)) => {
            let mut valid = true;
            for (trigger, names) in rules.iter() {
                if !entries.contains_key(trigger.as_ref()) {
                    continue;
                }
                for name in names.iter() {
                    if !entries.contains_key(name.as_ref()) {
                        valid = fail(sink, "dependentRequired", &|| {
                            format!(
                                "property {} is required when {} is present",
                                preview_str(name),
                                preview_str(trigger)
                            )
                        });
                        if !S::COLLECT {
                            return false;
                        }
                    }
                }
            }
            valid
        }
        _ => true,
    }
}

fn never_message(path: &Path, via: &str) -> String {
    match (via, path) {
        ("additionalProperties" | "properties" | "patternProperties", Path::Key(_, key)) => {
            format!("property {} is not allowed", preview_str(key))
        }
        ("items" | "prefixItems" | "additionalItems", Path::Index(_, index)) => {
            format!("array item {index} is not allowed")
        }
        ("false", _) => "no value is valid against the schema `false`".to_string(),
        (keyword, _) => {
            format!("value is not allowed here (\"{keyword}\" applies the schema `false`)")
        }
    }
}
