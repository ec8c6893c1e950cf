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

/// The fast path of the reader: parses a plain `R,123\n` / `W,123\n` line (at most 15
/// digits, no spaces, no `\r`) at the start of `b`, eight digits at a time. Returns the
/// op, the page and the line's length including its `\n`; `None` means "use
/// [`parse`]" (which also reports errors). Needs 32 bytes of look-ahead.
#[inline(always)]
pub(crate) fn fast(b: &[u8]) -> Option<(Op, u64, usize)> {
    let [op, b',', rest @ ..] = b else {
        return None;
    };
    let op = match op {
        b'R' => Op::Read,
        b'W' => Op::Write,
        _ => return None,
    };
    let (w1, rest) = word(rest)?;
    let n1 = leading_digits(w1);
    let (value, len) = if n1 < 8 {
        (digits_value(w1, n1), 2 + n1)
    } else {
        let (w2, _) = word(rest)?;
        let n2 = leading_digits(w2);
        if n2 == 8 {
            return None;
        }
        (
            digits_value(w1, 8) * POW10[n2] + digits_value(w2, n2),
            10 + n2,
        )
    };
    if len == 2 || b.get(len) != Some(&b'\n') {
        return None;
    }
    Some((op, value, len + 1))
}

const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The first eight bytes of `b` as a little-endian word, and the bytes after them.
#[inline(always)]
fn word(b: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = b.split_first_chunk::<8>()?;
    Some((u64::from_le_bytes(*head), rest))
}

/// How many of the word's bytes, from the first, are ASCII digits (0..=8).
#[inline(always)]
fn leading_digits(w: u64) -> usize {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    // A byte is a digit iff its high nibble is 3 and adding 6 does not carry out of its
    // low nibble. Carries from a non-digit byte only disturb the bytes after it.
    let bad = ((w & HIGH) ^ THREES) | ((w.wrapping_add(SIXES) & HIGH) ^ THREES);
    (bad.trailing_zeros() / 8) as usize
}

/// The value of the first `n` (0..=8) bytes of `w`, which are ASCII digits.
#[inline(always)]
fn digits_value(w: u64, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    // Move the digits to the top bytes, so that the missing ones read as leading zeros.
    let mut v = (w & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n));
    v = (v.wrapping_mul(1 + (10 << 8))) >> 8 & 0x00FF_00FF_00FF_00FF;
    v = (v.wrapping_mul(1 + (100 << 16))) >> 16 & 0x0000_FFFF_0000_FFFF;
    (v.wrapping_mul(1 + (10_000 << 32))) >> 32
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
            "R,99999999",
            "W,100000000",
            "R,16777216",
            "W,000000000000001",
        ] {
            let want = parse(line.as_bytes(), 0).expect("valid");
            let Some((op, page, len)) = fast(&pad(&format!("{line}\n"))) else {
                panic!("fast path refused {line}");
            };
            assert_eq!(Parsed::One(op, page), want, "{line}");
            assert_eq!(len, line.len() + 1);
        }
        for line in [
            "R,",
            "R,1\r\n",
            "R, 1\n",
            "X,1\n",
            "R,1,2\n",
            "R,1234567890123456\n",
            "op,page\n",
            "R,1a\n",
            "R,1",
        ] {
            assert_eq!(fast(&pad(line)), None, "{line:?}");
        }
        for i in 0..64 {
            let page = (1u64 << i) - 1 + i;
            let text = format!("W,{page}\n");
            if text.len() <= 18 {
                assert_eq!(fast(&pad(&text)), Some((Op::Write, page, text.len())));
            }
        }
    }
}
