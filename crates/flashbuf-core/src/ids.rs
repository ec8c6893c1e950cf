//! Newtype identifiers. Each layer has its own id space and the types keep them apart.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident, $inner:ty, $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            /// The raw number.
            #[inline]
            pub const fn get(self) -> $inner {
                self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl From<$inner> for $name {
            #[inline]
            fn from(v: $inner) -> Self {
                Self(v)
            }
        }
    };
}

id_type!(
    /// A database page number: the unit the buffer pool caches and a page store persists.
    PageId,
    u64,
    "page "
);
id_type!(
    /// Index of a buffer-pool frame, `0..frames_count`.
    FrameId,
    u32,
    "frame "
);
id_type!(
    /// Logical flash page number: the unit an FTL maps (host address / flash page size).
    Lpn,
    u64,
    "lpn "
);
id_type!(
    /// Physical flash page number inside a simulated NAND array.
    Ppn,
    u64,
    "ppn "
);

impl FrameId {
    /// The frame number as an index into frame arrays.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_kind() {
        assert_eq!(PageId(7).to_string(), "page 7");
        assert_eq!(format!("{:?}", FrameId(3)), "frame 3");
        assert_eq!(FrameId(3).index(), 3);
        assert_eq!(Lpn::from(5).get(), 5);
    }
}
