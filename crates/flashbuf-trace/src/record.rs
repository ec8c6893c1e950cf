//! The records a trace yields: an operation on one page.

use flashbuf_core::PageId;
use std::fmt;

/// What a reference does to its page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// The page is read (or, in a page trace, accessed without being dirtied).
    Read,
    /// The page is written (or, in a page trace, accessed and dirtied).
    Write,
}

impl Op {
    /// `true` for [`Op::Write`].
    #[inline]
    pub const fn is_write(self) -> bool {
        matches!(self, Op::Write)
    }
}

impl fmt::Display for Op {
    /// `R` or `W`, as in the page-reference CSV.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Read => "R",
            Op::Write => "W",
        })
    }
}

/// One page reference: the unit a buffer pool replays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageRef {
    /// Read or write.
    pub op: Op,
    /// The page referenced.
    pub page: PageId,
}

impl PageRef {
    /// A read of `page`.
    #[inline]
    pub const fn read(page: u64) -> Self {
        Self {
            op: Op::Read,
            page: PageId(page),
        }
    }

    /// A write of `page`.
    #[inline]
    pub const fn write(page: u64) -> Self {
        Self {
            op: Op::Write,
            page: PageId(page),
        }
    }
}

// Batches of references are large; keep the record two words at most.
const _: () = assert!(std::mem::size_of::<PageRef>() <= 16);
