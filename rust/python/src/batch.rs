//! `parse_batch`: many completions through one `ToolParser`, the GIL released and the work split
//! over threads. Scoring an RL rollout batch (parse, validate, count issues) is embarrassingly
//! parallel and dominated by the parse itself, so it should not hold the interpreter.

use std::num::NonZeroUsize;
use std::thread;

use pyo3::prelude::*;
use pyo3::types::PyString;
use toolwire_core::message::Message;
use toolwire_core::stream::StreamParser;
use toolwire_core::Error;

use crate::parser::{ParsedMessage, ToolParser};
use crate::{to_py_err, ToolwireError};

enum Completion {
    Text(String),
    Ids(Vec<u32>),
}

fn extract(item: &Bound<'_, PyAny>) -> PyResult<Completion> {
    if let Ok(text) = item.downcast::<PyString>() {
        return Ok(Completion::Text(text.to_str()?.to_owned()));
    }
    item.extract::<Vec<u32>>()
        .map(Completion::Ids)
        .map_err(|_| {
            ToolwireError::new_err("each completion must be a str or a sequence of token ids")
        })
}

fn parse_one(
    parser: &ToolParser,
    completion: &Completion,
    finish: Option<&str>,
) -> Result<Message, Error> {
    let mut stream = StreamParser::new(parser.config.clone());
    stream.discard_deltas();
    match completion {
        Completion::Text(text) => stream.feed(text)?,
        Completion::Ids(ids) => {
            let vocab = parser.vocab.as_ref().ok_or(Error::NoVocab)?;
            stream.feed_tokens(vocab, ids)?
        }
    };
    stream.finish(finish)?;
    Ok(stream.into_message())
}

/// Parse every completion (a str, or token ids for a parser built with a vocab); returns one
/// `ParsedMessage` per completion, in order. Call ids are random (an `id_factory` needs the GIL
/// and is refused). `threads`: how many threads share the work (default: the machine's cores).
#[pyfunction]
#[pyo3(signature = (parser, completions, *, threads=None, finish_reason=None))]
pub fn parse_batch(
    py: Python<'_>,
    parser: &Bound<'_, ToolParser>,
    completions: &Bound<'_, PyAny>,
    threads: Option<usize>,
    finish_reason: Option<&str>,
) -> PyResult<Vec<ParsedMessage>> {
    let parser = parser.get();
    if parser.id_factory.is_some() {
        return Err(ToolwireError::new_err(
            "parse_batch runs without the GIL: build the parser without id_factory",
        ));
    }
    if threads == Some(0) {
        return Err(ToolwireError::new_err("threads must be positive or None"));
    }
    let items = completions
        .try_iter()?
        .map(|item| extract(&item?))
        .collect::<PyResult<Vec<_>>>()?;
    let threads = threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, NonZeroUsize::get))
        .clamp(1, items.len().max(1));
    let parsed: Vec<Result<Message, Error>> = py.allow_threads(|| {
        if threads == 1 {
            return items
                .iter()
                .map(|c| parse_one(parser, c, finish_reason))
                .collect();
        }
        let chunk = items.len().div_ceil(threads);
        thread::scope(|scope| {
            let workers: Vec<_> = items
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|c| parse_one(parser, c, finish_reason))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| {
                    w.join().unwrap_or_else(|_| {
                        vec![Err(Error::InvalidArgument(
                            "a batch thread panicked".into(),
                        ))]
                    })
                })
                .collect()
        })
    });
    parsed
        .into_iter()
        .map(|r| r.map(ParsedMessage::from).map_err(to_py_err))
        .collect()
}
