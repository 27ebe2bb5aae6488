//! `parse_batch`: many completions through one `ToolParser`, the GIL released and the work split
//! over threads. Scoring an RL rollout batch (parse, validate, count issues) is embarrassingly
//! parallel and dominated by the parse itself, so it should not hold the interpreter.
//!
//! What runs with the GIL held runs on one thread whatever `threads` says, so it is kept to
//! reading the inputs and building the result. A piece's texts are copied into one buffer (and
//! its token ids into one vector): a copy of a completion costs less than holding a reference to
//! its Python string and giving it back under the GIL once the piece is parsed, at the price of
//! holding the batch's text twice while it is parsed. Each thread parses with one stream, reset
//! between completions, so the stream's set-up is paid once per thread, not per completion.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList, PyString};
use toolwire_core::ids::{IdSource, RandomIds};
use toolwire_core::message::IssueKind;
use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::vocab::Vocab;
use toolwire_core::Error;

use crate::parser::{ParsedMessage, ToolParser};
use crate::pool;
use crate::{to_py_err, ToolwireError};

enum Completion {
    /// A range of [`Batch::text`].
    Text(Range<usize>),
    /// A range of [`Batch::ids`].
    Ids(Range<usize>),
}

/// The completions as read under the GIL.
struct Batch {
    items: Vec<Completion>,
    text: String,
    ids: Vec<u32>,
}

impl Batch {
    /// The next `count` completions of `items`. `strip_ids`: a last id among them is dropped (a
    /// stop id the format does not list).
    fn read(items: &Bound<'_, PyIterator>, count: usize, strip_ids: &[u32]) -> PyResult<Self> {
        let mut batch = Batch {
            items: Vec::with_capacity(count),
            text: String::new(),
            ids: Vec::new(),
        };
        for item in items.clone().take(count) {
            let completion = match item?.downcast_into::<PyString>() {
                Ok(text) => {
                    let start = batch.text.len();
                    batch.text.push_str(text.to_str()?);
                    Completion::Text(start..batch.text.len())
                }
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

/// What every piece of one batch reads besides its completions: the parser's configuration and
/// vocabulary, and how to finish and read each stream. Owned, so a pool thread can hold it.
struct Shared<T> {
    config: ParserConfig,
    vocab: Option<Arc<Vocab>>,
    finish: Option<String>,
    ids: fn() -> Box<dyn IdSource>,
    keep: fn(&mut StreamParser) -> T,
}

/// One thread's streams (one for texts, one for ids), built on first use and reset between
/// completions, so a thread pays a stream's set-up once per batch.
#[derive(Default)]
struct Streams {
    text: Option<StreamParser>,
    tokens: Option<StreamParser>,
}

impl Streams {
    fn parse<T>(&mut self, shared: &Shared<T>, batch: &Batch) -> Result<Vec<T>, Error> {
        let mut out = Vec::with_capacity(batch.items.len());
        for completion in &batch.items {
            let slot = match completion {
                Completion::Text(_) => &mut self.text,
                Completion::Ids(_) => &mut self.tokens,
            };
            if let Some(stream) = slot {
                stream.reset();
            }
            let stream = slot.get_or_insert_with(|| {
                let mut stream = StreamParser::with_ids(shared.config.clone(), (shared.ids)());
                stream.discard_deltas();
                stream
            });
            match completion {
                Completion::Text(range) => stream.feed(&batch.text[range.clone()])?,
                Completion::Ids(range) => {
                    let vocab = shared.vocab.as_ref().ok_or(Error::NoVocab)?;
                    stream.feed_tokens(vocab, &batch.ids[range.clone()])?
                }
            };
            stream.finish(shared.finish.as_deref())?;
            out.push((shared.keep)(stream));
        }
        Ok(out)
    }

    /// Parses pieces off `queue` until it is empty and closed; each piece's results go to
    /// `done`.
    fn drain<T>(
        &mut self,
        shared: &Shared<T>,
        queue: &Mutex<Receiver<Piece>>,
        done: &Sender<Parsed<T>>,
    ) {
        loop {
            let next = queue.lock().unwrap_or_else(|p| p.into_inner()).recv();
            let Ok((k, batch)) = next else { return };
            let parsed = panic::catch_unwind(AssertUnwindSafe(|| self.parse(shared, &batch)))
                .unwrap_or_else(|_| {
                    *self = Streams::default();
                    Err(panicked())
                });
            drop(batch);
            if done.send((k, parsed)).is_err() {
                return;
            }
        }
    }
}

/// Call ids for counts, which never read them: none is minted.
struct NoIds;

impl IdSource for NoIds {
    fn next_id(&mut self, _index: usize, _name: &str) -> String {
        String::new()
    }
}

fn panicked() -> Error {
    Error::InvalidArgument("a batch thread panicked".into())
}

/// A piece of the batch: its index and its completions.
type Piece = (usize, Batch);
/// A parsed piece: its index and its results.
type Parsed<T> = (usize, Result<Vec<T>, Error>);

/// The parse of every completion, in order, on `threads` threads (default: the machine's cores)
/// with the GIL released; `keep` reads what the caller returns off each finished stream.
///
/// The completions are read in pieces into a queue that [`pool`] threads take pieces from as
/// soon as they are read, so the pool parses while the calling thread reads on; the calling
/// thread then takes pieces too. Whoever is free takes the next piece, so a thread that starts
/// late or is slowed by the machine leaves its share to the others.
#[allow(clippy::too_many_arguments)]
fn parse_all<T: Send + 'static>(
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
    let completions = match completions.len() {
        Ok(_) => completions.clone(),
        Err(_) => {
            PyList::new(py, completions.try_iter()?.collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
    };
    let total = completions.len()?;
    let threads = threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, NonZeroUsize::get))
        .clamp(1, total.max(1));
    let shared = Arc::new(Shared {
        config: parser.config.clone(),
        vocab: parser.vocab.clone(),
        finish: finish_reason.map(str::to_owned),
        ids,
        keep,
    });
    let (queue_in, queue) = mpsc::channel::<Piece>();
    let queue = Arc::new(Mutex::new(queue));
    let (done, parsed) = mpsc::channel::<Parsed<T>>();
    for worker in 0..threads - 1 {
        let (shared, queue, done) = (Arc::clone(&shared), Arc::clone(&queue), done.clone());
        // A job no thread takes is dropped: the calling thread parses its pieces.
        let _ = pool::submit(
            worker,
            Box::new(move || Streams::default().drain(&shared, &queue, &done)),
        );
    }
    let items = completions.try_iter()?;
    let (mut pieces, mut read) = (0, 0);
    let mut unread = None;
    while read < total.max(1) {
        let piece = piece_size(total - read, threads);
        match Batch::read(&items, piece, strip_ids) {
            Ok(batch) => {
                let _ = queue_in.send((pieces, batch));
                pieces += 1;
                read += piece;
            }
            Err(e) => {
                unread = Some(e);
                break;
            }
        }
    }
    drop(queue_in);
    let mut slots: Vec<Option<Parsed<T>>> = (0..pieces).map(|_| None).collect();
    let slots = py.allow_threads(move || {
        Streams::default().drain(&shared, &queue, &done);
        drop(done);
        for answer in parsed.iter() {
            let k = answer.0;
            slots[k] = Some(answer);
        }
        slots
    });
    if let Some(e) = unread {
        return Err(e);
    }
    let mut all = Vec::with_capacity(total);
    for answer in slots {
        let (_, parsed) = answer.ok_or_else(|| to_py_err(panicked()))?;
        all.extend(parsed.map_err(to_py_err)?);
    }
    Ok(all)
}

/// How many completions the next piece takes when `left` are still unread: all of them on one
/// thread; otherwise a share of what is left, so pieces shrink towards the end of the batch and
/// the thread that takes the last one keeps the others waiting for a short piece at most (with
/// pieces of one size, up to a whole piece's parse was left to one thread at the end).
fn piece_size(left: usize, threads: usize) -> usize {
    if threads == 1 {
        return left.max(1);
    }
    (left / (threads * PIECES_PER_THREAD)).clamp(MIN_PIECE, MAX_PIECE)
}

/// How finely what is left of a batch is cut: about `1 / (threads * PIECES_PER_THREAD)` of it a
/// piece, each of at least and at most these many completions.
const PIECES_PER_THREAD: usize = 8;
const MIN_PIECE: usize = 32;
const MAX_PIECE: usize = 1024;

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
pub fn parse_batch_counts<'py>(
    py: Python<'py>,
    parser: &Bound<'py, ToolParser>,
    completions: &Bound<'py, PyAny>,
    threads: Option<usize>,
    finish_reason: Option<&str>,
    strip_ids: Vec<u32>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyDict>)> {
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
    let mut kinds: BTreeMap<&'static str, Vec<(usize, u32)>> = BTreeMap::new();
    for (k, c) in counted.iter().enumerate() {
        for kind in &c.kinds {
            let column = kinds.entry(kind.as_str()).or_default();
            match column.last_mut() {
                Some((at, n)) if *at == k => *n += 1,
                _ => column.push((k, 1)),
            }
        }
    }
    let n = counted.len();
    let calls = counts_column(py, n, counted.iter().map(|c| c.calls).enumerate())?;
    let issues = counts_column(
        py,
        n,
        counted.iter().map(|c| c.kinds.len() as u32).enumerate(),
    )?;
    let by_kind = PyDict::new(py);
    for (kind, column) in kinds {
        by_kind.set_item(kind, counts_column(py, n, column)?)?;
    }
    Ok((calls, issues, by_kind))
}

/// A list of `len` counts, zero but at the `(position, count)` pairs given. The zeros are one
/// list repeated (a reference copied per slot, as `[0] * len` does), so a column costs a Python
/// call per non-zero count: most of a batch's counts are zero, and building every slot one call
/// at a time was a large part of what `parse_batch_counts` does with the GIL held.
fn counts_column<'py>(
    py: Python<'py>,
    len: usize,
    counts: impl IntoIterator<Item = (usize, u32)>,
) -> PyResult<Bound<'py, PyList>> {
    let column = PyList::new(py, [0u32])?
        .as_sequence()
        .repeat(len)?
        .into_any()
        .downcast_into::<PyList>()?;
    for (at, count) in counts {
        if count != 0 {
            column.set_item(at, count)?;
        }
    }
    Ok(column)
}
