//! The crash-consistency harness every store must pass (issue 6), in its own crate so that
//! the production crates do not ship it: the store tests, the pool's poison regression,
//! the lab's `flashbuf torture` and later stores share one implementation.
//!
//! Modelled on redb's crash backend and SQLite's crash VFS: a store runs over a
//! [`FaultDevice`](flashbuf_device::fault::FaultDevice) that keeps a *live* and a *durable*
//! image; at a crash point the harness builds the images a power cut could leave
//! ([`CrashMode`](flashbuf_device::fault::CrashMode): nothing unsynced, everything, a prefix,
//! a seeded subset in any order, each write possibly torn at 512 B or 4 KB sectors with old
//! bytes or garbage), reopens the store on each and checks every page against a [`Model`](model::Model).
//!
//! - [`CrashStore`]: one store configuration the suites run, built through the one store
//!   table ([`flashbuf_store::registry::STORES`]). [`CrashStore::variants`] lists every
//!   entry's crash variants (small configurations, sizes in pages): **a new store joins
//!   every suite (crash, fail-stop, fuzzed open, the pool's poison regression,
//!   `flashbuf torture`/`check`) with its entry in that table**, no change here.
//! - [`content`]: self-identifying page payloads (page id and a tag in the first 16 bytes,
//!   seeded bytes after), so a reader can tell which write a page came from.
//! - [`model`]: what each page may hold after a crash (design.md §6), and the verdicts.
//! - [`fronts`]: what the operations go through — the store itself ([`fronts::StoreFront`])
//!   or a cache over it (the lab's `PoolFront`).
//! - [`sim`]: operation sequences (writes, batches, reads, flushes, syncs, crashes) run
//!   through a [`fronts::Front`] (the store itself, or a buffer pool over it) against the
//!   model, with every crash point verified under several crash modes.
//! - [`schedule`] and [`history`]: concurrent scripts (writes, in-place updates, syncs,
//!   flushes, evictions, the background flusher) interleaved one device operation at a
//!   time by a seeded scheduler, with crash images judged at every explored point
//!   (issue 11).
//! - [`damage`]: damage at rest to every block of a store image that holds an older
//!   version of every page: each damaged page is reported, never served old (issue 11).
//!
//! # The model ("old or new")
//! For each page the model keeps its *durable* state (as of the last completed `sync`, or
//! as observed after the last recovery) and the versions written since. After a crash a
//! read must return exactly one of: the durable state (old), any version written since
//! (new — not only the last: a crash may persist an earlier write of the page and lose a
//! later one), or — only if the page was written since the durable point — a
//! [`flashbuf_store::StoreError::Corrupt`] error (a torn write the store
//! detected and refused to return). Anything else is a violation: lost synced data, a page
//! whose bytes match no single write (torn or mixed), a version older than the durable one,
//! a phantom (data in a page never written), or a corrupt page that was synced.
//!
//! Nothing here panics on a store's misbehaviour: violations come back as values, so the
//! lab can report them and proptest can shrink them.

pub mod content;
pub mod damage;
pub mod fronts;
mod gate;
pub mod history;
pub mod model;
pub mod schedule;
pub mod sim;
mod stores;

pub use stores::CrashStore;
