//! Typing of XML-encoded parameter values by the tool's JSON schema.
//!
//! XML-parameter formats (qwen3_coder, GLM, MiniMax, ...) write every value as raw text; only the
//! tool's schema says whether `2` is the number 2 or the string "2". The rules, shared by every
//! such format:
//!
//! - a parameter the schema does not declare stays a string, verbatim;
//! - a string-only parameter stays a string, verbatim (no trimming, `null` included);
//! - otherwise the value (trimmed) is read as the first type of the schema it fits: null,
//!   integer, number, boolean, object/array (JSON, or a Python literal such as
//!   `{'a': True, 'b': None}`; tuples and sets are arrays); numbers keep their literal digits,
//!   so big integers stay exact;
//! - a value that fits none of its types is kept as a string (never an error);
//! - where the schema allows no string, a value written as a JSON string (`"5"`) is read inside
//!   its quotes.
//!
//! When the schema also allows strings, only exact JSON spellings count as another type (`1`
//! is an integer, but `1.0`, `True` or `{'a': 1}` stay strings), since the text is then a valid
//! string as it stands.
//!
//! Schema types come from `type` (a name or a list of names), `nullable`, `enum`/`const` (the
//! types of their values), the members of `anyOf`/`oneOf`/`allOf`, and `properties`/`items`.
//! `$ref` is not resolved: it allows an object, an array, or a string.

use serde_json::Value;

/// The set of JSON types a parameter's schema allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TypeSet(u8);

impl TypeSet {
    pub const STRING: TypeSet = TypeSet(1);
    pub const INTEGER: TypeSet = TypeSet(2);
    pub const NUMBER: TypeSet = TypeSet(4);
    pub const BOOLEAN: TypeSet = TypeSet(8);
    pub const NULL: TypeSet = TypeSet(16);
    pub const OBJECT: TypeSet = TypeSet(32);
    pub const ARRAY: TypeSet = TypeSet(64);

    /// The types `schema` allows; a missing schema, or one that names no type, allows only
    /// strings (the value is kept as written).
    pub fn of(schema: Option<&Value>) -> TypeSet {
        let Some(schema) = schema else {
            return TypeSet::STRING;
        };
        let mut set = TypeSet::default();
        // Explicit stack: schemas nest through anyOf/oneOf/allOf; the walk is bounded.
        let mut stack: Vec<(&Value, usize)> = vec![(schema, 0)];
        let mut visited = 0;
        while let Some((node, depth)) = stack.pop() {
            visited += 1;
            if visited > 256 {
                break;
            }
            let Some(obj) = node.as_object() else {
                continue;
            };
            let mut typed = false;
            match obj.get("type") {
                Some(Value::String(name)) => {
                    set.0 |= type_name(name).0;
                    typed = true;
                }
                Some(Value::Array(names)) => {
                    for name in names.iter().filter_map(Value::as_str) {
                        set.0 |= type_name(name).0;
                    }
                    typed = true;
                }
                _ => {}
            }
            if !typed {
                if let Some(values) = obj.get("enum").and_then(Value::as_array) {
                    for v in values {
                        set.0 |= value_type(v).0;
                    }
                    typed = true;
                }
                if let Some(v) = obj.get("const") {
                    set.0 |= value_type(v).0;
                    typed = true;
                }
            }
            if !typed {
                if obj.contains_key("properties") || obj.contains_key("additionalProperties") {
                    set.0 |= TypeSet::OBJECT.0;
                }
                if obj.contains_key("items") || obj.contains_key("prefixItems") {
                    set.0 |= TypeSet::ARRAY.0;
                }
                if obj.contains_key("$ref") {
                    set.0 |= TypeSet::OBJECT.0 | TypeSet::ARRAY.0 | TypeSet::STRING.0;
                }
            }
            if obj.get("nullable").and_then(Value::as_bool) == Some(true) {
                set.0 |= TypeSet::NULL.0;
            }
            if depth < 8 {
                for key in ["anyOf", "oneOf", "allOf"] {
                    if let Some(members) = obj.get(key).and_then(Value::as_array) {
                        stack.extend(members.iter().map(|m| (m, depth + 1)));
                    }
                }
            }
        }
        if set.0 == 0 {
            return TypeSet::STRING;
        }
        set
    }

    pub fn has(self, other: TypeSet) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether a value is always kept as written: its text can be streamed as a JSON string.
    pub fn is_string_only(self) -> bool {
        self == TypeSet::STRING
    }
}

/// Type names as schemas (and models' own tool definitions) write them.
fn type_name(name: &str) -> TypeSet {
    let n = name.trim().to_ascii_lowercase();
    let n = n.as_str();
    match n {
        "string" | "str" | "text" | "varchar" | "char" | "enum" => TypeSet::STRING,
        "null" | "none" => TypeSet::NULL,
        "boolean" | "bool" | "binary" => TypeSet::BOOLEAN,
        "object" | "map" => TypeSet::OBJECT,
        "array" | "arr" | "tuple" => TypeSet::ARRAY,
        _ if n.starts_with("int")
            || n.starts_with("uint")
            || n.starts_with("long")
            || n.starts_with("short")
            || n.starts_with("unsigned") =>
        {
            TypeSet::INTEGER
        }
        _ if n.starts_with("num") || n.starts_with("float") || n == "double" || n == "decimal" => {
            TypeSet::NUMBER
        }
        _ if n.starts_with("dict") => TypeSet::OBJECT,
        _ if n.starts_with("list") => TypeSet::ARRAY,
        _ => TypeSet::default(),
    }
}

fn value_type(v: &Value) -> TypeSet {
    match v {
        Value::Null => TypeSet::NULL,
        Value::Bool(_) => TypeSet::BOOLEAN,
        Value::Number(n) => {
            if json_integer(&n.to_string()).is_some() {
                TypeSet::INTEGER
            } else {
                TypeSet::NUMBER
            }
        }
        Value::String(_) => TypeSet::STRING,
        Value::Array(_) => TypeSet::ARRAY,
        Value::Object(_) => TypeSet::OBJECT,
    }
}

/// Whether a value of this schema is always kept as written (so it can be streamed as an escaped
/// JSON string while it arrives).
pub fn is_string_typed(schema: Option<&Value>) -> bool {
    TypeSet::of(schema).is_string_only()
}

/// The JSON text of an XML-encoded value `raw`, typed by the parameter's schema.
pub fn typed_json(raw: &str, schema: Option<&Value>) -> String {
    typed_json_as(raw, TypeSet::of(schema))
}

/// [`typed_json`] with the schema's types already computed.
pub fn typed_json_as(raw: &str, types: TypeSet) -> String {
    if types.is_string_only() {
        return crate::json::quote(raw);
    }
    let t = raw.trim();
    // With strings allowed, the text is already a valid value: only exact JSON spellings of the
    // other types are read as those types.
    let exact = types.has(TypeSet::STRING);
    // Without, a value the model quoted as a JSON string (`"5"` for a number) is read inside
    // its quotes.
    let unquoted = (!exact && t.len() >= 2 && t.starts_with('"'))
        .then(|| serde_json::from_str::<String>(t).ok())
        .flatten();
    let t = unquoted.as_deref().map_or(t, str::trim);
    let is_null = if exact {
        types.has(TypeSet::NULL) && t == "null"
    } else {
        t.eq_ignore_ascii_case("null") || (types.has(TypeSet::NULL) && t == "None")
    };
    if is_null {
        return "null".to_owned();
    }
    if types.has(TypeSet::INTEGER) {
        let found = if exact {
            json_integer(t).filter(|n| n == t)
        } else {
            json_integer(t)
        };
        if let Some(n) = found {
            return n;
        }
    }
    if types.has(TypeSet::NUMBER) {
        let found = if exact {
            json_number(t).filter(|n| n == t)
        } else {
            json_number(t)
        };
        if let Some(n) = found {
            return n;
        }
    }
    if types.has(TypeSet::BOOLEAN) {
        let b = if exact {
            match t {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            }
        } else if t.eq_ignore_ascii_case("true") || t == "1" {
            Some(true)
        } else if t.eq_ignore_ascii_case("false") || t == "0" {
            Some(false)
        } else {
            None
        };
        if let Some(b) = b {
            return b.to_string();
        }
    }
    if types.has(TypeSet::OBJECT) || types.has(TypeSet::ARRAY) {
        let fits = |v: &Value| {
            (v.is_object() && types.has(TypeSet::OBJECT))
                || (v.is_array() && types.has(TypeSet::ARRAY))
        };
        if let Some(v) = parse_json_lossy(t) {
            if fits(&v) {
                return v.to_string();
            }
        } else if !exact {
            if let Some(v) =
                python_literal_to_json(t).and_then(|json| serde_json::from_str::<Value>(&json).ok())
            {
                if fits(&v) {
                    return v.to_string();
                }
            }
        }
    }
    crate::json::quote(raw)
}

/// `t` parsed as JSON. JSON's grammar allows a `\uXXXX` escape of a lone surrogate, which a Rust
/// string cannot hold (and xgrammar's JSON strings let through): such an escape becomes U+FFFD,
/// as in Python literals here.
fn parse_json_lossy(t: &str) -> Option<Value> {
    match serde_json::from_str::<Value>(t) {
        Ok(v) => Some(v),
        Err(_) if t.contains("\\u") => {
            serde_json::from_str::<Value>(&replace_lone_surrogates(t)?).ok()
        }
        Err(_) => None,
    }
}

/// `t` with every `\uXXXX` escape of a lone surrogate inside a JSON string written `\ufffd`; None
/// when there is none.
fn replace_lone_surrogates(t: &str) -> Option<String> {
    fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
        let s = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
        u32::from_str_radix(s, 16).ok()
    }
    let bytes = t.as_bytes();
    let low_at = |at: usize| {
        bytes.get(at) == Some(&b'\\')
            && bytes.get(at + 1) == Some(&b'u')
            && matches!(hex4(bytes, at + 2), Some(0xDC00..=0xDFFF))
    };
    let mut out = String::with_capacity(t.len());
    let (mut i, mut copied, mut in_string, mut changed) = (0, 0, false, false);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                let code = if bytes.get(i + 1) == Some(&b'u') {
                    hex4(bytes, i + 2)
                } else {
                    None
                };
                match code {
                    Some(0xD800..=0xDBFF) if low_at(i + 6) => i += 12,
                    Some(0xD800..=0xDFFF) => {
                        out.push_str(&t[copied..i]);
                        out.push_str("\\ufffd");
                        changed = true;
                        i += 6;
                        copied = i;
                    }
                    _ => i += 2,
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&t[copied..]);
    Some(out)
}

/// A JSON number literal for `t`, normalised from looser spellings (`+1`, `.5`, `5.`, `007`).
fn json_number(t: &str) -> Option<String> {
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(p) => (&body[..p], Some((&body[p..p + 1], &body[p + 1..]))),
        None => (body, None),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(p) => (&mantissa[..p], &mantissa[p + 1..]),
        None => (mantissa, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let mut out = String::with_capacity(t.len() + 2);
    if neg {
        out.push('-');
    }
    let int = int.trim_start_matches('0');
    out.push_str(if int.is_empty() { "0" } else { int });
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    if let Some((e, exp)) = exp {
        let (sign, digits_part) = match exp.as_bytes().first()? {
            b'-' => ("-", &exp[1..]),
            b'+' => ("+", &exp[1..]),
            _ => ("", exp),
        };
        if digits_part.is_empty() || !digits(digits_part) {
            return None;
        }
        out.push_str(e);
        out.push_str(sign);
        out.push_str(digits_part);
    }
    Some(out)
}

/// A JSON integer literal for `t`: an integer, or a number whose fraction is all zeros (`140.0`).
fn json_integer(t: &str) -> Option<String> {
    let n = json_number(t)?;
    if n.contains(['e', 'E']) {
        return None;
    }
    match n.split_once('.') {
        None => Some(n),
        Some((int, frac)) if frac.bytes().all(|b| b == b'0') => Some(int.to_owned()),
        Some(_) => None,
    }
}

/// Containers nested deeper than this are not converted (the value stays a string).
const MAX_LITERAL_DEPTH: usize = 100;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame {
    List(u8),
    /// Where its `{` is in the output, and where its first key begins there (a `{` whose first
    /// key is followed by `,` or `}` is a set, written as an array).
    Dict {
        open_at: usize,
        keys: usize,
        numeric_key: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Value,
    ValueOrClose,
    KeyOrClose,
    Colon,
    CommaOrClose,
}

/// Convert a Python literal (dict, list, tuple, set, str, int, float, True/False/None; JSON
/// spellings also accepted) to JSON text; tuples and sets become arrays. Iterative, with a nesting limit: `None` when the text is not such
/// a literal or nests deeper than the limit.
pub fn python_literal_to_json(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack: Vec<Frame> = Vec::new();
    let mut want = Want::Value;
    let mut done = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if done {
            return None;
        }
        let closes = match stack.last() {
            Some(Frame::List(close)) => b == *close,
            Some(Frame::Dict { .. }) => b == b'}',
            None => false,
        };
        match want {
            Want::ValueOrClose | Want::KeyOrClose | Want::CommaOrClose if closes => {
                let frame = stack.pop();
                out.push(if matches!(frame, Some(Frame::Dict { .. })) {
                    '}'
                } else {
                    ']'
                });
                i += 1;
            }
            Want::CommaOrClose => {
                if b != b',' {
                    return None;
                }
                i += 1;
                // The comma is written when the next element starts (a trailing comma is legal).
                want = match stack.last() {
                    Some(Frame::Dict { .. }) => Want::KeyOrClose,
                    _ => Want::ValueOrClose,
                };
                continue;
            }
            Want::Colon => {
                if let (b',' | b'}', Some(frame)) = (b, stack.last_mut()) {
                    let Frame::Dict {
                        open_at,
                        keys: 1,
                        numeric_key,
                    } = *frame
                    else {
                        return None;
                    };
                    let first_key_at = open_at + 1;
                    // A set: `{` becomes `[`, and a number read as a key is a number again.
                    out.replace_range(open_at..open_at + 1, "[");
                    if numeric_key {
                        out.pop();
                        out.remove(first_key_at);
                    }
                    *frame = Frame::List(b'}');
                    want = Want::CommaOrClose;
                    continue;
                }
                if b != b':' {
                    return None;
                }
                out.push(':');
                i += 1;
                want = Want::Value;
                continue;
            }
            Want::KeyOrClose => {
                if !out.ends_with('{') {
                    out.push(',');
                }
                if let Some(Frame::Dict {
                    keys, numeric_key, ..
                }) = stack.last_mut()
                {
                    *keys += 1;
                    *numeric_key = !matches!(b, b'\'' | b'"');
                }
                match b {
                    b'\'' | b'"' => i = python_string(text, i, &mut out)?,
                    b'-' | b'+' | b'.' | b'0'..=b'9' => {
                        let end = token_end(bytes, i);
                        out.push('"');
                        out.push_str(&json_number(&text[i..end])?);
                        out.push('"');
                        i = end;
                    }
                    _ => return None,
                }
                want = Want::Colon;
                continue;
            }
            Want::Value | Want::ValueOrClose => {
                if want == Want::ValueOrClose && !out.ends_with('[') {
                    out.push(',');
                }
                match b {
                    b'{' | b'[' | b'(' => {
                        if stack.len() >= MAX_LITERAL_DEPTH {
                            return None;
                        }
                        let dict = Frame::Dict {
                            open_at: out.len(),
                            keys: 0,
                            numeric_key: false,
                        };
                        let (frame, next) = match b {
                            b'{' => (dict, Want::KeyOrClose),
                            b'[' => (Frame::List(b']'), Want::ValueOrClose),
                            _ => (Frame::List(b')'), Want::ValueOrClose),
                        };
                        stack.push(frame);
                        out.push(if b == b'{' { '{' } else { '[' });
                        i += 1;
                        want = next;
                        continue;
                    }
                    b'\'' | b'"' => i = python_string(text, i, &mut out)?,
                    b'-' | b'+' | b'.' | b'0'..=b'9' => {
                        let end = token_end(bytes, i);
                        out.push_str(&json_number(&text[i..end])?);
                        i = end;
                    }
                    _ => {
                        let end = token_end(bytes, i);
                        out.push_str(match &text[i..end] {
                            "True" | "true" => "true",
                            "False" | "false" => "false",
                            "None" | "null" => "null",
                            _ => return None,
                        });
                        i = end;
                    }
                }
            }
        }
        // A value (or a container) just ended.
        if stack.is_empty() {
            done = true;
        } else {
            want = Want::CommaOrClose;
        }
    }
    done.then_some(out)
}

/// End of a bare token (number or name): the next delimiter or whitespace.
fn token_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() || b",:]})[{('\"".contains(&b) {
            break;
        }
        i += 1;
    }
    i
}

/// Read a Python string literal starting at its quote; append it as a JSON string. Returns the
/// offset after the closing quote.
fn python_string(text: &str, start: usize, out: &mut String) -> Option<usize> {
    let quote = text.as_bytes()[start] as char;
    let mut value = String::new();
    let mut chars = text[start + 1..].char_indices();
    while let Some((off, c)) = chars.next() {
        if c == quote {
            out.push_str(&crate::json::quote(&value));
            return Some(start + 1 + off + 1);
        }
        if c != '\\' {
            if c == '\n' {
                return None;
            }
            value.push(c);
            continue;
        }
        let (_, e) = chars.next()?;
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => value.push(e),
            'n' => value.push('\n'),
            'r' => value.push('\r'),
            't' => value.push('\t'),
            'b' => value.push('\u{8}'),
            'f' => value.push('\u{c}'),
            'v' => value.push('\u{b}'),
            'a' => value.push('\u{7}'),
            'x' | 'u' | 'U' => {
                let len = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut code = 0u32;
                for _ in 0..len {
                    let (_, h) = chars.next()?;
                    code = code * 16 + h.to_digit(16)?;
                }
                value.push(char::from_u32(code)?);
            }
            '0'..='7' => {
                let mut code = e.to_digit(8)?;
                for _ in 0..2 {
                    let rest = chars.as_str();
                    match rest.chars().next().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            code = code * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                value.push(char::from_u32(code)?);
            }
            other => {
                value.push('\\');
                value.push(other);
            }
        }
    }
    None
}

/// A value as XML-parameter chat templates write it between its tags: a string raw, any other
/// value as [`template_json`].
pub fn template_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => template_json(other),
    }
}

/// A non-string value as chat templates write it with `tojson` (Python's `json.dumps`
/// separators `, ` and `: `, non-ASCII kept): how XML-parameter templates render arguments.
pub fn template_json(value: &Value) -> String {
    let compact = value.to_string();
    let mut out = String::with_capacity(compact.len() + compact.len() / 4);
    let (mut in_string, mut escaped) = (false, false);
    for c in compact.chars() {
        out.push(c);
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' || c == ':' {
            out.push(' ');
        }
    }
    out
}

/// A value as Jinja's `| string` writes it in a chat template: Python's `str()` (`True`, `None`,
/// `{'a': [1, 'x']}`). The caller's data, not model output, so recursion is bounded by what the
/// caller built.
pub fn python_str(value: &Value) -> String {
    let mut out = String::new();
    write_python(value, &mut out);
    out
}

fn write_python(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => python_repr_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_python(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (k, (key, item)) in map.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                python_repr_str(key, out);
                out.push_str(": ");
                write_python(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `repr()` of a string: single quotes unless the text has `'` and no `"`.
fn python_repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

#[cfg(test)]
mod tests;
