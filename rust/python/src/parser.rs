//! `ToolParser`, `ToolStream` and the result classes.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::{json, Value};
use toolwire_core::formats::{
    self as registry,
    engine_names::{self as names, EngineNames},
};
use toolwire_core::ids::{IdSource, RandomIds};
use toolwire_core::message as core;
use toolwire_core::render::RenderCall;
use toolwire_core::request::{ReasoningMode, ToolChoice};
use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;
use toolwire_core::Error;

use crate::convert::{positive, repr, to_py, to_value, value_or_null, wrong_type, Flag, Text};
use crate::vocab::Vocab;
use crate::{to_py_err, ToolwireError};

/// Calls a user's ``id_factory(index, name)``; a Python error is kept and raised after the feed.
struct PyIds {
    factory: Py<PyAny>,
    error: Arc<Mutex<Option<PyErr>>>,
    fallback: RandomIds,
}

impl IdSource for PyIds {
    fn next_id(&mut self, index: usize, name: &str) -> String {
        Python::with_gil(|py| {
            match self
                .factory
                .call1(py, (index, name))
                .and_then(|r| r.extract::<String>(py))
            {
                Ok(id) => id,
                Err(err) => {
                    if let Ok(mut slot) = self.error.lock() {
                        slot.get_or_insert(err);
                    }
                    self.fallback.next_id(index, name)
                }
            }
        })
    }
}

fn tool_set(tools: Option<&Bound<'_, PyAny>>) -> PyResult<Arc<ToolSet>> {
    match tools {
        Some(obj) if !obj.is_none() => crate::toolset::compile(obj),
        _ => Ok(Arc::new(ToolSet::empty())),
    }
}

/// The request's `tool_choice` read against the parser's tools; unset, calls to any tool are
/// read (a parser without tools has no request to hold them to).
fn read_tool_choice(choice: Option<&Bound<'_, PyAny>>, tools: &ToolSet) -> PyResult<ToolChoice> {
    match choice {
        Some(obj) if !obj.is_none() => ToolChoice::read(&to_value(obj)?, tools).map_err(to_py_err),
        _ => Ok(ToolChoice::Auto),
    }
}

/// A parser for one wire format and one tool list; reuse it across requests.
///
/// Arguments:
///     format: a name from :func:`formats` or an alias (``qwen25``, ``llama3``, ...).
///     tools: OpenAI tool dicts; type XML parameter values and flag unknown tools.
///     reasoning: None or False (reasoning stays content), True / ``"native"`` (the
///         format's own block may open the output), ``"think"`` / ``"paired"``
///         (``<think>...</think>`` may), ``"closing_only"`` (the prompt opened reasoning;
///         text up to the close is reasoning); xgrammar's ``"disabled"`` / ``"auto"`` /
///         ``"enabled"`` mean off / native / closing_only (see :func:`read_request`).
///     vocab: needed for :meth:`ToolStream.feed_tokens`.
///     id_factory: ``(index, name) -> id`` for tool-call ids.
///     tool_choice: the request's ``tool_choice`` (``"auto"``, ``"none"``, ``"required"``,
///         a named tool or ``allowed_tools``, read as :func:`read_request` does; unset:
///         calls to any tool are read); calls against it (and a second call when
///         ``parallel_tool_calls`` is false) are flagged ``not_allowed_by_tool_choice``, and
///         a missing call under ``required``/named is ``missing_tool_call``.
///     max_call_bytes: the most bytes one tool call may take (None: no limit). A call
///         region that runs past it without producing content, reasoning, or a call start
///         or end is cut (checked every ``max_call_bytes // 16`` bytes): the call is dropped
///         and reported as ``too_large`` with the text the parser had kept of it as ``raw``,
///         and the rest of the region, up to the format's next section-end marker (call-end
///         for formats without sections; the end of the output when none comes), is
///         dropped; the issue's detail says how many bytes. Bounds the
///         memory a runaway or hostile output can make the parser hold.
///
/// Raises:
///     ToolwireError: unknown format, invalid tools (duplicate or empty names, ...), a
///         ``tool_choice`` the tools cannot satisfy, an unknown reasoning mode: the
///         requests :func:`read_request` refuses, with the same message.
#[pyclass(name = "ToolParser", module = "toolwire._core", frozen)]
pub struct ToolParser {
    pub(crate) config: ParserConfig,
    pub(crate) id_factory: Option<Py<PyAny>>,
    pub(crate) vocab: Option<Arc<toolwire_core::vocab::Vocab>>,
}

#[pymethods]
impl ToolParser {
    #[new]
    #[pyo3(
        signature = (format, tools=None, *, reasoning=None, vocab=None, id_factory=None, tool_choice=None, parallel_tool_calls=Flag(true), max_call_bytes=None),
        text_signature = "(format, tools=None, *, reasoning=None, vocab=None, id_factory=None, tool_choice=None, parallel_tool_calls=True, max_call_bytes=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        format: Text<'_>,
        tools: Option<&Bound<'_, PyAny>>,
        reasoning: Option<&Bound<'_, PyAny>>,
        vocab: Option<&Bound<'_, PyAny>>,
        id_factory: Option<Py<PyAny>>,
        tool_choice: Option<&Bound<'_, PyAny>>,
        parallel_tool_calls: Flag,
        max_call_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let max_call_bytes = positive(max_call_bytes, "max_call_bytes")?;
        let vocab = match vocab {
            Some(v) if !v.is_none() => Some(
                v.downcast::<Vocab>()
                    .map_err(|_| ToolwireError::new_err("vocab must be a toolwire.Vocab"))?
                    .get()
                    .0
                    .clone(),
            ),
            _ => None,
        };
        // In `read_request`'s order, so that both raise the same error for the same request.
        let config =
            ParserConfig::new(format.to_str()?, ToolSet::empty(), None).map_err(to_py_err)?;
        let tools = tool_set(tools)?;
        let tool_choice = read_tool_choice(tool_choice, &tools)?;
        let reasoning = ReasoningMode::from_json(&value_or_null(reasoning)?).map_err(to_py_err)?;
        let config = config
            .with_reasoning(reasoning)
            .with_tool_set(tools)
            .with_tool_choice(tool_choice, parallel_tool_calls.0)
            .map_err(to_py_err)?
            .with_max_call_bytes(max_call_bytes);
        Ok(Self {
            config,
            id_factory,
            vocab,
        })
    }

    /// Canonical name of the format.
    #[getter]
    fn format(&self) -> &'static str {
        self.config.spec.syntax.name
    }

    /// Parse a complete model output.
    fn parse(&self, text: Text<'_>) -> PyResult<ParsedMessage> {
        let text = text.to_str()?;
        let mut stream = self.stream()?;
        stream.inner.discard_deltas();
        stream.run(|s| s.feed(text))?;
        stream.run(|s| s.finish(None))?;
        Ok(ParsedMessage::from(stream.inner.into_message()))
    }

    /// Parse a complete output from its sampled token ids (needs ``vocab``): what
    /// :meth:`ToolStream.feed_tokens` then :meth:`ToolStream.finish` give, without the deltas.
    ///
    /// Raises:
    ///     ToolwireError: no vocab, or an id is not in the vocabulary.
    ///     TypeError: ``token_ids`` is not a sequence of ints.
    #[pyo3(signature = (token_ids, finish_reason=None))]
    fn parse_tokens(
        &self,
        token_ids: &Bound<'_, PyAny>,
        finish_reason: Option<Text<'_>>,
    ) -> PyResult<ParsedMessage> {
        let token_ids = crate::convert::token_ids(token_ids, "token_ids")?;
        let finish_reason = finish_reason.as_ref().map(Text::to_str).transpose()?;
        let vocab = self
            .vocab
            .clone()
            .ok_or_else(|| to_py_err(Error::NoVocab))?;
        let mut stream = self.stream()?;
        stream.inner.discard_deltas();
        stream.run(|s| s.feed_tokens(&vocab, &token_ids))?;
        stream.run(|s| s.finish(finish_reason))?;
        Ok(ParsedMessage::from(stream.inner.into_message()))
    }

    /// A new stream for one request.
    fn stream(&self) -> PyResult<ToolStream> {
        let (inner, id_error) = match &self.id_factory {
            Some(factory) => {
                let id_error = Arc::new(Mutex::new(None));
                let ids = PyIds {
                    factory: Python::with_gil(|py| factory.clone_ref(py)),
                    error: id_error.clone(),
                    fallback: RandomIds::new(),
                };
                let inner = StreamParser::with_ids(self.config.clone(), Box::new(ids));
                (inner, Some(id_error))
            }
            None => (StreamParser::new(self.config.clone()), None),
        };
        Ok(ToolStream {
            inner,
            id_error,
            vocab: self.vocab.clone(),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ToolParser(format='{}', tools={})",
            self.config.spec.syntax.name,
            self.config.tools.tools().len()
        )
    }
}

/// The parsing state of one request. Feed it text or token ids, never both.
#[pyclass(name = "ToolStream", module = "toolwire._core")]
pub struct ToolStream {
    inner: StreamParser,
    /// Where `PyIds` keeps an `id_factory` error; None without a factory, so that a feed takes
    /// no lock.
    id_error: Option<Arc<Mutex<Option<PyErr>>>>,
    vocab: Option<Arc<toolwire_core::vocab::Vocab>>,
}

impl ToolStream {
    fn run(
        &mut self,
        step: impl FnOnce(&mut StreamParser) -> Result<Vec<core::Delta>, Error>,
    ) -> PyResult<Vec<Delta>> {
        let deltas = step(&mut self.inner).map_err(to_py_err)?;
        let id_error = self.id_error.as_ref();
        if let Some(err) = id_error.and_then(|e| e.lock().ok().and_then(|mut slot| slot.take())) {
            return Err(err);
        }
        Ok(deltas.into_iter().map(Delta).collect())
    }
}

#[pymethods]
impl ToolStream {
    /// Feed a text delta; returns only what is new. Content is released as soon as it cannot
    /// be the start of a marker.
    fn feed(&mut self, text: Text<'_>) -> PyResult<Vec<Delta>> {
        let text = text.to_str()?;
        self.run(|s| s.feed(text))
    }

    /// Feed sampled token ids; needs a parser built with ``vocab``. Markers that are special
    /// tokens are recognised by id only.
    ///
    /// An id the vocabulary lacks raises before any of ``token_ids`` is fed, and the stream
    /// stays usable: such an id means the engine's tokenizer and the parser's vocabulary
    /// disagree (or a padded logits row was sampled), which a serving engine must see at once
    /// rather than as U+FFFD in the content.
    ///
    /// Raises:
    ///     ToolwireError: no vocab, the stream was fed text, or an id is not in the vocabulary.
    ///     TypeError: ``token_ids`` is not a sequence of ints.
    fn feed_tokens(&mut self, token_ids: &Bound<'_, PyAny>) -> PyResult<Vec<Delta>> {
        let token_ids = crate::convert::token_ids(token_ids, "token_ids")?;
        let vocab = self
            .vocab
            .clone()
            .ok_or_else(|| to_py_err(Error::NoVocab))?;
        self.run(|s| s.feed_tokens(&vocab, &token_ids))
    }

    /// Flush held-back text; the last delta carries the finish reason (``tool_calls`` when
    /// calls were made and the reason was None or ``stop``).
    #[pyo3(signature = (finish_reason=None))]
    fn finish(&mut self, finish_reason: Option<Text<'_>>) -> PyResult<Vec<Delta>> {
        let finish_reason = finish_reason.as_ref().map(Text::to_str).transpose()?;
        self.run(|s| s.finish(finish_reason))
    }

    /// Everything parsed so far (complete calls only).
    fn message(&self) -> ParsedMessage {
        ParsedMessage::from(self.inner.message())
    }

    #[getter]
    fn finished(&self) -> bool {
        self.inner.is_finished()
    }
}

/// One complete tool call.
#[pyclass(name = "ToolCall", module = "toolwire._core", frozen, eq)]
#[derive(Clone, PartialEq, Eq)]
pub struct ToolCall(core::ToolCall);

#[pymethods]
impl ToolCall {
    /// Position of the call in the stream (as in the deltas).
    #[getter]
    fn index(&self) -> usize {
        self.0.index
    }
    /// ``call_`` + 24 alphanumerics, the model's own id where the format carries one, or
    /// what ``id_factory`` returned.
    #[getter]
    fn id(&self) -> &str {
        &self.0.id
    }
    /// ``"function"``, or ``"custom"`` for a call to a custom (freeform) tool.
    #[getter]
    fn r#type(&self) -> &'static str {
        if self.0.input.is_some() {
            "custom"
        } else {
            "function"
        }
    }
    /// A custom tool call's raw input: a ``{"input": "..."}`` wrapper or JSON string is
    /// unwrapped, anything else is the text the model wrote. None for function calls.
    #[getter]
    fn input(&self) -> Option<&str> {
        self.0.input.as_deref()
    }
    #[getter]
    fn name(&self) -> &str {
        &self.0.name
    }
    /// Arguments as JSON text (the concatenation of the streamed fragments).
    #[getter]
    fn arguments(&self) -> &str {
        &self.0.arguments
    }
    /// ``{"id", "type": "function", "function": {"name", "arguments"}}`` or, for a custom
    /// tool, ``{"id", "type": "custom", "custom": {"name", "input"}}``.
    fn to_openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        call_openai(py, &self.0)
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ToolCall(index={}, id={}, name={}, arguments={})",
            self.0.index,
            repr(py, Some(&self.0.id)),
            repr(py, Some(&self.0.name)),
            repr(py, Some(&self.0.arguments))
        )
    }
}

/// The OpenAI dicts are built once per delta in a serving loop: their keys and fixed values are
/// interned strings, made once per process, rather than new ones per dict.
fn call_openai<'py>(py: Python<'py>, call: &core::ToolCall) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item(intern!(py, "id"), &call.id)?;
    let body = PyDict::new(py);
    body.set_item(intern!(py, "name"), &call.name)?;
    match &call.input {
        Some(input) => {
            body.set_item(intern!(py, "input"), input)?;
            out.set_item(intern!(py, "type"), intern!(py, "custom"))?;
            out.set_item(intern!(py, "custom"), body)?;
        }
        None => {
            body.set_item(intern!(py, "arguments"), &call.arguments)?;
            out.set_item(intern!(py, "type"), intern!(py, "function"))?;
            out.set_item(intern!(py, "function"), body)?;
        }
    }
    Ok(out)
}

fn call_delta_openai<'py>(py: Python<'py>, call: &core::CallDelta) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item(intern!(py, "index"), call.index)?;
    if let Some(input) = &call.input {
        out.set_item(intern!(py, "id"), &call.id)?;
        out.set_item(intern!(py, "type"), intern!(py, "custom"))?;
        let custom = PyDict::new(py);
        custom.set_item(intern!(py, "name"), &call.name)?;
        custom.set_item(intern!(py, "input"), input)?;
        out.set_item(intern!(py, "custom"), custom)?;
        return Ok(out);
    }
    let function = PyDict::new(py);
    if let Some(name) = &call.name {
        function.set_item(intern!(py, "name"), name)?;
    }
    function.set_item(intern!(py, "arguments"), &call.arguments)?;
    if let Some(id) = &call.id {
        out.set_item(intern!(py, "id"), id)?;
        out.set_item(intern!(py, "type"), intern!(py, "function"))?;
    }
    out.set_item(intern!(py, "function"), function)?;
    Ok(out)
}

/// Something wrong in the model output, reported as data.
///
/// ``kind`` is one of ``malformed_json``, ``truncated``, ``missing_name``, ``unexpected_text``,
/// ``unknown_tool``, ``schema_violation``, ``duplicate_call_id``, ``not_allowed_by_tool_choice``,
/// ``missing_tool_call``, ``too_large``, ``unchecked_arguments`` (the tool's schema is invalid, so
/// the arguments were not checked), ``missing_markers`` (the call was read without its
/// special-token opener, stripped by ``skip_special_tokens``). Calls with ``unknown_tool``,
/// ``schema_violation``, ``duplicate_call_id``, ``not_allowed_by_tool_choice``,
/// ``unchecked_arguments`` or ``missing_markers`` are still returned; the others are not.
#[pyclass(name = "CallIssue", module = "toolwire._core", frozen)]
#[derive(Clone)]
pub struct CallIssue(core::Issue);

#[pymethods]
impl CallIssue {
    /// Stream index of the call concerned, or None when no call had started.
    #[getter]
    fn index(&self) -> Option<usize> {
        self.0.index
    }
    #[getter]
    fn kind(&self) -> &'static str {
        self.0.kind.as_str()
    }
    #[getter]
    fn detail(&self) -> &str {
        &self.0.detail
    }
    /// The model's text concerned, markers included.
    #[getter]
    fn raw(&self) -> &str {
        &self.0.raw
    }
    /// For ``schema_violation``: JSON pointer into the arguments (``""`` is the root).
    #[getter]
    fn pointer(&self) -> Option<&str> {
        self.0.pointer.as_deref()
    }
    /// For ``schema_violation``: the failing schema keyword.
    #[getter]
    fn keyword(&self) -> Option<&str> {
        self.0.keyword.as_deref()
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "CallIssue(index={}, kind='{}', detail={}, raw={})",
            self.0
                .index
                .map_or_else(|| "None".to_owned(), |i| i.to_string()),
            self.0.kind.as_str(),
            repr(py, Some(&self.0.detail)),
            repr(py, Some(&self.0.raw))
        )
    }
}

/// A parsed assistant message.
#[pyclass(name = "ParsedMessage", module = "toolwire._core", frozen)]
pub struct ParsedMessage(core::Message);

impl From<core::Message> for ParsedMessage {
    fn from(m: core::Message) -> Self {
        Self(m)
    }
}

#[pymethods]
impl ParsedMessage {
    /// Text outside calls; None when empty (or only whitespace around calls).
    #[getter]
    fn content(&self) -> Option<&str> {
        self.0.content_or_none()
    }
    #[getter]
    fn reasoning_content(&self) -> Option<&str> {
        self.0.reasoning_or_none()
    }
    #[getter]
    fn tool_calls(&self) -> Vec<ToolCall> {
        self.0.tool_calls.iter().cloned().map(ToolCall).collect()
    }
    #[getter]
    fn issues(&self) -> Vec<CallIssue> {
        self.0.issues.iter().cloned().map(CallIssue).collect()
    }
    #[getter]
    fn finish_reason(&self) -> Option<&str> {
        self.0.finish_reason.as_deref()
    }
    /// True when there are no issues.
    #[getter]
    fn valid(&self) -> bool {
        self.0.is_valid()
    }
    /// The OpenAI assistant message (``role``, ``content``, ``tool_calls``, ``reasoning_content``).
    fn to_openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        out.set_item(intern!(py, "role"), intern!(py, "assistant"))?;
        out.set_item(intern!(py, "content"), self.0.content_or_none())?;
        if let Some(reasoning) = self.0.reasoning_or_none() {
            out.set_item(intern!(py, "reasoning_content"), reasoning)?;
        }
        if !self.0.tool_calls.is_empty() {
            let calls = PyList::empty(py);
            for call in &self.0.tool_calls {
                calls.append(call_openai(py, call)?)?;
            }
            out.set_item(intern!(py, "tool_calls"), calls)?;
        }
        Ok(out)
    }
    /// The OpenAI Responses API ``output`` items: ``reasoning``, ``message`` (one
    /// ``output_text``), then one ``function_call`` per call (``call_id`` = the call's id).
    /// ``id_factory(prefix)`` makes item ids (``rs``/``msg``/``fc``/``ctc``). Written in Python,
    /// as :func:`toolwire.openai.message_to_responses`.
    #[pyo3(signature = (*, id_factory=None))]
    fn to_responses<'py>(
        slf: &Bound<'py, Self>,
        id_factory: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let options = PyDict::new(py);
        options.set_item("id_factory", id_factory)?;
        py.import("toolwire.openai")?
            .getattr("message_to_responses")?
            .call((slf,), Some(&options))
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ParsedMessage(content={}, reasoning_content={}, tool_calls={}, issues={})",
            repr(py, self.0.content_or_none()),
            repr(py, self.0.reasoning_or_none()),
            self.0.tool_calls.len(),
            self.0.issues.len()
        )
    }
}

/// One entry of a delta's ``tool_calls``: the first for a call carries ``id`` and ``name``.
#[pyclass(name = "ToolCallDelta", module = "toolwire._core", frozen)]
pub struct ToolCallDelta(core::CallDelta);

#[pymethods]
impl ToolCallDelta {
    #[getter]
    fn index(&self) -> usize {
        self.0.index
    }
    #[getter]
    fn id(&self) -> Option<&str> {
        self.0.id.as_deref()
    }
    #[getter]
    fn r#type(&self) -> Option<&'static str> {
        self.0.id.as_ref().map(|_| {
            if self.0.input.is_some() {
                "custom"
            } else {
                "function"
            }
        })
    }
    /// A custom tool call's whole input, sent once when the call completes.
    #[getter]
    fn input(&self) -> Option<&str> {
        self.0.input.as_deref()
    }
    #[getter]
    fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }
    #[getter]
    fn arguments(&self) -> &str {
        &self.0.arguments
    }
    fn to_openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        call_delta_openai(py, &self.0)
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ToolCallDelta(index={}, id={}, name={}, arguments={})",
            self.0.index,
            repr(py, self.0.id.as_deref()),
            repr(py, self.0.name.as_deref()),
            repr(py, Some(&self.0.arguments))
        )
    }
}

/// A streamed update.
#[pyclass(name = "Delta", module = "toolwire._core", frozen)]
pub struct Delta(core::Delta);

#[pymethods]
impl Delta {
    #[getter]
    fn content(&self) -> Option<&str> {
        self.0.content.as_deref()
    }
    #[getter]
    fn reasoning_content(&self) -> Option<&str> {
        self.0.reasoning.as_deref()
    }
    #[getter]
    fn tool_calls(&self) -> Vec<ToolCallDelta> {
        self.0
            .tool_calls
            .iter()
            .cloned()
            .map(ToolCallDelta)
            .collect()
    }
    /// Set on the last delta of a stream: ``tool_calls`` when calls were made.
    #[getter]
    fn finish_reason(&self) -> Option<&str> {
        self.0.finish_reason.as_deref()
    }
    /// The ``choices[0].delta`` dict of an OpenAI chat completion chunk (without the finish
    /// reason, which belongs to the choice).
    fn to_openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        if let Some(reasoning) = &self.0.reasoning {
            out.set_item(intern!(py, "reasoning_content"), reasoning)?;
        }
        if let Some(content) = &self.0.content {
            out.set_item(intern!(py, "content"), content)?;
        }
        if !self.0.tool_calls.is_empty() {
            let calls = PyList::empty(py);
            for call in &self.0.tool_calls {
                calls.append(call_delta_openai(py, call)?)?;
            }
            out.set_item(intern!(py, "tool_calls"), calls)?;
        }
        Ok(out)
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Delta(content={}, reasoning_content={}, tool_calls={}, finish_reason={})",
            repr(py, self.0.content.as_deref()),
            repr(py, self.0.reasoning.as_deref()),
            self.0.tool_calls.len(),
            repr(py, self.0.finish_reason.as_deref())
        )
    }
}

/// Canonical names of every supported wire format.
#[pyfunction]
pub fn formats() -> Vec<&'static str> {
    registry::names()
}

/// The format description: the format's ``Syntax`` (``rust/core/src/spec.rs``) serialised, as
/// :class:`FormatInfo` types it: ``name``, ``aliases``, ``families``, ``description``,
/// ``markers`` (``role``, ``text``, ``special_token``), ``triggers``, ``reasoning``
/// (``start``/``end`` or None), ``template`` (``begin``/``end``/``separator`` or None: one call,
/// ``begin`` holding ``{name}`` and maybe ``{index}``), ``arguments`` (how the arguments are
/// written: ``kind`` ``json``, ``xml_params`` with its tags, ``gemma`` or ``python_kwargs``),
/// ``section``, ``content_block`` and ``reasoning_block`` (``begin``/``end`` or None),
/// ``content_after_calls``, and ``supports_structural_tag``. ``aliases`` holds every other name
/// the format is found by, its ``engine_names`` included: the ``sglang``, ``vllm`` and ``dynamo``
/// parser names that read this format (``rust/core/src/formats/engine_names.rs``).
///
/// Raises:
///     ToolwireError: ``name`` is neither a format nor an alias.
#[pyfunction]
pub fn format_info<'py>(py: Python<'py>, name: Text<'_>) -> PyResult<Bound<'py, PyAny>> {
    let name = name.to_str()?;
    let format =
        registry::lookup(name).ok_or_else(|| to_py_err(Error::UnknownFormat(name.to_owned())))?;
    let mut info = serde_json::to_value(&format.syntax)
        .map_err(|e| ToolwireError::new_err(format!("format {name:?}: {e}")))?;
    if let Value::Object(map) = &mut info {
        let grammar = format.syntax.template.is_some();
        map.insert("supports_structural_tag".into(), Value::Bool(grammar));
        map.insert("aliases".into(), json!(registry::aliases(format)));
        let engines = names::of(format.syntax.name).map_or_else(
            || json!({"sglang": [], "vllm": [], "dynamo": []}),
            engine_row,
        );
        map.insert("engine_names".into(), engines);
    }
    to_py(py, &info)
}

fn engine_row(row: &EngineNames) -> Value {
    json!({"sglang": row.sglang, "vllm": row.vllm, "dynamo": row.dynamo})
}

/// The engine-name table (for ``scripts/update_readme_formats.py`` and its test): ``formats``, one
/// ``{"format", "sglang", "vllm", "dynamo"}`` per format an engine names (formats toolwire lacks
/// included), and ``not_supported``, ``{"format", "reason"}`` for each format not read yet.
#[pyfunction]
pub fn engine_names(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let formats: Vec<Value> = names::ENGINE_NAMES
        .iter()
        .map(|row| {
            let mut value = engine_row(row);
            value["format"] = json!(row.format);
            value
        })
        .collect();
    let not_supported: Vec<Value> = names::NOT_SUPPORTED
        .iter()
        .map(|entry| json!({"format": entry.format, "reason": entry.reason}))
        .collect();
    to_py(
        py,
        &json!({"formats": formats, "not_supported": not_supported}),
    )
}

fn render_call(position: usize, item: &Bound<'_, PyAny>) -> PyResult<RenderCall> {
    if let Ok(call) = item.downcast::<ToolCall>() {
        let call = call.get();
        let arguments = match &call.0.input {
            Some(input) => serde_json::json!({ "input": input }),
            None => serde_json::from_str(&call.0.arguments)
                .map_err(|e| ToolwireError::new_err(e.to_string()))?,
        };
        return Ok(RenderCall {
            name: call.0.name.clone(),
            arguments,
            id: Some(call.0.id.clone()),
        });
    }
    if !item.is_instance_of::<PyDict>() {
        let param = format!("tool_calls[{position}]");
        return Err(wrong_type(&param, item, "a ToolCall or a dict"));
    }
    let value = to_value(item)?;
    let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
    if let Some(custom) = value.get("custom") {
        let name = custom
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolwireError::new_err("each tool call needs a \"name\""))?;
        let input = custom.get("input").and_then(Value::as_str).unwrap_or("");
        return Ok(RenderCall {
            name: name.to_owned(),
            arguments: serde_json::json!({ "input": input }),
            id,
        });
    }
    let function = value.get("function").unwrap_or(&value);
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolwireError::new_err("each tool call needs a \"name\""))?;
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(text)) => serde_json::from_str(text).map_err(|e| {
            ToolwireError::new_err(format!("arguments of {name:?} are not JSON: {e}"))
        })?,
        Some(other) => other.clone(),
    };
    Ok(RenderCall {
        name: name.to_owned(),
        arguments,
        id,
    })
}

/// The model-native text for ``tool_calls`` (``ToolCall`` objects, ``{"name", "arguments"}``
/// dicts with arguments as a dict or JSON text, or OpenAI ``{"type": "function", "function": {...}}``
/// dicts), preceded by ``content``. ``toolwire.render`` wraps it and adds ``reasoning``.
///
/// Raises:
///     TypeError: ``tool_calls`` is one call (a dict or ``ToolCall``) rather than a list.
///     ToolwireError: unknown format, or a call without a name or with non-JSON arguments.
#[pyfunction]
#[pyo3(signature = (format, tool_calls, content=None))]
pub fn render(
    format: Text<'_>,
    tool_calls: &Bound<'_, PyAny>,
    content: Option<Text<'_>>,
) -> PyResult<String> {
    let format = format.to_str()?;
    let content = content.as_ref().map(Text::to_str).transpose()?;
    let spec = registry::lookup(format)
        .ok_or_else(|| to_py_err(Error::UnknownFormat(format.to_owned())))?;
    if tool_calls.is_instance_of::<PyDict>()
        || tool_calls.is_instance_of::<PyString>()
        || tool_calls.downcast::<ToolCall>().is_ok()
    {
        return Err(PyTypeError::new_err(format!(
            "argument 'tool_calls': expected a list of tool calls, got one {}; wrap it in a list",
            tool_calls.get_type().name()?
        )));
    }
    let items = tool_calls
        .try_iter()
        .map_err(|_| wrong_type("tool_calls", tool_calls, "a list of tool calls"))?;
    let calls = items
        .enumerate()
        .map(|(position, item)| render_call(position, &item?))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(spec.render(&calls, content))
}
