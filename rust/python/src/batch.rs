//! `parse_batch`: many completions through one `ToolParser`, the GIL released and the work split
//! over threads. Scoring an RL rollout batch (parse, validate, count issues) is embarrassingly
//! parallel and dominated by the parse itself, so it should not hold the interpreter.
//!
//! What runs with the GIL held runs on one thread whatever `threads` says, so it is kept to
//! reading the inputs (texts are borrowed from their Python strings, not copied; token ids go
//! into one flat vector) and building the result. Each thread parses with one stream, reset
//! between completions, so the stream's set-up is paid once per thread, not per completion.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::thread;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;
use toolwire_core::ids::{IdSource, RandomIds};
use toolwire_core::message::IssueKind;
use toolwire_core::stream::StreamParser;
use toolwire_core::Error;

use crate::parser::{ParsedMessage, ToolParser};
use crate::{to_py_err, ToolwireError};

enum Completion {
    Text(PyBackedStr),
    /// A range of [`Batch::ids`].
    Ids(Range<usize>),
}

/// The completions as read under the GIL.
struct Batch {
    items: Vec<Completion>,
    ids: Vec<u32>,
}

impl Batch {
    /// `strip_ids`: a last id among them is dropped (a stop id the format does not list).
    fn read(completions: &Bound<'_, PyAny>, strip_ids: &[u32]) -> PyResult<Self> {
        let mut batch = Batch {
            items: Vec::with_capacity(completions.len().unwrap_or(0)),
            ids: Vec::new(),
        };
        for item in completions.try_iter()? {
            let completion = match item?.downcast_into::<PyString>() {
                Ok(text) => Completion::Text(PyBackedStr::try_from(text)?),
                Err(other) => Completion::Ids(batch.read_ids(&other.into_inner(), strip_ids)?),
            };
            batch.items.push(completion);
        }
        Ok(batch)
    }

    fn read_ids(&mut self, item: &Bound<'_, PyAny>, strip_ids: &[u32]) -> PyResult<Range<usize>> {
        let not_ids =
            || ToolwireError::new_err("each completion must be a str or a sequence of token ids");
        let start = self.ids.len();
        for id in item.try_iter().map_err(|_| not_ids())? {
            self.ids.push(id?.extract::<u32>().map_err(|_| not_ids())?);
        }
        if self.ids.len() > start && self.ids.last().is_some_and(|id| strip_ids.contains(id)) {
            self.ids.pop();
        }
        Ok(start..self.ids.len())
    }
}

/// One thread's streams (one for texts, one for ids), built on first use and reset between
/// completions.
struct Worker<'a> {
    parser: &'a ToolParser,
    ids: fn() -> Box<dyn IdSource>,
    text: Option<StreamParser>,
    tokens: Option<StreamParser>,
}

impl<'a> Worker<'a> {
    fn new(parser: &'a ToolParser, ids: fn() -> Box<dyn IdSource>) -> Self {
        Self {
            parser,
            ids,
            text: None,
            tokens: None,
        }
    }

    /// The stream, finished, after parsing `completion`.
    fn parse(
        &mut self,
        completion: &Completion,
        batch: &Batch,
        finish: Option<&str>,
    ) -> Result<&mut StreamParser, Error> {
        let slot = match completion {
            Completion::Text(_) => &mut self.text,
            Completion::Ids(_) => &mut self.tokens,
        };
        if let Some(stream) = slot {
            stream.reset();
        }
        let stream = slot.get_or_insert_with(|| {
            let mut stream = StreamParser::with_ids(self.parser.config.clone(), (self.ids)());
            stream.discard_deltas();
            stream
        });
        match completion {
            Completion::Text(text) => stream.feed(text)?,
            Completion::Ids(range) => {
                let vocab = self.parser.vocab.as_ref().ok_or(Error::NoVocab)?;
                stream.feed_tokens(vocab, &batch.ids[range.clone()])?
            }
        };
        stream.finish(finish)?;
        Ok(stream)
    }
}

/// Call ids for counts, which never read them: none is minted.
struct NoIds;

impl IdSource for NoIds {
    fn next_id(&mut self, _index: usize, _name: &str) -> String {
        String::new()
    }
}

/// The parse of every completion, in order, on `threads` threads (default: the machine's cores)
/// with the GIL released; `keep` reads what the caller returns off each finished stream.
#[allow(clippy::too_many_arguments)]
fn parse_all<T: Send>(
    py: Python<'_>,
    parser: &Bound<'_, ToolParser>,
    completions: &Bound<'_, PyAny>,
    threads: Option<usize>,
    finish_reason: Option<&str>,
    strip_ids: &[u32],
    ids: fn() -> Box<dyn IdSource>,
    keep: fn(&mut StreamParser) -> T,
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
    let batch = Batch::read(completions, strip_ids)?;
    let threads = threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, NonZeroUsize::get))
        .clamp(1, batch.items.len().max(1));
    let run = |part: &[Completion]| -> Result<Vec<T>, Error> {
        let mut worker = Worker::new(parser, ids);
        part.iter()
            .map(|c| worker.parse(c, &batch, finish_reason).map(keep))
            .collect()
    };
    let parsed: Result<Vec<T>, Error> = py.allow_threads(|| {
        if threads == 1 {
            return run(&batch.items);
        }
        let chunk = batch.items.len().div_ceil(threads);
        thread::scope(|scope| {
            let workers: Vec<_> = batch
                .items
                .chunks(chunk)
                .map(|part| scope.spawn(move || run(part)))
                .collect();
            let mut all = Vec::with_capacity(batch.items.len());
            for worker in workers {
                let part = worker.join().unwrap_or_else(|_| {
                    Err(Error::InvalidArgument("a batch thread panicked".into()))
                });
                all.extend(part?);
            }
            Ok(all)
        })
    });
    parsed.map_err(to_py_err)
}

/// Parse every completion (a str, or token ids for a parser built with a vocab); returns
/// `(messages, call_counts, issue_counts)`, one of each per completion, in order. Call ids are
/// random (an `id_factory` needs the GIL and is refused). `threads`: how many threads share the
/// work (default: the machine's cores). `strip_ids`: a last id among them is dropped first.
#[pyfunction]
#[pyo3(signature = (parser, completions, *, threads=None, finish_reason=None, strip_ids=Vec::new()))]
#[allow(clippy::type_complexity)]
pub fn parse_batch(
    py: Python<'_>,
    parser: &Bound<'_, ToolParser>,
    completions: &Bound<'_, PyAny>,
    threads: Option<usize>,
    finish_reason: Option<&str>,
    strip_ids: Vec<u32>,
) -> PyResult<(Vec<ParsedMessage>, Vec<u32>, Vec<u32>)> {
    let scored = parse_all(
        py,
        parser,
        completions,
        threads,
        finish_reason,
        &strip_ids,
        || Box::new(RandomIds::new()),
        |stream| {
            let message = stream.take_message();
            let counts = (message.tool_calls.len() as u32, message.issues.len() as u32);
            (ParsedMessage::from(message), counts)
        },
    )?;
    let (messages, counts): (Vec<_>, Vec<_>) = scored.into_iter().unzip();
    let (calls, issues) = counts.into_iter().unzip();
    Ok((messages, calls, issues))
}

/// What a reward reads of one message: its call count and its issue kinds.
struct Counted {
    calls: u32,
    kinds: Vec<IssueKind>,
}

fn counted(stream: &mut StreamParser) -> Counted {
    Counted {
        calls: stream.call_count() as u32,
        kinds: stream.issues().iter().map(|i| i.kind).collect(),
    }
}

/// `parse_batch` as columns, with no Python object per message: `(call_counts, issue_counts,
/// issue_kinds)`, where `issue_kinds` maps each issue kind found in the batch to its count per
/// completion. The parse is the same; only the messages are not built.
#[pyfunction]
#[pyo3(signature = (parser, completions, *, threads=None, finish_reason=None, strip_ids=Vec::new()))]
#[allow(clippy::type_complexity)]
pub fn parse_batch_counts(
    py: Python<'_>,
    parser: &Bound<'_, ToolParser>,
    completions: &Bound<'_, PyAny>,
    threads: Option<usize>,
    finish_reason: Option<&str>,
    strip_ids: Vec<u32>,
) -> PyResult<(Vec<u32>, Vec<u32>, BTreeMap<&'static str, Vec<u32>>)> {
    let counted = parse_all(
        py,
        parser,
        completions,
        threads,
        finish_reason,
        &strip_ids,
        || Box::new(NoIds),
        counted,
    )?;
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
