//! Workloads over the buffer pool, between the pool and the lab.
//!
//! - [`dynamics`]: the FD-Buffer paper's workload models (WM1/WM2, a constant write
//!   ratio) that rewrite a trace epoch by epoch, and its asymmetry models (RM1/RM2) with
//!   the device wrapper that applies them.
//! - [`btree`]: a B+-tree over the pool (slotted pages, latch coupling, page spaces
//!   holding several trees), the engine the workloads run on.
//! - Engine workloads behind the [`Workload`] trait, registered in [`WORKLOADS`]:
//!   [`tpcc`] (TPC-C-like), [`tpcb`] (pgbench's TPC-B-like transaction), [`cfdc_mix`]
//!   (CFDC's baseline mix).
//! - [`driver`]: runs a workload on several threads and measures throughput (wall clock
//!   and device time), response times, consistency and the dirty ranges of the pool's
//!   write-backs, counted by [`dirty_stats::WriteBackStats`].

pub mod btree;
pub mod cfdc_mix;
pub mod codec;
pub mod dirty_stats;
pub mod driver;
pub mod dynamics;
pub mod tpcb;
pub mod tpcc;
mod workload;

pub use dirty_stats::{DirtySummary, WriteBackStats};
pub use driver::{run, run_session, RunConfig, RunLimit, WorkloadResult};
pub use workload::{
    parse_workload, Consistency, EnginePool, EngineStore, Session, Worker, Workload, WorkloadEntry,
    WorkloadError, WORKLOADS,
};
