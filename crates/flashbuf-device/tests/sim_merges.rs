//! Each merge kind happens, with the expected counts, on a crafted write sequence.

use flashbuf_device::sim::{build_ftl, Ftl, FtlKind, FtlStats, Nand, NandGeometry, NandTiming};

const PPB: u32 = 8;
const LBNS: u32 = 12;

fn ftl(kind: FtlKind, extra: u32) -> Box<dyn Ftl> {
    let geo = NandGeometry {
        page_bytes: 4096,
        pages_per_block: PPB,
        blocks: LBNS + extra,
        channels: 1,
    };
    let nand = Nand::new(geo, NandTiming::REFERENCE).expect("geometry");
    build_ftl(kind, nand, LBNS * PPB, 1).expect("ftl")
}

struct Writer {
    f: Box<dyn Ftl>,
    seq: u64,
}

impl Writer {
    fn w(&mut self, lbn: u32, off: u32) {
        self.seq += 1;
        self.f.write(lbn * PPB + off, self.seq);
        self.f.check_invariants().expect("invariants");
    }
    fn prefill(&mut self) {
        for lbn in 0..LBNS {
            for off in 0..PPB {
                self.w(lbn, off);
            }
        }
        self.f.reset_stats();
    }
    fn stats(&self) -> FtlStats {
        self.f.stats()
    }
}

#[test]
fn first_writes_go_in_place_without_merges() {
    let mut w = Writer {
        f: ftl(FtlKind::Bast { log_blocks: 2 }, 3),
        seq: 0,
    };
    w.prefill();
    w.seq = 0;
    let s = w.stats();
    assert_eq!((s.erases, s.flash_programs, s.full_merges), (0, 0, 0));
}

#[test]
fn bast_switch_partial_and_full_merges() {
    let mut w = Writer {
        f: ftl(FtlKind::Bast { log_blocks: 2 }, 3),
        seq: 0,
    };
    w.prefill();
    // Switch: logical block 0 rewritten in order fills its log block in order.
    for off in 0..PPB {
        w.w(0, off);
    }
    let s = w.stats();
    assert_eq!(
        (s.switch_merges, s.partial_merges, s.full_merges),
        (1, 0, 0)
    );
    assert_eq!((s.erases, s.copied_pages), (1, 0));
    // Block 1's log gets pages 0..3 in order; block 2's log gets page 5.
    for off in 0..3 {
        w.w(1, off);
    }
    w.w(2, 5);
    // A third logical block needs a log block: the LRU one (block 1's) is partially
    // merged: pages 3..7 are copied into it, the old data block is erased.
    w.w(3, 5);
    let s = w.stats();
    assert_eq!(
        (s.switch_merges, s.partial_merges, s.full_merges),
        (1, 1, 0)
    );
    assert_eq!((s.erases, s.copied_pages), (2, 5));
    // A fourth: block 2's log (page 5 at position 0) is out of order: full merge, all 8
    // pages copied to a free block, data and log blocks erased.
    w.w(4, 1);
    let s = w.stats();
    assert_eq!(
        (s.switch_merges, s.partial_merges, s.full_merges),
        (1, 1, 1)
    );
    assert_eq!((s.erases, s.copied_pages), (4, 13));
    // An overfilled log (a hot page rewritten 8 times) is fully merged when it fills.
    for _ in 0..PPB {
        w.w(3, 5);
    }
    let s = w.stats();
    assert_eq!(s.full_merges, 2);
    assert_eq!(s.host_programs, 8 + 3 + 1 + 1 + 1 + 8);
    assert_eq!(s.flash_programs, s.host_programs + s.copied_pages);
}

#[test]
fn fast_switch_partial_and_victim_full_merges() {
    let mut w = Writer {
        f: ftl(
            FtlKind::Fast {
                random_log_blocks: 2,
            },
            4,
        ),
        seq: 0,
    };
    w.prefill();
    // Switch: block 0 rewritten in order through the sequential log block.
    for off in 0..PPB {
        w.w(0, off);
    }
    let s = w.stats();
    assert_eq!(
        (s.switch_merges, s.partial_merges, s.full_merges, s.erases),
        (1, 0, 0, 1)
    );
    // Partial: block 1 pages 0..3 in the SW log, then an offset-0 write elsewhere evicts
    // it: pages 3..7 are copied from the data block.
    for off in 0..3 {
        w.w(1, off);
    }
    w.w(2, 0);
    let s = w.stats();
    assert_eq!(
        (s.switch_merges, s.partial_merges, s.full_merges),
        (1, 1, 0)
    );
    assert_eq!((s.erases, s.copied_pages), (2, 5));
    // Random updates fill the two RW log blocks: pages 3 then 4 of blocks 3..10.
    for i in 0..2 * PPB {
        w.w(3 + i % 8, 3 + i / 8);
    }
    assert_eq!(w.stats().full_merges, 0);
    // The next one reclaims the oldest RW block: a full merge of each of the 8 data
    // blocks it holds pages of (8 pages copied each), 8 old data blocks and the victim
    // erased. The second RW block's pages all became stale in the process.
    w.w(11, 3);
    let s = w.stats();
    assert_eq!(s.full_merges, 8);
    assert_eq!(s.copied_pages, 5 + 64);
    assert_eq!(s.erases, 2 + 8 + 1);
    // SW full merge: block 2's SW log (page 0) gets page 1 in order, then page 1 again
    // goes to the RW pool, so the SW copy is stale: the next offset-0 write fully merges.
    w.w(2, 1);
    w.w(2, 1);
    w.w(5, 0);
    let s = w.stats();
    assert_eq!(
        (s.switch_merges, s.partial_merges, s.full_merges),
        (1, 1, 9)
    );
    assert_eq!(s.flash_programs, s.host_programs + s.copied_pages);
}

#[test]
fn page_mapped_greedy_gc_picks_the_emptiest_block() {
    let mut w = Writer {
        f: ftl(FtlKind::PageMapped, 3),
        seq: 0,
    };
    w.prefill();
    // Rewrite logical block 5 twice: its old pages are all stale, so collection (which the
    // spare blocks make necessary) reclaims fully invalid blocks and copies nothing.
    for _ in 0..3 {
        for off in 0..PPB {
            w.w(5, off);
        }
    }
    let s = w.stats();
    assert!(s.gc_runs >= 1, "{s:?}");
    assert_eq!(s.copied_pages, 0, "{s:?}");
    assert_eq!(s.erases, s.gc_runs);
    // Uniform rewrites force copies: write amplification above 1.
    for i in 0..LBNS * PPB * 4 {
        w.w((i * 7) % LBNS, (i * 3) % PPB);
    }
    let s = w.stats();
    assert!(s.copied_pages > 0 && s.write_amplification() > 1.0, "{s:?}");
}
