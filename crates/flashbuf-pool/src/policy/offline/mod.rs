//! Offline references: policies that see the whole trace in advance.
//!
//! - [`belady`]: Belady's MIN (L. A. Belady, IBM Systems Journal 5(2), 1966): evict the
//!   page whose next use is farthest; the fewest misses of any demand-paging policy. Also
//!   two write-aware variants, all behind one [`OfflinePolicy`] usable in the pool and one
//!   fast direct function, [`simulate`].
//! - [`bounds`](mod@bounds): lower and upper bounds on the offline optimum when reads and write-backs
//!   have different costs — the exact optimum is NP-complete (Beckmann, Gibbons, McGuffey,
//!   "Writeback-Aware Caching", APOCS 2020), see design.md §5.
//! - [`spec`]: the entries `belady` and `offline` of the policy table.

pub mod belady;
pub mod bounds;
pub mod spec;

pub use belady::{belady_misses, simulate, DenseTrace, OfflinePolicy, OfflineResult, OfflineRule};
pub use bounds::{bounds, Bounds, CostModel};
