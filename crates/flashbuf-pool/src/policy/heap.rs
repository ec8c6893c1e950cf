//! An indexed binary min-heap of frames keyed by a `u64` (a recency stamp): O(log n) push,
//! remove and pop, O(1) peek and membership test, no allocation after construction.
//!
//! CFLRU and CASA keep their clean pages in recency lists that only ever grow at the
//! most-recent end. A page that becomes clean *without* being referenced (the pool wrote
//! it back: a flush, or a cluster write-back of another policy's batch) belongs somewhere
//! in the middle of such a list; instead of searching for its place, those policies park it
//! here, keyed by its stamp, and take the older of the list's tail and the heap's minimum.

use flashbuf_core::FrameId;

const NIL: u32 = u32::MAX;

/// A min-heap of frames ordered by `(key, frame)`.
///
/// ```
/// use flashbuf_core::FrameId;
/// use flashbuf_pool::policy::heap::FrameHeap;
/// let mut h = FrameHeap::new(4);
/// h.push(FrameId(2), 30);
/// h.push(FrameId(0), 10);
/// h.push(FrameId(3), 20);
/// assert_eq!(h.peek(), Some((FrameId(0), 10)));
/// h.remove(FrameId(0));
/// assert_eq!(h.peek(), Some((FrameId(3), 20)));
/// assert!(h.contains(FrameId(2)) && !h.contains(FrameId(0)));
/// ```
#[derive(Debug, Clone)]
pub struct FrameHeap {
    heap: Vec<(u64, u32)>,
    pos: Vec<u32>,
}

impl FrameHeap {
    /// Bytes of state per frame (position index plus one heap entry).
    pub const BYTES_PER_FRAME: usize = 4 + 16;

    /// An empty heap for frames `0..frames_count`.
    pub fn new(frames_count: usize) -> Self {
        Self {
            heap: Vec::with_capacity(frames_count),
            pos: vec![NIL; frames_count],
        }
    }

    /// Number of frames in the heap.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether the heap is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Whether `f` is in the heap.
    #[inline]
    pub fn contains(&self, f: FrameId) -> bool {
        self.pos[f.index()] != NIL
    }

    /// The frame with the smallest key, and its key.
    #[inline]
    pub fn peek(&self) -> Option<(FrameId, u64)> {
        self.heap.first().map(|&(k, f)| (FrameId(f), k))
    }

    /// The entries in heap (not sorted) order.
    pub fn iter(&self) -> impl Iterator<Item = (FrameId, u64)> + '_ {
        self.heap.iter().map(|&(k, f)| (FrameId(f), k))
    }

    /// Adds `f` (not in the heap) with `key`.
    pub fn push(&mut self, f: FrameId, key: u64) {
        debug_assert!(!self.contains(f), "{f} already in the heap");
        let i = self.heap.len();
        self.heap.push((key, f.0));
        self.pos[f.index()] = i as u32;
        self.sift_up(i);
    }

    /// Removes `f` if present; returns its key.
    pub fn remove(&mut self, f: FrameId) -> Option<u64> {
        let i = self.pos[f.index()];
        if i == NIL {
            return None;
        }
        let i = i as usize;
        let key = self.heap[i].0;
        let last = self.heap.len() - 1;
        self.swap(i, last);
        self.heap.pop();
        self.pos[f.index()] = NIL;
        if i < self.heap.len() {
            self.sift_down(i);
            self.sift_up(i);
        }
        Some(key)
    }

    #[inline]
    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let p = (i - 1) / 2;
            if self.heap[i] < self.heap[p] {
                self.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && self.heap[l] < self.heap[m] {
                m = l;
            }
            if r < n && self.heap[r] < self.heap[m] {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }

    /// Checks heap order and the position index; `Err` names the first problem.
    pub fn check(&self) -> Result<(), String> {
        for (i, &(_, f)) in self.heap.iter().enumerate() {
            if self.pos[f as usize] != i as u32 {
                return Err(format!(
                    "heap: frame {f} at {i} but indexed at {}",
                    self.pos[f as usize]
                ));
            }
            if i > 0 && self.heap[i] < self.heap[(i - 1) / 2] {
                return Err(format!("heap: order broken at {i}"));
            }
        }
        let indexed = self.pos.iter().filter(|&&p| p != NIL).count();
        if indexed != self.heap.len() {
            return Err(format!(
                "heap: {indexed} frames indexed, {} in the heap",
                self.heap.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_after_random_removals() {
        let mut h = FrameHeap::new(64);
        let keys: Vec<u64> = (0..64u64).map(|i| (i * 37) % 64).collect();
        for (f, &k) in keys.iter().enumerate() {
            h.push(FrameId(f as u32), k);
            h.check().unwrap();
        }
        for f in (0..64).step_by(3) {
            assert_eq!(h.remove(FrameId(f)), Some(keys[f as usize]));
            h.check().unwrap();
        }
        let mut last = None;
        while let Some((f, k)) = h.peek() {
            assert!(last.is_none_or(|l| l < k));
            last = Some(k);
            h.remove(f);
            h.check().unwrap();
        }
        assert!(h.is_empty());
    }
}
