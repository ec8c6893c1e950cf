//! Workloads over the buffer pool, between the pool and the lab.
//!
//! - [`dynamics`]: the FD-Buffer paper's workload models (WM1/WM2, a constant write
//!   ratio) that rewrite a trace epoch by epoch, and its asymmetry models (RM1/RM2) with
//!   the device wrapper that applies them.
//! - [`btree`]: a B+-tree over the pool (slotted pages, latch coupling, page spaces
//!   holding several trees), the engine the workloads run on.

pub mod btree;
pub mod dynamics;
