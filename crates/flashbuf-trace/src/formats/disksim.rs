//! DiskSim ASCII: `time device sector sectors flags`, whitespace-separated; sectors of 512
//! bytes; flags bit 0 set = read, clear = write. Each device is its own address space:
//! `page = (device << 40) | page_within_device`. No header.

use super::fields::{expect_number, expect_u64, split_ws};
use super::scan::Scan;
use super::{byte_span, in_space, Parsed};
use crate::Op;

/// Parses one request into the pages it touches.
#[inline]
pub(crate) fn parse(line: &[u8], page_size: u64) -> Result<Parsed, String> {
    let [time, device, sector, sectors, flags] = split_ws::<5>(line).map_err(|n| {
        format!(
            "expected 5 whitespace-separated fields (time device sector sectors flags), found {n}"
        )
    })?;
    expect_number(time, "a time")?;
    let device = expect_u64(device, "a device number")?;
    let sector = expect_u64(sector, "a sector number")?;
    let sectors = expect_u64(sectors, "a sector count")?;
    let flags = expect_u64(flags, "flags")?;
    request(device, sector, sectors, flags, page_size)
}

#[inline(always)]
fn request(
    device: u64,
    sector: u64,
    sectors: u64,
    flags: u64,
    page_size: u64,
) -> Result<Parsed, String> {
    let op = if flags & 1 == 1 { Op::Read } else { Op::Write };
    let offset = sector
        .checked_mul(512)
        .ok_or_else(|| format!("sector {sector} is too large"))?;
    let size = sectors
        .checked_mul(512)
        .ok_or_else(|| format!("sector count {sectors} is too large"))?;
    in_space(byte_span(op, offset, size, page_size)?, device, "device")
}

/// The fast path: no leading or trailing blanks, an integer or decimal time (see
/// [`Scan`]).
#[inline(always)]
pub(crate) fn fast(b: &[u8], page_size: u64) -> Option<(Parsed, usize)> {
    let mut s = Scan::new(b);
    s.number()?;
    s.blanks()?;
    let device = s.u64()?;
    s.blanks()?;
    let sector = s.u64()?;
    s.blanks()?;
    let sectors = s.u64()?;
    s.blanks()?;
    let flags = s.u64()?;
    let len = s.end()?;
    Some((
        request(device, sector, sectors, flags, page_size).ok()?,
        len,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            parse(b"938513000 4 16 16 0", 4096),
            Ok(Parsed::Span(Op::Write, (4 << 40) | 2, (4 << 40) | 3))
        );
        assert_eq!(
            parse(b"938513000 4 16 8 0", 8192),
            Ok(Parsed::One(Op::Write, (4 << 40) | 1))
        );
        assert_eq!(
            parse(b"0.5\t0  8 16 1", 4096),
            Ok(Parsed::Span(Op::Read, 1, 2))
        );
        assert!(parse(b"1 2 3 4", 4096)
            .expect_err("an error")
            .contains("found 4"));
        assert!(parse(b"1 2 3 4 x", 4096)
            .expect_err("an error")
            .contains("expected flags, found 'x'"));
    }
}
