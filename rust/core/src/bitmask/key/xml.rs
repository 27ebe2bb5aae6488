//! XML calls: reading a call's parameters from the tag, and following them byte by byte.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::is_ws;
use super::json::{number_kind_of, utf8_len, Event, JsonScan, Num, ValueEnd, ANNOTATIONS};
use super::keyer::{family, StateKeyer};
use super::plan::{content_of, elements_of, is_ws_node, kind_of, str_bytes, Content};
use crate::spec::ParamTags;

/// One XML parameter of a call: `head` (a constant naming it), then `tail` pieces (each
/// optionally after whitespace), the value, and `close`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct XmlParam {
    head: Vec<u8>,
    tail: Vec<(bool, Vec<u8>)>,
    close: Vec<u8>,
    required: bool,
    /// For a raw-text value (a bare `any_text` without `max_chars`): every string whose partial
    /// match at the end of the value makes its state differ from the value's start.
    collapse: Option<Vec<Vec<u8>>>,
    /// For a value that is a plain JSON number between optional constants (`\n7\n`).
    number: Option<NumberValue>,
    /// For a value that is a JSON object or array between optional whitespace constants.
    json: Option<JsonValue>,
}

/// A parameter value of the form `[ws] {...} or [...] [ws]`: the keyer follows the JSON with a
/// [`JsonScan`](super::json::JsonScan), so that after a member's value the key names the
/// parameter and the position in the containers, not the values written (as in JSON content).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct JsonValue {
    pub(super) schema: Arc<Value>,
    /// Whether a string's interior shares the key of its opening quote (no `excludes`).
    pub(super) collapse: bool,
}

impl JsonValue {
    fn of(value: &Value) -> Option<Self> {
        let container = |n: &Value| match content_of(n)? {
            // The scan takes a container at the root (anything else fails it).
            Content::Json {
                schema, collapse, ..
            } if matches!(
                schema.get("type").and_then(Value::as_str),
                Some("object" | "array")
            ) =>
            {
                Some(JsonValue { schema, collapse })
            }
            _ => None,
        };
        let (lead, json, trail) = between_optional_consts(value, container)?;
        lead.iter().chain(&trail).all(|&b| is_ws(b)).then_some(json)
    }
}

/// `value` as `[optional const] inner [optional const]` (either constant may be absent, and a
/// bare `inner` is the value itself): the constants' texts (empty where absent) and what `inner`
/// reads from the middle element.
fn between_optional_consts<T>(
    value: &Value,
    inner: impl Fn(&Value) -> Option<T>,
) -> Option<(Vec<u8>, T, Vec<u8>)> {
    let optional_const = |n: &Value| -> Option<Vec<u8>> {
        let content = (kind_of(n) == "optional").then(|| n.get("content"))??;
        (kind_of(content) == "const_string").then(|| str_bytes(content.get("value")))?
    };
    if let Some(middle) = inner(value) {
        return Some((Vec::new(), middle, Vec::new()));
    }
    if kind_of(value) != "sequence" {
        return None;
    }
    match elements_of(value) {
        [a, n, b] => Some((optional_const(a)?, inner(n)?, optional_const(b)?)),
        [a, n] if inner(n).is_some() => Some((optional_const(a)?, inner(n)?, Vec::new())),
        [n, b] => Some((Vec::new(), inner(n)?, optional_const(b)?)),
        [n] => Some((Vec::new(), inner(n)?, Vec::new())),
        _ => None,
    }
}

/// A parameter value of the form `[lead] number [trail]` (both constants optional), whose
/// language is regular and small: the keyer follows it with [`NumberValueState`].
#[derive(Debug, Clone, PartialEq)]
pub(super) struct NumberValue {
    lead: Vec<u8>,
    integer: bool,
    trail: Vec<u8>,
}

/// Where a [`NumberValue`] is, plus how much of the parameter's close follows it. Two values
/// in one state have the same continuations (a DFA of the value's language, then the close).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum NumberValueState {
    Lead(u8),
    Number(Num),
    Trail(u8),
    Close(u8),
}

impl NumberValueState {
    pub(super) fn code(self) -> [u8; 2] {
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
            number_kind_of(n.get("json_schema")?)
        };
        let (lead, integer, trail) = between_optional_consts(value, number)?;
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
pub(super) struct XmlCall {
    params: Vec<XmlParam>,
    end_rests: Vec<Vec<u8>>,
}

/// Whether `text` has no proper prefix that is also a suffix: then an occurrence of `text` can
/// not overlap the end of a string that does not contain it.
pub(super) fn border_free(text: &[u8]) -> bool {
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

/// The XML parameter syntaxes of the registered formats, each once: the tags the grammar builder
/// writes parameters with, and so the only ones the keyer reads.
fn registered_param_tags() -> &'static [ParamTags] {
    static TAGS: OnceLock<Vec<ParamTags>> = OnceLock::new();
    TAGS.get_or_init(|| {
        let mut tags: Vec<ParamTags> = Vec::new();
        for format in crate::formats::REGISTRY {
            if let Some(params) = format.syntax.arguments.params() {
                if !tags.contains(params) {
                    tags.push(*params);
                }
            }
        }
        tags
    })
}

/// The parameter name `head` spells in the opening's first piece `template` (`<parameter={key}>`),
/// and the `{string}` or `{type}` value it carries (DSML's `true`/`false`, Kimi K3's type name),
/// if any.
pub(super) fn name_in(head: &[u8], template: &str) -> Option<(Vec<u8>, Option<&'static str>)> {
    let (before, after) = template.split_once("{key}")?;
    const TYPES: [Option<&str>; 6] = {
        let [a, b, c, d, e, f] = crate::spec::TYPE_NAMES;
        [Some(a), Some(b), Some(c), Some(d), Some(e), Some(f)]
    };
    let strings: &[Option<&'static str>] = if after.contains("{string}") {
        &[Some("true"), Some("false")]
    } else if after.contains("{type}") {
        &TYPES
    } else {
        &[None]
    };
    strings.iter().find_map(|&string| {
        let after = after
            .replace("{string}", string.unwrap_or(""))
            .replace("{type}", string.unwrap_or(""));
        let name = head
            .strip_prefix(before.as_bytes())?
            .strip_suffix(after.as_bytes())?;
        (!name.is_empty()).then(|| (name.to_vec(), string))
    })
}

/// One parameter as the grammar builder writes it with `tags`: whitespace when `tags.between`,
/// the opening with the name filled in (its pieces after each `{ws}` behind whitespace), the
/// value, the close with the name, whitespace when `tags.between`.
fn xml_param_of(node: &Value, required: bool, tags: &ParamTags) -> Option<XmlParam> {
    if kind_of(node) != "sequence" {
        return None;
    }
    let mut elements = elements_of(node);
    if tags.between {
        let [first, inner @ .., last] = elements else {
            return None;
        };
        if !is_ws_node(first) || !is_ws_node(last) {
            return None;
        }
        elements = inner;
    }
    let as_const = |n: &Value| (kind_of(n) == "const_string").then(|| str_bytes(n.get("value")))?;
    let starts_clean = |text: &Vec<u8>| text.first().is_some_and(|&b| !is_ws(b));
    let mut pieces = tags.open.split("{ws}");
    let [first, rest @ ..] = elements else {
        return None;
    };
    let mut rest = rest;
    let head = as_const(first).filter(starts_clean)?;
    let (name, string) = name_in(&head, pieces.next()?)?;
    let name = std::str::from_utf8(&name).ok()?;
    let fill = |template: &str| {
        template
            .replace("{key}", name)
            .replace("{string}", string.unwrap_or(""))
            .replace("{type}", string.unwrap_or(""))
            .into_bytes()
    };
    let mut tail = Vec::new();
    for piece in pieces {
        let [ws, text, more @ ..] = rest else {
            return None;
        };
        let text = as_const(text).filter(starts_clean)?;
        if !is_ws_node(ws) || text != fill(piece) {
            return None;
        }
        tail.push((true, text));
        rest = more;
    }
    let [value, close] = rest else {
        return None;
    };
    let close =
        as_const(close).filter(|c| *c == fill(tags.close) && !c.is_empty() && border_free(c))?;
    if !value_ends_at_close(value, &close) {
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
    let json = JsonValue::of(value);
    Some(XmlParam {
        head,
        tail,
        close,
        required,
        collapse,
        number,
        json,
    })
}

/// The content of an XML call written with one of the registered formats' [`ParamTags`].
pub(super) fn xml_call_of(node: &Value) -> Option<Vec<XmlParam>> {
    registered_param_tags()
        .iter()
        .find_map(|tags| xml_call_with(node, tags))
}

/// The content of an XML call written with `tags`: one parameter, or a sequence of them, each
/// possibly optional.
fn xml_call_with(node: &Value, tags: &ParamTags) -> Option<Vec<XmlParam>> {
    let param = |n: &Value| match kind_of(n) {
        "optional" => xml_param_of(n.get("content")?, false, tags),
        _ => xml_param_of(n, true, tags),
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

/// An XML call whose end strings can be told apart from parameters after the whitespace gap.
pub(super) fn xml_call(mut params: Vec<XmlParam>, ends: &[Vec<u8>]) -> Option<XmlCall> {
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

/// Where the keyer is in an XML call.
#[derive(Debug, Clone)]
pub(super) enum XmlPhase {
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
pub(super) struct XmlState {
    /// Parameters before this index can no longer be written.
    pub(super) next: usize,
    pub(super) phase: XmlPhase,
}

impl StateKeyer {
    pub(super) fn xml_byte(&mut self, call: &XmlCall, b: u8) {
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
                let mut candidates = Vec::new();
                let mut complete = None;
                for (param, text) in params.chain(ends) {
                    if text.starts_with(buf) {
                        candidates.push(param);
                        if text.len() == buf.len() {
                            complete = Some(param);
                        }
                    }
                }
                match (candidates.len(), complete) {
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
                    _ => {
                        // each parameter (or end) the head may still name decides the rest
                        // alone, whichever parameter came before the gap: the candidates and
                        // the head's bytes name the state
                        let tag = self.tag_id();
                        self.anchor(family::XML);
                        self.hasher.write(b"\x00xml head\x00");
                        self.hasher.write(&tag.to_le_bytes());
                        self.hasher.write(&(candidates.len() as u64).to_le_bytes());
                        for param in candidates {
                            let id = param.map_or(u64::MAX, |p| p as u64);
                            self.hasher.write(&id.to_le_bytes());
                        }
                        self.hasher.write(&(buf.len() as u64).to_le_bytes());
                        self.hasher.write(buf);
                    }
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
                if self.scan.is_some() && !self.xml_json_byte(*param, b) {
                    return self.lose();
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
                    self.scan = None;
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
        if let Some(json) = &spec.json {
            let ordered = self.plan_ordered_objects();
            self.scan = Some(JsonScan::new(json.schema.clone(), json.collapse, ordered));
        }
    }

    /// One byte of parameter `param`'s JSON value to its scan, keyed as JSON content is (the
    /// anchors name the parameter too); false where the scan fails. The hasher has the byte.
    fn xml_json_byte(&mut self, param: usize, b: u8) -> bool {
        let Some(scan) = self.scan.as_mut() else {
            return true;
        };
        let event = scan.feed(b);
        let (failed, done, value_end, key_end, in_named_key) = (
            scan.failed,
            scan.done,
            scan.value_end,
            scan.key_end,
            scan.in_named_key(),
        );
        if failed {
            return false;
        }
        if event == Event::NumberStart {
            self.xml_json_anchor(b"\x00xml json value start\x00", param, true);
            self.number_digest = Some(self.hasher.digest());
            self.hasher.write(&[b]);
        } else {
            self.json_quote(event);
        }
        if done {
            // the whole value: what follows is its trailing whitespace and the close
            self.xml_json_anchor(b"\x00xml json done\x00", param, false);
            self.scan = None;
        } else if let Some(end) = value_end {
            self.xml_json_anchor(b"\x00xml json value end\x00", param, true);
            if end == ValueEnd::Before {
                self.hasher.write(&[b]);
            }
        } else if key_end {
            self.xml_json_anchor(b"\x00xml json key end\x00", param, true);
        } else if in_named_key {
            self.xml_json_anchor(b"\x00xml json key prefix\x00", param, true);
        }
        true
    }

    fn xml_json_anchor(&mut self, label: &[u8], param: usize, at_position: bool) {
        let tag = self.tag_id();
        self.anchor(family::XML);
        self.hasher.write(label);
        self.hasher.write(&tag.to_le_bytes());
        self.hasher.write(&(param as u64).to_le_bytes());
        if let (true, Some(scan)) = (at_position, &self.scan) {
            scan.position(&mut self.hasher);
        }
    }
}
