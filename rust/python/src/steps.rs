//! The call steps a batch takes without Python: where a composed request
//! (`toolwire.grammar.composed_matcher`) changes parts.
//!
//! A request changes parts at a few tokens a call: the one that opens it (the scaffold hands over
//! to the tools' begins), the one that settles it on one tool (the begins hand over to that
//! tool's piece), the one that completes its end (back to the scaffold), and the stop token. Each
//! was a visit to Python, about a fifth of a steady batch 16 step. Yet each is decided by the
//! keyer's state and the token, and inside a call by the scaffold's state where the call began:
//! the keys already say so (equal keys, equal rows), and Python's caches of these steps are keyed
//! the same way. Once Python has taken such a step, [`CallSteps`] keeps what it led to, and
//! `feed_requests` takes the same step for a request in the same state whose cached row allows
//! the token: it gives the request a new keyer (its `_fill_key` and `_accept_key`) and appends
//! `(old keyer, token)` to the request's `_journal`. Python replays the journal through its own
//! path before it next reads the request, adopting each keyer made here (they hold the tokens
//! taken alone since), so a request served from the cache to its end is never replayed.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::keyer::StateKeyer;

/// Inside a call: the scaffold's keyer where the call began, and the text it reads when the call
/// closes (the rest of the head and the stand-in call).
#[derive(Clone)]
pub(crate) struct Resume {
    pub(crate) scaffold: StateKeyer,
    pub(crate) feed: Vec<u8>,
}

enum Step {
    /// From the scaffold into a call: the call's first keyer, and what the scaffold reads when
    /// the call closes.
    Open {
        keyer: StateKeyer,
        close_feed: Vec<u8>,
    },
    /// Within a call, to a fresh keyer (never the old one fed: its history is not in its key).
    Within { keyer: StateKeyer },
    /// The call's end: back to the scaffold's keyer where the call began, fed the close.
    Close,
    /// A stop token: the output is over.
    Stop,
}

/// What a step leaves a request with: its next keyer, or None where the output is over.
type Next = Option<StateKeyer>;

/// The steps Python took where a composed request changed parts, by grammar, keyer state and
/// token (:meth:`key`), for ``feed_requests`` to take alone. Bounded by an estimate of its bytes
/// (a key's, and 1 KiB a kept keyer): past ``max_bytes`` it starts empty again, and Python
/// teaches it the steps again as it meets them.
#[pyclass(name = "CallSteps", module = "toolwire._core", frozen)]
pub struct CallSteps {
    steps: Mutex<Table>,
    max_bytes: usize,
}

#[derive(Default)]
struct Table {
    steps: HashMap<Vec<u8>, Step>,
    nbytes: usize,
}

/// What a kept keyer is counted: a guess on the high side (its state's stack, label and text).
const KEYER_BYTES: usize = 1024;
/// What an entry costs besides its key and keyer (the map's slot, the step).
const ENTRY_BYTES: usize = 96;

fn cost(key: &[u8], step: &Step) -> usize {
    let keyer = match step {
        Step::Open { close_feed, .. } => KEYER_BYTES + close_feed.len(),
        Step::Within { .. } => KEYER_BYTES,
        Step::Close | Step::Stop => 0,
    };
    key.len() + ENTRY_BYTES + keyer
}

impl CallSteps {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.steps.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn put(&self, key: &[u8], step: Step) {
        let mut table = self.table();
        if table.steps.contains_key(key) {
            return;
        }
        let size = cost(key, &step);
        if table.nbytes + size > self.max_bytes {
            *table = Table::default();
        }
        table.nbytes += size;
        table.steps.insert(key.to_vec(), step);
    }

    /// The step for `keyer` (of grammar `serial`) taking `token` (of `bytes`), if one is known:
    /// the request's next keyer, or None for the end of the output. `scratch` is the buffer the
    /// step's key is made in.
    pub(crate) fn take(
        &self,
        serial: u64,
        keyer: &StateKeyer,
        token: u32,
        bytes: &[u8],
        scratch: &mut Vec<u8>,
    ) -> Option<Next> {
        scratch.clear();
        step_key(serial, keyer, token, scratch);
        let table = self.table();
        Some(match table.steps.get(scratch.as_slice())? {
            Step::Open {
                keyer: first,
                close_feed,
            } => {
                let mut scaffold = keyer.bare_clone();
                scaffold.feed(token, bytes);
                let mut next = first.clone();
                next.resume = Some(Box::new(Resume {
                    scaffold,
                    feed: close_feed.clone(),
                }));
                Some(next)
            }
            Step::Within { keyer: fresh } => {
                let mut next = fresh.clone();
                next.resume = Some(keyer.resume.clone()?);
                Some(next)
            }
            Step::Close => {
                let resume = keyer.resume.as_ref()?;
                let mut next = resume.scaffold.bare_clone();
                next.feed(0, &resume.feed);
                Some(next)
            }
            Step::Stop => None,
        })
    }
}

/// The bytes that name a step: the grammar, the keyer's key (with its length), the token and,
/// inside a call, the scaffold's key where the call began.
fn step_key(serial: u64, keyer: &StateKeyer, token: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&serial.to_le_bytes());
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    keyer.push_key(out);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&token.to_le_bytes());
    if let Some(resume) = &keyer.resume {
        resume.scaffold.push_key(out);
    }
}

#[pymethods]
impl CallSteps {
    #[new]
    fn new(max_bytes: usize) -> Self {
        CallSteps {
            steps: Mutex::new(Table::default()),
            max_bytes,
        }
    }

    /// The bytes the steps kept are counted (an estimate, see the class docs).
    #[getter]
    fn nbytes(&self) -> usize {
        self.table().nbytes
    }

    #[getter]
    fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The name of ``keyer`` (of grammar ``serial``) taking ``token``, read before the step.
    fn key<'py>(
        &self,
        py: Python<'py>,
        serial: u64,
        keyer: &StateKeyer,
        token: u32,
    ) -> Bound<'py, pyo3::types::PyBytes> {
        let mut out = Vec::new();
        step_key(serial, keyer, token, &mut out);
        pyo3::types::PyBytes::new(py, &out)
    }

    /// The step named ``key`` opened a call whose first keyer is ``keyer`` (fresh: made from the
    /// call's text); the scaffold reads ``close_feed`` when the call closes.
    fn open(&self, key: &[u8], keyer: &StateKeyer, close_feed: &[u8]) {
        let step = Step::Open {
            keyer: keyer.bare_clone(),
            close_feed: close_feed.to_vec(),
        };
        self.put(key, step);
    }

    /// The step named ``key`` moved a call on to ``keyer``, a fresh one.
    fn within(&self, key: &[u8], keyer: &StateKeyer) {
        let step = Step::Within {
            keyer: keyer.bare_clone(),
        };
        self.put(key, step);
    }

    /// The step named ``key`` closed the call, and the scaffold read only ``close_feed``.
    fn close(&self, key: &[u8]) {
        self.put(key, Step::Close);
    }

    /// The step named ``key`` ended the output.
    fn stop(&self, key: &[u8]) {
        self.put(key, Step::Stop);
    }

    fn clear(&self) {
        *self.table() = Table::default();
    }

    fn __len__(&self) -> usize {
        self.table().steps.len()
    }
}

/// Take the known step for a request whose keyer (``old``, borrowed as ``keyer``) did not take
/// ``token`` alone, where ``allows`` says the row cached under its key allows the token: give
/// the request its next keyer, or end its output, and journal the old keyer with the token.
/// False where no step is known (or the request has no ``_steps``, or None there).
pub(crate) fn take_step(
    request: &Bound<'_, PyAny>,
    old: &Bound<'_, StateKeyer>,
    keyer: &StateKeyer,
    token: u32,
    bytes: &[u8],
    scratch: &mut Vec<u8>,
    allows: impl FnOnce() -> bool,
) -> PyResult<bool> {
    let py = request.py();
    let Some(steps) = request.getattr_opt(pyo3::intern!(py, "_steps"))? else {
        return Ok(false);
    };
    if steps.is_none() {
        return Ok(false);
    }
    let steps = steps.downcast_into::<CallSteps>()?;
    let serial: u64 = request.getattr(pyo3::intern!(py, "_serial"))?.extract()?;
    let Some(next) = steps.get().take(serial, keyer, token, bytes, scratch) else {
        return Ok(false);
    };
    if !allows() {
        return Ok(false);
    }
    let journal = request.getattr(pyo3::intern!(py, "_journal"))?;
    let entry = PyTuple::new(
        py,
        [old.clone().into_any(), token.into_pyobject(py)?.into_any()],
    )?;
    journal.downcast_into::<PyList>()?.append(entry)?;
    let next = match next {
        Some(k) => Py::new(py, k)?.into_any(),
        None => {
            request.setattr(pyo3::intern!(py, "terminated"), true)?;
            py.None()
        }
    };
    request.setattr(pyo3::intern!(py, "_fill_key"), &next)?;
    request.setattr(pyo3::intern!(py, "_accept_key"), &next)?;
    Ok(true)
}
