//! Incremental JSON helpers.
//!
//! Tool-call arguments are streamed as raw JSON text while they arrive, so the parser only needs to
//! know where a value ends, not to build it. `ValueScanner` tracks nesting and string state byte by
//! byte and can be resumed on the next chunk; the full value is checked once, when it is complete.
//! Nesting is a counter, so a hostile 100,000-deep input cannot overflow the stack.

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
#[derive(Debug, Clone, Default)]
pub struct StringReader {
    raw: String,
    escaped: bool,
}

impl StringReader {
    /// Consume from `text`; returns the offset just past the closing quote when the string ends.
    pub fn feed(&mut self, text: &str) -> Option<usize> {
        let bytes = text.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.raw.push_str(&text[..i]);
                return Some(i + 1);
            }
        }
        self.raw.push_str(text);
        None
    }

    /// The decoded string, or `None` when its escapes are invalid.
    pub fn decoded(&self) -> Option<String> {
        if let Some(plain) = self.plain() {
            return Some(plain.to_owned());
        }
        let literal = format!("\"{}\"", self.raw);
        serde_json::from_str::<String>(&literal).ok()
    }

    /// The contents when they decode to themselves (no escape, no control character).
    pub fn plain(&self) -> Option<&str> {
        let plain = !self.raw.bytes().any(|b| b == b'\\' || b < 0x20);
        plain.then_some(self.raw.as_str())
    }
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
    fn deep_nesting_is_not_recursive() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(scan_all(&deep), Some(200_000));
    }
}
