//! State keyers and the token table that feeds them, as Python sees them: a keyer follows one
//! request's output and names its grammar state for the mask cache (`toolwire_core::bitmask::key`
//! does the reading); the label a composed grammar puts around its key; the table that lets a
//! batch of keyers take the tokens their cached rows allow, without a matcher.

use pyo3::prelude::*;

use crate::bitmask::MaskCache;
use crate::served::Served;
use crate::steps::Resume;
use crate::ToolwireError;

fn to_grammar_id(id: &[u8]) -> PyResult<[u8; 16]> {
    id.try_into()
        .map_err(|_| ToolwireError::new_err("a grammar id is 16 bytes"))
}

/// How a grammar's output is read for mask-cache keys: anchors in free text, after each call
/// and inside unconstrained JSON strings of a structural tag (see ``toolwire.masks.BatchMasker``).
#[pyclass(name = "StateKeyPlan", module = "toolwire._core", frozen)]
pub struct StateKeyPlan(toolwire_core::bitmask::KeyPlan);

#[pymethods]
impl StateKeyPlan {
    /// The plan for a structural tag (JSON text); ``grammar_id`` (16 bytes) names it in keys.
    /// ``ordered_objects``: the grammar engine takes an object's members in ``properties``
    /// order (``toolwire.grammar.engine_facts.objects_in_declared_order``), so a key after a
    /// member names that member alone, not every optional member before it.
    ///
    /// Raises:
    ///     ToolwireError: the id is not 16 bytes or the tag is not JSON.
    #[staticmethod]
    #[pyo3(signature = (grammar_id, tag_json, *, ordered_objects = false))]
    fn from_tag(grammar_id: &[u8], tag_json: &str, ordered_objects: bool) -> PyResult<Self> {
        let tag: serde_json::Value = serde_json::from_str(tag_json)
            .map_err(|e| ToolwireError::new_err(format!("structural tag is not JSON: {e}")))?;
        Ok(StateKeyPlan(
            toolwire_core::bitmask::KeyPlan::from_tag(to_grammar_id(grammar_id)?, &tag)
                .with_ordered_objects(ordered_objects),
        ))
    }

    /// A grammar known only by its id: keys cover the token ids since the start.
    #[staticmethod]
    fn opaque(grammar_id: &[u8]) -> PyResult<Self> {
        Ok(StateKeyPlan(toolwire_core::bitmask::KeyPlan::opaque(
            to_grammar_id(grammar_id)?,
        )))
    }

    /// Whether the tag's structure is followed (False: keys cover the whole output).
    #[getter]
    fn anchored(&self) -> bool {
        self.0.anchored()
    }

    /// False when the grammar has token-level elements (keys then use token ids).
    #[getter]
    fn text_level(&self) -> bool {
        self.0.text_level()
    }

    /// E.g. ``triggered(prefix=[], tags=[json,json])`` or ``whole output (tokens)``.
    fn describe(&self) -> String {
        self.0.describe()
    }

    /// The kinds of anchor the keyer can reach (see `KeyPlan::anchors`).
    fn anchors(&self) -> Vec<&'static str> {
        self.0.anchors()
    }

    /// A keyer for one request.
    fn keyer(&self) -> StateKeyer {
        StateKeyer::new(toolwire_core::bitmask::StateKeyer::new(&self.0))
    }

    fn __repr__(&self) -> String {
        format!("StateKeyPlan({})", self.0.describe())
    }
}

/// Follows one request's output and names its grammar state.
#[pyclass(name = "StateKeyer", module = "toolwire._core")]
#[derive(Clone)]
pub struct StateKeyer {
    pub(crate) inner: toolwire_core::bitmask::StateKeyer,
    deferred: Vec<u8>,
    deferred_lengths: Vec<u32>,
    tokens: u64,
    label: Label,
    /// Set for a keyer of a call's text inside several tools' begins (`CallBegins.keyer`).
    walk: Option<BeginWalk>,
    /// The row a batch step's fill served this state (dropped when the keyer moves).
    pub(crate) served: Option<Served>,
    /// Inside a call: the scaffold's keyer where the call began, and what it reads when the call
    /// closes (`CallSteps`).
    pub(crate) resume: Option<Box<Resume>>,
}

/// A keyer's call text among the begins it was made for: the text is its state (in its key,
/// after the label's prefix) and grows with every token fed.
#[derive(Clone)]
struct BeginWalk {
    begins: std::sync::Arc<toolwire_core::bitmask::CallBegins>,
    text: Vec<u8>,
    /// Takes no token alone, only `CallSteps`' steps (where tools' pieces go on beside begins).
    steps_only: bool,
}

/// What a composed grammar adds to a keyer: bytes around its key, and where
/// :meth:`TokenTable.feed_deferred` hands a token back (where the composed matcher may change
/// parts: a token that completes a call's end, or one after which the keyer is not in free text).
#[derive(Clone, Default)]
struct Label {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    stop_at: Vec<u8>,
    tail: Vec<u8>, // the last `stop_at.len() - 1` bytes fed
    free_text_only: bool,
    /// The suffix only while the text fed ends with a start of `stop_at` (see `label`).
    suffix_near_stop: bool,
}

impl Label {
    /// Whether the text fed since the label ends with a non-empty proper prefix of `stop_at`.
    fn near_stop(&self) -> bool {
        let (stop, tail) = (&self.stop_at, &self.tail);
        let Some(&last) = tail.last() else {
            return false;
        };
        stop.len() > 1
            && stop[..stop.len() - 1].contains(&last)
            && (1..stop.len()).any(|j| tail.ends_with(&stop[..j]))
    }
}

impl StateKeyer {
    fn new(inner: toolwire_core::bitmask::StateKeyer) -> Self {
        StateKeyer {
            inner,
            deferred: Vec::new(),
            deferred_lengths: Vec::new(),
            tokens: 0,
            label: Label::default(),
            walk: None,
            served: None,
            resume: None,
        }
    }

    /// A copy of the state alone: no deferred tokens, served row or resume.
    pub(crate) fn bare_clone(&self) -> Self {
        StateKeyer {
            inner: self.inner.clone(),
            deferred: Vec::new(),
            deferred_lengths: Vec::new(),
            tokens: self.tokens,
            label: self.label.clone(),
            walk: self.walk.clone(),
            served: None,
            resume: None,
        }
    }

    /// A keyer of the call text `text` among `begins`, keyed by `prefix`, the text and `plan`'s
    /// (constant) key.
    pub(crate) fn in_begins(
        plan: &StateKeyPlan,
        begins: std::sync::Arc<toolwire_core::bitmask::CallBegins>,
        prefix: &[u8],
        text: &[u8],
    ) -> Self {
        let mut k = StateKeyer::new(toolwire_core::bitmask::StateKeyer::new(&plan.0));
        k.label.prefix = prefix.to_vec();
        k.walk = Some(BeginWalk {
            begins,
            text: text.to_vec(),
            steps_only: false,
        });
        k
    }

    pub(crate) fn feed(&mut self, token: u32, data: &[u8]) {
        self.tokens += 1;
        self.served = None;
        if let Some(walk) = &mut self.walk {
            walk.text.extend_from_slice(data);
            return;
        }
        self.inner.accept(token, data);
        let keep = self.label.stop_at.len().saturating_sub(1);
        if keep > 0 {
            let tail = &mut self.label.tail;
            tail.extend_from_slice(data);
            if tail.len() > keep {
                tail.drain(..tail.len() - keep);
            }
        }
    }

    /// Append the cache key of the current state (the label's prefix, the key, its suffix).
    pub(crate) fn push_key(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.label.prefix);
        if let Some(walk) = &self.walk {
            out.extend_from_slice(&walk.text);
        }
        out.extend_from_slice(&self.inner.key());
        if !self.label.suffix_near_stop || self.label.near_stop() {
            out.extend_from_slice(&self.label.suffix);
        }
    }

    /// Whether `data` would complete the label's `stop_at` text.
    fn stops_at(&self, data: &[u8]) -> bool {
        let stop = &self.label.stop_at;
        if stop.is_empty() {
            return false;
        }
        // Each place `stop` could end within `data`: the part before `data` must end the tail
        // (no copy of the two together: this runs for every token inside a call).
        let tail = &self.label.tail;
        (1..=data.len()).any(|end| {
            if end >= stop.len() {
                data[end - stop.len()..end] == stop[..]
            } else {
                let (before, within) = stop.split_at(stop.len() - end);
                data[..end] == *within && tail.ends_with(before)
            }
        })
    }
}

#[pymethods]
impl StateKeyer {
    /// Feed one accepted token (not a stop token): its id and its bytes.
    fn accept(&mut self, token: u32, data: &[u8]) {
        self.feed(token, data);
    }

    /// The key of the current state (34 bytes): grammar id, anchor kind, calls so far (0/1),
    /// digest; with :meth:`label`'s prefix before and suffix after.
    fn key<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let mut key = Vec::new();
        self.push_key(&mut key);
        pyo3::types::PyBytes::new(py, &key)
    }

    /// Put ``prefix`` before and ``suffix`` after every key of this keyer (in :meth:`key` and
    /// wherever a :class:`MaskCache` or :class:`TokenTable` keys rows by it), and make
    /// :meth:`TokenTable.feed_deferred` leave to the caller any token that completes
    /// ``stop_at`` in the text fed from now on (empty: none).
    /// With ``free_text_only``, it leaves any token after which the keyer is not in the free
    /// text of a ``triggered_tags`` format (mode ``free``). With ``suffix_near_stop``, the
    /// suffix is added only while the text fed since ends with a non-empty proper prefix of
    /// ``stop_at`` (where what the suffix tells apart matters only there).
    #[pyo3(
        signature = (prefix, suffix = b"".as_slice(), stop_at = b"".as_slice(), free_text_only = false, suffix_near_stop = false),
        text_signature = "(self, /, prefix, suffix=b'', stop_at=b'', free_text_only=False, suffix_near_stop=False)"
    )]
    fn label(
        &mut self,
        prefix: &[u8],
        suffix: &[u8],
        stop_at: &[u8],
        free_text_only: bool,
        suffix_near_stop: bool,
    ) {
        self.served = None;
        self.label = Label {
            prefix: prefix.to_vec(),
            suffix: suffix.to_vec(),
            stop_at: stop_at.to_vec(),
            tail: Vec::new(),
            free_text_only,
            suffix_near_stop,
        };
    }

    /// Where the keyer is; ``lost``: no anchors any more (or no plan).
    #[getter]
    fn mode(&self) -> &'static str {
        self.inner.mode().name()
    }

    /// The kind of the last anchor: ``S``/``I`` (start, by text/ids), ``F`` (free text), ``A`` (after a
    /// call), ``X`` (in an XML call), ``J`` (in JSON content, after a member's value).
    #[getter]
    fn family(&self) -> String {
        char::from(self.inner.family()).to_string()
    }

    /// Calls completed so far, as far as the keyer followed them.
    #[getter]
    fn calls(&self) -> u32 {
        self.inner.calls()
    }

    /// Tokens fed so far (stop tokens are not fed).
    #[getter]
    fn tokens(&self) -> u64 {
        self.tokens
    }

    /// False once more than 128 bytes were read without anchors (mode ``lost``): only a replay
    /// of the same output could share such a key, so :class:`toolwire.masks.BatchMasker` skips
    /// the cache for it.
    #[getter]
    fn cacheable(&self) -> bool {
        self.inner.cacheable()
    }

    /// Tokens taken by :meth:`TokenTable.feed_deferred` whose bytes the matcher has not read.
    #[getter]
    fn deferred_tokens(&self) -> usize {
        self.deferred_lengths.len()
    }

    /// The deferred bytes, handed over once (the caller gives them to the matcher).
    fn take_deferred<'py>(&mut self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        self.take_deferred_run(py).0
    }

    /// The deferred bytes and each deferred token's length in them, handed over once.
    fn take_deferred_run<'py>(
        &mut self,
        py: Python<'py>,
    ) -> (Bound<'py, pyo3::types::PyBytes>, Vec<u32>) {
        let out = pyo3::types::PyBytes::new(py, &self.deferred);
        self.deferred.clear();
        (out, std::mem::take(&mut self.deferred_lengths))
    }

    /// Inside a call: keep a copy of ``scaffold``, the scaffold's keyer where the call began, and
    /// ``feed``, the text it reads when the call closes, so a batch can close the call alone
    /// (:class:`CallSteps`).
    fn set_resume(&mut self, scaffold: &Self, feed: &[u8]) {
        self.resume = Some(Box::new(Resume {
            scaffold: scaffold.bare_clone(),
            feed: feed.to_vec(),
        }));
    }

    /// For a keyer of a call's text among begins where some tools' pieces go on beside them:
    /// take no token alone (the pieces would have to judge it), only :class:`CallSteps`' steps.
    fn set_steps_only(&mut self) {
        if let Some(walk) = &mut self.walk {
            walk.steps_only = true;
        }
    }

    /// Whether :meth:`set_resume` gave it the scaffold's keyer.
    #[getter]
    fn resumes(&self) -> bool {
        self.resume.is_some()
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "StateKeyer(mode={}, calls={})",
            self.inner.mode().name(),
            self.inner.calls()
        )
    }
}

/// Token bytes by id and the ids that end generation, for feeding a batch of keyers in one call.
#[pyclass(name = "TokenTable", module = "toolwire._core", frozen)]
pub struct TokenTable {
    offsets: Vec<usize>,
    data: Vec<u8>,
    /// Sorted and deduplicated: a tokenizer has a few (a set's SipHash cost more than the search).
    stops: Vec<u32>,
}

impl TokenTable {
    fn build<'a>(tokens: impl Iterator<Item = &'a [u8]>, stops: Vec<u32>) -> Self {
        let mut offsets = vec![0];
        let mut data = Vec::new();
        for t in tokens {
            data.extend_from_slice(t);
            offsets.push(data.len());
        }
        TokenTable {
            offsets,
            data,
            stops: {
                let mut stops = stops;
                stops.sort_unstable();
                stops.dedup();
                stops
            },
        }
    }

    fn is_stop(&self, token: u32) -> bool {
        self.stops.binary_search(&token).is_ok()
    }

    pub(crate) fn bytes_of(&self, token: u32) -> &[u8] {
        let t = token as usize;
        match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&a), Some(&b)) => &self.data[a..b],
            _ => &[],
        }
    }

    /// Whether the row cached under the keyer's key allows `token` (the row its fill was served
    /// where the keyer kept it). `key` holds the namespace's `ns` bytes and serves as scratch.
    pub(crate) fn row_allows(
        cache: &toolwire_core::bitmask::MaskCache,
        key: &mut Vec<u8>,
        ns: usize,
        keyer: &StateKeyer,
        token: u32,
    ) -> bool {
        let served = keyer.served.as_ref();
        match served.and_then(|s| s.allows(cache, &key[..ns], token)) {
            Some(allows) => allows,
            None => {
                key.truncate(ns);
                keyer.push_key(key);
                cache
                    .peek(key)
                    .is_some_and(|row| row.allows(token as usize))
            }
        }
    }

    /// :meth:`feed_deferred` for one keyer: whether it took `token` (fed and deferred), and if
    /// not, whether the row cached under its key allows it. `key` holds the namespace's `ns`
    /// bytes and serves as scratch.
    pub(crate) fn defer(
        &self,
        cache: &toolwire_core::bitmask::MaskCache,
        key: &mut Vec<u8>,
        ns: usize,
        keyer: &mut StateKeyer,
        token: u32,
    ) -> Deferral {
        let bytes = self.bytes_of(token);
        let stop = self.is_stop(token);
        let keyed_by_text = !stop
            && match &keyer.walk {
                // A call's text among several begins: only a step inside two or more of them.
                Some(walk) => !walk.steps_only && walk.begins.literal_step(&walk.text, bytes),
                None => {
                    keyer.inner.text_level() && keyer.inner.cacheable() && !keyer.stops_at(bytes)
                }
            };
        // Told apart for a text-level keyer of its own state (no walk): where it cannot take
        // the token alone, the caller may still know from this that its matcher would.
        let answers = keyed_by_text
            || (keyer.walk.is_none() && keyer.inner.text_level() && keyer.inner.cacheable());
        let allowed = answers && Self::row_allows(cache, key, ns, keyer, token);
        if !allowed {
            return Deferral::Left;
        }
        if !keyed_by_text {
            return Deferral::Allowed;
        }
        // Kept to undo the feed if the token leaves free text (plain free text cannot; a call's
        // text among begins is not free text).
        let before =
            (keyer.walk.is_none() && keyer.label.free_text_only && !keyer.inner.stays_free(bytes))
                .then(|| (keyer.inner.clone(), keyer.label.tail.clone()));
        keyer.feed(token, bytes);
        if let Some((inner, tail)) = before.filter(|_| keyer.inner.mode().name() != "free") {
            keyer.inner = inner;
            keyer.label.tail = tail;
            keyer.tokens -= 1;
            return Deferral::Allowed;
        }
        keyer.deferred.extend_from_slice(bytes);
        keyer.deferred_lengths.push(bytes.len() as u32);
        Deferral::Taken
    }
}

/// What [`TokenTable::defer`] did with a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deferral {
    /// The keyer took it alone (fed, its bytes deferred for the matcher).
    Taken,
    /// Not taken, but the row cached under the keyer's text-level key allows it: the
    /// request's matcher would accept it.
    Allowed,
    /// Not taken, nothing known.
    Left,
}

#[pymethods]
impl TokenTable {
    /// From a list of token bytes (id = position) and the ids that end generation.
    #[new]
    fn new(tokens: Vec<Vec<u8>>, stop_ids: Vec<u32>) -> Self {
        Self::build(tokens.iter().map(Vec::as_slice), stop_ids)
    }

    /// ``size`` ids of ``vocab`` (ids without a token have no bytes).
    #[staticmethod]
    fn from_vocab(vocab: &crate::vocab::Vocab, size: usize, stop_ids: Vec<u32>) -> Self {
        let v = &vocab.0;
        Self::build(
            (0..size).map(|i| {
                u32::try_from(i)
                    .ok()
                    .and_then(|i| v.token_bytes(i))
                    .unwrap_or(&[])
            }),
            stop_ids,
        )
    }

    fn __len__(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Feed ``tokens[i]`` to ``keyers[i]``, stop tokens excepted; returns their positions.
    fn feed(
        &self,
        mut keyers: Vec<PyRefMut<'_, StateKeyer>>,
        tokens: Vec<u32>,
    ) -> PyResult<Vec<usize>> {
        if keyers.len() != tokens.len() {
            return Err(ToolwireError::new_err("one token per keyer"));
        }
        let mut stopped = Vec::new();
        for (i, (keyer, &token)) in keyers.iter_mut().zip(&tokens).enumerate() {
            if self.is_stop(token) {
                stopped.push(i);
            } else {
                keyer.feed(token, self.bytes_of(token));
            }
        }
        Ok(stopped)
    }

    /// Take ``tokens[i]`` for ``keyers[i]`` without the matcher where the mask cached under the
    /// keyer's key allows it (the keyer is fed, the bytes deferred); returns the positions left
    /// to the caller (stop tokens, refused tokens, uncached keys, token-level grammars). The
    /// cached mask is the one the request's last fill produced, so it answers exactly as the
    /// matcher's ``accept_token`` would.
    fn feed_deferred(
        &self,
        cache: &MaskCache,
        namespace: &[u8],
        mut keyers: Vec<PyRefMut<'_, StateKeyer>>,
        tokens: Vec<u32>,
    ) -> PyResult<Vec<usize>> {
        if keyers.len() != tokens.len() {
            return Err(ToolwireError::new_err("one token per keyer"));
        }
        let mut left = Vec::new();
        let mut key = namespace.to_vec();
        let cache = cache.lock();
        for (i, (keyer, &token)) in keyers.iter_mut().zip(&tokens).enumerate() {
            if self.defer(&cache, &mut key, namespace.len(), keyer, token) != Deferral::Taken {
                left.push(i);
            }
        }
        Ok(left)
    }
}
