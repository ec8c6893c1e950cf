//! The record-based fill loop of binary formats: the same buffer, batch API and error
//! semantics as the line-based loop, over fixed-size records instead of lines.
//!
//! A bad record is a [`TraceError::Record`] naming its 1-based number; it is consumed, and
//! the next call goes on with the next record. A file that ends inside a record is such an
//! error too (the record counted is the incomplete one). A bad file header is a
//! [`TraceError::BadHeader`] and final.

use super::TraceReader;
use crate::formats::pagebin::{self, HEADER_BYTES};
use crate::formats::Parsed;
use crate::{PageRef, TraceError};
use flashbuf_core::PageId;

impl TraceReader {
    /// Decodes records of `size` bytes with `decode` up to `target` references.
    #[inline(always)]
    pub(super) fn fill_records(
        &mut self,
        out: &mut Vec<PageRef>,
        target: usize,
        size: usize,
        decode: impl Fn(&[u8]) -> Result<Parsed, String>,
    ) -> Result<(), TraceError> {
        if let Some((op, next, last)) = self.pending.take() {
            self.emit_span(out, target, op, next, last);
        }
        while out.len() < target {
            if !self.have_record(size)? {
                break;
            }
            // Local copies keep the loop-carried position in a register.
            let (mut pos, mut record) = (self.pos, self.line);
            let whole = pos + (self.end - pos) / size * size;
            while pos < whole && out.len() < target {
                let parsed = decode(&self.buf[pos..pos + size]);
                pos += size;
                record += 1;
                match parsed {
                    Ok(Parsed::One(op, page)) => out.push(PageRef {
                        op,
                        page: PageId(page),
                    }),
                    Ok(Parsed::Span(op, first, last)) => {
                        self.emit_span(out, target, op, first, last)
                    }
                    Ok(Parsed::Skip) => self.skipped += 1,
                    Ok(Parsed::Ignore) => {}
                    Err(message) => {
                        (self.pos, self.line) = (pos, record);
                        return Err(self.record_error(message));
                    }
                }
            }
            (self.pos, self.line) = (pos, record);
        }
        Ok(())
    }

    /// The pagebin loop: after the header, whole runs of records are decoded straight
    /// from the buffer (every 8-byte value is a valid record, so nothing can fail there).
    pub(super) fn fill_pagebin(
        &mut self,
        out: &mut Vec<PageRef>,
        target: usize,
    ) -> Result<(), TraceError> {
        const SIZE: usize = pagebin::RECORD_BYTES;
        self.take_header(HEADER_BYTES, pagebin::check_header)?;
        while out.len() < target {
            if !self.have_record(SIZE)? {
                break;
            }
            let n = ((self.end - self.pos) / SIZE).min(target - out.len());
            let bytes = &self.buf[self.pos..self.pos + n * SIZE];
            out.extend(bytes.chunks_exact(SIZE).map(|c| {
                let mut w = [0u8; SIZE];
                w.copy_from_slice(c);
                pagebin::decode_ref(w)
            }));
            self.pos += n * SIZE;
            self.line += n as u64;
        }
        Ok(())
    }

    /// Reads and checks a file header of `len` bytes, once. A bad header is final.
    fn take_header(
        &mut self,
        len: usize,
        check: fn(&[u8]) -> Result<(), String>,
    ) -> Result<(), TraceError> {
        if !self.header_pending {
            return Ok(());
        }
        while self.end - self.pos < len && !self.eof {
            self.read_more()?;
        }
        let avail = (self.end - self.pos).min(len);
        if let Err(message) = check(&self.buf[self.pos..self.pos + avail]) {
            self.done = true;
            return Err(TraceError::BadHeader {
                path: self.path.clone(),
                format: self.format.name(),
                message,
            });
        }
        self.pos += len;
        self.header_pending = false;
        Ok(())
    }

    /// Makes at least `size` unread bytes available: `Ok(false)` at the end of the trace;
    /// a trace that ends inside a record is an error naming that record (consumed).
    fn have_record(&mut self, size: usize) -> Result<bool, TraceError> {
        while self.end - self.pos < size {
            if self.eof {
                let left = self.end - self.pos;
                if left == 0 {
                    return Ok(false);
                }
                self.pos = self.end;
                self.line += 1;
                return Err(self.record_error(format!(
                    "incomplete record: the trace ends {left} bytes into this {size}-byte \
                     record (is the file truncated?)"
                )));
            }
            self.read_more()?;
        }
        Ok(true)
    }

    /// A [`TraceError::Record`] for the record read last.
    #[cold]
    fn record_error(&self, message: String) -> TraceError {
        TraceError::Record {
            path: self.path.clone(),
            record: self.line,
            message,
        }
    }
}
