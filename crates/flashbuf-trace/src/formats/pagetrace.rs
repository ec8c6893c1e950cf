//! Page-reference CSV: header `op,page`, then `R,123` (access) or `W,123` (access that
//! dirtied the page). Page numbers are used as they are; the page size plays no part.

use super::fields::{expect_u64, parse_u64, show, split, trim};
use super::scan::{digits_value, leading_digits, Scan, POW10};
use super::Parsed;
use crate::{Op, PageRef};
use flashbuf_core::PageId;

/// Bytes [`bulk`] loads per line: op, comma, up to 15 digits and the line break, padded
/// to whole words.
const BULK_WINDOW: usize = 24;

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

/// The bulk path: parses plain `R,123\n` / `W,123\n` lines (1 to 15 digits) from the
/// start of `b`, straight into `out`, while `out` is shorter than `target`, and returns
/// how many bytes it used (each line appends one reference). It stops at the first other
/// line, or when fewer than [`BULK_WINDOW`] bytes are left; [`fast`] and [`parse`] take
/// it from there. Lines it takes mean the same to [`parse`] (tested against [`fast`]).
#[inline(always)]
pub(crate) fn bulk(b: &[u8], out: &mut Vec<PageRef>, target: usize) -> usize {
    let mut pos = 0;
    while out.len() < target {
        let Some(window) = b.get(pos..).and_then(|r| r.first_chunk::<BULK_WINDOW>()) else {
            break;
        };
        let Some((r, len)) = bulk_line(window) else {
            break;
        };
        out.push(r);
        pos += len;
    }
    pos
}

/// One line of [`bulk`]: the reference and the line's length with its `\n`.
#[inline(always)]
fn bulk_line(w: &[u8; BULK_WINDOW]) -> Option<(PageRef, usize)> {
    let op = match w[0] {
        b'R' => Op::Read,
        b'W' => Op::Write,
        _ => return None,
    };
    if w[1] != b',' {
        return None;
    }
    let word = |at: usize| {
        let mut x = [0u8; 8];
        x.copy_from_slice(&w[at..at + 8]);
        u64::from_le_bytes(x)
    };
    let (w1, w2) = (word(2), word(10));
    let n1 = leading_digits(w1);
    let (page, digits) = if n1 < 8 {
        if n1 == 0 {
            return None;
        }
        (digits_value(w1, n1), n1)
    } else {
        let n2 = leading_digits(w2);
        if n2 == 8 {
            return None;
        }
        (
            digits_value(w1, 8) * POW10[n2] + digits_value(w2, n2),
            8 + n2,
        )
    };
    if w[2 + digits] != b'\n' {
        return None;
    }
    Some((
        PageRef {
            op,
            page: PageId(page),
        },
        digits + 3,
    ))
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

    /// What `bulk` must do: take lines while `fast` takes them (and they have at most 15
    /// digits and a bare `\n`), with `fast`'s result.
    fn bulk_model(b: &[u8], target: usize) -> (Vec<PageRef>, usize) {
        let (mut refs, mut pos) = (Vec::new(), 0);
        while refs.len() < target && b.len() - pos >= BULK_WINDOW {
            let rest = &b[pos..];
            let Some((Parsed::One(op, page), len)) = fast(rest, 0) else {
                break;
            };
            if len > 18 || rest[len - 2] == b'\r' {
                break;
            }
            refs.push(PageRef {
                op,
                page: PageId(page),
            });
            pos += len;
        }
        (refs, pos)
    }

    #[test]
    fn bulk_path_agrees_with_fast_path() {
        let mut text = String::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for k in 0..500u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let op = if x.is_multiple_of(3) { 'W' } else { 'R' };
            let digits = 1 + (x >> 8) % 16;
            let page = (x >> 12) % 10u64.pow(digits as u32);
            text.push_str(&format!("{op},{page}\n"));
            if k % 97 == 96 {
                text.push_str(
                    ["R,1\r\n", "w,5\n", "# c\n", "R,1234567890123456\n"][k as usize % 4],
                );
            }
        }
        let bytes = text.into_bytes();
        let mut start = 0;
        let mut taken = 0;
        while start < bytes.len() {
            for target in [0, 1, 63, 64, 65, 1000] {
                let mut out = vec![PageRef::write(9)];
                let used = bulk(&bytes[start..], &mut out, target + 1);
                let (want, want_used) = bulk_model(&bytes[start..], target);
                assert_eq!((&out[1..], used), (&want[..], want_used), "at {start}");
            }
            let mut out = Vec::new();
            bulk(&bytes[start..], &mut out, usize::MAX);
            taken += usize::from(!out.is_empty());
            // On to the next line.
            let rest = &bytes[start..];
            start += rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(rest.len(), |i| i + 1);
        }
        assert!(taken > 450, "bulk took only {taken} lines");
    }
}
