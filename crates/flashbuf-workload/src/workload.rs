//! The engine workloads behind one small trait, and their registration table.
//!
//! A [`Workload`] is a parsed, typed configuration (no I/O). [`Workload::load`] creates
//! its tables in a pool and loads them (one thread, seeded) and returns a [`Session`];
//! the session hands each driver thread a [`Worker`] that runs one transaction per
//! [`Worker::step`], and checks the workload's consistency conditions at the end
//! ([`Session::check`]). The driver ([`crate::driver::run`]) measures.
//!
//! [`WORKLOADS`] lists every workload with its typed options (design.md §12): the lab
//! parses `NAME:key=value,...` with [`parse_workload`] (or iterates the table for help
//! and listings).

use crate::btree::TreeError;
use crate::dirty_stats::WriteBackStats;
use flashbuf_core::config::{self, OptionSpec, Options, Spec};
use flashbuf_core::ConfigError;
use flashbuf_pool::{BufferPool, PoolError};
use flashbuf_store::PageStore;
use serde::Serialize;
use std::fmt;
use thiserror::Error;

/// The store under an engine pool: any store, with its write-backs counted.
pub type EngineStore = WriteBackStats<Box<dyn PageStore>>;

/// The pool the workloads run on.
pub type EnginePool = BufferPool<EngineStore>;

/// Errors of a workload run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// A tree operation failed.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// The pool failed.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// A bad configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A row that does not decode, a table that is missing a row the workload needs...
    #[error("{workload}: {detail}")]
    Data {
        /// The workload.
        workload: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A worker thread panicked.
    #[error("worker thread {thread} panicked")]
    Panicked {
        /// The thread.
        thread: usize,
    },
}

impl WorkloadError {
    /// A [`WorkloadError::Data`].
    pub fn data(workload: &'static str, detail: impl Into<String>) -> Self {
        WorkloadError::Data {
            workload,
            detail: detail.into(),
        }
    }
}

/// The result of a workload's consistency check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Consistency {
    /// The conditions checked (short names).
    pub checked: Vec<String>,
    /// The conditions that failed, each with what was found.
    pub failed: Vec<String>,
}

impl Consistency {
    /// Whether every condition held.
    pub fn ok(&self) -> bool {
        self.failed.is_empty()
    }

    /// Records condition `name`: failed with `detail` when `holds` is false.
    pub fn check(&mut self, name: &str, holds: bool, detail: impl FnOnce() -> String) {
        if !self.checked.iter().any(|c| c == name) {
            self.checked.push(name.to_string());
        }
        if !holds {
            self.failed.push(format!("{name}: {}", detail()));
        }
    }
}

/// A configured workload (see the module documentation).
pub trait Workload: fmt::Debug + Send + Sync {
    /// The name in [`WORKLOADS`].
    fn name(&self) -> &'static str;
    /// The transaction kinds, in the order [`Worker::step`] reports them.
    fn kinds(&self) -> &'static [&'static str];
    /// Creates the tables in `pool` (a page space at page 0; the store must be empty)
    /// and loads them, single-threaded, from `seed`.
    fn load<'p>(
        &self,
        pool: &'p EnginePool,
        seed: u64,
    ) -> Result<Box<dyn Session + 'p>, WorkloadError>;
}

/// Loaded tables, shared by the driver's threads.
pub trait Session: Send + Sync {
    /// The transaction source of driver thread `thread` of `threads`, seeded.
    fn worker(&self, thread: usize, threads: usize, seed: u64) -> Box<dyn Worker + '_>;
    /// Checks the workload's consistency conditions (call it when no worker runs).
    fn check(&self) -> Result<Consistency, WorkloadError>;
}

/// One driver thread's transactions.
pub trait Worker: Send {
    /// Runs one transaction; returns its kind (an index into [`Workload::kinds`]).
    fn step(&mut self) -> Result<usize, WorkloadError>;
}

/// One workload of the table.
pub struct WorkloadEntry {
    /// Name (`tpcc`, `tpcb`, `cfdc`).
    pub name: &'static str,
    /// One line for help and listings.
    pub help: &'static str,
    /// Typed options with defaults.
    pub options: &'static [OptionSpec],
    /// Builds the configured workload from validated options (no I/O).
    pub parse: fn(&Options) -> Result<Box<dyn Workload>, ConfigError>,
}

impl fmt::Debug for WorkloadEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkloadEntry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Every workload.
pub const WORKLOADS: &[WorkloadEntry] = &[
    crate::tpcc::ENTRY,
    crate::tpcb::ENTRY,
    crate::cfdc_mix::ENTRY,
];

/// Parses `NAME[:key=value,...]` against [`WORKLOADS`].
///
/// ```
/// let w = flashbuf_workload::parse_workload("tpcb:scale=2").unwrap();
/// assert_eq!(w.name(), "tpcb");
/// assert!(flashbuf_workload::parse_workload("tpcc:warehouse=2").is_err()); // typo
/// ```
pub fn parse_workload(text: &str) -> Result<Box<dyn Workload>, ConfigError> {
    let spec = Spec::parse(text, |_| false)?;
    let entry = config::lookup("workload", WORKLOADS, &spec.name, |e| e.name)?;
    let opts = Options::validate(&spec, entry.options)?;
    (entry.parse)(&opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_schemas_and_defaults_parse() {
        for e in WORKLOADS {
            Options::check_schema(e.options).unwrap_or_else(|m| panic!("{}: {m}", e.name));
            let w = parse_workload(e.name).unwrap_or_else(|m| panic!("{}: {m}", e.name));
            assert_eq!(w.name(), e.name);
            assert!(!w.kinds().is_empty());
        }
        let err = parse_workload("nosuch").unwrap_err().to_string();
        assert!(err.contains("tpcc") && err.contains("cfdc"), "{err}");
    }
}
