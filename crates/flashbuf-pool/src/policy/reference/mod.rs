//! Naive O(n) reference versions of the policies, for differential tests: each keeps the
//! plainest possible state (vectors in recency or queue order, flags, priorities
//! recomputed from the formula at every decision) and must make the same decisions as its
//! fast counterpart, pinned pages included.

mod arc;
mod casa;
mod cfdc;
mod cflru;
mod clock;
mod clustered;
mod lru;
mod s3_fifo;
mod two_q;

pub use arc::NaiveArc;
pub use casa::NaiveCasa;
pub use cfdc::NaiveCfdc;
pub use cflru::NaiveCflru;
pub use clock::{NaiveClock, NaiveClockSweep};
pub use clustered::NaiveClustered;
pub use lru::NaiveLru;
pub use s3_fifo::NaiveS3Fifo;
pub use two_q::NaiveTwoQ;
