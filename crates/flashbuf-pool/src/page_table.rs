//! The page table: page id → frame, in 7–14 bytes per frame, never growing; optionally
//! with a direct index for the pages below a bound the caller gives.
//!
//! Open addressing with linear probing over `u32` frame ids; the key (page id) is not
//! stored in the table but read from the frame header, so a slot is 4 bytes. Deletion is
//! by backward shift (Knuth vol. 3, §6.4, Algorithm R), which leaves no tombstones: the
//! table's load stays exactly `resident pages / slots` however many evictions happen, and
//! it never rehashes or allocates after construction.
//!
//! Each slot also carries the low bits of its page's hash above the frame id, where they
//! fit (`tag_bits = 32 − frame_bits ≥ log2(slots)`: pools of up to 2^15 frames): a lookup
//! reads a frame header only when the tag matches (1.0 header per hit instead of ≈ 2), and
//! the backward shift of a removal finds each entry's home slot from its tag instead of
//! re-hashing its frame's page. Bigger pools keep plain frame ids (same behaviour as
//! before; both layouts are checked against a `HashMap` model).
//!
//! # The direct index
//! A caller whose page ids are dense — the lab's replays, whose address map numbers a
//! trace's pages `0, 1, 2, …` as they come — can give a bound ([`PageTable::with_direct`]):
//! pages below it are found at their index in a flat array of frame ids (4 bytes a page,
//! at most [`DIRECT_PAGES_MAX`] pages), with no hash, no probe and no frame header to
//! compare; pages at or beyond it (or all of them, without a bound) go to the hashed table.
//! A page lives in exactly one part, chosen by its id against the bound, so the two never
//! disagree. The array starts at [`DIRECT_PAGES_FIRST`] entries (or the bound, if smaller)
//! and doubles, up to the bound, when a page beyond it is inserted: with dense ids it ends
//! under twice the pages seen, whatever bound the caller gave, and a page below the bound
//! but beyond the array was never inserted, so it is not resident. What it saves
//! is the hashed table's branches: a probe's exit depends on whether the page is resident
//! and on collisions, and on a no-bytes LRU replay of TPC-C (1,241 frames, 5.1 M
//! references, cachegrind) the lookups, insertions and removals mispredicted 4.2 M
//! branches (43 % of the run's) in 210 M instructions; with the index, the run's 9.65 M
//! mispredictions fall to 6.0 M and its replay is 20 % faster.
//!
//! Why not `hashbrown`: its tombstones make a table under constant insert/remove churn
//! either rehash (allocating) or double once it is over half full; a table that never
//! grows would need at least 2.3 buckets per frame, up to 4.6 once rounded to a power of
//! two (11.5–23 bytes at 5 bytes a bucket, more with the page id as its key), and with the
//! 40-byte frame header and the policy's links that breaks the 64-byte-per-frame budget
//! (this table: at most 14 bytes, see [`PageTable::new`]).

use flashbuf_core::{FrameId, PageId};

const EMPTY: u32 = u32::MAX;

/// Most pages a direct index covers (16 MiB of frame ids); pages beyond go to the hashed
/// table. The lab's traces map into 56 K–140 K dense pages (a quarter to half a MiB).
pub const DIRECT_PAGES_MAX: u64 = 1 << 22;

/// Entries a direct index starts with (256 KiB), unless its bound is smaller.
pub const DIRECT_PAGES_FIRST: u64 = 1 << 16;

/// Page id → frame id for at most `frames_count` resident pages.
#[derive(Debug, Clone)]
pub struct PageTable {
    /// Frame of page `p` at index `p`, `EMPTY` if `p` is not resident, for the pages below
    /// `direct_below` (never in `slots`); grown on demand up to that bound, so pages between
    /// its length and the bound are not resident. Empty without a bound.
    direct: Vec<u32>,
    /// Pages below this bound are the direct index's (0: no index).
    direct_below: u64,
    /// The hashed table of the pages at or beyond `direct_below`.
    slots: Box<[u32]>,
    mask: usize,
    len: usize,
    /// Bits of a slot that hold the frame id (the rest: the tag); 32 without tags.
    frame_bits: u32,
    /// The frame id's bits of a slot (all of them without tags).
    frame_mask: u32,
}

/// Multiplicative (Fibonacci) hash folded so that low bits depend on every input bit.
#[inline]
fn hash(pid: PageId) -> usize {
    let x = pid.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x ^ (x >> 32)) as usize
}

impl PageTable {
    /// A table for up to `frames_count` pages: the largest power of two at or below
    /// 3.5 × `frames_count` slots (load below 0.58).
    ///
    /// Under 0.58 full, a removal's backward shift and a miss's probe stay short: with the
    /// next power of two above 1.25 × (load ≤ 0.8; 0.61 at 1,241 frames) the table cost
    /// 130 M of a no-bytes LRU replay's 888.8 M instructions (2 M TPC-C references,
    /// cachegrind), at load 0.30 it costs 82 M (840.7 M in all, −5.4 %), for 8 more bytes
    /// per frame there. At most 14 bytes per frame, so the metadata stays within 64 bytes
    /// per frame (`pool_basics`; "the next power of two above 2 ×" reached 16 bytes at
    /// 2^k + 1 frames and 65 bytes of metadata).
    pub fn new(frames_count: usize) -> Self {
        Self::with_tags(frames_count, true)
    }

    /// [`PageTable::new`] with a direct index for the pages below `pages_below` (capped at
    /// [`DIRECT_PAGES_MAX`]; 0: none): see the module documentation.
    pub fn with_direct(frames_count: usize, pages_below: u64) -> Self {
        let mut t = Self::new(frames_count);
        t.direct_below = pages_below.min(DIRECT_PAGES_MAX);
        t.direct = vec![EMPTY; t.direct_below.min(DIRECT_PAGES_FIRST) as usize];
        t
    }

    /// Grows the direct index to hold index `d` (below the bound): doubling, at least to
    /// the next power of two above `d`, at most to the bound.
    #[cold]
    #[inline(never)]
    fn grow_direct(&mut self, d: usize) {
        let n = (d + 1)
            .next_power_of_two()
            .max(2 * self.direct.len())
            .min(self.direct_below as usize);
        self.direct.resize(n, EMPTY);
    }

    /// The number of slots for `frames_count` pages (see [`PageTable::new`]); always more
    /// than `frames_count`, so at least one slot stays empty and probes end.
    fn slots_for(frames_count: usize) -> usize {
        let most = (frames_count.saturating_mul(7) / 2).max(2);
        1 << (usize::BITS - 1 - most.leading_zeros())
    }

    /// [`PageTable::new`], with tags only if `tags` (and they fit).
    fn with_tags(frames_count: usize, tags: bool) -> Self {
        // At least one slot stays empty, so probes always end.
        let n = Self::slots_for(frames_count);
        // Frame ids stay below 2^frame_bits − 1, so no entry equals `EMPTY`.
        let frame_bits = usize::BITS - (frames_count + 1).leading_zeros();
        let fits = frame_bits < 32 && n.trailing_zeros() <= 32 - frame_bits;
        Self {
            direct: Vec::new(),
            direct_below: 0,
            slots: vec![EMPTY; n].into_boxed_slice(),
            mask: n - 1,
            len: 0,
            frame_bits: if tags && fits { frame_bits } else { 32 },
            frame_mask: if tags && fits {
                (1 << frame_bits) - 1
            } else {
                u32::MAX
            },
        }
    }

    /// Whether slots carry tags.
    #[inline(always)]
    fn tagged(&self) -> bool {
        self.frame_bits < 32
    }

    /// The tag part of an entry for hash `h` (0 without tags). No branch: it runs on every
    /// probe.
    #[inline(always)]
    fn tag(&self, h: usize) -> u32 {
        (h as u32).wrapping_shl(self.frame_bits) & !self.frame_mask
    }

    /// The frame part of entry `s`.
    #[inline(always)]
    fn frame_of(&self, s: u32) -> u32 {
        s & self.frame_mask
    }

    /// Number of pages in the table.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of slots.
    #[inline]
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Bytes the hashed table occupies (sized by the frames).
    pub fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<u32>()
    }

    /// Bytes the direct index occupies (sized by the pages it covers; 0 without one).
    pub fn direct_bytes(&self) -> usize {
        self.direct.len() * std::mem::size_of::<u32>()
    }

    /// The index of `pid` in the direct index, if it is below the bound (the index may
    /// not reach it yet).
    #[inline(always)]
    fn direct_index(&self, pid: PageId) -> Option<usize> {
        (pid.0 < self.direct_below).then_some(pid.0 as usize)
    }

    /// The frame holding `pid`; `page_of(f)` gives the page id frame `f` holds.
    #[inline]
    pub fn find(&self, pid: PageId, page_of: impl Fn(FrameId) -> PageId) -> Option<FrameId> {
        if let Some(d) = self.direct_index(pid) {
            return match self.direct.get(d) {
                Some(&s) if s != EMPTY => Some(FrameId(s)),
                _ => None,
            };
        }
        let h = hash(pid);
        let (mut i, tag) = (h & self.mask, self.tag(h));
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return None;
            }
            let f = FrameId(self.frame_of(s));
            if s ^ f.0 == tag && page_of(f) == pid {
                return Some(f);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Inserts `pid → frame`; `pid` must not be in the table. `page_of(frame)` must already
    /// return `pid`.
    ///
    /// # Panics
    /// If the table is full (more pages than the frames it was built for): a pool bug.
    #[inline]
    pub fn insert(&mut self, pid: PageId, frame: FrameId) {
        assert!(self.len < self.slots.len() - 1, "page table overfull");
        if let Some(d) = self.direct_index(pid) {
            if d >= self.direct.len() {
                self.grow_direct(d);
            }
            debug_assert_eq!(self.direct[d], EMPTY, "{pid} inserted twice");
            self.direct[d] = frame.0;
            self.len += 1;
            return;
        }
        let h = hash(pid);
        let mut i = h & self.mask;
        while self.slots[i] != EMPTY {
            debug_assert_ne!(
                self.frame_of(self.slots[i]),
                frame.0,
                "{frame} inserted twice"
            );
            i = (i + 1) & self.mask;
        }
        self.slots[i] = self.tag(h) | frame.0;
        self.len += 1;
    }

    /// Removes the entry `pid → frame`; returns whether it was there. `page_of` must still
    /// map `frame` to `pid` and every other resident frame to its page.
    #[inline]
    pub fn remove(
        &mut self,
        pid: PageId,
        frame: FrameId,
        page_of: impl Fn(FrameId) -> PageId,
    ) -> bool {
        if let Some(d) = self.direct_index(pid) {
            match self.direct.get_mut(d) {
                Some(s) if *s == frame.0 => *s = EMPTY,
                _ => return false,
            }
            self.len -= 1;
            return true;
        }
        let mut i = hash(pid) & self.mask;
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return false;
            }
            if self.frame_of(s) == frame.0 {
                break;
            }
            i = (i + 1) & self.mask;
        }
        // Backward shift: move later entries of the cluster into the hole when their home
        // slot does not lie cyclically in (hole, position].
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let s = self.slots[j];
            if s == EMPTY {
                break;
            }
            let home = if self.tagged() {
                (s >> self.frame_bits) as usize & self.mask
            } else {
                hash(page_of(FrameId(s))) & self.mask
            };
            let in_between = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !in_between {
                self.slots[hole] = s;
                hole = j;
            }
        }
        self.slots[hole] = EMPTY;
        self.len -= 1;
        true
    }

    /// Checks that every entry is reachable from its home slot without crossing an empty
    /// slot, that each page is in the part its id says (a direct entry's frame holding
    /// that page), and the count; `Err` names the first problem.
    pub fn check(&self, page_of: impl Fn(FrameId) -> PageId) -> Result<(), String> {
        let mut n = 0;
        if self.direct.len() as u64 > self.direct_below {
            return Err(format!(
                "direct index of {} pages beyond its bound {}",
                self.direct.len(),
                self.direct_below
            ));
        }
        for (p, &f) in self.direct.iter().enumerate() {
            if f == EMPTY {
                continue;
            }
            n += 1;
            let held = page_of(FrameId(f));
            if held.0 != p as u64 {
                return Err(format!(
                    "direct entry of page {p} is frame {f}, holding {held}"
                ));
            }
        }
        for (i, &s) in self.slots.iter().enumerate() {
            if s == EMPTY {
                continue;
            }
            n += 1;
            let f = FrameId(self.frame_of(s));
            let pid = page_of(f);
            if self.direct_index(pid).is_some() {
                return Err(format!(
                    "{f} in slot {i} ({pid}) belongs to the direct index"
                ));
            }
            if self.find(pid, &page_of) != Some(f) {
                return Err(format!("{f} in slot {i} ({pid}) is unreachable"));
            }
            if s ^ f.0 != self.tag(hash(pid)) {
                return Err(format!("{f} in slot {i} ({pid}) has a wrong tag"));
            }
        }
        if n != self.len {
            return Err(format!("{n} entries, length says {}", self.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        #[test]
        fn behaves_like_a_map_under_churn(
            frames in 1usize..40,
            tags in any::<bool>(),
            direct in prop_oneof![Just(0u64), 0u64..250],
            ops in proptest::collection::vec((any::<bool>(), 0u64..200), 1..600)
        ) {
            // frame -> page, as the pool's frame headers hold them.
            let mut page_of: Vec<Option<u64>> = vec![None; frames];
            let mut model: HashMap<u64, u32> = HashMap::new();
            let mut t = PageTable::with_tags(frames, tags);
            if direct > 0 {
                t = PageTable { direct: vec![EMPTY; direct.min(3) as usize], direct_below: direct, ..t };
            }
            prop_assert_eq!(t.tagged(), tags);
            for (insert, pid) in ops {
                let lookup = |pages: &Vec<Option<u64>>, f: FrameId| PageId(pages[f.index()].unwrap_or(u64::MAX));
                if insert && !model.contains_key(&pid) {
                    if let Some(f) = page_of.iter().position(|p| p.is_none()) {
                        page_of[f] = Some(pid);
                        t.insert(PageId(pid), FrameId(f as u32));
                        model.insert(pid, f as u32);
                    }
                } else if let Some(&f) = model.get(&pid) {
                    let pages = page_of.clone();
                    prop_assert!(t.remove(PageId(pid), FrameId(f), |x| lookup(&pages, x)));
                    page_of[f as usize] = None;
                    model.remove(&pid);
                }
                let pages = page_of.clone();
                t.check(|x| lookup(&pages, x)).map_err(TestCaseError::fail)?;
                for p in 0..200u64 {
                    prop_assert_eq!(t.find(PageId(p), |x| lookup(&pages, x)).map(|f| f.0), model.get(&p).copied());
                }
            }
            prop_assert!(t.slots() > frames && t.slots() * 2 <= (7 * frames).max(4));
        }
    }

    #[test]
    fn the_direct_index_takes_the_pages_below_its_bound_and_no_others() {
        let mut t = PageTable::with_direct(4, 10);
        assert_eq!(t.direct_bytes(), 40); // the bound, under DIRECT_PAGES_FIRST
        let pages = [3u64, 9, 10, 1 << 40];
        for (f, &p) in pages.iter().enumerate() {
            t.insert(PageId(p), FrameId(f as u32));
        }
        let page_of = |f: FrameId| PageId(pages[f.index()]);
        t.check(page_of).unwrap();
        // Pages 3 and 9 are in the index, 10 and 2^40 hashed.
        assert_eq!(t.direct.iter().filter(|&&s| s != EMPTY).count(), 2);
        assert_eq!(t.slots.iter().filter(|&&s| s != EMPTY).count(), 2);
        for (f, &p) in pages.iter().enumerate() {
            assert_eq!(t.find(PageId(p), page_of), Some(FrameId(f as u32)));
        }
        assert_eq!(t.find(PageId(4), page_of), None);
        // A removal names the frame: page 3 is not frame 1's.
        assert!(!t.remove(PageId(3), FrameId(1), page_of));
        assert!(t.remove(PageId(3), FrameId(0), page_of));
        assert_eq!((t.find(PageId(3), page_of), t.len()), (None, 3));
        // The bound is capped, and the index grows to the pages inserted.
        let mut big = PageTable::with_direct(4, u64::MAX);
        assert_eq!(big.direct_below, DIRECT_PAGES_MAX);
        assert_eq!(big.direct.len() as u64, DIRECT_PAGES_FIRST);
        let page_of = |_: FrameId| PageId(100_000);
        assert_eq!(big.find(PageId(100_000), page_of), None);
        assert!(!big.remove(PageId(100_000), FrameId(0), page_of));
        big.insert(PageId(100_000), FrameId(0));
        assert_eq!(big.direct.len(), 131_072);
        assert_eq!(big.find(PageId(100_000), page_of), Some(FrameId(0)));
        big.check(page_of).unwrap();
        assert_eq!(PageTable::with_direct(4, 0).direct_bytes(), 0);
    }

    #[test]
    fn check_finds_a_page_in_the_wrong_part() {
        let mut t = PageTable::with_direct(4, 10);
        let pages = [5u64];
        // Page 5 put into the hashed table behind the index's back.
        let h = hash(PageId(5));
        t.slots[h & t.mask] = t.tag(h);
        t.len = 1;
        let e = t.check(|f: FrameId| PageId(pages[f.index()])).unwrap_err();
        assert!(e.contains("belongs to the direct index"), "{e}");
        // And a direct entry whose frame holds another page.
        let mut t = PageTable::with_direct(4, 10);
        t.direct[6] = 0;
        t.len = 1;
        let e = t.check(|f: FrameId| PageId(pages[f.index()])).unwrap_err();
        assert!(e.contains("direct entry of page 6"), "{e}");
    }

    #[test]
    fn tags_only_where_they_fit() {
        // 1,241 frames: 11 frame bits, 4,096 slots (12 bits) within the 21 tag bits.
        let t = PageTable::new(1241);
        assert_eq!((t.frame_bits, t.slots()), (11, 4096));
        // 2^15 − 2 frames: 15 frame bits, 2^16 slots within 17 tag bits.
        assert!(PageTable::new((1 << 15) - 2).tagged());
        // 2^16 frames: 17 frame bits, 2^17 slots beyond 15 tag bits: plain frame ids.
        assert!(!PageTable::new(1 << 16).tagged());
        // The largest frame id of a tagged table is not `EMPTY`'s frame part.
        let t = PageTable::new(7);
        assert_eq!(t.frame_bits, 4);
    }
}
