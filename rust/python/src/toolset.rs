//! `ToolSet`: the request's tools compiled once, shared across requests with equal tools.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use toolwire_core::schema::{NotJson, Validator, Violation};
use toolwire_core::tools::{ToolKind, ToolSet as CoreToolSet};

use crate::convert::to_value;
use crate::to_py_err;

/// Compiled tool sets by content digest; entries die with their last user.
fn cache() -> &'static Mutex<HashMap<u64, Weak<CoreToolSet>>> {
    static CACHE: OnceLock<Mutex<HashMap<u64, Weak<CoreToolSet>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Compile `tools` (a list of OpenAI tool dicts), reusing an equal set compiled before.
pub fn compile(tools: &Bound<'_, PyAny>) -> PyResult<Arc<CoreToolSet>> {
    if let Ok(set) = tools.downcast::<ToolSet>() {
        return Ok(set.get().0.clone());
    }
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

/// The request's tools compiled once: names, kinds, strict flags, schema validators.
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

    /// `{name: "function" | "custom"}`.
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

    /// `{name: strict}`.
    #[getter]
    fn strict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for t in self.0.tools() {
            out.set_item(&t.name, t.strict)?;
        }
        Ok(out)
    }

    /// `{name: [keyword, ...]}` for schema keywords that are not checked (and, under the key
    /// `"<error>"`, a schema that could not be compiled at all).
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

    /// Check arguments (a dict or JSON text) against a tool's schema: a list of
    /// `{"pointer", "keyword", "message"}` (empty when valid).
    fn validate<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        arguments: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let validator = self.validator(name)?;
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

    /// Whether arguments (a dict or JSON text) satisfy a tool's schema: the question a server asks
    /// before it executes a call, answered without building any violation report. Text that is
    /// not JSON raises, as in `validate`.
    fn is_valid(&self, name: &str, arguments: &Bound<'_, PyAny>) -> PyResult<bool> {
        let validator = self.validator(name)?;
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

    /// Validate many `(name, arguments_json)` pairs in one call (e.g. a batch of RL rollouts):
    /// one list of violations per pair, as `validate` returns them.
    fn validate_many<'py>(
        &self,
        py: Python<'py>,
        calls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let results = PyList::empty(py);
        for call in calls.try_iter()? {
            let call = call?;
            let (name, arguments): (Bound<'py, PyString>, Bound<'py, PyString>) = call.extract()?;
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

    fn __repr__(&self) -> String {
        format!("ToolSet({:?})", self.names())
    }
}

impl ToolSet {
    fn validator(&self, name: &str) -> PyResult<Option<&Validator>> {
        let tool = self
            .0
            .get(name)
            .ok_or_else(|| crate::ToolwireError::new_err(format!("no tool named {name:?}")))?;
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
