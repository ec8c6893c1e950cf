//! Refilling the reader's buffer from its source, and the newline search its parsers use.

use super::{TraceReader, BUFFER_BYTES, READ_CHUNK_BYTES};
use crate::source::Compression;
use crate::TraceError;
use std::io::{self, Read};

impl TraceReader {
    /// Moves the unparsed tail to the front of the buffer and reads more after it; sets
    /// `eof` at the end of the source.
    pub(super) fn read_more(&mut self) -> Result<(), TraceError> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            self.done = true;
            return Err(TraceError::Parse {
                path: self.path.clone(),
                line: self.line + 1,
                message: format!(
                    "line longer than {} KiB (binary data, or no line breaks?)",
                    BUFFER_BYTES >> 10
                ),
            });
        }
        loop {
            let stop = match self.compression {
                Compression::None => self.buf.len(),
                _ => (self.end + READ_CHUNK_BYTES).min(self.buf.len()),
            };
            match self.src.read(&mut self.buf[self.end..stop]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    self.done = true;
                    let path = self.path.clone();
                    return Err(match self.compression {
                        Compression::None => TraceError::Io { path, source },
                        c => TraceError::Decompress {
                            path,
                            compression: c.name(),
                            unit: if self.format.is_binary() {
                                "record"
                            } else {
                                "line"
                            },
                            line: self.line,
                            source,
                        },
                    });
                }
            }
        }
    }
}

/// Position of the first `\n`, eight bytes at a time.
#[inline(always)]
pub(super) fn find_newline(h: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut chunks = h.chunks_exact(8);
    let mut base = 0;
    for c in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(c);
        let x = u64::from_le_bytes(word) ^ NL;
        // The lowest flagged byte is the first zero byte (false positives only above it).
        let z = x.wrapping_sub(LO) & !x & HI;
        if z != 0 {
            return Some(base + (z.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| base + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newline_search() {
        let s = b"0123456789abcdef\nxyz\n";
        for start in 0..s.len() {
            let expect = s[start..].iter().position(|&b| b == b'\n');
            assert_eq!(find_newline(&s[start..]), expect, "start {start}");
        }
        assert_eq!(find_newline(b"\x01\x0b\n"), Some(2));
        assert_eq!(find_newline(b"\x0b\x0b\x0b\x0b\x0b\x0b\x0b\x0b"), None);
        assert_eq!(find_newline(b""), None);
    }
}
