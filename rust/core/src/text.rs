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
    if bytes.is_empty() {
        return None;
    }
    let (mut distinct, mut count) = ([0u8; 3], 0);
    for lit in literals.iter().map(AsRef::as_ref).filter(|l| !l.is_empty()) {
        let first = lit.as_bytes()[0];
        if !distinct[..count.min(3)].contains(&first) {
            if let Some(slot) = distinct.get_mut(count) {
                *slot = first;
            }
            count += 1;
        }
    }
    // With more than three distinct first bytes, a table of them (only then: it costs a fill).
    let first_bytes = (count > 3).then(|| {
        let mut table = [false; 256];
        for lit in literals.iter().map(AsRef::as_ref).filter(|l| !l.is_empty()) {
            table[lit.as_bytes()[0] as usize] = true;
        }
        table
    });
    // With at most three distinct first bytes, jump between candidates with memchr.
    let next_candidate = |from: usize| -> Option<usize> {
        let rest = &bytes[from..];
        let [a, b, c] = distinct;
        let found = match count {
            0 => None,
            1 => memchr::memchr(a, rest),
            2 => memchr::memchr2(a, b, rest),
            3 => memchr::memchr3(a, b, c, rest),
            _ => {
                let table = first_bytes.as_ref()?;
                rest.iter().position(|&x| table[x as usize])
            }
        };
        found.map(|k| from + k)
    };
    // A literal matches at a candidate when its second byte does (checked first: most
    // candidates are some other markup opening with the same byte) and then all of it does.
    let matches = |rest: &[u8], lit: &[u8]| {
        !lit.is_empty()
            && lit.get(1).is_none_or(|b| rest.get(1) == Some(b))
            && rest.starts_with(lit)
    };
    let mut from = 0;
    while let Some(pos) = next_candidate(from) {
        from = pos + 1;
        let rest = &bytes[pos..];
        let best = literals
            .iter()
            .map(AsRef::as_ref)
            .enumerate()
            .filter(|(_, l)| matches(rest, l.as_bytes()))
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

/// Length of the leading whitespace (Unicode's, as `str::trim_start`). The ASCII run that is
/// nearly always all of it is counted by bytes; the character decoding starts only at a byte
/// past ASCII.
pub fn skip_ws(hay: &str) -> usize {
    let ascii = hay
        .bytes()
        .take_while(|&b| matches!(b, b'\t'..=b'\r' | b' '))
        .count();
    match hay.as_bytes().get(ascii) {
        Some(&b) if b >= 0x80 => {
            let rest = &hay[ascii..];
            ascii + rest.len() - rest.trim_start().len()
        }
        _ => ascii,
    }
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

/// The format's stop texts (end-of-turn and end-of-sequence tokens) at the end of what has
/// arrived so far, held back until later text shows they were not the end of the output (they
/// are then text like any other) or the output ends (they are then dropped).
///
/// A held run is a stop text followed by stop texts and whitespace, maybe ending in the start of
/// a stop text; or only the start of one. The scan resumes where the last one stopped, so a
/// long run of stop texts stays linear.
#[derive(Debug, Default)]
pub struct StopTail {
    held: String,
    /// `held` begins with a complete stop text.
    in_run: bool,
    /// How far into `held` the scan has read.
    scanned: usize,
}

impl StopTail {
    /// Append `new`; returns the text before the run still held.
    #[cfg(test)]
    pub fn push<S: AsRef<str>>(&mut self, new: &str, stops: &[S]) -> String {
        let mut released = String::new();
        self.push_into(new, stops, &mut released);
        released
    }

    /// Append `new`, appending the text before the run still held to `out`. With nothing held
    /// (the usual case: no stop text at the end so far) `new` is scanned where it is, and only
    /// what is held back is copied here.
    pub fn push_into<S: AsRef<str>>(&mut self, new: &str, stops: &[S], out: &mut String) {
        let from_new = self.held.is_empty();
        // `scanned` is where the scan stopped past the start of what is held: with nothing
        // held, not in a run and nothing scanned.
        let (text, run_start, scanned) = if from_new {
            (new, None, 0)
        } else {
            self.held.push_str(new);
            (self.held.as_str(), self.in_run.then_some(0), self.scanned)
        };
        let (run_start, at) = held_run(text, run_start, scanned, stops);
        let split = run_start.unwrap_or(at);
        out.push_str(&text[..split]);
        if from_new {
            self.held.push_str(&new[split..]);
        } else {
            self.held.drain(..split);
        }
        self.in_run = run_start.is_some();
        self.scanned = at - split;
    }

    /// The output ended: nothing when what is held is a run of stop texts (whitespace after them
    /// included), else the held text (the start of a stop text that never completed).
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        let whole_run = self.in_run && self.scanned == held.len();
        *self = Self::default();
        if whole_run {
            String::new()
        } else {
            held
        }
    }
}

/// True when no held run can start at or past `at`, read off the end of `s` alone. A run reaches
/// the end, so its last stop text holds the last non-whitespace character, or the start of a
/// stop text ends `s`: either begins within the longest stop text's length before the trailing
/// whitespace. Where no stop text (nor the start of one that ends `s`) begins there, nothing is
/// held, and the whole completion need not be searched. (Stop texts that begin with whitespace,
/// or are empty, do not take this shortcut.)
fn tail_is_clear<S: AsRef<str>>(s: &str, at: usize, stops: &[S]) -> bool {
    let mut longest = 0;
    let mut first_bytes = [0u64; 4];
    for stop in stops.iter().map(AsRef::as_ref) {
        if stop.is_empty() || stop.starts_with(char::is_whitespace) {
            return false;
        }
        longest = longest.max(stop.len());
        let first = stop.as_bytes()[0];
        first_bytes[usize::from(first >> 6)] |= 1 << (first & 63);
    }
    let bytes = s.as_bytes();
    let from = s.trim_end().len().saturating_sub(longest).max(at);
    (from..bytes.len()).all(|q| {
        let rest = &bytes[q..];
        if first_bytes[usize::from(rest[0] >> 6)] & (1 << (rest[0] & 63)) == 0 {
            return true;
        }
        stops
            .iter()
            .map(|stop| stop.as_ref().as_bytes())
            .all(|stop| stop[0] != rest[0] || !(rest.starts_with(stop) || stop.starts_with(rest)))
    })
}

/// Where the held run of stop texts starts in `s` (`run_start`: where it started before, when
/// `s` began in one), and how far the scan read, resuming at `at`.
fn held_run<S: AsRef<str>>(
    s: &str,
    run_start: Option<usize>,
    at: usize,
    stops: &[S],
) -> (Option<usize>, usize) {
    if run_start.is_none() && tail_is_clear(s, at, stops) {
        return (None, s.len());
    }
    scan_held_run(s, run_start, at, stops)
}

/// [`held_run`] by reading `s` from `at` on.
fn scan_held_run<S: AsRef<str>>(
    s: &str,
    mut run_start: Option<usize>,
    mut at: usize,
    stops: &[S],
) -> (Option<usize>, usize) {
    loop {
        if run_start.is_some() {
            let rest = &s[at..];
            match rest.chars().next() {
                None => break,
                Some(c) if c.is_whitespace() => {
                    at += c.len_utf8();
                    continue;
                }
                _ => {}
            }
            if let Some(which) = starts_with_any(rest, stops) {
                at += stops[which].as_ref().len();
                continue;
            }
            if is_partial_of_any(rest, stops) {
                break;
            }
            run_start = None;
        }
        match find_any(&s[at..], stops) {
            Some((pos, which)) => {
                run_start = Some(at + pos);
                at += pos + stops[which].as_ref().len();
            }
            None => {
                at = s.len() - partial_suffix_len(&s[at..], stops);
                break;
            }
        }
    }
    (run_start, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_ws_skips_what_trim_start_trims() {
        let pieces = [
            " ", "\t", "\n", "\u{b}", "\u{c}", "\r", "\u{1c}", "\u{85}", "\u{a0}", "\u{3000}",
            "\u{2028}", "x", "é", "<", "\u{feff}",
        ];
        let mut seed: u64 = 7;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let mut past_ascii = 0;
        for _ in 0..20_000 {
            let text: String = (0..next() % 7)
                .map(|_| pieces[next() % pieces.len()])
                .collect();
            let expected = text.len() - text.trim_start().len();
            assert_eq!(super::skip_ws(&text), expected, "{text:?}");
            past_ascii += usize::from(text[expected..].is_empty() && !text.is_ascii());
        }
        assert!(
            past_ascii > 100,
            "Unicode whitespace runs were tried: {past_ascii}"
        );
    }

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

    #[test]
    fn a_clear_tail_gives_what_the_scan_gives() {
        let stops = ["<|im_end|>", "</s>", "<|endoftext|>"];
        let pieces = [
            "<|im_end|>",
            "</s>",
            "<|im",
            "<",
            "</",
            " ",
            "\n",
            "a",
            "é",
            "｜",
            "<|endoftext|>",
            "|>",
            "s>",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut clear, mut held) = (0, 0);
        for _ in 0..20_000 {
            let text: String = (0..next(9)).map(|_| pieces[next(pieces.len())]).collect();
            let at = (0..=text.len())
                .filter(|&k| text.is_char_boundary(k))
                .nth(next(4));
            let at = at.unwrap_or(0);
            let scanned = scan_held_run(&text, None, at, &stops);
            assert_eq!(
                held_run(&text, None, at, &stops),
                scanned,
                "{text:?} from {at}"
            );
            if tail_is_clear(&text, at, &stops) {
                clear += 1;
            } else if scanned.0.is_some() || scanned.1 < text.len() {
                held += 1;
            }
        }
        // Both sides of the shortcut were exercised.
        assert!(clear > 1_000 && held > 1_000, "{clear} clear, {held} held");
        // Stop texts opening with whitespace never take it.
        assert!(!tail_is_clear("abc", 0, &["\n<end>"]));
    }

    #[test]
    fn holds_stop_texts_only_at_the_end() {
        let stops = ["<|im_end|>", "</s>"];
        let run = |chunks: &[&str]| {
            let mut tail = StopTail::default();
            let mut out: String = chunks.iter().map(|c| tail.push(c, &stops)).collect();
            out.push_str(&tail.finish());
            out
        };
        assert_eq!(run(&["Hello<|im_end|>"]), "Hello");
        assert_eq!(run(&["Hello", "<|im", "_end|>", "\n", "</s>\n"]), "Hello");
        assert_eq!(run(&["a<|im_end|>b"]), "a<|im_end|>b");
        assert_eq!(run(&["a<|im_e", "nd|>", " b"]), "a<|im_end|> b");
        assert_eq!(run(&["a\n<|im_end|>"]), "a\n");
        assert_eq!(run(&["a<|im_end|><|im"]), "a<|im_end|><|im");
        assert_eq!(run(&["a<", "/s"]), "a</s");
        let mut tail = StopTail::default();
        assert_eq!(tail.push("a<|im_end|>\n", &stops), "a");
        assert_eq!(tail.push("x", &stops), "<|im_end|>\nx");
    }
}
