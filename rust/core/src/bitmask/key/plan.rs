//! Reading a structural tag's JSON into the [`Plan`] the keyer follows.

use std::sync::Arc;

use serde_json::Value;

use super::is_ws;
use super::xml::{xml_call, xml_call_of, XmlCall};

const TOKEN_LEVEL: [&str; 5] = [
    "token",
    "exclude_token",
    "any_tokens",
    "token_triggered_tags",
    "token_dispatch",
];

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Content {
    /// JSON content, after `lead` when given: a call id of digits then a constant (Kimi K2's
    /// `functions.NAME:0<|tool_call_argument_begin|>`), read up to the constant's first
    /// occurrence, which the digits cannot hold.
    Json {
        schema: Arc<Value>,
        collapse: bool,
        lead: Option<Vec<u8>>,
    },
    AnyText,
    Const(Vec<u8>),
    Xml(Arc<XmlCall>),
    /// A `tags_with_separator` inside a tag: a section of calls (Kimi K2, DeepSeek, MiniMax M2).
    Section(Arc<Section>),
}

/// The calls of a section tag, each one of `tags`, with `separator` between them.
#[derive(Debug, Clone)]
pub(super) struct Section {
    pub(super) tags: Arc<Vec<TagSpec>>,
    pub(super) separator: Vec<u8>,
}

impl PartialEq for Section {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

#[derive(Debug, Clone)]
pub(super) struct TagSpec {
    pub(super) begin: Vec<u8>,
    pub(super) ends: Vec<Vec<u8>>,
    /// None: the keyer cannot find where this tag's content ends.
    pub(super) content: Option<Content>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Prefix {
    Const(Vec<u8>),
    TextTag { begin: Vec<u8>, end: Vec<u8> },
    Ws,
}

#[derive(Debug, Clone)]
pub(super) enum Dispatch {
    Triggered {
        triggers: Vec<Vec<u8>>,
        excludes: Vec<Vec<u8>>,
    },
    Separator {
        separator: Vec<u8>,
    },
}

/// How a structural tag is read for anchors; built once per grammar by [`KeyPlan::from_tag`].
#[derive(Debug, Clone)]
pub struct Plan {
    pub(super) prefix: Vec<Prefix>,
    pub(super) tags: Arc<Vec<TagSpec>>,
    pub(super) dispatch: Dispatch,
    /// A constant after a `tags_with_separator` (the end of a call section written as
    /// `sequence[begin, tags_with_separator, end]`), after which the output ends.
    pub(super) suffix: Option<Vec<u8>>,
    /// Patterns of the free text (triggers, then excludes) and their first bytes.
    pub(super) patterns: Vec<Vec<u8>>,
    pub(super) firsts: Vec<u8>,
    /// The grammar writes an object's members in its `properties`' order (see
    /// [`KeyPlan::with_ordered_objects`]).
    pub(super) ordered_objects: bool,
}

/// A grammar's identity and plan, shared by the keyers of its requests.
#[derive(Debug, Clone)]
pub struct KeyPlan {
    pub(super) grammar_id: [u8; 16],
    pub(super) plan: Option<Arc<Plan>>,
    pub(super) text_level: bool,
}

fn token_level(node: &Value) -> bool {
    match node {
        Value::Object(map) => {
            let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
            if TOKEN_LEVEL.contains(&kind) || map.get("max_tokens").is_some_and(|v| !v.is_null()) {
                return true;
            }
            if kind == "tag"
                && (map.get("begin").is_some_and(Value::is_object)
                    || map.get("end").is_some_and(Value::is_object))
            {
                return true;
            }
            map.values().any(token_level)
        }
        Value::Array(items) => items.iter().any(token_level),
        _ => false,
    }
}

pub(super) fn str_bytes(v: Option<&Value>) -> Option<Vec<u8>> {
    v.and_then(Value::as_str).map(|s| s.as_bytes().to_vec())
}

pub(super) fn content_of(node: &Value) -> Option<Content> {
    let kind = node.get("type")?.as_str()?;
    match kind {
        "json_schema" => {
            if node.get("style").and_then(Value::as_str).unwrap_or("json") != "json" {
                return None;
            }
            let schema = Arc::new(
                node.get("json_schema")
                    .cloned()
                    .unwrap_or(Value::Bool(true)),
            );
            let collapse = node
                .get("excludes")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            Some(Content::Json {
                schema,
                collapse,
                lead: None,
            })
        }
        "any_text" => Some(Content::AnyText),
        "const_string" => Some(Content::Const(
            str_bytes(node.get("value")).unwrap_or_default(),
        )),
        _ => None,
    }
}

pub(super) fn kind_of(node: &Value) -> &str {
    node.get("type").and_then(Value::as_str).unwrap_or("")
}

pub(super) fn elements_of(node: &Value) -> &[Value] {
    node.get("elements")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

pub(super) fn is_ws_node(node: &Value) -> bool {
    kind_of(node) == "regex"
        && node
            .get("pattern")
            .and_then(Value::as_str)
            .is_some_and(is_ws_regex)
}

fn tag_of(node: &Value) -> Option<TagSpec> {
    if node.get("type")?.as_str()? != "tag" {
        return None;
    }
    let begin = str_bytes(node.get("begin"))?;
    let ends: Vec<Vec<u8>> = match node.get("end")? {
        Value::String(s) => vec![s.as_bytes().to_vec()],
        Value::Array(items) => items
            .iter()
            .map(|v| str_bytes(Some(v)))
            .collect::<Option<Vec<_>>>()?,
        _ => return None,
    };
    if ends.is_empty() {
        return None;
    }
    let mut content = node.get("content").and_then(content_of);
    if content == Some(Content::AnyText) && (ends.len() != 1 || ends[0].is_empty()) {
        content = None; // the extent is known only when one non-empty end is excluded from it
    }
    if content.is_none() {
        content = node.get("content").and_then(section_of);
    }
    if content.is_none() {
        content = node.get("content").and_then(led_json_of);
    }
    if content.is_none() {
        content = node
            .get("content")
            .and_then(xml_call_of)
            .and_then(|params| xml_call(params, &ends))
            .map(|call| Content::Xml(Arc::new(call)));
    }
    Some(TagSpec {
        begin,
        ends,
        content,
    })
}

/// `sequence[regex of digits, const, json_schema]`: JSON after a numeric id and a constant.
fn led_json_of(node: &Value) -> Option<Content> {
    if kind_of(node) != "sequence" {
        return None;
    }
    let mut elements = Vec::new();
    flat_elements(node, &mut elements);
    let [id, lead, json] = elements.as_slice() else {
        return None;
    };
    let digits_only = kind_of(id) == "regex"
        && id.get("pattern").and_then(Value::as_str).is_some_and(|p| {
            p.bytes()
                .all(|b| b.is_ascii_digit() || b"[]{}|(),-".contains(&b))
        });
    let lead = (kind_of(lead) == "const_string").then(|| str_bytes(lead.get("value")))??;
    if !digits_only || lead.first().is_none_or(|b| b.is_ascii_digit()) {
        return None;
    }
    match content_of(json)? {
        Content::Json {
            schema, collapse, ..
        } => Some(Content::Json {
            schema,
            collapse,
            lead: Some(lead),
        }),
        _ => None,
    }
}

fn section_of(node: &Value) -> Option<Content> {
    if kind_of(node) != "tags_with_separator" {
        return None;
    }
    let tags = node
        .get("tags")?
        .as_array()?
        .iter()
        .map(tag_of)
        .collect::<Option<Vec<_>>>()?;
    (!tags.is_empty()).then(|| {
        Content::Section(Arc::new(Section {
            tags: Arc::new(tags),
            separator: str_bytes(node.get("separator")).unwrap_or_default(),
        }))
    })
}

fn prefix_of(node: &Value) -> Option<Prefix> {
    match node.get("type")?.as_str()? {
        "const_string" => Some(Prefix::Const(
            str_bytes(node.get("value")).unwrap_or_default(),
        )),
        "regex" => node
            .get("pattern")
            .and_then(Value::as_str)
            .filter(|p| is_ws_regex(p))
            .map(|_| Prefix::Ws),
        "tag" => {
            let tag = tag_of(node)?;
            (tag.content == Some(Content::AnyText)).then(|| Prefix::TextTag {
                begin: tag.begin,
                end: tag.ends[0].clone(),
            })
        }
        _ => None,
    }
}

/// `[ \t\n]{0,3}`, `[\s]*`, `\s+`, ...: a class of whitespace only, repeated.
pub(super) fn is_ws_regex(p: &str) -> bool {
    let (class, rest) = if let Some(inner) = p.strip_prefix('[') {
        match inner.find(']') {
            Some(end) => (&inner[..end], &inner[end + 1..]),
            None => return false,
        }
    } else if let Some(rest) = p.strip_prefix("\\s") {
        ("\\s", rest)
    } else {
        return false;
    };
    let mut chars = class.chars();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        match c {
            ' ' | '\t' | '\n' | '\r' => {}
            '\\' => match chars.next() {
                Some('t' | 'n' | 'r' | 's' | ' ') => {}
                _ => return false,
            },
            _ => return false,
        }
    }
    let quantifier_ok = matches!(rest, "*" | "+" | "?")
        || rest
            .strip_prefix('{')
            .and_then(|r| r.strip_suffix('}'))
            .is_some_and(|r| {
                !r.is_empty()
                    && r.chars().all(|c| c.is_ascii_digit() || c == ',')
                    && r.matches(',').count() <= 1
            });
    any && quantifier_ok
}

fn dispatch_of(node: &Value, prefix: Vec<Prefix>) -> Option<Plan> {
    let tags: Vec<TagSpec> = node
        .get("tags")?
        .as_array()?
        .iter()
        .map(tag_of)
        .collect::<Option<Vec<_>>>()?;
    if tags.is_empty() {
        return None;
    }
    let dispatch = match node.get("type")?.as_str()? {
        "triggered_tags" => {
            let triggers = node
                .get("triggers")?
                .as_array()?
                .iter()
                .map(|v| str_bytes(Some(v)))
                .collect::<Option<Vec<_>>>()?;
            if triggers.is_empty() || triggers.iter().any(Vec::is_empty) {
                return None;
            }
            let excludes = node
                .get("excludes")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| str_bytes(Some(v)))
                        .filter(|e| !e.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            Dispatch::Triggered { triggers, excludes }
        }
        "tags_with_separator" => Dispatch::Separator {
            separator: str_bytes(node.get("separator")).unwrap_or_default(),
        },
        _ => return None,
    };
    let patterns: Vec<Vec<u8>> = match &dispatch {
        Dispatch::Triggered { triggers, excludes } => {
            triggers.iter().chain(excludes).cloned().collect()
        }
        Dispatch::Separator { .. } => Vec::new(),
    };
    let mut firsts: Vec<u8> = patterns.iter().map(|p| p[0]).collect();
    firsts.sort_unstable();
    firsts.dedup();
    Some(Plan {
        prefix,
        tags: Arc::new(tags),
        dispatch,
        suffix: None,
        patterns,
        firsts,
        ordered_objects: false,
    })
}

/// `node`'s elements with nested sequences spliced in (`sequence[a, sequence[b, c]]` reads
/// as `a b c`).
fn flat_elements<'a>(node: &'a Value, out: &mut Vec<&'a Value>) {
    for e in elements_of(node) {
        if kind_of(e) == "sequence" {
            flat_elements(e, out);
        } else {
            out.push(e);
        }
    }
}

fn plan_of(fmt: &Value) -> Option<Plan> {
    match fmt.get("type")?.as_str()? {
        "triggered_tags" | "tags_with_separator" => dispatch_of(fmt, Vec::new()),
        "sequence" => {
            let mut elements = Vec::new();
            flat_elements(fmt, &mut elements);
            let at = elements
                .iter()
                .position(|e| matches!(kind_of(e), "triggered_tags" | "tags_with_separator"))?;
            let prefix = elements[..at]
                .iter()
                .map(|e| prefix_of(e))
                .collect::<Option<Vec<_>>>()?;
            let mut plan = dispatch_of(elements[at], prefix)?;
            let after = &elements[at + 1..];
            if !after.is_empty() {
                // only constants may follow, and only a separator dispatch, which cannot run
                // into them unnoticed
                if !matches!(plan.dispatch, Dispatch::Separator { .. }) {
                    return None;
                }
                let mut suffix = Vec::new();
                for e in after {
                    if kind_of(e) != "const_string" {
                        return None;
                    }
                    suffix.extend(str_bytes(e.get("value"))?);
                }
                if suffix.is_empty() {
                    return None;
                }
                plan.suffix = Some(suffix);
            }
            let starts_with_ws = |text: &[u8]| text.first().is_none_or(|&b| is_ws(b));
            for pair in plan.prefix.windows(2) {
                // whitespace ends at the first other byte, which must start the next element
                match pair {
                    [Prefix::Ws, Prefix::Const(text)] if starts_with_ws(text) => return None,
                    [Prefix::Ws, Prefix::TextTag { begin, .. }] if starts_with_ws(begin) => {
                        return None
                    }
                    [Prefix::Ws, Prefix::Ws] => return None,
                    _ => {}
                }
            }
            if plan.prefix.last() == Some(&Prefix::Ws) {
                // a whitespace prefix ends at the first other byte, so the dispatch must not be
                // able to start with whitespace (free text can)
                match &plan.dispatch {
                    Dispatch::Triggered { .. } => return None,
                    Dispatch::Separator { .. } => {
                        if plan.tags.iter().any(|t| starts_with_ws(&t.begin))
                            || plan.suffix.as_deref().is_some_and(starts_with_ws)
                        {
                            return None;
                        }
                    }
                }
            }
            Some(plan)
        }
        _ => None,
    }
}

impl KeyPlan {
    /// The plan for a structural tag (the `{"type": "structural_tag", "format": ...}` JSON or
    /// its format). `grammar_id` names the grammar in keys; equal ids must mean equal grammars.
    pub fn from_tag(grammar_id: [u8; 16], tag: &Value) -> Self {
        let fmt = if tag.get("type").and_then(Value::as_str) == Some("structural_tag") {
            tag.get("format").unwrap_or(&Value::Null)
        } else {
            tag
        };
        let text_level = !token_level(fmt);
        let plan = if text_level {
            plan_of(fmt).map(Arc::new)
        } else {
            None
        };
        KeyPlan {
            grammar_id,
            plan,
            text_level,
        }
    }

    /// Declares that the grammar's JSON objects take their declared members in the order of
    /// `properties` (each at most once, optional ones skipped, additional ones after them), as
    /// xgrammar's JSON schema converter writes them: then after a member's value the rest of its
    /// object depends only on that member's key, not on which optional members came before, and
    /// keys there name the last key alone. The caller checks the fact against the grammar engine
    /// it uses (`toolwire.grammar.engine_facts`); without it keys name every key written.
    pub fn with_ordered_objects(mut self, ordered: bool) -> Self {
        if let Some(plan) = &mut self.plan {
            Arc::make_mut(plan).ordered_objects = ordered;
        }
        self
    }

    /// A grammar the keyer knows nothing about: keys cover the token ids since the start.
    pub fn opaque(grammar_id: [u8; 16]) -> Self {
        KeyPlan {
            grammar_id,
            plan: None,
            text_level: false,
        }
    }

    /// Whether anchors are looked for (a plan exists).
    pub fn anchored(&self) -> bool {
        self.plan.is_some()
    }

    pub fn text_level(&self) -> bool {
        self.text_level
    }

    /// The kinds of anchor the keyer can reach in this plan, sorted: `free` (free text of
    /// `triggered_tags`), `after` (between the calls of `tags_with_separator`), `json`, `xml`
    /// and `section` (inside calls and call sections), and `unfollowed` when some call's content
    /// is not followed (keys there cover the text since its begin). Empty: whole-output keys.
    /// For tests that pin down what the keyer follows in the tags the builder makes.
    pub fn anchors(&self) -> Vec<&'static str> {
        fn content_anchors(tags: &[TagSpec], out: &mut Vec<&'static str>) {
            for tag in tags {
                match &tag.content {
                    Some(Content::Json { .. }) => out.push("json"),
                    Some(Content::Xml(_)) => out.push("xml"),
                    Some(Content::Section(section)) => {
                        out.push("section");
                        content_anchors(&section.tags, out);
                    }
                    Some(Content::AnyText | Content::Const(_)) => {}
                    None => out.push("unfollowed"),
                }
            }
        }
        let Some(plan) = &self.plan else {
            return Vec::new();
        };
        let mut out = vec![match plan.dispatch {
            Dispatch::Triggered { .. } => "free",
            Dispatch::Separator { .. } => "after",
        }];
        content_anchors(&plan.tags, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// A short description for tests and debugging: `triggered(2 tags)`, `separator(...)`, or
    /// `whole output (text|tokens)`.
    pub fn describe(&self) -> String {
        match &self.plan {
            None => format!(
                "whole output ({})",
                if self.text_level { "text" } else { "tokens" }
            ),
            Some(plan) => {
                let kind = match plan.dispatch {
                    Dispatch::Triggered { .. } => "triggered",
                    Dispatch::Separator { .. } => "separator",
                };
                let prefix: Vec<&str> = plan
                    .prefix
                    .iter()
                    .map(|p| match p {
                        Prefix::Const(_) => "const",
                        Prefix::TextTag { .. } => "text_tag",
                        Prefix::Ws => "ws",
                    })
                    .collect();
                let contents: Vec<&str> = plan
                    .tags
                    .iter()
                    .map(|t| match t.content {
                        Some(Content::Json { .. }) => "json",
                        Some(Content::AnyText) => "any_text",
                        Some(Content::Const(_)) => "const",
                        Some(Content::Xml(_)) => "xml",
                        Some(Content::Section(_)) => "section",
                        None => "unknown",
                    })
                    .collect();
                format!(
                    "{kind}(prefix=[{}], tags=[{}]{})",
                    prefix.join(","),
                    contents.join(","),
                    if plan.suffix.is_some() {
                        ", suffix"
                    } else {
                        ""
                    }
                )
            }
        }
    }
}
