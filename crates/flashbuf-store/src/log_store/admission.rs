//! What a write is checked against before any I/O: the page (sealed, of a page id the
//! store holds) and the room for new pages.

use super::state::State;
use super::LogStore;
use crate::StoreError;
use flashbuf_core::PageId;
use flashbuf_device::Device;

impl<D: Device> LogStore<D> {
    /// Checks a page handed over for writing; its page id must be one the store holds.
    pub(super) fn check_write(&self, pid: PageId, page: &[u8]) -> Result<(), StoreError> {
        crate::checks::check_sealed(pid, page, self.cfg.block_bytes())?;
        if pid.0 >= self.layout.logical_pages {
            return Err(StoreError::Full(format!(
                "{pid} is beyond the store's {} page ids",
                self.layout.logical_pages
            )));
        }
        Ok(())
    }

    /// Refuses new pages beyond what the store can hold (before any I/O).
    pub(super) fn check_room(&self, st: &State, new_pages: u64) -> Result<(), StoreError> {
        let cx = self.ctx();
        let max = cx.max_live_pages();
        if new_pages > 0 && st.map.mapped() + new_pages > max {
            return Err(StoreError::Full(format!(
                "{} pages live and {new_pages} new: the store holds at most {max} ({} segments of {} blocks, {} kept for the cleaner and the open segments)",
                st.map.mapped(),
                self.layout.segments,
                self.layout.segment_blocks,
                self.cfg.kept_segments()
            )));
        }
        Ok(())
    }
}
