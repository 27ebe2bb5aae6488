//! `ToolSet`: the request's tools compiled once, shared across requests with equal tools.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use pyo3::prelude::*;
use pyo3::types::PyDict;
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
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let tool = self
            .0
            .get(name)
            .ok_or_else(|| crate::ToolwireError::new_err(format!("no tool named {name:?}")))?;
        let value = match arguments.extract::<String>() {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                crate::ToolwireError::new_err(format!("arguments are not JSON: {e}"))
            })?,
            Err(_) => to_value(arguments)?,
        };
        let Some(validator) = &tool.validator else {
            return Ok(Vec::new());
        };
        if validator.is_valid(&value) {
            return Ok(Vec::new());
        }
        violations(py, validator, &value)
    }

    /// Validate many `(name, arguments_json)` pairs in one call (e.g. a batch of RL rollouts):
    /// one list of violations per pair, as `validate` returns them.
    fn validate_many<'py>(
        &self,
        py: Python<'py>,
        calls: Vec<(String, String)>,
    ) -> PyResult<Vec<Vec<Bound<'py, PyDict>>>> {
        calls
            .iter()
            .map(|(name, arguments)| {
                let tool = self.0.get(name).ok_or_else(|| {
                    crate::ToolwireError::new_err(format!("no tool named {name:?}"))
                })?;
                let Some(validator) = &tool.validator else {
                    return Ok(Vec::new());
                };
                let value: serde_json::Value = serde_json::from_str(arguments).map_err(|e| {
                    crate::ToolwireError::new_err(format!("arguments are not JSON: {e}"))
                })?;
                if validator.is_valid(&value) {
                    return Ok(Vec::new());
                }
                violations(py, validator, &value)
            })
            .collect()
    }

    fn __len__(&self) -> usize {
        self.0.tools().len()
    }

    fn __repr__(&self) -> String {
        format!("ToolSet({:?})", self.names())
    }
}

fn violations<'py>(
    py: Python<'py>,
    validator: &toolwire_core::schema::Validator,
    value: &serde_json::Value,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    validator
        .validate(value)
        .into_iter()
        .map(|v| {
            let d = PyDict::new(py);
            d.set_item("pointer", &v.pointer)?;
            d.set_item("keyword", &v.keyword)?;
            d.set_item("message", v.to_string())?;
            Ok(d)
        })
        .collect()
}
