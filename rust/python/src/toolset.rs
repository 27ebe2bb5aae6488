//! `ToolSet`: the request's tools compiled once, shared across requests with equal tools.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use toolwire_core::schema::{NotJson, Validator, Violation};
use toolwire_core::tools::{ToolKind, ToolSet as CoreToolSet};

use crate::convert::{to_value, wrong_type, Text};
use crate::{to_py_err, SchemaWarning};

/// Compiled tool sets by content digest; entries die with their last user.
fn cache() -> &'static Mutex<HashMap<u64, Weak<CoreToolSet>>> {
    static CACHE: OnceLock<Mutex<HashMap<u64, Weak<CoreToolSet>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Compile ``tools`` (a list of OpenAI tool dicts), reusing an equal set compiled before. A
/// non-strict tool whose schema is invalid gets a ``SchemaWarning`` (each build, so a request that
/// reuses a cached set is warned too); its calls then carry ``unchecked_arguments`` issues.
pub fn compile(tools: &Bound<'_, PyAny>) -> PyResult<Arc<CoreToolSet>> {
    if let Ok(set) = tools.downcast::<ToolSet>() {
        return Ok(set.get().0.clone());
    }
    let compiled = compile_value(tools)?;
    warn_unchecked(tools.py(), &compiled)?;
    Ok(compiled)
}

fn warn_unchecked(py: Python<'_>, set: &CoreToolSet) -> PyResult<()> {
    for tool in set.tools() {
        if let Some(error) = &tool.schema_error {
            let message = format!(
                "the parameters schema of tool {:?} is invalid, so its arguments will not be \
                 checked (calls to it get an unchecked_arguments issue): {error}",
                tool.name
            );
            let message = CString::new(message.replace('\0', "\\0"))?;
            PyErr::warn(py, &py.get_type::<SchemaWarning>(), &message, 1)?;
        }
    }
    Ok(())
}

fn compile_value(tools: &Bound<'_, PyAny>) -> PyResult<Arc<CoreToolSet>> {
    let value = to_value(tools)?;
    let compiled = CoreToolSet::from_json(&value).map_err(to_py_err)?;
    let mut cache = cache()
        .lock()
        .map_err(|_| crate::ToolwireError::new_err("tool cache poisoned"))?;
    if let Some(shared) = cache.get(&compiled.digest()).and_then(Weak::upgrade) {
        return Ok(shared);
    }
    if cache.len() > 4096 {
        cache.retain(|_, weak| weak.strong_count() > 0);
    }
    let shared = Arc::new(compiled);
    cache.insert(shared.digest(), Arc::downgrade(&shared));
    Ok(shared)
}

/// The request's tools compiled once (names, kinds, strict flags, schema validators) and
/// shared by parsers; equal tool lists share one compiled set (content-hashed).
///
/// A schema is invalid when it is not a JSON Schema (``"parameters": "nope"``), names an unknown
/// type, holds a ``pattern`` that is not a regular expression, a ``$ref`` that resolves to
/// nothing, or a keyword with a value of the wrong kind. Keywords toolwire does not implement
/// are not errors: see :meth:`unsupported_keywords`.
///
/// Raises:
///     ToolwireError: a custom tool with a grammar format, or a ``strict`` tool whose schema
///         is invalid (the message names the tool and the problem).
///
/// Warns:
///     SchemaWarning: a non-strict tool whose schema is invalid; its calls are then returned
///         with an ``unchecked_arguments`` issue, and :meth:`validate` / :meth:`is_valid` for
///         it raise.
#[pyclass(name = "ToolSet", module = "toolwire._core", frozen)]
pub struct ToolSet(pub Arc<CoreToolSet>);

#[pymethods]
impl ToolSet {
    #[new]
    fn new(tools: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self(compile(tools)?))
    }

    #[getter]
    fn names(&self) -> Vec<String> {
        self.0.tools().iter().map(|t| t.name.clone()).collect()
    }

    /// Hex digest of the tool list; equal lists share it (and one compiled set).
    #[getter]
    fn digest(&self) -> String {
        format!("{:016x}", self.0.digest())
    }

    /// ``{name: "function" | "custom"}``.
    #[getter]
    fn kinds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for t in self.0.tools() {
            out.set_item(
                &t.name,
                if t.kind == ToolKind::Custom {
                    "custom"
                } else {
                    "function"
                },
            )?;
        }
        Ok(out)
    }

    /// ``{name: strict}``.
    #[getter]
    fn strict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for t in self.0.tools() {
            out.set_item(&t.name, t.strict)?;
        }
        Ok(out)
    }

    /// Schema keywords that are not checked, per tool (only tools that have some); an invalid
    /// schema is listed as ``"<error> ..."`` with the problem.
    fn unsupported_keywords<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for t in self.0.tools() {
            let mut list: Vec<String> = t.unsupported_keywords().to_vec();
            if let Some(err) = &t.schema_error {
                list.push(format!("<error> {err}"));
            }
            if !list.is_empty() {
                out.set_item(&t.name, list)?;
            }
        }
        Ok(out)
    }

    /// Schema violations of ``arguments`` for tool ``name``: ``pointer``, ``keyword``, ``message``.
    fn validate<'py>(
        &self,
        py: Python<'py>,
        name: Text<'_>,
        arguments: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let validator = self.validator(name.to_str()?)?;
        match arguments.downcast::<PyString>() {
            Ok(text) => match validator {
                Some(validator) => check_text(py, validator, text.to_str()?),
                None => {
                    parse_error(text.to_str()?)?;
                    Ok(PyList::empty(py))
                }
            },
            Err(_) => {
                let value = to_value(arguments)?;
                let found = validator.map_or_else(Vec::new, |validator| validator.validate(&value));
                violation_list(py, found)
            }
        }
    }

    /// Whether ``arguments`` satisfy tool ``name``'s schema (no report built); non-JSON text raises.
    fn is_valid(&self, name: Text<'_>, arguments: &Bound<'_, PyAny>) -> PyResult<bool> {
        let validator = self.validator(name.to_str()?)?;
        match arguments.downcast::<PyString>() {
            Ok(text) => {
                let text = text.to_str()?;
                let verdict = match validator {
                    Some(validator) => validator.is_valid_json(text).ok(),
                    None => toolwire_core::json::is_valid(text).then_some(true),
                };
                match verdict {
                    Some(valid) => Ok(valid),
                    None => parse_error(text).map(|_| false),
                }
            }
            Err(_) => {
                let value = to_value(arguments)?;
                Ok(validator.is_none_or(|validator| validator.is_valid(&value)))
            }
        }
    }

    /// ``validate`` for many ``(name, arguments_json)`` pairs in one call.
    fn validate_many<'py>(
        &self,
        py: Python<'py>,
        calls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let results = PyList::empty(py);
        let pairs = calls.try_iter().map_err(|_| {
            wrong_type("calls", calls, "a sequence of (name, arguments_json) pairs")
        })?;
        for (position, call) in pairs.enumerate() {
            let call = call?;
            let (name, arguments): (Bound<'py, PyString>, Bound<'py, PyString>) =
                call.extract().map_err(|_| {
                    let param = format!("calls[{position}]");
                    wrong_type(&param, &call, "a (name, arguments_json) pair of str")
                })?;
            let text = arguments.to_str()?;
            let found = match self.validator(name.to_str()?)? {
                Some(validator) => check_text(py, validator, text)?,
                None => PyList::empty(py),
            };
            results.append(found)?;
        }
        Ok(results)
    }

    fn __len__(&self) -> usize {
        self.0.tools().len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ToolSet({})",
            PyList::new(py, self.names())?.repr()?
        ))
    }
}

impl ToolSet {
    /// The tool's validator (``None`` for a custom tool); a tool whose schema is invalid raises, as
    /// checking against it cannot be done.
    fn validator(&self, name: &str) -> PyResult<Option<&Validator>> {
        let tool = self
            .0
            .get(name)
            .ok_or_else(|| crate::ToolwireError::new_err(format!("no tool named {name:?}")))?;
        if let Some(error) = &tool.schema_error {
            return Err(crate::ToolwireError::new_err(format!(
                "cannot check arguments of tool {name:?}: its parameters schema is invalid: {error}"
            )));
        }
        Ok(tool.validator.as_ref())
    }
}

/// Violations of JSON text; text that is not JSON raises with serde_json's reason.
fn check_text<'py>(
    py: Python<'py>,
    validator: &Validator,
    text: &str,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    match validator.report_json(text) {
        Ok(report) => {
            for found in report.iter() {
                let entry = PyDict::new(py);
                entry.set_item(intern!(py, "pointer"), found.pointer)?;
                entry.set_item(intern!(py, "keyword"), found.keyword)?;
                entry.set_item(intern!(py, "message"), found.display)?;
                list.append(entry)?;
            }
            Ok(list)
        }
        Err(NotJson) => {
            let value = parse_error(text)?;
            violation_list(py, validator.validate(&value))
        }
    }
}

/// serde_json's verdict on text the validator's own parser refused (they agree, so this raises).
#[cold]
fn parse_error(text: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| crate::ToolwireError::new_err(format!("arguments are not JSON: {e}")))
}

fn violation_list(py: Python<'_>, found: Vec<Violation>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for violation in found {
        let entry = PyDict::new(py);
        entry.set_item(intern!(py, "pointer"), violation.pointer.as_str())?;
        entry.set_item(intern!(py, "keyword"), violation.keyword.as_str())?;
        entry.set_item(intern!(py, "message"), violation.to_string())?;
        list.append(entry)?;
    }
    Ok(list)
}
