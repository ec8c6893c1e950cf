//! Shared by the `icl_*` tests: small configurations, and a `HashMap` model of page
//! contents whose edits are handed to the store as dirty ranges.
#![allow(dead_code, clippy::unwrap_used)]

use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::{DirtyRanges, PageId};
use flashbuf_store::icl::IclConfig;
use flashbuf_store::{PageStore, ReadOutcome};
use std::collections::HashMap;

/// A small ICL configuration (sizes in pages), with a fixed salt.
pub fn config(page_size: usize, wob_pages: u64, log_pages: u32, dw_pages: u32) -> IclConfig {
    IclConfig {
        wob_bytes: wob_pages * page_size as u64,
        log_pages,
        dw_pages,
        grow_bytes: 8 * page_size as u64,
        salt: Some(0x1C1),
        ..IclConfig::with_page_size(page_size)
    }
}

/// Page contents as they should read, and the versions written.
#[derive(Debug, Clone, Default)]
pub struct Model {
    pub page_size: usize,
    pub pages: HashMap<PageId, Vec<u8>>,
    pub versions: HashMap<PageId, u64>,
}

impl Model {
    pub fn new(page_size: usize) -> Self {
        Self {
            page_size,
            ..Self::default()
        }
    }

    /// A new version of `pid`: `edits` (offset, length within the payload) rewritten with
    /// seeded bytes, or the whole payload; returns the sealed page and the dirty ranges
    /// (the edits only: the store adds the header itself). The model takes it.
    pub fn edit(
        &mut self,
        pid: PageId,
        edits: &[(usize, usize)],
        seed: u64,
    ) -> (Vec<u8>, DirtyRanges) {
        let ps = self.page_size;
        let mut p = self
            .pages
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| vec![0u8; ps]);
        let mut rng = SplitMix64::new(seed ^ pid.0.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut d = DirtyRanges::new();
        for &(off, len) in edits {
            let start = HEADER_BYTES + off % (ps - HEADER_BYTES);
            let end = (start + len.max(1)).min(ps);
            for b in &mut p[start..end] {
                *b = rng.next_u64() as u8;
            }
            d.add(start, end - start);
        }
        let v = self.versions.entry(pid).or_insert(0);
        *v += 1;
        page::seal(&mut p, pid, *v);
        self.pages.insert(pid, p.clone());
        (p, d)
    }

    /// A whole new payload for `pid`.
    pub fn whole(&mut self, pid: PageId, seed: u64) -> (Vec<u8>, DirtyRanges) {
        let (p, _) = self.edit(pid, &[(0, self.page_size)], seed);
        (p, DirtyRanges::full(self.page_size))
    }

    /// Checks that `store` reads every page of the model exactly, and `extra` pages as
    /// unwritten.
    pub fn verify(&self, store: &dyn PageStore, extra: &[PageId]) {
        let mut buf = vec![0u8; self.page_size];
        let mut pids: Vec<&PageId> = self.pages.keys().collect();
        pids.sort_unstable();
        for pid in pids {
            let r = store.read_page(*pid, &mut buf);
            assert_eq!(r.as_ref().ok(), Some(&ReadOutcome::Found), "{pid}: {r:?}");
            assert!(buf == self.pages[pid], "{pid} reads other bytes");
        }
        for pid in extra {
            if !self.pages.contains_key(pid) {
                assert_eq!(
                    store.read_page(*pid, &mut buf).unwrap(),
                    ReadOutcome::Unwritten
                );
            }
        }
    }
}
