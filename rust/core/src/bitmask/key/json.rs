//! The JSON content scanner: where a value is inside JSON content, and whether its state there
//! is canonical (see the module docs of `key`).

use std::ptr::NonNull;
use std::sync::Arc;

use serde_json::Value;

use super::hash::Hash128;
use super::is_ws;

pub(super) const ANNOTATIONS: [&str; 8] = [
    "description",
    "title",
    "examples",
    "default",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

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

/// A schema inside a tree that every keyer of a plan shares: the tree, kept alive, and one node
/// of it. A keyer steps into a member's schema at every key of the JSON it reads; a reference
/// costs a counter where a copy of the subschema cost every string and map in it.
#[derive(Clone)]
pub(super) struct SchemaRef {
    tree: Arc<Value>,
    node: NonNull<Value>,
}

// SAFETY: `node` points into `*tree` (see `SchemaRef::child`), which is never changed and lives
// as long as this reference holds `tree`; shared reads of a `Value` are thread-safe.
unsafe impl Send for SchemaRef {}
unsafe impl Sync for SchemaRef {}

impl SchemaRef {
    pub(super) fn new(tree: Arc<Value>) -> Self {
        let node = NonNull::from(&*tree);
        SchemaRef { tree, node }
    }

    pub(super) fn get(&self) -> &Value {
        // SAFETY: see the `Send` impl: the node is inside the tree this reference keeps alive.
        unsafe { self.node.as_ref() }
    }

    /// The node `pick` finds from this one (a reference into the same tree: `pick` gets this
    /// node and returns something borrowed from it).
    fn child(&self, pick: impl for<'a> FnOnce(&'a Value) -> Option<&'a Value>) -> Option<Self> {
        let node = NonNull::from(pick(self.get())?);
        Some(SchemaRef {
            tree: self.tree.clone(),
            node,
        })
    }
}

impl std::fmt::Debug for SchemaRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// The schema of a value in the JSON content: known, any JSON, or unknown.
#[derive(Debug, Clone)]
pub(super) enum Sub {
    Schema(SchemaRef),
    Any,
    Unknown,
}

impl Sub {
    /// The schema's JSON, where it is known.
    fn schema(&self) -> Option<&Value> {
        match self {
            Sub::Schema(s) => Some(s.get()),
            Sub::Any | Sub::Unknown => None,
        }
    }
}

fn is_any(schema: &Value) -> bool {
    matches!(schema, Value::Bool(true)) || schema.as_object().is_some_and(|m| m.is_empty())
}

fn child(parent: &Sub, key: Option<&[u8]>) -> Sub {
    let parent = match parent {
        Sub::Any => return Sub::Any,
        Sub::Unknown => return Sub::Unknown,
        Sub::Schema(s) if is_any(s.get()) => return Sub::Any,
        Sub::Schema(s) if s.get().is_object() => s,
        Sub::Schema(_) => return Sub::Unknown,
    };
    let schema = parent.get();
    let found = match key {
        None => parent.child(|s| match s.get("items") {
            Some(items @ (Value::Object(_) | Value::Bool(_))) if s.get("prefixItems").is_none() => {
                Some(items)
            }
            _ => None,
        }),
        Some(key) => {
            let Ok(key) = std::str::from_utf8(key) else {
                return Sub::Unknown;
            };
            let props = schema.get("properties").and_then(Value::as_object);
            let declared = parent.child(|s| s.get("properties")?.get(key));
            if declared.is_some() {
                declared
            } else {
                match schema.get("additionalProperties") {
                    None | Some(Value::Bool(true))
                        if props.is_none()
                            && schema.as_object().is_some_and(|m| {
                                m.keys().all(|k| {
                                    k == "type"
                                        || k == "additionalProperties"
                                        || ANNOTATIONS.contains(&k.as_str())
                                })
                            }) =>
                    {
                        return Sub::Any
                    }
                    Some(Value::Object(_)) => parent.child(|s| s.get("additionalProperties")),
                    _ => None,
                }
            }
        }
    };
    found.map_or(Sub::Unknown, Sub::Schema)
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
    /// An object whose members the grammar takes in `properties` order (see
    /// [`in_declared_order`]): its position is its last key alone.
    ordered: bool,
}

impl Container {
    fn new(object: bool, schema: Sub, product_around: bool, ordered_objects: bool) -> Self {
        let product = product_around && product(&schema, object);
        let ordered = object && ordered_objects && in_declared_order(&schema);
        Container {
            object,
            expect: Expect::First,
            schema,
            key: Vec::new(),
            product,
            keys: Vec::new(),
            items: 0,
            ordered,
        }
    }
}

/// Whether, in a grammar that writes objects' members in `properties` order (optional ones
/// skipped, additional ones after them), the rest of this object after a member is a function
/// of that member's key: each declared key names its place in the order, any other key the
/// additional members' tail. Every `required` name must be declared (else where the grammar
/// puts it is not known).
fn in_declared_order(schema: &Sub) -> bool {
    let Sub::Schema(s) = schema else {
        return false;
    };
    let Some(map) = s.get().as_object() else {
        return false;
    };
    let declared = map.get("properties").and_then(Value::as_object);
    map.get("required").is_none_or(|required| {
        required.as_array().is_some_and(|names| {
            names.iter().all(|name| {
                name.as_str()
                    .is_some_and(|name| declared.is_some_and(|d| d.contains_key(name)))
            })
        })
    })
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
        Sub::Schema(s) => match s.get() {
            Value::Object(map) => map,
            s => return is_any(s),
        },
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
pub(super) enum Event {
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
pub(super) struct Num {
    pub(super) integer: bool,
    /// 0 start, 1 `-`, 2 `0`, 3 integer digits, 4 `.`, 5 fraction digits, 6 `e`, 7 exponent
    /// sign, 8 exponent digits.
    pub(super) state: u8,
}

impl Num {
    /// Whether the digits so far are a whole number.
    pub(super) fn complete(self) -> bool {
        matches!(self.state, 2 | 3 | 5 | 8)
    }

    pub(super) fn step(self, b: u8) -> Option<Num> {
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
pub(super) fn number_kind(schema: &Sub) -> Option<bool> {
    match schema {
        Sub::Any => Some(false),
        Sub::Schema(s) => number_kind_of(s.get()),
        Sub::Unknown => None,
    }
}

/// [`number_kind`] of a schema's JSON.
pub(super) fn number_kind_of(schema: &Value) -> Option<bool> {
    if is_any(schema) {
        return Some(false);
    }
    let map = schema.as_object()?;
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
pub(super) enum ValueEnd {
    /// A number or literal ended before this byte (the byte is `,` or whitespace).
    Before,
    /// A string, object or array ended with this byte.
    After,
}

#[derive(Debug, Clone)]
pub(super) struct JsonScan {
    root: SchemaRef,
    collapse: bool,
    ordered_objects: bool,
    stack: Vec<Container>,
    started: bool,
    pub(super) done: bool,
    pub(super) failed: bool,
    string: Option<Str>,
    escape: u8,
    utf8_need: u8,
    key: Vec<u8>,
    scalar: bool,
    /// The state of a number being written whose language is known (see [`number_kind`]).
    number: Option<Num>,
    /// Set by [`JsonScan::feed`] when a member's value ended inside product containers.
    pub(super) value_end: Option<ValueEnd>,
    /// Set by [`JsonScan::feed`] when an object's key closed (its closing quote) inside
    /// product containers.
    pub(super) key_end: bool,
    /// Inside a key of an ordered product object that admits only its declared members: the
    /// members (indices in `properties`) that may come next and whose names start with the
    /// key's bytes so far (see [`JsonScan::position`]); None where not followed.
    key_candidates: Option<KeyCandidates>,
}

pub(super) fn utf8_len(lead: u8) -> u8 {
    match lead {
        0xC0..=0xDF => 1,
        0xE0..=0xEF => 2,
        0xF0..=0xFF => 3,
        _ => 0,
    }
}

impl JsonScan {
    pub(super) fn new(root: Arc<Value>, collapse: bool, ordered_objects: bool) -> Self {
        JsonScan {
            root: SchemaRef::new(root),
            collapse,
            ordered_objects,
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
            key_end: false,
            key_candidates: None,
        }
    }

    /// The state of the number being written, where its language is tracked.
    pub(super) fn number_state(&self) -> Option<u8> {
        self.number.map(|n| n.state)
    }

    /// Feeds the scan's position to `hasher`. After a value or a key: for each container from
    /// the root, the keys written so far (objects; the last one alone in an ordered object) or
    /// the item count (bounded arrays). Inside a followed key (see `key_candidates`): the
    /// containers around its object so, then the members it may still name and its bytes. Each
    /// candidate's rest (the rest of its name, its value, and what may follow it) depends on
    /// that member alone, so this names the state whichever member came before the key.
    pub(super) fn position(&self, hasher: &mut Hash128) {
        let Some(KeyCandidates { members, .. }) =
            self.key_candidates.as_ref().filter(|_| self.in_named_key())
        else {
            write_containers(&self.stack, hasher);
            return;
        };
        write_containers(&self.stack[..self.stack.len().saturating_sub(1)], hasher);
        hasher.write(b"K");
        hasher.write(&(members.len() as u64).to_le_bytes());
        for j in members {
            hasher.write(&j.to_le_bytes());
        }
        hasher.write(&(self.key.len() as u64).to_le_bytes());
        hasher.write(&self.key);
    }

    /// Whether the last byte was a key's, inside a key whose candidates are followed (a key
    /// prefix anchor: [`JsonScan::position`] names it).
    pub(super) fn in_named_key(&self) -> bool {
        self.string == Some(Str::Key) && !self.key.is_empty() && self.key_candidates.is_some()
    }

    pub(super) fn clean_in_collapsible_string(&self) -> bool {
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

    pub(super) fn feed(&mut self, b: u8) -> Event {
        self.value_end = None;
        self.key_end = false;
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
            let ordered = self.ordered_objects;
            self.stack
                .push(Container::new(b == b'{', schema, true, ordered));
            return Event::None;
        }
        let Some(top) = self.stack.last_mut() else {
            return self.fail();
        };
        match (top.object, top.expect, b) {
            (true, Expect::First | Expect::Key, b'"') => {
                self.string = Some(Str::Key);
                self.key.clear();
                self.key_candidates = next_members(top);
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
                        Sub::Schema(s) => collapsible(s.get()),
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
                let ordered = self.ordered_objects;
                self.stack
                    .push(Container::new(b == b'{', schema, around, ordered));
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
                    self.key_end = top.product;
                }
                self.key_candidates = None;
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
            self.narrow_key_candidates(b);
        }
        Event::None
    }

    /// Keeps the candidates whose names go on with `b` (a key byte outside any escape); stops
    /// following the key where none does or the byte is part of an escape or a UTF-8
    /// character (names are matched byte for byte only).
    fn narrow_key_candidates(&mut self, b: u8) {
        let Some(KeyCandidates {
            properties,
            members: cands,
        }) = self.key_candidates.as_mut()
        else {
            return;
        };
        let at = self.key.len() - 1;
        let plain = self.escape == 0 && self.utf8_need == 0 && b != b'\\' && b < 0x80;
        match properties.get().as_object() {
            Some(props) if plain => {
                // candidates ascend, so one pass over the names finds each
                let mut names = props.keys().enumerate();
                cands.retain(|&j| {
                    names
                        .by_ref()
                        .find(|(i, _)| *i == j as usize)
                        .is_some_and(|(_, name)| name.as_bytes().get(at) == Some(&b))
                });
            }
            _ => cands.clear(),
        }
        if cands.is_empty() {
            self.key_candidates = None;
        }
    }
}

/// The members that may be named next in `top`, where it is an ordered product object that
/// admits only its declared members (`additionalProperties: false`): those after the last key
/// written up to the first `required` one (xgrammar writes members in `properties` order,
/// optional ones skipped, each at most once); None where `top` is no such object or its last
/// key is not declared.
fn next_members(top: &Container) -> Option<KeyCandidates> {
    if !(top.object && top.ordered && top.product) {
        return None;
    }
    let Sub::Schema(schema) = &top.schema else {
        return None;
    };
    let map = schema.get().as_object()?;
    if map.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    let props = map.get("properties")?.as_object()?;
    let required: Vec<&str> = match map.get("required") {
        None => Vec::new(),
        Some(r) => r
            .as_array()?
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()?,
    };
    let start = if top.keys.is_empty() {
        0
    } else {
        let last = std::str::from_utf8(&top.key).ok()?;
        props.keys().position(|k| k == last)? + 1
    };
    let mut members = Vec::new();
    for (j, name) in props.keys().enumerate().skip(start) {
        members.push(u32::try_from(j).ok()?);
        if required.contains(&name.as_str()) {
            break;
        }
    }
    let properties = schema.child(|s| s.get("properties"))?;
    Some(KeyCandidates {
        properties,
        members,
    })
}

/// The members a key being written may still name: indices into `properties` (ascending), and
/// that object, held so that each key byte reads the names without looking them up.
#[derive(Debug, Clone)]
struct KeyCandidates {
    properties: SchemaRef,
    members: Vec<u32>,
}

/// [`JsonScan::position`] of the containers `stack` (from the root).
fn write_containers(stack: &[Container], hasher: &mut Hash128) {
    // one tag byte per container, then a fixed-size or length-prefixed field: prefix-free
    hasher.write(&(stack.len() as u64).to_le_bytes());
    for c in stack {
        match (&c.schema, c.object) {
            (Sub::Any, true) => hasher.write(b"A"),
            (Sub::Any, false) => hasher.write(b"B"),
            (_, true) if c.ordered => {
                hasher.write(b"L");
                hasher.write(&(c.key.len() as u64).to_le_bytes());
                hasher.write(&c.key);
            }
            (_, true) => {
                hasher.write(b"O");
                hasher.write(&(c.keys.len() as u64).to_le_bytes());
                hasher.write(&c.keys);
            }
            (sub, false)
                if sub.schema().and_then(Value::as_object).is_some_and(|map| {
                    map.contains_key("minItems") || map.contains_key("maxItems")
                }) =>
            {
                hasher.write(b"N");
                hasher.write(&c.items.to_le_bytes());
            }
            (_, false) => hasher.write(b"U"),
        }
    }
}
