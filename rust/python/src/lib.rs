//! PyO3 glue for toolwire: classes and functions of `toolwire._core`, error mapping, and conversion
//! between Python objects and the core's types. No parsing logic lives here.

mod batch;
mod begins;
mod bitmask;
mod convert;
mod detect;
mod keyer;
mod parser;
mod pool;
mod request;
mod rows;
mod served;
mod steps;
mod toolset;
mod vocab;

use pyo3::prelude::*;

/// mimalloc for the extension's own allocations: a parse makes many small ones, and batch
/// results are freed by the thread that returns them to Python, not by the one that built them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pyo3::create_exception!(
    _core,
    ToolwireError,
    pyo3::exceptions::PyValueError,
    "Misuse of the API: unknown format, feeding a finished stream, tokens without a vocab, ..."
);

pyo3::create_exception!(
    _core,
    SchemaWarning,
    pyo3::exceptions::PyUserWarning,
    "A non-strict tool's parameters schema is invalid, so its calls' arguments go unchecked (each\ncall to it carries an ``unchecked_arguments`` issue). A strict tool with such a schema is\nrefused instead."
);

pub(crate) fn to_py_err(err: toolwire_core::Error) -> PyErr {
    ToolwireError::new_err(err.to_string())
}

// `wrap_pyfunction!` renames through a `use`, which trips this lint for the `unsafe_` functions.
#[allow(clippy::unsafe_removed_from_name)]
#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ToolwireError", m.py().get_type::<ToolwireError>())?;
    m.add("SchemaWarning", m.py().get_type::<SchemaWarning>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<parser::ToolParser>()?;
    m.add_class::<parser::ToolStream>()?;
    m.add_class::<parser::ParsedMessage>()?;
    m.add_class::<parser::ToolCall>()?;
    m.add_class::<parser::CallIssue>()?;
    m.add_class::<parser::Delta>()?;
    m.add_class::<parser::ToolCallDelta>()?;
    m.add_class::<vocab::Vocab>()?;
    m.add_class::<toolset::ToolSet>()?;
    m.add_class::<bitmask::MaskCache>()?;
    m.add_class::<keyer::StateKeyPlan>()?;
    m.add_class::<keyer::StateKeyer>()?;
    m.add_class::<keyer::TokenTable>()?;
    m.add_class::<begins::CallBegins>()?;
    m.add_class::<steps::CallSteps>()?;
    m.add_function(wrap_pyfunction!(bitmask::unsafe_apply_token_bitmask, m)?)?;
    m.add_function(wrap_pyfunction!(bitmask::unsafe_count_allowed, m)?)?;
    m.add_function(wrap_pyfunction!(rows::unsafe_fill_request_rows, m)?)?;
    m.add_function(wrap_pyfunction!(rows::unsafe_store_request_rows, m)?)?;
    m.add_function(wrap_pyfunction!(rows::feed_requests, m)?)?;
    m.add_function(wrap_pyfunction!(parser::formats, m)?)?;
    m.add_function(wrap_pyfunction!(parser::format_info, m)?)?;
    m.add_function(wrap_pyfunction!(parser::engine_names, m)?)?;
    m.add_function(wrap_pyfunction!(parser::render, m)?)?;
    m.add_class::<request::Request>()?;
    m.add_function(wrap_pyfunction!(request::read_request, m)?)?;
    m.add_function(wrap_pyfunction!(batch::parse_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch::parse_batch_counts, m)?)?;
    m.add_function(wrap_pyfunction!(detect::detect_template, m)?)?;
    Ok(())
}
