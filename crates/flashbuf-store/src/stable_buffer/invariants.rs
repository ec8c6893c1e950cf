//! The store's invariants ([`crate::PageStore::check_invariants`]): SBTT and bitmaps
//! consistent, the recognizer holding exactly the staged pages not being flushed, lost
//! pages not staged, the device no shorter than the recorded data end.

use super::Inner;
use flashbuf_device::Device;

impl<D: Device> Inner<D> {
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        let st = self.state.lock();
        st.sbtt.check()?;
        st.bits.check()?;
        let n = self.layout.slots;
        if st.sbtt.len() > n as usize {
            return Err(format!("{} pages staged in {n} slots", st.sbtt.len()));
        }
        let mut eligible = Vec::new();
        for (d, s) in st.sbtt.iter() {
            if !st.bits.used(s) {
                return Err(format!("page {d} mapped to slot {s}, which is not used"));
            }
            if !st.bits.flushing(s) {
                eligible.push(d);
            }
        }
        if st.flushes_in_flight == 0 && st.bits.used_count() < st.sbtt.len() {
            return Err("fewer used slots than staged pages".to_string());
        }
        if let Some(r) = &st.recognizer {
            r.check()?;
            if r.len() != eligible.len() || eligible.iter().any(|&d| !r.contains(d)) {
                return Err(format!(
                    "recognizer holds {} pages, {} staged pages are not being flushed",
                    r.len(),
                    eligible.len()
                ));
            }
        }
        if let Some(d) = st.lost.keys().find(|&&d| st.sbtt.get(d).is_some()) {
            return Err(format!("page {d} is both lost and staged"));
        }
        if self.dev.len() < self.state_area.data_end() {
            return Err(format!(
                "device length {} is below the recorded data end {}",
                self.dev.len(),
                self.state_area.data_end()
            ));
        }
        if self.dev.len() < self.layout.data_offset {
            return Err(format!(
                "device length {} is below the data offset {}",
                self.dev.len(),
                self.layout.data_offset
            ));
        }
        Ok(())
    }
}
