//! Incremental JSON helpers.
//!
//! Tool-call arguments are streamed as raw JSON text while they arrive, so the parser only needs to
//! know where a value ends, not to build it. `ValueScanner` tracks nesting and string state byte by
//! byte and can be resumed on the next chunk; the full value is checked once, when it is complete.
//! Nesting is a counter, so a hostile 100,000-deep input cannot overflow the stack.

use std::borrow::Cow;

#[derive(Debug, Clone, Default)]
pub struct ValueScanner {
    depth: u64,
    in_string: bool,
    escaped: bool,
    started: bool,
    scalar: bool,
    top_string: bool,
}

pub enum ScanResult {
    /// The value ends at this byte offset (exclusive) of the scanned slice.
    Complete(usize),
    /// The whole slice belongs to the value; more input is needed.
    Incomplete,
    /// The slice starts with something that cannot begin a JSON value.
    Invalid,
}

impl ValueScanner {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn started(&self) -> bool {
        self.started
    }

    /// Whether the value is a top-level JSON string (its text is a JSON string literal).
    pub fn is_string(&self) -> bool {
        self.top_string
    }

    pub fn is_container(&self) -> bool {
        self.started && !self.scalar && !self.top_string
    }

    /// Scan `bytes` (which must not start with whitespace before the value has started).
    pub fn scan(&mut self, bytes: &[u8]) -> ScanResult {
        let mut i = 0;
        if !self.started {
            let Some(&first) = bytes.first() else {
                return ScanResult::Incomplete;
            };
            self.started = true;
            match first {
                b'{' | b'[' => self.depth = 1,
                b'"' => {
                    self.in_string = true;
                    self.top_string = true;
                }
                b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => self.scalar = true,
                _ => return ScanResult::Invalid,
            }
            i = 1;
        }
        if self.scalar {
            while i < bytes.len() {
                match bytes[i] {
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' | b';' | b'<' | b'`' => {
                        return ScanResult::Complete(i)
                    }
                    _ => i += 1,
                }
            }
            return ScanResult::Incomplete;
        }
        while i < bytes.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                // Inside a string only a quote or a backslash matters: jump to the next one.
                let Some(k) = memchr::memchr2(b'"', b'\\', &bytes[i..]) else {
                    return ScanResult::Incomplete;
                };
                i += k + 1;
                if bytes[i - 1] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                    if self.depth == 0 {
                        return ScanResult::Complete(i);
                    }
                }
                continue;
            }
            let b = bytes[i];
            i += 1;
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return ScanResult::Complete(i);
                    }
                }
                _ => {}
            }
        }
        ScanResult::Incomplete
    }
}

/// Incremental reader of one JSON string literal's contents (after its opening quote).
///
/// Call objects read several short strings each (keys, the tool name), most of them whole in
/// one piece of input: those are never copied ([`StringReader::contents`] borrows them from the
/// piece). Contents split across pieces are kept here, in [`INLINE`] bytes rather than on the
/// heap while they fit.
#[derive(Debug, Clone, Default)]
pub struct StringReader {
    inline: [u8; INLINE],
    inline_len: usize,
    /// The contents once they outgrew `inline` (empty until then).
    spilled: String,
    escaped: bool,
}

/// The longest contents a [`StringReader`] keeps without allocating.
const INLINE: usize = 32;

impl StringReader {
    /// Consume from `text`; returns the offset just past the closing quote when the string ends.
    pub fn feed(&mut self, text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut from = 0;
        if self.escaped && !bytes.is_empty() {
            // The byte after a backslash is escaped, whatever it is.
            self.escaped = false;
            from = 1;
        }
        // Only a quote or a backslash matters: jump from one to the next.
        while let Some(k) = memchr::memchr2(b'"', b'\\', &bytes[from.min(bytes.len())..]) {
            let i = from + k;
            if bytes[i] == b'"' {
                if !self.is_buffered() {
                    return Some(i + 1); // all of it is in `text`: see `contents`
                }
                self.push(&text[..i]);
                return Some(i + 1);
            }
            if i + 1 == bytes.len() {
                self.escaped = true;
            }
            from = i + 2;
        }
        self.push(text);
        None
    }

    fn push(&mut self, piece: &str) {
        let end = self.inline_len + piece.len();
        if self.spilled.is_empty() && end <= INLINE {
            self.inline[self.inline_len..end].copy_from_slice(piece.as_bytes());
            self.inline_len = end;
            return;
        }
        if self.spilled.is_empty() {
            let mut spilled = String::with_capacity(end);
            spilled.push_str(self.inline_str());
            self.spilled = spilled;
        }
        self.spilled.push_str(piece);
    }

    fn is_buffered(&self) -> bool {
        self.inline_len > 0 || !self.spilled.is_empty()
    }

    /// What `inline` holds: whole `str` pieces, so valid UTF-8.
    fn inline_str(&self) -> &str {
        std::str::from_utf8(&self.inline[..self.inline_len]).unwrap_or_default()
    }

    /// The string's raw contents (escapes as written), once [`Self::feed`]`(text)` returned
    /// `Some(end)`: borrowed from `text` when nothing came before it, else the buffered text.
    pub fn contents<'a>(&'a self, text: &'a str, end: usize) -> RawString<'a> {
        if !self.is_buffered() {
            return RawString(&text[..end - 1]);
        }
        RawString(if self.spilled.is_empty() {
            self.inline_str()
        } else {
            &self.spilled
        })
    }
}

/// A JSON string literal's contents as written (without the quotes).
#[derive(Debug, Clone, Copy)]
pub struct RawString<'a>(pub &'a str);

impl<'a> RawString<'a> {
    /// The decoded string, or `None` when its escapes are invalid.
    pub fn decoded(self) -> Option<Cow<'a, str>> {
        if let Some(plain) = self.plain() {
            return Some(Cow::Borrowed(plain));
        }
        let literal = format!("\"{}\"", self.0);
        serde_json::from_str::<String>(&literal)
            .ok()
            .map(Cow::Owned)
    }

    /// The contents when they decode to themselves (no escape, no control character).
    pub fn plain(self) -> Option<&'a str> {
        plain_run(self.0.as_bytes()).is_none().then_some(self.0)
    }
}

/// Length of the leading run of bytes that need no attention inside a string (not a quote,
/// backslash or control character), or `None` when the text ends first. Eight bytes at a time.
pub(crate) fn plain_run(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let special = |byte: u8| byte == b'"' || byte == b'\\' || byte < 0x20;
    let mut offset = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let zero_byte = |value: u64| value.wrapping_sub(ONES) & !value & HIGHS;
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
        if zero_byte(quote) | zero_byte(backslash) | control != 0 {
            if let Some(at) = chunk.iter().position(|&byte| special(byte)) {
                return Some(offset + at);
            }
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&byte| special(byte))
        .map(|at| offset + at)
}

/// Append `s` to `out` as the body of a JSON string literal (no surrounding quotes).
pub fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    escape_into(&mut out, s);
    out.push('"');
    out
}

/// Whether `text` is one complete JSON value.
pub fn is_valid(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(s: &str) -> Option<usize> {
        let mut sc = ValueScanner::new();
        match sc.scan(s.as_bytes()) {
            ScanResult::Complete(n) => Some(n),
            _ => None,
        }
    }

    #[test]
    fn finds_value_ends() {
        assert_eq!(scan_all(r#"{"a": "}"} tail"#), Some(10));
        assert_eq!(scan_all(r#"[1, [2], {"x": "\"]"}]x"#), Some(22));
        assert_eq!(scan_all("123, "), Some(3));
        assert_eq!(scan_all(r#""a\"b" x"#), Some(6));
        assert_eq!(scan_all("{\"a\": 1"), None);
    }

    #[test]
    fn resumes_across_chunks() {
        let text = r#"{"k": "a\"}", "n": [1, {"m": 2}]}rest"#;
        for split in 0..text.len() {
            let mut sc = ValueScanner::new();
            let (a, b) = text.split_at(split);
            let end = match sc.scan(a.as_bytes()) {
                ScanResult::Complete(n) => n,
                _ => match sc.scan(b.as_bytes()) {
                    ScanResult::Complete(n) => a.len() + n,
                    _ => panic!("no end at split {split}"),
                },
            };
            assert_eq!(&text[end..], "rest");
        }
    }

    #[test]
    fn reads_strings_across_chunks_and_past_the_inline_buffer() {
        let cases = [
            (r#"name" rest"#, Some("name")),
            (r#"a\"b\\" x"#, Some(r#"a"b\"#)),
            (r#"\u00e9t\u00e9" x"#, Some("\u{e9}t\u{e9}")),
            (
                "long string of more than thirty-two bytes, é and all\" ",
                None,
            ),
            (r#"\x" bad escape"#, None),
        ];
        for (text, decoded) in cases {
            let end = text.rfind('"').map(|q| q + 1);
            let whole = {
                let mut reader = StringReader::default();
                let end = reader.feed(text);
                let decoded = end.and_then(|end| reader.contents(text, end).decoded());
                (end, decoded.map(Cow::into_owned))
            };
            assert_eq!(whole.0, end, "{text}");
            if let Some(decoded) = decoded {
                assert_eq!(whole.1.as_deref(), Some(decoded), "{text}");
            }
            for split in (0..=text.len()).filter(|&k| text.is_char_boundary(k)) {
                let mut reader = StringReader::default();
                let (a, b) = text.split_at(split);
                let (got, decoded) = match reader.feed(a) {
                    Some(n) => (Some(n), reader.contents(a, n).decoded()),
                    None => match reader.feed(b) {
                        Some(n) => (Some(a.len() + n), reader.contents(b, n).decoded()),
                        None => (None, None),
                    },
                };
                assert_eq!(got, end, "{text} split at {split}");
                if got.is_some() {
                    let decoded = decoded.map(Cow::into_owned);
                    assert_eq!(decoded, whole.1, "{text} split at {split}");
                }
            }
        }
    }

    #[test]
    fn deep_nesting_is_not_recursive() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(scan_all(&deep), Some(200_000));
    }
}
