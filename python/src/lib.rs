//! `flashbuf._native`: the flashbuf lab inside Python. Every function takes a command line
//! (`["replay", "--policy", "cfdc"]`) and runs it in this process, with the GIL released,
//! through the same argument parser as the `flashbuf` binary; the pure-Python package
//! (`python/flashbuf/`) turns keyword arguments into that command line and the JSON
//! documents into dictionaries and DataFrames.

use flashbuf_lab::LabError;
use flashbuf_trace::TraceError;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The Python exception of a lab error, with the lab's message: bad input (names, options,
/// arguments, malformed traces) is a `ValueError`, a missing file `FileNotFoundError`, other
/// file and device failures `OSError`, the rest `RuntimeError`.
fn exception(e: LabError) -> PyErr {
    let message = e.to_string();
    match e {
        LabError::Usage(_) | LabError::Config(_) => PyValueError::new_err(message),
        LabError::Trace(TraceError::Io { source, .. }) | LabError::Io { source, .. }
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            PyFileNotFoundError::new_err(message)
        }
        LabError::Trace(TraceError::Io { .. } | TraceError::Decompress { .. })
        | LabError::Io { .. }
        | LabError::Output(_)
        | LabError::Device(_) => PyOSError::new_err(message),
        LabError::Trace(_) => PyValueError::new_err(message),
        _ => PyRuntimeError::new_err(message),
    }
}

/// The JSON text `flashbuf ARGS --json` prints, computed here with the GIL released.
/// `args`: the command line after the program name.
#[pyfunction]
fn document(py: Python<'_>, args: Vec<String>) -> PyResult<String> {
    py.detach(|| flashbuf_cli::document(args))
        .map_err(exception)
}

/// The `--help` text of a `flashbuf` command ("" for the program's).
#[pyfunction]
#[pyo3(signature = (command = ""))]
fn help(command: &str) -> PyResult<String> {
    flashbuf_cli::help(command).map_err(exception)
}

/// The trace the commands read when given none (the bundled sample), as an absolute path
/// when it exists.
#[pyfunction]
fn default_trace() -> String {
    let p = flashbuf_cli::default_trace();
    std::fs::canonicalize(&p).unwrap_or(p).display().to_string()
}

/// The native half of the `flashbuf` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(document, m)?)?;
    m.add_function(wrap_pyfunction!(help, m)?)?;
    m.add_function(wrap_pyfunction!(default_trace, m)?)?;
    m.add(
        "DOCUMENT_COMMANDS",
        flashbuf_cli::DOCUMENT_COMMANDS.to_vec(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
