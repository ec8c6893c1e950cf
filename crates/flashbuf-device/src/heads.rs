//! The kept bytes of metadata-only writes ([`Device::write_head`](crate::Device::write_head)),
//! in a dense table instead of the device's byte image.
//!
//! A metadata-only run (`--data none`) writes a 64-byte head per 8 KB page; kept in a
//! flat image, every head would touch its own memory page (half the data set's size in
//! memory, and a page fault and a cache miss per request — 55% of an LRU replay's time on
//! the memory device, measured with `perf`). The table keeps heads of up to
//! [`HEAD_MAX_BYTES`] bytes for requests of one length (the first head request's, a power
//! of two) at offsets aligned to it: slot `offset / granule`.
//!
//! Byte requests stay exact: a byte write first moves the heads whose bytes it overlaps into the image
//! (then drops them), a byte read overlays the heads it overlaps, and a shrink moves or
//! drops the heads beyond the new end — so a device reads back what was written whatever
//! mix of requests wrote it. A head the table cannot take (longer, another length,
//! misaligned, or beyond [`MAX_SLOTS`]) is the caller's to write into its image.

mod hints;

pub(crate) use hints::HeadHints;
use std::sync::Arc;

/// Longest head the table keeps.
pub(crate) const HEAD_MAX_BYTES: usize = 64;

/// Most slots the table grows to (4 Mi slots: 260 MiB; 32 GiB of 8 KB pages); heads of
/// pages beyond go into the image.
pub(crate) const MAX_SLOTS: u64 = 1 << 22;

/// One slot's bytes, aligned to a cache line: a head read or written touches one line,
/// not two (a `[u8; 64]` array has alignment 1, and the table's allocation is not
/// line-aligned).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Slot([u8; HEAD_MAX_BYTES]);

/// Slots per chunk (256 KiB): the table grows a chunk at a time, never copying what it
/// holds (a growing aligned vector cannot be remapped in place, so doubling it would copy
/// and, for a moment, hold twice the table: +20 MiB of peak memory on a TPC-C replay).
const CHUNK_SLOTS: usize = 4096;

/// The slots' bytes, chunk by chunk.
#[derive(Debug, Default)]
struct Chunks(Vec<Box<[Slot]>>);

impl Chunks {
    fn slot(&self, i: usize) -> &[u8; HEAD_MAX_BYTES] {
        &self.0[i / CHUNK_SLOTS][i % CHUNK_SLOTS].0
    }

    fn slot_mut(&mut self, i: usize) -> &mut [u8; HEAD_MAX_BYTES] {
        &mut self.0[i / CHUNK_SLOTS][i % CHUNK_SLOTS].0
    }

    /// Makes slot `i` exist.
    fn reach(&mut self, i: usize) {
        while self.0.len() <= i / CHUNK_SLOTS {
            self.0
                .push(vec![Slot([0; HEAD_MAX_BYTES]); CHUNK_SLOTS].into_boxed_slice());
        }
    }

    /// Drops the chunks wholly beyond the first `n` slots.
    fn truncate(&mut self, n: usize) {
        self.0.truncate(n.div_ceil(CHUNK_SLOTS));
    }
}

/// The slot of a request of `len` bytes at `offset` in a table of `granule` (0: none yet;
/// else a power of two, so a shift and a mask, no division: this runs on every miss).
#[inline(always)]
fn slot_of(granule: u64, offset: u64, len: usize) -> Option<usize> {
    let served = granule != 0 && len as u64 == granule && offset & (granule - 1) == 0;
    let i = offset.wrapping_shr(granule.trailing_zeros()); // granule 0: not served anyway
    (served && i < MAX_SLOTS).then_some(i as usize)
}

/// What [`Heads::get`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Got {
    /// The head, copied.
    Head,
    /// A request the table serves, with no head kept: the image alone holds its bytes.
    NoHead,
    /// A request the table does not serve: the image, with the heads overlaid.
    NotServed,
}

/// Heads by slot (module docs).
#[derive(Debug, Default)]
pub(crate) struct Heads {
    /// Request length the table serves; 0 until the first head request.
    granule: u64,
    /// Kept bytes per slot; 0 = no head.
    lens: Vec<u8>,
    bytes: Chunks,
    /// Slots with a head.
    count: usize,
    /// The layout published for lock-free prefetch hints ([`HeadHints`]).
    hints: Arc<HeadHints>,
}

impl Heads {
    /// The slot of a request of `len` bytes at `offset`, if the table serves it.
    #[inline]
    fn slot(&self, offset: u64, len: usize) -> Option<usize> {
        slot_of(self.granule, offset, len)
    }

    /// Keeps `head` of the request `(offset, len)`; `false`: the caller writes it into its
    /// image (after [`Heads::before_byte_write`] of its range).
    pub(crate) fn put(&mut self, offset: u64, len: usize, head: &[u8]) -> bool {
        if head.is_empty() || head.len() > HEAD_MAX_BYTES || head.len() >= len {
            return false;
        }
        if self.granule == 0 && len.is_power_of_two() {
            self.granule = len as u64;
            self.hints.publish_granule(self.granule);
        }
        let Some(i) = self.slot(offset, len) else {
            return false;
        };
        if i >= self.lens.len() {
            self.lens.resize(i + 1, 0);
            self.hints.publish_lens(&self.lens);
            let chunks = self.bytes.0.len();
            self.bytes.reach(i);
            if self.bytes.0.len() != chunks {
                self.hints.publish_chunks(&self.bytes.0);
            }
        }
        if self.lens[i] == 0 {
            self.count += 1;
        }
        self.lens[i] = head.len() as u8;
        let slot = self.bytes.slot_mut(i);
        match <&[u8; HEAD_MAX_BYTES]>::try_from(head) {
            Ok(whole) => *slot = *whole, // no call to `memcpy`
            Err(_) => slot[..head.len()].copy_from_slice(head),
        }
        true
    }

    /// Fills `head` from the table if it holds the request's head ([`Got::Head`]). Else
    /// the caller reads its image: only the image for [`Got::NoHead`] (a request the table
    /// serves whose slot is empty: no other slot's head reaches into it), the image with
    /// [`Heads::overlay`] for [`Got::NotServed`].
    pub(crate) fn get(&self, offset: u64, len: usize, head: &mut [u8]) -> Got {
        let Some(i) = self.slot(offset, len) else {
            return Got::NotServed;
        };
        let n = match self.lens.get(i) {
            Some(&n) if n != 0 => n as usize,
            // A head ends before the next slot (`put`: shorter than the request), so a read
            // within this request's slot meets no other head.
            _ if head.len() as u64 <= self.granule => return Got::NoHead,
            _ => return Got::NotServed,
        };
        let slot = self.bytes.slot(i);
        if let (HEAD_MAX_BYTES, Ok(whole)) = (n, <&mut [u8; HEAD_MAX_BYTES]>::try_from(&mut *head))
        {
            // The metadata mode's case: a whole slot, copied without a call to `memcpy`.
            *whole = *slot;
            return Got::Head;
        }
        let k = n.min(head.len());
        head[..k].copy_from_slice(&slot[..k]);
        head[k..].fill(0);
        Got::Head
    }

    /// The table's layout for lock-free prefetch hints (they follow every change).
    pub(crate) fn hints(&self) -> Arc<HeadHints> {
        Arc::clone(&self.hints)
    }

    /// The slots a byte range `[offset, offset + n)` overlaps.
    fn overlapped(&self, offset: u64, n: usize) -> std::ops::Range<usize> {
        if self.count == 0 || n == 0 {
            return 0..0;
        }
        let g = self.granule;
        let first = (offset / g) as usize;
        let last = ((offset + n as u64 - 1) / g) as usize;
        first.min(self.lens.len())..(last + 1).min(self.lens.len())
    }

    /// Before a byte write of `[offset, offset + n)`: the heads whose bytes it overlaps go
    /// into the image through `write_image(offset, bytes)` and leave the table.
    pub(crate) fn before_byte_write(
        &mut self,
        offset: u64,
        n: usize,
        mut write_image: impl FnMut(u64, &[u8]),
    ) {
        let end = offset + n as u64;
        for i in self.overlapped(offset, n) {
            let at = i as u64 * self.granule;
            if at < end && offset < at + u64::from(self.lens[i]) {
                self.evict(i, u64::MAX, &mut write_image);
            }
        }
    }

    /// After a byte read of `buf` at `offset`: the heads it overlaps, laid over it.
    pub(crate) fn overlay(&self, offset: u64, buf: &mut [u8]) {
        let end = offset + buf.len() as u64;
        for i in self.overlapped(offset, buf.len()) {
            let n = self.lens[i] as u64;
            if n == 0 {
                continue;
            }
            let at = i as u64 * self.granule;
            let (from, to) = (at.max(offset), (at + n).min(end));
            if from < to {
                let src = &self.bytes.slot(i)[(from - at) as usize..(to - at) as usize];
                buf[(from - offset) as usize..(to - offset) as usize].copy_from_slice(src);
            }
        }
    }

    /// Before the device shrinks to `len` bytes: heads from `len` on are dropped, the part
    /// below `len` of one that straddles it goes into the image.
    pub(crate) fn truncate(&mut self, len: u64, mut write_image: impl FnMut(u64, &[u8])) {
        if self.count == 0 {
            return;
        }
        let first = (len / self.granule) as usize;
        for i in first..self.lens.len() {
            self.evict(i, len, &mut write_image);
        }
        self.lens.truncate(first + 1);
        self.bytes.truncate(first + 1);
        self.hints.publish_lens(&self.lens);
        self.hints.publish_chunks(&self.bytes.0);
    }

    /// Moves slot `i`'s head (its bytes below `limit`) into the image and drops it.
    fn evict(&mut self, i: usize, limit: u64, write_image: &mut impl FnMut(u64, &[u8])) {
        let n = self.lens[i] as u64;
        if n == 0 {
            return;
        }
        let at = i as u64 * self.granule;
        let keep = n.min(limit.saturating_sub(at)) as usize;
        if keep > 0 {
            write_image(at, &self.bytes.slot(i)[..keep]);
        }
        self.lens[i] = 0;
        self.count -= 1;
    }

    /// Bytes of memory the table holds.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.lens.capacity() + self.bytes.0.len() * CHUNK_SLOTS * HEAD_MAX_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flat image with the table in front of it, as the devices use them.
    struct Dev {
        image: Vec<u8>,
        heads: Heads,
    }

    impl Dev {
        fn new() -> Self {
            Self {
                image: vec![0; 1 << 16],
                heads: Heads::default(),
            }
        }
        fn write(&mut self, off: u64, data: &[u8]) {
            let image = &mut self.image;
            self.heads.before_byte_write(off, data.len(), |o, b| {
                image[o as usize..o as usize + b.len()].copy_from_slice(b)
            });
            self.image[off as usize..off as usize + data.len()].copy_from_slice(data);
        }
        fn write_head(&mut self, off: u64, len: usize, head: &[u8]) {
            if !self.heads.put(off, len, head) {
                self.write(off, head);
            }
        }
        fn read(&self, off: u64, n: usize) -> Vec<u8> {
            let mut b = self.image[off as usize..off as usize + n].to_vec();
            self.heads.overlay(off, &mut b);
            b
        }
        fn read_head(&self, off: u64, len: usize, n: usize) -> Vec<u8> {
            let mut b = vec![0u8; n];
            match self.heads.get(off, len, &mut b) {
                Got::Head => {}
                Got::NoHead => {
                    b.copy_from_slice(&self.image[off as usize..off as usize + n]);
                    assert_eq!(b, self.read(off, n), "no head reaches into {off}");
                }
                Got::NotServed => b = self.read(off, n),
            }
            b
        }
    }

    #[test]
    fn heads_read_back_through_every_kind_of_request() {
        let mut d = Dev::new();
        d.write_head(4096, 4096, &[7; 64]);
        assert_eq!(d.heads.count, 1);
        assert!(
            d.image[4096..4160].iter().all(|&b| b == 0),
            "kept in the table"
        );
        assert_eq!(d.read_head(4096, 4096, 64), vec![7; 64]);
        // A byte read across the page sees the head.
        let r = d.read(4000, 200);
        assert_eq!(&r[96..160], &[7; 64][..]);
        assert!(r[..96].iter().all(|&b| b == 0) && r[160..].iter().all(|&b| b == 0));
        // A byte write over part of the head keeps the rest of it.
        d.write(4100, &[9; 4]);
        assert_eq!(d.heads.count, 0);
        let r = d.read_head(4096, 4096, 64);
        assert_eq!(&r[..4], &[7; 4]);
        assert_eq!(&r[4..8], &[9; 4]);
        assert_eq!(&r[8..], &[7; 56][..]);
    }

    #[test]
    fn requests_the_table_does_not_serve_go_to_the_image() {
        let mut d = Dev::new();
        d.write_head(8192, 4096, &[1; 32]);
        d.write_head(8192 + 512, 4096, &[2; 32]); // misaligned
        d.write_head(16384, 8192, &[3; 32]); // another length
        d.write_head(20480, 4096, &[4; 65]); // too long
        assert_eq!(d.heads.count, 1);
        assert_eq!(d.read_head(8192, 4096, 32), vec![1; 32]);
        assert_eq!(d.read(8192 + 512, 32), vec![2; 32]);
        assert_eq!(d.read_head(16384, 8192, 32), vec![3; 32]);
        assert_eq!(d.read(20480, 65), vec![4; 65]);
        let mut t = Heads::default();
        assert!(t.put(0, 512, &[1; 8]));
        assert!(!t.put(MAX_SLOTS * 512, 512, &[1; 8]), "beyond the table");
    }

    #[test]
    fn an_empty_slot_reads_the_image_alone() {
        let mut d = Dev::new();
        d.write_head(0, 4096, &[1; 64]);
        d.write_head(2 * 4096, 4096, &[3; 64]);
        d.write(4096, &[9; 100]); // bytes, not a head, between two heads
        let mut b = [0u8; 64];
        assert_eq!(d.heads.get(4096, 4096, &mut b), Got::NoHead);
        assert_eq!(d.read_head(4096, 4096, 64), vec![9; 64]);
        assert_eq!(
            d.heads.get(5 * 4096, 4096, &mut b),
            Got::NoHead,
            "beyond the slots"
        );
        assert_eq!(d.read_head(5 * 4096, 4096, 64), vec![0; 64]);
        assert_eq!(
            d.heads.get(4096 + 8, 4096, &mut b),
            Got::NotServed,
            "misaligned"
        );
        // A byte write over a head moves it to the image: its slot is empty, the image
        // holds it.
        d.write(2 * 4096 + 10, &[5; 2]);
        assert_eq!(d.heads.get(2 * 4096, 4096, &mut b), Got::NoHead);
        let r = d.read_head(2 * 4096, 4096, 64);
        assert_eq!(
            (&r[..10], &r[10..12], &r[12..]),
            (&[3; 10][..], &[5; 2][..], &[3; 52][..])
        );
    }

    #[test]
    fn hints_follow_the_table() {
        let mut d = Dev::new();
        let h = d.heads.hints();
        assert!(!h.prefetch(0, 4096), "nothing published yet");
        d.write_head(0, 4096, &[1; 64]);
        d.write_head((CHUNK_SLOTS as u64 + 5) * 4096, 4096, &[2; 64]);
        assert!(h.prefetch(4096, 4096) && h.prefetch((CHUNK_SLOTS as u64 + 5) * 4096, 4096));
        assert!(
            !h.prefetch(4097, 4096) && !h.prefetch(0, 512),
            "not the table's requests"
        );
        assert!(
            !h.prefetch((CHUNK_SLOTS as u64 + 6) * 4096, 4096),
            "beyond its slots"
        );
        for c in 0..2 {
            let want = d.heads.bytes.0[c].as_ptr() as usize;
            assert_eq!(h.chunk_address(c), want, "chunk {c}");
        }
        let image = &mut d.image;
        d.heads.truncate(4096, |o, b| {
            image[o as usize..o as usize + b.len()].copy_from_slice(b)
        });
        assert_eq!(h.chunk_address(1), 0, "a dropped chunk is unpublished");
        assert!(h.prefetch(0, 4096) && !h.prefetch(3 * 4096, 4096));
        assert_eq!(
            d.read_head(0, 4096, 64),
            vec![1; 64],
            "hints change nothing"
        );
    }

    #[test]
    fn a_shrink_drops_heads_beyond_and_keeps_what_stays() {
        let mut d = Dev::new();
        for p in 0..8u64 {
            d.write_head(p * 4096, 4096, &[p as u8 + 1; 64]);
        }
        let image = &mut d.image;
        d.heads.truncate(3 * 4096 + 16, |o, b| {
            image[o as usize..o as usize + b.len()].copy_from_slice(b)
        });
        assert_eq!(d.heads.count, 3);
        assert_eq!(&d.image[3 * 4096..3 * 4096 + 16], &[4; 16][..]);
        assert_eq!(d.image[3 * 4096 + 16], 0, "nothing beyond the new end");
        assert_eq!(d.read_head(2 * 4096, 4096, 64), vec![3; 64]);
        assert!(d.heads.memory_bytes() > 0);
    }
}
