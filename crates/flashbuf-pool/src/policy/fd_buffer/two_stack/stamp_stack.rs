//! [`StampStack`]: the stamped representation of a group-based stack (every entry stamped
//! with its last move to the top, positions counted on [`Ranks`]); see the module
//! documentation of [`super::group_stack`].
//!
//! Finding, stamping and unstamping are inlined, and a move to the top leaves the old
//! time's `at` entry stale (dead times are told by the ranks). The clustered-cost
//! variant's first million TPC-C references at 1,241 frames: 1,300 M -> 1,271 M
//! instructions, 12.82 M -> 12.57 M L1 data misses (cachegrind); the same counts.

use super::group_stack::{Dropped, Found, NIL};
use super::ranks::Ranks;

/// The stamped representation.
#[derive(Debug, Clone)]
pub(super) struct StampStack {
    cap: usize,
    z: usize,
    /// `⌈2⁶⁴ / z⌉` (`None` for `z = 1`): `n / z = (n · z_magic) >> 64` for every 32-bit
    /// `n` (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019), a
    /// multiplication where a division took a tenth of the time of finding a group.
    z_magic: Option<u64>,
    page: Vec<u64>,
    /// The stamp (last move to the top, `NIL` if free) and threshold of each slot, side by
    /// side: an access reads both.
    entry: Vec<Entry>,
    /// The slot stamped with each live time (`NIL` or stale at a dead time).
    at: Vec<u32>,
    /// Live stamps.
    ranks: Ranks,
    /// The next stamp to hand out (every live stamp is below).
    now: u32,
    /// No live stamp is below this one (the bottom entry's stamp, or an earlier dead one).
    oldest: u32,
    len: usize,
    free: Vec<u32>,
    /// Counters read and stamps updated so far (the estimator's per-access work).
    work: u64,
}

/// `⌈2⁶⁴ / z⌉` for a group size `z ≥ 2`; `None` for `z = 1` (no division needed).
fn magic(z: usize) -> Option<u64> {
    (z >= 2).then(|| u64::MAX / z as u64 + 1)
}

/// `n / z` given `magic(z)`.
#[inline]
fn divide(n: u32, magic: Option<u64>) -> u32 {
    match magic {
        Some(m) => ((u128::from(n) * u128::from(m)) >> 64) as u32,
        None => n,
    }
}

/// A slot's stamp and present-condition threshold.
#[derive(Debug, Clone, Copy)]
struct Entry {
    stamp: u32,
    theta: u32,
}

impl StampStack {
    pub(super) fn new(cap: usize, group_size: usize) -> Self {
        assert!(cap > 0 && group_size > 0, "empty stack or group");
        assert!(cap < (NIL as usize - 1) / 4 - 64, "stack too deep");
        let n = cap + 1;
        let ranks = Ranks::new(4 * n);
        Self {
            cap,
            z: group_size,
            z_magic: magic(group_size),
            page: vec![0; n],
            entry: vec![
                Entry {
                    stamp: NIL,
                    theta: 0
                };
                n
            ],
            at: vec![NIL; ranks.capacity()],
            ranks,
            now: 0,
            oldest: 0,
            len: 0,
            free: (0..n as u32).rev().collect(),
            work: 0,
        }
    }

    /// Number of entries.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Whether the stack is empty.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Counters read and stamps updated so far.
    pub(super) fn work(&self) -> u64 {
        self.work
    }

    /// The entry in `slot` (a slot returned by [`GroupStack::push_top`] and not removed
    /// since): its group-based distance and threshold.
    #[inline(always)]
    pub(super) fn found(&mut self, slot: u32) -> Found {
        let e = self.entry[slot as usize];
        let (later, work) = self.ranks.count_later(e.stamp, self.now);
        self.work += u64::from(work);
        let g = divide(later, self.z_magic) as usize;
        let lo = (g * self.z + 1) as u32;
        let hi = ((g + 1) * self.z).min(self.len) as u32;
        Found {
            slot,
            lo,
            hi,
            distance: lo + (hi - lo) / 2,
            theta: e.theta,
        }
    }

    /// Sets the present-condition threshold of an entry.
    #[inline]
    pub(super) fn set_theta(&mut self, slot: u32, theta: u32) {
        self.entry[slot as usize].theta = theta;
    }

    /// Stamps `slot` with a new time (the top); the old stamp, if any, must be cleared.
    #[inline(always)]
    fn stamp_top(&mut self, slot: u32) {
        if self.now as usize == self.at.len() {
            self.renumber();
        }
        let t = self.now;
        self.now += 1;
        self.entry[slot as usize].stamp = t;
        self.at[t as usize] = slot;
        self.ranks.insert(t);
        self.work += 1;
    }

    /// Clears the stamp of `slot`.
    #[inline(always)]
    fn unstamp(&mut self, slot: u32) {
        let t = self.entry[slot as usize].stamp;
        self.ranks.remove(t);
        self.at[t as usize] = NIL;
        self.entry[slot as usize].stamp = NIL;
        self.work += 1;
    }

    /// Renumbers the live stamps `0..n` in order (the stamps ran out).
    fn renumber(&mut self) {
        let mut next = 0u32;
        let mut t = self.oldest;
        while let Some(live) = self.ranks.first_from(t, self.now) {
            let slot = self.at[live as usize];
            self.at[live as usize] = NIL;
            self.at[next as usize] = slot;
            self.entry[slot as usize].stamp = next;
            next += 1;
            t = live + 1;
        }
        self.ranks.reset_to_prefix(next as usize);
        self.work += u64::from(self.now);
        self.now = next;
        self.oldest = 0;
    }

    /// Moves entry `slot` to the top (distance 1): [`Self::unstamp`] then
    /// [`Self::stamp_top`], without marking the old time dead in `at` (dead times are
    /// told by the ranks; `at` is read at live times only).
    #[inline(always)]
    pub(super) fn move_to_top(&mut self, slot: u32) {
        let old = self.entry[slot as usize].stamp;
        if old + 1 == self.now {
            return;
        }
        self.ranks.remove(old);
        self.entry[slot as usize].stamp = NIL;
        self.work += 1;
        self.stamp_top(slot);
    }

    /// Pushes `page` (not in the stack) on top with threshold `theta`; drops the bottom
    /// entry if the stack would exceed its capacity. Returns the new entry's slot and the
    /// dropped entry, if any.
    pub(super) fn push_top(&mut self, page: u64, theta: u32) -> (u32, Option<Dropped>) {
        let x = match self.free.pop() {
            Some(x) => x,
            None => unreachable!("a stack of cap {} has cap + 1 slots", self.cap),
        };
        self.page[x as usize] = page;
        self.entry[x as usize].theta = theta;
        self.stamp_top(x);
        self.len += 1;
        let mut dropped = None;
        if self.len > self.cap {
            let b = self.bottom();
            dropped = Some(Dropped {
                slot: b,
                page: self.page[b as usize],
            });
            self.remove(b);
        }
        (x, dropped)
    }

    /// The bottom (oldest) entry of a non-empty stack.
    fn bottom(&mut self) -> u32 {
        match self.ranks.first_from(self.oldest, self.now) {
            Some(t) => {
                self.work += u64::from(t - self.oldest) / 64 + 1;
                self.oldest = t;
                self.at[t as usize]
            }
            None => unreachable!("bottom of an empty stack"),
        }
    }

    /// Removes entry `slot`.
    pub(super) fn remove(&mut self, slot: u32) {
        self.unstamp(slot);
        self.len -= 1;
        self.free.push(slot);
    }

    /// Entries from the top: `(page, slot, θ)`.
    pub(super) fn walk(&self) -> Vec<(u64, u32, u32)> {
        (self.oldest..self.now)
            .rev()
            .filter(|&t| self.ranks.contains(t))
            .map(|t| self.at[t as usize])
            .map(|s| (self.page[s as usize], s, self.entry[s as usize].theta))
            .collect()
    }

    /// Checks stamps, counts and the capacity.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.len > self.cap {
            return Err(format!("stack holds {} > cap {}", self.len, self.cap));
        }
        let live = self.ranks.check()?;
        if live != self.len {
            return Err(format!("{live} live stamps for {} entries", self.len));
        }
        let mut stamped = 0usize;
        for (s, t) in self.entry.iter().map(|e| e.stamp).enumerate() {
            if t == NIL {
                continue;
            }
            stamped += 1;
            if t < self.oldest || t >= self.now || self.at[t as usize] as usize != s {
                return Err(format!("slot {s}: stamp {t} not mapped back"));
            }
            if !self.ranks.contains(t) {
                return Err(format!("slot {s}: stamp {t} not live"));
            }
        }
        if stamped != self.len || self.free.len() != self.entry.len() - self.len {
            return Err(format!(
                "{stamped} stamped slots, {} free, length {}",
                self.free.len(),
                self.len
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_division_is_exact_for_32_bit_counts() {
        for z in 1..=300usize {
            let m = magic(z);
            let edge = [0u32, 1, 2, u32::MAX, u32::MAX - 1, u32::MAX / 2];
            let near = (1..40u32).flat_map(|k| [k * z as u32, k * z as u32 - 1]);
            for n in edge
                .into_iter()
                .chain(near)
                .chain((0..5_000).map(|i| i * 7919))
            {
                assert_eq!(divide(n, m), n / z as u32, "{n} / {z}");
            }
        }
    }
}
