//! ARC `.lis`: `first_page page_count _ _` per line (whitespace-separated), read-only; one
//! line is `page_count` reads of the consecutive pages from `first_page`. The last two
//! fields must be numbers and are not used. A `page_count` of 0 references nothing and
//! is counted as skipped. No header.

use super::fields::{expect_number, expect_u64, split_ws};
use super::scan::Scan;
use super::{Parsed, MAX_REQUEST_PAGES};
use crate::Op;

/// Parses one line into the pages it reads.
#[inline]
pub(crate) fn parse(line: &[u8], _page_size: u64) -> Result<Parsed, String> {
    let [first, count, a, b] = split_ws::<4>(line).map_err(|n| {
        format!("expected 4 whitespace-separated fields (first_page page_count _ _), found {n}")
    })?;
    let first = expect_u64(first, "a page number")?;
    let count = expect_u64(count, "a page count")?;
    expect_number(a, "a number in field 3")?;
    expect_number(b, "a number in field 4")?;
    request(first, count)
}

#[inline(always)]
fn request(first: u64, count: u64) -> Result<Parsed, String> {
    match count {
        0 => Ok(Parsed::Skip),
        1 => Ok(Parsed::One(Op::Read, first)),
        n if n > MAX_REQUEST_PAGES => Err(format!(
            "page count {n} is more than the limit of {MAX_REQUEST_PAGES}"
        )),
        n => {
            let last = first
                .checked_add(n - 1)
                .ok_or_else(|| format!("pages {first} + {n} overflow 64 bits"))?;
            Ok(Parsed::Span(Op::Read, first, last))
        }
    }
}

/// The fast path: no leading or trailing blanks, integers or decimals in the last two
/// fields (see [`Scan`]).
#[inline(always)]
pub(crate) fn fast(b: &[u8], _page_size: u64) -> Option<(Parsed, usize)> {
    let mut s = Scan::new(b);
    let first = s.u64()?;
    s.blanks()?;
    let count = s.u64()?;
    s.blanks()?;
    s.number()?;
    s.blanks()?;
    s.number()?;
    let len = s.end()?;
    Some((request(first, count).ok()?, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(parse(b"5 1 0 0", 0), Ok(Parsed::One(Op::Read, 5)));
        assert_eq!(parse(b"5 3 0 0", 0), Ok(Parsed::Span(Op::Read, 5, 7)));
        assert_eq!(parse(b"5 0 0 0", 0), Ok(Parsed::Skip));
        assert!(parse(b"5 1 0", 0)
            .expect_err("an error")
            .contains("found 3"));
        assert!(parse(b"18446744073709551615 2 0 0", 0)
            .expect_err("an error")
            .contains("overflow"));
    }
}
