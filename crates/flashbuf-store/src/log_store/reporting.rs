//! What the store reports ([`PageStore::report`](crate::PageStore::report)), what its
//! structures take in memory, and the promise record of a caller's sync.

use super::lifecycle::STATE_COPY_BYTES;
use super::state::State;
use super::stats::{self, MemoryReport};
use super::{summary, LogStore};
use crate::state::StateArea;
use crate::StoreError;
use flashbuf_device::Device;

impl<D: Device> LogStore<D> {
    /// [`PageStore::report`]: the store's counters, space and memory.
    pub(crate) fn report_now(&self) -> Vec<(String, f64)> {
        let st = self.state.read();
        let dev = self.dev.stats() - st.device_base;
        let mem = self.memory_of(&st);
        let (free, prefree) = (st.usage.free_count(), st.usage.prefree_count());
        let capacity = self.layout.segments as f64 * self.cfg.data_blocks_per_segment() as f64;
        let mut extra: Vec<(&'static str, f64)> = vec![
            ("live_pages", st.map.mapped() as f64),
            ("utilization", st.map.mapped() as f64 / capacity.max(1.0)),
            ("segments", f64::from(self.layout.segments)),
            ("free_segments", f64::from(free)),
            ("prefree_segments", f64::from(prefree)),
            ("map_bytes_per_page", mem.map_bytes_per_page),
            ("per_page_bytes", mem.per_page_bytes),
        ];
        if let Some(r) = st.recovery {
            extra.push(("recovery_device_time_us", r.device_time_us));
            extra.push(("recovery_wall_time_us", r.wall_time_us));
            extra.push((
                "recovery_blocks_rolled_forward",
                r.blocks_rolled_forward as f64,
            ));
        }
        extra.extend(st.placement.report());
        stats::report(&st.stats, &dev, self.cfg.page_size, &extra)
    }

    /// Records what a caller's sync promised (every block below `durable_seq`) in the
    /// state record, unless the newest checkpoint or an earlier promise covers it: without
    /// it, damage at rest to a synced block of the log's tail (after which no block
    /// carries a newer durable horizon) would look like a torn tail and the pages would
    /// come back older (found by the damage-at-rest fuzzer; regression test
    /// `regression_log_store_damaged_synced_tail`).
    pub(super) fn promise(&self, st: &mut State) -> Result<(), StoreError> {
        let covered = st.covered_seq.max(promise_of(&self.state_area));
        if st.durable_seq <= covered {
            return Ok(());
        }
        self.state_area.commit(
            &self.dev,
            &self.poison,
            None,
            Some(st.durable_seq.to_le_bytes().to_vec()),
        )?;
        st.stats.promises += 1;
        st.stats.promise_blocks += 2 * STATE_COPY_BYTES.div_ceil(self.cfg.page_size as u64);
        st.stats.device_syncs += 2;
        Ok(())
    }

    pub(super) fn memory_of(&self, st: &State) -> MemoryReport {
        let pages = self.layout.logical_pages.max(1) as f64;
        let map_bytes = st.map.memory_bytes();
        let placement_bytes = st.placement.memory_bytes();
        MemoryReport {
            logical_pages: self.layout.logical_pages,
            map_bytes,
            placement_bytes,
            map_bytes_per_page: map_bytes as f64 / pages,
            per_page_bytes: (map_bytes + placement_bytes) as f64 / pages,
            usage_bytes: std::mem::size_of_val(st.usage.rows()),
            buffer_bytes: st.queue.buf.len()
                + st.clean_buf.as_ref().map_or(0, |b| b.len())
                + st.heads
                    .iter()
                    .map(|h| h.entries.capacity() * std::mem::size_of::<summary::Entry>())
                    .sum::<usize>(),
        }
    }
}

/// The promise the state record holds: every block with a lower sequence was durable when
/// a caller's sync returned (0 if none was recorded).
pub(crate) fn promise_of(area: &StateArea) -> u64 {
    let p = area.record().payload;
    p.get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0, u64::from_le_bytes)
}
