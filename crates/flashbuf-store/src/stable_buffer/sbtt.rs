//! The StableBuffer Translation Table (destination → slot) and the slot bitmaps.
//!
//! Memory is the point (paper §2.2 budgets 8 bytes of table entry and 1 bit of bitmap per
//! slot); ours is 14.75 bytes per slot in all:
//! - [`Sbtt`]: an open-addressing hash table (linear probing, backward-shift deletion, no
//!   tombstones) whose buckets hold only a `u32` slot number; the key is kept once, in a
//!   per-slot destination array (`u64`). With at least 1.5 buckets per slot (load ≤ 2/3)
//!   that is 8 + 6 = 14 bytes per slot.
//! - [`SlotBits`]: six bitmaps of one bit per slot (0.75 bytes per slot): `used`, `fresh`,
//!   `busy`, `flushing`, `held`, `releasing`, and the free-slot pointer.
//!
//! # Invariants ([`Sbtt::check`], [`SlotBits::check`])
//! - Every bucket entry `s` has `dest[s]` hashing to a bucket from which `s` is reachable
//!   without crossing an empty bucket, and no destination appears twice.
//! - `held` and `releasing` slots are not `used`; `busy` and `flushing` slots are `used`;
//!   `free_count` equals the number of slots that are neither `used`, `held` nor
//!   `releasing`.

use std::fmt::Write as _;

const EMPTY: u32 = u32::MAX;

/// Destination → slot, keyed through the per-slot destination array.
#[derive(Debug, Clone)]
pub struct Sbtt {
    dest: Vec<u64>,
    buckets: Vec<u32>,
    len: usize,
}

#[inline]
fn hash(d: u64) -> u64 {
    let mut z = d.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Sbtt {
    /// An empty table for `slots` slots.
    pub fn new(slots: u32) -> Self {
        let n = slots as usize;
        let cap = (n + n.div_ceil(2)).max(n + 1);
        Self {
            dest: vec![0; n],
            buckets: vec![EMPTY; cap],
            len: 0,
        }
    }

    #[inline]
    fn home(&self, d: u64) -> usize {
        ((u128::from(hash(d)) * self.buckets.len() as u128) >> 64) as usize
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.buckets.len() {
            0
        } else {
            i + 1
        }
    }

    /// Bucket index holding `d`, if present.
    #[inline]
    fn find(&self, d: u64) -> Option<usize> {
        let mut i = self.home(d);
        loop {
            let s = self.buckets[i];
            if s == EMPTY {
                return None;
            }
            if self.dest[s as usize] == d {
                return Some(i);
            }
            i = self.next(i);
        }
    }

    /// The slot staging destination `d`.
    #[inline]
    pub fn get(&self, d: u64) -> Option<u32> {
        self.find(d).map(|i| self.buckets[i])
    }

    /// Maps `d` to `slot` (`d` must not be present).
    pub fn insert(&mut self, d: u64, slot: u32) {
        debug_assert!(self.find(d).is_none(), "destination {d} already staged");
        debug_assert!(self.len < self.dest.len());
        self.dest[slot as usize] = d;
        let mut i = self.home(d);
        while self.buckets[i] != EMPTY {
            i = self.next(i);
        }
        self.buckets[i] = slot;
        self.len += 1;
    }

    /// Points `d` (present) at `slot` instead; returns the previous slot.
    pub fn replace(&mut self, d: u64, slot: u32) -> Option<u32> {
        let i = self.find(d)?;
        let old = self.buckets[i];
        self.dest[slot as usize] = d;
        self.buckets[i] = slot;
        Some(old)
    }

    /// Unmaps `d`; returns its slot.
    pub fn remove(&mut self, d: u64) -> Option<u32> {
        let mut hole = self.find(d)?;
        let slot = self.buckets[hole];
        self.buckets[hole] = EMPTY;
        self.len -= 1;
        // Backward-shift: move later entries of the cluster into the hole when their home
        // bucket does not lie cyclically in (hole, j].
        let mut j = self.next(hole);
        while self.buckets[j] != EMPTY {
            let h = self.home(self.dest[self.buckets[j] as usize]);
            let stays = if hole <= j {
                hole < h && h <= j
            } else {
                hole < h || h <= j
            };
            if !stays {
                self.buckets[hole] = self.buckets[j];
                self.buckets[j] = EMPTY;
                hole = j;
            }
            j = self.next(j);
        }
        Some(slot)
    }

    /// The destination recorded for `slot` (meaningful while the slot is mapped).
    #[inline]
    pub fn dest_of(&self, slot: u32) -> u64 {
        self.dest[slot as usize]
    }

    /// Whether `slot` is the slot mapped for its recorded destination.
    #[inline]
    pub fn is_mapped(&self, slot: u32) -> bool {
        self.get(self.dest[slot as usize]) == Some(slot)
    }

    /// Mapped destinations.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every (destination, slot), in bucket order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.buckets
            .iter()
            .filter(|&&s| s != EMPTY)
            .map(|&s| (self.dest[s as usize], s))
    }

    /// Bytes of memory the table holds.
    pub fn memory_bytes(&self) -> usize {
        self.dest.len() * 8 + self.buckets.len() * 4
    }

    /// Checks the invariants of the module docs.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = vec![false; self.dest.len()];
        let mut count = 0;
        for (i, &s) in self.buckets.iter().enumerate() {
            if s == EMPTY {
                continue;
            }
            count += 1;
            let su = s as usize;
            if su >= self.dest.len() {
                return Err(format!(
                    "bucket {i} holds slot {s} beyond {}",
                    self.dest.len()
                ));
            }
            if std::mem::replace(&mut seen[su], true) {
                return Err(format!("slot {s} appears in two buckets"));
            }
            let d = self.dest[su];
            match self.find(d) {
                Some(j) if j == i => {}
                Some(j) => return Err(format!("destination {d} in buckets {i} and {j}")),
                None => {
                    return Err(format!(
                        "destination {d} (slot {s}) unreachable from its home"
                    ))
                }
            }
        }
        if count != self.len {
            return Err(format!("{count} entries but len {}", self.len));
        }
        if self.len >= self.buckets.len() {
            return Err("table is full (no empty bucket)".to_string());
        }
        Ok(())
    }
}

/// One bit per slot.
#[derive(Debug, Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Self {
        Self(vec![0; n.div_ceil(64)])
    }
    #[inline]
    fn get(&self, i: u32) -> bool {
        self.0[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    #[inline]
    fn set(&mut self, i: u32, v: bool) {
        let w = &mut self.0[(i / 64) as usize];
        if v {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }
    fn clear_all(&mut self) {
        self.0.iter_mut().for_each(|w| *w = 0);
    }
    fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// The per-slot state bits and the free-slot pointer.
///
/// - `used`: the slot holds a staged page (mapped in the SBTT), is reserved for a write in
///   flight, or is being flushed.
/// - `fresh`: its image was written after the start of the last promise sync (a caller's
///   `sync`), so nothing has promised it: an in-place update may overwrite it.
/// - `busy`: a write into the slot is in flight (readers wait; flushes skip it).
/// - `flushing`: the slot is part of a flush in flight.
/// - `held`: superseded by a newer copy in another slot; not reusable until a promise sync
///   that starts after now completes (until then it may hold the last promised copy).
/// - `releasing`: `held` slots a sync in flight will release.
#[derive(Debug, Clone)]
pub struct SlotBits {
    n: u32,
    used: Bits,
    fresh: Bits,
    busy: Bits,
    flushing: Bits,
    held: Bits,
    releasing: Bits,
    free_ptr: u32,
    free_count: u32,
}

macro_rules! accessors {
    ($($get:ident $set:ident $field:ident),*) => {$(
        #[doc = concat!("The `", stringify!($field), "` bit of `slot`.")]
        #[inline]
        pub fn $get(&self, slot: u32) -> bool {
            self.$field.get(slot)
        }
        #[doc = concat!("Sets the `", stringify!($field), "` bit of `slot`.")]
        #[inline]
        pub fn $set(&mut self, slot: u32, v: bool) {
            self.$field.set(slot, v)
        }
    )*};
}

impl SlotBits {
    /// All slots free.
    pub fn new(slots: u32) -> Self {
        let n = slots as usize;
        Self {
            n: slots,
            used: Bits::new(n),
            fresh: Bits::new(n),
            busy: Bits::new(n),
            flushing: Bits::new(n),
            held: Bits::new(n),
            releasing: Bits::new(n),
            free_ptr: 0,
            free_count: slots,
        }
    }

    accessors!(
        fresh set_fresh fresh,
        busy set_busy busy,
        flushing set_flushing flushing
    );

    /// Whether `slot` is used.
    #[inline]
    pub fn used(&self, slot: u32) -> bool {
        self.used.get(slot)
    }

    /// Whether `slot` is held or releasing.
    #[inline]
    pub fn held(&self, slot: u32) -> bool {
        self.held.get(slot) || self.releasing.get(slot)
    }

    /// Free slots.
    #[inline]
    pub fn free_count(&self) -> u32 {
        self.free_count
    }

    /// Slots.
    pub fn slots(&self) -> u32 {
        self.n
    }

    /// Takes the next free slot at or after the free-slot pointer (cyclically), marks it
    /// used and advances the pointer past it.
    pub fn alloc(&mut self) -> Option<u32> {
        if self.free_count == 0 {
            return None;
        }
        let words = self.used.0.len();
        let start = self.free_ptr as usize;
        for k in 0..=words {
            let w = (start / 64 + k) % words;
            let taken = self.used.0[w] | self.held.0[w] | self.releasing.0[w];
            let mut free = !taken;
            if k == 0 {
                // In the first word only bits at or after the pointer.
                free &= u64::MAX << (start % 64);
            }
            if w == words - 1 && !self.n.is_multiple_of(64) {
                free &= (1u64 << (self.n % 64)) - 1;
            }
            if free != 0 {
                let slot = (w * 64) as u32 + free.trailing_zeros();
                self.used.set(slot, true);
                self.free_count -= 1;
                self.free_ptr = if slot + 1 == self.n { 0 } else { slot + 1 };
                return Some(slot);
            }
        }
        // Only bits before the pointer in its own word are left: restart from 0.
        self.free_ptr = 0;
        let s = self.alloc_from_zero();
        debug_assert!(
            s.is_some(),
            "free count {} but no free slot",
            self.free_count
        );
        s
    }

    fn alloc_from_zero(&mut self) -> Option<u32> {
        (0..self.n)
            .find(|&s| !self.used.get(s) && !self.held(s))
            .inspect(|&s| {
                self.used.set(s, true);
                self.free_count -= 1;
                self.free_ptr = if s + 1 == self.n { 0 } else { s + 1 };
            })
    }

    /// Marks a slot used (recovery).
    pub fn mark_used(&mut self, slot: u32) {
        debug_assert!(!self.used.get(slot) && !self.held(slot));
        self.used.set(slot, true);
        self.free_count -= 1;
    }

    /// Frees a used slot (flushed): clears every bit.
    pub fn free(&mut self, slot: u32) {
        debug_assert!(self.used.get(slot));
        self.used.set(slot, false);
        self.fresh.set(slot, false);
        self.busy.set(slot, false);
        self.flushing.set(slot, false);
        self.free_count += 1;
    }

    /// A used slot was superseded by a copy in another slot: it becomes held.
    pub fn hold(&mut self, slot: u32) {
        debug_assert!(self.used.get(slot) && !self.flushing.get(slot));
        self.used.set(slot, false);
        self.fresh.set(slot, false);
        self.busy.set(slot, false);
        self.held.set(slot, true);
    }

    /// A promise sync starts: nothing written so far is fresh any more, and every held
    /// slot will be released when the sync completes.
    pub fn start_sync(&mut self) {
        self.fresh.clear_all();
        for (r, h) in self.releasing.0.iter_mut().zip(self.held.0.iter_mut()) {
            *r |= *h;
            *h = 0;
        }
    }

    /// A promise sync completed: the slots it was to release become free. Returns how
    /// many.
    pub fn finish_sync(&mut self) -> u32 {
        let n = self.releasing.count() as u32;
        self.releasing.clear_all();
        self.free_count += n;
        n
    }

    /// Used slots.
    pub fn used_count(&self) -> usize {
        self.used.count()
    }

    /// Held or releasing slots.
    pub fn held_count(&self) -> usize {
        self.held.count() + self.releasing.count()
    }

    /// Bytes of memory the bitmaps hold.
    pub fn memory_bytes(&self) -> usize {
        6 * self.used.0.len() * 8
    }

    /// Checks the invariants of the module docs.
    pub fn check(&self) -> Result<(), String> {
        let mut err = String::new();
        let mut free = 0u32;
        for s in 0..self.n {
            let (u, h, r) = (self.used.get(s), self.held.get(s), self.releasing.get(s));
            if (h || r) && u {
                let _ = write!(err, "slot {s} is used and held; ");
            }
            if (self.busy.get(s) || self.flushing.get(s)) && !u {
                let _ = write!(err, "slot {s} busy or flushing but not used; ");
            }
            if self.busy.get(s) && self.flushing.get(s) {
                let _ = write!(err, "slot {s} busy and flushing; ");
            }
            free += u32::from(!u && !h && !r);
        }
        if free != self.free_count {
            let _ = write!(
                err,
                "free count {} but {free} free slots; ",
                self.free_count
            );
        }
        if self.free_ptr >= self.n {
            let _ = write!(
                err,
                "free pointer {} beyond {} slots; ",
                self.free_ptr, self.n
            );
        }
        if err.is_empty() {
            Ok(())
        } else {
            Err(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_remove_with_collisions() {
        let mut t = Sbtt::new(100);
        for s in 0..100u32 {
            t.insert(u64::from(s) * 1000, s);
        }
        t.check().unwrap();
        for s in (0..100u32).step_by(3) {
            assert_eq!(t.remove(u64::from(s) * 1000), Some(s));
            t.check().unwrap();
        }
        for s in 0..100u32 {
            let want = (s % 3 != 0).then_some(s);
            assert_eq!(t.get(u64::from(s) * 1000), want);
        }
        assert_eq!(t.replace(1000, 0), Some(1));
        assert_eq!(t.get(1000), Some(0));
        t.check().unwrap();
        assert!(t.memory_bytes() <= 100 * 14 + 8);
    }

    #[test]
    fn alloc_walks_the_pointer_and_wraps() {
        let mut b = SlotBits::new(70);
        let got: Vec<u32> = (0..70).map(|_| b.alloc().unwrap()).collect();
        assert_eq!(got, (0..70).collect::<Vec<_>>());
        assert_eq!(b.alloc(), None);
        b.free(5);
        b.free(66);
        assert_eq!(b.alloc(), Some(5));
        assert_eq!(b.alloc(), Some(66));
        b.hold(10);
        assert_eq!(b.alloc(), None, "held slots are not free");
        b.start_sync();
        assert_eq!(b.alloc(), None, "releasing slots are not free");
        assert_eq!(b.finish_sync(), 1);
        assert_eq!(b.alloc(), Some(10));
        b.check().unwrap();
    }
}
