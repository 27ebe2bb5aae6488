//! `CallBegins`: a composed grammar's call begins, and keyers of a call's text among them
//! (see `toolwire_core::bitmask::call_begins` for why a batch step may take such tokens alone).

use std::sync::Arc;

use pyo3::prelude::*;

use crate::keyer::{StateKeyPlan, StateKeyer};

/// The begins of a composed grammar's tools (``<tool_call>\n{"name": "get_weather", ...``).
#[pyclass(name = "CallBegins", module = "toolwire._core", frozen)]
pub struct CallBegins(Arc<toolwire_core::bitmask::CallBegins>);

#[pymethods]
impl CallBegins {
    #[new]
    fn new(begins: Vec<Vec<u8>>) -> Self {
        CallBegins(Arc::new(toolwire_core::bitmask::CallBegins::new(begins)))
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// How many begins continue past ``text`` (start with it and are longer).
    fn continuing(&self, text: &[u8]) -> usize {
        self.0.continuing(text)
    }

    /// Whether ``data`` read after ``call`` keeps two or more begins in their literal text and
    /// completes none: the tokens a keyer from :meth:`keyer` takes alone.
    fn literal_step(&self, call: &[u8], data: &[u8]) -> bool {
        self.0.literal_step(call, data)
    }

    /// A keyer whose state is the call text ``text`` (fed tokens append their bytes): its key is
    /// ``prefix``, the text, and ``plan``'s key (the plan's keyer is never fed).
    /// :meth:`TokenTable.feed_deferred` (and ``feed_requests``) let it take a token only where
    /// :meth:`literal_step` holds and the row cached under its key allows the token.
    fn keyer(&self, plan: &StateKeyPlan, prefix: &[u8], text: &[u8]) -> StateKeyer {
        StateKeyer::in_begins(plan, self.0.clone(), prefix, text)
    }

    fn __repr__(&self) -> String {
        format!("CallBegins({} begins)", self.0.len())
    }
}
