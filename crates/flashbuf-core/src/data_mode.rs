//! What the pages of a run carry: their bytes (the default) or only their metadata.
//!
//! In [`DataMode::Metadata`] (`--data none`, issue 17) the pool's frames and the store's
//! pages are [`METADATA_PAGE_BYTES`] long: the page header (id, version, checksum) and the
//! lab oracle's stamp, nothing else. Every layout decision and every device request still
//! uses the *logical* page size — a store writes the header of a page at the page's byte
//! offset as a request of the whole page's length, and the device times and counts the
//! whole length (`Device::write_head` in the device crate) — so policies, stores and the cost
//! model decide exactly as with bytes, while no payload is copied or checksummed.

use std::fmt;
use std::str::FromStr;

/// Bytes a page occupies in memory in [`DataMode::Metadata`]: the 32-byte header and
/// 32 bytes of payload (the lab oracle's 16-byte stamp fits).
pub const METADATA_PAGE_BYTES: usize = 64;

/// What the pages of a pool and store carry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum DataMode {
    /// Whole pages: every byte is stored, copied and checksummed (the default).
    #[default]
    Bytes,
    /// Only each page's header and stamp ([`METADATA_PAGE_BYTES`]); requests keep the
    /// logical page size.
    Metadata,
}

impl DataMode {
    /// Bytes of one page in memory for a logical page of `page_size` bytes.
    pub fn buffer_bytes(self, page_size: usize) -> usize {
        match self {
            DataMode::Bytes => page_size,
            DataMode::Metadata => METADATA_PAGE_BYTES.min(page_size),
        }
    }

    /// The command-line name (`bytes`, `none`).
    pub fn name(self) -> &'static str {
        match self {
            DataMode::Bytes => "bytes",
            DataMode::Metadata => "none",
        }
    }
}

impl fmt::Display for DataMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DataMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "bytes" => Ok(DataMode::Bytes),
            "none" | "metadata" => Ok(DataMode::Metadata),
            other => Err(format!(
                "data mode '{other}': expected 'bytes' (whole pages) or 'none' (metadata only)"
            )),
        }
    }
}

// The header and the lab oracle's 16-byte stamp fit a metadata-only page.
const _: () = assert!(METADATA_PAGE_BYTES >= crate::page::HEADER_BYTES + 16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_sizes() {
        assert_eq!("none".parse::<DataMode>(), Ok(DataMode::Metadata));
        assert_eq!("bytes".parse::<DataMode>(), Ok(DataMode::Bytes));
        assert!("some".parse::<DataMode>().unwrap_err().contains("'some'"));
        assert_eq!(DataMode::Metadata.buffer_bytes(8192), 64);
        assert_eq!(DataMode::Bytes.buffer_bytes(8192), 8192);
        assert_eq!(DataMode::Metadata.to_string(), "none");
    }
}
