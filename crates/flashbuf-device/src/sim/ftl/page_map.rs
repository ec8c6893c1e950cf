//! Page-mapped FTL with greedy garbage collection: the modern SSD model.
//!
//! Every logical page maps to any physical page. Writes append to one open (active) block;
//! when free blocks run low, garbage collection picks the sealed block with the fewest
//! valid pages (greedy; Kawaguchi et al., "A Flash-Memory Based File System", USENIX 1995;
//! analysed by Bux & Iliadis, "Performance of greedy garbage collection in flash-based
//! solid-state drives", Performance Evaluation 2010), copies its valid pages to the open
//! block and erases it. Over-provisioning (physical blocks beyond the logical capacity)
//! bounds the write amplification. Timings: the NIPU paper's reference chip unless a
//! profile says otherwise.
//!
//! Victim choice is O(pages per block): sealed blocks sit in buckets by valid count
//! (intrusive doubly linked lists), so a host write costs O(1) amortized and allocates
//! nothing.

use super::{check_location_map, merge_counters, Blocks, Ftl, FtlKind, FtlStats, Role};
use crate::sim::nand::{Nand, Stamp, NONE};

/// Page-mapped FTL with greedy garbage collection. See the module docs.
#[derive(Debug, Clone)]
pub struct PageMapFtl {
    nand: Nand,
    ppb: u32,
    logical_pages: u32,
    l2p: Vec<u32>,
    blocks: Blocks,
    active: u32,
    wp: u32,
    /// Heads of the valid-count buckets of sealed blocks (index = valid pages).
    bucket_head: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    stats: FtlStats,
}

impl PageMapFtl {
    /// An empty FTL over `nand` exporting `logical_pages` pages. Needs at least three spare
    /// blocks beyond the logical capacity (one open block, one for GC, one of slack).
    pub fn new(nand: Nand, logical_pages: u32, seed: u64) -> Result<Self, String> {
        let geo = nand.geometry();
        let ppb = geo.pages_per_block;
        let data_blocks = logical_pages.div_ceil(ppb);
        if geo.blocks < data_blocks + 3 {
            return Err(format!(
                "page-mapped FTL needs at least {} blocks for {logical_pages} logical pages, has {}",
                data_blocks + 3,
                geo.blocks
            ));
        }
        let n = geo.blocks as usize;
        let mut blocks = Blocks::new(geo.blocks, seed);
        let active = blocks.alloc(Role::Active);
        Ok(Self {
            nand,
            ppb,
            logical_pages,
            l2p: vec![NONE; logical_pages as usize],
            blocks,
            active,
            wp: 0,
            bucket_head: vec![NONE; ppb as usize + 1],
            next: vec![NONE; n],
            prev: vec![NONE; n],
            stats: FtlStats::default(),
        })
    }

    fn bucket_insert(&mut self, b: u32) {
        let v = self.blocks.valid[b as usize] as usize;
        let head = self.bucket_head[v];
        self.next[b as usize] = head;
        self.prev[b as usize] = NONE;
        if head != NONE {
            self.prev[head as usize] = b;
        }
        self.bucket_head[v] = b;
    }

    fn bucket_remove(&mut self, b: u32) {
        let v = self.blocks.valid[b as usize] as usize;
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            debug_assert_eq!(self.bucket_head[v], b);
            self.bucket_head[v] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
        self.next[b as usize] = NONE;
        self.prev[b as usize] = NONE;
    }

    #[inline]
    fn invalidate(&mut self, ppn: u32) {
        let b = ppn / self.ppb;
        let sealed = self.blocks.role[b as usize] == Role::Data;
        if sealed {
            self.bucket_remove(b);
        }
        debug_assert!(self.blocks.valid[b as usize] > 0);
        self.blocks.valid[b as usize] -= 1;
        if sealed {
            self.bucket_insert(b);
        }
    }

    /// Seals the full active block and opens a free one.
    fn open_new_active(&mut self) {
        debug_assert_eq!(self.wp, self.ppb);
        let old = self.active;
        self.blocks.role[old as usize] = Role::Data;
        self.bucket_insert(old);
        self.active = self.blocks.alloc(Role::Active);
        self.wp = 0;
    }

    /// Appends a page to the active block (which must have room).
    #[inline]
    fn append(&mut self, stamp: Stamp) -> u32 {
        debug_assert!(self.wp < self.ppb);
        let ppn = self.active * self.ppb + self.wp;
        self.nand.program(ppn, stamp);
        self.wp += 1;
        self.blocks.valid[self.active as usize] += 1;
        ppn
    }

    /// Reclaims the sealed block with the fewest valid pages.
    fn gc_once(&mut self) {
        let Some(v) = (0..self.ppb as usize).find(|&v| self.bucket_head[v] != NONE) else {
            panic!("page-mapped FTL bug: no block with an invalid page to collect");
        };
        let victim = self.bucket_head[v];
        self.bucket_remove(victim);
        let first = victim * self.ppb;
        for ppn in first..first + self.ppb {
            if self.blocks.valid[victim as usize] == 0 {
                break;
            }
            let s = self.nand.stamp(ppn);
            if s.is_erased() || self.l2p[s.lpn as usize] != ppn {
                continue;
            }
            self.nand.read(ppn);
            if self.wp == self.ppb {
                self.open_new_active();
            }
            let to = self.append(s);
            self.l2p[s.lpn as usize] = to;
            self.blocks.valid[victim as usize] -= 1;
            self.stats.copied_pages += 1;
        }
        self.blocks.release(&mut self.nand, victim);
        self.stats.gc_runs += 1;
    }
}

impl Ftl for PageMapFtl {
    fn kind(&self) -> FtlKind {
        FtlKind::PageMapped
    }

    fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    #[inline]
    fn write(&mut self, lpn: u32, seq: u64) {
        debug_assert!(lpn < self.logical_pages);
        let old = self.l2p[lpn as usize];
        if old != NONE {
            // Unmap before any collection so that GC does not copy the stale copy.
            self.invalidate(old);
            self.l2p[lpn as usize] = NONE;
        }
        if self.wp == self.ppb {
            // Keep one free block in reserve so collection can always proceed.
            while self.blocks.free_count() < 2 {
                self.gc_once();
            }
            if self.wp == self.ppb {
                self.open_new_active();
            }
        }
        let ppn = self.append(Stamp { lpn, seq });
        self.l2p[lpn as usize] = ppn;
        self.stats.host_programs += 1;
    }

    #[inline]
    fn read(&mut self, lpn: u32) -> Option<Stamp> {
        let ppn = self.l2p[lpn as usize];
        if ppn == NONE {
            return None;
        }
        self.stats.host_reads += 1;
        Some(self.nand.read(ppn))
    }

    fn lookup(&self, lpn: u32) -> Option<u32> {
        let p = *self.l2p.get(lpn as usize)?;
        (p != NONE).then_some(p)
    }

    fn nand(&self) -> &Nand {
        &self.nand
    }

    fn nand_mut(&mut self) -> &mut Nand {
        &mut self.nand
    }

    fn stats(&self) -> FtlStats {
        merge_counters(self.stats, &self.nand)
    }

    fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
        self.nand.reset_counters();
    }

    fn check_invariants(&self) -> Result<(), String> {
        check_location_map(&self.l2p, &self.blocks, &self.nand)?;
        if self.blocks.role[self.active as usize] != Role::Active {
            return Err(format!("active block {} lost its role", self.active));
        }
        let actives = self
            .blocks
            .role
            .iter()
            .filter(|&&r| r == Role::Active)
            .count();
        if actives != 1 {
            return Err(format!("{actives} active blocks"));
        }
        // The active block is programmed exactly up to its write pointer.
        let first = self.active * self.ppb;
        for i in 0..self.ppb {
            if self.nand.is_erased(first + i) != (i >= self.wp) {
                return Err(format!(
                    "active block {}: page {i} disagrees with write pointer {}",
                    self.active, self.wp
                ));
            }
        }
        // Every sealed block is in exactly the bucket of its valid count.
        let mut in_bucket = 0usize;
        for (v, &head) in self.bucket_head.iter().enumerate() {
            let mut b = head;
            let mut prev = NONE;
            while b != NONE {
                if self.blocks.role[b as usize] != Role::Data {
                    return Err(format!("bucket {v} holds non-sealed block {b}"));
                }
                if self.blocks.valid[b as usize] as usize != v {
                    return Err(format!(
                        "block {b} with {} valid pages sits in bucket {v}",
                        self.blocks.valid[b as usize]
                    ));
                }
                if self.prev[b as usize] != prev {
                    return Err(format!("bucket {v}: broken back link at block {b}"));
                }
                in_bucket += 1;
                if in_bucket > self.blocks.role.len() {
                    return Err("bucket lists loop".to_string());
                }
                prev = b;
                b = self.next[b as usize];
            }
        }
        let sealed = self
            .blocks
            .role
            .iter()
            .filter(|&&r| r == Role::Data)
            .count();
        if sealed != in_bucket {
            return Err(format!("{sealed} sealed blocks but {in_bucket} in buckets"));
        }
        if sealed + 1 + self.blocks.free_count() != self.blocks.role.len() {
            return Err("sealed + active + free != blocks".to_string());
        }
        Ok(())
    }
}
