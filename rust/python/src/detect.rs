//! `detect_template`: format detection over a chat template's text, as a dict.

use pyo3::prelude::*;
use toolwire_core::detect::{detect, Source, Vocabulary};

use crate::convert::to_py;
use crate::ToolwireError;

/// The format a chat template writes (see ``toolwire.detect_format``, which reads tokenizers).
#[pyfunction]
#[pyo3(signature = (template, *, generation_prompt=None, added_tokens=None, special_tokens=None))]
pub fn detect_template<'py>(
    py: Python<'py>,
    template: &str,
    generation_prompt: Option<&str>,
    added_tokens: Option<Vec<String>>,
    special_tokens: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let vocabulary = added_tokens.map(|added| Vocabulary {
        added,
        special: special_tokens.unwrap_or_default(),
    });
    let source = Source { template, generation_prompt, vocabulary };
    let detection = py.allow_threads(|| detect(&source));
    let value = serde_json::to_value(&detection)
        .map_err(|e| ToolwireError::new_err(format!("detection result: {e}")))?;
    to_py(py, &value)
}
