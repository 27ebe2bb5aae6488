//! Translation of ECMA-262 regular expressions (the dialect JSON Schema specifies) into the syntax
//! of the `regex` crate.
//!
//! The translation keeps ECMA meanings where the two dialects differ: `\d`, `\w` and `\b` are
//! ASCII-only, `\s` is the ECMA whitespace set, `.` excludes all four line terminators, and every
//! literal is emitted as a hex escape so no character can change meaning. Lookaround and
//! backreferences have no equivalent in a linear-time engine and are reported as unsupported.

use std::fmt::Write;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RegexProblem {
    /// Valid ECMA-262, but the feature cannot be run by the `regex` crate.
    Unsupported(&'static str),
    /// Not a valid ECMA-262 pattern.
    Invalid(String),
}

/// How forgiving to be with syntax ECMA-262 only allows outside Unicode mode (Annex B):
/// identity escapes of punctuation such as `\-` or `\#`, and stray `{`, `}` or `]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strictness {
    UnicodeMode,
    AnnexB,
}

const DIGIT_SET: &str = "0-9";
const WORD_SET: &str = "0-9A-Za-z_";
const SPACE_SET: &str = r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const NOT_LINE_TERMINATOR: &str = r"[^\n\r\x{2028}\x{2029}]";
const NOTHING: &str = r"[^\x{0}-\x{10FFFF}]";
const ANYTHING: &str = r"(?s:.)";
const MAX_GROUP_DEPTH: usize = 200;

pub(crate) fn translate(pattern: &str, strictness: Strictness) -> Result<String, RegexProblem> {
    let mut translator = Translator {
        chars: pattern.chars().collect(),
        position: 0,
        output: String::with_capacity(pattern.len() * 2),
        strictness,
    };
    translator.disjunction(0)?;
    if translator.position < translator.chars.len() {
        return Err(invalid("unmatched ')'"));
    }
    Ok(translator.output)
}

fn invalid(message: &str) -> RegexProblem {
    RegexProblem::Invalid(message.to_string())
}

fn push_literal(output: &mut String, character: char) {
    if character.is_ascii_alphanumeric() {
        output.push(character);
    } else {
        let _ = write!(output, "\\x{{{:X}}}", u32::from(character));
    }
}

fn is_syntax_character(character: char) -> bool {
    matches!(
        character,
        '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '/'
    )
}

/// One element of a character class: a single character, or a set already in `regex` syntax.
enum ClassAtom {
    Char(char),
    Set(String),
}

/// What an atom escape stands for outside a class.
enum Escaped {
    Char(char),
    Set(String),
    NeverMatches,
}

struct Translator {
    chars: Vec<char>,
    position: usize,
    output: String,
    strictness: Strictness,
}

impl Translator {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.position).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.position + offset).copied()
    }

    fn next(&mut self) -> Option<char> {
        let character = self.peek()?;
        self.position += 1;
        Some(character)
    }

    fn eat(&mut self, expected: char) -> bool {
        if self.peek() == Some(expected) {
            self.position += 1;
            true
        } else {
            false
        }
    }

    fn lenient(&self) -> bool {
        self.strictness == Strictness::AnnexB
    }

    fn disjunction(&mut self, depth: usize) -> Result<(), RegexProblem> {
        if depth > MAX_GROUP_DEPTH {
            return Err(invalid("groups nested too deeply"));
        }
        loop {
            self.alternative(depth)?;
            if self.eat('|') {
                self.output.push('|');
            } else {
                return Ok(());
            }
        }
    }

    fn alternative(&mut self, depth: usize) -> Result<(), RegexProblem> {
        while let Some(character) = self.peek() {
            if character == '|' || character == ')' {
                return Ok(());
            }
            self.term(depth)?;
        }
        Ok(())
    }

    fn term(&mut self, depth: usize) -> Result<(), RegexProblem> {
        let Some(character) = self.next() else {
            return Ok(());
        };
        let quantifiable = match character {
            '^' | '$' => {
                self.output.push(character);
                false
            }
            '\\' if matches!(self.peek(), Some('b' | 'B')) => {
                let boundary = self.next().unwrap_or('b');
                self.output.push_str(if boundary == 'b' {
                    r"(?-u:\b)"
                } else {
                    r"(?-u:\B)"
                });
                false
            }
            '\\' => {
                match self.atom_escape()? {
                    Escaped::Char(literal) => push_literal(&mut self.output, literal),
                    Escaped::Set(set) => self.output.push_str(&set),
                    Escaped::NeverMatches => self.output.push_str(NOTHING),
                }
                true
            }
            '(' => {
                self.group(depth)?;
                true
            }
            '[' => {
                self.class()?;
                true
            }
            '.' => {
                self.output.push_str(NOT_LINE_TERMINATOR);
                true
            }
            '*' | '+' | '?' => return Err(invalid("nothing to repeat")),
            '{' => {
                self.position -= 1;
                if self.quantifier_bounds().is_some() || !self.lenient() {
                    return Err(invalid("nothing to repeat, or a lone '{'"));
                }
                self.position += 1;
                push_literal(&mut self.output, '{');
                true
            }
            '}' | ']' => {
                if !self.lenient() {
                    return Err(invalid("lone '}' or ']'"));
                }
                push_literal(&mut self.output, character);
                true
            }
            ')' => return Err(invalid("unmatched ')'")),
            other => {
                push_literal(&mut self.output, other);
                true
            }
        };
        self.quantifier(quantifiable)
    }

    fn quantifier(&mut self, quantifiable: bool) -> Result<(), RegexProblem> {
        let start = self.position;
        let text = match self.peek() {
            Some(symbol @ ('*' | '+' | '?')) => {
                self.position += 1;
                symbol.to_string()
            }
            Some('{') => match self.quantifier_bounds() {
                Some((minimum, maximum)) => {
                    if maximum.is_some_and(|maximum| maximum < minimum) {
                        return Err(invalid("numbers out of order in {} quantifier"));
                    }
                    match maximum {
                        None => format!("{{{minimum},}}"),
                        Some(maximum) if maximum == minimum => format!("{{{minimum}}}"),
                        Some(maximum) => format!("{{{minimum},{maximum}}}"),
                    }
                }
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        if !quantifiable {
            self.position = start;
            return Err(invalid("quantifier after an assertion"));
        }
        self.output.push_str(&text);
        if self.eat('?') {
            self.output.push('?');
        }
        Ok(())
    }

    /// Parses `{n}`, `{n,}` or `{n,m}` at the cursor, advancing past it; `None` leaves the cursor.
    fn quantifier_bounds(&mut self) -> Option<(u32, Option<u32>)> {
        let start = self.position;
        let result = (|| {
            if !self.eat('{') {
                return None;
            }
            let minimum = self.decimal()?;
            let maximum = if self.eat(',') {
                if self.peek() == Some('}') {
                    None
                } else {
                    Some(self.decimal()?)
                }
            } else {
                Some(minimum)
            };
            self.eat('}').then_some((minimum, maximum))
        })();
        if result.is_none() {
            self.position = start;
        }
        result
    }

    fn decimal(&mut self) -> Option<u32> {
        let start = self.position;
        let mut value: u32 = 0;
        while let Some(digit) = self.peek().and_then(|character| character.to_digit(10)) {
            value = value.checked_mul(10)?.checked_add(digit)?;
            self.position += 1;
        }
        (self.position > start).then_some(value)
    }

    fn group(&mut self, depth: usize) -> Result<(), RegexProblem> {
        if self.eat('?') {
            match self.next() {
                Some(':') => {}
                Some('=' | '!') => return Err(RegexProblem::Unsupported("lookahead")),
                Some('<') if matches!(self.peek(), Some('=' | '!')) => {
                    return Err(RegexProblem::Unsupported("lookbehind"))
                }
                Some('<') => self.group_name()?,
                _ => return Err(invalid("invalid group")),
            }
        }
        self.output.push_str("(?:");
        self.disjunction(depth + 1)?;
        if !self.eat(')') {
            return Err(invalid("unterminated group"));
        }
        self.output.push(')');
        Ok(())
    }

    fn group_name(&mut self) -> Result<(), RegexProblem> {
        let mut first = true;
        loop {
            match self.next() {
                Some('>') if !first => return Ok(()),
                Some(character)
                    if character == '$'
                        || character == '_'
                        || character.is_alphabetic()
                        || (!first && character.is_alphanumeric()) =>
                {
                    first = false;
                }
                _ => return Err(invalid("invalid group name")),
            }
        }
    }

    fn atom_escape(&mut self) -> Result<Escaped, RegexProblem> {
        let Some(character) = self.next() else {
            return Err(invalid("pattern ends with '\\'"));
        };
        match character {
            '1'..='9' => Err(RegexProblem::Unsupported("backreference")),
            'k' => Err(RegexProblem::Unsupported("named backreference")),
            '-' if self.lenient() => Ok(Escaped::Char('-')),
            _ => match self.shared_escape(character)? {
                ClassAtom::Char(literal) => Ok(Escaped::Char(literal)),
                ClassAtom::Set(set) if set.is_empty() => Ok(Escaped::NeverMatches),
                ClassAtom::Set(set) => Ok(Escaped::Set(set)),
            },
        }
    }

    /// Escapes valid both inside and outside classes; the leading `\` is consumed. A lone
    /// surrogate, which no Rust string can contain, comes back as an empty set.
    fn shared_escape(&mut self, character: char) -> Result<ClassAtom, RegexProblem> {
        let literal = match character {
            'd' => return Ok(ClassAtom::Set(format!("[{DIGIT_SET}]"))),
            'D' => return Ok(ClassAtom::Set(format!("[^{DIGIT_SET}]"))),
            'w' => return Ok(ClassAtom::Set(format!("[{WORD_SET}]"))),
            'W' => return Ok(ClassAtom::Set(format!("[^{WORD_SET}]"))),
            's' => return Ok(ClassAtom::Set(format!("[{SPACE_SET}]"))),
            'S' => return Ok(ClassAtom::Set(format!("[^{SPACE_SET}]"))),
            'p' | 'P' => return self.property_escape(character == 'P').map(ClassAtom::Set),
            'f' => '\x0C',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0B',
            'c' => match self.next() {
                Some(letter) if letter.is_ascii_alphabetic() => char::from(letter as u8 % 32),
                _ => return Err(invalid("\\c must be followed by an ASCII letter")),
            },
            '0' => {
                if self.peek().is_some_and(|next| next.is_ascii_digit()) {
                    return Err(invalid("octal escapes are not allowed"));
                }
                '\0'
            }
            'x' => {
                let value = self
                    .hex_digits(2)
                    .ok_or_else(|| invalid("\\x needs two hex digits"))?;
                char::from_u32(value).ok_or_else(|| invalid("bad \\x escape"))?
            }
            'u' => return self.unicode_escape(),
            other if is_syntax_character(other) => other,
            other if self.lenient() && !other.is_ascii_alphanumeric() && other != '_' => other,
            other => return Err(RegexProblem::Invalid(format!("invalid escape '\\{other}'"))),
        };
        Ok(ClassAtom::Char(literal))
    }

    fn property_escape(&mut self, negated: bool) -> Result<String, RegexProblem> {
        if !self.eat('{') {
            return Err(invalid("\\p must be followed by {name}"));
        }
        let mut name = String::new();
        loop {
            match self.next() {
                Some('}') if !name.is_empty() => break,
                Some(character)
                    if character.is_ascii_alphanumeric() || matches!(character, '_' | '=') =>
                {
                    name.push(character)
                }
                _ => return Err(invalid("invalid \\p{...} property")),
            }
        }
        Ok(format!("\\{}{{{name}}}", if negated { 'P' } else { 'p' }))
    }

    fn hex_digits(&mut self, count: usize) -> Option<u32> {
        let mut value = 0;
        for offset in 0..count {
            value = value * 16 + self.peek_at(offset)?.to_digit(16)?;
        }
        self.position += count;
        Some(value)
    }

    fn unicode_escape(&mut self) -> Result<ClassAtom, RegexProblem> {
        if self.eat('{') {
            let mut value: u32 = 0;
            let mut digits = 0;
            while let Some(digit) = self.peek().and_then(|character| character.to_digit(16)) {
                value = value.saturating_mul(16).saturating_add(digit);
                digits += 1;
                self.position += 1;
            }
            if digits == 0 || !self.eat('}') || value > 0x10FFFF {
                return Err(invalid("invalid \\u{...} escape"));
            }
            return Ok(code_point(value));
        }
        let high = self
            .hex_digits(4)
            .ok_or_else(|| invalid("\\u needs four hex digits"))?;
        if (0xD800..0xDC00).contains(&high)
            && self.peek() == Some('\\')
            && self.peek_at(1) == Some('u')
        {
            let saved = self.position;
            self.position += 2;
            match self.hex_digits(4) {
                Some(low) if (0xDC00..0xE000).contains(&low) => {
                    return Ok(code_point(
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00),
                    ));
                }
                _ => self.position = saved,
            }
        }
        Ok(code_point(high))
    }

    fn class(&mut self) -> Result<(), RegexProblem> {
        let negated = self.eat('^');
        if self.eat(']') {
            self.output
                .push_str(if negated { ANYTHING } else { NOTHING });
            return Ok(());
        }
        let mut body = String::new();
        loop {
            if self.eat(']') {
                break;
            }
            if self.peek().is_none() {
                return Err(invalid("unterminated character class"));
            }
            let first = self.class_atom()?;
            let is_range = self.peek() == Some('-') && !matches!(self.peek_at(1), Some(']') | None);
            if !is_range {
                push_class_atom(&mut body, first);
                continue;
            }
            self.position += 1;
            let second = self.class_atom()?;
            match (first, second) {
                (ClassAtom::Char(low), ClassAtom::Char(high)) => {
                    if low > high {
                        return Err(invalid("range out of order in character class"));
                    }
                    push_literal(&mut body, low);
                    body.push('-');
                    push_literal(&mut body, high);
                }
                (first, second) => {
                    if !self.lenient() {
                        return Err(invalid("a class escape cannot bound a range"));
                    }
                    push_class_atom(&mut body, first);
                    push_literal(&mut body, '-');
                    push_class_atom(&mut body, second);
                }
            }
        }
        if body.is_empty() {
            // Only lone surrogates, which match nothing in a valid string.
            self.output
                .push_str(if negated { ANYTHING } else { NOTHING });
        } else {
            self.output.push('[');
            if negated {
                self.output.push('^');
            }
            self.output.push_str(&body);
            self.output.push(']');
        }
        Ok(())
    }

    fn class_atom(&mut self) -> Result<ClassAtom, RegexProblem> {
        match self.next() {
            None => Err(invalid("unterminated character class")),
            Some('\\') => match self.next() {
                None => Err(invalid("pattern ends with '\\'")),
                Some('b') => Ok(ClassAtom::Char('\x08')),
                Some('-') => Ok(ClassAtom::Char('-')),
                Some('1'..='9') => Err(invalid("backreference inside a character class")),
                Some(character) => self.shared_escape(character),
            },
            Some(character) => Ok(ClassAtom::Char(character)),
        }
    }
}

fn code_point(value: u32) -> ClassAtom {
    match char::from_u32(value) {
        Some(character) => ClassAtom::Char(character),
        None => ClassAtom::Set(String::new()),
    }
}

fn push_class_atom(body: &mut String, atom: ClassAtom) {
    match atom {
        ClassAtom::Char(character) => push_literal(body, character),
        ClassAtom::Set(set) => body.push_str(&set),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiles(pattern: &str) -> regex::Regex {
        let translated = translate(pattern, Strictness::UnicodeMode).expect("translates");
        regex::Regex::new(&translated)
            .unwrap_or_else(|error| panic!("{pattern} -> {translated}: {error}"))
    }

    #[test]
    fn keeps_ecma_meanings() {
        assert!(!compiles(r"^\d$").is_match("\u{07c0}"));
        assert!(compiles(r"^\D$").is_match("\u{07c0}"));
        assert!(!compiles(r"^\w$").is_match("é"));
        assert!(compiles(r"^\s$").is_match("\u{feff}"));
        assert!(!compiles(r"^\s$").is_match("\u{0085}"));
        assert!(!compiles(r"^.$").is_match("\u{2028}"));
        assert!(!compiles(r"^abc$").is_match("abc\n"));
        assert!(compiles(r"^\cC$").is_match("\u{3}"));
        assert!(compiles(r"^[\d\-z]+$").is_match("1-z"));
        assert!(compiles(r"^[^\D]$").is_match("5"));
        assert!(compiles(r"^\uD83D\uDC32$").is_match("🐲"));
        assert!(compiles(r"^\u{1F432}$").is_match("🐲"));
        assert!(compiles(r"^(?<year>\d{4})-\d{2}$").is_match("2024-01"));
        assert!(compiles(r"a{2,}?b").is_match("aaab"));
        assert!(!compiles(r"[]").is_match("a"));
        assert!(compiles(r"^[^]$").is_match("\n"));
        assert!(compiles(r"\bfoo\b").is_match("a foo."));
    }

    #[test]
    fn reports_unsupported_features() {
        assert_eq!(
            translate("(?=a)", Strictness::UnicodeMode),
            Err(RegexProblem::Unsupported("lookahead"))
        );
        assert_eq!(
            translate("(?<!a)b", Strictness::UnicodeMode),
            Err(RegexProblem::Unsupported("lookbehind"))
        );
        assert_eq!(
            translate(r"(a)\1", Strictness::UnicodeMode),
            Err(RegexProblem::Unsupported("backreference"))
        );
    }

    #[test]
    fn rejects_invalid_patterns() {
        for pattern in [
            "(", "a)", "[a", "*a", r"\a", "(?i)abc", "(?P<n>x)", "(?#c)", "a{2,1}", "[z-a]", "^*",
            "\\",
        ] {
            assert!(
                matches!(
                    translate(pattern, Strictness::UnicodeMode),
                    Err(RegexProblem::Invalid(_))
                ),
                "{pattern}"
            );
        }
    }

    #[test]
    fn annex_b_accepts_sloppy_punctuation() {
        for pattern in [r"\-\#\@", "a{", "a}", "]", r"[\w-.]"] {
            assert!(translate(pattern, Strictness::AnnexB).is_ok(), "{pattern}");
            assert!(
                translate(pattern, Strictness::UnicodeMode).is_err(),
                "{pattern}"
            );
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn translation_never_panics_and_compiles(pattern in "[-a-c0-9\\\\()\\[\\]{}|*+?.^$:=!<>,uxcpPdDsSwWbBk]{0,16}|\\PC{0,12}") {
                for strictness in [Strictness::UnicodeMode, Strictness::AnnexB] {
                    if let Ok(translated) = translate(&pattern, strictness) {
                        let compiled = regex::Regex::new(&translated);
                        prop_assert!(
                            compiled.is_ok() || translated.contains("\\p{") || translated.contains("\\P{"),
                            "{:?} -> {:?}: {:?}", pattern, translated, compiled.err()
                        );
                    }
                }
            }
        }
    }
}
