//! Page-reference CSV: header `op,page`, then `R,123` (access) or `W,123` (access that
//! dirtied the page). Page numbers are used as they are; the page size plays no part.

use super::fields::{expect_u64, parse_u64, show, split, trim};
use super::scan::Scan;
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

/// The fast path: a plain `R,123\n` / `W,123\n` line at the start of `b` (see
/// [`Scan`]); returns the reference and the line's length with its `\n`.
#[inline(always)]
pub(crate) fn fast(b: &[u8], _page_size: u64) -> Option<(Parsed, usize)> {
    let mut s = Scan::new(b);
    let op = match s.one_of(b"RW")? {
        0 => Op::Read,
        _ => Op::Write,
    };
    s.byte(b',')?;
    let page = s.u64()?;
    Some((Parsed::One(op, page), s.end()?))
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

    #[test]
    fn fast_path_agrees_with_parse() {
        let pad = |s: &str| {
            let mut v = s.as_bytes().to_vec();
            v.extend_from_slice(&[b'x'; 32]);
            v
        };
        for line in [
            "R,0",
            "W,7",
            "R,12",
            "W,973078940",
            "R,12345678",
            "R,123456789",
            "W,123456789012345",
            "W,1234567890123456789",
            "R,99999999",
            "W,100000000",
            "R,16777216",
            "W,000000000000001",
        ] {
            let want = parse(line.as_bytes(), 0).expect("valid");
            let Some((got, len)) = fast(&pad(&format!("{line}\n")), 0) else {
                panic!("fast path refused {line}");
            };
            assert_eq!(got, want, "{line}");
            assert_eq!(len, line.len() + 1);
        }
        for line in [
            "R,",
            "R, 1\n",
            "X,1\n",
            "R,1,2\n",
            "R,12345678901234567890\n",
            "op,page\n",
            "R,1a\n",
            "R,1",
        ] {
            assert_eq!(fast(&pad(line), 0), None, "{line:?}");
        }
        for i in 0..64 {
            let page = (1u64 << i) - 1 + i;
            let text = format!("W,{page}\n");
            assert_eq!(
                fast(&pad(&text), 0),
                Some((Parsed::One(Op::Write, page), text.len()))
            );
        }
    }
}
