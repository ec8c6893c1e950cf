//! ICL's invariants, checked by [`crate::PageStore::check_invariants`] (tests and the
//! lab's `--paranoid`): the WOB's byte count and shape, the log head, every mapping entry
//! inside the log written so far, no page whose logs reached the merge threshold without a
//! merge, and every resolved entry's record readable on the device.

use super::log::{record_bytes_of, union_spans};
use super::log_space::{LogCache, LogRead};
use super::mapping::{self, Entry};
use super::wob::WobEntry;
use super::{IclStore, State};
use flashbuf_device::Device;

impl<D: Device> IclStore<D> {
    /// Invariants of the state (see [`PageStore::check_invariants`]); reads the log page
    /// of every resolved page to check its record.
    pub(super) fn check_state(&self, st: &mut State) -> Result<(), String> {
        let ps = self.cfg.page_size;
        st.wob.check(ps, self.cfg.image_bytes())?;
        if st.head > self.layout.log_pages || st.synced_head > st.head {
            return Err(format!(
                "log head {} / synced head {} outside {} log pages",
                st.head, st.synced_head, self.layout.log_pages
            ));
        }
        let threshold = self.cfg.threshold_bytes();
        let mut resolved = Vec::new();
        for (pid, e) in st.mapping.iter() {
            match &e.state {
                Entry::Log { at, spans } => {
                    let spans = mapping::unpack(spans);
                    if at.slot >= st.head || record_bytes_of(&spans) != usize::from(at.len) {
                        return Err(format!("{pid}: mapping entry {at:?} does not fit the log"));
                    }
                    if let Some(WobEntry::Log { log, .. }) = st.wob.get(*pid) {
                        let both = union_spans(&spans, log.spans());
                        if record_bytes_of(&both) >= threshold {
                            return Err(format!(
                                "{pid}: logs of {} bytes reached the threshold without a merge",
                                record_bytes_of(&both)
                            ));
                        }
                    }
                    resolved.push((*pid, *at));
                }
                Entry::Unresolved(c) => {
                    if c.is_empty() || c.iter().any(|r| r.slot >= st.head) {
                        return Err(format!(
                            "{pid}: recovered candidates {c:?} beyond the log head"
                        ));
                    }
                }
                Entry::Home => {}
            }
        }
        resolved.sort_unstable_by_key(|(pid, _)| *pid);
        let mut cache = LogCache::default();
        for (pid, at) in resolved {
            self.read_record(st, pid, &at, Some(&mut cache), LogRead::Read, |v| {
                v.into_record()
            })
            .map_err(|e| format!("{pid}: {e}"))?;
        }
        Ok(())
    }
}
