//! The flashbuf lab: builds any policy × store × device from names, replays traces through
//! them with an integrity oracle, and reports (design.md §7–8).
//!
//! - [`spec`]: the `NAME[:key=value,...]` grammar.
//! - [`registry`]: names to devices, stores and policies.
//! - [`feed`]: the trace reader thread and the dense address map.
//! - [`mrc`]: LRU miss and write-back curves in one pass, SHARDS sampling.
//! - [`scan`]: a preparatory pass (distinct pages, sizes).
//! - [`config`]: what defines a run ([`RunConfig`], with `Default`).
//! - [`replay`]: one run (with hooks for meters); [`compare`]: a matrix of runs.
//! - [`bounds`]: offline cost bounds of a run (run option).
//! - [`oracle`]: synthesized page contents and their verification.
//! - [`result`]: the run result (JSON fields of §8), table and CSV.
//! - [`torture`]: crash torture (`flashbuf torture`, `flashbuf check`).
//! - [`limits`]: what a run can use and what the machine can hold (buffer sizes).

pub mod bounds;
pub mod byte_limit;
pub mod cluster_runs;
pub mod compare;
pub mod config;
pub mod dirty;
pub mod engine;
mod error;
pub mod feed;
pub mod limits;
pub mod list;
pub mod mrc;
pub mod oracle;
pub mod plot;
pub mod registry;
pub mod replay;
pub mod reproduce;
pub mod result;
pub mod scan;
pub mod spec;
pub mod sweep;
pub mod torture;

pub use config::{BufferSize, RunConfig, Warmup};
pub use error::LabError;
pub use flashbuf_workload::dynamics;
pub use replay::{run, run_hooked, NoHook, ReplayHook};
pub use result::RunResult;
