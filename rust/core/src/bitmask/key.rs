//! Grammar state keys for the mask cache, derived from what toolwire knows about the output.
//!
//! xgrammar exposes no state id, so a cache of masks needs a key that is equal only when the
//! masks must be equal. A mask is a function of the *residual language*: the set of
//! continuations the grammar still accepts. For a grammar whose elements all work on text (no
//! token-level elements, no token budgets) the residual is a function of the accepted text, so
//! `(grammar, hash of the whole output)` is always sound; for token-level grammars the same holds
//! with the token ids. Such keys hit only on shared prefixes, so the keyer also finds *anchors*:
//! points where the grammar's state is canonical whatever came before. The key is then
//! `(grammar, anchor kind, calls so far capped at 1, hash of the text since the anchor)`; inside
//! a tag (from its trigger to its end) the call count is left out, as the rest of the output is
//! the same after a first or a later call.
//! Anchors it can defend:
//!
//! * the start of the output;
//! * in the free text of a `triggered_tags` format, every point where no suffix of the text is a
//!   proper prefix of a trigger or an excluded string and no UTF-8 character is half written
//!   (the free-text state is the Aho-Corasick state over those strings, here at its root);
//! * right after the end string of a call, in `triggered_tags` and `tags_with_separator` formats
//!   (also as the last element of a `sequence` whose earlier elements are constant strings,
//!   `any_text` tags with a string end such as a reasoning block, or a whitespace regex);
//! * inside a JSON string value whose schema is an unconstrained string (or any JSON): the
//!   residual does not depend on the characters already written unless an escape or a UTF-8
//!   character is half written, so those steps share the key of the opening quote, and after the
//!   closing quote the string's text is forgotten;
//! * in a section tag (a tag whose content is a `tags_with_separator` of calls: DeepSeek, Kimi
//!   K2, MiniMax M2, the JSON-array families), at the section's start and after each of its
//!   calls, keyed by the section's tag and whether a call came before (which decides whether a
//!   separator is due): the calls themselves are forgotten. Inside a call the anchors below
//!   apply as in a plain tag;
//! * inside JSON content, right after a member's value ends (a string's closing quote, an
//!   object's or array's close, the byte after a number or literal), when every container from
//!   the root down is a *product*: an object with only `properties`, `required` and
//!   `additionalProperties`, an array with only `items` and bounds, or any JSON. Each member's
//!   language then depends only on its key, and which members may follow only on the keys
//!   already written (objects, in any order xgrammar allows) or the item count (bounded
//!   arrays), so the rest of the output is a function of that position, keyed by the tag and,
//!   per container, its keys so far or its count. After the whole value only the tag matters;
//! * inside a plain JSON number (`{"type": "integer"}`, `{"type": "number"}`, or any JSON) in
//!   a product container: the digits written are replaced by the state of a DFA for xgrammar's
//!   number rule (`-?(0|[1-9][0-9]*)` then fraction and exponent). Two prefixes that end in one
//!   state of a DFA of a language have the same continuations, so `7` and `2045` share a key.
//!   The same holds for an XML value `[lead] number [trail]` with constant `lead`/`trail`
//!   (`\n7\n`), followed through the value and into its close.
//!
//! * in an XML call (`_XmlBuilder`: parameters in schema order, each `[ws] head {[ws] const}
//!   value close [ws]`, optional ones wrapped in `optional`), at the start of a parameter's value
//!   and right after its close string, keyed by (tag, parameter). The residual there is the rest
//!   of that parameter, the later parameters in order, the call's end and what follows the call:
//!   it does not depend on which optional parameters came before or on their values. This needs
//!   the close to end the value at its first occurrence, so a parameter is followed only where
//!   the close is border-free (no proper prefix equal to a suffix, so an occurrence cannot
//!   straddle the value's end) and the value provably cannot hold it: raw text whose `excludes`
//!   has a substring of the close, or a value that can never hold the close's first byte
//!   (constants, their `or`/`sequence`/`optional`, scalar JSON schemas, JSON whose `excludes`
//!   holds that byte and whose schema has no `pattern`/`format`). Heads and the call's end
//!   (less its leading whitespace) are matched after the whitespace gap against the parameters
//!   still allowed (up to the next required one); a match must be unique and complete;
//! * inside a raw-text XML value (bare `any_text`, no `max_chars`): wherever no suffix of the
//!   value is a proper prefix of its exclusions, its close or the call's end, and no UTF-8
//!   character is half written, the value's state is that of its start, so those steps share
//!   the start's key (as for JSON strings). Where such a suffix exists, the longest one is the
//!   state of the Aho-Corasick automaton over those strings, so the key is the start's and that
//!   suffix (`…Paris\n</par` and `…São Paulo\n</par` share one).
//!
//! Tag ends are found by scanning the call's content: JSON (`json_schema` in the `json` style,
//! an object or array), `any_text` (its end string is excluded from it), a constant string or
//! XML parameters as above. Wherever the keyer cannot follow the structure (`json_schema` in an
//! XML style, any-name XML parameters, a value that might hold its close, a begin that is a
//! prefix of another, whitespace before an end string, ...) it stops looking for anchors and keys
//! by the text since the last one: still sound, fewer hits.
//!
//! The hash is two SipHash-1-3 streams with process-random keys (128 bits), so output text
//! cannot be crafted to collide keys. The argument for each anchor is about the grammar's
//! language, not xgrammar's internals; `toolwire.masks.BatchMasker(verify=True)` checks every
//! cache hit against a freshly computed mask.

use std::collections::hash_map::{DefaultHasher, RandomState};
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

const TOKEN_LEVEL: [&str; 5] = [
    "token",
    "exclude_token",
    "any_tokens",
    "token_triggered_tags",
    "token_dispatch",
];
const ANNOTATIONS: [&str; 8] = [
    "description",
    "title",
    "examples",
    "default",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];
const WS: [u8; 4] = [b' ', b'\t', b'\n', b'\r'];

/// Bytes read without anchors after which [`StateKeyer::cacheable`] turns false.
pub const LOST_KEY_BYTES: usize = 128;

/// Bytes in a key from [`StateKeyer::key`]: grammar id, anchor kind, call count, digest.
pub const KEY_LEN: usize = 16 + 1 + 1 + 16;

fn is_ws(b: u8) -> bool {
    WS.contains(&b)
}

// ------------------------------------------------------------------------------------------------
// Hashing

fn seeds() -> &'static (RandomState, RandomState) {
    static SEEDS: OnceLock<(RandomState, RandomState)> = OnceLock::new();
    SEEDS.get_or_init(|| (RandomState::new(), RandomState::new()))
}

#[derive(Clone)]
struct Hash128(DefaultHasher, DefaultHasher);

impl Hash128 {
    fn new() -> Self {
        let (a, b) = seeds();
        Hash128(a.build_hasher(), b.build_hasher())
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }

    fn digest(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.0.finish().to_le_bytes());
        out[8..].copy_from_slice(&self.1.finish().to_le_bytes());
        out
    }
}

// ------------------------------------------------------------------------------------------------
// The plan: what the keyer knows about a structural tag.

#[derive(Debug, Clone, PartialEq)]
enum Content {
    /// JSON content, after `lead` when given: a call id of digits then a constant (Kimi K2's
    /// `functions.NAME:0<|tool_call_argument_begin|>`), read up to the constant's first
    /// occurrence, which the digits cannot hold.
    Json {
        schema: Value,
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
struct Section {
    tags: Arc<Vec<TagSpec>>,
    separator: Vec<u8>,
}

impl PartialEq for Section {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// One XML parameter of a call: `head` (a constant naming it), then `tail` pieces (each
/// optionally after whitespace), the value, and `close`.
#[derive(Debug, Clone, PartialEq)]
struct XmlParam {
    head: Vec<u8>,
    tail: Vec<(bool, Vec<u8>)>,
    close: Vec<u8>,
    required: bool,
    /// For a raw-text value (a bare `any_text` without `max_chars`): every string whose partial
    /// match at the end of the value makes its state differ from the value's start.
    collapse: Option<Vec<Vec<u8>>>,
    /// For a value that is a plain JSON number between optional constants (`\n7\n`).
    number: Option<NumberValue>,
}

/// A parameter value of the form `[lead] number [trail]` (both constants optional), whose
/// language is regular and small: the keyer follows it with [`NumberValueState`].
#[derive(Debug, Clone, PartialEq)]
struct NumberValue {
    lead: Vec<u8>,
    integer: bool,
    trail: Vec<u8>,
}

/// Where a [`NumberValue`] is, plus how much of the parameter's close follows it. Two values
/// in one state have the same continuations (a DFA of the value's language, then the close).
#[derive(Debug, Clone, Copy, PartialEq)]
enum NumberValueState {
    Lead(u8),
    Number(Num),
    Trail(u8),
    Close(u8),
}

impl NumberValueState {
    fn code(self) -> [u8; 2] {
        match self {
            NumberValueState::Lead(i) => [0, i],
            NumberValueState::Number(n) => [1, n.state],
            NumberValueState::Trail(i) => [2, i],
            NumberValueState::Close(i) => [3, i],
        }
    }
}

impl NumberValue {
    fn of(value: &Value, close: &[u8]) -> Option<Self> {
        let number = |n: &Value| -> Option<bool> {
            if kind_of(n) != "json_schema"
                || n.get("style").and_then(Value::as_str).unwrap_or("json") != "json"
            {
                return None;
            }
            number_kind(&Sub::Schema(n.get("json_schema")?.clone()))
        };
        let optional_const = |n: &Value| -> Option<Vec<u8>> {
            let inner = (kind_of(n) == "optional").then(|| n.get("content"))??;
            (kind_of(inner) == "const_string").then(|| str_bytes(inner.get("value")))?
        };
        let (lead, integer, trail) = if let Some(integer) = number(value) {
            (Vec::new(), integer, Vec::new())
        } else if kind_of(value) == "sequence" {
            match elements_of(value) {
                [a, n, b] => (optional_const(a)?, number(n)?, optional_const(b)?),
                [a, n] if number(n).is_some() => (optional_const(a)?, number(n)?, Vec::new()),
                [n, b] => (Vec::new(), number(n)?, optional_const(b)?),
                [n] => (Vec::new(), number(n)?, Vec::new()),
                _ => return None,
            }
        } else {
            return None;
        };
        // every step must be unambiguous: the constants cannot start or continue a number,
        // and the trail cannot be confused with the close
        let numeric = |b: &u8| b.is_ascii_digit() || b"+-.eE".contains(b);
        let fits = lead.len() < 200
            && trail.len() < 200
            && close.len() < 200
            && !lead.iter().chain(&trail).any(numeric)
            && !numeric(&close[0])
            && trail.first().is_none_or(|&t| t != close[0]);
        fits.then_some(NumberValue {
            lead,
            integer,
            trail,
        })
    }

    fn step(&self, state: NumberValueState, b: u8, close: &[u8]) -> Option<NumberValueState> {
        use NumberValueState::*;
        let number_start = |b| {
            Num {
                integer: self.integer,
                state: 0,
            }
            .step(b)
            .map(Number)
        };
        let after_number = |b: u8| {
            if self.trail.first() == Some(&b) {
                Some(Trail(1))
            } else {
                (close.first() == Some(&b)).then_some(Close(1))
            }
        };
        match state {
            Lead(i) if (i as usize) < self.lead.len() && self.lead[i as usize] == b => {
                Some(Lead(i + 1))
            }
            Lead(i) if i == 0 || i as usize == self.lead.len() => number_start(b),
            Lead(_) => None,
            Number(n) => match n.step(b) {
                Some(next) => Some(Number(next)),
                None if n.complete() => after_number(b),
                None => None,
            },
            Trail(i) if (i as usize) < self.trail.len() => {
                (self.trail[i as usize] == b).then_some(Trail(i + 1))
            }
            Trail(_) => (close.first() == Some(&b)).then_some(Close(1)),
            Close(i) => (close.get(i as usize) == Some(&b)).then_some(Close(i + 1)),
        }
    }
}

/// The parameters of an XML call in grammar order, and the call's end strings with their leading
/// whitespace removed (that whitespace is read as the gap after the last parameter).
#[derive(Debug, Clone, PartialEq)]
struct XmlCall {
    params: Vec<XmlParam>,
    end_rests: Vec<Vec<u8>>,
}

#[derive(Debug, Clone)]
struct TagSpec {
    begin: Vec<u8>,
    ends: Vec<Vec<u8>>,
    /// None: the keyer cannot find where this tag's content ends.
    content: Option<Content>,
}

#[derive(Debug, Clone, PartialEq)]
enum Prefix {
    Const(Vec<u8>),
    TextTag { begin: Vec<u8>, end: Vec<u8> },
    Ws,
}

#[derive(Debug, Clone)]
enum Dispatch {
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
    prefix: Vec<Prefix>,
    tags: Arc<Vec<TagSpec>>,
    dispatch: Dispatch,
    /// A constant after a `tags_with_separator` (the end of a call section written as
    /// `sequence[begin, tags_with_separator, end]`), after which the output ends.
    suffix: Option<Vec<u8>>,
    /// Patterns of the free text (triggers, then excludes) and their first bytes.
    patterns: Vec<Vec<u8>>,
    firsts: Vec<u8>,
}

/// A grammar's identity and plan, shared by the keyers of its requests.
#[derive(Debug, Clone)]
pub struct KeyPlan {
    grammar_id: [u8; 16],
    plan: Option<Arc<Plan>>,
    text_level: bool,
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

fn str_bytes(v: Option<&Value>) -> Option<Vec<u8>> {
    v.and_then(Value::as_str).map(|s| s.as_bytes().to_vec())
}

fn content_of(node: &Value) -> Option<Content> {
    let kind = node.get("type")?.as_str()?;
    match kind {
        "json_schema" => {
            if node.get("style").and_then(Value::as_str).unwrap_or("json") != "json" {
                return None;
            }
            let schema = node
                .get("json_schema")
                .cloned()
                .unwrap_or(Value::Bool(true));
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

fn kind_of(node: &Value) -> &str {
    node.get("type").and_then(Value::as_str).unwrap_or("")
}

fn elements_of(node: &Value) -> &[Value] {
    node.get("elements")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn is_ws_node(node: &Value) -> bool {
    kind_of(node) == "regex"
        && node
            .get("pattern")
            .and_then(Value::as_str)
            .is_some_and(is_ws_regex)
}

/// Whether `text` has no proper prefix that is also a suffix: then an occurrence of `text` can
/// not overlap the end of a string that does not contain it.
fn border_free(text: &[u8]) -> bool {
    (1..text.len()).all(|k| text[..k] != text[text.len() - k..])
}

/// Whether no string of `node`'s language holds the byte `c`.
fn never_holds(node: &Value, c: u8) -> bool {
    match kind_of(node) {
        "const_string" => !str_bytes(node.get("value"))
            .unwrap_or_default()
            .contains(&c),
        "or" | "sequence" => {
            let elements = elements_of(node);
            !elements.is_empty() && elements.iter().all(|e| never_holds(e, c))
        }
        "optional" => node.get("content").is_some_and(|e| never_holds(e, c)),
        "json_schema" => json_never_holds(node, c),
        _ => false,
    }
}

/// JSON text outside strings is made of digits, letters of literals, punctuation and whitespace;
/// inside strings (keys included) xgrammar keeps `excludes` out of every string that has no
/// `pattern` or `format`.
fn json_never_holds(node: &Value, c: u8) -> bool {
    if node.get("style").and_then(Value::as_str).unwrap_or("json") != "json"
        || c.is_ascii_alphanumeric()
        || is_ws(c)
        || b"{}[],:\"\\-+.".contains(&c)
    {
        return false;
    }
    let schema = node.get("json_schema").unwrap_or(&Value::Bool(true));
    let excluded = node
        .get("excludes")
        .and_then(Value::as_array)
        .is_some_and(|a| {
            a.iter()
                .any(|e| e.as_str().map(str::as_bytes) == Some(&[c]))
        });
    if excluded {
        return !has_key(
            schema,
            &["pattern", "format", "patternProperties", "propertyNames"],
        );
    }
    // no string anywhere: a scalar schema
    let Some(map) = schema.as_object() else {
        return false;
    };
    let scalar = |t: &Value| matches!(t.as_str(), Some("integer" | "number" | "boolean" | "null"));
    map.iter().all(|(k, v)| match k.as_str() {
        "type" => match v {
            Value::Array(ts) => !ts.is_empty() && ts.iter().all(scalar),
            t => scalar(t),
        },
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            v.is_number()
        }
        k => ANNOTATIONS.contains(&k),
    }) && map.contains_key("type")
}

fn has_key(node: &Value, keys: &[&str]) -> bool {
    match node {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| keys.contains(&k.as_str()) || has_key(v, keys)),
        Value::Array(items) => items.iter().any(|v| has_key(v, keys)),
        _ => false,
    }
}

/// Whether no string of the value's language holds `close`, so that the value ends at the first
/// `close` after its start (`close` must be border-free).
fn value_ends_at_close(value: &Value, close: &[u8]) -> bool {
    if never_holds(value, close[0]) {
        return true;
    }
    kind_of(value) == "any_text"
        && value
            .get("excludes")
            .and_then(Value::as_array)
            .is_some_and(|a| {
                a.iter()
                    .filter_map(|e| e.as_str())
                    .any(|e| !e.is_empty() && close.windows(e.len()).any(|w| w == e.as_bytes()))
            })
}

/// One parameter as `_XmlBuilder.param` writes it: `[ws] head {[ws] const} value close [ws]`.
fn xml_param_of(node: &Value, required: bool) -> Option<XmlParam> {
    if kind_of(node) != "sequence" {
        return None;
    }
    let mut elements = elements_of(node);
    while elements.first().is_some_and(is_ws_node) {
        elements = &elements[1..];
    }
    while elements.last().is_some_and(is_ws_node) {
        elements = &elements[..elements.len() - 1];
    }
    let [first, middle @ .., value, close] = elements else {
        return None;
    };
    let as_const = |n: &Value| (kind_of(n) == "const_string").then(|| str_bytes(n.get("value")))?;
    let head = as_const(first).filter(|h| h.first().is_some_and(|&b| !is_ws(b)))?;
    let close = as_const(close).filter(|c| !c.is_empty() && border_free(c))?;
    let mut tail = Vec::new();
    let mut ws = false;
    for piece in middle {
        if is_ws_node(piece) {
            ws = true;
            continue;
        }
        let text = as_const(piece).filter(|t| t.first().is_some_and(|&b| !is_ws(b)))?;
        tail.push((std::mem::take(&mut ws), text));
    }
    if ws || !value_ends_at_close(value, &close) {
        return None;
    }
    let collapse = (kind_of(value) == "any_text"
        && value.get("max_chars").is_none_or(Value::is_null))
    .then(|| {
        let mut patterns: Vec<Vec<u8>> = value
            .get("excludes")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|e| str_bytes(Some(e))).collect())
            .unwrap_or_default();
        patterns.push(close.clone());
        patterns
    });
    let number = NumberValue::of(value, &close);
    Some(XmlParam {
        head,
        tail,
        close,
        required,
        collapse,
        number,
    })
}

/// The content of an XML call: one parameter, or a sequence of them, each possibly optional.
fn xml_call_of(node: &Value) -> Option<Vec<XmlParam>> {
    let param = |n: &Value| match kind_of(n) {
        "optional" => xml_param_of(n.get("content")?, false),
        _ => xml_param_of(n, true),
    };
    if let Some(p) = param(node) {
        return Some(vec![p]);
    }
    if kind_of(node) != "sequence" {
        return None;
    }
    let params = elements_of(node)
        .iter()
        .map(param)
        .collect::<Option<Vec<_>>>()?;
    let mut heads: Vec<&Vec<u8>> = params.iter().map(|p| &p.head).collect();
    heads.sort();
    heads.dedup();
    (!params.is_empty() && heads.len() == params.len()).then_some(params)
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

/// An XML call whose end strings can be told apart from parameters after the whitespace gap.
fn xml_call(mut params: Vec<XmlParam>, ends: &[Vec<u8>]) -> Option<XmlCall> {
    let end_rests: Vec<Vec<u8>> = ends
        .iter()
        .map(|e| e[e.iter().take_while(|&&b| is_ws(b)).count()..].to_vec())
        .collect();
    if end_rests.iter().any(Vec::is_empty) {
        return None;
    }
    for p in &mut params {
        if let Some(patterns) = &mut p.collapse {
            // the call's end, in case xgrammar adds it to the value's exclusions
            patterns.extend(ends.iter().filter(|e| !e.is_empty()).cloned());
        }
    }
    Some(XmlCall { params, end_rests })
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
fn is_ws_regex(p: &str) -> bool {
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

// ------------------------------------------------------------------------------------------------
// JSON content scanner

fn collapsible(schema: &Value) -> bool {
    match schema {
        Value::Bool(true) => true,
        Value::Object(map) if map.is_empty() => true,
        Value::Object(map) => {
            map.keys()
                .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
                && match map.get("type") {
                    Some(Value::String(t)) => t == "string",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
                    _ => false,
                }
        }
        _ => false,
    }
}

/// The schema of a value in the JSON content: known, any JSON, or unknown.
#[derive(Debug, Clone)]
enum Sub {
    Schema(Value),
    Any,
    Unknown,
}

fn is_any(schema: &Value) -> bool {
    matches!(schema, Value::Bool(true)) || schema.as_object().is_some_and(|m| m.is_empty())
}

fn child(parent: &Sub, key: Option<&[u8]>) -> Sub {
    let schema = match parent {
        Sub::Any => return Sub::Any,
        Sub::Unknown => return Sub::Unknown,
        Sub::Schema(s) if is_any(s) => return Sub::Any,
        Sub::Schema(Value::Object(map)) => map,
        Sub::Schema(_) => return Sub::Unknown,
    };
    match key {
        None => match schema.get("items") {
            Some(items @ (Value::Object(_) | Value::Bool(_)))
                if !schema.contains_key("prefixItems") =>
            {
                Sub::Schema(items.clone())
            }
            _ => Sub::Unknown,
        },
        Some(key) => {
            let Ok(key) = std::str::from_utf8(key) else {
                return Sub::Unknown;
            };
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(sub) = props.and_then(|p| p.get(key)) {
                return Sub::Schema(sub.clone());
            }
            match schema.get("additionalProperties") {
                None | Some(Value::Bool(true))
                    if props.is_none()
                        && schema.keys().all(|k| {
                            k == "type"
                                || k == "additionalProperties"
                                || ANNOTATIONS.contains(&k.as_str())
                        }) =>
                {
                    Sub::Any
                }
                Some(extra @ Value::Object(_)) => Sub::Schema(extra.clone()),
                _ => Sub::Unknown,
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    First,
    Key,
    Colon,
    Value,
    InValue,
    CommaOrEnd,
}

#[derive(Debug, Clone)]
struct Container {
    object: bool,
    expect: Expect,
    schema: Sub,
    key: Vec<u8>,
    /// This container and every one around it are products (see [`product`]): the rest of
    /// the JSON after one of its values depends only on [`JsonScan::position`].
    product: bool,
    /// Object: the keys written so far, each after its length. Array: items begun so far.
    keys: Vec<u8>,
    items: u32,
}

impl Container {
    fn new(object: bool, schema: Sub, product_around: bool) -> Self {
        let product = product_around && product(&schema, object);
        Container {
            object,
            expect: Expect::First,
            schema,
            key: Vec::new(),
            product,
            keys: Vec::new(),
            items: 0,
        }
    }
}

/// Whether a container's language is a product of its members: each member's value language
/// depends only on its key (or on nothing, in an array), and which members may follow depends
/// only on the keys already written (or, for a bounded array, on how many items there are).
/// Then after a member's value is complete, the rest of the container is a function of that
/// position and not of the values. Combinators, conditionals, `patternProperties` and the like
/// tie members together and are not followed.
fn product(schema: &Sub, object: bool) -> bool {
    let map = match schema {
        Sub::Any => return true,
        Sub::Unknown => return false,
        Sub::Schema(Value::Object(map)) => map,
        Sub::Schema(s) => return is_any(s),
    };
    if map.is_empty() {
        return true;
    }
    let allowed: &[&str] = if object {
        &["type", "properties", "required", "additionalProperties"]
    } else {
        &["type", "items", "minItems", "maxItems"]
    };
    let want = if object { "object" } else { "array" };
    map.get("type").and_then(Value::as_str) == Some(want)
        && map
            .keys()
            .all(|k| allowed.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()))
        && map.get("properties").is_none_or(|p| {
            p.as_object()
                .is_some_and(|p| p.values().all(|v| v.is_object() || v.is_boolean()))
        })
        && map
            .get("additionalProperties")
            .is_none_or(|a| a.is_object() || a.is_boolean())
        && map
            .get("items")
            .is_none_or(|i| i.is_object() || i.is_boolean())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Str {
    Key,
    Value { collapsible: bool },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Event {
    None,
    Open,
    Close,
    /// A number whose language is tracked started with this byte, in product containers.
    NumberStart,
}

/// A number being written, as a state of a DFA for xgrammar's JSON number rules:
/// `-?(0|[1-9][0-9]*)` for integers, then `(\.[0-9]+)?([eE][+-]?[0-9]+)?` for numbers. Two
/// prefixes in one state of a DFA of a language have the same continuations, so the state can
/// stand for the digits written.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Num {
    integer: bool,
    /// 0 start, 1 `-`, 2 `0`, 3 integer digits, 4 `.`, 5 fraction digits, 6 `e`, 7 exponent
    /// sign, 8 exponent digits.
    state: u8,
}

impl Num {
    /// Whether the digits so far are a whole number.
    fn complete(self) -> bool {
        matches!(self.state, 2 | 3 | 5 | 8)
    }

    fn step(self, b: u8) -> Option<Num> {
        let next = match (self.state, b) {
            (0, b'-') => 1,
            (0 | 1, b'0') => 2,
            (0 | 1, b'1'..=b'9') | (3, b'0'..=b'9') => 3,
            _ if self.integer => return None,
            (2 | 3, b'.') => 4,
            (4 | 5, b'0'..=b'9') => 5,
            (2 | 3 | 5, b'e' | b'E') => 6,
            (6, b'+' | b'-') => 7,
            (6..=8, b'0'..=b'9') => 8,
            _ => return None,
        };
        Some(Num {
            state: next,
            ..self
        })
    }
}

/// `Some(true)` for a plain integer schema, `Some(false)` for a plain number or any JSON
/// (whose numbers follow the number rule); None for anything with bounds or other keywords.
fn number_kind(schema: &Sub) -> Option<bool> {
    let map = match schema {
        Sub::Any => return Some(false),
        Sub::Schema(s) if is_any(s) => return Some(false),
        Sub::Schema(Value::Object(map)) => map,
        _ => return None,
    };
    if !map
        .keys()
        .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
    {
        return None;
    }
    match map.get("type").and_then(Value::as_str) {
        Some("integer") => Some(true),
        Some("number") => Some(false),
        _ => None,
    }
}

/// Where a member's value ended during the last byte, inside product containers only.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ValueEnd {
    /// A number or literal ended before this byte (the byte is `,` or whitespace).
    Before,
    /// A string, object or array ended with this byte.
    After,
}

#[derive(Debug, Clone)]
struct JsonScan {
    root: Value,
    collapse: bool,
    stack: Vec<Container>,
    started: bool,
    done: bool,
    failed: bool,
    string: Option<Str>,
    escape: u8,
    utf8_need: u8,
    key: Vec<u8>,
    scalar: bool,
    /// The state of a number being written whose language is known (see [`number_kind`]).
    number: Option<Num>,
    /// Set by [`JsonScan::feed`] when a member's value ended inside product containers.
    value_end: Option<ValueEnd>,
}

fn utf8_len(lead: u8) -> u8 {
    match lead {
        0xC0..=0xDF => 1,
        0xE0..=0xEF => 2,
        0xF0..=0xFF => 3,
        _ => 0,
    }
}

impl JsonScan {
    fn new(root: Value, collapse: bool) -> Self {
        JsonScan {
            root,
            collapse,
            stack: Vec::new(),
            started: false,
            done: false,
            failed: false,
            string: None,
            escape: 0,
            utf8_need: 0,
            key: Vec::new(),
            scalar: false,
            number: None,
            value_end: None,
        }
    }

    /// The state of the number being written, where its language is tracked.
    fn number_state(&self) -> Option<u8> {
        self.number.map(|n| n.state)
    }

    /// Feeds `position` of the value that just ended to `hasher`: for each container from the
    /// root, the keys written so far (objects) or the item count (bounded arrays).
    fn position(&self, hasher: &mut Hash128) {
        // one tag byte per container, then a fixed-size or length-prefixed field: prefix-free
        hasher.write(&(self.stack.len() as u64).to_le_bytes());
        for c in &self.stack {
            match (&c.schema, c.object) {
                (Sub::Any, true) => hasher.write(b"A"),
                (Sub::Any, false) => hasher.write(b"B"),
                (_, true) => {
                    hasher.write(b"O");
                    hasher.write(&(c.keys.len() as u64).to_le_bytes());
                    hasher.write(&c.keys);
                }
                (Sub::Schema(Value::Object(map)), false)
                    if map.contains_key("minItems") || map.contains_key("maxItems") =>
                {
                    hasher.write(b"N");
                    hasher.write(&c.items.to_le_bytes());
                }
                (_, false) => hasher.write(b"U"),
            }
        }
    }

    fn clean_in_collapsible_string(&self) -> bool {
        self.string == Some(Str::Value { collapsible: true })
            && self.escape == 0
            && self.utf8_need == 0
    }

    fn value_schema(&self) -> Sub {
        match self.stack.last() {
            None => Sub::Schema(self.root.clone()),
            Some(top) => child(&top.schema, if top.object { Some(&top.key) } else { None }),
        }
    }

    fn after_value(&mut self, end: ValueEnd) {
        match self.stack.last_mut() {
            None => self.done = true,
            Some(top) => {
                top.expect = Expect::CommaOrEnd;
                if top.product && self.value_end != Some(ValueEnd::After) {
                    self.value_end = Some(end);
                }
            }
        }
    }

    fn fail(&mut self) -> Event {
        self.failed = true;
        Event::None
    }

    fn feed(&mut self, b: u8) -> Event {
        self.value_end = None;
        if self.string.is_some() {
            return self.string_byte(b);
        }
        if self.scalar {
            if is_ws(b) || matches!(b, b',' | b']' | b'}') {
                self.scalar = false;
                self.after_value(ValueEnd::Before);
            } else {
                self.number = self.number.and_then(|n| n.step(b));
                return Event::None;
            }
            self.number = None;
        }
        if is_ws(b) {
            return Event::None;
        }
        if !self.started {
            self.started = true;
            if b != b'{' && b != b'[' {
                return self.fail();
            }
            let schema = Sub::Schema(self.root.clone());
            self.stack.push(Container::new(b == b'{', schema, true));
            return Event::None;
        }
        let Some(top) = self.stack.last_mut() else {
            return self.fail();
        };
        match (top.object, top.expect, b) {
            (true, Expect::First | Expect::Key, b'"') => {
                self.string = Some(Str::Key);
                self.key.clear();
                Event::None
            }
            (true, Expect::First | Expect::CommaOrEnd, b'}')
            | (false, Expect::First | Expect::CommaOrEnd, b']') => {
                self.stack.pop();
                self.after_value(ValueEnd::After);
                Event::None
            }
            (true, Expect::Colon, b':') => {
                top.expect = Expect::Value;
                Event::None
            }
            (true, Expect::CommaOrEnd, b',') => {
                top.expect = Expect::Key;
                Event::None
            }
            (false, Expect::CommaOrEnd, b',') => {
                top.expect = Expect::Value;
                Event::None
            }
            (true, Expect::Value, _) | (false, Expect::First | Expect::Value, _) => {
                self.value_start(b)
            }
            _ => self.fail(),
        }
    }

    fn value_start(&mut self, b: u8) -> Event {
        let schema = self.value_schema();
        if let Some(top) = self.stack.last_mut() {
            top.expect = Expect::InValue;
            top.items = top.items.saturating_add(1);
        }
        match b {
            b'"' => {
                let collapsible = self.collapse
                    && match &schema {
                        Sub::Any => true,
                        Sub::Schema(s) => collapsible(s),
                        Sub::Unknown => false,
                    };
                self.string = Some(Str::Value { collapsible });
                if collapsible {
                    Event::Open
                } else {
                    Event::None
                }
            }
            b'{' | b'[' => {
                let around = self.stack.last().is_none_or(|c| c.product);
                self.stack.push(Container::new(b == b'{', schema, around));
                Event::None
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                self.scalar = true;
                let in_product = self.stack.last().is_some_and(|c| c.product);
                self.number = number_kind(&schema)
                    .filter(|_| in_product)
                    .and_then(|integer| Num { integer, state: 0 }.step(b));
                if self.number.is_some() {
                    Event::NumberStart
                } else {
                    Event::None
                }
            }
            _ => self.fail(),
        }
    }

    fn string_byte(&mut self, b: u8) -> Event {
        let in_key = self.string == Some(Str::Key);
        if self.utf8_need > 0 {
            self.utf8_need -= 1;
        } else if self.escape == 1 {
            self.escape = if b == b'u' { 2 } else { 0 };
        } else if self.escape >= 2 {
            self.escape = if self.escape < 5 { self.escape + 1 } else { 0 };
        } else if b == b'\\' {
            self.escape = 1;
        } else if b == b'"' {
            let was = self.string.take();
            if in_key {
                let key = std::mem::take(&mut self.key);
                if let Some(top) = self.stack.last_mut() {
                    top.keys
                        .extend_from_slice(&(key.len() as u64).to_le_bytes());
                    top.keys.extend_from_slice(&key);
                    top.key = key;
                    top.expect = Expect::Colon;
                }
                return Event::None;
            }
            self.after_value(ValueEnd::After);
            return if was == Some(Str::Value { collapsible: true }) {
                Event::Close
            } else {
                Event::None
            };
        } else {
            self.utf8_need = utf8_len(b);
        }
        if in_key {
            self.key.push(b);
        }
        Event::None
    }
}

// ------------------------------------------------------------------------------------------------
// The keyer

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inside the elements before the dispatch (a reasoning block, a whitespace regex, ...).
    Prefix,
    /// Free text of a `triggered_tags` format.
    Free,
    /// Matching a tag's begin after a trigger.
    Begin,
    /// Between tags of a `tags_with_separator` format (separator and begin).
    Between,
    /// Inside a tag's content.
    Content,
    /// Matching a tag's end string.
    End,
    /// In a section tag between its calls: a separator and a call's begin, or the section's end.
    Section,
    /// After a plan's suffix: the output can only end.
    Done,
    /// No anchors any more (or never: no plan); keys cover the text since the last anchor.
    Lost,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Prefix => "prefix",
            Mode::Free => "free",
            Mode::Begin => "begin",
            Mode::Between => "between",
            Mode::Content => "content",
            Mode::End => "end",
            Mode::Section => "section",
            Mode::Done => "done",
            Mode::Lost => "lost",
        }
    }
}

/// Anchor kinds, the second part of a key.
pub mod family {
    /// The start of the output, keyed by text.
    pub const START_TEXT: u8 = b'S';
    /// The start of the output, keyed by token ids.
    pub const START_IDS: u8 = b'I';
    /// A canonical point in the free text of `triggered_tags`.
    pub const FREE: u8 = b'F';
    /// The start of a `tags_with_separator`, or the end of one of its tags.
    pub const AFTER: u8 = b'A';
    /// Inside an XML call: the start of a parameter's value or the end of a parameter, keyed
    /// by the tag and the parameter.
    pub const XML: u8 = b'X';
    /// Inside JSON content: after a member's value (keyed by the tag and the position in the
    /// containers, not by the values) or after the whole value.
    pub const JSON: u8 = b'J';
    /// In a section tag, at its start or after one of its calls, keyed by the section's tag and
    /// whether a call came before (which decides whether a separator is due).
    pub const SECTION: u8 = b'N';
}

/// Where the keyer is in a section tag.
#[derive(Debug, Clone)]
struct SectionState {
    /// The section's tag among the plan's tags.
    outer: usize,
    section: Arc<Section>,
    calls: u32,
    /// Inside one of the section's calls (`StateKeyer::tag` is then its index in the section).
    in_call: bool,
}

/// Where the keyer is in an XML call.
#[derive(Debug, Clone)]
enum XmlPhase {
    /// Between parameters: whitespace, then the head of a later parameter or the call's end.
    Gap { buf: Vec<u8> },
    /// In parameter `param`'s opening after its head: `piece` of its tail, `matched` bytes of it.
    Open {
        param: usize,
        piece: usize,
        matched: usize,
    },
    /// In parameter `param`'s value; `tail`: its last bytes, `pending`: its longest suffix that
    /// is a proper prefix of a collapse pattern, `utf8`: continuation bytes still due,
    /// `raw`: the value is raw text (`pending` is followed), `number`: the state of a
    /// [`NumberValue`] (None once it cannot be followed).
    Value {
        param: usize,
        tail: Vec<u8>,
        pending: Vec<u8>,
        utf8: u8,
        raw: bool,
        number: Option<NumberValueState>,
    },
}

#[derive(Debug, Clone)]
struct XmlState {
    /// Parameters before this index can no longer be written.
    next: usize,
    phase: XmlPhase,
}

/// Follows one request's output and names its grammar state.
#[derive(Clone)]
pub struct StateKeyer {
    grammar_id: [u8; 16],
    plan: Option<Arc<Plan>>,
    text_level: bool,
    family: u8,
    count: u32,
    hasher: Hash128,
    quote_digest: Option<[u8; 16]>,
    /// The digest before a tracked number's first byte; with the number's state, its key.
    number_digest: Option<[u8; 16]>,
    /// The digest at the start of a raw XML value, its key wherever the value's state is canonical.
    value_digest: Option<[u8; 16]>,
    xml: Option<XmlState>,
    section: Option<SectionState>,
    mode: Mode,
    // prefix phase
    prefix_i: usize,
    prefix_buf: Vec<u8>,
    prefix_in_body: bool,
    // dispatch phase
    pending: Vec<u8>,
    utf8: u8,
    buf: Vec<u8>,
    tag: usize,
    scan: Option<JsonScan>,
    const_left: Vec<u8>,
    /// Reading the lead of a JSON content (see [`Content::Json`]).
    in_lead: bool,
    /// Bytes (4 per token when keyed by ids) read since the anchors were lost.
    lost_bytes: usize,
}

impl StateKeyer {
    pub fn new(plan: &KeyPlan) -> Self {
        let mut keyer = StateKeyer {
            grammar_id: plan.grammar_id,
            plan: plan.plan.clone(),
            text_level: plan.text_level,
            family: if plan.text_level {
                family::START_TEXT
            } else {
                family::START_IDS
            },
            count: 0,
            hasher: Hash128::new(),
            quote_digest: None,
            number_digest: None,
            value_digest: None,
            xml: None,
            section: None,
            mode: Mode::Lost,
            prefix_i: 0,
            prefix_buf: Vec::new(),
            prefix_in_body: false,
            pending: Vec::new(),
            utf8: 0,
            buf: Vec::new(),
            tag: 0,
            scan: None,
            const_left: Vec::new(),
            in_lead: false,
            lost_bytes: 0,
        };
        if keyer.plan.is_some() {
            keyer.mode = Mode::Prefix;
            keyer.settle_prefix();
        }
        keyer
    }

    /// The key of the current state: grammar id, anchor kind, calls (capped at 1), digest.
    pub fn key(&self) -> [u8; KEY_LEN] {
        let number = self.scan.as_ref().and_then(JsonScan::number_state);
        let digest = match (&self.scan, self.quote_digest, number, self.number_digest) {
            (Some(scan), Some(quote), _, _) if scan.clean_in_collapsible_string() => quote,
            (_, _, Some(state), Some(start)) => {
                let mut h = Hash128::new();
                h.write(&start);
                h.write(b"\x00number\x00");
                h.write(&[state]);
                h.digest()
            }
            _ => match (&self.xml, self.value_digest) {
                (
                    Some(XmlState {
                        phase:
                            XmlPhase::Value {
                                number: Some(at), ..
                            },
                        ..
                    }),
                    Some(start),
                ) => {
                    let mut h = Hash128::new();
                    h.write(&start);
                    h.write(b"\x00number value\x00");
                    h.write(&at.code());
                    h.digest()
                }
                (
                    Some(XmlState {
                        phase:
                            XmlPhase::Value {
                                pending,
                                utf8,
                                raw: true,
                                ..
                            },
                        ..
                    }),
                    Some(start),
                ) if *utf8 == 0 => {
                    if pending.is_empty() {
                        start
                    } else {
                        let mut h = Hash128::new();
                        h.write(&start);
                        h.write(b"\x00pending\x00");
                        h.write(pending);
                        h.digest()
                    }
                }
                _ => self.hasher.digest(),
            },
        };
        let mut key = [0u8; KEY_LEN];
        key[..16].copy_from_slice(&self.grammar_id);
        key[16] = self.family;
        key[17] = u8::from(self.count > 0 && !self.inside_tag());
        key[18..].copy_from_slice(&digest);
        key
    }

    /// From a trigger to the tag's end the rest of the output does not depend on how many calls
    /// came before: after this tag ends there is at least one either way, and a tag that stops
    /// after the first call has no second one. So the call count leaves the key there.
    fn inside_tag(&self) -> bool {
        matches!(
            self.mode,
            Mode::Begin | Mode::Content | Mode::End | Mode::Section
        )
    }

    /// Whether the current key is worth a cache lookup: false once more than
    /// [`LOST_KEY_BYTES`] have been read without anchors, where only a replay of the same output
    /// could share the key and storing its masks would crowd out ones that are reused.
    pub fn cacheable(&self) -> bool {
        self.mode != Mode::Lost || self.lost_bytes <= LOST_KEY_BYTES
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether keys follow the text (false: token ids, for token-level grammars).
    pub fn text_level(&self) -> bool {
        self.text_level
    }

    pub fn family(&self) -> u8 {
        self.family
    }

    /// Calls completed so far, as far as the keyer followed them.
    pub fn calls(&self) -> u32 {
        self.count
    }

    /// Feeds one accepted token: its id and its bytes (not for stop tokens).
    pub fn accept(&mut self, token: u32, bytes: &[u8]) {
        if !self.text_level {
            self.hasher.write(&token.to_le_bytes());
            self.lost_bytes += 4;
            return;
        }
        if self.mode == Mode::Lost {
            self.hasher.write(bytes);
            self.lost_bytes += bytes.len();
            return;
        }
        if self.mode == Mode::Free
            && self.pending.is_empty()
            && self.utf8 == 0
            && self.free_fast(bytes)
        {
            return; // plain free text: the state stays at the anchor
        }
        for (i, &b) in bytes.iter().enumerate() {
            if self.mode == Mode::Lost {
                self.hasher.write(&bytes[i..]);
                self.lost_bytes += bytes.len() - i;
                return;
            }
            self.hasher.write(&[b]);
            self.byte(b);
        }
    }

    fn plan(&self) -> Arc<Plan> {
        self.plan
            .clone()
            .expect("modes other than Lost have a plan")
    }

    fn free_fast(&self, bytes: &[u8]) -> bool {
        let plan = self.plan.as_ref().expect("free mode has a plan");
        !bytes.iter().any(|b| plan.firsts.contains(b)) && tail_need(bytes) == 0
    }

    fn anchor(&mut self, family: u8) {
        self.family = family;
        self.hasher = Hash128::new();
        self.quote_digest = None;
        self.number_digest = None;
        self.value_digest = None;
    }

    fn lose(&mut self) {
        self.mode = Mode::Lost;
        self.scan = None;
        self.xml = None;
        self.section = None;
    }

    /// The tags `self.tag` indexes: a section's calls while inside one, else the plan's tags.
    fn tags(&self) -> Arc<Vec<TagSpec>> {
        match &self.section {
            Some(s) if s.in_call => s.section.tags.clone(),
            _ => self.plan().tags.clone(),
        }
    }

    /// The current tag as written into keys: a section's call is told apart from the plan's tags.
    fn tag_id(&self) -> u64 {
        match &self.section {
            Some(s) if s.in_call => ((s.outer as u64 + 1) << 32) | self.tag as u64,
            _ => self.tag as u64,
        }
    }

    fn byte(&mut self, b: u8) {
        match self.mode {
            Mode::Prefix => self.prefix_byte(b),
            Mode::Free => self.free_byte(b),
            Mode::Begin | Mode::Between => {
                self.buf.push(b);
                self.match_begin();
            }
            Mode::Content => self.content_byte(b),
            Mode::End => self.end_byte(b),
            Mode::Section => self.section_byte(b),
            Mode::Done => self.lose(),
            Mode::Lost => {}
        }
    }

    // -- prefix ---------------------------------------------------------------------------------

    fn prefix_byte(&mut self, b: u8) {
        let plan = self.plan();
        match &plan.prefix[self.prefix_i] {
            Prefix::Ws => {
                if is_ws(b) {
                    return;
                }
                self.prefix_i += 1;
                self.settle_prefix();
                if self.mode == Mode::Prefix {
                    // the next prefix element starts at this byte (it cannot start with
                    // whitespace: checked by the plan)
                    self.prefix_byte(b);
                    return;
                }
                // the dispatch started at this byte: anchor before it
                self.anchor(self.family);
                self.hasher.write(&[b]);
                self.buf.push(b);
                self.match_begin();
            }
            Prefix::Const(text) => {
                self.prefix_buf.push(b);
                if !text.starts_with(&self.prefix_buf) {
                    self.lose();
                } else if self.prefix_buf.len() == text.len() {
                    self.prefix_i += 1;
                    self.settle_prefix();
                }
            }
            Prefix::TextTag { begin, end } => {
                self.prefix_buf.push(b);
                if !self.prefix_in_body {
                    if !begin.starts_with(&self.prefix_buf) {
                        self.lose();
                    } else if self.prefix_buf.len() == begin.len() {
                        self.prefix_in_body = true;
                        self.prefix_buf.clear();
                    }
                } else if self.prefix_buf.ends_with(end) {
                    self.prefix_i += 1;
                    self.settle_prefix();
                } else if self.prefix_buf.len() > 2 * end.len() + 64 {
                    let keep = self.prefix_buf.len() - end.len();
                    self.prefix_buf.drain(..keep);
                }
            }
        }
    }

    fn settle_prefix(&mut self) {
        let plan = self.plan();
        self.prefix_buf.clear();
        self.prefix_in_body = false;
        while let Some(p) = plan.prefix.get(self.prefix_i) {
            match p {
                Prefix::Const(text) if text.is_empty() => self.prefix_i += 1,
                Prefix::TextTag { begin, .. } if begin.is_empty() => {
                    self.prefix_in_body = true;
                    return;
                }
                _ => return,
            }
        }
        self.enter_dispatch();
    }

    // -- dispatch -------------------------------------------------------------------------------

    fn enter_dispatch(&mut self) {
        let plan = self.plan();
        self.buf.clear();
        match plan.dispatch {
            Dispatch::Triggered { .. } => {
                self.mode = Mode::Free;
                self.anchor(family::FREE);
            }
            Dispatch::Separator { .. } => {
                self.mode = Mode::Between;
                self.anchor(family::AFTER);
            }
        }
    }

    fn free_byte(&mut self, b: u8) {
        let plan = self.plan();
        self.utf8 = if self.utf8 > 0 {
            self.utf8 - 1
        } else {
            utf8_len(b)
        };
        self.pending.push(b);
        while !self.pending.is_empty()
            && !plan.patterns.iter().any(|p| p.starts_with(&self.pending))
        {
            self.pending.remove(0);
        }
        let Dispatch::Triggered { triggers, excludes } = &plan.dispatch else {
            unreachable!("free text belongs to triggered_tags")
        };
        if triggers.contains(&self.pending) {
            self.mode = Mode::Begin;
            self.buf = std::mem::take(&mut self.pending);
            self.match_begin();
        } else if excludes.contains(&self.pending) {
            self.lose();
        } else if self.pending.is_empty() && self.utf8 == 0 {
            self.anchor(family::FREE);
        }
    }

    fn match_begin(&mut self) {
        let plan = self.plan();
        let lead: &[u8] = match &plan.dispatch {
            Dispatch::Separator { separator } if self.mode == Mode::Between && self.count > 0 => {
                separator
            }
            _ => b"",
        };
        let (mut candidates, complete) = begin_candidates(&self.buf, lead, &plan.tags);
        let mut suffix_done = false;
        if let (Some(suffix), Mode::Between) = (&plan.suffix, self.mode) {
            if suffix.starts_with(&self.buf) {
                candidates += 1;
                suffix_done = suffix.len() == self.buf.len();
            }
        }
        match (candidates, complete, suffix_done) {
            (0, _, _) => self.lose(),
            (1, Some(i), false) => self.enter_content(i),
            (1, None, true) => {
                // the section's end: nothing may follow, whatever the calls were
                self.mode = Mode::Done;
                self.buf.clear();
                self.anchor(family::AFTER);
                self.hasher.write(b"\x00suffix done\x00");
            }
            (_, Some(_), _) | (_, _, true) => self.lose(), // one string is a prefix of another
            _ => {}
        }
    }

    fn enter_content(&mut self, tag: usize) {
        let tags = self.tags();
        self.tag = tag;
        self.buf.clear();
        match &tags[tag].content {
            None => self.lose(),
            Some(Content::Section(section)) => {
                if self.section.is_some() {
                    return self.lose(); // sections inside sections are not followed
                }
                self.section = Some(SectionState {
                    outer: tag,
                    section: section.clone(),
                    calls: 0,
                    in_call: false,
                });
                self.section_anchor();
            }
            Some(Content::Json {
                schema,
                collapse,
                lead,
            }) => {
                self.mode = Mode::Content;
                self.in_lead = lead.is_some();
                self.scan = Some(JsonScan::new(schema.clone(), *collapse));
            }
            Some(Content::Const(text)) => {
                self.mode = Mode::Content;
                self.const_left = text.clone();
                if self.const_left.is_empty() {
                    self.enter_end();
                }
            }
            Some(Content::AnyText) => self.mode = Mode::Content,
            Some(Content::Xml(_)) => {
                self.mode = Mode::Content;
                self.xml = Some(XmlState {
                    next: 0,
                    phase: XmlPhase::Gap { buf: Vec::new() },
                });
            }
        }
    }

    /// A JSON anchor: `label`, the tag and, when `at_position`, the scanner's position.
    fn json_anchor(&mut self, label: &[u8], at_position: bool) {
        let tag = self.tag_id();
        self.anchor(family::JSON);
        self.hasher.write(label);
        self.hasher.write(&tag.to_le_bytes());
        if let (true, Some(scan)) = (at_position, &self.scan) {
            scan.position(&mut self.hasher);
        }
    }

    fn content_byte(&mut self, b: u8) {
        let tags = self.tags();
        let tag = &tags[self.tag];
        match &tag.content {
            Some(Content::Json {
                lead: Some(lead), ..
            }) if self.in_lead => {
                self.buf.push(b);
                if self.buf.ends_with(lead) {
                    self.in_lead = false;
                    self.buf.clear();
                } else if self.buf.len() > lead.len() + 64 {
                    self.lose(); // longer than any id: not the shape the plan expects
                }
            }
            Some(Content::Json { .. }) => {
                let scan = self.scan.as_mut().expect("JSON content has a scanner");
                let event = scan.feed(b);
                let (failed, done, scan_end) = (scan.failed, scan.done, scan.value_end);
                if failed {
                    self.lose();
                    return;
                }
                match event {
                    Event::Open => self.quote_digest = Some(self.hasher.digest()),
                    Event::Close => {
                        let seed = self
                            .quote_digest
                            .take()
                            .expect("a closing quote follows an opening one");
                        self.hasher = Hash128::new();
                        self.hasher.write(b"\x00closed string\x00");
                        self.hasher.write(&seed);
                    }
                    Event::NumberStart => {
                        // the value's start, keyed by its position; the number's own text is
                        // then named by its DFA state
                        self.json_anchor(b"\x00json value start\x00", true);
                        self.number_digest = Some(self.hasher.digest());
                        self.hasher.write(&[b]);
                    }
                    Event::None => {}
                }
                if done {
                    // a complete root value: what follows is the tag's end, whatever it held
                    self.json_anchor(b"\x00json done\x00", false);
                    self.scan = None;
                    self.enter_end();
                } else if let Some(end) = scan_end {
                    // a member's value ended inside product containers: the rest depends on
                    // the tag and the position, not on the values written
                    self.json_anchor(b"\x00json value end\x00", true);
                    if end == ValueEnd::Before {
                        self.hasher.write(&[b]);
                    }
                }
            }
            Some(Content::Const(_)) => {
                if self.const_left.first() != Some(&b) {
                    self.lose();
                    return;
                }
                self.const_left.remove(0);
                if self.const_left.is_empty() {
                    self.enter_end();
                }
            }
            Some(Content::AnyText) => {
                self.buf.push(b);
                let end = &tag.ends[0];
                if self.buf.ends_with(end) {
                    self.tag_done();
                } else if self.buf.len() > 2 * end.len() + 64 {
                    let keep = self.buf.len() - end.len();
                    self.buf.drain(..keep);
                }
            }
            Some(Content::Xml(call)) => self.xml_byte(call, b),
            Some(Content::Section(_)) | None => self.lose(),
        }
    }

    // -- XML calls ------------------------------------------------------------------------------

    fn xml_byte(&mut self, call: &XmlCall, b: u8) {
        let Some(mut state) = self.xml.take() else {
            self.lose();
            return;
        };
        match &mut state.phase {
            XmlPhase::Gap { buf } => {
                if buf.is_empty() && is_ws(b) {
                    self.xml = Some(state);
                    return;
                }
                buf.push(b);
                // a later parameter, up to the first required one; the end once none is left
                let mut last = state.next;
                while last < call.params.len() && !call.params[last].required {
                    last += 1;
                }
                let params = (state.next..call.params.len().min(last + 1))
                    .map(|i| (Some(i), &call.params[i].head));
                let ends = call.end_rests.iter().map(|e| (None, e));
                let ends = ends.filter(|_| last == call.params.len());
                let mut candidates = 0;
                let mut complete = None;
                for (param, text) in params.chain(ends) {
                    if text.starts_with(buf) {
                        candidates += 1;
                        if text.len() == buf.len() {
                            complete = Some(param);
                        }
                    }
                }
                match (candidates, complete) {
                    (0, _) => return self.lose(),
                    (1, Some(None)) => return self.tag_done(),
                    (1, Some(Some(param))) => {
                        state.next = param + 1;
                        state.phase = XmlPhase::Open {
                            param,
                            piece: 0,
                            matched: 0,
                        };
                        self.xml = Some(state);
                        self.xml_open_done(call);
                        return;
                    }
                    (_, Some(_)) => return self.lose(),
                    _ => {}
                }
            }
            XmlPhase::Open {
                param,
                piece,
                matched,
            } => {
                let (ws, text) = &call.params[*param].tail[*piece];
                if *matched == 0 && *ws && is_ws(b) {
                    self.xml = Some(state);
                    return;
                }
                if text[*matched] != b {
                    return self.lose();
                }
                *matched += 1;
                if *matched == text.len() {
                    *piece += 1;
                    *matched = 0;
                    self.xml = Some(state);
                    self.xml_open_done(call);
                    return;
                }
            }
            XmlPhase::Value {
                param,
                tail,
                pending,
                utf8,
                number,
                ..
            } => {
                let spec = &call.params[*param];
                if let (Some(shape), Some(at)) = (&spec.number, *number) {
                    *number = shape.step(at, b, &spec.close);
                }
                tail.push(b);
                if tail.ends_with(&spec.close) {
                    // the value cannot hold its close, and the close is border-free: the
                    // parameter ends here, and what is left of the call depends only on which
                    // tag and which parameter this is
                    let tag = self.tag_id();
                    let param = *param as u64;
                    state.phase = XmlPhase::Gap { buf: Vec::new() };
                    self.xml = Some(state);
                    self.anchor(family::XML);
                    self.hasher.write(b"\x00xml parameter end\x00");
                    self.hasher.write(&tag.to_le_bytes());
                    self.hasher.write(&param.to_le_bytes());
                    return;
                }
                if tail.len() > spec.close.len() {
                    tail.remove(0);
                }
                if let Some(patterns) = &spec.collapse {
                    *utf8 = if *utf8 > 0 { *utf8 - 1 } else { utf8_len(b) };
                    pending.push(b);
                    while !pending.is_empty() && !patterns.iter().any(|p| p.starts_with(pending)) {
                        pending.remove(0);
                    }
                }
            }
        }
        self.xml = Some(state);
    }

    /// After a piece of a parameter's opening: the next piece, or the value's start.
    fn xml_open_done(&mut self, call: &XmlCall) {
        let Some(state) = self.xml.as_mut() else {
            return;
        };
        let XmlPhase::Open { param, piece, .. } = state.phase else {
            return;
        };
        let spec = &call.params[param];
        if piece < spec.tail.len() {
            return;
        }
        state.phase = XmlPhase::Value {
            param,
            tail: Vec::new(),
            pending: Vec::new(),
            utf8: 0,
            raw: spec.collapse.is_some(),
            number: spec.number.as_ref().map(|_| NumberValueState::Lead(0)),
        };
        // the value's start: what is left is this parameter's value, its close and the rest of
        // the call, whichever parameters came before
        let tag = self.tag_id();
        self.anchor(family::XML);
        self.hasher.write(b"\x00xml value\x00");
        self.hasher.write(&tag.to_le_bytes());
        self.hasher.write(&(param as u64).to_le_bytes());
        if spec.collapse.is_some() || spec.number.is_some() {
            self.value_digest = Some(self.hasher.digest());
        }
    }

    fn enter_end(&mut self) {
        let tags = self.tags();
        let ends = &tags[self.tag].ends;
        self.mode = Mode::End;
        self.buf.clear();
        if ends.iter().any(Vec::is_empty) {
            if ends.len() == 1 {
                self.tag_done();
            } else {
                self.lose(); // the tag may end here or go on with another end string
            }
        }
    }

    fn end_byte(&mut self, b: u8) {
        let tags = self.tags();
        let ends = &tags[self.tag].ends;
        self.buf.push(b);
        let candidates = ends.iter().filter(|e| e.starts_with(&self.buf)).count();
        if candidates == 0 {
            self.lose();
        } else if ends.contains(&self.buf) {
            if candidates > 1 {
                self.lose();
            } else {
                self.tag_done();
            }
        }
    }

    fn tag_done(&mut self) {
        if let Some(state) = self.section.as_mut().filter(|s| s.in_call) {
            state.in_call = false;
            state.calls += 1;
            self.tag = state.outer;
            self.scan = None;
            self.xml = None;
            self.section_anchor();
            return;
        }
        self.section = None;
        let plan = self.plan();
        self.count += 1;
        self.buf.clear();
        self.scan = None;
        self.xml = None;
        match plan.dispatch {
            Dispatch::Triggered { .. } => {
                self.mode = Mode::Free;
                self.pending.clear();
                self.utf8 = 0;
                self.anchor(family::FREE);
            }
            Dispatch::Separator { .. } => {
                self.mode = Mode::Between;
                self.anchor(family::AFTER);
            }
        }
    }
}

impl StateKeyer {
    /// At a section's start or after one of its calls: what follows depends on the section's tag
    /// and on whether a call came before, nothing else.
    fn section_anchor(&mut self) {
        let Some(state) = &self.section else {
            return;
        };
        let (outer, called) = (state.outer as u64, state.calls > 0);
        self.mode = Mode::Section;
        self.buf.clear();
        self.anchor(family::SECTION);
        self.hasher.write(b"\x00section\x00");
        self.hasher.write(&outer.to_le_bytes());
        self.hasher.write(&[u8::from(called)]);
    }

    /// Between a section's calls: a separator (after a call) and a call's begin, or the
    /// section tag's own end; the match must be unique and complete, as for begins.
    fn section_byte(&mut self, b: u8) {
        let Some(state) = self.section.clone() else {
            return self.lose();
        };
        let plan = self.plan();
        self.buf.push(b);
        let lead: &[u8] = if state.calls > 0 {
            &state.section.separator
        } else {
            b""
        };
        let (mut candidates, begun) = begin_candidates(&self.buf, lead, &state.section.tags);
        let mut complete = begun.map(Some);
        for end in &plan.tags[state.outer].ends {
            if end.starts_with(&self.buf) {
                candidates += 1;
                if end.len() == self.buf.len() {
                    complete = Some(None);
                }
            }
        }
        match (candidates, complete) {
            (0, _) => self.lose(),
            (1, Some(Some(i))) => {
                if let Some(s) = self.section.as_mut() {
                    s.in_call = true;
                }
                self.enter_content(i);
            }
            (1, Some(None)) => {
                self.section = None;
                self.tag = state.outer;
                self.tag_done();
            }
            (_, Some(_)) => self.lose(),
            _ => {}
        }
    }
}

/// How many of `tags` `buf` may still be the start of (`lead`, then the tag's begin), and the
/// one it spells completely, if any.
fn begin_candidates(buf: &[u8], lead: &[u8], tags: &[TagSpec]) -> (usize, Option<usize>) {
    let mut candidates = 0;
    let mut complete = None;
    for (i, tag) in tags.iter().enumerate() {
        let fits = if buf.len() <= lead.len() {
            lead.starts_with(buf)
        } else {
            buf.starts_with(lead) && tag.begin.starts_with(&buf[lead.len()..])
        };
        if fits {
            candidates += 1;
            if lead.len() + tag.begin.len() == buf.len() {
                complete = Some(i);
            }
        }
    }
    (candidates, complete)
}

/// Continuation bytes still missing from the last UTF-8 character of `bytes`.
fn tail_need(bytes: &[u8]) -> u8 {
    let mut i = bytes.len();
    while i > 0 && (0x80..0xC0).contains(&bytes[i - 1]) && bytes.len() - i < 3 {
        i -= 1;
    }
    if i == 0 {
        return 0;
    }
    let want = utf8_len(bytes[i - 1]);
    let have = (bytes.len() - i) as u8;
    want.saturating_sub(have)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GID: [u8; 16] = [7; 16];

    fn hermes(extra: Value) -> Value {
        let mut fmt = json!({
            "type": "triggered_tags",
            "triggers": ["<tool_call>"],
            "tags": [
                {"type": "tag", "begin": "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ",
                 "content": {"type": "json_schema", "json_schema": {"type": "object", "properties": {
                     "city": {"type": "string"}, "days": {"type": "integer"}}}},
                 "end": "}\n</tool_call>"},
                {"type": "tag", "begin": "<tool_call>\n{\"name\": \"get_time\", \"arguments\": ",
                 "content": {"type": "json_schema", "json_schema": {"type": "object"}},
                 "end": "}\n</tool_call>"}
            ],
            "excludes": ["<think>", "</think>"]
        });
        if let (Value::Object(f), Value::Object(e)) = (&mut fmt, extra) {
            f.extend(e);
        }
        json!({"type": "structural_tag", "format": fmt})
    }

    fn feed(k: &mut StateKeyer, text: &str) -> Vec<[u8; KEY_LEN]> {
        // one character per "token", to cross every marker boundary
        text.chars()
            .map(|c| {
                k.accept(0, c.to_string().as_bytes());
                k.key()
            })
            .collect()
    }

    #[test]
    fn plans() {
        let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
        assert_eq!(plan.describe(), "triggered(prefix=[], tags=[json,json])");
        let seq = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
            {"type": "regex", "pattern": "[ \\t\\n]{0,3}"},
            {"type": "tags_with_separator", "tags": hermes(json!({}))["format"]["tags"], "separator": "\n"}]}});
        assert_eq!(
            KeyPlan::from_tag(GID, &seq).describe(),
            "separator(prefix=[ws], tags=[json,json])"
        );
        let token = json!({"type": "structural_tag", "format": {"type": "token_triggered_tags", "trigger_tokens": [1], "tags": []}});
        assert_eq!(
            KeyPlan::from_tag(GID, &token).describe(),
            "whole output (tokens)"
        );
        let or = json!({"type": "structural_tag", "format": {"type": "or", "elements": []}});
        assert_eq!(
            KeyPlan::from_tag(GID, &or).describe(),
            "whole output (text)"
        );
        for (p, ok) in [
            ("[ \\t\\n]{0,3}", true),
            ("\\s*", true),
            ("[ ]+", true),
            ("[a ]*", false),
            ("[ ]", false),
            ("x*", false),
        ] {
            assert_eq!(is_ws_regex(p), ok, "{p}");
        }
    }

    #[test]
    fn free_text_shares_one_key_and_calls_return_to_it() {
        let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
        let mut k = StateKeyer::new(&plan);
        let start = k.key();
        let keys = feed(&mut k, "Hello there, 東京.");
        assert!(keys.iter().all(|key| *key == start));
        feed(
            &mut k,
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa",
        );
        assert_eq!(k.mode(), Mode::Content);
        let in_string = k.key();
        feed(&mut k, "ris and more");
        assert_eq!(k.key(), in_string, "string interiors collapse");
        feed(&mut k, "\", \"days\": 3}}\n</tool_call>");
        assert_eq!((k.mode(), k.calls()), (Mode::Free, 1));
        let after = k.key();
        assert_ne!(after, start, "the call count is part of the key");
        feed(&mut k, "more text");
        assert_eq!(k.key(), after);
    }

    #[test]
    fn a_string_is_forgotten_after_its_closing_quote() {
        let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
        let run = |city: &str| {
            let mut k = StateKeyer::new(&plan);
            feed(&mut k, &format!("<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\", \"days"));
            k.key()
        };
        assert_eq!(
            run("Paris"),
            run("A much longer \\\"quoted\\\" \\u00e9 name")
        );
    }

    #[test]
    fn partial_markers_and_characters_are_not_canonical() {
        let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
        let mut k = StateKeyer::new(&plan);
        let start = k.key();
        k.accept(0, b"ok <tool");
        assert_ne!(k.key(), start);
        k.accept(0, b"s> fine");
        assert_eq!(k.key(), start);
        k.accept(0, &"é".as_bytes()[..1]);
        assert_ne!(k.key(), start);
        k.accept(0, &"é".as_bytes()[1..]);
        assert_eq!(k.key(), start);
        // inside a string, a pending escape is not canonical either
        feed(
            &mut k,
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"",
        );
        let quote = k.key();
        k.accept(0, b"a\\");
        assert_ne!(k.key(), quote);
        k.accept(0, b"n");
        assert_eq!(k.key(), quote);
    }

    #[test]
    fn keys_do_not_depend_on_token_boundaries() {
        let plan = KeyPlan::from_tag(GID, &hermes(json!({})));
        let text = "Hi <tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"a\": [1, {\"b\": null}]}}\n</tool_call> bye";
        let mut a = StateKeyer::new(&plan);
        feed(&mut a, text);
        let mut b = StateKeyer::new(&plan);
        for chunk in text.as_bytes().chunks(5) {
            b.accept(0, chunk);
        }
        assert_eq!(a.key(), b.key());
        assert_eq!(a.calls(), 1);
    }

    #[test]
    fn lost_structure_still_keys_by_text() {
        let mut tag = hermes(json!({}));
        tag["format"]["tags"][0]["content"]["style"] = json!("qwen_xml");
        let plan = KeyPlan::from_tag(GID, &tag);
        let mut k = StateKeyer::new(&plan);
        feed(
            &mut k,
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ",
        );
        assert_eq!(k.mode(), Mode::Lost);
        let before = k.key();
        k.accept(0, b"x");
        assert_ne!(k.key(), before);
    }

    #[test]
    fn token_level_grammars_key_by_ids() {
        let plan = KeyPlan::opaque(GID);
        let mut a = StateKeyer::new(&plan);
        let mut b = StateKeyer::new(&plan);
        a.accept(1, b"x");
        b.accept(2, b"x");
        assert_ne!(a.key(), b.key());
        assert_eq!(a.family(), family::START_IDS);
    }

    #[test]
    fn separator_format_with_whitespace_prefix() {
        let tags = hermes(json!({}))["format"]["tags"].clone();
        let tag = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
            {"type": "regex", "pattern": "[ \\t\\n]{0,3}"},
            {"type": "tags_with_separator", "tags": tags, "separator": "\n", "at_least_one": true}]}});
        let plan = KeyPlan::from_tag(GID, &tag);
        let call = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
        let mut keys = Vec::new();
        for lead in ["", "  "] {
            let mut k = StateKeyer::new(&plan);
            feed(&mut k, lead);
            feed(&mut k, &format!("{call}\n{call}"));
            assert_eq!((k.mode(), k.calls()), (Mode::Between, 2));
            keys.push(k.key());
        }
        assert_eq!(keys[0], keys[1]);
    }

    #[test]
    fn reasoning_prefix() {
        let tag = json!({"type": "structural_tag", "format": {"type": "sequence", "elements": [
            {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"},
            {"type": "const_string", "value": "\n\n"},
            hermes(json!({}))["format"]]}});
        let plan = KeyPlan::from_tag(GID, &tag);
        let mut k = StateKeyer::new(&plan);
        feed(&mut k, "<think>maybe <tool_call> here</think>\n\n");
        assert_eq!((k.mode(), k.family()), (Mode::Free, family::FREE));
    }

    fn xml_param(name: &str, value: Value) -> Value {
        json!({"type": "sequence", "elements": [
            {"type": "regex", "pattern": "[ \\t\\r\\n]*"},
            {"type": "const_string", "value": format!("<parameter={name}>")},
            value,
            {"type": "const_string", "value": "</parameter>"},
            {"type": "regex", "pattern": "[ \\t\\r\\n]*"}]})
    }

    fn raw_text() -> Value {
        json!({"type": "any_text", "excludes": ["</function>", "</parameter>", "</tool_call>",
            "<function=", "<parameter=", "<tool_call>"], "max_chars": null})
    }

    fn padded(value: Value) -> Value {
        let nl = json!({"type": "optional", "content": {"type": "const_string", "value": "\n"}});
        json!({"type": "sequence", "elements": [nl, value, nl]})
    }

    /// qwen3_coder as `grammar.structural_tag` builds it: a required raw location, an optional
    /// enum unit, an optional integer days.
    fn qwen_xml(location: Value) -> Value {
        let unit = padded(json!({"type": "or", "elements": [
            {"type": "const_string", "value": "celsius"},
            {"type": "const_string", "value": "fahrenheit"}]}));
        let days = padded(
            json!({"type": "json_schema", "json_schema": {"type": "integer"},
            "style": "json", "excludes": []}),
        );
        json!({"type": "structural_tag", "format": {
            "type": "triggered_tags", "triggers": ["<tool_call>"],
            "tags": [{"type": "tag", "begin": "<tool_call>\n<function=get_weather>\n",
                "content": {"type": "sequence", "elements": [
                    xml_param("location", location),
                    {"type": "optional", "content": xml_param("unit", unit)},
                    {"type": "optional", "content": xml_param("days", days)}]},
                "end": "\n</function>\n</tool_call>"}],
            "excludes": ["<think>", "</think>"]}})
    }

    fn weather(location: &str, unit: Option<&str>, days: Option<u32>) -> String {
        let mut call = format!(
            "<tool_call>\n<function=get_weather>\n<parameter=location>\n{location}\n</parameter>\n"
        );
        if let Some(unit) = unit {
            call += &format!("<parameter=unit>\n{unit}\n</parameter>\n");
        }
        if let Some(days) = days {
            call += &format!("<parameter=days>\n{days}\n</parameter>\n");
        }
        call + "</function>\n</tool_call>"
    }

    #[test]
    fn xml_plans_need_a_provable_value_end() {
        let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
        assert_eq!(plan.describe(), "triggered(prefix=[], tags=[xml])");
        // a regex value may hold the close: not followed
        let regex = qwen_xml(json!({"type": "regex", "pattern": ".*"}));
        assert_eq!(
            KeyPlan::from_tag(GID, &regex).describe(),
            "triggered(prefix=[], tags=[unknown])"
        );
        // raw text that does not exclude the close either
        let loose = qwen_xml(json!({"type": "any_text", "excludes": ["<tool_call>"]}));
        assert_eq!(
            KeyPlan::from_tag(GID, &loose).describe(),
            "triggered(prefix=[], tags=[unknown])"
        );
        // JSON whose strings may hold `<`, and JSON that excludes it
        let json_value = |excludes: Value| {
            qwen_xml(padded(
                json!({"type": "json_schema", "style": "json", "excludes": excludes,
                "json_schema": {"type": "array", "items": {"type": "string"}}}),
            ))
        };
        assert!(KeyPlan::from_tag(GID, &json_value(json!([])))
            .describe()
            .ends_with("[unknown])"));
        assert!(KeyPlan::from_tag(GID, &json_value(json!(["<"])))
            .describe()
            .ends_with("[xml])"));
        assert!(border_free(b"</parameter>"));
        assert!(!border_free(b"abab"));
    }

    #[test]
    fn xml_values_are_forgotten_at_their_close() {
        let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
        let after_location = |location: &str| {
            let mut k = StateKeyer::new(&plan);
            let call = weather(location, None, None);
            let cut = call.find("</parameter>").unwrap() + "</parameter>".len();
            feed(&mut k, &call[..cut]);
            assert_eq!((k.mode(), k.family()), (Mode::Content, family::XML));
            k.key()
        };
        assert_eq!(
            after_location("Paris"),
            after_location("Rio de Janeiro, <b>BR</b>")
        );
        // the value's interior shares the key of its start where nothing is half matched
        let mut k = StateKeyer::new(&plan);
        feed(
            &mut k,
            "<tool_call>\n<function=get_weather>\n<parameter=location>",
        );
        let start = k.key();
        feed(&mut k, "\nSão Paulo ");
        assert_eq!(k.key(), start);
        k.accept(0, b"</param");
        assert_ne!(k.key(), start, "a half-written close is not canonical");
        k.accept(0, b"x ");
        assert_eq!(k.key(), start);
        k.accept(0, &"é".as_bytes()[..1]);
        assert_ne!(k.key(), start);
    }

    #[test]
    fn xml_keys_depend_on_the_parameter_not_on_those_before() {
        let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
        let after_days = |call: String| {
            let mut k = StateKeyer::new(&plan);
            let cut = call.rfind("</parameter>").unwrap() + "</parameter>".len();
            feed(&mut k, &call[..cut]);
            k.key()
        };
        let a = after_days(weather("Oslo", Some("celsius"), Some(3)));
        let b = after_days(weather("Lima", None, Some(12)));
        assert_eq!(a, b);
        let c = after_days(weather("Lima", Some("celsius"), None));
        assert_ne!(a, c, "after unit, days may still follow");
        // the call's end returns to the free text with one call done
        let mut k = StateKeyer::new(&plan);
        feed(&mut k, &weather("Oslo", Some("celsius"), Some(3)));
        assert_eq!(
            (k.mode(), k.family(), k.calls()),
            (Mode::Free, family::FREE, 1)
        );
        let mut other = StateKeyer::new(&plan);
        feed(&mut other, "Sure. ");
        feed(&mut other, &weather("Lima", None, None));
        assert_eq!(k.key(), other.key());
    }

    #[test]
    fn xml_openings_with_whitespace_pieces() {
        // GLM: <arg_key>k</arg_key> [ws] <arg_value>v</arg_value>
        let param = |name: &str| {
            json!({"type": "sequence", "elements": [
                {"type": "regex", "pattern": "[ \\t\\r\\n]*"},
                {"type": "const_string", "value": format!("<arg_key>{name}</arg_key>")},
                {"type": "regex", "pattern": "[ \\t\\r\\n]*"},
                {"type": "const_string", "value": "<arg_value>"},
                {"type": "any_text", "excludes": ["</arg_value>", "<arg_key>", "</tool_call>"]},
                {"type": "const_string", "value": "</arg_value>"},
                {"type": "regex", "pattern": "[ \\t\\r\\n]*"}]})
        };
        let tag = json!({"type": "structural_tag", "format": {
            "type": "triggered_tags", "triggers": ["<tool_call>"],
            "tags": [{"type": "tag", "begin": "<tool_call>f\n",
                "content": {"type": "sequence", "elements": [
                    {"type": "optional", "content": param("a")}, param("b")]},
                "end": "</tool_call>"}]}});
        let plan = KeyPlan::from_tag(GID, &tag);
        assert_eq!(plan.describe(), "triggered(prefix=[], tags=[xml])");
        let keys: Vec<_> = [
            "<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n<arg_key>b</arg_key> <arg_value>x",
            "<arg_key>b</arg_key><arg_value>yy",
        ]
        .iter()
        .map(|body| {
            let mut k = StateKeyer::new(&plan);
            feed(&mut k, &format!("<tool_call>f\n{body}"));
            assert_eq!(k.mode(), Mode::Content);
            k.key()
        })
        .collect();
        assert_eq!(keys[0], keys[1]);
        let mut k = StateKeyer::new(&plan);
        feed(
            &mut k,
            "<tool_call>f\n<arg_key>b</arg_key><arg_value>y</arg_value></tool_call>",
        );
        assert_eq!((k.mode(), k.calls()), (Mode::Free, 1));
    }

    #[test]
    fn utf8_tails() {
        assert_eq!(tail_need(b"abc"), 0);
        assert_eq!(tail_need(&"é".as_bytes()[..1]), 1);
        assert_eq!(tail_need(&"🦩".as_bytes()[..2]), 2);
        assert_eq!(tail_need("🦩".as_bytes()), 0);
        assert_eq!(tail_need(&[0x80, 0x80]), 0);
    }

    fn json_tag(schema: Value) -> Value {
        json!({"type": "structural_tag", "format": {
            "type": "triggered_tags", "triggers": ["<tool_call>"],
            "tags": [{"type": "tag", "begin": "<tool_call>\n{\"name\": \"f\", \"arguments\": ",
                "content": {"type": "json_schema", "json_schema": schema, "style": "json"},
                "end": "}\n</tool_call>"}]}})
    }

    fn key_after(plan: &KeyPlan, arguments: &str) -> [u8; KEY_LEN] {
        let mut k = StateKeyer::new(plan);
        feed(
            &mut k,
            &format!("<tool_call>\n{{\"name\": \"f\", \"arguments\": {arguments}"),
        );
        k.key()
    }

    fn flat_schema() -> Value {
        json!({"type": "object", "properties": {
            "q": {"type": "string", "maxLength": 40}, "n": {"type": "integer"},
            "x": {"type": "number"}, "b": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "pair": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
            "o": {"type": "object", "properties": {"a": {"type": "integer"}}}}})
    }

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
    fn section_tag() -> Value {
        let call = |name: &str| {
            json!({"type": "tag",
                "begin": format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n"),
                "content": {"type": "json_schema", "json_schema": flat_schema(), "style": "json"},
                "end": "\n```<｜tool▁call▁end｜>"})
        };
        json!({"type": "structural_tag", "format": {
            "type": "triggered_tags", "triggers": ["<｜tool▁calls▁begin｜>"],
            "tags": [{"type": "tag", "begin": "<｜tool▁calls▁begin｜>",
                "content": {"type": "tags_with_separator", "tags": [call("f"), call("g")],
                    "separator": "\n", "at_least_one": true, "stop_after_first": false},
                "end": "<｜tool▁calls▁end｜>"}]}})
    }

    #[test]
    fn sections_of_calls_anchor_between_their_calls() {
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

    #[test]
    fn xml_number_values_and_pending_closes() {
        let plan = KeyPlan::from_tag(GID, &qwen_xml(raw_text()));
        let at = |days: &str, rest: &str| {
            let mut k = StateKeyer::new(&plan);
            let call = weather("Paris", None, None);
            let head = &call[..call.find("</function>").unwrap()];
            feed(&mut k, &format!("{head}<parameter=days>{days}{rest}"));
            k.key()
        };
        assert_eq!(at("\n7", ""), at("\n2045", ""));
        assert_ne!(at("\n7", ""), at("\n", ""));
        assert_ne!(at("\n0", ""), at("\n7", ""));
        assert_eq!(at("\n7\n", "</para"), at("\n123\n", "</para"));
        assert_eq!(at("7", "</para"), at("123", "</para"));
        assert_eq!(
            at("7\n", "</para"),
            at("7", "</para"),
            "inside the close, the trail is behind"
        );
        assert_ne!(at("7\n", ""), at("7", ""));
        // raw text: the half-written close, not the text before it, names the state
        let raw = |text: &str| {
            let mut k = StateKeyer::new(&plan);
            feed(
                &mut k,
                &format!("<tool_call>\n<function=get_weather>\n<parameter=location>{text}"),
            );
            k.key()
        };
        assert_eq!(raw("\nParis\n</par"), raw("\nSão Paulo, BR\n</par"));
        assert_ne!(raw("\nParis\n</par"), raw("\nParis\n</pa"));
        assert_ne!(raw("\nParis\n</par"), raw("\nParis"));
    }
}
