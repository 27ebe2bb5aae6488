//! Which wire format a model's chat template writes, decided from the format specs alone.
//!
//! Users pick a parser by name, and a wrong pick parses nothing. The chat template is where a
//! model family writes its own tool calls back into the prompt, so its text shows the format; the
//! vocabulary's added tokens show which markers are single special tokens. Detection asks each
//! registered format for its evidence, all of it read from the format's [`Syntax`]:
//!
//! - **layout**: the format's renderer writes one probe call (`get_weather`, `{"city": "Paris"}`);
//!   the literal pieces between the name, the argument key, the value and the arguments' JSON are
//!   what a template writes around its `{{ ... }}` expressions (GLM-4.5's `</arg_key>\n<arg_value>`
//!   against GLM-4.7's `</arg_key><arg_value>`). A piece is found in the template's literal text
//!   ([`jinja::flatten`]), where a computed value may stand for an identifier inside the piece
//!   (DeepSeek-R1 writes `tool['type']` where the renderer writes `function`);
//! - **markers**: each marker text, found in the template or among the vocabulary's added tokens;
//! - **chat-template markup** the spec records for detection only
//!   ([`crate::spec::CHAT_TEMPLATE_MARKUP`]: gpt-oss's `to=functions.` recipient in the role
//!   header, Llama's `ipython` tool-result turn).
//!
//! Only a template that shows some tool-call markup of a format makes it a candidate (reasoning
//! delimiters alone do not). Two candidates are compared on the evidence that tells them apart:
//! what one has and the other does not. The one with more of its own evidence found wins; when
//! neither has any, the one whose evidence is all found wins over one that claims markup the
//! template does not show (Hermes over ERNIE without `<response>`); neither wins when both show
//! all of theirs (a template that writes Hermes JSON and Qwen3-Coder XML alike). A format that wins against
//! every other candidate is the answer; otherwise the result is ambiguous, with the candidates
//! ranked. A template without tool syntax is unknown, and so is one whose best format shows less
//! than [`MIN_COVERAGE`] of its evidence. There is no fallback format.

mod jinja;

pub use jinja::{flatten, HOLE};

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::json;

use crate::formats::{Format, REGISTRY};
use crate::render::RenderCall;
use crate::request::ReasoningMode;
use crate::spec::{Role, Syntax, CHAT_TEMPLATE_MARKUP};

/// What detection reads: the chat template's source, optionally the prompt it renders for one
/// user message with `add_generation_prompt` (which says whether the prompt opens reasoning), and
/// optionally the vocabulary's added tokens.
#[derive(Debug, Default)]
pub struct Source<'a> {
    pub template: &'a str,
    pub generation_prompt: Option<&'a str>,
    pub vocabulary: Option<Vocabulary>,
}

/// A tokenizer's added tokens, and which of them are special (stripped by `skip_special_tokens`).
#[derive(Debug, Default, Clone)]
pub struct Vocabulary {
    pub added: Vec<String>,
    pub special: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Confident,
    Ambiguous,
    Unknown,
}

/// One format the template may be written for, with its evidence.
#[derive(Debug, Serialize)]
pub struct Candidate {
    pub format: &'static str,
    /// The share of the format's evidence (layout pieces count twice) that was found.
    pub coverage: f64,
    pub found: Vec<String>,
    pub missing: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Detection {
    pub status: Status,
    /// The format when confident.
    pub format: Option<&'static str>,
    /// For the format: `closing_only` when the generation prompt opens the reasoning block,
    /// `native` (or `think`, for a format without its own delimiters) when the template shows the
    /// block, None when it shows no reasoning.
    pub reasoning: Option<&'static str>,
    /// `closing_only` (the prompt opens the block) or `paired` (the model writes both ends).
    pub thinking_style: Option<&'static str>,
    /// The format's markers that are special tokens: from the vocabulary when one was given,
    /// otherwise as the spec records them. Non-empty: `skip_special_tokens` must be off.
    pub special_markers: Vec<&'static str>,
    pub vocabulary_checked: bool,
    /// Every candidate, best first.
    pub candidates: Vec<Candidate>,
}

const PROBE_NAME: &str = "get_weather";
const PROBE_KEY: &str = "city";
const PROBE_VALUE: &str = "Paris";
const LAYOUT_WEIGHT: u32 = 2;
const MARKER_WEIGHT: u32 = 1;
/// The least coverage a winner needs to be the answer.
pub const MIN_COVERAGE: f64 = 0.4;

struct Item {
    text: String,
    weight: u32,
    /// Tool-call markup (not reasoning or chat markup): makes its format a candidate.
    anchor: bool,
}

struct Scored {
    format: &'static Format,
    items: Vec<Item>,
    /// Per item: found anywhere, and found in the template itself.
    found: Vec<bool>,
    in_template: Vec<bool>,
}

impl Scored {
    fn total(&self) -> u32 {
        self.items.iter().map(|i| i.weight).sum()
    }
    fn coverage(&self) -> f64 {
        let found: u32 = self
            .items
            .iter()
            .zip(&self.found)
            .filter(|(_, f)| **f)
            .map(|(i, _)| i.weight)
            .sum();
        f64::from(found) / f64::from(self.total().max(1))
    }
    fn is_candidate(&self) -> bool {
        self.items
            .iter()
            .zip(&self.in_template)
            .any(|(i, t)| i.anchor && *t)
    }
    /// `(found, missing)` weight of this format's evidence that `other` does not have.
    fn own(&self, other: &Scored) -> (u32, u32) {
        let mut out = (0, 0);
        for (item, found) in self.own_items(other) {
            if found {
                out.0 += item.weight;
            } else {
                out.1 += item.weight;
            }
        }
        out
    }

    fn own_items<'s>(&'s self, other: &'s Scored) -> impl Iterator<Item = (&'s Item, bool)> + 's {
        self.items
            .iter()
            .zip(self.found.iter().copied())
            .filter(move |(item, _)| !other.items.iter().any(|o| o.text == item.text))
    }

    /// Whether the template shows all of this format's own evidence against `other`, leaving
    /// out what `other`'s found pieces contain (DeepSeek V3.1's
    /// `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>` inside V3's piece that goes on with
    /// `function<｜tool▁sep｜>`).
    fn fully_shown_against(&self, other: &Scored) -> bool {
        let found_there: Vec<&str> = other
            .items
            .iter()
            .zip(&other.found)
            .filter(|(_, f)| **f)
            .map(|(i, _)| i.text.as_str())
            .collect();
        let mut rest = self
            .own_items(other)
            .filter(|(item, _)| !found_there.iter().any(|t| t.contains(item.text.as_str())))
            .peekable();
        rest.peek().is_some() && rest.all(|(_, found)| found)
    }

    /// More of its own evidence found; or as much, all of it found, against a format that
    /// claims markup the template does not show. Never against a format that shows all of its
    /// own (a template that writes both formats is ambiguous).
    fn beats(&self, other: &Scored) -> bool {
        if other.fully_shown_against(self) {
            return false;
        }
        let (mine, my_missing) = self.own(other);
        let (theirs, their_missing) = other.own(self);
        mine > theirs || (mine == theirs && my_missing == 0 && their_missing > 0)
    }
}

/// Detect the format `source` is written for.
pub fn detect(source: &Source<'_>) -> Detection {
    let flat = flatten(source.template);
    let text = Text::new(source.template, &flat);
    let added = source.vocabulary.as_ref().map_or(&[][..], |v| &v.added[..]);
    let scored: Vec<Scored> = REGISTRY
        .iter()
        .map(|format| {
            let items = evidence(format);
            let in_template: Vec<bool> = items.iter().map(|item| text.shows(item)).collect();
            let found = items
                .iter()
                .zip(&in_template)
                .map(|(item, t)| *t || added.contains(&item.text))
                .collect();
            Scored {
                format,
                items,
                found,
                in_template,
            }
        })
        .filter(Scored::is_candidate)
        .collect();
    let wins: Vec<usize> = scored
        .iter()
        .map(|a| {
            scored
                .iter()
                .filter(|b| !std::ptr::eq(a, *b) && a.beats(b))
                .count()
        })
        .collect();
    let mut order: Vec<usize> = (0..scored.len()).collect();
    order.sort_by(|&a, &b| {
        wins[b]
            .cmp(&wins[a])
            .then(scored[b].coverage().total_cmp(&scored[a].coverage()))
    });
    let top = order
        .first()
        .copied()
        .filter(|&w| wins[w] + 1 == scored.len());
    let winner = top.filter(|&w| scored[w].coverage() >= MIN_COVERAGE);
    let status = match (winner, top) {
        (Some(_), _) => Status::Confident,
        (None, Some(_)) => Status::Unknown,
        (None, None) if scored.is_empty() => Status::Unknown,
        (None, None) => Status::Ambiguous,
    };
    let format = winner.map(|w| scored[w].format);
    let (reasoning, thinking_style) =
        format.map_or((None, None), |f| reasoning(&f.syntax, &flat, source));
    let special_markers = format.map_or_else(Vec::new, |f| special_markers(&f.syntax, source));
    let candidates = order.iter().map(|&i| candidate(&scored[i])).collect();
    Detection {
        status,
        format: format.map(|f| f.syntax.name),
        reasoning,
        thinking_style,
        special_markers,
        vocabulary_checked: source.vocabulary.is_some(),
        candidates,
    }
}

fn candidate(scored: &Scored) -> Candidate {
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for (item, f) in scored.items.iter().zip(&scored.found) {
        if *f { &mut found } else { &mut missing }.push(item.text.clone());
    }
    Candidate {
        format: scored.format.syntax.name,
        coverage: (scored.coverage() * 1000.0).round() / 1000.0,
        found,
        missing,
    }
}

/// A format's evidence: its layout pieces and its marker texts, each once.
fn evidence(format: &Format) -> Vec<Item> {
    let mut items: BTreeMap<String, Item> = BTreeMap::new();
    let mut add = |text: &str, weight: u32, anchor: bool| {
        let entry = items.entry(text.to_owned()).or_insert(Item {
            text: text.to_owned(),
            weight,
            anchor,
        });
        entry.weight = entry.weight.max(weight);
        entry.anchor |= anchor;
    };
    for piece in layout_pieces(format) {
        add(&piece, LAYOUT_WEIGHT, true);
    }
    for (_, pieces) in CHAT_TEMPLATE_MARKUP
        .iter()
        .filter(|(name, _)| *name == format.syntax.name)
    {
        for piece in *pieces {
            add(piece, LAYOUT_WEIGHT, true);
        }
    }
    for marker in format.syntax.markers() {
        add(marker.text, MARKER_WEIGHT, is_call_markup(marker.role));
    }
    if let Some((open, close)) = format.syntax.reasoning {
        add(open, MARKER_WEIGHT, false);
        add(close, MARKER_WEIGHT, false);
    }
    items.into_values().collect()
}

fn is_call_markup(role: Role) -> bool {
    use Role::*;
    !matches!(
        role,
        ReasoningStart
            | ReasoningEnd
            | ReasoningExit
            | ReasoningLabel
            | ResponseStart
            | ResponseEnd
            | AnswerStart
            | AnswerEnd
            | MessageStart
            | MessageEnd
            | TurnEnd
            | EndOfSequence
            | Channel
            | HeaderEnd
            | RoleSeparator
            | Return
    )
}

/// The literal pieces of the format's rendering of the probe call, split where the template
/// writes a value (name, argument key, value, the arguments as JSON); pieces without a letter or
/// digit (`="`, `}]`) are too common to tell anything.
fn layout_pieces(format: &Format) -> Vec<String> {
    let call = RenderCall {
        name: PROBE_NAME.into(),
        arguments: json!({ PROBE_KEY: PROBE_VALUE }),
        id: None,
    };
    let text = format.render(&[call], None);
    let holes = [
        format!("{{\"{PROBE_KEY}\":\"{PROBE_VALUE}\"}}"),
        format!("{{\"{PROBE_KEY}\": \"{PROBE_VALUE}\"}}"),
        PROBE_NAME.to_owned(),
        PROBE_KEY.to_owned(),
        PROBE_VALUE.to_owned(),
    ];
    let mut pieces = Vec::new();
    let mut rest = text.as_str();
    loop {
        let next = holes
            .iter()
            .filter_map(|h| rest.find(h.as_str()).map(|at| (at, h.len())))
            .min_by_key(|&(at, len)| (at, std::cmp::Reverse(len)));
        let (piece, after) = match next {
            Some((at, len)) => (&rest[..at], Some(&rest[at + len..])),
            None => (rest, None),
        };
        let piece = piece.trim();
        if piece.chars().any(char::is_alphanumeric) && !piece.chars().all(is_fill) {
            pieces.push(piece.to_owned());
        }
        match after {
            Some(after) => rest = after,
            None => return pieces,
        }
    }
}

/// A character a computed value may write where a piece has it (an identifier, `functions.f:0`).
fn is_fill(c: char) -> bool {
    c.is_alphanumeric() || "_.-:".contains(c)
}

/// The template as detection searches it: its source, its literal text ([`flatten`]), and that
/// text split at the holes.
struct Text<'a> {
    raw: &'a str,
    flat: &'a str,
    segments: Vec<&'a str>,
}

impl<'a> Text<'a> {
    fn new(raw: &'a str, flat: &'a str) -> Self {
        Self {
            raw,
            flat,
            segments: flat.split(HOLE).collect(),
        }
    }

    fn shows(&self, item: &Item) -> bool {
        if item.weight == MARKER_WEIGHT {
            return self.flat.contains(&item.text) || self.raw.contains(&item.text);
        }
        self.has_piece(&item.text)
    }

    /// Whether `piece` is in the literal text, where each [`HOLE`] may write a run of
    /// [`is_fill`] characters (the piece may also start or end inside such a run).
    fn has_piece(&self, piece: &str) -> bool {
        if self.flat.contains(piece) {
            return true;
        }
        let segments = &self.segments;
        let lead = piece
            .char_indices()
            .find(|(_, c)| !is_fill(*c))
            .map_or(piece.len(), |(k, _)| k);
        segments.iter().enumerate().any(|(i, segment)| {
            let tails = segment
                .char_indices()
                .filter(|(at, _)| segment.len() - at < piece.len())
                .any(|(at, _)| matches_from(piece, segments, i, at));
            let after_hole = i > 0
                && (1..=lead.min(piece.len() - 1))
                    .filter(|k| piece.is_char_boundary(*k))
                    .any(|k| matches_from(&piece[k..], segments, i, 0));
            tails || after_hole
        })
    }
}

/// Whether `piece` is written from `segments[i][at..]` on, holes filling runs of [`is_fill`]
/// characters. The literal text must write some letter or digit of the piece: holes alone do not
/// make `<|tool_arg:start|>` out of Phi-4's `'<|' + message.role + '|>'`.
fn matches_from(piece: &str, segments: &[&str], i: usize, at: usize) -> bool {
    matches_literally(piece, segments, i, at, false)
}

fn matches_literally(piece: &str, segments: &[&str], i: usize, at: usize, named: bool) -> bool {
    let has_alnum = |s: &str| s.chars().any(char::is_alphanumeric);
    let segment = &segments[i][at..];
    if piece.len() <= segment.len() {
        return segment.starts_with(piece) && (named || has_alnum(piece));
    }
    let Some(rest) = piece.strip_prefix(segment) else {
        return false;
    };
    if i + 1 >= segments.len() {
        return false;
    }
    let named = named || has_alnum(segment);
    let fill = rest
        .char_indices()
        .find(|(_, c)| !is_fill(*c))
        .map_or(rest.len(), |(k, _)| k);
    (0..=fill)
        .filter(|k| rest.is_char_boundary(*k))
        .any(|k| matches_literally(&rest[k..], segments, i + 1, 0, named))
}

fn reasoning(
    syntax: &Syntax,
    flat: &str,
    source: &Source<'_>,
) -> (Option<&'static str>, Option<&'static str>) {
    let (open, close, mode) = match syntax.reasoning {
        Some((open, close)) => (open, close, ReasoningMode::Native),
        None => ("<think>", "</think>", ReasoningMode::Think),
    };
    let opens = match source.generation_prompt {
        Some(prompt) => prompt.trim_end().ends_with(open.trim_end()),
        None => generation_prompt_opens(source.template, open, close),
    };
    let shown = |text: &str| flat.contains(text) || source.template.contains(text);
    if opens {
        (ReasoningMode::ClosingOnly.name(), Some("closing_only"))
    } else if shown(open) && shown(close) {
        (mode.name(), Some("paired"))
    } else {
        (None, None)
    }
}

/// Without a rendered prompt: whether the text written after the template's last
/// `add_generation_prompt` test opens the block and leaves it open.
fn generation_prompt_opens(template: &str, open: &str, close: &str) -> bool {
    let Some(at) = template.rfind("add_generation_prompt") else {
        return false;
    };
    let after = &template[at..];
    let body = after.find("%}").map_or(after, |end| &after[end + 2..]);
    let mut end = body.len().min(400);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    let written = flatten(&body[..end]);
    written
        .rfind(open)
        .is_some_and(|o| !written[o..].contains(close))
}

fn special_markers(syntax: &Syntax, source: &Source<'_>) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for marker in syntax.markers() {
        let special = match &source.vocabulary {
            Some(vocabulary) => vocabulary.special.iter().any(|t| t == marker.text),
            None => marker.special_token,
        };
        if special && !out.contains(&marker.text) {
            out.push(marker.text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect_text(template: &str) -> Detection {
        detect(&Source {
            template,
            ..Source::default()
        })
    }

    #[test]
    fn glm_spacing_decides_between_glm45_and_glm47() {
        let glm45 = "{{ '<tool_call>' + tc.name }}{% for k, v in a %}<arg_key>{{ k }}</arg_key>\n<arg_value>{{ v }}</arg_value>\n{% endfor %}</tool_call>{{ '<think>' }}</think>";
        let glm47 = "{{ '<tool_call>' + tc.name }}{% for k, v in a %}<arg_key>{{ k }}</arg_key><arg_value>{{ v }}</arg_value>{% endfor %}</tool_call>";
        assert_eq!(detect_text(glm45).format, Some("glm45"));
        assert_eq!(detect_text(glm45).reasoning, Some("native"));
        assert_eq!(detect_text(glm47).format, Some("glm47"));
        assert_eq!(detect_text(glm47).reasoning, None);
    }

    #[test]
    fn a_template_writing_two_formats_in_full_is_ambiguous() {
        let hermes = "{{ '<tool_call>\\n{\"name\": \"' + c.name + '\", \"arguments\": ' + a + '}\\n</tool_call>' }}";
        let coder = "{{ '<tool_call>\\n<function=' + c.name + '>\\n' }}{% for k in a %}{{ '<parameter=' + k + '>\\n' + v + '\\n</parameter>\\n' }}{% endfor %}{{ '</function>\\n</tool_call>' }}";
        assert_eq!(detect_text(hermes).format, Some("hermes"));
        assert_eq!(detect_text(coder).format, Some("qwen3_coder"));
        let both = detect_text(&format!(
            "{{% if json %}}{hermes}{{% else %}}{coder}{{% endif %}}"
        ));
        assert_eq!(both.status, Status::Ambiguous);
        let names: Vec<_> = both.candidates.iter().take(2).map(|c| c.format).collect();
        assert!(
            names.contains(&"hermes") && names.contains(&"qwen3_coder"),
            "{names:?}"
        );
    }

    #[test]
    fn too_little_evidence_is_unknown_with_its_candidate() {
        let detection = detect_text("Answer with <|python_start|> when you call a function.");
        assert_eq!(detection.status, Status::Unknown);
        assert_eq!(detection.candidates[0].format, "pythonic");
        assert!(detection.candidates[0].coverage < MIN_COVERAGE);
    }

    #[test]
    fn chat_template_markup_names_registered_formats() {
        for (name, pieces) in CHAT_TEMPLATE_MARKUP {
            assert!(
                crate::formats::lookup(name).is_some_and(|f| f.syntax.name == *name),
                "{name}"
            );
            assert!(!pieces.is_empty());
        }
    }

    #[test]
    fn a_template_without_tool_syntax_is_unknown() {
        let chatml = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}<think>";
        let detection = detect_text(chatml);
        assert_eq!(detection.status, Status::Unknown);
        assert!(detection.format.is_none() && detection.candidates.is_empty());
    }

    #[test]
    fn a_computed_value_may_stand_inside_a_piece() {
        let piece_in = |flat: &str, piece: &str| Text::new("", flat).has_piece(piece);
        assert!(piece_in("<a>\u{1}<sep>\u{1}\n```json", "<a>function<sep>"));
        assert!(piece_in("x\u{1}<arg>", "functions.f:0<arg>"));
        assert!(!piece_in("<a>\u{1}<sep>", "<a>fun ction<sep>"));
        assert!(!piece_in("\u{1}", "function"));
    }

    #[test]
    fn any_prefix_of_a_template_is_read_without_panicking() {
        let template = "{%- if x %}{{- '<｜DSML｜invoke name=\"' + c['name'] + '\">\\n' -}}\n  {# ｜ #}<think>{{ \"}}\" }}{% endif -%} ▁";
        for (at, _) in template.char_indices() {
            let detection = detect_text(&template[..at]);
            assert!(detection.status != Status::Confident || detection.format.is_some());
        }
    }

    #[test]
    fn the_generation_prompt_decides_closing_only() {
        let template = "{{ '<tool_call>\\n{\"name\": \"' + c.name + '\", \"arguments\": ' + a + '}\\n</tool_call>' }}\
                        {%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{% endif %}";
        let detection = detect_text(template);
        assert_eq!(detection.format, Some("hermes"));
        assert_eq!(detection.thinking_style, Some("closing_only"));
        let rendered = detect(&Source {
            template,
            generation_prompt: Some("<|im_start|>assistant\n"),
            ..Source::default()
        });
        assert_eq!(rendered.reasoning, None);
    }
}
