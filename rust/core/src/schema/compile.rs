//! Turns a schema document into a flat tree of nodes, resolving `$ref` once, up front.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::ecma_regex::{self, RegexProblem, Strictness};
use super::flat::FlatObject;
use super::format::Format;
use super::node::{
    CompiledSchema, ItemRules, Keyword, NameList, Node, NodeId, Pattern, PropertyRules, TypeSet,
};
use super::number::{self, OwnedDecimal};
use super::SchemaError;

/// Schemas nested deeper than this are rejected rather than risking the stack.
const MAX_SCHEMA_DEPTH: usize = 128;

/// Regexes are compiled with this bound so a hostile pattern cannot take unbounded memory.
const REGEX_SIZE_LIMIT: usize = 4 << 20;

/// Keywords that carry no assertion; accepted silently.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "nullable",
    "additionalItems",
];

pub(crate) fn escape_pointer_token(token: &str, output: &mut String) {
    if !token.contains(['~', '/']) {
        output.push_str(token);
        return;
    }
    for character in token.chars() {
        match character {
            '~' => output.push_str("~0"),
            '/' => output.push_str("~1"),
            other => output.push(other),
        }
    }
}

fn child_location(parent: &str, token: &str) -> String {
    let mut location = String::with_capacity(parent.len() + token.len() + 1);
    location.push_str(parent);
    location.push('/');
    escape_pointer_token(token, &mut location);
    location
}

fn error(location: &str, message: impl std::fmt::Display) -> SchemaError {
    let location = if location.is_empty() { "/" } else { location };
    SchemaError {
        message: format!("{location}: {message}"),
    }
}

pub(crate) fn compile(document: &Value) -> Result<CompiledSchema, SchemaError> {
    let document_id = match document {
        Value::Object(map) => match map.get("$id") {
            Some(Value::String(id)) => Some(id.trim_end_matches('#')),
            Some(_) => return Err(error("/$id", "$id must be a string")),
            None => None,
        },
        _ => None,
    };
    let mut compiler = Compiler {
        document,
        document_id,
        nodes: Vec::new(),
        by_location: HashMap::new(),
        pending: Vec::new(),
        unsupported: BTreeSet::new(),
    };
    let root = compiler.subschema(String::new(), document, 0)?;
    while let Some((id, location, value)) = compiler.pending.pop() {
        let node = compiler.build(&location, value, 0)?;
        compiler.nodes[id] = node;
    }
    check_for_endless_loops(&compiler.nodes)?;
    let mut compiled = CompiledSchema {
        nodes: compiler.nodes,
        root,
        unsupported: compiler.unsupported.into_iter().collect(),
        flat: None,
    };
    compiled.flat = FlatObject::plan(&compiled);
    Ok(compiled)
}

struct Compiler<'a> {
    document: &'a Value,
    document_id: Option<&'a str>,
    nodes: Vec<Node>,
    by_location: HashMap<String, NodeId>,
    /// `$ref` targets reserved but not yet built.
    pending: Vec<(NodeId, String, &'a Value)>,
    unsupported: BTreeSet<String>,
}

impl<'a> Compiler<'a> {
    fn reserve(&mut self, location: String) -> (NodeId, bool) {
        if let Some(&id) = self.by_location.get(&location) {
            return (id, false);
        }
        let id = self.nodes.len();
        self.nodes.push(Node::Any);
        self.by_location.insert(location, id);
        (id, true)
    }

    fn subschema(
        &mut self,
        location: String,
        value: &'a Value,
        depth: usize,
    ) -> Result<NodeId, SchemaError> {
        let (id, fresh) = self.reserve(location.clone());
        if fresh {
            let node = self.build(&location, value, depth)?;
            self.nodes[id] = node;
        }
        Ok(id)
    }

    fn child(
        &mut self,
        parent: &str,
        token: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<NodeId, SchemaError> {
        self.subschema(child_location(parent, token), value, depth + 1)
    }

    fn schema_list(
        &mut self,
        parent: &str,
        keyword: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<Box<[NodeId]>, SchemaError> {
        let Value::Array(items) = value else {
            return Err(error(
                &child_location(parent, keyword),
                "must be an array of schemas",
            ));
        };
        let location = child_location(parent, keyword);
        items
            .iter()
            .enumerate()
            .map(|(index, item)| self.child(&location, &index.to_string(), item, depth + 1))
            .collect()
    }

    fn schema_map(
        &mut self,
        parent: &str,
        keyword: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<Vec<(Box<str>, NodeId)>, SchemaError> {
        let Value::Object(entries) = value else {
            return Err(error(
                &child_location(parent, keyword),
                "must be an object of schemas",
            ));
        };
        let location = child_location(parent, keyword);
        entries
            .iter()
            .map(|(name, schema)| {
                Ok((
                    name.as_str().into(),
                    self.child(&location, name, schema, depth + 1)?,
                ))
            })
            .collect()
    }

    fn build(
        &mut self,
        location: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<Node, SchemaError> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(error(location, "schema is nested too deeply"));
        }
        match value {
            Value::Bool(true) => Ok(Node::Any),
            Value::Bool(false) => Ok(Node::Never {
                location: location.into(),
            }),
            Value::Object(map) => {
                let keywords = self.keywords(location, map, depth)?;
                if keywords.is_empty() {
                    Ok(Node::Any)
                } else {
                    Ok(Node::Checks {
                        location: location.into(),
                        keywords,
                    })
                }
            }
            _ => Err(error(location, "a schema must be an object or a boolean")),
        }
    }

    fn keywords(
        &mut self,
        location: &str,
        map: &'a Map<String, Value>,
        depth: usize,
    ) -> Result<Box<[Keyword]>, SchemaError> {
        let mut keywords = Vec::new();
        let at = |keyword: &str| child_location(location, keyword);
        let nullable = match map.get("nullable") {
            None => false,
            Some(Value::Bool(flag)) => *flag,
            Some(_) => return Err(error(&at("nullable"), "must be a boolean")),
        };

        for (key, value) in map {
            let keyword = match key.as_str() {
                "type" => Keyword::Type(parse_type(&at("type"), value, nullable)?),
                "const" => Keyword::Const(value.clone()),
                "enum" => match value {
                    Value::Array(options) => Keyword::Enum(options.clone().into_boxed_slice()),
                    _ => return Err(error(&at("enum"), "must be an array")),
                },
                "$ref" => match value {
                    Value::String(reference) => {
                        Keyword::Ref(self.reference(&at("$ref"), reference)?)
                    }
                    _ => return Err(error(&at("$ref"), "must be a string")),
                },
                "allOf" => Keyword::AllOf(self.non_empty_list(location, "allOf", value, depth)?),
                "anyOf" => Keyword::AnyOf(self.non_empty_list(location, "anyOf", value, depth)?),
                "oneOf" => Keyword::OneOf(self.non_empty_list(location, "oneOf", value, depth)?),
                "not" => Keyword::Not(self.child(location, "not", value, depth)?),
                "if" => Keyword::Conditional {
                    condition: self.child(location, "if", value, depth)?,
                    then_branch: match map.get("then") {
                        Some(branch) => Some(self.child(location, "then", branch, depth)?),
                        None => None,
                    },
                    else_branch: match map.get("else") {
                        Some(branch) => Some(self.child(location, "else", branch, depth)?),
                        None => None,
                    },
                },
                "minimum" if map.get("exclusiveMinimum") == Some(&Value::Bool(true)) => {
                    Keyword::ExclusiveMinimum(parse_number(&at(key), value)?)
                }
                "maximum" if map.get("exclusiveMaximum") == Some(&Value::Bool(true)) => {
                    Keyword::ExclusiveMaximum(parse_number(&at(key), value)?)
                }
                "minimum" => Keyword::Minimum(parse_number(&at(key), value)?),
                "maximum" => Keyword::Maximum(parse_number(&at(key), value)?),
                "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => continue,
                "exclusiveMinimum" => Keyword::ExclusiveMinimum(parse_number(&at(key), value)?),
                "exclusiveMaximum" => Keyword::ExclusiveMaximum(parse_number(&at(key), value)?),
                "multipleOf" => {
                    let divisor = parse_number(&at(key), value)?;
                    if !divisor.is_positive() {
                        return Err(error(&at(key), "must be greater than 0"));
                    }
                    Keyword::MultipleOf(divisor)
                }
                "minLength" => Keyword::MinLength(parse_count(&at(key), value)?),
                "maxLength" => Keyword::MaxLength(parse_count(&at(key), value)?),
                "minItems" => Keyword::MinItems(parse_count(&at(key), value)?),
                "maxItems" => Keyword::MaxItems(parse_count(&at(key), value)?),
                "minProperties" => Keyword::MinProperties(parse_count(&at(key), value)?),
                "maxProperties" => Keyword::MaxProperties(parse_count(&at(key), value)?),
                "pattern" => match value {
                    Value::String(source) => match compile_pattern(&at("pattern"), source)? {
                        Some(pattern) => Keyword::Pattern(Box::new(pattern)),
                        None => {
                            self.unsupported.insert("pattern".to_string());
                            continue;
                        }
                    },
                    _ => return Err(error(&at("pattern"), "must be a string")),
                },
                "format" => match value {
                    Value::String(name) => match Format::from_name(name) {
                        Some(format) => Keyword::Format(format),
                        None => continue,
                    },
                    _ => return Err(error(&at("format"), "must be a string")),
                },
                "uniqueItems" => match value {
                    Value::Bool(true) => Keyword::UniqueItems,
                    Value::Bool(false) => continue,
                    _ => return Err(error(&at(key), "must be a boolean")),
                },
                "required" => Keyword::Required(parse_names(&at(key), value)?),
                "propertyNames" => Keyword::PropertyNames(self.child(location, key, value, depth)?),
                "dependentRequired" => {
                    let Value::Object(entries) = value else {
                        return Err(error(&at(key), "must be an object"));
                    };
                    let mut rules = Vec::with_capacity(entries.len());
                    for (trigger, names) in entries {
                        rules.push((
                            trigger.as_str().into(),
                            parse_names(&child_location(&at(key), trigger), names)?,
                        ));
                    }
                    Keyword::DependentRequired(rules.into_boxed_slice())
                }
                "dependentSchemas" => Keyword::DependentSchemas(
                    self.schema_map(location, key, value, depth)?
                        .into_boxed_slice(),
                ),
                "dependencies" => {
                    self.legacy_dependencies(location, value, depth, &mut keywords)?;
                    continue;
                }
                "properties" | "patternProperties" | "additionalProperties" => {
                    if let Some(rules) = self.property_rules(location, map, key, depth)? {
                        keywords.push(rules);
                    }
                    continue;
                }
                "prefixItems" | "items" => {
                    if let Some(rules) = self.item_rules(location, map, key, depth)? {
                        keywords.push(rules);
                    }
                    continue;
                }
                "contains" => {
                    let min = match map.get("minContains") {
                        Some(value) => parse_count(&at("minContains"), value)?,
                        None => 1,
                    };
                    let max = match map.get("maxContains") {
                        Some(value) => Some(parse_count(&at("maxContains"), value)?),
                        None => None,
                    };
                    Keyword::Contains {
                        schema: self.child(location, key, value, depth)?,
                        min,
                        max,
                    }
                }
                "then" | "else" | "minContains" | "maxContains" => continue,
                "$id" if location.is_empty() => continue,
                name if name.starts_with("x-") || ANNOTATIONS.contains(&name) => continue,
                unknown => {
                    self.unsupported.insert(unknown.to_string());
                    continue;
                }
            };
            keywords.push(keyword);
        }
        keywords.sort_by_key(Keyword::cost);
        Ok(keywords.into_boxed_slice())
    }

    fn non_empty_list(
        &mut self,
        location: &str,
        keyword: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<Box<[NodeId]>, SchemaError> {
        let list = self.schema_list(location, keyword, value, depth)?;
        if list.is_empty() {
            return Err(error(
                &child_location(location, keyword),
                "must be a non-empty array",
            ));
        }
        Ok(list)
    }

    /// Builds the combined properties rule once, when the first of its three keywords is seen.
    fn property_rules(
        &mut self,
        location: &str,
        map: &'a Map<String, Value>,
        key: &str,
        depth: usize,
    ) -> Result<Option<Keyword>, SchemaError> {
        let first = ["properties", "patternProperties", "additionalProperties"]
            .into_iter()
            .find(|candidate| map.contains_key(*candidate));
        if first != Some(key) {
            return Ok(None);
        }
        let mut named = match map.get("properties") {
            Some(value) => self.schema_map(location, "properties", value, depth)?,
            None => Vec::new(),
        };
        named.sort_by(|left, right| left.0.cmp(&right.0));
        let mut patterns = Vec::new();
        if let Some(value) = map.get("patternProperties") {
            let Value::Object(entries) = value else {
                return Err(error(
                    &child_location(location, "patternProperties"),
                    "must be an object of schemas",
                ));
            };
            let base = child_location(location, "patternProperties");
            for (source, schema) in entries {
                let pattern_location = child_location(&base, source);
                let Some(pattern) = compile_pattern(&pattern_location, source)? else {
                    return Err(error(
                        &pattern_location,
                        "this regular expression needs lookaround or backreferences, which are not supported in patternProperties",
                    ));
                };
                patterns.push((pattern, self.child(&base, source, schema, depth + 1)?));
            }
        }
        let additional = match map.get("additionalProperties") {
            Some(value) => Some(self.child(location, "additionalProperties", value, depth)?),
            None => None,
        };
        if named.is_empty() && patterns.is_empty() && additional.is_none() {
            return Ok(None);
        }
        Ok(Some(Keyword::Properties(Box::new(PropertyRules {
            named: named.into_boxed_slice(),
            patterns: patterns.into_boxed_slice(),
            additional,
        }))))
    }

    fn item_rules(
        &mut self,
        location: &str,
        map: &'a Map<String, Value>,
        key: &str,
        depth: usize,
    ) -> Result<Option<Keyword>, SchemaError> {
        let first = ["prefixItems", "items"]
            .into_iter()
            .find(|candidate| map.contains_key(*candidate));
        if first != Some(key) {
            return Ok(None);
        }
        let items = map.get("items");
        let rules = if let Some(legacy @ Value::Array(_)) = items {
            if map.contains_key("prefixItems") {
                return Err(error(
                    &child_location(location, "items"),
                    "must be a schema when prefixItems is present",
                ));
            }
            ItemRules {
                prefix: self.schema_list(location, "items", legacy, depth)?,
                rest: match map.get("additionalItems") {
                    Some(value) => Some(self.child(location, "additionalItems", value, depth)?),
                    None => None,
                },
                prefix_keyword: "items",
                rest_keyword: "additionalItems",
            }
        } else {
            ItemRules {
                prefix: match map.get("prefixItems") {
                    Some(value) => self.schema_list(location, "prefixItems", value, depth)?,
                    None => Box::new([]),
                },
                rest: match items {
                    Some(value) => Some(self.child(location, "items", value, depth)?),
                    None => None,
                },
                prefix_keyword: "prefixItems",
                rest_keyword: "items",
            }
        };
        if rules.prefix.is_empty() && rules.rest.is_none() {
            return Ok(None);
        }
        Ok(Some(Keyword::Items(Box::new(rules))))
    }

    /// Draft 4-7 `dependencies`: arrays mean `dependentRequired`, schemas `dependentSchemas`.
    fn legacy_dependencies(
        &mut self,
        location: &str,
        value: &'a Value,
        depth: usize,
        keywords: &mut Vec<Keyword>,
    ) -> Result<(), SchemaError> {
        let base = child_location(location, "dependencies");
        let Value::Object(entries) = value else {
            return Err(error(&base, "must be an object"));
        };
        let mut required = Vec::new();
        let mut schemas = Vec::new();
        for (trigger, dependency) in entries {
            match dependency {
                Value::Array(_) => required.push((
                    trigger.as_str().into(),
                    parse_names(&child_location(&base, trigger), dependency)?,
                )),
                _ => schemas.push((
                    trigger.as_str().into(),
                    self.child(&base, trigger, dependency, depth + 1)?,
                )),
            }
        }
        if !required.is_empty() {
            keywords.push(Keyword::DependentRequired(required.into_boxed_slice()));
        }
        if !schemas.is_empty() {
            keywords.push(Keyword::DependentSchemas(schemas.into_boxed_slice()));
        }
        Ok(())
    }

    fn reference(&mut self, location: &str, reference: &str) -> Result<NodeId, SchemaError> {
        let (base, fragment) = match reference.find('#') {
            Some(hash) => (&reference[..hash], &reference[hash + 1..]),
            None => (reference, ""),
        };
        if !base.is_empty() && Some(base) != self.document_id {
            return Err(error(
                location,
                format!("cannot resolve \"{reference}\": only references within this schema (\"#...\") are supported"),
            ));
        }
        let fragment = percent_decode(fragment).ok_or_else(|| {
            error(
                location,
                format!("\"{reference}\" has a malformed percent-encoding"),
            )
        })?;
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(error(
                location,
                format!("cannot resolve \"{reference}\": $anchor references are not supported"),
            ));
        }
        let mut target = self.document;
        let mut target_location = String::new();
        for raw_token in fragment.split('/').skip(1) {
            let token = unescape_pointer_token(raw_token).ok_or_else(|| {
                error(
                    location,
                    format!("\"{reference}\" is not a valid JSON pointer"),
                )
            })?;
            let next = match target {
                Value::Object(entries) => entries.get(&token),
                Value::Array(items) => array_index(&token).and_then(|index| items.get(index)),
                _ => None,
            };
            target = next.ok_or_else(|| {
                error(
                    location,
                    format!("cannot resolve \"{reference}\": no such location"),
                )
            })?;
            target_location.push('/');
            escape_pointer_token(&token, &mut target_location);
        }
        if !matches!(target, Value::Object(_) | Value::Bool(_)) {
            return Err(error(
                location,
                format!("\"{reference}\" does not point to a schema"),
            ));
        }
        let (id, fresh) = self.reserve(target_location.clone());
        if fresh {
            self.pending.push((id, target_location, target));
        }
        Ok(id)
    }
}

fn parse_type(location: &str, value: &Value, nullable: bool) -> Result<TypeSet, SchemaError> {
    let unknown = |name: &str| error(location, format!("unknown type \"{name}\""));
    let mut bits = match value {
        Value::String(name) => TypeSet::from_name(name).ok_or_else(|| unknown(name))?,
        Value::Array(names) => {
            let mut bits = 0;
            for name in names {
                let Value::String(name) = name else {
                    return Err(error(location, "type names must be strings"));
                };
                bits |= TypeSet::from_name(name).ok_or_else(|| unknown(name))?;
            }
            bits
        }
        _ => {
            return Err(error(
                location,
                "must be a type name or an array of type names",
            ))
        }
    };
    if nullable {
        bits |= TypeSet::NULL;
    }
    Ok(TypeSet(bits))
}

fn parse_number(location: &str, value: &Value) -> Result<OwnedDecimal, SchemaError> {
    match value {
        Value::Number(number) => OwnedDecimal::from_number(number)
            .ok_or_else(|| error(location, "is not a valid number")),
        _ => Err(error(location, "must be a number")),
    }
}

fn parse_count(location: &str, value: &Value) -> Result<u64, SchemaError> {
    match value {
        Value::Number(count) => number::Decimal::from_number(count)
            .and_then(|decimal| decimal.to_u64())
            .ok_or_else(|| error(location, "must be a non-negative integer")),
        _ => Err(error(location, "must be a non-negative integer")),
    }
}

fn parse_names(location: &str, value: &Value) -> Result<NameList, SchemaError> {
    let Value::Array(names) = value else {
        return Err(error(location, "must be an array of strings"));
    };
    names
        .iter()
        .map(|name| match name {
            Value::String(name) => Ok(name.as_str().into()),
            _ => Err(error(location, "must be an array of strings")),
        })
        .collect()
}

/// `Ok(None)` when the pattern is valid ECMA-262 but needs features the engine lacks.
fn compile_pattern(location: &str, source: &str) -> Result<Option<Pattern>, SchemaError> {
    let translated = match ecma_regex::translate(source, Strictness::AnnexB) {
        Ok(translated) => translated,
        Err(RegexProblem::Unsupported(_)) => return Ok(None),
        Err(RegexProblem::Invalid(message)) => {
            return Err(error(
                location,
                format!("invalid regular expression \"{source}\": {message}"),
            ))
        }
    };
    let regex = regex::RegexBuilder::new(&translated)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|problem| {
            error(
                location,
                format!("cannot compile regular expression \"{source}\": {problem}"),
            )
        })?;
    Ok(Some(Pattern {
        regex,
        source: source.into(),
    }))
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        if byte == b'%' {
            let high = char::from(*bytes.get(index + 1)?).to_digit(16)?;
            let low = char::from(*bytes.get(index + 2)?).to_digit(16)?;
            decoded.push((high * 16 + low) as u8);
            index += 3;
        } else {
            decoded.push(byte);
            index += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

fn unescape_pointer_token(token: &str) -> Option<String> {
    let mut output = String::with_capacity(token.len());
    let mut characters = token.chars();
    while let Some(character) = characters.next() {
        if character == '~' {
            match characters.next() {
                Some('0') => output.push('~'),
                Some('1') => output.push('/'),
                _ => return None,
            }
        } else {
            output.push(character);
        }
    }
    Some(output)
}

fn array_index(token: &str) -> Option<usize> {
    if token.is_empty()
        || (token.len() > 1 && token.starts_with('0'))
        || !token.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    token.parse().ok()
}

/// Rejects schemas where a node reaches itself through in-place applicators (`$ref`, `allOf`,
/// ...) without descending into the instance: validation would never terminate.
fn check_for_endless_loops(nodes: &[Node]) -> Result<(), SchemaError> {
    let children: Vec<Vec<NodeId>> = nodes
        .iter()
        .map(|node| match node {
            Node::Checks { keywords, .. } => keywords
                .iter()
                .flat_map(Keyword::same_instance_children)
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    const UNSEEN: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![UNSEEN; nodes.len()];
    for start in 0..nodes.len() {
        if state[start] != UNSEEN {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = ON_PATH;
        while let Some((node, next_child)) = stack.pop() {
            let Some(&child) = children[node].get(next_child) else {
                state[node] = DONE;
                continue;
            };
            stack.push((node, next_child + 1));
            match state.get(child).copied() {
                Some(UNSEEN) => {
                    state[child] = ON_PATH;
                    stack.push((child, 0));
                }
                Some(ON_PATH) => {
                    let location = match &nodes[child] {
                        Node::Checks { location, .. } | Node::Never { location } => {
                            location.as_ref()
                        }
                        Node::Any => "",
                    };
                    return Err(error(
                        location,
                        "this schema refers back to itself without descending into the instance, so validation would never end",
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(())
}
