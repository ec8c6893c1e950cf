//! Byte encodings shared by the workloads: order-preserving keys (big-endian fields,
//! strings ended by 0), fixed-offset little-endian row fields, and the random text of the
//! TPC benchmarks.

use flashbuf_core::rng::SplitMix64;

/// Builds an order-preserving key: fields compare in the order they are appended.
#[derive(Debug, Clone, Default)]
pub struct KeyBuf(Vec<u8>);

impl KeyBuf {
    /// An empty key.
    pub fn new() -> Self {
        Self(Vec::with_capacity(16))
    }
    /// Appends a `u8`.
    pub fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }
    /// Appends a big-endian `u16`.
    pub fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Appends a big-endian `u32`.
    pub fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Appends a big-endian `u64`.
    pub fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Appends a string without 0 bytes, followed by a 0 (shorter strings sort first).
    pub fn text(mut self, s: &[u8]) -> Self {
        debug_assert!(!s.contains(&0), "key text with a 0 byte");
        self.0.extend_from_slice(s);
        self.0.push(0);
        self
    }
    /// The key bytes.
    pub fn done(self) -> Vec<u8> {
        self.0
    }
}

/// Reads a big-endian `u32` at `o` of a key.
pub fn key_u32(k: &[u8], o: usize) -> u32 {
    u32::from_be_bytes([k[o], k[o + 1], k[o + 2], k[o + 3]])
}

/// Reads a little-endian `i64` row field.
pub fn get_i64(r: &[u8], o: usize) -> i64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&r[o..o + 8]);
    i64::from_le_bytes(b)
}

/// Writes a little-endian `i64` row field.
pub fn set_i64(r: &mut [u8], o: usize, v: i64) {
    r[o..o + 8].copy_from_slice(&v.to_le_bytes());
}

/// Reads a little-endian `u32` row field.
pub fn get_u32(r: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([r[o], r[o + 1], r[o + 2], r[o + 3]])
}

/// Writes a little-endian `u32` row field.
pub fn set_u32(r: &mut [u8], o: usize, v: u32) {
    r[o..o + 4].copy_from_slice(&v.to_le_bytes());
}

/// Reads a little-endian `u16` row field.
pub fn get_u16(r: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([r[o], r[o + 1]])
}

/// Writes a little-endian `u16` row field.
pub fn set_u16(r: &mut [u8], o: usize, v: u16) {
    r[o..o + 2].copy_from_slice(&v.to_le_bytes());
}

/// Appends a variable-length field (`u16` length, bytes).
pub fn push_var(r: &mut Vec<u8>, s: &[u8]) {
    r.extend_from_slice(&(s.len() as u16).to_le_bytes());
    r.extend_from_slice(s);
}

/// The `n`-th variable-length field of a row whose variable part starts at `start`, or
/// `None` if the row is too short.
pub fn var_field(r: &[u8], start: usize, n: usize) -> Option<&[u8]> {
    let mut at = start;
    for i in 0..=n {
        let len = u16::from_le_bytes([*r.get(at)?, *r.get(at + 1)?]) as usize;
        let s = r.get(at + 2..at + 2 + len)?;
        if i == n {
            return Some(s);
        }
        at += 2 + len;
    }
    None
}

/// A uniform number in `lo..=hi`.
pub fn uniform(rng: &mut SplitMix64, lo: u64, hi: u64) -> u64 {
    debug_assert!(lo <= hi);
    lo + rng.below(hi - lo + 1)
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A random alphanumeric string of `lo..=hi` characters (TPC-C's a-string).
pub fn a_string(rng: &mut SplitMix64, lo: usize, hi: usize) -> Vec<u8> {
    let n = uniform(rng, lo as u64, hi as u64) as usize;
    (0..n)
        .map(|_| ALNUM[rng.below(ALNUM.len() as u64) as usize])
        .collect()
}

/// A random numeric string of `lo..=hi` digits (TPC-C's n-string).
pub fn n_string(rng: &mut SplitMix64, lo: usize, hi: usize) -> Vec<u8> {
    let n = uniform(rng, lo as u64, hi as u64) as usize;
    (0..n).map(|_| b'0' + rng.below(10) as u8).collect()
}

/// An independent generator for thread or phase `stream` of a run seeded with `seed`.
pub fn stream_rng(seed: u64, stream: u64) -> SplitMix64 {
    let mut mix = SplitMix64::new(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    SplitMix64::new(mix.next_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_like_their_fields() {
        let a = KeyBuf::new().u16(1).text(b"AB").u32(9).done();
        let b = KeyBuf::new().u16(1).text(b"ABC").u32(1).done();
        let c = KeyBuf::new().u16(2).text(b"A").u32(0).done();
        assert!(a < b && b < c);
        let mut r = vec![0u8; 8];
        set_i64(&mut r, 0, -5);
        push_var(&mut r, b"xy");
        push_var(&mut r, b"");
        push_var(&mut r, b"zzz");
        assert_eq!(get_i64(&r, 0), -5);
        assert_eq!(var_field(&r, 8, 2), Some(&b"zzz"[..]));
        assert_eq!(var_field(&r, 8, 3), None);
    }
}
