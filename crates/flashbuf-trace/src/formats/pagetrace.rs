//! Page-reference CSV: header `op,page`, then `R,123` (access) or `W,123` (access that
//! dirtied the page). Page numbers are used as they are; the page size plays no part.

use super::fields::{expect_u64, parse_u64, show, split, trim};
use super::Parsed;
use crate::Op;

/// The header line, `op,page` (case-insensitive).
pub(crate) fn is_header(line: &[u8]) -> bool {
    trim(line).eq_ignore_ascii_case(b"op,page")
}

/// Parses `R,123` / `W,123` (lower-case `r`/`w` accepted too).
#[inline]
pub(crate) fn parse(line: &[u8], _page_size: u64) -> Result<Parsed, String> {
    if let [op @ (b'R' | b'W' | b'r' | b'w'), b',', page @ ..] = line {
        if let Some(p) = parse_u64(page) {
            let op = if matches!(op, b'R' | b'r') {
                Op::Read
            } else {
                Op::Write
            };
            return Ok(Parsed::One(op, p));
        }
    }
    parse_slow(line)
}

#[cold]
fn parse_slow(line: &[u8]) -> Result<Parsed, String> {
    let [op, page] = split::<2>(line, b',')
        .map_err(|n| format!("expected 2 comma-separated fields (op,page), found {n}"))?;
    let op = match trim(op) {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        o => return Err(format!("expected op R or W, found '{}'", show(o))),
    };
    Ok(Parsed::One(op, expect_u64(page, "a page number")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(parse(b"R,12", 0), Ok(Parsed::One(Op::Read, 12)));
        assert_eq!(parse(b"w, 7 ", 0), Ok(Parsed::One(Op::Write, 7)));
        assert_eq!(parse(b" W , 7", 0), Ok(Parsed::One(Op::Write, 7)));
        assert_eq!(
            parse(b"X,1", 0).expect_err("an error"),
            "expected op R or W, found 'X'"
        );
        assert_eq!(
            parse(b"R,1,2", 0).expect_err("an error"),
            "expected 2 comma-separated fields (op,page), found 3"
        );
        assert_eq!(
            parse(b"R,1x", 0).expect_err("an error"),
            "expected a page number, found '1x'"
        );
        assert!(is_header(b"op,page"));
        assert!(is_header(b"OP,Page "));
        assert!(!is_header(b"R,1"));
    }
}
