//! Marker search over streamed text.
//!
//! Streaming parsers must release text as soon as it cannot be the start of a marker, and hold back
//! only a possible partial marker at the end of the buffer. These helpers answer both questions in
//! one pass over the new text, so a feed costs time linear in its size.

/// Earliest occurrence of any literal; on ties the longest literal wins.
///
/// One pass over `hay` that stops at the first position where a literal matches, so a search
/// costs time proportional to the text before the match, however many literals are absent.
pub fn find_any<S: AsRef<str>>(hay: &str, literals: &[S]) -> Option<(usize, usize)> {
    let bytes = hay.as_bytes();
    let mut first_bytes = [false; 256];
    let (mut distinct, mut count) = ([0u8; 3], 0);
    for lit in literals.iter().map(AsRef::as_ref).filter(|l| !l.is_empty()) {
        let first = lit.as_bytes()[0];
        if !std::mem::replace(&mut first_bytes[first as usize], true) {
            if let Some(slot) = distinct.get_mut(count) {
                *slot = first;
            }
            count += 1;
        }
    }
    // With at most three distinct first bytes, jump between candidates with memchr.
    let next_candidate = |from: usize| -> Option<usize> {
        let rest = &bytes[from..];
        let [a, b, c] = distinct;
        let found = match count {
            0 => None,
            1 => memchr::memchr(a, rest),
            2 => memchr::memchr2(a, b, rest),
            3 => memchr::memchr3(a, b, c, rest),
            _ => rest.iter().position(|&x| first_bytes[x as usize]),
        };
        found.map(|k| from + k)
    };
    let mut from = 0;
    while let Some(pos) = next_candidate(from) {
        from = pos + 1;
        let rest = &bytes[pos..];
        let best = literals
            .iter()
            .map(AsRef::as_ref)
            .enumerate()
            .filter(|(_, l)| !l.is_empty() && rest.starts_with(l.as_bytes()))
            .max_by_key(|(which, l)| (l.len(), std::cmp::Reverse(*which)));
        if let Some((which, _)) = best {
            return Some((pos, which));
        }
    }
    None
}

/// Length of the longest suffix of `hay` that is a proper prefix of one of the literals; that
/// suffix must be held back because the next chunk may complete the marker.
pub fn partial_suffix_len<S: AsRef<str>>(hay: &str, literals: &[S]) -> usize {
    let bytes = hay.as_bytes();
    let mut best = 0;
    for lit in literals {
        let lit = lit.as_ref().as_bytes();
        if lit.is_empty() {
            continue;
        }
        let max = lit.len().saturating_sub(1).min(bytes.len());
        for pos in bytes.len() - max..bytes.len() {
            let len = bytes.len() - pos;
            if len <= best {
                break;
            }
            if bytes[pos] == lit[0] && bytes[pos..] == lit[..len] {
                best = len;
                break;
            }
        }
    }
    while best > 0 && !hay.is_char_boundary(hay.len() - best) {
        best -= 1;
    }
    best
}

/// Where the text can safely be released up to: either a full match of a literal, or everything
/// but a possible partial literal at the end.
pub enum Scan {
    Found { pos: usize, which: usize },
    NotFound { safe: usize },
}

pub fn scan<S: AsRef<str>>(hay: &str, literals: &[S]) -> Scan {
    match find_any(hay, literals) {
        Some((pos, which)) => Scan::Found { pos, which },
        None => Scan::NotFound {
            safe: hay.len() - partial_suffix_len(hay, literals),
        },
    }
}

/// True when `hay` is a proper prefix of `lit` (more input may still complete it).
pub fn is_proper_prefix(hay: &str, lit: &str) -> bool {
    hay.len() < lit.len() && lit.starts_with(hay)
}

/// Which of the literals `rest` starts with (the first listed, when several do).
pub fn starts_with_any<S: AsRef<str>>(rest: &str, literals: &[S]) -> Option<usize> {
    literals.iter().position(|l| rest.starts_with(l.as_ref()))
}

/// True when `rest` is a proper prefix of one of the literals (more input may complete it).
pub fn is_partial_of_any<S: AsRef<str>>(rest: &str, literals: &[S]) -> bool {
    literals.iter().any(|l| is_proper_prefix(rest, l.as_ref()))
}

pub fn skip_ws(hay: &str) -> usize {
    hay.len() - hay.trim_start().len()
}

/// Whitespace that a parser leaves unconsumed while it waits for what follows (formatting before
/// an end marker, or content after the region?) is offered again on every feed. Remembering how
/// much of it was already scanned, by its offset in the stream, keeps a long run of it linear.
#[derive(Debug, Default, Clone, Copy)]
pub struct WsRun {
    at: usize,
    len: usize,
}

impl WsRun {
    /// Length of the whitespace at the start of `rest`, which begins `at` bytes into the stream.
    pub fn skip(&mut self, at: usize, rest: &str) -> usize {
        self.skip_by(at, rest, skip_ws)
    }

    /// The same for a format's own notion of blank text: `skip` must return the length of a
    /// prefix, and skipping a prefix it returned and then the rest must give the same total.
    pub fn skip_by(&mut self, at: usize, rest: &str, skip: impl Fn(&str) -> usize) -> usize {
        let known = if self.at == at { self.len } else { 0 };
        let known = if known <= rest.len() && rest.is_char_boundary(known) {
            known
        } else {
            0
        };
        let len = known + skip(&rest[known..]);
        *self = Self { at, len };
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_earliest_then_longest() {
        assert_eq!(find_any("ab<x><xy>", &["<xy>", "<x>"]), Some((2, 1)));
        assert_eq!(find_any("ab<xy>", &["<x", "<xy>"]), Some((2, 1)));
        assert_eq!(find_any("abc", &["<x"]), None);
        // The search window after a first match must end on a char boundary.
        assert_eq!(
            find_any("<|start|>é", &["<|start|>", "<|channel|>"]),
            Some((0, 0))
        );
        // The search window after an earlier match must end on a char boundary.
        assert_eq!(find_any("<a>ü<bb>", &["<a>", "<bb>"]), Some((0, 0)));
        // The search window after an earlier match may end inside a multi-byte character.
        assert_eq!(find_any("<a>｜x", &["<a>", "<a>｜"]), Some((0, 1)));
        assert_eq!(find_any("<a>｜x", &["<a>", "a>"]), Some((0, 0)));
        // The search bound for a later literal may fall inside a multi-byte char.
        assert_eq!(find_any("<é", &["<", "<x"]), Some((0, 0)));
        assert_eq!(find_any("<😀<x", &["<", "<x"]), Some((0, 0)));
    }

    #[test]
    fn finds_with_any_number_of_distinct_first_bytes() {
        let hay = "xx a<b [c {d |e";
        assert_eq!(find_any(hay, &["[c"]), Some((7, 0)));
        assert_eq!(find_any(hay, &["{d", "[c"]), Some((7, 1)));
        assert_eq!(find_any(hay, &["{d", "|e", "<b"]), Some((4, 2)));
        assert_eq!(find_any(hay, &["|e", "{d", "[c", "<b"]), Some((4, 3)));
        // A candidate byte that starts no literal here is skipped, and the search goes on.
        assert_eq!(find_any("<a <b", &["<b"]), Some((3, 0)));
        assert_eq!(find_any("|a {a [a <a", &["|b", "{b", "[b", "<b"]), None);
    }

    #[test]
    fn holds_back_partial_markers_only() {
        assert_eq!(partial_suffix_len("hello <tool", &["<tool_call>"]), 5);
        assert_eq!(partial_suffix_len("hello <", &["<tool_call>", "[TOOL"]), 1);
        assert_eq!(partial_suffix_len("hello", &["<tool_call>"]), 0);
        assert_eq!(partial_suffix_len("a<tool_call>", &["<tool_call>"]), 0);
        assert_eq!(
            partial_suffix_len("x<｜tool", &["<｜tool▁calls▁begin｜>"]),
            "<｜tool".len()
        );
    }
}
