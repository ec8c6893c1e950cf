//! The fast paths' scanner: reads one common, well-formed line straight from the read
//! buffer, eight digits at a time, without splitting it first.
//!
//! Every method returns `None` at the first byte that is not exactly what it expects
//! (including the end of the available bytes); the reader then hands the line to the
//! format's general parser, which accepts the same lines and more, and words the errors.
//! A fast path therefore only ever accepts lines that the general parser accepts with the
//! same result (tested per format).

/// A cursor over the unparsed bytes of the read buffer.
pub(crate) struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

/// Powers of ten up to 10^8.
pub(crate) const POW10: [u64; 9] = [
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

impl<'a> Scan<'a> {
    /// A cursor at the start of `b`.
    #[inline(always)]
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Scan { b, i: 0 }
    }

    #[inline(always)]
    fn word(&self, at: usize) -> Option<u64> {
        let w = self.b.get(at..)?.first_chunk::<8>()?;
        Some(u64::from_le_bytes(*w))
    }

    /// 1 to 19 decimal digits.
    #[inline(always)]
    pub(crate) fn u64(&mut self) -> Option<u64> {
        let w1 = self.word(self.i)?;
        let n1 = leading_digits(w1);
        if n1 < 8 {
            if n1 == 0 {
                return None;
            }
            self.i += n1;
            return Some(digits_value(w1, n1));
        }
        let w2 = self.word(self.i + 8)?;
        let n2 = leading_digits(w2);
        if n2 < 8 {
            self.i += 8 + n2;
            return Some(digits_value(w1, 8) * POW10[n2] + digits_value(w2, n2));
        }
        let w3 = self.word(self.i + 16)?;
        let n3 = leading_digits(w3);
        if n3 > 3 {
            return None;
        }
        self.i += 16 + n3;
        // At most 19 digits: no overflow.
        let high = digits_value(w1, 8) * 100_000_000 + digits_value(w2, 8);
        Some(high * POW10[n3] + digits_value(w3, n3))
    }

    /// A number whose value is not needed: digits, optionally `.` and digits.
    #[inline(always)]
    pub(crate) fn number(&mut self) -> Option<()> {
        self.u64()?;
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            self.u64()?;
        }
        Some(())
    }

    /// Exactly the byte `c`.
    #[inline(always)]
    pub(crate) fn byte(&mut self, c: u8) -> Option<()> {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            Some(())
        } else {
            None
        }
    }

    /// One byte among `choices`; returns its index in `choices`.
    #[inline(always)]
    pub(crate) fn one_of(&mut self, choices: &[u8]) -> Option<usize> {
        let c = self.b.get(self.i)?;
        let k = choices.iter().position(|x| x == c)?;
        self.i += 1;
        Some(k)
    }

    /// Exactly the bytes `s`.
    #[inline(always)]
    pub(crate) fn literal(&mut self, s: &[u8]) -> Option<()> {
        if self.b.get(self.i..)?.starts_with(s) {
            self.i += s.len();
            Some(())
        } else {
            None
        }
    }

    /// Printable ASCII other than `sep` and space, up to (not including) `sep`.
    #[inline(always)]
    pub(crate) fn text(&mut self, sep: u8) -> Option<()> {
        let rest = self.b.get(self.i..)?;
        let n = rest
            .iter()
            .position(|&c| c == sep || !(0x21..0x7f).contains(&c))?;
        if rest[n] != sep {
            return None;
        }
        self.i += n;
        Some(())
    }

    /// One or more spaces or tabs.
    #[inline(always)]
    pub(crate) fn blanks(&mut self) -> Option<()> {
        let rest = self.b.get(self.i..)?;
        let n = rest.iter().position(|&c| c != b' ' && c != b'\t')?;
        if n == 0 {
            return None;
        }
        self.i += n;
        Some(())
    }

    /// 1 or 2 hex digits, after an optional `0x`.
    #[inline(always)]
    pub(crate) fn hex_byte(&mut self) -> Option<u8> {
        if self.b.get(self.i..)?.starts_with(b"0x") {
            self.i += 2;
        }
        let hex = |c: Option<&u8>| (char::from(*c?)).to_digit(16);
        let hi = hex(self.b.get(self.i))?;
        self.i += 1;
        match hex(self.b.get(self.i)) {
            Some(lo) => {
                self.i += 1;
                Some((hi * 16 + lo) as u8)
            }
            None => Some(hi as u8),
        }
    }

    /// The line break, `\n` or `\r\n`; returns the length of the line including it.
    #[inline(always)]
    pub(crate) fn end(&mut self) -> Option<usize> {
        if self.byte(b'\n').is_none() {
            self.byte(b'\r')?;
            self.byte(b'\n')?;
        }
        Some(self.i)
    }
}

/// How many of the word's bytes, from the first, are ASCII digits (0..=8).
#[inline(always)]
pub(crate) fn leading_digits(w: u64) -> usize {
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
pub(crate) fn digits_value(w: u64, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    // Move the digits to the top bytes, so that the missing ones read as leading zeros,
    // then combine pairs, quads and octets.
    let mut v = (w & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n));
    v = (v.wrapping_mul(1 + (10 << 8)) >> 8) & 0x00FF_00FF_00FF_00FF;
    v = (v.wrapping_mul(1 + (100 << 16)) >> 16) & 0x0000_FFFF_0000_FFFF;
    v.wrapping_mul(1 + (10_000 << 32)) >> 32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pad(s: &str) -> Vec<u8> {
        let mut v = s.as_bytes().to_vec();
        v.extend_from_slice(&[b'x'; 24]);
        v
    }

    #[test]
    fn numbers() {
        for n in [
            0u64,
            7,
            12,
            99_999_999,
            100_000_000,
            123_456_789_012_345,
            1_234_567_890_123_456,
            12_345_678_901_234_567,
            9_999_999_999_999_999_999,
        ] {
            let b = pad(&format!("{n},"));
            let mut s = Scan::new(&b);
            assert_eq!(s.u64(), Some(n), "{n}");
            assert_eq!(s.byte(b','), Some(()));
        }
        for bad in ["", "x", "10000000000000000000", "-1"] {
            let b = pad(bad);
            assert_eq!(Scan::new(&b).u64(), None, "{bad}");
        }
        // Leading zeros, and digit runs of every length.
        for len in 1..=19 {
            let text = "1".repeat(len);
            let b = pad(&text);
            let want: u64 = text.parse().expect("number");
            assert_eq!(Scan::new(&b).u64(), Some(want));
            let z = format!("{}5", "0".repeat(len - 1));
            assert_eq!(Scan::new(&pad(&z)).u64(), Some(5));
        }
        // Not enough bytes to load a word: refuse (the general parser takes over).
        assert_eq!(Scan::new(b"12\n").u64(), None);
    }

    #[test]
    fn other_tokens() {
        let b = pad("0.25 \t a-b,0x2A 5\n");
        let mut s = Scan::new(&b);
        assert_eq!(s.number(), Some(()));
        assert_eq!(s.blanks(), Some(()));
        assert_eq!(s.text(b','), Some(()));
        assert_eq!(s.byte(b','), Some(()));
        assert_eq!(s.hex_byte(), Some(0x2a));
        assert_eq!(s.blanks(), Some(()));
        assert_eq!(s.one_of(b"45"), Some(1));
        assert_eq!(s.end(), Some(18));
        assert_eq!(Scan::new(b"h\xc3m,").text(b','), None);
        assert_eq!(Scan::new(b"hm\n,").text(b','), None);
        assert_eq!(Scan::new(b"f,").hex_byte(), Some(0xf));
        assert_eq!(Scan::new(b"0x,").hex_byte(), None);
        assert_eq!(Scan::new(b"\r\n").end(), Some(2));
        assert_eq!(Scan::new(b"\r\r\n").end(), None);
    }
}
