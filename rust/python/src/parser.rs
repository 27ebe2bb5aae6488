//! `ToolParser`, `ToolStream` and the result classes.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use serde_json::Value;
use toolwire_core::ids::{IdSource, RandomIds};
use toolwire_core::message as core;
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::tools::{ToolChoice, ToolSet};
use toolwire_core::{formats as registry, Error};

use crate::convert::{dict, opt_str, str_list, to_value};
use crate::vocab::Vocab;
use crate::{to_py_err, ToolwireError};

/// Calls a user's `id_factory(index, name)`; a Python error is kept and raised after the feed.
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

fn reasoning_choice(reasoning: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(obj) = reasoning else {
        return Ok(None);
    };
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(flag) = obj.downcast::<PyBool>() {
        return Ok(flag.is_true().then(|| "native".to_owned()));
    }
    obj.extract::<String>()
        .map(Some)
        .map_err(|_| ToolwireError::new_err("reasoning must be None, a bool, or a string"))
}

fn tool_set(tools: Option<&Bound<'_, PyAny>>) -> PyResult<Arc<ToolSet>> {
    match tools {
        Some(obj) if !obj.is_none() => crate::toolset::compile(obj),
        _ => Ok(Arc::new(ToolSet::empty())),
    }
}

fn parse_tool_choice(choice: Option<&Bound<'_, PyAny>>) -> PyResult<ToolChoice> {
    match choice {
        Some(obj) if !obj.is_none() => ToolChoice::from_json(&to_value(obj)?).map_err(to_py_err),
        _ => Ok(ToolChoice::Auto),
    }
}

/// A parser for one wire format and one set of tools; cheap to keep and reuse across requests.
#[pyclass(name = "ToolParser", module = "toolwire._core", frozen)]
pub struct ToolParser {
    pub(crate) config: ParserConfig,
    pub(crate) id_factory: Option<Py<PyAny>>,
    pub(crate) vocab: Option<Arc<toolwire_core::vocab::Vocab>>,
}

#[pymethods]
impl ToolParser {
    #[new]
    #[pyo3(signature = (format, tools=None, *, reasoning=None, vocab=None, id_factory=None, tool_choice=None, parallel_tool_calls=true, max_call_bytes=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        format: &str,
        tools: Option<&Bound<'_, PyAny>>,
        reasoning: Option<&Bound<'_, PyAny>>,
        vocab: Option<&Bound<'_, PyAny>>,
        id_factory: Option<Py<PyAny>>,
        tool_choice: Option<&Bound<'_, PyAny>>,
        parallel_tool_calls: bool,
        max_call_bytes: Option<usize>,
    ) -> PyResult<Self> {
        if max_call_bytes == Some(0) {
            return Err(ToolwireError::new_err(
                "max_call_bytes must be positive or None",
            ));
        }
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
        let reasoning = reasoning_choice(reasoning)?;
        let config = ParserConfig::new(format, ToolSet::empty(), reasoning.as_deref())
            .map_err(to_py_err)?
            .with_tool_set(tool_set(tools)?)
            .with_tool_choice(parse_tool_choice(tool_choice)?, parallel_tool_calls)
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
        self.config.spec.name
    }

    /// Parse a complete model output.
    fn parse(&self, text: &str) -> PyResult<ParsedMessage> {
        let mut stream = self.stream()?;
        stream.run(|s| s.feed(text))?;
        stream.run(|s| s.finish(None))?;
        Ok(ParsedMessage::from(stream.inner.message()))
    }

    /// A new stream for one request.
    fn stream(&self) -> PyResult<ToolStream> {
        let id_error = Arc::new(Mutex::new(None));
        let inner = match &self.id_factory {
            Some(factory) => {
                let ids = PyIds {
                    factory: Python::with_gil(|py| factory.clone_ref(py)),
                    error: id_error.clone(),
                    fallback: RandomIds::new(),
                };
                StreamParser::with_ids(self.config.clone(), Box::new(ids))
            }
            None => StreamParser::new(self.config.clone()),
        };
        Ok(ToolStream {
            inner,
            id_error,
            vocab: self.vocab.clone(),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ToolParser(format={:?}, tools={})",
            self.config.spec.name,
            self.config.tools.tools().len()
        )
    }
}

/// The streaming state of one request.
#[pyclass(name = "ToolStream", module = "toolwire._core")]
pub struct ToolStream {
    inner: StreamParser,
    id_error: Arc<Mutex<Option<PyErr>>>,
    vocab: Option<Arc<toolwire_core::vocab::Vocab>>,
}

impl ToolStream {
    fn run(
        &mut self,
        step: impl FnOnce(&mut StreamParser) -> Result<Vec<core::Delta>, Error>,
    ) -> PyResult<Vec<Delta>> {
        let deltas = step(&mut self.inner).map_err(to_py_err)?;
        if let Some(err) = self.id_error.lock().ok().and_then(|mut slot| slot.take()) {
            return Err(err);
        }
        Ok(deltas.into_iter().map(Delta).collect())
    }
}

#[pymethods]
impl ToolStream {
    /// Feed a text delta; returns only what is new.
    fn feed(&mut self, text: &str) -> PyResult<Vec<Delta>> {
        self.run(|s| s.feed(text))
    }

    /// Feed token ids (needs a parser built with a vocab).
    fn feed_tokens(&mut self, token_ids: Vec<u32>) -> PyResult<Vec<Delta>> {
        let vocab = self
            .vocab
            .clone()
            .ok_or_else(|| to_py_err(Error::NoVocab))?;
        self.run(|s| s.feed_tokens(&vocab, &token_ids))
    }

    /// End of output: flush held-back text and report the finish reason.
    #[pyo3(signature = (finish_reason=None))]
    fn finish(&mut self, finish_reason: Option<&str>) -> PyResult<Vec<Delta>> {
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

/// One tool call, as returned in an assistant message.
#[pyclass(name = "ToolCall", module = "toolwire._core", frozen, eq)]
#[derive(Clone, PartialEq, Eq)]
pub struct ToolCall(core::ToolCall);

#[pymethods]
impl ToolCall {
    #[getter]
    fn index(&self) -> usize {
        self.0.index
    }
    #[getter]
    fn id(&self) -> &str {
        &self.0.id
    }
    /// `"function"`, or `"custom"` for a call to a custom (freeform) tool.
    #[getter]
    fn r#type(&self) -> &'static str {
        if self.0.input.is_some() {
            "custom"
        } else {
            "function"
        }
    }
    /// A custom tool call's raw input (None for function calls).
    #[getter]
    fn input(&self) -> Option<&str> {
        self.0.input.as_deref()
    }
    #[getter]
    fn name(&self) -> &str {
        &self.0.name
    }
    /// Arguments as JSON text.
    #[getter]
    fn arguments(&self) -> &str {
        &self.0.arguments
    }
    /// `{"id", "type": "function", "function": {"name", "arguments"}}`, or for a custom tool
    /// `{"id", "type": "custom", "custom": {"name", "input"}}`.
    fn to_openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if let Some(input) = &self.0.input {
            let custom = dict(
                py,
                &[("name", s(py, &self.0.name)), ("input", s(py, input))],
            )?;
            let kind = s(py, "custom");
            return dict(
                py,
                &[
                    ("id", s(py, &self.0.id)),
                    ("type", kind),
                    ("custom", custom.into_any()),
                ],
            );
        }
        let function = dict(
            py,
            &[
                ("name", s(py, &self.0.name)),
                ("arguments", s(py, &self.0.arguments)),
            ],
        )?;
        dict(
            py,
            &[
                ("id", s(py, &self.0.id)),
                ("type", s(py, "function")),
                ("function", function.into_any()),
            ],
        )
    }
    fn __repr__(&self) -> String {
        format!(
            "ToolCall(index={}, id={:?}, name={:?}, arguments={:?})",
            self.0.index, self.0.id, self.0.name, self.0.arguments
        )
    }
}

fn s<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyAny> {
    PyString::new(py, text).into_any()
}

/// Something wrong with the model's output, reported as data.
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
    /// For `schema_violation`: JSON pointer into the arguments (`""` is the root).
    #[getter]
    fn pointer(&self) -> Option<&str> {
        self.0.pointer.as_deref()
    }
    /// For `schema_violation`: the failing schema keyword.
    #[getter]
    fn keyword(&self) -> Option<&str> {
        self.0.keyword.as_deref()
    }
    fn __repr__(&self) -> String {
        format!(
            "CallIssue(index={:?}, kind={:?}, detail={:?}, raw={:?})",
            self.0.index,
            self.0.kind.as_str(),
            self.0.detail,
            self.0.raw
        )
    }
}

/// The parsed assistant message.
#[pyclass(name = "ParsedMessage", module = "toolwire._core", frozen)]
pub struct ParsedMessage(core::Message);

impl From<core::Message> for ParsedMessage {
    fn from(m: core::Message) -> Self {
        Self(m)
    }
}

#[pymethods]
impl ParsedMessage {
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
    /// True when parsing found no issue.
    #[getter]
    fn valid(&self) -> bool {
        self.0.is_valid()
    }
    /// The OpenAI assistant message dict.
    fn to_openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = dict(
            py,
            &[
                ("role", s(py, "assistant")),
                ("content", opt_str(py, self.0.content_or_none())),
            ],
        )?;
        if let Some(reasoning) = self.0.reasoning_or_none() {
            out.set_item("reasoning_content", reasoning)?;
        }
        if !self.0.tool_calls.is_empty() {
            let calls = PyList::empty(py);
            for call in &self.0.tool_calls {
                calls.append(ToolCall(call.clone()).to_openai(py)?)?;
            }
            out.set_item("tool_calls", calls)?;
        }
        Ok(out)
    }
    fn __repr__(&self) -> String {
        format!(
            "ParsedMessage(content={:?}, reasoning_content={:?}, tool_calls={}, issues={})",
            self.0.content_or_none(),
            self.0.reasoning_or_none(),
            self.0.tool_calls.len(),
            self.0.issues.len()
        )
    }
}

/// One entry of a streamed delta's `tool_calls`.
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
    /// A custom tool call's whole input (sent once, when the call completes).
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
        let out = PyDict::new(py);
        out.set_item("index", self.0.index)?;
        if let Some(input) = &self.0.input {
            out.set_item("id", &self.0.id)?;
            out.set_item("type", "custom")?;
            out.set_item(
                "custom",
                dict(
                    py,
                    &[
                        ("name", opt_str(py, self.0.name.as_deref())),
                        ("input", s(py, input)),
                    ],
                )?,
            )?;
            return Ok(out);
        }
        let function = PyDict::new(py);
        if let Some(name) = &self.0.name {
            function.set_item("name", name)?;
        }
        function.set_item("arguments", &self.0.arguments)?;
        if let Some(id) = &self.0.id {
            out.set_item("id", id)?;
            out.set_item("type", "function")?;
        }
        out.set_item("function", function)?;
        Ok(out)
    }
    fn __repr__(&self) -> String {
        format!(
            "ToolCallDelta(index={}, id={:?}, name={:?}, arguments={:?})",
            self.0.index, self.0.id, self.0.name, self.0.arguments
        )
    }
}

/// A streamed update: what `choices[0].delta` of an OpenAI chunk carries, plus the finish reason.
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
    #[getter]
    fn finish_reason(&self) -> Option<&str> {
        self.0.finish_reason.as_deref()
    }
    /// The `choices[0].delta` dict (without the finish reason, which belongs to the choice).
    fn to_openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        if let Some(reasoning) = &self.0.reasoning {
            out.set_item("reasoning_content", reasoning)?;
        }
        if let Some(content) = &self.0.content {
            out.set_item("content", content)?;
        }
        if !self.0.tool_calls.is_empty() {
            let calls = PyList::empty(py);
            for call in &self.0.tool_calls {
                calls.append(ToolCallDelta(call.clone()).to_openai(py)?)?;
            }
            out.set_item("tool_calls", calls)?;
        }
        Ok(out)
    }
    fn __repr__(&self) -> String {
        format!(
            "Delta(content={:?}, reasoning_content={:?}, tool_calls={}, finish_reason={:?})",
            self.0.content,
            self.0.reasoning,
            self.0.tool_calls.len(),
            self.0.finish_reason
        )
    }
}

/// Canonical names of every format.
#[pyfunction]
pub fn formats() -> Vec<&'static str> {
    registry::names()
}

/// The format description as a dict.
#[pyfunction]
pub fn format_info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let spec =
        registry::lookup(name).ok_or_else(|| to_py_err(Error::UnknownFormat(name.to_owned())))?;
    let markers = PyList::empty(py);
    for m in spec.markers {
        markers.append(dict(
            py,
            &[
                ("role", s(py, m.role)),
                ("text", s(py, m.text)),
                (
                    "special_token",
                    PyBool::new(py, m.special_token).to_owned().into_any(),
                ),
            ],
        )?)?;
    }
    let triggers = PyList::empty(py);
    for t in spec.triggers {
        triggers.append(dict(
            py,
            &[
                ("text", s(py, t.text)),
                (
                    "at_output_start",
                    PyBool::new(py, t.at_output_start).to_owned().into_any(),
                ),
                ("soft", PyBool::new(py, t.soft).to_owned().into_any()),
                ("confirm", opt_str(py, t.confirm)),
            ],
        )?)?;
    }
    let reasoning = match spec.reasoning {
        Some((start, end)) => dict(py, &[("start", s(py, start)), ("end", s(py, end))])?.into_any(),
        None => py.None().into_bound(py),
    };
    let template = match spec.template {
        Some(t) => dict(
            py,
            &[
                ("begin", s(py, t.begin)),
                ("style", s(py, t.style)),
                ("end", s(py, t.end)),
                ("separator", s(py, t.separator)),
            ],
        )?
        .into_any(),
        None => py.None().into_bound(py),
    };
    let pair = |p: Option<(&str, &str)>| -> PyResult<Bound<'py, PyAny>> {
        Ok(match p {
            Some((begin, end)) => {
                dict(py, &[("begin", s(py, begin)), ("end", s(py, end))])?.into_any()
            }
            None => py.None().into_bound(py),
        })
    };
    dict(
        py,
        &[
            ("name", s(py, spec.name)),
            ("aliases", str_list(py, spec.aliases)?.into_any()),
            ("families", str_list(py, spec.families)?.into_any()),
            ("description", s(py, spec.description)),
            ("markers", markers.into_any()),
            ("triggers", triggers.into_any()),
            ("name_encoding", s(py, spec.name_encoding)),
            ("argument_encoding", s(py, spec.argument_encoding)),
            ("call_separator", opt_str(py, spec.call_separator)),
            ("reasoning", reasoning),
            ("template", template),
            ("section", pair(spec.layout.section)?),
            ("content_block", pair(spec.layout.content_block)?),
            ("reasoning_block", pair(spec.layout.reasoning_block)?),
            (
                "content_after_calls",
                PyBool::new(py, spec.layout.content_after_calls)
                    .to_owned()
                    .into_any(),
            ),
            (
                "supports_structural_tag",
                PyBool::new(py, spec.template.is_some())
                    .to_owned()
                    .into_any(),
            ),
        ],
    )
}

fn render_call(item: &Bound<'_, PyAny>) -> PyResult<RenderCall> {
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

/// The model-native text for `tool_calls` (and optional content before them).
#[pyfunction]
#[pyo3(signature = (format, tool_calls, content=None))]
pub fn render(
    format: &str,
    tool_calls: &Bound<'_, PyAny>,
    content: Option<&str>,
) -> PyResult<String> {
    let spec = registry::lookup(format)
        .ok_or_else(|| to_py_err(Error::UnknownFormat(format.to_owned())))?;
    let calls = tool_calls
        .try_iter()?
        .map(|item| render_call(&item?))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((spec.render)(&calls, content))
}
