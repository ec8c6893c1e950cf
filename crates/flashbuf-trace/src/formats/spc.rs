//! UMass SPC: `ASU,LBA,Size,Opcode,Timestamp`. LBA in 512-byte sectors, Size in bytes,
//! Opcode `r`/`w` (any case). Each ASU is its own address space:
//! `page = (ASU << 40) | page_within_asu`.

use super::fields::{expect_number, expect_u64, show, split, trim};
use super::scan::Scan;
use super::{byte_span, in_space, Parsed};
use crate::Op;

/// A header line: the first field starts with a letter (ASUs are numbers).
pub(crate) fn is_header(line: &[u8]) -> bool {
    trim(line).first().is_some_and(u8::is_ascii_alphabetic)
}

/// Parses one request into the pages it touches.
#[inline]
pub(crate) fn parse(line: &[u8], page_size: u64) -> Result<Parsed, String> {
    let [asu, lba, size, opcode, ts] = split::<5>(line, b',').map_err(|n| {
        format!("expected 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found {n}")
    })?;
    let asu = expect_u64(asu, "an ASU number")?;
    let lba = expect_u64(lba, "an LBA")?;
    let size = expect_u64(size, "a size in bytes")?;
    let op = match trim(opcode) {
        b"r" | b"R" => Op::Read,
        b"w" | b"W" => Op::Write,
        o => return Err(format!("expected opcode r or w, found '{}'", show(o))),
    };
    expect_number(ts, "a timestamp")?;
    request(op, asu, lba, size, page_size)
}

#[inline(always)]
fn request(op: Op, asu: u64, lba: u64, size: u64, page_size: u64) -> Result<Parsed, String> {
    let offset = lba
        .checked_mul(512)
        .ok_or_else(|| format!("LBA {lba} is too large"))?;
    in_space(byte_span(op, offset, size, page_size)?, asu, "ASU")
}

/// The fast path: a line without spaces and an integer or decimal timestamp (see
/// [`Scan`]).
#[inline(always)]
pub(crate) fn fast(b: &[u8], page_size: u64) -> Option<(Parsed, usize)> {
    let mut s = Scan::new(b);
    let asu = s.u64()?;
    s.byte(b',')?;
    let lba = s.u64()?;
    s.byte(b',')?;
    let size = s.u64()?;
    s.byte(b',')?;
    let op = match s.one_of(b"rRwW")? {
        0 | 1 => Op::Read,
        _ => Op::Write,
    };
    s.byte(b',')?;
    s.number()?;
    let len = s.end()?;
    Some((request(op, asu, lba, size, page_size).ok()?, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(parse(b"0,8,4096,r,0.1", 4096), Ok(Parsed::One(Op::Read, 1)));
        assert_eq!(
            parse(b"2,7,1024,W,0.1", 4096),
            Ok(Parsed::Span(Op::Write, 2 << 40, (2 << 40) | 1))
        );
        assert!(parse(b"0,8,4096,x,0.1", 4096)
            .expect_err("an error")
            .contains("expected opcode r or w, found 'x'"));
        assert!(parse(b"16777216,0,1,r,0", 4096)
            .expect_err("an error")
            .contains("ASU 16777216 is too large"));
        assert!(parse(b"0,4294967296000,512,r,0", 512)
            .expect_err("an error")
            .contains("beyond"));
    }
}
