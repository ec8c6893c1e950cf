//! The NAND array: geometry, latencies, per-page stamps, per-block erase counts, and the
//! recorder of the flash operations each host request causes.
//!
//! Reference chip (NIPU paper, Table 1, Samsung 4 GB SLC, K9XXG08XXM): 4 KB page read to
//! register 25 µs, page program 200 µs, 256 KB (64-page) block erase 1,500 µs.
//!
//! # Model
//! A *block* is the FTL's erase unit of `pages_per_block` pages. Its pages are interleaved
//! over the `channels` (page `i` of a block sits on channel `i % channels`): a block is a
//! super-block formed by ganging one physical block of every channel, as multi-channel
//! SSDs do. Reading or programming a page occupies its channel for the read (program) time
//! plus the page's transfer over the channel bus; erasing a block occupies every channel it
//! spans for the erase time (the parts are erased in parallel). Programming a page into a
//! different block than the channel's previous program may cost `block_switch_us` extra (the
//! controller's per-block context: cache-program pipeline restart and map update; zero on
//! modern devices).
//!
//! The array enforces the NAND rules (a page is programmed once between erases) with
//! `debug_assert!`, stores a [`Stamp`] (logical page, write sequence) per programmed page so
//! invariant checks can prove that a mapping returns the newest copy, and keeps erase counts
//! per block (wear).

use serde::{Deserialize, Serialize};

/// Most channels a NAND array may have (keeps per-request cost arrays fixed-size).
pub const MAX_CHANNELS: u32 = 256;

/// Sentinel for "no page / no block".
pub const NONE: u32 = u32::MAX;

/// Shape of a NAND array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NandGeometry {
    /// Bytes per flash page (the FTL's mapping unit).
    pub page_bytes: u32,
    /// Pages per block (the erase unit).
    pub pages_per_block: u32,
    /// Blocks in the array (logical capacity plus over-provisioning).
    pub blocks: u32,
    /// Independent channels (or dies) that work in parallel.
    pub channels: u32,
}

impl NandGeometry {
    /// Bytes per block.
    pub fn block_bytes(&self) -> u64 {
        u64::from(self.page_bytes) * u64::from(self.pages_per_block)
    }

    /// Physical pages in the array.
    pub fn pages(&self) -> u64 {
        u64::from(self.blocks) * u64::from(self.pages_per_block)
    }

    /// Checks that the geometry is usable.
    pub fn validate(&self) -> Result<(), String> {
        if self.page_bytes == 0 || self.pages_per_block == 0 || self.blocks == 0 {
            return Err(format!("empty NAND geometry {self:?}"));
        }
        if self.pages_per_block > u32::from(u16::MAX) {
            return Err(format!(
                "{} pages per block is more than {}",
                self.pages_per_block,
                u16::MAX
            ));
        }
        if self.channels == 0 || self.channels > MAX_CHANNELS {
            return Err(format!(
                "{} channels: must be 1..={MAX_CHANNELS}",
                self.channels
            ));
        }
        if self.pages() >= u64::from(NONE) {
            return Err(format!(
                "{} physical pages do not fit the 32-bit page numbers",
                self.pages()
            ));
        }
        Ok(())
    }
}

/// Latencies of the NAND operations, microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NandTiming {
    /// Page read (array to register).
    pub read_us: f64,
    /// Page program (register to array).
    pub program_us: f64,
    /// Block erase.
    pub erase_us: f64,
    /// Transfer over the channel bus, nanoseconds per byte, added to every page read and
    /// program (0 = ignored).
    pub transfer_ns_per_byte: f64,
    /// Extra cost of programming into a different block than the channel's previous
    /// program (0 = none).
    pub block_switch_us: f64,
}

impl NandTiming {
    /// The reference chip (NIPU paper Table 1): 25 µs read, 200 µs program, 1.5 ms erase.
    pub const REFERENCE: NandTiming = NandTiming {
        read_us: 25.0,
        program_us: 200.0,
        erase_us: 1500.0,
        transfer_ns_per_byte: 0.0,
        block_switch_us: 0.0,
    };
}

/// What a physical page holds: the logical page and the write sequence number of the host
/// write whose data it carries (garbage-collection copies keep the stamp of their source).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Logical page number; [`NONE`] when the page is erased.
    pub lpn: u32,
    /// Host write sequence number (1-based; 0 when erased).
    pub seq: u64,
}

impl Stamp {
    /// The stamp of an erased page.
    pub const ERASED: Stamp = Stamp { lpn: NONE, seq: 0 };

    /// Whether the page is erased (programmable).
    #[inline]
    pub fn is_erased(&self) -> bool {
        self.lpn == NONE
    }
}

/// Flash operations counted since the array was built (or counters were reset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NandCounters {
    /// Page reads.
    pub reads: u64,
    /// Page programs.
    pub programs: u64,
    /// Block erases.
    pub erases: u64,
}

/// Busy time per channel of the operations recorded since the last
/// [`Nand::take_cost`], nanoseconds. Fixed size: recording is allocation-free.
#[derive(Debug, Clone)]
pub struct OpCost {
    /// Busy nanoseconds per channel (only the first `channels` entries are used).
    pub channel_ns: Vec<u64>,
    /// Page reads recorded.
    pub reads: u32,
    /// Page programs recorded.
    pub programs: u32,
    /// Block erases recorded.
    pub erases: u32,
}

impl OpCost {
    /// An empty cost for `channels` channels.
    pub fn new(channels: u32) -> Self {
        Self {
            channel_ns: vec![0; channels as usize],
            reads: 0,
            programs: 0,
            erases: 0,
        }
    }

    /// Resets to no operations.
    pub fn clear(&mut self) {
        self.channel_ns.iter_mut().for_each(|c| *c = 0);
        self.reads = 0;
        self.programs = 0;
        self.erases = 0;
    }

    /// Busy time of the busiest channel: the latency if nothing else queues.
    pub fn critical_path_ns(&self) -> u64 {
        self.channel_ns.iter().copied().max().unwrap_or(0)
    }

    /// Whether no operation was recorded.
    pub fn is_empty(&self) -> bool {
        self.reads == 0 && self.programs == 0 && self.erases == 0
    }
}

fn us_to_ns(us: f64) -> u64 {
    (us * 1000.0).round().max(0.0) as u64
}

/// A NAND array with its physical state and operation recorder.
#[derive(Debug, Clone)]
pub struct Nand {
    geo: NandGeometry,
    timing: NandTiming,
    read_ns: u64,
    program_ns: u64,
    erase_ns: u64,
    switch_ns: u64,
    ppb: u32,
    channels: u32,
    stamps: Vec<Stamp>,
    erase_counts: Vec<u32>,
    last_block: Vec<u32>,
    cost: OpCost,
    counters: NandCounters,
}

impl Nand {
    /// A fully erased array.
    pub fn new(geo: NandGeometry, timing: NandTiming) -> Result<Self, String> {
        geo.validate()?;
        let xfer_ns = timing.transfer_ns_per_byte * f64::from(geo.page_bytes);
        Ok(Self {
            geo,
            timing,
            read_ns: us_to_ns(timing.read_us) + xfer_ns.round().max(0.0) as u64,
            program_ns: us_to_ns(timing.program_us) + xfer_ns.round().max(0.0) as u64,
            erase_ns: us_to_ns(timing.erase_us),
            switch_ns: us_to_ns(timing.block_switch_us),
            ppb: geo.pages_per_block,
            channels: geo.channels,
            stamps: vec![Stamp::ERASED; geo.pages() as usize],
            erase_counts: vec![0; geo.blocks as usize],
            last_block: vec![NONE; geo.channels as usize],
            cost: OpCost::new(geo.channels),
            counters: NandCounters::default(),
        })
    }

    /// The geometry.
    pub fn geometry(&self) -> NandGeometry {
        self.geo
    }

    /// The latencies.
    pub fn timing(&self) -> NandTiming {
        self.timing
    }

    /// Pages per block.
    #[inline]
    pub fn pages_per_block(&self) -> u32 {
        self.ppb
    }

    /// Blocks in the array.
    #[inline]
    pub fn blocks(&self) -> u32 {
        self.geo.blocks
    }

    /// Channel of a physical page.
    #[inline]
    pub fn channel_of(&self, ppn: u32) -> usize {
        ((ppn % self.ppb) % self.channels) as usize
    }

    /// The stamp of a physical page.
    #[inline]
    pub fn stamp(&self, ppn: u32) -> Stamp {
        self.stamps[ppn as usize]
    }

    /// Whether a physical page is erased.
    #[inline]
    pub fn is_erased(&self, ppn: u32) -> bool {
        self.stamps[ppn as usize].is_erased()
    }

    /// Reads a page: records the operation and returns its stamp.
    #[inline]
    pub fn read(&mut self, ppn: u32) -> Stamp {
        debug_assert!(!self.is_erased(ppn), "read of erased page {ppn}");
        let ch = self.channel_of(ppn);
        self.cost.channel_ns[ch] += self.read_ns;
        self.cost.reads += 1;
        self.counters.reads += 1;
        self.stamps[ppn as usize]
    }

    /// Programs an erased page with `stamp`.
    #[inline]
    pub fn program(&mut self, ppn: u32, stamp: Stamp) {
        debug_assert!(self.is_erased(ppn), "program of non-erased page {ppn}");
        debug_assert!(!stamp.is_erased());
        let ch = self.channel_of(ppn);
        let block = ppn / self.ppb;
        let mut ns = self.program_ns;
        if self.last_block[ch] != block {
            self.last_block[ch] = block;
            ns += self.switch_ns;
        }
        self.cost.channel_ns[ch] += ns;
        self.cost.programs += 1;
        self.counters.programs += 1;
        self.stamps[ppn as usize] = stamp;
    }

    /// Erases a block: every page becomes erased and the block's erase count grows.
    pub fn erase(&mut self, block: u32) {
        let first = (block * self.ppb) as usize;
        self.stamps[first..first + self.ppb as usize].fill(Stamp::ERASED);
        self.erase_counts[block as usize] += 1;
        let spanned = self.channels.min(self.ppb) as usize;
        for c in &mut self.cost.channel_ns[..spanned] {
            *c += self.erase_ns;
        }
        self.cost.erases += 1;
        self.counters.erases += 1;
    }

    /// Whether every page of `block` is erased.
    pub fn block_is_erased(&self, block: u32) -> bool {
        let first = (block * self.ppb) as usize;
        self.stamps[first..first + self.ppb as usize]
            .iter()
            .all(Stamp::is_erased)
    }

    /// Moves the operations recorded since the last call into `out` (which is cleared
    /// first) and starts a new recording. Allocation-free.
    pub fn take_cost(&mut self, out: &mut OpCost) {
        std::mem::swap(&mut self.cost, out);
        self.cost.clear();
    }

    /// Discards the recorded operations.
    pub fn discard_cost(&mut self) {
        self.cost.clear();
    }

    /// Operation counters.
    pub fn counters(&self) -> NandCounters {
        self.counters
    }

    /// Resets the operation counters (erase counts, the wear, are kept).
    pub fn reset_counters(&mut self) {
        self.counters = NandCounters::default();
        self.cost.clear();
    }

    /// Erase count of every block (wear).
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_counts
    }

    /// Wear summary over all blocks.
    pub fn wear(&self) -> WearSummary {
        let n = self.erase_counts.len().max(1) as f64;
        WearSummary {
            min_erases: self.erase_counts.iter().copied().min().unwrap_or(0),
            max_erases: self.erase_counts.iter().copied().max().unwrap_or(0),
            mean_erases: self.erase_counts.iter().map(|&c| f64::from(c)).sum::<f64>() / n,
        }
    }
}

/// Erase counts across the blocks of an array.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WearSummary {
    /// Fewest erases of any block.
    pub min_erases: u32,
    /// Most erases of any block.
    pub max_erases: u32,
    /// Mean erases per block.
    pub mean_erases: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Nand {
        let geo = NandGeometry {
            page_bytes: 4096,
            pages_per_block: 4,
            blocks: 3,
            channels: 2,
        };
        Nand::new(geo, NandTiming::REFERENCE).expect("geometry")
    }

    #[test]
    fn program_read_erase_cost_and_count() {
        let mut n = small();
        n.program(0, Stamp { lpn: 7, seq: 1 });
        n.program(1, Stamp { lpn: 8, seq: 2 });
        assert_eq!(n.read(1).lpn, 8);
        let mut c = OpCost::new(2);
        n.take_cost(&mut c);
        // channel 0: one program; channel 1: one program and one read.
        assert_eq!(c.channel_ns, vec![200_000, 225_000]);
        n.erase(0);
        assert!(n.block_is_erased(0));
        n.take_cost(&mut c);
        assert_eq!(c.channel_ns, vec![1_500_000, 1_500_000]);
        assert_eq!(n.erase_counts(), &[1, 0, 0]);
        assert_eq!(
            n.counters(),
            NandCounters {
                reads: 1,
                programs: 2,
                erases: 1
            }
        );
    }

    #[test]
    fn bad_geometry_is_refused() {
        let geo = NandGeometry {
            page_bytes: 4096,
            pages_per_block: 64,
            blocks: 10,
            channels: 0,
        };
        assert!(Nand::new(geo, NandTiming::REFERENCE).is_err());
    }
}
