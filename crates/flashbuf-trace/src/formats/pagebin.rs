//! flashbuf's compact binary page trace (`pagebin`), plain or zstd-compressed as a whole:
//!
//! ```text
//! offset 0   8 bytes  magic  89 'F' 'B' 'P' 'A' 'G' 'E' 0a   (PAGEBIN_MAGIC)
//! offset 8   u32 LE   version, 1                              (PAGEBIN_VERSION)
//! offset 12  u32 LE   flags, 0 (no flag is defined in version 1; others are refused)
//! offset 16  u64 LE   one record per reference: bit 63 set = write, bits 0..63 = page
//! ```
//!
//! The magic's first byte is not ASCII (no text trace starts with it) and its last is a
//! line feed (a text-mode transfer that rewrites line ends breaks the magic, not the
//! records). There is no record count: files are written as a stream, and the end of the
//! file is the end of the trace; a length that is not 16 + 8·n bytes ends in an incomplete
//! record, which is an error naming it. Pages from 0 to [`PAGEBIN_MAX_PAGE`] (2^63 − 1)
//! are representable; [`PageBinWriter`] refuses larger ones.
//!
//! A record is decoded with one load, one shift and one mask, so reading runs at the speed
//! of copying the file through the read buffer (`examples/read_speed.rs`).

use crate::{Op, PageRef};
use std::io::{self, Write};

/// The first 8 bytes of a pagebin file.
pub const PAGEBIN_MAGIC: [u8; 8] = [0x89, b'F', b'B', b'P', b'A', b'G', b'E', b'\n'];

/// The format version written and read.
pub const PAGEBIN_VERSION: u32 = 1;

/// The largest page number a record holds (bit 63 is the write flag).
pub const PAGEBIN_MAX_PAGE: u64 = (1 << 63) - 1;

/// Bytes of the file header.
pub(crate) const HEADER_BYTES: usize = 16;

/// Bytes per record.
pub(crate) const RECORD_BYTES: usize = 8;

const WRITE_BIT: u64 = 1 << 63;

/// Checks the 16-byte header; the error says what is wrong.
pub(crate) fn check_header(h: &[u8]) -> Result<(), String> {
    if h.len() < HEADER_BYTES {
        return Err(format!(
            "the file holds {} bytes, fewer than the {HEADER_BYTES}-byte header",
            h.len()
        ));
    }
    if h[..8] != PAGEBIN_MAGIC {
        return Err(format!(
            "expected the magic bytes {}, found {}",
            hex(&PAGEBIN_MAGIC),
            hex(&h[..8])
        ));
    }
    let word = |at: usize| u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    let (version, flags) = (word(8), word(12));
    if version != PAGEBIN_VERSION {
        return Err(format!(
            "version {version} is not supported (this reader reads version {PAGEBIN_VERSION})"
        ));
    }
    if flags != 0 {
        return Err(format!(
            "flags {flags:#x} are not defined in version {PAGEBIN_VERSION} (expected 0)"
        ));
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Decodes one record into its reference (every 64-bit value is a valid record).
#[inline(always)]
pub(crate) fn decode_ref(rec: [u8; RECORD_BYTES]) -> PageRef {
    let w = u64::from_le_bytes(rec);
    PageRef {
        op: if w & WRITE_BIT != 0 {
            Op::Write
        } else {
            Op::Read
        },
        page: flashbuf_core::PageId(w & PAGEBIN_MAX_PAGE),
    }
}

/// A reference [`PageBinWriter`] cannot store, or a failed write.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PageBinWriteError {
    /// The page number needs bit 63, which holds the write flag.
    #[error(
        "reference {reference}: page {page} is too large for the pagebin format \
         (at most 2^63 - 1 = {PAGEBIN_MAX_PAGE})"
    )]
    PageTooLarge {
        /// 1-based number of the reference among those written.
        reference: u64,
        /// The page number.
        page: u64,
    },
    /// The output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes references in the pagebin format: the header on creation, then 8 bytes per
/// reference. Compress by handing it a compressing writer (e.g. a zstd encoder); the
/// reader recognises compression by its magic bytes.
///
/// ```
/// use flashbuf_trace::{PageBinWriter, PageRef, TraceReader};
///
/// let mut w = PageBinWriter::new(Vec::new())?;
/// w.write_refs(&[PageRef::read(7), PageRef::write(1 << 40)])?;
/// let bytes = w.finish()?;
/// assert_eq!(bytes.len(), 16 + 2 * 8);
///
/// let reader = TraceReader::from_reader(std::io::Cursor::new(bytes), "t.pagebin", None, 4096)?;
/// let refs: Vec<PageRef> = reader.collect::<Result<_, _>>()?;
/// assert_eq!(refs, [PageRef::read(7), PageRef::write(1 << 40)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PageBinWriter<W: Write> {
    inner: W,
    written: u64,
    buf: Vec<u8>,
}

impl<W: Write> PageBinWriter<W> {
    /// Writes the header to `inner`.
    pub fn new(mut inner: W) -> io::Result<Self> {
        let mut header = [0u8; HEADER_BYTES];
        header[..8].copy_from_slice(&PAGEBIN_MAGIC);
        header[8..12].copy_from_slice(&PAGEBIN_VERSION.to_le_bytes());
        inner.write_all(&header)?;
        Ok(PageBinWriter {
            inner,
            written: 0,
            buf: Vec::new(),
        })
    }

    /// Appends `refs`. On [`PageBinWriteError::PageTooLarge`] nothing of `refs` is written.
    pub fn write_refs(&mut self, refs: &[PageRef]) -> Result<(), PageBinWriteError> {
        if let Some(i) = refs.iter().position(|r| r.page.0 > PAGEBIN_MAX_PAGE) {
            return Err(PageBinWriteError::PageTooLarge {
                reference: self.written + i as u64 + 1,
                page: refs[i].page.0,
            });
        }
        self.buf.clear();
        self.buf.reserve(refs.len() * RECORD_BYTES);
        for r in refs {
            let flag = if r.op.is_write() { WRITE_BIT } else { 0 };
            self.buf.extend_from_slice(&(r.page.0 | flag).to_le_bytes());
        }
        self.inner.write_all(&self.buf)?;
        self.written += refs.len() as u64;
        Ok(())
    }

    /// References written so far.
    pub fn references(&self) -> u64 {
        self.written
    }

    /// Flushes and returns the inner writer (finish a compressing writer yourself).
    pub fn finish(mut self) -> io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_checks() {
        let mut h = PAGEBIN_MAGIC.to_vec();
        h.extend_from_slice(&1u32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        assert_eq!(check_header(&h), Ok(()));
        let e = check_header(&h[..10]).expect_err("short");
        assert_eq!(e, "the file holds 10 bytes, fewer than the 16-byte header");
        let mut bad = h.clone();
        bad[1] = b'X';
        let e = check_header(&bad).expect_err("magic");
        assert_eq!(
            e,
            "expected the magic bytes 89 46 42 50 41 47 45 0a, found 89 58 42 50 41 47 45 0a"
        );
        let mut v2 = h.clone();
        v2[8] = 2;
        let e = check_header(&v2).expect_err("version");
        assert_eq!(
            e,
            "version 2 is not supported (this reader reads version 1)"
        );
        let mut flags = h.clone();
        flags[12] = 1;
        assert!(check_header(&flags)
            .expect_err("flags")
            .starts_with("flags 0x1 are not defined"));
    }

    #[test]
    fn records() {
        assert_eq!(decode_ref(5u64.to_le_bytes()), PageRef::read(5));
        assert_eq!(decode_ref((WRITE_BIT | 5).to_le_bytes()), PageRef::write(5));
        assert_eq!(
            decode_ref(u64::MAX.to_le_bytes()),
            PageRef::write(PAGEBIN_MAX_PAGE)
        );
        assert_eq!(decode_ref([0; 8]), PageRef::read(0));
    }

    #[test]
    fn writer_layout_and_limit() {
        let mut w = PageBinWriter::new(Vec::new()).expect("header");
        w.write_refs(&[PageRef::write(3), PageRef::read(PAGEBIN_MAX_PAGE)])
            .expect("write");
        let e = w
            .write_refs(&[PageRef::read(1), PageRef::write(1 << 63)])
            .expect_err("too large");
        assert_eq!(
            e.to_string(),
            "reference 4: page 9223372036854775808 is too large for the pagebin format \
             (at most 2^63 - 1 = 9223372036854775807)"
        );
        assert_eq!(w.references(), 2);
        let bytes = w.finish().expect("finish");
        assert_eq!(bytes.len(), 32);
        assert_eq!(check_header(&bytes[..16]), Ok(()));
        assert_eq!(bytes[16..24], (WRITE_BIT | 3).to_le_bytes());
        assert_eq!(bytes[24..32], PAGEBIN_MAX_PAGE.to_le_bytes());
    }
}
