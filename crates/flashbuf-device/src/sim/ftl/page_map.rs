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

use super::{Ftl, FtlCore, FtlEntry, Role};
use crate::sim::nand::{Nand, Stamp, NONE};

/// The table entry (`page-mapped`: no options; three spare blocks at least).
pub(super) const ENTRY: FtlEntry = FtlEntry {
    name: "page-mapped",
    help: "page-level mapping with greedy garbage collection (Kawaguchi et al. 1995)",
    options: &[],
    extra_blocks: |_, op_blocks| op_blocks.max(3),
    build: |_, nand, logical_pages, seed| Ok(Box::new(PageMapFtl::new(nand, logical_pages, seed)?)),
};

/// Page-mapped FTL with greedy garbage collection. See the module docs.
#[derive(Debug, Clone)]
pub struct PageMapFtl {
    /// Array, location map (`loc`: logical to physical page), blocks, counters.
    core: FtlCore,
    active: u32,
    wp: u32,
    /// Heads of the valid-count buckets of sealed blocks (index = valid pages).
    bucket_head: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
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
        let mut core = FtlCore::new(ENTRY.name, nand, logical_pages, seed);
        let active = core.blocks.alloc(Role::Active);
        Ok(Self {
            core,
            active,
            wp: 0,
            bucket_head: vec![NONE; ppb as usize + 1],
            next: vec![NONE; n],
            prev: vec![NONE; n],
        })
    }

    fn bucket_insert(&mut self, b: u32) {
        let v = self.core.blocks.valid[b as usize] as usize;
        let head = self.bucket_head[v];
        self.next[b as usize] = head;
        self.prev[b as usize] = NONE;
        if head != NONE {
            self.prev[head as usize] = b;
        }
        self.bucket_head[v] = b;
    }

    fn bucket_remove(&mut self, b: u32) {
        let v = self.core.blocks.valid[b as usize] as usize;
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
        let b = ppn / self.core.ppb;
        let sealed = self.core.blocks.role[b as usize] == Role::Data;
        if sealed {
            self.bucket_remove(b);
        }
        debug_assert!(self.core.blocks.valid[b as usize] > 0);
        self.core.blocks.valid[b as usize] -= 1;
        if sealed {
            self.bucket_insert(b);
        }
    }

    /// Seals the full active block and opens a free one.
    fn open_new_active(&mut self) {
        debug_assert_eq!(self.wp, self.core.ppb);
        let old = self.active;
        self.core.blocks.role[old as usize] = Role::Data;
        self.bucket_insert(old);
        self.active = self.core.blocks.alloc(Role::Active);
        self.wp = 0;
    }

    /// Appends a page to the active block (which must have room).
    #[inline]
    fn append(&mut self, stamp: Stamp) -> u32 {
        debug_assert!(self.wp < self.core.ppb);
        let ppn = self.active * self.core.ppb + self.wp;
        self.core.nand.program(ppn, stamp);
        self.wp += 1;
        self.core.blocks.valid[self.active as usize] += 1;
        ppn
    }

    /// Reclaims the sealed block with the fewest valid pages.
    fn gc_once(&mut self) {
        let Some(v) = (0..self.core.ppb as usize).find(|&v| self.bucket_head[v] != NONE) else {
            panic!("page-mapped FTL bug: no block with an invalid page to collect");
        };
        let victim = self.bucket_head[v];
        self.bucket_remove(victim);
        let first = victim * self.core.ppb;
        for ppn in first..first + self.core.ppb {
            if self.core.blocks.valid[victim as usize] == 0 {
                break;
            }
            let s = self.core.nand.stamp(ppn);
            if s.is_erased() || self.core.loc[s.lpn as usize] != ppn {
                continue;
            }
            self.core.nand.read(ppn);
            if self.wp == self.core.ppb {
                self.open_new_active();
            }
            let to = self.append(s);
            self.core.loc[s.lpn as usize] = to;
            self.core.blocks.valid[victim as usize] -= 1;
            self.core.stats.copied_pages += 1;
        }
        self.core.blocks.release(&mut self.core.nand, victim);
        self.core.stats.gc_runs += 1;
    }
}

impl Ftl for PageMapFtl {
    fn core(&self) -> &FtlCore {
        &self.core
    }

    fn core_mut(&mut self) -> &mut FtlCore {
        &mut self.core
    }

    fn clone_box(&self) -> Box<dyn Ftl> {
        Box::new(self.clone())
    }

    #[inline]
    fn write(&mut self, lpn: u32, seq: u64) {
        debug_assert!(lpn < self.core.logical_pages);
        let old = self.core.loc[lpn as usize];
        if old != NONE {
            // Unmap before any collection so that GC does not copy the stale copy.
            self.invalidate(old);
            self.core.loc[lpn as usize] = NONE;
        }
        if self.wp == self.core.ppb {
            // Keep one free block in reserve so collection can always proceed.
            while self.core.blocks.free_count() < 2 {
                self.gc_once();
            }
            if self.wp == self.core.ppb {
                self.open_new_active();
            }
        }
        let ppn = self.append(Stamp { lpn, seq });
        self.core.loc[lpn as usize] = ppn;
        self.core.stats.host_programs += 1;
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.core.check_map()?;
        if self.core.blocks.role[self.active as usize] != Role::Active {
            return Err(format!("active block {} lost its role", self.active));
        }
        let actives = self.core.blocks.count(Role::Active);
        if actives != 1 {
            return Err(format!("{actives} active blocks"));
        }
        // The active block is programmed exactly up to its write pointer.
        let first = self.active * self.core.ppb;
        for i in 0..self.core.ppb {
            if self.core.nand.is_erased(first + i) != (i >= self.wp) {
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
                if self.core.blocks.role[b as usize] != Role::Data {
                    return Err(format!("bucket {v} holds non-sealed block {b}"));
                }
                if self.core.blocks.valid[b as usize] as usize != v {
                    return Err(format!(
                        "block {b} with {} valid pages sits in bucket {v}",
                        self.core.blocks.valid[b as usize]
                    ));
                }
                if self.prev[b as usize] != prev {
                    return Err(format!("bucket {v}: broken back link at block {b}"));
                }
                in_bucket += 1;
                if in_bucket > self.core.blocks.role.len() {
                    return Err("bucket lists loop".to_string());
                }
                prev = b;
                b = self.next[b as usize];
            }
        }
        let sealed = self.core.blocks.count(Role::Data);
        if sealed != in_bucket {
            return Err(format!("{sealed} sealed blocks but {in_bucket} in buckets"));
        }
        if sealed + 1 + self.core.blocks.free_count() != self.core.blocks.role.len() {
            return Err("sealed + active + free != blocks".to_string());
        }
        Ok(())
    }
}
