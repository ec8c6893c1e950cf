//! MSR Cambridge CSV (no header; a header line is skipped if present):
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, Type `Read` or `Write`
//! (any case), Offset and Size in bytes. Hostname and DiskNumber are checked but not used:
//! an MSR file is one volume.

use super::fields::{expect_number, expect_text, expect_u64, show, split, trim};
use super::scan::Scan;
use super::{byte_span, Parsed};
use crate::Op;

/// A header line: the first field starts with a letter (timestamps are numbers).
pub(crate) fn is_header(line: &[u8]) -> bool {
    trim(line).first().is_some_and(u8::is_ascii_alphabetic)
}

/// Parses one request into the pages it touches.
#[inline]
pub(crate) fn parse(line: &[u8], page_size: u64) -> Result<Parsed, String> {
    let [ts, host, disk, ty, offset, size, resp] = split::<7>(line, b',').map_err(|n| {
        format!(
            "expected 7 comma-separated fields \
             (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {n}"
        )
    })?;
    expect_number(ts, "a timestamp")?;
    expect_text(host, "hostname")?;
    expect_u64(disk, "a disk number")?;
    let op = parse_type(ty)?;
    let offset = expect_u64(offset, "a byte offset")?;
    let size = expect_u64(size, "a size in bytes")?;
    expect_number(resp, "a response time")?;
    byte_span(op, offset, size, page_size)
}

/// The fast path: a line with integer or decimal times, a plain host name and the type
/// spelled `Read` or `Write` (see [`Scan`]).
#[inline(always)]
pub(crate) fn fast(b: &[u8], page_size: u64) -> Option<(Parsed, usize)> {
    let mut s = Scan::new(b);
    s.number()?;
    s.byte(b',')?;
    s.text(b',')?;
    s.byte(b',')?;
    s.u64()?;
    s.byte(b',')?;
    let op = if s.literal(b"Read,").is_some() {
        Op::Read
    } else {
        s.literal(b"Write,")?;
        Op::Write
    };
    let offset = s.u64()?;
    s.byte(b',')?;
    let size = s.u64()?;
    s.byte(b',')?;
    s.number()?;
    let len = s.end()?;
    Some((byte_span(op, offset, size, page_size).ok()?, len))
}

#[inline]
fn parse_type(ty: &[u8]) -> Result<Op, String> {
    let t = trim(ty);
    if t.eq_ignore_ascii_case(b"read") {
        Ok(Op::Read)
    } else if t.eq_ignore_ascii_case(b"write") {
        Ok(Op::Write)
    } else {
        Err(format!("expected type Read or Write, found '{}'", show(t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            parse(b"128166372003061629,hm,1,Read,8192,8192,100", 4096),
            Ok(Parsed::Span(Op::Read, 2, 3))
        );
        assert_eq!(
            parse(b"1,hm,1,WRITE,4095,2,1", 4096),
            Ok(Parsed::Span(Op::Write, 0, 1))
        );
        assert_eq!(
            parse(b"1,hm,1,write,4096,0,1", 4096),
            Ok(Parsed::One(Op::Write, 1))
        );
        assert!(parse(b"1,hm,1,Trim,0,1,1", 4096)
            .expect_err("an error")
            .contains("expected type Read or Write, found 'Trim'"));
        assert!(parse(b"1,hm,1,Read,0,1", 4096)
            .expect_err("an error")
            .contains("found 6"));
        assert!(is_header(
            b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"
        ));
    }
}
