//! Incremental reader of one Python literal, written out as JSON text: the value of a keyword
//! argument in a pythonic tool call (`f(a=[1, 2], b={'k': None})`).
//!
//! Accepted: strings in single, double or triple quotes (with `r`/`u` prefixes, Python escapes and
//! implicit concatenation `"a" "b"`), integers (kept digit for digit, however large; `0x`/`0o`/`0b`
//! up to 128 bits), floats, `True`/`False`/`None` and their JSON spellings, lists, tuples (as JSON
//! arrays; `(x)` is just `x`), and dicts with string, number or constant keys. Anything else
//! (names, calls, operators, sets, f-strings, bytes) is an error: the value is not a literal.
//!
//! Nesting is an explicit stack capped at [`MAX_DEPTH`], so hostile input cannot overflow the
//! call stack, and every byte is examined once.

use crate::json;

/// Containers nested deeper than this are an error (serde_json refuses more than 128 anyway).
pub const MAX_DEPTH: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Tuple,
    Dict,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    kind: Kind,
    count: usize,
    comma: bool,
    /// Where the frame's opening bracket sits in the output (a one-element tuple drops it).
    open_at: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    Key,
    Colon,
    After,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Idle,
    /// `n` opening quotes (1 or 2) seen: the third decides between `""` and `"""`.
    Open {
        quote: u8,
        n: u8,
        raw: bool,
    },
    Body {
        quote: u8,
        triple: bool,
        raw: bool,
        run: u8,
    },
    Escape {
        quote: u8,
        triple: bool,
        raw: bool,
    },
    Hex {
        quote: u8,
        triple: bool,
        left: u8,
        acc: u32,
    },
    Octal {
        quote: u8,
        triple: bool,
        digits: u8,
        acc: u32,
    },
    /// A string closed; another may follow and join it.
    StrEnd,
    Sign {
        negative: bool,
    },
    Number {
        negative: bool,
    },
    Word,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Everything given belongs to the value; it is not complete yet.
    NeedMore,
    /// The value ended after this many bytes of the input (the next byte is not part of it).
    Done(usize),
    /// Not a literal: the byte at this offset is where it went wrong.
    Error(usize, &'static str),
}

#[derive(Debug, Clone)]
pub struct PyLiteral {
    out: String,
    stack: Vec<Frame>,
    expect: Expect,
    tok: Tok,
    /// Text of the number or word being read.
    word: String,
    sep_pending: bool,
    key_at: Option<usize>,
    key_is_str: bool,
    high_surrogate: Option<u32>,
}

impl Default for PyLiteral {
    fn default() -> Self {
        Self::new()
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

impl PyLiteral {
    pub fn new() -> Self {
        Self {
            out: String::new(),
            stack: Vec::new(),
            expect: Expect::Value,
            tok: Tok::Idle,
            word: String::new(),
            sep_pending: false,
            key_at: None,
            key_is_str: false,
            high_surrogate: None,
        }
    }

    /// Open containers around the current position.
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// Whether the reader is inside a string literal.
    pub fn in_string(&self) -> Option<u8> {
        match self.tok {
            Tok::Body { quote, .. }
            | Tok::Escape { quote, .. }
            | Tok::Hex { quote, .. }
            | Tok::Octal { quote, .. } => Some(quote),
            _ => None,
        }
    }

    /// The JSON text written so far (the whole value once `Done`).
    pub fn take_json(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    pub fn feed(&mut self, input: &str) -> Step {
        let bytes = input.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match self.tok {
                Tok::Idle => {
                    if is_space(b) {
                        i += 1;
                        continue;
                    }
                    match self.expect {
                        Expect::After => match (b, self.stack.last().map(|f| f.kind)) {
                            (b',', Some(kind)) => {
                                if let Some(top) = self.stack.last_mut() {
                                    top.comma = true;
                                }
                                self.sep_pending = true;
                                self.expect = if kind == Kind::Dict {
                                    Expect::Key
                                } else {
                                    Expect::Value
                                };
                                i += 1;
                            }
                            (b']', Some(Kind::List))
                            | (b')', Some(Kind::Tuple))
                            | (b'}', Some(Kind::Dict)) => {
                                i += 1;
                                if self.close() {
                                    return Step::Done(i);
                                }
                            }
                            (_, None) => return Step::Done(i),
                            _ => return Step::Error(i, "expected ',' or a closing bracket"),
                        },
                        Expect::Colon => {
                            if b != b':' {
                                return Step::Error(i, "expected ':' after a dict key");
                            }
                            self.out.push_str(": ");
                            self.expect = Expect::Value;
                            i += 1;
                        }
                        Expect::Value | Expect::Key => {
                            let closes = matches!(
                                (b, self.stack.last().map(|f| f.kind), self.expect),
                                (b']', Some(Kind::List), Expect::Value)
                                    | (b')', Some(Kind::Tuple), Expect::Value)
                                    | (b'}', Some(Kind::Dict), Expect::Key)
                            );
                            if closes {
                                i += 1;
                                if self.close() {
                                    return Step::Done(i);
                                }
                                continue;
                            }
                            if let Err(why) = self.start_value(b) {
                                return Step::Error(i, why);
                            }
                            if matches!(self.tok, Tok::Idle | Tok::Open { .. } | Tok::Sign { .. })
                                || matches!(b, b'[' | b'(' | b'{')
                            {
                                i += 1;
                            }
                        }
                    }
                }
                Tok::Open { quote, n, raw } => {
                    if b == quote {
                        i += 1;
                        self.tok = if n == 1 {
                            Tok::Open { quote, n: 2, raw }
                        } else {
                            Tok::Body {
                                quote,
                                triple: true,
                                raw,
                                run: 0,
                            }
                        };
                    } else if n == 1 {
                        self.tok = Tok::Body {
                            quote,
                            triple: false,
                            raw,
                            run: 0,
                        };
                    } else {
                        self.tok = Tok::StrEnd;
                    }
                }
                Tok::Body {
                    quote,
                    triple,
                    raw,
                    run,
                } => {
                    if triple && b == quote {
                        i += 1;
                        self.tok = if run == 2 {
                            Tok::StrEnd
                        } else {
                            Tok::Body {
                                quote,
                                triple,
                                raw,
                                run: run + 1,
                            }
                        };
                        continue;
                    }
                    if run > 0 {
                        for _ in 0..run {
                            self.push_char(quote as char);
                        }
                        self.tok = Tok::Body {
                            quote,
                            triple,
                            raw,
                            run: 0,
                        };
                    }
                    let end = bytes[i..]
                        .iter()
                        .position(|&c| {
                            c == quote || c == b'\\' || (!triple && (c == b'\n' || c == b'\r'))
                        })
                        .map_or(bytes.len(), |p| i + p);
                    self.push_text(&input[i..end]);
                    i = end;
                    match bytes.get(i) {
                        // A triple-quoted string counts its closing quotes above.
                        None => {}
                        Some(&c) if c == quote && triple => {}
                        Some(&c) if c == quote => {
                            i += 1;
                            self.tok = Tok::StrEnd;
                        }
                        Some(b'\\') => {
                            i += 1;
                            self.tok = Tok::Escape { quote, triple, raw };
                        }
                        Some(_) => return Step::Error(i, "line break inside a one-line string"),
                    }
                }
                Tok::Escape { quote, triple, raw } => {
                    let body = Tok::Body {
                        quote,
                        triple,
                        raw,
                        run: 0,
                    };
                    self.tok = body;
                    if raw {
                        self.push_char('\\');
                        if b == quote || b == b'\\' {
                            self.push_char(b as char);
                            i += 1;
                        }
                        continue;
                    }
                    let simple = match b {
                        b'\n' => Some(None),
                        b'\\' => Some(Some('\\')),
                        b'\'' => Some(Some('\'')),
                        b'"' => Some(Some('"')),
                        b'n' => Some(Some('\n')),
                        b't' => Some(Some('\t')),
                        b'r' => Some(Some('\r')),
                        b'a' => Some(Some('\x07')),
                        b'b' => Some(Some('\x08')),
                        b'f' => Some(Some('\x0c')),
                        b'v' => Some(Some('\x0b')),
                        _ => None,
                    };
                    if let Some(c) = simple {
                        if let Some(c) = c {
                            self.push_char(c);
                        }
                        i += 1;
                        continue;
                    }
                    match b {
                        b'0'..=b'7' => {
                            self.tok = Tok::Octal {
                                quote,
                                triple,
                                digits: 1,
                                acc: u32::from(b - b'0'),
                            };
                            i += 1;
                        }
                        b'x' | b'u' | b'U' => {
                            let left = match b {
                                b'x' => 2,
                                b'u' => 4,
                                _ => 8,
                            };
                            self.tok = Tok::Hex {
                                quote,
                                triple,
                                left,
                                acc: 0,
                            };
                            i += 1;
                        }
                        b'N' => return Step::Error(i, "\\N{...} escapes are not supported"),
                        // An unknown escape keeps its backslash, as Python does.
                        _ => self.push_char('\\'),
                    }
                }
                Tok::Octal {
                    quote,
                    triple,
                    digits,
                    acc,
                } => {
                    if (b'0'..=b'7').contains(&b) && digits < 3 {
                        i += 1;
                        let acc = acc * 8 + u32::from(b - b'0');
                        if digits + 1 == 3 {
                            self.end_escape(acc, quote, triple);
                        } else {
                            self.tok = Tok::Octal {
                                quote,
                                triple,
                                digits: digits + 1,
                                acc,
                            };
                        }
                    } else {
                        self.end_escape(acc, quote, triple);
                    }
                }
                Tok::Hex {
                    quote,
                    triple,
                    left,
                    acc,
                } => {
                    let Some(digit) = (b as char).to_digit(16) else {
                        return Step::Error(i, "truncated \\x, \\u or \\U escape");
                    };
                    i += 1;
                    let acc = acc.saturating_mul(16).saturating_add(digit);
                    if left == 1 {
                        if acc > 0x10FFFF {
                            return Step::Error(i, "escape beyond the Unicode range");
                        }
                        self.end_escape(acc, quote, triple);
                    } else {
                        self.tok = Tok::Hex {
                            quote,
                            triple,
                            left: left - 1,
                            acc,
                        };
                    }
                }
                Tok::StrEnd => {
                    if is_space(b) {
                        i += 1;
                    } else if b == b'"' || b == b'\'' {
                        i += 1;
                        self.tok = Tok::Open {
                            quote: b,
                            n: 1,
                            raw: false,
                        };
                    } else {
                        self.flush_surrogate();
                        self.out.push('"');
                        self.tok = Tok::Idle;
                        if self.complete_value() {
                            return Step::Done(i);
                        }
                    }
                }
                Tok::Sign { negative } => {
                    if is_space(b) {
                        i += 1;
                    } else if b.is_ascii_digit() || b == b'.' {
                        self.word.clear();
                        self.tok = Tok::Number { negative };
                    } else {
                        return Step::Error(i, "a sign must be followed by a number");
                    }
                }
                Tok::Number { negative } => {
                    let exponent_sign = matches!(b, b'+' | b'-')
                        && matches!(self.word.as_bytes().last(), Some(b'e' | b'E'))
                        && !self.word.starts_with("0x")
                        && !self.word.starts_with("0X");
                    if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || exponent_sign {
                        self.word.push(b as char);
                        i += 1;
                        continue;
                    }
                    let Some(number) = number_to_json(&self.word, negative) else {
                        return Step::Error(i, "not a valid number");
                    };
                    self.out.push_str(&number);
                    self.tok = Tok::Idle;
                    if self.complete_value() {
                        return Step::Done(i);
                    }
                }
                Tok::Word => {
                    if b.is_ascii_alphanumeric() || b == b'_' {
                        self.word.push(b as char);
                        i += 1;
                        continue;
                    }
                    if b == b'"' || b == b'\'' {
                        let raw = match self.word.as_str() {
                            "r" | "R" => true,
                            "u" | "U" => false,
                            _ => return Step::Error(i, "unsupported string prefix"),
                        };
                        if self.key_at.is_some() {
                            self.key_is_str = true;
                        }
                        self.out.push('"');
                        self.tok = Tok::Open {
                            quote: b,
                            n: 1,
                            raw,
                        };
                        i += 1;
                        continue;
                    }
                    let json = match self.word.as_str() {
                        "True" | "true" => "true",
                        "False" | "false" => "false",
                        "None" | "null" => "null",
                        _ => return Step::Error(i, "argument values must be literals"),
                    };
                    self.out.push_str(json);
                    self.tok = Tok::Idle;
                    if self.complete_value() {
                        return Step::Done(i);
                    }
                }
            }
        }
        Step::NeedMore
    }

    /// A value starts with byte `b` (already known not to be whitespace or a closer).
    fn start_value(&mut self, b: u8) -> Result<(), &'static str> {
        if self.sep_pending {
            self.out.push_str(", ");
            self.sep_pending = false;
        }
        let is_key = self.expect == Expect::Key;
        if is_key {
            self.key_at = Some(self.out.len());
            self.key_is_str = matches!(b, b'"' | b'\'');
        }
        match b {
            b'"' | b'\'' => {
                self.out.push('"');
                self.tok = Tok::Open {
                    quote: b,
                    n: 1,
                    raw: false,
                };
            }
            b'0'..=b'9' | b'.' => {
                self.word.clear();
                self.tok = Tok::Number { negative: false };
            }
            b'-' | b'+' => {
                self.tok = Tok::Sign {
                    negative: b == b'-',
                }
            }
            b'[' | b'(' | b'{' => {
                if is_key {
                    return Err("a dict key must be a string, a number or a constant");
                }
                if self.stack.len() >= MAX_DEPTH {
                    return Err("arguments nest too deeply");
                }
                let kind = match b {
                    b'[' => Kind::List,
                    b'(' => Kind::Tuple,
                    _ => Kind::Dict,
                };
                self.out.push(if kind == Kind::Dict { '{' } else { '[' });
                self.stack.push(Frame {
                    kind,
                    count: 0,
                    comma: false,
                    open_at: self.out.len() - 1,
                });
                self.expect = if kind == Kind::Dict {
                    Expect::Key
                } else {
                    Expect::Value
                };
            }
            b'A'..=b'Z' | b'a'..=b'z' | b'_' => {
                self.word.clear();
                self.tok = Tok::Word;
            }
            _ => return Err("expected a literal value"),
        }
        Ok(())
    }

    /// Close the innermost container; true when that completes the whole literal.
    fn close(&mut self) -> bool {
        self.sep_pending = false;
        let Some(frame) = self.stack.pop() else {
            return true;
        };
        match frame.kind {
            Kind::Dict => self.out.push('}'),
            Kind::List => self.out.push(']'),
            Kind::Tuple if frame.count == 1 && !frame.comma => {
                self.out.remove(frame.open_at);
            }
            Kind::Tuple => self.out.push(']'),
        }
        // A container is always a value in its parent (never a dict key).
        self.expect = Expect::Value;
        self.complete_value()
    }

    /// A value finished; true when it was the whole literal.
    fn complete_value(&mut self) -> bool {
        let Some(top) = self.stack.last_mut() else {
            return true;
        };
        if self.expect == Expect::Key {
            if let Some(at) = self.key_at.take() {
                if !self.key_is_str {
                    self.out.insert(at, '"');
                    self.out.push('"');
                }
            }
            self.expect = Expect::Colon;
        } else {
            top.count += 1;
            self.expect = Expect::After;
        }
        false
    }

    fn flush_surrogate(&mut self) {
        if self.high_surrogate.take().is_some() {
            self.out.push('\u{FFFD}');
        }
    }

    fn push_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.flush_surrogate();
        json::escape_into(&mut self.out, text);
    }

    fn push_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.push_text(c.encode_utf8(&mut buf));
    }

    /// The escape's character, then back to the (cooked) string body.
    fn end_escape(&mut self, code: u32, quote: u8, triple: bool) {
        self.push_code(code);
        self.tok = Tok::Body {
            quote,
            triple,
            raw: false,
            run: 0,
        };
    }

    /// A code point from an escape. Python keeps surrogates as they are; a high-low pair is
    /// joined here, and a lone surrogate (which JSON text cannot carry) becomes U+FFFD.
    fn push_code(&mut self, code: u32) {
        match code {
            0xD800..=0xDBFF => {
                self.flush_surrogate();
                self.high_surrogate = Some(code);
            }
            0xDC00..=0xDFFF => match self.high_surrogate.take() {
                Some(high) => {
                    let joined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                    self.push_char(char::from_u32(joined).unwrap_or('\u{FFFD}'));
                }
                None => self.out.push('\u{FFFD}'),
            },
            _ => self.push_char(char::from_u32(code).unwrap_or('\u{FFFD}')),
        }
    }
}

/// A Python number literal (without its sign) as JSON number text, digits kept exactly.
fn number_to_json(text: &str, negative: bool) -> Option<String> {
    let text: String = text.chars().filter(|&c| c != '_').collect();
    let lower = text.to_ascii_lowercase();
    let sign = if negative { "-" } else { "" };
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = lower.strip_prefix(prefix) {
            let value = u128::from_str_radix(digits, radix).ok()?;
            if digits.starts_with(['+', '-']) {
                return None;
            }
            return Some(format!("{sign}{value}"));
        }
    }
    let (mantissa, exponent) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let (int_part, frac) = match mantissa.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (mantissa, None),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int_part) || !frac.is_none_or(all_digits) {
        return None;
    }
    if int_part.is_empty() && frac.is_none_or(str::is_empty) {
        return None;
    }
    let is_int = frac.is_none() && exponent.is_none();
    let trimmed = int_part.trim_start_matches('0');
    if is_int && !trimmed.is_empty() && trimmed.len() != int_part.len() {
        // `007` is a syntax error in Python 3.
        return None;
    }
    let mut out = String::with_capacity(text.len() + 3);
    out.push_str(sign);
    out.push_str(if trimmed.is_empty() { "0" } else { trimmed });
    if let Some(frac) = frac {
        out.push('.');
        out.push_str(if frac.is_empty() { "0" } else { frac });
    }
    if let Some(exp) = exponent {
        let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        if digits.is_empty() || !all_digits(digits) {
            return None;
        }
        out.push('e');
        out.push_str(exp);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON for a whole literal followed by `)`, fed in one piece and byte by byte.
    fn convert(src: &str) -> Result<String, &'static str> {
        let text = format!("{src})");
        let mut whole = PyLiteral::new();
        let one = match whole.feed(&text) {
            Step::Done(n) => {
                assert_eq!(&text[n..], ")", "{src}: value end");
                Ok(whole.take_json())
            }
            Step::Error(_, why) => Err(why),
            Step::NeedMore => Err("incomplete"),
        };
        let mut split = PyLiteral::new();
        let mut result = Err("incomplete");
        let mut pos = 0;
        for (at, c) in text.char_indices() {
            if at < pos {
                continue;
            }
            let piece = &text[pos..at + c.len_utf8()];
            match split.feed(piece) {
                Step::NeedMore => pos = at + c.len_utf8(),
                Step::Done(n) => {
                    assert_eq!(&text[pos + n..], ")", "{src}: split value end");
                    result = Ok(split.take_json());
                    break;
                }
                Step::Error(_, why) => {
                    result = Err(why);
                    break;
                }
            }
        }
        assert_eq!(one, result, "{src}: one-shot and byte-by-byte differ");
        one
    }

    fn json_of(src: &str) -> serde_json::Value {
        let text = convert(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{src} -> {text}: {e}"))
    }

    #[test]
    fn scalars() {
        assert_eq!(json_of("'NYC'"), serde_json::json!("NYC"));
        assert_eq!(
            json_of("\"Tōkyō \\\"c\\\"\""),
            serde_json::json!("Tōkyō \"c\"")
        );
        assert_eq!(json_of("True"), serde_json::json!(true));
        assert_eq!(json_of("None"), serde_json::json!(null));
        assert_eq!(json_of("null"), serde_json::json!(null));
        assert_eq!(convert("-3").unwrap(), "-3");
        assert_eq!(convert("- 2.5e-3").unwrap(), "-2.5e-3");
        assert_eq!(convert("1_000").unwrap(), "1000");
        assert_eq!(convert(".5").unwrap(), "0.5");
        assert_eq!(convert("5.").unwrap(), "5.0");
        assert_eq!(convert("0x1F").unwrap(), "31");
        assert_eq!(
            convert("123456789012345678901234567890").unwrap(),
            "123456789012345678901234567890"
        );
        assert!(convert("007").is_err());
        assert!(convert("1j").is_err());
    }

    #[test]
    fn strings() {
        assert_eq!(json_of("'it\\'s'"), serde_json::json!("it's"));
        assert_eq!(json_of("\"\""), serde_json::json!(""));
        assert_eq!(json_of("''"), serde_json::json!(""));
        assert_eq!(json_of("'''a\n\"b\"'''"), serde_json::json!("a\n\"b\""));
        assert_eq!(json_of("\"\"\"x\"\"y\"\"\""), serde_json::json!("x\"\"y"));
        assert_eq!(json_of("'a' \"b\""), serde_json::json!("ab"));
        assert_eq!(json_of("r'\\d+\\''"), serde_json::json!("\\d+\\'"));
        assert_eq!(
            json_of("'\\x41\\u00e9\\U0001F600\\101\\0'"),
            serde_json::json!("Aé😀A\u{0}")
        );
        assert_eq!(json_of("'\\ud83d\\ude00'"), serde_json::json!("😀"));
        assert_eq!(json_of("'\\d'"), serde_json::json!("\\d"));
        assert_eq!(json_of("'tab\there'"), serde_json::json!("tab\there"));
        assert!(convert("'a\nb'").is_err());
        assert!(convert("b'x'").is_err());
        assert!(convert("f'x'").is_err());
    }

    #[test]
    fn containers() {
        assert_eq!(
            json_of(
                "{'a': [1, (2, 3)], 1: None, True: 'x', 'e': {}, 't': (), 'p': (4), 's': (5,),}"
            ),
            serde_json::json!({"a": [1, [2, 3]], "1": null, "true": "x", "e": {}, "t": [], "p": 4, "s": [5]})
        );
        assert_eq!(json_of("[ ]"), serde_json::json!([]));
        assert_eq!(json_of("[1, 2,]"), serde_json::json!([1, 2]));
        assert!(convert("[1,,2]").is_err());
        assert!(convert("{1, 2}").is_err());
        assert!(convert("{[1]: 2}").is_err());
        assert!(convert("[x]").is_err());
        assert!(convert("[1}").is_err());
    }

    #[test]
    fn depth_is_capped_without_recursion() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(convert(&deep), Err("arguments nest too deeply"));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(convert(&ok).is_ok());
        let mut lit = PyLiteral::new();
        let huge = "(".repeat(1_000_000);
        assert!(matches!(lit.feed(&huge), Step::Error(_, _)));
    }
}
