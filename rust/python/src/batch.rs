//! `parse_batch`: many completions through one `ToolParser`, the GIL released and the work split
//! over threads. Scoring an RL rollout batch (parse, validate, count issues) is embarrassingly
//! parallel and dominated by the parse itself, so it should not hold the interpreter.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::thread;

use pyo3::prelude::*;
use pyo3::types::PyString;
use toolwire_core::message::{IssueKind, Message};
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

/// The parse of every completion, in order, on `threads` threads (default: the machine's cores)
/// with the GIL released; `keep` turns each message into what the caller returns.
fn parse_all<T: Send>(
    py: Python<'_>,
    parser: &Bound<'_, ToolParser>,
    completions: &Bound<'_, PyAny>,
    threads: Option<usize>,
    finish_reason: Option<&str>,
    keep: fn(Message) -> T,
) -> PyResult<Vec<T>> {
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
    let run = |part: &[Completion]| -> Vec<Result<T, Error>> {
        part.iter()
            .map(|c| parse_one(parser, c, finish_reason).map(keep))
            .collect()
    };
    let parsed: Vec<Result<T, Error>> = py.allow_threads(|| {
        if threads == 1 {
            return run(&items);
        }
        let chunk = items.len().div_ceil(threads);
        thread::scope(|scope| {
            let workers: Vec<_> = items
                .chunks(chunk)
                .map(|part| scope.spawn(move || run(part)))
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
    parsed.into_iter().map(|r| r.map_err(to_py_err)).collect()
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
    parse_all(
        py,
        parser,
        completions,
        threads,
        finish_reason,
        ParsedMessage::from,
    )
}

/// What a reward reads of one message: its call count and its issue kinds.
struct Counted {
    calls: u32,
    kinds: Vec<IssueKind>,
}

fn counted(message: Message) -> Counted {
    Counted {
        calls: message.tool_calls.len() as u32,
        kinds: message.issues.iter().map(|i| i.kind).collect(),
    }
}

/// `parse_batch` as columns, with no Python object per message: `(call_counts, issue_counts,
/// issue_kinds)`, where `issue_kinds` maps each issue kind found in the batch to its count per
/// completion. The parse is the same; only the messages are not handed back.
#[pyfunction]
#[pyo3(signature = (parser, completions, *, threads=None, finish_reason=None))]
#[allow(clippy::type_complexity)]
pub fn parse_batch_counts(
    py: Python<'_>,
    parser: &Bound<'_, ToolParser>,
    completions: &Bound<'_, PyAny>,
    threads: Option<usize>,
    finish_reason: Option<&str>,
) -> PyResult<(Vec<u32>, Vec<u32>, BTreeMap<&'static str, Vec<u32>>)> {
    let counted = parse_all(py, parser, completions, threads, finish_reason, counted)?;
    let mut kinds: BTreeMap<&'static str, Vec<u32>> = BTreeMap::new();
    for (k, c) in counted.iter().enumerate() {
        for kind in &c.kinds {
            kinds
                .entry(kind.as_str())
                .or_insert_with(|| vec![0; counted.len()])[k] += 1;
        }
    }
    let calls = counted.iter().map(|c| c.calls).collect();
    let issues = counted.iter().map(|c| c.kinds.len() as u32).collect();
    Ok((calls, issues, kinds))
}
