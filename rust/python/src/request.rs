//! `read_request`: the request's rules (`toolwire_core::request`) for Python's grammar, so that
//! `grammar.plan` accepts and refuses exactly what `ToolParser` does.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;
use toolwire_core::formats as registry;
use toolwire_core::request::{read_tools, ReasoningMode, SchemaMode, ToolChoice, ToolDecl};
use toolwire_core::Error;

use crate::convert::{to_py, value_or_null};
use crate::to_py_err;

/// One request read by the rules both the parser and the grammar follow.
#[pyclass(name = "Request", module = "toolwire._core", frozen)]
pub struct Request {
    tools: Vec<ToolDecl>,
    choice: ToolChoice,
    reasoning: ReasoningMode,
    delimiters: Option<(&'static str, &'static str)>,
    schema: SchemaMode,
}

#[pymethods]
impl Request {
    /// `[{"name", "kind", "strict", "description", "parameters"}]` in declared order
    /// (`parameters` None when absent).
    #[getter]
    fn tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for tool in &self.tools {
            let entry = PyDict::new(py);
            entry.set_item("name", &tool.name)?;
            entry.set_item("kind", tool.kind.as_str())?;
            entry.set_item("strict", tool.strict)?;
            entry.set_item("description", tool.description.as_deref())?;
            match &tool.parameters {
                Some(schema) => entry.set_item("parameters", to_py(py, schema)?)?,
                None => entry.set_item("parameters", py.None())?,
            }
            out.append(entry)?;
        }
        Ok(out)
    }

    /// `"none"`, `"auto"`, `"required"` or `"named"` (`allowed_tools` reads as its mode).
    #[getter]
    fn mode(&self) -> &'static str {
        self.choice.mode()
    }

    /// Names of the tools a call may name, in declared order (empty under `none`).
    #[getter]
    fn allowed(&self) -> Vec<String> {
        self.tools
            .iter()
            .filter(|t| self.choice.allows(&t.name))
            .map(|t| t.name.clone())
            .collect()
    }

    /// The reasoning mode's canonical name: `"off"`, `"think"`, `"native"`, `"optional"`,
    /// `"closing_only"`, or None when the request did not say.
    #[getter]
    fn reasoning(&self) -> Option<&'static str> {
        self.reasoning.name()
    }

    /// `(open, close)` of the reasoning block the parser reads for this format (None: no block).
    #[getter]
    fn reasoning_delimiters(&self) -> Option<(&'static str, &'static str)> {
        self.delimiters
    }

    /// `"auto"` or `"strict"`.
    #[getter]
    fn schema(&self) -> &'static str {
        self.schema.name()
    }

    fn __repr__(&self) -> String {
        format!(
            "Request(mode={:?}, allowed={:?}, reasoning={:?}, schema={:?})",
            self.mode(),
            self.allowed(),
            self.reasoning(),
            self.schema()
        )
    }
}

/// Read a request's tools, ``tool_choice``, reasoning and grammar schema mode for ``format``
/// by the rules ``ToolParser`` and ``toolwire.grammar.plan`` both follow.
///
/// * tools: names non-empty and unique; ``type`` ``function`` or ``custom`` (custom tools with a
///   text format only); ``strict`` true, false or null.
/// * tool_choice: unset means ``auto`` with tools and ``none`` without; ``"required"``, a named
///   tool (``{"type": "function" | "custom", ...}``) and ``{"type": "allowed_tools",
///   "allowed_tools": {"mode": "auto" | "required", "tools": [...]}}`` must refer to declared
///   tools. ``"any"`` is refused (say ``"required"``), as vLLM and SGLang refuse it.
/// * reasoning: None (not said), False / ``"none"`` / ``"off"`` / ``"disabled"`` (off),
///   ``"think"`` / ``"paired"`` (a ``<think>`` block), True / ``"native"`` (the format's block;
///   required on per-turn formats), ``"auto"`` / ``"optional"`` (the format's block, optional
///   everywhere), ``"closing_only"`` / ``"enabled"`` (the prompt opened the block).
/// * schema: ``"auto"`` (None) or ``"strict"``.
///
/// Raises:
///     ToolwireError: what the request breaks, in that order (format first).
#[pyfunction]
#[pyo3(signature = (format, tools=None, tool_choice=None, *, reasoning=None, schema=None))]
pub fn read_request(
    format: &str,
    tools: Option<&Bound<'_, PyAny>>,
    tool_choice: Option<&Bound<'_, PyAny>>,
    reasoning: Option<&Bound<'_, PyAny>>,
    schema: Option<&Bound<'_, PyAny>>,
) -> PyResult<Request> {
    let spec =
        registry::lookup(format).ok_or_else(|| to_py_err(Error::UnknownFormat(format.into())))?;
    let tools = read_tools(&value_or_null(tools)?).map_err(to_py_err)?;
    let choice =
        ToolChoice::read(&value_or_null(tool_choice)?, tools.as_slice()).map_err(to_py_err)?;
    let reasoning = ReasoningMode::from_json(&value_or_null(reasoning)?).map_err(to_py_err)?;
    let schema = match value_or_null(schema)? {
        Value::Null => SchemaMode::Auto,
        value => SchemaMode::from_json(&value).map_err(to_py_err)?,
    };
    Ok(Request {
        delimiters: reasoning.delimiters(spec.syntax.reasoning),
        tools,
        choice,
        reasoning,
        schema,
    })
}
