//! The log-space merge: when the log space runs short, every page's latest ICL log is
//! reflected into its home page and the log space starts over.
//!
//! Paper (ICL paper, §2 *ICL merge*, Figure 4): "the ICL scheme reflects the latest ICL
//! logs into the corresponding DBMS-pages, and the log-pages are reset for reuse. The
//! reflecting process copies the latest ICL logs (the most incremented log for each
//! DBMS-page) from log-pages to the corresponding DBMS-pages. […] The reset process of
//! log-pages requires no actual page-writes since the log-pages can be merely logically
//! invalidated".
//!
//! # Readings and what the paper leaves open
//! - Each merged page is its home page with its ICL log applied, plus its logs still in
//!   the WOB (they leave the WOB with it): the page goes home with everything.
//! - "Logically invalidated" becomes a new *generation*: the merge writes the home pages,
//!   syncs, and only then writes the next generation number into the generation record
//!   (ping-pong, `layout.rs`) and syncs; log pages of an older generation are ignored by
//!   recovery. So a merge makes the home pages durable before their logs are invalidated.
//! - A home page is rewritten in place, and a crash can tear it. A page written since the
//!   last sync may then be reported corrupt, as for every store; a page that holds only
//!   synced data must not be, so such pages are first written to the double-write area
//!   (with a directory naming them and the generation) and synced, and recovery restores
//!   them from there if the merge did not finish (InnoDB's doublewrite buffer). This
//!   costs one extra page write per such page and is counted as `dw_writes`.
//! - A page whose home page cannot be rebuilt (damaged by a crash and not covered by its
//!   logs) is left as it is and counted as a merge failure; its reads report it corrupt,
//!   before and after the merge.
//! - A log page that fails its check stops the merge with [`StoreError::DamagedLog`]: the
//!   logs in it are never dropped silently.

use super::layout::DwDirectory;
use super::log_space::{LogCache, LogRead};
use super::mapping::Entry;
use super::wob::WobEntry;
use super::{IclStore, State};
use crate::page_requests;
use crate::StoreError;
use flashbuf_core::page::{self, PageState};
use flashbuf_core::{AlignedBuf, PageId};
use flashbuf_device::Device;

/// A merged page: its id, home offset and bytes.
type Merged = (PageId, u64, AlignedBuf);

impl<D: Device> IclStore<D> {
    /// Merges every page's ICL log into its home page and starts the next generation
    /// (see the module docs). No home write may be pending.
    pub(super) fn merge_log_space(&self, st: &mut State) -> Result<(), StoreError> {
        st.stats.merges_bulk += 1;
        let (double_write, direct) = self.merged_pages(st)?;
        for round in double_write.chunks(self.layout.dw_pages as usize) {
            self.double_write(st, round)?;
            self.write_merged(st, round)?;
            self.sync_device(st)?;
        }
        self.write_merged(st, &direct)?;
        self.sync_device(st)?;
        let gen = st.gen + 1;
        self.write_gen_record(st, gen, 0)?;
        self.sync_device(st)?;
        st.gen = gen;
        st.head = 0;
        st.synced_head = 0;
        st.mapping.clear();
        Ok(())
    }

    /// Rebuilds every page with an ICL log: (pages holding only synced data, pages
    /// written since the last sync).
    fn merged_pages(&self, st: &mut State) -> Result<(Vec<Merged>, Vec<Merged>), StoreError> {
        let mut cache = LogCache::default();
        let (mut double_write, mut direct) = (Vec::new(), Vec::new());
        for pid in st.mapping.pids() {
            let Some(e) = st.mapping.get(pid) else {
                continue;
            };
            let (state, epoch) = (e.state.clone(), e.epoch);
            if state == Entry::Home {
                continue;
            }
            let off = self.home_offset(pid)?;
            let mut img = AlignedBuf::zeroed(self.cfg.image_bytes(), 4096);
            self.read_home(st, off, &mut img, true)?;
            let rec = match state {
                Entry::Log { at, .. } => {
                    Some(
                        self.read_record(st, pid, &at, Some(&mut cache), LogRead::Merge, |v| {
                            v.into_record()
                        })?,
                    )
                }
                Entry::Unresolved(_) => {
                    let home = img.to_vec();
                    let r = self.resolve(st, pid, &home, Some(&mut cache))?;
                    r.record.map(|(_, rec)| rec).filter(|rec| !rec.tombstone)
                }
                Entry::Home => None,
            };
            let Some(rec) = rec else {
                continue;
            };
            rec.log.apply(&mut img);
            let in_wob = st.wob.get(pid).is_some();
            if let Some(WobEntry::Log { log, .. }) = st.wob.get(pid) {
                log.apply(&mut img);
            }
            if !matches!(page::check(&img, pid), Ok(PageState::Sealed(_))) {
                st.stats.merge_failures += 1;
                continue;
            }
            if matches!(st.wob.get(pid), Some(WobEntry::Log { .. })) {
                st.wob.remove(pid);
            }
            if epoch == st.epoch || in_wob {
                direct.push((pid, off, img));
            } else {
                double_write.push((pid, off, img));
            }
        }
        Ok((double_write, direct))
    }

    /// Writes `round` into the double-write slots with a directory naming them, and syncs.
    fn double_write(&self, st: &mut State, round: &[Merged]) -> Result<(), StoreError> {
        let ps = self.cfg.page_size;
        let mut dir = AlignedBuf::zeroed(ps, 4096);
        DwDirectory {
            gen: st.gen,
            entries: round
                .iter()
                .map(|(pid, _, img)| (*pid, page::read_header(img).checksum))
                .collect(),
        }
        .encode(&mut dir, self.salt);
        // In metadata mode the slots keep their heads and the directory all its bytes, in
        // one batch of whole-page requests as with bytes.
        let mut ops: Vec<(u64, &[u8])> = round
            .iter()
            .enumerate()
            .map(|(i, (_, _, img))| (self.layout.dw_slot_offset(i), &img[..]))
            .collect();
        ops.push((self.layout.dw_dir_offset, &dir[..]));
        let r = page_requests::write_pages(&self.dev, self.cfg.data, ps, &ops);
        self.poison.guard(r)?;
        st.stats.dw_writes += ops.len() as u64;
        self.sync_device(st)
    }

    /// Writes merged pages home, one batch.
    fn write_merged(&self, st: &mut State, pages: &[Merged]) -> Result<(), StoreError> {
        let mut homes: super::write::PendingHomes<'_> =
            pages.iter().map(|(_, o, img)| (*o, &img[..])).collect();
        st.stats.data_writes_bulk += homes.len() as u64;
        self.write_homes(&mut homes)
    }
}
