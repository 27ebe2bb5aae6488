//! `detect_template`: format detection over a chat template's text, as a dict.

use pyo3::prelude::*;
use toolwire_core::detect::{detect, Source, Vocabulary};

use crate::convert::to_py;
use crate::ToolwireError;

/// The format a chat template writes, decided over the format specs; ``toolwire.detect_format``
/// reads tokenizers, configs and paths and calls this.
///
/// Arguments:
///     template: the chat template's source.
///     generation_prompt: what it renders for one user message with ``add_generation_prompt``
///         (says whether the prompt opens reasoning); None: read from the template's text.
///     added_tokens: the vocabulary's added tokens (None: no vocabulary, markers are read from
///         the template alone and ``special_markers`` from the spec).
///     special_tokens: those of them that are special (``skip_special_tokens`` strips them).
///
/// Returns:
///     A dict: ``status`` (``confident``, ``ambiguous`` or ``unknown``), ``format`` (None unless
///     confident), ``reasoning``, ``thinking_style``, ``special_markers``,
///     ``vocabulary_checked``, and ``candidates`` (best first: ``format``, ``coverage``,
///     ``found``, ``missing``).
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
    let source = Source {
        template,
        generation_prompt,
        vocabulary,
    };
    let detection = py.allow_threads(|| detect(&source));
    let value = serde_json::to_value(&detection)
        .map_err(|e| ToolwireError::new_err(format!("detection result: {e}")))?;
    to_py(py, &value)
}
