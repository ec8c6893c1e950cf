//! libCacheSim CSV as in its CloudPhysics sample: header `version,time,op,size,lbn` (skipped
//! if present), `op` a SCSI opcode in hex with or without `0x` (`28` read, `2a` write; also
//! READ(6/12/16) `08`/`a8`/`88` and WRITE(6/12/16) `0a`/`aa`/`8a`), `size` in bytes, `lbn`
//! in 512-byte blocks. Other opcodes are valid lines that reference nothing (counted as
//! skipped).

use super::fields::{expect_number, expect_u64, show, split, trim};
use super::scan::Scan;
use super::{byte_span, Parsed};
use crate::Op;

/// A header line: the first field starts with a letter (versions are numbers).
pub(crate) fn is_header(line: &[u8]) -> bool {
    trim(line).first().is_some_and(u8::is_ascii_alphabetic)
}

/// Parses a SCSI opcode written in hex (`2a`, `0x2A`); `None` if it is not one.
#[inline]
pub(crate) fn parse_hex_op(f: &[u8]) -> Option<u8> {
    let t = trim(f);
    let digits = match t {
        [b'0', b'x' | b'X', rest @ ..] => rest,
        _ => t,
    };
    if digits.is_empty() || digits.len() > 2 {
        return None;
    }
    let mut v = 0u8;
    for &b in digits {
        let d = (b as char).to_digit(16)?;
        v = v * 16 + d as u8;
    }
    Some(v)
}

/// The read/write meaning of a SCSI opcode, `None` for other commands.
#[inline]
pub(crate) const fn scsi_op(code: u8) -> Option<Op> {
    match code {
        0x08 | 0x28 | 0x88 | 0xa8 => Some(Op::Read),
        0x0a | 0x2a | 0x8a | 0xaa => Some(Op::Write),
        _ => None,
    }
}

/// Parses one request into the pages it touches.
#[inline]
pub(crate) fn parse(line: &[u8], page_size: u64) -> Result<Parsed, String> {
    let [version, time, op, size, lbn] = split::<5>(line, b',').map_err(|n| {
        format!("expected 5 comma-separated fields (version,time,op,size,lbn), found {n}")
    })?;
    expect_number(version, "a version")?;
    expect_number(time, "a time")?;
    let code = parse_hex_op(op).ok_or_else(|| {
        format!(
            "expected a SCSI opcode in hex (e.g. 28 or 0x2a), found '{}'",
            show(trim(op))
        )
    })?;
    let size = expect_u64(size, "a size in bytes")?;
    let lbn = expect_u64(lbn, "a block number (lbn)")?;
    request(code, size, lbn, page_size)
}

#[inline(always)]
fn request(code: u8, size: u64, lbn: u64, page_size: u64) -> Result<Parsed, String> {
    let Some(op) = scsi_op(code) else {
        return Ok(Parsed::Skip);
    };
    let offset = lbn
        .checked_mul(512)
        .ok_or_else(|| format!("block number {lbn} is too large"))?;
    byte_span(op, offset, size, page_size)
}

/// The fast path: a line without spaces, integer or decimal version and time, and the
/// opcode as one or two hex digits with an optional `0x` (see [`Scan`]).
#[inline(always)]
pub(crate) fn fast(b: &[u8], page_size: u64) -> Option<(Parsed, usize)> {
    let mut s = Scan::new(b);
    s.number()?;
    s.byte(b',')?;
    s.number()?;
    s.byte(b',')?;
    let code = s.hex_byte()?;
    s.byte(b',')?;
    let size = s.u64()?;
    s.byte(b',')?;
    let lbn = s.u64()?;
    let len = s.end()?;
    Some((request(code, size, lbn, page_size).ok()?, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(parse(b"1,5,2a,512,9", 4096), Ok(Parsed::One(Op::Write, 1)));
        assert_eq!(
            parse(b"1,5,0x28,6656,8", 4096),
            Ok(Parsed::Span(Op::Read, 1, 2))
        );
        assert_eq!(parse(b"1,5,0x12,512,8", 4096), Ok(Parsed::Skip));
        assert_eq!(parse(b"1,5,88,0,8", 4096), Ok(Parsed::One(Op::Read, 1)));
        assert!(parse(b"1,5,zz,0,8", 4096)
            .expect_err("an error")
            .contains("SCSI opcode"));
        assert!(parse(b"1,5,2a,x,8", 4096)
            .expect_err("an error")
            .contains("expected a size in bytes, found 'x'"));
        assert!(is_header(b"version,time,op,size,lbn"));
        assert_eq!(parse_hex_op(b"0XAA"), Some(0xaa));
        assert_eq!(parse_hex_op(b"123"), None);
        assert_eq!(parse_hex_op(b"0x"), None);
    }
}
