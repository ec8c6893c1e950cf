//! Byte-level field helpers shared by the line parsers: no allocation except when an
//! error message is built.

/// Strips ASCII spaces and tabs from both ends.
#[inline]
pub(crate) fn trim(mut f: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = f {
        f = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = f {
        f = rest;
    }
    f
}

/// A field as it appears in a message: escaped (`\xNN` for non-ASCII bytes, which also
/// covers invalid UTF-8) and cut at 40 characters.
pub(crate) fn show(f: &[u8]) -> String {
    const MAX: usize = 40;
    let mut s: String = f
        .iter()
        .take(MAX)
        .flat_map(|b| b.escape_ascii())
        .map(char::from)
        .collect();
    if f.len() > MAX {
        s.push_str("...");
    }
    s
}

/// Splits `line` at `sep` into exactly `N` fields; `Err(count)` gives the number found.
#[inline]
pub(crate) fn split<const N: usize>(line: &[u8], sep: u8) -> Result<[&[u8]; N], usize> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut n = 0;
    let mut start = 0;
    for (i, &b) in line.iter().enumerate() {
        if b == sep {
            if n + 1 >= N {
                return Err(1 + line.iter().filter(|&&c| c == sep).count());
            }
            out[n] = &line[start..i];
            n += 1;
            start = i + 1;
        }
    }
    if n + 1 != N {
        return Err(n + 1);
    }
    out[n] = &line[start..];
    Ok(out)
}

/// Splits `line` at runs of spaces and tabs into exactly `N` fields; `Err(count)` gives the
/// number found.
#[inline]
pub(crate) fn split_ws<const N: usize>(line: &[u8]) -> Result<[&[u8]; N], usize> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut n = 0;
    for field in line
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|f| !f.is_empty())
    {
        if n < N {
            out[n] = field;
        }
        n += 1;
    }
    if n == N {
        Ok(out)
    } else {
        Err(n)
    }
}

/// A decimal `u64` (surrounding spaces allowed); `None` if empty, not all digits, or too
/// large.
#[inline]
pub(crate) fn parse_u64(f: &[u8]) -> Option<u64> {
    let f = trim(f);
    if f.is_empty() || f.len() > 20 {
        return None;
    }
    if f.len() < 20 {
        // At most 19 digits: cannot overflow.
        let mut v: u64 = 0;
        for &b in f {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + d as u64;
        }
        Some(v)
    } else {
        let mut v: u64 = 0;
        for &b in f {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(d as u64)?;
        }
        Some(v)
    }
}

/// [`parse_u64`] with a message `expected WHAT, found '...'`.
#[inline]
pub(crate) fn expect_u64(f: &[u8], what: &str) -> Result<u64, String> {
    parse_u64(f).ok_or_else(|| {
        let t = trim(f);
        if !t.is_empty() && t.iter().all(u8::is_ascii_digit) {
            format!("{what} '{}' is too large", show(t))
        } else {
            format!("expected {what}, found '{}'", show(t))
        }
    })
}

/// Checks a field that is not used but must be a number (an integer or a decimal such as
/// a timestamp `0.551706` or `1e-3`).
#[inline]
pub(crate) fn expect_number(f: &[u8], what: &str) -> Result<(), String> {
    let t = trim(f);
    let mut digits = false;
    let ok = !t.is_empty()
        && t.iter().all(|&b| {
            digits |= b.is_ascii_digit();
            b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E')
        });
    if ok && digits {
        Ok(())
    } else {
        Err(format!("expected {what}, found '{}'", show(t)))
    }
}

/// Checks a field that is not used but must be text (valid UTF-8).
#[inline]
pub(crate) fn expect_text(f: &[u8], what: &str) -> Result<(), String> {
    if f.is_ascii() || std::str::from_utf8(f).is_ok() {
        Ok(())
    } else {
        Err(format!("{what} '{}' is not valid UTF-8", show(f)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits() {
        assert_eq!(split::<2>(b"R,12", b','), Ok([&b"R"[..], &b"12"[..]]));
        assert_eq!(split::<2>(b"R,12,3", b','), Err(3));
        assert_eq!(split::<3>(b"R,12", b','), Err(2));
        assert_eq!(split::<2>(b"", b','), Err(1));
        assert_eq!(split_ws::<2>(b" 1 \t 2 "), Ok([&b"1"[..], &b"2"[..]]));
        assert_eq!(split_ws::<2>(b"1 2 3"), Err(3));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b" 42 "), Some(42));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert!(expect_u64(b"99999999999999999999", "a page")
            .expect_err("an error")
            .contains("too large"));
        assert!(expect_number(b"0.5517", "t").is_ok());
        assert!(expect_number(b".", "t").is_err());
        assert!(expect_text(b"caf\xc3\xa9", "h").is_ok());
        assert!(expect_text(b"caf\xc3", "h").is_err());
        assert_eq!(show(b"a\xffb"), "a\\xffb");
    }
}
