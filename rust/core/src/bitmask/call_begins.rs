//! The tools' call begins of a composed grammar, for taking the tokens of a call's name without
//! Python.
//!
//! A composed request (`toolwire.grammar.composed`) that has entered a call's begin follows every
//! tool whose begin (`<tool_call>\n{"name": "get_weather", "arguments": ` and the like) still
//! agrees with the call's text. While two or more tools' begins continue past that text, the
//! state is the text itself: the begins that start with it are the tools still followed, and
//! its mask row is cached under it. A token whose bytes keep two or more begins going, none of
//! them completed, changes nothing but that text, so a batch step can take it by appending its
//! bytes, as it takes the tokens inside a piece through the piece's keyer. Any other token (one
//! that leaves a single tool, completes a begin or runs past one into the arguments) is left to
//! the composed matcher, which judges it with the tools' grammars.
//!
//! The begins are kept sorted: those starting with a text are then one run of the list.

use std::ops::Range;

/// The begins of a composed grammar's tools (duplicates kept: two tools of one name are two
/// branches, as the matcher follows them).
#[derive(Debug, Clone, Default)]
pub struct CallBegins {
    sorted: Vec<Box<[u8]>>,
}

impl CallBegins {
    pub fn new<I, B>(begins: I) -> Self
    where
        I: IntoIterator<Item = B>,
        B: Into<Box<[u8]>>,
    {
        let mut sorted: Vec<Box<[u8]>> = begins.into_iter().map(Into::into).collect();
        sorted.sort_unstable();
        CallBegins { sorted }
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The run of begins that start with `text`.
    fn starting_with(&self, text: &[u8]) -> Range<usize> {
        let lo = self.sorted.partition_point(|b| &**b < text);
        let hi = lo + self.sorted[lo..].partition_point(|b| b.starts_with(text));
        lo..hi
    }

    /// How many begins continue past `text` (start with it and are longer).
    pub fn continuing(&self, text: &[u8]) -> usize {
        let run = self.starting_with(text);
        self.sorted[run]
            .iter()
            .filter(|b| b.len() > text.len())
            .count()
    }

    /// Whether `data` read after `call` (where the begins still followed are those continuing
    /// past `call`) is a step inside two or more begins' literal text: no begin ends within
    /// `data`, and two or more continue past `call` + `data`.
    pub fn literal_step(&self, call: &[u8], data: &[u8]) -> bool {
        if data.is_empty() {
            return false;
        }
        let mut text = Vec::with_capacity(call.len() + data.len());
        text.extend_from_slice(call);
        text.extend_from_slice(data);
        let ends_within = (call.len() + 1..=text.len()).any(|n| {
            self.sorted
                .binary_search_by(|b| (**b).cmp(&text[..n]))
                .is_ok()
        });
        if ends_within {
            return false;
        }
        let run = self.starting_with(&text);
        run.len() >= 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule stated plainly, over every begin: what `literal_step` must answer.
    fn plain(begins: &[&[u8]], call: &[u8], data: &[u8]) -> bool {
        if data.is_empty() {
            return false;
        }
        let text = [call, data].concat();
        let followed: Vec<&[u8]> = begins
            .iter()
            .copied()
            .filter(|b| b.starts_with(call) && b.len() > call.len())
            .collect();
        let ends = followed.iter().any(|b| text.starts_with(b));
        let on = followed
            .iter()
            .filter(|b| b.starts_with(&text) && b.len() > text.len())
            .count();
        !ends && on >= 2
    }

    #[test]
    fn steps_inside_shared_names_only() {
        let begins: [&[u8]; 4] = [
            b"<c>{\"name\": \"get_weather\", ",
            b"<c>{\"name\": \"get_time\", ",
            b"<c>{\"name\": \"get\", ",
            b"<c>{\"name\": \"search\", ",
        ];
        let b = CallBegins::new(begins.iter().map(|s| s.to_vec()));
        let head = b"<c>{\"name\": \"";
        assert!(b.literal_step(head, b"g"));
        assert!(b.literal_step(head, b"get"));
        assert!(b.literal_step(b"<c>{\"name\": \"get", b"_"));
        assert!(!b.literal_step(head, b"s"), "one tool left");
        assert!(
            !b.literal_step(b"<c>{\"name\": \"get_", b"w"),
            "one tool left"
        );
        assert!(
            !b.literal_step(b"<c>{\"name\": \"get", b"\", "),
            "a begin completed"
        );
        assert!(
            !b.literal_step(b"<c>{\"name\": \"get\"", b", {"),
            "runs past a begin"
        );
        assert!(!b.literal_step(head, b"x"), "no begin");
        assert!(!b.literal_step(head, b""), "no bytes");
        assert_eq!(b.continuing(head), 4);
        assert_eq!(b.continuing(b"<c>{\"name\": \"get"), 3);
    }

    #[test]
    fn duplicate_begins_are_two_branches() {
        let b = CallBegins::new([b"<a>x".to_vec(), b"<a>x".to_vec()]);
        assert!(b.literal_step(b"<", b"a>"), "two branches go on");
        assert!(!b.literal_step(b"<a>", b"x"), "both complete");
    }

    #[test]
    fn agrees_with_the_plain_rule() {
        // Small alphabet, many shared prefixes: every call prefix and short token of each.
        let begins: Vec<Vec<u8>> = ["ab", "abc", "abd", "abdd", "b", "ba", "bab", "abc", "ca"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let refs: Vec<&[u8]> = begins.iter().map(Vec::as_slice).collect();
        let b = CallBegins::new(begins.clone());
        let alphabet = [b'a', b'b', b'c', b'd'];
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=3 {
            let mut next = Vec::new();
            for t in texts.iter().filter(|t| t.len() == len - 1) {
                for &c in &alphabet {
                    let mut u = t.clone();
                    u.push(c);
                    next.push(u);
                }
            }
            texts.extend(next);
        }
        let mut checked = 0;
        for call in &texts {
            for data in &texts {
                assert_eq!(
                    b.literal_step(call, data),
                    plain(&refs, call, data),
                    "call {:?} data {:?}",
                    String::from_utf8_lossy(call),
                    String::from_utf8_lossy(data)
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 85 * 85);
    }
}
