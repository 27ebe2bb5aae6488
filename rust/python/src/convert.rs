//! Python objects <-> JSON values, through the standard `json` module (tool lists and render
//! input are small and converted once per request, so simplicity wins over speed here).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;

use crate::ToolwireError;

pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let json = obj.py().import("json")?;
    let text: String = json.call_method1("dumps", (obj,))?.extract()?;
    serde_json::from_str(&text)
        .map_err(|e| ToolwireError::new_err(format!("not JSON-serialisable: {e}")))
}

pub fn dict<'py>(
    py: Python<'py>,
    items: &[(&str, Bound<'py, PyAny>)],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in items {
        d.set_item(k, v)?;
    }
    Ok(d)
}

pub fn opt_str<'py>(py: Python<'py>, s: Option<&str>) -> Bound<'py, PyAny> {
    match s {
        Some(s) => PyString::new(py, s).into_any(),
        None => py.None().into_bound(py),
    }
}
