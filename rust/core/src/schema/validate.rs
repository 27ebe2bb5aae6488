//! Evaluation of a compiled schema against an instance.
//!
//! One generic walk serves both entry points: with [`FirstFailure`] it stops at the first
//! failing keyword and builds nothing; with [`Collector`] it records every violation. Instance
//! locations are a chain of borrowed segments on the stack and become a JSON pointer only when a
//! violation is recorded.

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::Value;

use super::compile::escape_pointer_token;
use super::equality::{equals_schema_value, find_duplicate};
use super::instance::{write_json_string, Doc, Member, Val};
use super::node::{CompiledSchema, ItemRules, Keyword, Node, NodeId, PropertyRules, TypeSet};
use super::number::{self, OwnedDecimal};
use super::{Report, ReportEntry, Violation};

/// Deeper recursion is reported as a violation instead of risking the stack.
pub(crate) const MAX_DEPTH: u32 = 1024;

/// Where a failing keyword lives in the schema: `location` alone (a `false` schema) or
/// `location/keyword`.
#[derive(Clone, Copy)]
pub(crate) struct SchemaSpot<'a> {
    location: &'a str,
    keyword: Option<&'static str>,
}

impl SchemaSpot<'_> {
    fn path(self) -> String {
        match self.keyword {
            None => self.location.to_string(),
            Some(keyword) => {
                let mut path = String::with_capacity(self.location.len() + 1 + keyword.len());
                path.push_str(self.location);
                path.push('/');
                path.push_str(keyword);
                path
            }
        }
    }
}

pub(crate) trait Sink {
    const COLLECT: bool;
    fn push(&mut self, path: &Path, keyword: &'static str, spot: SchemaSpot, message: String);
}

pub(crate) struct FirstFailure;

impl Sink for FirstFailure {
    const COLLECT: bool = false;
    fn push(&mut self, _: &Path, _: &'static str, _: SchemaSpot, _: String) {}
}

pub(crate) struct Collector(pub(crate) Vec<Violation>);

impl Sink for Collector {
    const COLLECT: bool = true;
    fn push(&mut self, path: &Path, keyword: &'static str, spot: SchemaSpot, message: String) {
        self.0.push(Violation {
            pointer: path.pointer(),
            keyword: keyword.to_string(),
            schema_path: spot.path(),
            message,
        });
    }
}

impl Sink for Report {
    const COLLECT: bool = true;
    fn push(&mut self, path: &Path, keyword: &'static str, _: SchemaSpot, message: String) {
        let text = &mut self.text;
        let start = text.len();
        path.write_pointer(text);
        let pointer_end = text.len();
        if pointer_end == start {
            text.push('/');
        }
        text.push_str(": ");
        let message_start = text.len();
        text.push_str(&message);
        let offset = |at: usize| at as u32;
        self.entries.push(ReportEntry {
            keyword,
            pointer_end: offset(pointer_end),
            start: offset(start),
            message_start: offset(message_start),
            end: offset(text.len()),
        });
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
        let mut pointer = String::new();
        self.write_pointer(&mut pointer);
        pointer
    }

    pub(crate) fn write_pointer(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Key(parent, key) => {
                parent.write_pointer(out);
                out.push('/');
                escape_pointer_token(key, out);
            }
            Path::Index(parent, index) => {
                parent.write_pointer(out);
                out.push('/');
                let _ = write!(out, "{index}");
            }
        }
    }
}

pub(crate) fn is_valid(schema: &CompiledSchema, doc: &Doc<'_>) -> bool {
    let evaluator = Evaluator {
        nodes: &schema.nodes,
        doc,
    };
    evaluator.node(
        schema.root,
        doc.root,
        &Path::Root,
        "false",
        &mut FirstFailure,
        0,
    )
}

pub(crate) fn violations(schema: &CompiledSchema, doc: &Doc<'_>) -> Vec<Violation> {
    let evaluator = Evaluator {
        nodes: &schema.nodes,
        doc,
    };
    let mut collector = Collector(Vec::new());
    evaluator.node(
        schema.root,
        doc.root,
        &Path::Root,
        "false",
        &mut collector,
        0,
    );
    collector.0
}

pub(crate) fn compact_report(schema: &CompiledSchema, doc: &Doc<'_>) -> Report {
    let evaluator = Evaluator {
        nodes: &schema.nodes,
        doc,
    };
    let mut report = Report::default();
    evaluator.node(schema.root, doc.root, &Path::Root, "false", &mut report, 0);
    report
}

const PREVIEW_LIMIT: usize = 60;

fn shorten(text: String) -> String {
    if text.len() <= PREVIEW_LIMIT || text.chars().count() <= PREVIEW_LIMIT {
        return text;
    }
    let mut shortened: String = text.chars().take(PREVIEW_LIMIT).collect();
    shortened.push('…');
    shortened
}

/// A short JSON rendering of a schema value for messages.
fn preview(value: &Value) -> String {
    shorten(value.to_string())
}

/// A short JSON rendering of an instance value for messages.
fn preview_instance(doc: &Doc<'_>, value: Val) -> String {
    let mut text = String::new();
    doc.write_json(value, &mut text);
    shorten(text)
}

fn preview_str(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    write_json_string(text, &mut quoted);
    shorten(quoted)
}

fn kind_of(doc: &Doc<'_>, instance: Val) -> &'static str {
    match instance {
        Val::Null => "null",
        Val::Bool(_) => "boolean",
        Val::Object(_) => "object",
        Val::Array(_) => "array",
        Val::String(_) => "string",
        Val::Number(literal) if number::is_integer(doc.number(literal)) => "integer",
        Val::Number(_) => "number",
    }
}

fn type_matches(allowed: TypeSet, doc: &Doc<'_>, instance: Val) -> bool {
    let bit = match instance {
        Val::Null => TypeSet::NULL,
        Val::Bool(_) => TypeSet::BOOLEAN,
        Val::Object(_) => TypeSet::OBJECT,
        Val::Array(_) => TypeSet::ARRAY,
        Val::String(_) => TypeSet::STRING,
        Val::Number(literal) => {
            return allowed.contains(TypeSet::NUMBER)
                || (allowed.contains(TypeSet::INTEGER) && number::is_integer(doc.number(literal)))
        }
    };
    allowed.contains(bit)
}

fn compare(instance: &str, bound: &OwnedDecimal) -> Option<Ordering> {
    number::compare_to(instance, bound)
}

struct Evaluator<'s, 'd, 't> {
    nodes: &'s [Node],
    doc: &'d Doc<'t>,
}

fn report<S: Sink>(
    sink: &mut S,
    path: &Path,
    location: &str,
    keyword: &'static str,
    message: impl FnOnce() -> String,
) -> bool {
    if S::COLLECT {
        let spot = SchemaSpot {
            location,
            keyword: Some(keyword),
        };
        sink.push(path, keyword, spot, message());
    }
    false
}

/// The recursive path (`node` → `applicator` → `node`) keeps small stack frames; everything that
/// does not recurse lives in [`assertion`], which is never inlined into it.
impl Evaluator<'_, '_, '_> {
    /// `via` names the keyword that applied this node; it labels a violation of a `false` schema.
    fn node<S: Sink>(
        &self,
        id: NodeId,
        instance: Val,
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
                        assertion(self.doc, keyword, location, instance, path, sink)
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

    fn quietly(&self, id: NodeId, instance: Val, path: &Path, depth: u32) -> bool {
        self.node(id, instance, path, "false", &mut FirstFailure, depth + 1)
    }

    fn applicator<S: Sink>(
        &self,
        keyword: &Keyword,
        location: &str,
        instance: Val,
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
            (Keyword::Items(rules), Val::Array(items)) => {
                self.items(rules, self.doc.items(items), path, sink, depth)
            }
            (Keyword::Contains { schema, min, max }, Val::Array(items)) => {
                let items = self.doc.items(items);
                self.contains(*schema, *min, *max, location, items, path, sink, depth)
            }
            (Keyword::Properties(rules), Val::Object(entries)) => {
                self.properties(rules, self.doc.members(entries), path, sink, depth)
            }
            (Keyword::PropertyNames(schema), Val::Object(entries)) => {
                let entries = self.doc.members(entries);
                self.property_names(*schema, location, entries, path, sink, depth)
            }
            (Keyword::DependentSchemas(rules), Val::Object(entries)) => {
                let mut valid = true;
                for (trigger, schema) in rules.iter() {
                    if self.doc.contains_key(entries, trigger)
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
        instance: Val,
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
        instance: Val,
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
        items: &[Val],
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut count: u64 = 0;
        for (index, item) in items.iter().enumerate() {
            if self.quietly(schema, *item, &Path::Index(path, index), depth) {
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
        entries: &[Member],
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut valid = true;
        for member in entries {
            let name = Val::String(member.key);
            if !self.quietly(schema, name, path, depth) {
                valid = report(sink, path, location, "propertyNames", || {
                    format!(
                        "property name {} is not allowed",
                        preview_instance(self.doc, name)
                    )
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
        items: &[Val],
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
                *item,
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
        entries: &[Member],
        path: &Path,
        sink: &mut S,
        depth: u32,
    ) -> bool {
        let mut valid = true;
        for member in entries {
            let (key, value) = (self.doc.text(member.key), member.value);
            let here = Path::Key(path, key);
            let mut matched = false;
            if let Some(schema) = rules.lookup(key) {
                matched = true;
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
    let spot = SchemaSpot {
        location,
        keyword: None,
    };
    sink.push(path, via, spot, never_message(path, via));
}

/// Keywords that look only at the instance itself.
#[inline(never)]
fn assertion<S: Sink>(
    doc: &Doc<'_>,
    keyword: &Keyword,
    location: &str,
    instance: Val,
    path: &Path,
    sink: &mut S,
) -> bool {
    let fail = |sink: &mut S, name: &'static str, message: &dyn Fn() -> String| {
        report(sink, path, location, name, message)
    };
    match (keyword, instance) {
        (Keyword::Type(allowed), _) => {
            type_matches(*allowed, doc, instance)
                || fail(sink, "type", &|| {
                    let names: Vec<&str> = allowed.names().collect();
                    let expected = match names.as_slice() {
                        [single] => (*single).to_string(),
                        _ => format!("one of {}", names.join(", ")),
                    };
                    format!("expected {expected}, got {}", kind_of(doc, instance))
                })
        }
        (Keyword::Const(expected), _) => {
            equals_schema_value(doc, instance, expected)
                || fail(sink, "const", &|| {
                    format!("value must be {}", preview(expected))
                })
        }
        (Keyword::Enum(options), _) => {
            options
                .iter()
                .any(|option| equals_schema_value(doc, instance, option))
                || fail(sink, "enum", &|| {
                    let listed: Vec<String> = options.iter().take(10).map(preview).collect();
                    let more = if options.len() > 10 { ", …" } else { "" };
                    format!(
                        "{} is not one of {}{more}",
                        preview_instance(doc, instance),
                        listed.join(", ")
                    )
                })
        }
        (Keyword::Minimum(bound), Val::Number(value)) => {
            compare(doc.number(value), bound) != Some(Ordering::Less)
                || fail(sink, "minimum", &|| {
                    format!(
                        "{} is less than the minimum of {}",
                        preview_instance(doc, instance),
                        bound.literal()
                    )
                })
        }
        (Keyword::Maximum(bound), Val::Number(value)) => {
            compare(doc.number(value), bound) != Some(Ordering::Greater)
                || fail(sink, "maximum", &|| {
                    format!(
                        "{} is greater than the maximum of {}",
                        preview_instance(doc, instance),
                        bound.literal()
                    )
                })
        }
        (Keyword::ExclusiveMinimum(bound), Val::Number(value)) => {
            compare(doc.number(value), bound).is_none_or(|order| order == Ordering::Greater)
                || fail(sink, "exclusiveMinimum", &|| {
                    format!(
                        "{} must be greater than {}",
                        preview_instance(doc, instance),
                        bound.literal()
                    )
                })
        }
        (Keyword::ExclusiveMaximum(bound), Val::Number(value)) => {
            compare(doc.number(value), bound).is_none_or(|order| order == Ordering::Less)
                || fail(sink, "exclusiveMaximum", &|| {
                    format!(
                        "{} must be less than {}",
                        preview_instance(doc, instance),
                        bound.literal()
                    )
                })
        }
        (Keyword::MultipleOf(divisor), Val::Number(value)) => {
            number::is_multiple_of(doc.number(value), divisor)
                || fail(sink, "multipleOf", &|| {
                    format!(
                        "{} is not a multiple of {}",
                        preview_instance(doc, instance),
                        divisor.literal()
                    )
                })
        }
        (Keyword::MinLength(minimum), Val::String(text)) => {
            let text = doc.text(text);
            let bytes = text.len() as u64;
            let long_enough = bytes >= minimum.saturating_mul(4)
                || (bytes >= *minimum && text.chars().count() as u64 >= *minimum);
            long_enough
                || fail(sink, "minLength", &|| {
                    format!(
                        "{} is shorter than {minimum} characters",
                        preview_instance(doc, instance)
                    )
                })
        }
        (Keyword::MaxLength(maximum), Val::String(text)) => {
            let text = doc.text(text);
            let short_enough =
                text.len() as u64 <= *maximum || text.chars().count() as u64 <= *maximum;
            short_enough
                || fail(sink, "maxLength", &|| {
                    format!(
                        "{} is longer than {maximum} characters",
                        preview_instance(doc, instance)
                    )
                })
        }
        (Keyword::Pattern(pattern), Val::String(text)) => {
            pattern.regex.is_match(doc.text(text))
                || fail(sink, "pattern", &|| {
                    format!(
                        "{} does not match the pattern {}",
                        preview_instance(doc, instance),
                        preview_str(&pattern.source)
                    )
                })
        }
        (Keyword::Format(format), Val::String(text)) => {
            format.is_valid(doc.text(text))
                || fail(sink, "format", &|| {
                    format!(
                        "{} is not a valid {}",
                        preview_instance(doc, instance),
                        format.name()
                    )
                })
        }
        (Keyword::MinItems(minimum), Val::Array(items)) => {
            items.len() as u64 >= *minimum
                || fail(sink, "minItems", &|| {
                    format!(
                        "array has {} items, at least {minimum} required",
                        items.len()
                    )
                })
        }
        (Keyword::MaxItems(maximum), Val::Array(items)) => {
            items.len() as u64 <= *maximum
                || fail(sink, "maxItems", &|| {
                    format!("array has {} items, at most {maximum} allowed", items.len())
                })
        }
        (Keyword::UniqueItems, Val::Array(items)) => match find_duplicate(doc, doc.items(items)) {
            None => true,
            Some((first, second)) => fail(sink, "uniqueItems", &|| {
                format!("items at indexes {first} and {second} are equal")
            }),
        },
        (Keyword::Required(names), Val::Object(entries)) => {
            let mut valid = true;
            for name in names.iter() {
                if !doc.contains_key(entries, name) {
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
        (Keyword::MinProperties(minimum), Val::Object(entries)) => {
            entries.len() as u64 >= *minimum
                || fail(sink, "minProperties", &|| {
                    format!(
                        "object has {} properties, at least {minimum} required",
                        entries.len()
                    )
                })
        }
        (Keyword::MaxProperties(maximum), Val::Object(entries)) => {
            entries.len() as u64 <= *maximum
                || fail(sink, "maxProperties", &|| {
                    format!(
                        "object has {} properties, at most {maximum} allowed",
                        entries.len()
                    )
                })
        }
        (Keyword::DependentRequired(rules), Val::Object(entries)) => {
            let mut valid = true;
            for (trigger, names) in rules.iter() {
                if !doc.contains_key(entries, trigger) {
                    continue;
                }
                for name in names.iter() {
                    if !doc.contains_key(entries, name) {
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
