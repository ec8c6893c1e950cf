//! The integrity oracle of replays: synthesized page contents and their verification.
//!
//! Every write reference stamps the page's payload with `(page id, version)`, the version
//! counting the page's writes in the trace; every reference (read or write) first checks
//! that the payload holds the stamp of the last write (zeros for a page never written).
//! A mismatch is a verify error: a store or pool returned stale, lost or foreign bytes.
//! The rest of the page is covered by the page checksum the stores verify on each read.

use flashbuf_core::PageId;

/// Bytes of the stamp at the start of the payload.
pub const STAMP_BYTES: usize = 16;

/// Expected versions per dense page id, and the errors found.
#[derive(Debug, Default)]
pub struct Oracle {
    versions: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

/// The stamp for `pid` at `version` (zeros for version 0).
#[inline]
pub fn stamp(pid: PageId, version: u32) -> [u8; STAMP_BYTES] {
    let mut b = [0u8; STAMP_BYTES];
    if version > 0 {
        b[..8].copy_from_slice(&pid.0.to_le_bytes());
        b[8..12].copy_from_slice(&version.to_le_bytes());
        b[12..16].copy_from_slice(&(!version).to_le_bytes());
    }
    b
}

/// [`stamp`] as two little-endian words: the page id, then the version and its complement
/// (both zero for version 0).
#[inline(always)]
fn stamp_words(pid: PageId, version: u32) -> (u64, u64) {
    let written = u64::from(version > 0).wrapping_neg();
    let v = u64::from(version) | u64::from(!version) << 32;
    (pid.0 & written, v & written)
}

impl Oracle {
    /// An oracle expecting `pages_hint` dense pages (it grows as needed).
    pub fn with_capacity(pages_hint: usize) -> Self {
        Self {
            versions: vec![0; pages_hint],
            ..Self::default()
        }
    }

    /// Dense pages the oracle holds versions for (it grows as needed).
    pub fn capacity(&self) -> usize {
        self.versions.len()
    }

    /// The version `pid` should hold.
    #[inline]
    pub fn expected(&self, pid: PageId) -> u32 {
        self.versions.get(pid.0 as usize).copied().unwrap_or(0)
    }

    /// Checks `payload` against the expected stamp of `pid`.
    ///
    /// The stamp is compared as two little-endian words, built without a branch on the
    /// version (the replay does this on every reference; see [`stamp`] for the layout).
    #[inline]
    pub fn check(&mut self, pid: PageId, payload: &[u8]) {
        let (lo, hi) = stamp_words(pid, self.expected(pid));
        let ok = match payload.first_chunk::<STAMP_BYTES>() {
            Some(head) => {
                let (a, b) = head.split_at(8);
                let word = |w: &[u8]| w.try_into().map_or(!0, u64::from_le_bytes);
                word(a) == lo && word(b) == hi
            }
            None => false,
        };
        if !ok {
            self.mismatch(pid, payload);
        }
    }

    /// `check`'s error path, out of line (it formats; the replay's per-reference check
    /// stays small enough to inline).
    #[cold]
    #[inline(never)]
    fn mismatch(&mut self, pid: PageId, payload: &[u8]) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(format!(
                "{pid}: expected version {}, found stamp {:02x?}",
                self.expected(pid),
                &payload[..payload.len().min(STAMP_BYTES)]
            ));
        }
    }

    /// Records a write of `pid` and returns the stamp to write.
    #[inline]
    pub fn bump(&mut self, pid: PageId) -> [u8; STAMP_BYTES] {
        let i = pid.0 as usize;
        if i >= self.versions.len() {
            self.versions.resize((i + 1).next_power_of_two(), 0);
        }
        self.versions[i] += 1;
        stamp(pid, self.versions[i])
    }

    /// Checks a page read back in a replay with dirty ranges: its header `version` must be
    /// the expected one and its payload what the writes left (`first_difference`: `None`,
    /// or the first page offset that differs, from [`crate::dirty::PageContent`]).
    pub fn check_content(&mut self, pid: PageId, version: u64, first_difference: Option<usize>) {
        let want = self.expected(pid);
        if version != u64::from(want) {
            self.record_error(format!("{pid}: expected version {want}, found {version}"));
        } else if let Some(at) = first_difference {
            self.record_error(format!(
                "{pid} version {want}: byte {at} is not what the writes left"
            ));
        }
    }

    /// Records an error found outside `check` (a corrupt page reported by the store).
    pub fn record_error(&mut self, what: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what);
        }
    }

    /// Verify errors so far.
    pub fn errors(&self) -> u64 {
        self.errors
    }

    /// The first error's description.
    pub fn first_error(&self) -> Option<&str> {
        self.first_error.as_deref()
    }

    /// Dense page ids that were written at least once, with their expected versions.
    pub fn written(&self) -> impl Iterator<Item = (PageId, u32)> + '_ {
        self.versions
            .iter()
            .enumerate()
            .filter(|(_, &v)| v > 0)
            .map(|(i, &v)| (PageId(i as u64), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_words_are_the_stamp() {
        for (p, v) in [
            (0u64, 0u32),
            (3, 0),
            (3, 1),
            (u64::MAX, u32::MAX),
            (1 << 40, 7),
        ] {
            let s = stamp(PageId(p), v);
            let (lo, hi) = stamp_words(PageId(p), v);
            assert_eq!(s[..8], lo.to_le_bytes(), "page {p} version {v}");
            assert_eq!(s[8..], hi.to_le_bytes(), "page {p} version {v}");
        }
        let mut o = Oracle::default();
        o.check(PageId(1), &[0u8; 15]); // shorter than a stamp: an error, not a panic
        assert_eq!(o.errors(), 1);
    }

    #[test]
    fn detects_stale_and_foreign_pages() {
        let mut o = Oracle::default();
        let mut page = vec![0u8; 64];
        o.check(PageId(3), &page);
        assert_eq!(o.errors(), 0);
        let s1 = o.bump(PageId(3));
        page[..16].copy_from_slice(&s1);
        o.check(PageId(3), &page);
        assert_eq!(o.errors(), 0);
        o.bump(PageId(3)); // version 2 expected, page still holds 1: stale
        o.check(PageId(3), &page);
        assert_eq!(o.errors(), 1);
        o.check(PageId(4), &page); // page 3's bytes served for page 4
        assert_eq!(o.errors(), 2);
        assert!(o.first_error().unwrap().contains("page 3"));
    }
}
