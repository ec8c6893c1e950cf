//! The written-page set's atomics: `std`'s, or with the `shuttle` feature (schedule tests
//! only: `cargo test -p flashbuf-store --features shuttle --lib schedules`)
//! [shuttle](https://docs.rs/shuttle)'s, so that a test can run inserts against snapshots
//! under thousands of chosen thread schedules and replay a failing one from its seed. The
//! code that uses them is the same in both builds. (The chunks' `OnceLock` and the high
//! pages' mutex stay `std`'s and `parking_lot`'s: no shuttle operation happens while
//! either is held, so no schedule can block on them.)

#[cfg(not(feature = "shuttle"))]
pub(super) use std::sync::atomic::{AtomicBool, AtomicU64};

#[cfg(feature = "shuttle")]
pub(super) use shuttle::sync::atomic::{AtomicBool, AtomicU64};
