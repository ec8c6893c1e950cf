//! Workloads over the buffer pool, between the pool and the lab.
//!
//! - [`dynamics`]: the FD-Buffer paper's workload models (WM1/WM2, a constant write
//!   ratio) that rewrite a trace epoch by epoch, and its asymmetry models (RM1/RM2) with
//!   the device wrapper that applies them.
//!
//! The engine workloads (a B+-tree over the pool, TPC-C-like, TPC-B-like, CFDC's mix) live
//! here as they land (design.md §10).

pub mod dynamics;
