//! Token vocabularies: turning token ids back into text for the streaming parser.
//!
//! # Why this exists
//!
//! Inference servers can hand us the model output as token ids instead of text
//! (`feed_tokens`). Two things then matter that a plain `decode(ids)` gets wrong for
//! a stream:
//!
//! * **Markers are recognised by id.** Tool-call markers such as Qwen's `<tool_call>`
//!   (id 151657) or DeepSeek's `<｜tool▁calls▁begin｜>` are single *added* tokens. The
//!   same characters can also appear as ordinary text (the model writing `"<tool_call>"`
//!   inside a JSON string is several ordinary tokens). [`TokenDecoder`] therefore
//!   reports every added/special token as its own [`Piece::Special`] carrying the id,
//!   and everything else as [`Piece::Text`], so the parser never has to guess.
//! * **UTF-8 is split across tokens.** Byte-level BPE vocabularies routinely cut a
//!   multi-byte character (emoji, CJK) into several tokens, e.g. Qwen encodes `" 🎉"`
//!   as `[11162, 236, 231]` = `" \xF0\x9F"`, `"\x8E"`, `"\x89"`. Decoding each
//!   token on its own would emit replacement characters; [`TokenDecoder`] holds back
//!   an incomplete UTF-8 sequence until a later token completes it.
//!
//! # Supported vocabulary kinds
//!
//! * Hugging Face `tokenizer.json` ([`Vocab::from_tokenizer_json`]):
//!   * **ByteLevel** (GPT-2 byte↔unicode mapping: Qwen2/3, Llama 3, DeepSeek, …);
//!   * **Metaspace / SentencePiece** style (`▁` → space and `<0xNN>` byte-fallback
//!     tokens: Llama 2, Mistral, Gemma, …), detected from a `Metaspace` decoder or a
//!     `Sequence` of `Replace` / `ByteFallback` / `Fuse` / `Strip` decoders, or, when
//!     there is no decoder, from the pre-tokenizer or model;
//!   * `added_tokens`, with their `special` flag.
//! * tiktoken rank files plus a list of special tokens ([`Vocab::from_tiktoken`]).
//! * Mistral Tekken JSON files ([`Vocab::from_tekken_json`]).
//! * SentencePiece model files ([`Vocab::from_sentencepiece_model`]).
//! * Anything else via explicit `(id, bytes, is_special)` triples ([`Vocab::from_pieces`]).
//!
//! # Deliberate differences from a tokenizer's own `decode`
//!
//! * **No leading-space stripping.** A SentencePiece/Metaspace decoder normally drops the
//!   space of the very first token of a sequence (`Strip` decoder, or `Metaspace` with
//!   `prepend_scheme` `first`/`always`). We decode *continuations* of a stream whose start
//!   we may not have seen, so a token `▁Hello` always decodes to `" Hello"`.
//! * **Added tokens decode to their `content` verbatim**, never through the byte-level or
//!   metaspace mapping.
//! * No `clean_up_tokenization_spaces` and no other text post-processing.

mod codec;
mod decoder;
mod mapping;

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

use codec::{base64_decode, ProtoValue, Protobuf};
use mapping::{detect_mapping, parse_byte_token};

pub use decoder::{Piece, TokenDecoder};
/// Largest token id accepted by any constructor. Vocabularies are stored in vectors
/// indexed by id, so this bounds the memory a hostile or corrupt file can make us
/// allocate (about 5 bytes per id); real vocabularies are far below it.
pub const MAX_TOKEN_ID: u32 = (1 << 24) - 1;

/// Error building a [`Vocab`]: malformed input or an unsupported tokenizer kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VocabError {
    pub message: String,
}

impl VocabError {
    fn new(message: impl Into<String>) -> Self {
        VocabError {
            message: message.into(),
        }
    }
}

impl fmt::Display for VocabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "vocabulary error: {}", self.message)
    }
}

impl std::error::Error for VocabError {}

/// What a token id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// No token has this id.
    Absent,
    /// An ordinary token of the base vocabulary: its bytes are part of the text.
    Normal,
    /// An added token that is not flagged special (e.g. DeepSeek's
    /// `<｜tool▁calls▁begin｜>` or Qwen's `<tool_call>` in `tokenizer.json`).
    Added,
    /// An added token flagged special (or a tiktoken/Tekken special token).
    Special,
}

/// An immutable token vocabulary: token id → bytes, plus which ids are added/special
/// tokens. `Send + Sync`; share it between decoders with an [`Arc`].
pub struct Vocab {
    /// Concatenated token bytes.
    bytes: Vec<u8>,
    /// `offsets[id]..offsets[id + 1]` is the byte range of token `id` (empty for
    /// absent ids). Length is `kinds.len() + 1`.
    offsets: Vec<u32>,
    /// Kind of each id, indexed by id.
    kinds: Vec<Kind>,
    /// Number of ids that are not [`Kind::Absent`].
    count: usize,
    /// Ids of added and special tokens, ascending.
    added_ids: Vec<u32>,
    /// Text of an added/special token → its id (lowest id wins on duplicates).
    added_by_text: HashMap<String, u32>,
}

impl fmt::Debug for Vocab {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vocab")
            .field("len", &self.count)
            .field("max_id", &self.max_id())
            .field("added_tokens", &self.added_ids.len())
            .finish()
    }
}

impl Vocab {
    /// Builds a vocabulary from the text of a Hugging Face `tokenizer.json`.
    ///
    /// The byte mapping is chosen from the `decoder` section (`ByteLevel`, `Metaspace`,
    /// or a `Sequence` of `Replace`/`ByteFallback`/`Fuse`/`Strip`); without a decoder,
    /// from the `pre_tokenizer` and `model` sections. ByteLevel tokens that contain a
    /// character outside the byte alphabet are taken as their raw UTF-8 (as the
    /// `tokenizers` library does). Metaspace vocabularies map the replacement character
    /// (normally `▁`) to a space and, when byte fallback is enabled, `<0xNN>` tokens to
    /// the byte `NN`. The leading space of the first token is **not** stripped (we decode
    /// continuation streams).
    ///
    /// `added_tokens` entries override model-vocabulary entries with the same id and
    /// decode to their `content` verbatim. Entries with `"special": true` are reported by
    /// [`Vocab::is_special`]; all of them are [added](Vocab::is_added), findable with
    /// [`Vocab::special_id`] and delivered as [`Piece::Special`] by [`TokenDecoder`].
    ///
    /// Model types with a `vocab` object (BPE, WordLevel, WordPiece) or a Unigram
    /// `vocab` array are read; WordPiece/BPE-suffix/CTC *decoders* are rejected as
    /// unsupported. If the model vocabulary maps two tokens to one id, the first wins.
    pub fn from_tokenizer_json(json_text: &str) -> Result<Vocab, VocabError> {
        let root: Value = serde_json::from_str(json_text)
            .map_err(|e| VocabError::new(format!("tokenizer.json is not valid JSON: {e}")))?;
        let root = root
            .as_object()
            .ok_or_else(|| VocabError::new("tokenizer.json: top level is not an object"))?;
        let model = root
            .get("model")
            .and_then(Value::as_object)
            .ok_or_else(|| VocabError::new("tokenizer.json: missing \"model\" object"))?;
        let mapping = detect_mapping(root, model)?;

        let mut builder = Builder::default();
        match model.get("vocab") {
            Some(Value::Object(vocab)) => {
                for (token, id) in vocab {
                    let id = parse_id(id, || format!("model.vocab[{token:?}]"))?;
                    builder.push(id, mapping.token_bytes(token), Kind::Normal);
                }
            }
            Some(Value::Array(vocab)) => {
                // Unigram: [[piece, score], ...], id = position.
                for (index, entry) in vocab.iter().enumerate() {
                    let token = entry
                        .as_array()
                        .and_then(|pair| pair.first())
                        .and_then(Value::as_str)
                        .ok_or_else(|| {
                            VocabError::new(format!(
                                "tokenizer.json: model.vocab[{index}] is not a [piece, score] pair"
                            ))
                        })?;
                    let id = checked_id(index as u64, || format!("model.vocab[{index}]"))?;
                    builder.push(id, mapping.token_bytes(token), Kind::Normal);
                }
            }
            _ => {
                return Err(VocabError::new(
                    "tokenizer.json: model.vocab is missing or neither an object nor an array",
                ))
            }
        }
        let model_entries = builder.entries.len();

        match root.get("added_tokens") {
            None | Some(Value::Null) => {}
            Some(Value::Array(added)) => {
                for (index, entry) in added.iter().enumerate() {
                    let what = || format!("added_tokens[{index}]");
                    let entry = entry.as_object().ok_or_else(|| {
                        VocabError::new(format!("tokenizer.json: {} is not an object", what()))
                    })?;
                    let id = parse_id(entry.get("id").unwrap_or(&Value::Null), || {
                        format!("{}.id", what())
                    })?;
                    let content =
                        entry
                            .get("content")
                            .and_then(Value::as_str)
                            .ok_or_else(|| {
                                VocabError::new(format!(
                                    "tokenizer.json: {}.content is not a string",
                                    what()
                                ))
                            })?;
                    let special = match entry.get("special") {
                        None | Some(Value::Null) => false,
                        Some(Value::Bool(b)) => *b,
                        Some(_) => {
                            return Err(VocabError::new(format!(
                                "tokenizer.json: {}.special is not a boolean",
                                what()
                            )))
                        }
                    };
                    let kind = if special { Kind::Special } else { Kind::Added };
                    builder.push(id, content.as_bytes().to_vec(), kind);
                }
            }
            Some(_) => {
                return Err(VocabError::new(
                    "tokenizer.json: added_tokens is not an array",
                ))
            }
        }

        // Added tokens (pushed last) override the model vocabulary; within the model
        // vocabulary the first entry for an id wins; two added tokens with one id is an error.
        builder.build(|id, earlier, later| {
            if later >= model_entries && earlier >= model_entries {
                Err(VocabError::new(format!(
                    "tokenizer.json: added_tokens has id {id} twice"
                )))
            } else if later >= model_entries {
                Ok(Resolve::TakeLater)
            } else {
                Ok(Resolve::KeepEarlier)
            }
        })
    }

    /// Builds a vocabulary from a tiktoken rank file (lines `<base64 token> <rank>`; the
    /// rank is the token id) plus `(text, id)` special tokens, which are added as special.
    /// Blank lines are ignored; a malformed line, a repeated rank, or a special id that
    /// is also a rank is an error.
    pub fn from_tiktoken(
        rank_file_text: &str,
        special_tokens: &[(String, u32)],
    ) -> Result<Vocab, VocabError> {
        let mut builder = Builder::default();
        for (line_no, line) in rank_file_text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let mut fields = line.split_ascii_whitespace();
            let (Some(token), Some(rank), None) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(VocabError::new(format!(
                    "tiktoken line {}: expected \"<base64> <rank>\"",
                    line_no + 1
                )));
            };
            let bytes = base64_decode(token).ok_or_else(|| {
                VocabError::new(format!(
                    "tiktoken line {}: invalid base64 {token:?}",
                    line_no + 1
                ))
            })?;
            let rank: u64 = rank.parse().map_err(|_| {
                VocabError::new(format!(
                    "tiktoken line {}: invalid rank {rank:?}",
                    line_no + 1
                ))
            })?;
            let id = checked_id(rank, || format!("tiktoken line {}", line_no + 1))?;
            builder.push(id, bytes, Kind::Normal);
        }
        for (text, id) in special_tokens {
            builder.push(*id, text.as_bytes().to_vec(), Kind::Special);
        }
        builder.build(|id, _, _| {
            Err(VocabError::new(format!(
                "tiktoken: id {id} is defined twice (repeated rank, or a special token reusing a rank)"
            )))
        })
    }

    /// Builds a vocabulary from a Mistral Tekken JSON file (`tekken_*.json` as shipped by
    /// `mistral-common`).
    ///
    /// Ids `0..num_special` are the special tokens (`special_tokens` of the file, or, for
    /// old files without that list, the fixed legacy list `<unk>`, `<s>`, `</s>`, `[INST]`,
    /// …, `[TOOL_CALLS]`=9, …; unnamed slots become `<SPECIAL_{id}>`); vocabulary entry of
    /// rank `r` gets id `r + num_special`, keeping only the first
    /// `default_vocab_size - num_special` ranks, as `mistral-common` does.
    pub fn from_tekken_json(json_text: &str) -> Result<Vocab, VocabError> {
        let root: Value = serde_json::from_str(json_text)
            .map_err(|e| VocabError::new(format!("tekken: not valid JSON: {e}")))?;
        let root = root
            .as_object()
            .ok_or_else(|| VocabError::new("tekken: top level is not an object"))?;
        let config = root
            .get("config")
            .and_then(Value::as_object)
            .ok_or_else(|| VocabError::new("tekken: missing \"config\" object"))?;
        let vocab = root
            .get("vocab")
            .and_then(Value::as_array)
            .ok_or_else(|| VocabError::new("tekken: missing \"vocab\" array"))?;
        let num_special = config
            .get("default_num_special_tokens")
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                VocabError::new(
                    "tekken: config.default_num_special_tokens missing or not an integer",
                )
            })?;
        let num_special = checked_id(num_special, || "tekken: default_num_special_tokens".into())?;
        let vocab_size = match config.get("default_vocab_size") {
            None | Some(Value::Null) => vocab.len() as u64 + u64::from(num_special),
            Some(v) => v.as_u64().ok_or_else(|| {
                VocabError::new("tekken: config.default_vocab_size is not an integer")
            })?,
        };
        if vocab_size < u64::from(num_special) {
            return Err(VocabError::new(
                "tekken: default_vocab_size is smaller than default_num_special_tokens",
            ));
        }
        let inner_size = vocab_size - u64::from(num_special);

        let mut builder = Builder::default();
        let mut named = vec![false; num_special as usize];
        match root.get("special_tokens") {
            None | Some(Value::Null) => {
                for (rank, text) in TEKKEN_LEGACY_SPECIALS.iter().enumerate() {
                    if rank < named.len() {
                        named[rank] = true;
                        builder.push(rank as u32, text.as_bytes().to_vec(), Kind::Special);
                    }
                }
            }
            Some(Value::Array(specials)) => {
                for (index, entry) in specials.iter().enumerate() {
                    let rank = entry.get("rank").and_then(Value::as_u64);
                    let text = entry.get("token_str").and_then(Value::as_str);
                    let (Some(rank), Some(text)) = (rank, text) else {
                        return Err(VocabError::new(format!(
                            "tekken: special_tokens[{index}] needs an integer rank and a string token_str"
                        )));
                    };
                    if rank >= u64::from(num_special) {
                        return Err(VocabError::new(format!(
                            "tekken: special_tokens[{index}] has rank {rank} >= default_num_special_tokens {num_special}"
                        )));
                    }
                    named[rank as usize] = true;
                    builder.push(rank as u32, text.as_bytes().to_vec(), Kind::Special);
                }
            }
            Some(_) => return Err(VocabError::new("tekken: special_tokens is not an array")),
        }
        for (rank, was_named) in named.iter().enumerate() {
            if !was_named {
                builder.push(
                    rank as u32,
                    format!("<SPECIAL_{rank}>").into_bytes(),
                    Kind::Special,
                );
            }
        }
        for (index, entry) in vocab.iter().enumerate() {
            let rank = entry.get("rank").and_then(Value::as_u64);
            let encoded = entry.get("token_bytes").and_then(Value::as_str);
            let (Some(rank), Some(encoded)) = (rank, encoded) else {
                return Err(VocabError::new(format!(
                    "tekken: vocab[{index}] needs an integer rank and a base64 token_bytes"
                )));
            };
            if rank >= inner_size {
                continue;
            }
            let bytes = base64_decode(encoded).ok_or_else(|| {
                VocabError::new(format!(
                    "tekken: vocab[{index}].token_bytes is not valid base64"
                ))
            })?;
            let id = checked_id(rank + u64::from(num_special), || {
                format!("tekken: vocab[{index}]")
            })?;
            builder.push(id, bytes, Kind::Normal);
        }
        builder.build(|id, _, _| Err(VocabError::new(format!("tekken: id {id} is defined twice"))))
    }

    /// Generic constructor from `(id, bytes, is_special)` triples (used by the Python glue
    /// for `transformers` tokenizers). Ordinary tokens may hold any bytes (partial UTF-8
    /// included); special tokens must be valid UTF-8. A repeated id is an error.
    ///
    /// Every token passed with `is_special = true` is delivered by [`TokenDecoder`] as its
    /// own [`Piece::Special`]; callers should therefore mark *all* added/control tokens
    /// (including Hugging Face added tokens whose own `special` flag is false, such as
    /// Qwen's `<tool_call>`) as special here.
    pub fn from_pieces(
        pieces: impl IntoIterator<Item = (u32, Vec<u8>, bool)>,
    ) -> Result<Vocab, VocabError> {
        let mut builder = Builder::default();
        for (id, bytes, special) in pieces {
            let kind = if special { Kind::Special } else { Kind::Normal };
            builder.push(id, bytes, kind);
        }
        builder.build(|id, _, _| Err(VocabError::new(format!("pieces: id {id} given twice"))))
    }

    /// Builds a vocabulary from a SentencePiece model file (`tokenizer.model`, the
    /// `ModelProto` protobuf that `sentencepiece` and `mistral-common` load; Mistral ships
    /// them as `tokenizer.model.v3` and the like). The id of a piece is its position in the
    /// model.
    ///
    /// * Normal and unused pieces: their text with `▁` (U+2581) read as a space. No leading
    ///   space is stripped (we decode continuations).
    /// * Byte pieces `<0xNN>`: the byte `NN`, so characters split into byte pieces are
    ///   reassembled by [`TokenDecoder`].
    /// * Control pieces (`<s>`, `</s>`, Mistral's `[INST]`, `[TOOL_CALLS]`, ...) and the
    ///   unknown piece: special tokens, decoded to their text.
    /// * User-defined pieces: added (delivered as [`Piece::Special`], not [`Vocab::is_special`]).
    ///
    /// Only the `pieces` field of the model is read; the normalizer (which only affects
    /// encoding) and the trainer settings are skipped.
    pub fn from_sentencepiece_model(model: &[u8]) -> Result<Vocab, VocabError> {
        let mut builder = Builder::default();
        let mut reader = Protobuf::new(model);
        let mut index: u64 = 0;
        while let Some((field, value)) = reader.next_field()? {
            let (1, ProtoValue::Bytes(piece)) = (field, value) else {
                continue;
            };
            let id = checked_id(index, || format!("sentencepiece: piece {index}"))?;
            index += 1;
            let mut text: Option<&[u8]> = None;
            let mut kind = 1u64; // NORMAL
            let mut inner = Protobuf::new(piece);
            while let Some((field, value)) = inner.next_field()? {
                match (field, value) {
                    (1, ProtoValue::Bytes(b)) => text = Some(b),
                    (3, ProtoValue::Varint(v)) => kind = v,
                    _ => {}
                }
            }
            let text = std::str::from_utf8(text.unwrap_or(b"")).map_err(|_| {
                VocabError::new(format!("sentencepiece: piece {id} is not valid UTF-8"))
            })?;
            let (bytes, kind) = match kind {
                // UNKNOWN, CONTROL
                2 | 3 => (text.as_bytes().to_vec(), Kind::Special),
                // USER_DEFINED
                4 => (text.as_bytes().to_vec(), Kind::Added),
                // BYTE
                6 => match parse_byte_token(text) {
                    Some(b) => (vec![b], Kind::Normal),
                    None => {
                        return Err(VocabError::new(format!(
                            "sentencepiece: byte piece {id} is {text:?}, not <0xNN>"
                        )))
                    }
                },
                // NORMAL, UNUSED (and types added later)
                _ => (text.replace('\u{2581}', " ").into_bytes(), Kind::Normal),
            };
            builder.push(id, bytes, kind);
        }
        if index == 0 {
            return Err(VocabError::new(
                "sentencepiece: no pieces (not a SentencePiece model file?)",
            ));
        }
        builder.build(|id, _, _| {
            Err(VocabError::new(format!(
                "sentencepiece: id {id} is defined twice"
            )))
        })
    }

    /// Number of ids that have a token.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no id has a token.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Highest id that has a token.
    pub fn max_id(&self) -> Option<u32> {
        self.kinds
            .iter()
            .rposition(|k| *k != Kind::Absent)
            .map(|i| i as u32)
    }

    /// Bytes of token `id` (for added/special tokens, their UTF-8 text); `None` for an
    /// unknown id.
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        match self.kind(id) {
            Kind::Absent => None,
            _ => Some(self.raw_bytes(id)),
        }
    }

    /// True for tokens flagged special: tiktoken/Tekken special tokens, `from_pieces`
    /// special tokens, and `tokenizer.json` added tokens with `"special": true`.
    pub fn is_special(&self, id: u32) -> bool {
        self.kind(id) == Kind::Special
    }

    /// True for every added token, special or not (for tiktoken, Tekken and
    /// `from_pieces` vocabularies this equals [`Vocab::is_special`]). These are the ids
    /// that [`TokenDecoder`] delivers as [`Piece::Special`].
    pub fn is_added(&self, id: u32) -> bool {
        matches!(self.kind(id), Kind::Added | Kind::Special)
    }

    /// Id of the added/special token whose text is exactly `text` (lowest id if several).
    /// Ordinary tokens are never returned, even when their bytes equal `text`.
    pub fn special_id(&self, text: &str) -> Option<u32> {
        self.added_by_text.get(text).copied()
    }

    /// All added/special tokens (those with [`Vocab::is_added`]) as `(text, id)`, by
    /// ascending id.
    pub fn special_tokens(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        self.added_ids.iter().map(move |&id| {
            // Added-token bytes are validated as UTF-8 when the vocabulary is built.
            (std::str::from_utf8(self.raw_bytes(id)).unwrap_or(""), id)
        })
    }

    #[inline]
    fn kind(&self, id: u32) -> Kind {
        self.kinds.get(id as usize).copied().unwrap_or(Kind::Absent)
    }

    /// Byte range of an id known to be in range.
    #[inline]
    fn raw_bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&start), Some(&end)) => {
                self.bytes.get(start as usize..end as usize).unwrap_or(&[])
            }
            _ => &[],
        }
    }
}

/// How to resolve two entries for the same id.
enum Resolve {
    KeepEarlier,
    TakeLater,
}

/// Collects `(id, bytes, kind)` entries, then packs them into a [`Vocab`].
#[derive(Default)]
struct Builder {
    entries: Vec<(u32, Vec<u8>, Kind)>,
}

impl Builder {
    fn push(&mut self, id: u32, bytes: Vec<u8>, kind: Kind) {
        self.entries.push((id, bytes, kind));
    }

    /// `on_duplicate(id, earlier_index, later_index)` decides between two entries for one
    /// id (indices are push order).
    fn build(
        self,
        mut on_duplicate: impl FnMut(u32, usize, usize) -> Result<Resolve, VocabError>,
    ) -> Result<Vocab, VocabError> {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by_key(|&i| (self.entries[i].0, i));

        // Pick one entry per id.
        let mut chosen: Vec<usize> = Vec::with_capacity(order.len());
        for &i in &order {
            let id = self.entries[i].0;
            if id > MAX_TOKEN_ID {
                return Err(VocabError::new(format!(
                    "token id {id} exceeds the supported maximum {MAX_TOKEN_ID}"
                )));
            }
            match chosen.last_mut() {
                Some(last) if self.entries[*last].0 == id => match on_duplicate(id, *last, i)? {
                    Resolve::KeepEarlier => {}
                    Resolve::TakeLater => *last = i,
                },
                _ => chosen.push(i),
            }
        }

        let slots = chosen.last().map_or(0, |&i| self.entries[i].0 as usize + 1);
        let total: usize = chosen.iter().map(|&i| self.entries[i].1.len()).sum();
        if total > u32::MAX as usize {
            return Err(VocabError::new(
                "vocabulary holds more than 4 GiB of token bytes",
            ));
        }
        let mut bytes = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(slots + 1);
        let mut kinds = Vec::with_capacity(slots);
        let mut added_ids = Vec::new();
        let mut added_by_text = HashMap::new();
        let mut next = chosen.iter().map(|&i| &self.entries[i]).peekable();
        for id in 0..slots as u32 {
            offsets.push(bytes.len() as u32);
            match next.next_if(|entry| entry.0 == id) {
                Some((_, token, kind)) => {
                    if *kind != Kind::Normal {
                        let text = std::str::from_utf8(token).map_err(|_| {
                            VocabError::new(format!("special token id {id} is not valid UTF-8"))
                        })?;
                        added_ids.push(id);
                        added_by_text.entry(text.to_owned()).or_insert(id);
                    }
                    bytes.extend_from_slice(token);
                    kinds.push(*kind);
                }
                None => kinds.push(Kind::Absent),
            }
        }
        offsets.push(bytes.len() as u32);
        Ok(Vocab {
            bytes,
            offsets,
            kinds,
            count: chosen.len(),
            added_ids,
            added_by_text,
        })
    }
}

fn checked_id(value: u64, what: impl FnOnce() -> String) -> Result<u32, VocabError> {
    if value <= u64::from(MAX_TOKEN_ID) {
        Ok(value as u32)
    } else {
        Err(VocabError::new(format!(
            "{}: token id {value} exceeds the supported maximum {MAX_TOKEN_ID}",
            what()
        )))
    }
}

fn parse_id(value: &Value, what: impl FnOnce() -> String) -> Result<u32, VocabError> {
    match value.as_u64() {
        Some(v) => checked_id(v, what),
        None => Err(VocabError::new(format!(
            "tokenizer.json: {} is not a non-negative integer id",
            what()
        ))),
    }
}

/// Special tokens of Tekken files that predate the `special_tokens` list
/// (`mistral-common`'s deprecated default list), by rank.
const TEKKEN_LEGACY_SPECIALS: [&str; 20] = [
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

#[cfg(test)]
mod tests {
    use super::codec::base64_decode;
    use super::mapping::{byte_level_alphabet, byte_level_char, byte_level_char_fast};
    use super::*;

    #[test]
    fn byte_level_alphabet_round_trips() {
        let table = byte_level_alphabet();
        let mut seen = std::collections::HashSet::new();
        for (b, &c) in table.iter().enumerate() {
            let ch = char::from_u32(u32::from(c)).unwrap();
            assert!(seen.insert(ch));
            assert_eq!(byte_level_char(ch), Some(b as u8));
            assert_eq!(byte_level_char_fast(ch), Some(b as u8));
        }
        assert_eq!(table[b' ' as usize], 0x120); // 'Ġ'
        assert_eq!(table[b'\n' as usize], 0x10A); // 'Ċ'
        assert_eq!(byte_level_char_fast('\u{144}'), None);
        assert_eq!(byte_level_char_fast(' '), None);
        assert_eq!(byte_level_char_fast('\u{AD}'), None);
    }

    #[test]
    fn base64_cases() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("IQ==").unwrap(), b"!");
        assert_eq!(base64_decode("IQ").unwrap(), b"!");
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("4r2X").unwrap(), "⽗".as_bytes());
        assert_eq!(base64_decode("+/+/").unwrap(), [0xfb, 0xff, 0xbf]);
        assert!(base64_decode("A").is_none());
        assert!(base64_decode("A===").is_none());
        assert!(base64_decode("a-b_").is_none());
        assert!(base64_decode("IQ=x").is_none());
    }

    #[test]
    fn byte_tokens() {
        assert_eq!(parse_byte_token("<0x0A>"), Some(10));
        assert_eq!(parse_byte_token("<0xff>"), Some(255));
        assert_eq!(parse_byte_token("<0x0A"), None);
        assert_eq!(parse_byte_token("<0x+A>"), None);
        assert_eq!(parse_byte_token("<0x100>"), None);
    }
}
