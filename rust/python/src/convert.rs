//! Python objects <-> JSON values, through the standard `json` module (tool lists and render
//! input are small and converted once per request, so simplicity wins over speed here), and
//! arguments read with errors that name the argument in Python's terms: PyO3's own conversions
//! speak of its Rust types (`'bytes' object cannot be converted to 'PyString'`) and raise an
//! unnamed `OverflowError` for a negative count.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyInt, PyString};
use serde_json::Value;

use crate::ToolwireError;

pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let json = obj.py().import("json")?;
    let text: String = json.call_method1("dumps", (obj,))?.extract()?;
    serde_json::from_str(&text)
        .map_err(|e| ToolwireError::new_err(format!("not JSON-serialisable: {e}")))
}

/// An absent Python argument, or None, as JSON null.
pub fn value_or_null(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Value> {
    match obj {
        Some(obj) if !obj.is_none() => to_value(obj),
        _ => Ok(Value::Null),
    }
}

/// A JSON value as a Python object (through `json`, as `to_value` goes the other way).
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?
        .call_method1("loads", (value.to_string(),))
}

/// A `str` argument. Anything else is a `TypeError` naming the type it got, which PyO3 prefixes
/// with the argument's name (`argument 'text': expected str, got bytes`) instead of its own
/// wording (`'bytes' object cannot be converted to 'PyString'`).
pub struct Text<'py>(Bound<'py, PyString>);

impl<'py> FromPyObject<'py> for Text<'py> {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let text = obj.downcast::<PyString>();
        Ok(Text(text.map_err(|_| wrong_type("", obj, "str"))?.clone()))
    }
}

impl Text<'_> {
    pub fn to_str(&self) -> PyResult<&str> {
        self.0.to_str()
    }
}

/// `TypeError: [argument 'param': ]expected ..., got <type of obj>`.
pub fn wrong_type(param: &str, obj: &Bound<'_, PyAny>, expected: &str) -> PyErr {
    let prefix = if param.is_empty() {
        String::new()
    } else {
        format!("argument '{param}': ")
    };
    let got = obj
        .get_type()
        .name()
        .map_or_else(|_| "an unknown type".to_owned(), |name| name.to_string());
    PyTypeError::new_err(format!("{prefix}expected {expected}, got {got}"))
}

/// Token ids from any iterable of ints (not `str` or `bytes`), with errors that name the argument
/// and the bad entry (`argument 'token_ids[3]': -1 must not be negative`).
pub fn token_ids(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<Vec<u32>> {
    let text = obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>();
    let items = obj
        .try_iter()
        .ok()
        .filter(|_| !text)
        .ok_or_else(|| wrong_type(param, obj, "a sequence of int token ids"))?;
    let mut ids = Vec::with_capacity(obj.len().unwrap_or(0));
    for (position, item) in items.enumerate() {
        let item = item?;
        // The common case first: an int that fits. The argument's name (one string per id) is
        // only written for an error.
        let fits = item
            .is_exact_instance_of::<PyInt>()
            .then(|| item.extract::<u32>());
        match fits {
            Some(Ok(id)) => ids.push(id),
            _ => ids.push(unsigned(&item, &format!("{param}[{position}]"))?),
        }
    }
    Ok(ids)
}

/// A `bool` argument (`True`/`False` only), with the wording of [`Text`].
pub struct Flag(pub bool);

impl<'py> FromPyObject<'py> for Flag {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let flag = obj.downcast::<PyBool>();
        Ok(Flag(
            flag.map_err(|_| wrong_type("", obj, "bool"))?.is_true(),
        ))
    }
}

/// An int argument that fits `T`, an unsigned Rust integer: another type is a `TypeError`, a
/// negative or too large int a `ValueError`, each naming the argument (PyO3's own conversion
/// gives an unnamed `OverflowError`).
pub fn unsigned<'py, T: FromPyObject<'py>>(obj: &Bound<'py, PyAny>, param: &str) -> PyResult<T> {
    if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return Err(wrong_type(param, obj, "an int"));
    }
    obj.extract::<T>().map_err(|_| {
        let why = if obj.lt(0).unwrap_or(false) {
            "must not be negative"
        } else {
            "is too large"
        };
        ToolwireError::new_err(format!("argument '{param}': {obj} {why}"))
    })
}

/// An optional positive int argument (`None` stays `None`).
pub fn positive(obj: Option<&Bound<'_, PyAny>>, param: &str) -> PyResult<Option<usize>> {
    let Some(obj) = obj.filter(|obj| !obj.is_none()) else {
        return Ok(None);
    };
    match unsigned::<usize>(obj, param) {
        Ok(count) if count > 0 => Ok(Some(count)),
        Err(err) if err.is_instance_of::<PyTypeError>(obj.py()) => Err(err),
        _ => Err(ToolwireError::new_err(format!(
            "argument '{param}': must be a positive int or None, got {obj}"
        ))),
    }
}

/// Python's `repr` of an optional string, for `__repr__`s that read like Python.
pub fn repr(py: Python<'_>, text: Option<&str>) -> String {
    match text {
        Some(text) => PyString::new(py, text)
            .repr()
            .map_or_else(|_| format!("{text:?}"), |r| r.to_string()),
        None => "None".to_owned(),
    }
}
