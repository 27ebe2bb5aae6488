//! Tool-call arguments as a flat tree that borrows the JSON text.
//!
//! Arguments arrive as JSON text, and decoding them into `serde_json::Value` (with
//! `preserve_order` and `arbitrary_precision`) allocates a string per key, value and number and a
//! hash table per object: it cost more than the validation itself. [`with_document`] instead
//! scans the text once into [`Doc`]: strings and numbers are spans of the text (only strings with
//! escapes are decoded, into one shared buffer), and the items of each array and the members of
//! each object sit next to each other in two arenas. The arenas live in a per-thread scratch
//! area, so validating typical arguments allocates nothing.
//!
//! The parser accepts exactly what `serde_json::from_str::<Value>` accepts (same grammar, same
//! nesting limit of 127 containers, lone surrogates rejected) and resolves duplicate keys the same
//! way (the last value wins, at the position of the first); a differential test holds it to that.

use std::cell::RefCell;

use super::node::same_text;
use crate::json::plain_run;

/// serde_json refuses the 128th nested container; text parsed here refuses it too.
pub(crate) const SERDE_NESTING_LIMIT: usize = 128;

/// Scratch buffers bigger than this are dropped after use rather than kept for the thread.
const RETAINED_CAPACITY: usize = 1 << 16;

/// Objects up to this size are checked for duplicate keys pairwise.
const PAIRWISE_KEY_LIMIT: usize = 16;

/// A range of the text, of the decoded-string buffer, or of an arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    len: u32,
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }

    pub(crate) fn len(self) -> usize {
        self.len as usize
    }
}

/// Where a string's characters are: verbatim in the text, or decoded from escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Text {
    Source(Span),
    Decoded(Span),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    /// The literal, exactly as written.
    Number(Text),
    String(Text),
    /// A run of `Doc::items`.
    Array(Span),
    /// A run of `Doc::members`.
    Object(Span),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Member {
    pub(crate) key: Text,
    pub(crate) value: Val,
}

#[derive(Default)]
struct Scratch {
    decoded: String,
    items: Vec<Val>,
    members: Vec<Member>,
    open: Vec<Open>,
    pending_items: Vec<Val>,
    pending_members: Vec<Member>,
}

impl Scratch {
    fn oversized(&self) -> bool {
        self.decoded.capacity() > RETAINED_CAPACITY
            || self.items.capacity() > RETAINED_CAPACITY
            || self.members.capacity() > RETAINED_CAPACITY
            || self.pending_items.capacity() > RETAINED_CAPACITY
            || self.pending_members.capacity() > RETAINED_CAPACITY
            || self.open.capacity() > RETAINED_CAPACITY
    }

    fn clear(&mut self) {
        self.decoded.clear();
        self.items.clear();
        self.members.clear();
        self.open.clear();
        self.pending_items.clear();
        self.pending_members.clear();
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `work` with this thread's scratch buffers (or fresh ones if they are in use), leaving
/// them empty and of bounded size.
fn with_scratch<R>(work: impl FnOnce(&mut Scratch) -> R) -> R {
    let run = |scratch: &mut Scratch| {
        let result = work(scratch);
        if scratch.oversized() {
            *scratch = Scratch::default();
        } else {
            scratch.clear();
        }
        result
    };
    let mut work = Some(run);
    let shared = SCRATCH.try_with(|cell| {
        let mut borrowed = cell.try_borrow_mut().ok()?;
        work.take().map(|run| run(&mut borrowed))
    });
    match (shared, work) {
        (Ok(Some(result)), _) => result,
        (_, Some(run)) => run(&mut Scratch::default()),
        (_, None) => unreachable_scratch(),
    }
}

#[cold]
fn unreachable_scratch() -> ! {
    unreachable!("scratch work ran but returned nothing")
}

/// The parsed arguments; `root` is the top-level value.
pub(crate) struct Doc<'t> {
    source: &'t str,
    decoded: &'t str,
    items: &'t [Val],
    members: &'t [Member],
    pub(crate) root: Val,
}

impl Doc<'_> {
    #[inline]
    pub(crate) fn text(&self, text: Text) -> &str {
        match text {
            Text::Source(span) => &self.source[span.range()],
            Text::Decoded(span) => &self.decoded[span.range()],
        }
    }

    #[inline]
    pub(crate) fn number(&self, literal: Text) -> &str {
        self.text(literal)
    }

    #[inline]
    pub(crate) fn items(&self, span: Span) -> &[Val] {
        &self.items[span.range()]
    }

    #[inline]
    pub(crate) fn members(&self, span: Span) -> &[Member] {
        &self.members[span.range()]
    }

    pub(crate) fn get(&self, object: Span, key: &str) -> Option<Val> {
        self.members(object)
            .iter()
            .find(|member| same_text(self.text(member.key), key))
            .map(|member| member.value)
    }

    pub(crate) fn contains_key(&self, object: Span, key: &str) -> bool {
        self.get(object, key).is_some()
    }

    /// Compact JSON, spelled as serde_json writes the equal `Value`.
    pub(crate) fn write_json(&self, value: Val, out: &mut String) {
        match value {
            Val::Null => out.push_str("null"),
            Val::Bool(flag) => out.push_str(if flag { "true" } else { "false" }),
            Val::Number(literal) => write_json_number(self.number(literal), out),
            Val::String(text) => write_json_string(self.text(text), out),
            Val::Array(span) => {
                out.push('[');
                for (index, item) in self.items(span).iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    self.write_json(*item, out);
                }
                out.push(']');
            }
            Val::Object(span) => {
                out.push('{');
                for (index, member) in self.members(span).iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    write_json_string(self.text(member.key), out);
                    out.push(':');
                    self.write_json(member.value, out);
                }
                out.push('}');
            }
        }
    }
}

/// serde_json keeps number literals but spells exponents as `e` with a sign: `1E5` is `1e+5`.
fn write_json_number(literal: &str, out: &mut String) {
    match literal.find(['e', 'E']) {
        None => out.push_str(literal),
        Some(at) => {
            out.push_str(&literal[..at]);
            out.push('e');
            let exponent = &literal[at + 1..];
            if !exponent.starts_with(['+', '-']) {
                out.push('+');
            }
            out.push_str(exponent);
        }
    }
}

pub(crate) fn write_json_string(text: &str, out: &mut String) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            control if (control as u32) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let code = control as usize;
                out.push_str("\\u00");
                out.push(HEX[code >> 4] as char);
                out.push(HEX[code & 0xf] as char);
            }
            other => out.push(other),
        }
    }
    out.push('"');
}

/// The text is not JSON (or nests deeper than `nesting_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotJson;

/// Parses `source` and runs `work` on the result, reusing this thread's scratch buffers.
/// `nesting_limit` is the container depth that is refused ([`SERDE_NESTING_LIMIT`] for text that
/// should behave like serde_json; `usize::MAX` for text serialized from a `Value`).
pub(crate) fn with_document<R>(
    source: &str,
    nesting_limit: usize,
    work: impl FnOnce(&Doc<'_>) -> R,
) -> Result<R, NotJson> {
    if u32::try_from(source.len()).is_err() {
        return Err(NotJson);
    }
    with_scratch(|scratch| {
        let root = Parser {
            bytes: source.as_bytes(),
            position: 0,
            nesting_limit,
            scratch,
        }
        .document()?;
        Ok(work(&Doc {
            source,
            decoded: &scratch.decoded,
            items: &scratch.items,
            members: &scratch.members,
            root,
        }))
    })
}

/// Runs `work` on a `serde_json::Value` laid out as a [`Doc`] (strings and number literals
/// copied into the decoded buffer). Cannot fail: the `Value` is already a JSON tree.
pub(crate) fn with_value_document<R>(
    value: &serde_json::Value,
    work: impl FnOnce(&Doc<'_>) -> R,
) -> R {
    with_scratch(|scratch| {
        let root = lay_out(value, scratch);
        work(&Doc {
            source: "",
            decoded: &scratch.decoded,
            items: &scratch.items,
            members: &scratch.members,
            root,
        })
    })
}

fn copy_text(text: &str, scratch: &mut Scratch) -> Text {
    let start = scratch.decoded.len();
    scratch.decoded.push_str(text);
    Text::Decoded(Parser::span(start, scratch.decoded.len()))
}

fn lay_out(value: &serde_json::Value, scratch: &mut Scratch) -> Val {
    use serde_json::Value;
    match value {
        Value::Null => Val::Null,
        Value::Bool(flag) => Val::Bool(*flag),
        Value::Number(number) => Val::Number(copy_text(number.as_str(), scratch)),
        Value::String(text) => Val::String(copy_text(text, scratch)),
        Value::Array(items) => {
            let mark = scratch.pending_items.len();
            for item in items {
                let item = lay_out(item, scratch);
                scratch.pending_items.push(item);
            }
            let start = scratch.items.len();
            scratch.items.extend(scratch.pending_items.drain(mark..));
            Val::Array(Parser::span(start, scratch.items.len()))
        }
        Value::Object(entries) => {
            let mark = scratch.pending_members.len();
            for (key, value) in entries {
                let key = copy_text(key, scratch);
                let value = lay_out(value, scratch);
                scratch.pending_members.push(Member { key, value });
            }
            let start = scratch.members.len();
            scratch
                .members
                .extend(scratch.pending_members.drain(mark..));
            Val::Object(Parser::span(start, scratch.members.len()))
        }
    }
}

#[derive(Clone, Copy)]
enum Open {
    Array { mark: usize },
    Object { mark: usize, key: Text },
}

struct Parser<'s, 'b> {
    bytes: &'b [u8],
    position: usize,
    nesting_limit: usize,
    scratch: &'s mut Scratch,
}

/// What follows an opening bracket.
enum Opened {
    Empty(Val),
    Container,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn skip_whitespace(&mut self) {
        self.position = whitespace_end(self.bytes, self.position);
    }

    fn expect(&mut self, byte: u8) -> Result<(), NotJson> {
        if self.peek() == Some(byte) {
            self.position += 1;
            Ok(())
        } else {
            Err(NotJson)
        }
    }

    fn span(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            len: (end - start) as u32,
        }
    }

    /// Iterative, so nesting depth never touches the call stack.
    fn document(&mut self) -> Result<Val, NotJson> {
        self.skip_whitespace();
        'value: loop {
            let mut value = match self.peek().ok_or(NotJson)? {
                b'[' => match self.open_array()? {
                    Opened::Empty(value) => value,
                    Opened::Container => continue 'value,
                },
                b'{' => match self.open_object()? {
                    Opened::Empty(value) => value,
                    Opened::Container => continue 'value,
                },
                b'"' => Val::String(self.string()?),
                b'-' | b'0'..=b'9' => self.number()?,
                b't' => self.literal(b"true", Val::Bool(true))?,
                b'f' => self.literal(b"false", Val::Bool(false))?,
                b'n' => self.literal(b"null", Val::Null)?,
                _ => return Err(NotJson),
            };
            loop {
                self.skip_whitespace();
                match self.scratch.open.last_mut() {
                    None => {
                        return if self.position == self.bytes.len() {
                            Ok(value)
                        } else {
                            Err(NotJson)
                        };
                    }
                    Some(Open::Array { mark }) => {
                        let mark = *mark;
                        self.scratch.pending_items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.position += 1;
                                self.skip_whitespace();
                                continue 'value;
                            }
                            Some(b']') => {
                                self.position += 1;
                                self.scratch.open.pop();
                                value = self.close_array(mark);
                            }
                            _ => return Err(NotJson),
                        }
                    }
                    Some(Open::Object { mark, key }) => {
                        let mark = *mark;
                        let key = *key;
                        self.scratch.pending_members.push(Member { key, value });
                        match self.peek() {
                            Some(b',') => {
                                self.position += 1;
                                self.skip_whitespace();
                                let key = self.key()?;
                                if let Some(Open::Object { key: slot, .. }) =
                                    self.scratch.open.last_mut()
                                {
                                    *slot = key;
                                }
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.position += 1;
                                self.scratch.open.pop();
                                value = self.close_object(mark);
                            }
                            _ => return Err(NotJson),
                        }
                    }
                }
            }
        }
    }

    fn enter(&mut self) -> Result<(), NotJson> {
        if self.scratch.open.len() + 1 >= self.nesting_limit {
            return Err(NotJson);
        }
        self.position += 1;
        self.skip_whitespace();
        Ok(())
    }

    fn open_array(&mut self) -> Result<Opened, NotJson> {
        self.enter()?;
        if self.peek() == Some(b']') {
            self.position += 1;
            let start = self.scratch.items.len();
            return Ok(Opened::Empty(Val::Array(Self::span(start, start))));
        }
        let mark = self.scratch.pending_items.len();
        self.scratch.open.push(Open::Array { mark });
        Ok(Opened::Container)
    }

    fn open_object(&mut self) -> Result<Opened, NotJson> {
        self.enter()?;
        if self.peek() == Some(b'}') {
            self.position += 1;
            let start = self.scratch.members.len();
            return Ok(Opened::Empty(Val::Object(Self::span(start, start))));
        }
        let key = self.key()?;
        let mark = self.scratch.pending_members.len();
        self.scratch.open.push(Open::Object { mark, key });
        Ok(Opened::Container)
    }

    /// A member's key and its colon, leaving the position at the value.
    fn key(&mut self) -> Result<Text, NotJson> {
        if self.peek() != Some(b'"') {
            return Err(NotJson);
        }
        let key = self.string()?;
        self.skip_whitespace();
        self.expect(b':')?;
        self.skip_whitespace();
        Ok(key)
    }

    fn close_array(&mut self, mark: usize) -> Val {
        let scratch = &mut *self.scratch;
        let start = scratch.items.len();
        scratch.items.extend(scratch.pending_items.drain(mark..));
        Val::Array(Self::span(start, scratch.items.len()))
    }

    fn close_object(&mut self, mark: usize) -> Val {
        let scratch = &mut *self.scratch;
        let start = scratch.members.len();
        if has_duplicate_key(
            &scratch.pending_members[mark..],
            self.bytes,
            &scratch.decoded,
        ) {
            for member in scratch.pending_members.drain(mark..) {
                let key = text_of(self.bytes, &scratch.decoded, member.key);
                let earlier = scratch.members[start..]
                    .iter_mut()
                    .find(|kept| text_of(self.bytes, &scratch.decoded, kept.key) == key);
                match earlier {
                    Some(kept) => kept.value = member.value,
                    None => scratch.members.push(member),
                }
            }
        } else {
            scratch
                .members
                .extend(scratch.pending_members.drain(mark..));
        }
        Val::Object(Self::span(start, scratch.members.len()))
    }

    fn literal(&mut self, word: &[u8], value: Val) -> Result<Val, NotJson> {
        if self.bytes[self.position..].starts_with(word) {
            self.position += word.len();
            Ok(value)
        } else {
            Err(NotJson)
        }
    }

    fn number(&mut self) -> Result<Val, NotJson> {
        let start = self.position;
        self.position = number_end(self.bytes, start).ok_or(NotJson)?;
        Ok(Val::Number(Text::Source(Self::span(start, self.position))))
    }

    /// A string starting at its opening quote; borrowed from the text unless it has escapes.
    fn string(&mut self) -> Result<Text, NotJson> {
        self.position += 1;
        let start = self.position;
        let plain = plain_run(&self.bytes[start..]).ok_or(NotJson)?;
        self.position = start + plain;
        if self.bytes[self.position] == b'"' {
            self.position += 1;
            return Ok(Text::Source(Self::span(start, start + plain)));
        }
        let decoded_start = self.scratch.decoded.len();
        let mut run_start = start;
        loop {
            let byte = *self.bytes.get(self.position).ok_or(NotJson)?;
            match byte {
                b'"' => {
                    self.push_source(run_start, self.position);
                    self.position += 1;
                    let end = self.scratch.decoded.len();
                    return Ok(Text::Decoded(Self::span(decoded_start, end)));
                }
                b'\\' => {
                    self.push_source(run_start, self.position);
                    self.position += 1;
                    self.escape()?;
                    run_start = self.position;
                }
                0x00..=0x1f => return Err(NotJson),
                _ => self.position += 1,
            }
        }
    }

    fn push_source(&mut self, start: usize, end: usize) {
        // Both ends sit next to ASCII bytes (quote, backslash, escape), so they are char boundaries.
        let run = std::str::from_utf8(&self.bytes[start..end]).unwrap_or_default();
        self.scratch.decoded.push_str(run);
    }

    fn escape(&mut self) -> Result<(), NotJson> {
        let byte = self.peek().ok_or(NotJson)?;
        self.position += 1;
        let character = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{08}',
            b'f' => '\u{0c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                let code = match first {
                    0xD800..=0xDBFF => {
                        if self.bytes.get(self.position..self.position + 2) != Some(b"\\u") {
                            return Err(NotJson);
                        }
                        self.position += 2;
                        let second = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&second) {
                            return Err(NotJson);
                        }
                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(NotJson),
                    code => code,
                };
                char::from_u32(code).ok_or(NotJson)?
            }
            _ => return Err(NotJson),
        };
        self.scratch.decoded.push(character);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, NotJson> {
        let digits = self
            .bytes
            .get(self.position..self.position + 4)
            .ok_or(NotJson)?;
        let mut code = 0;
        for &digit in digits {
            let value = (digit as char).to_digit(16).ok_or(NotJson)?;
            code = code * 16 + value;
        }
        self.position += 4;
        Ok(code)
    }
}

/// Where the JSON whitespace starting at `at` ends.
#[inline]
pub(super) fn whitespace_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// Where the JSON number literal starting at `start` ends, or `None` when none starts there.
pub(super) fn number_end(bytes: &[u8], start: usize) -> Option<usize> {
    let digits = |at: usize| {
        at + bytes.get(at..).map_or(0, |rest| {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        })
    };
    let mut at = start + usize::from(bytes.get(start) == Some(&b'-'));
    at = match bytes.get(at)? {
        b'0' => at + 1,
        b'1'..=b'9' => digits(at + 1),
        _ => return None,
    };
    if bytes.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if let Some(b'e' | b'E') = bytes.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = bytes.get(at) {
            at += 1;
        }
        let end = digits(at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some(at)
}

fn text_of<'a>(source: &'a [u8], decoded: &'a str, text: Text) -> &'a [u8] {
    match text {
        Text::Source(span) => &source[span.range()],
        Text::Decoded(span) => &decoded.as_bytes()[span.range()],
    }
}

fn has_duplicate_key(members: &[Member], source: &[u8], decoded: &str) -> bool {
    let key = |member: &Member| text_of(source, decoded, member.key);
    if members.len() <= PAIRWISE_KEY_LIMIT {
        return members.iter().enumerate().any(|(index, member)| {
            members[index + 1..]
                .iter()
                .any(|other| key(other) == key(member))
        });
    }
    let mut seen = std::collections::HashSet::with_capacity(members.len());
    !members.iter().all(|member| seen.insert(key(member)))
}

#[cfg(test)]
mod tests;
