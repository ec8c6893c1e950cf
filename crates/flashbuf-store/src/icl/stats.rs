//! ICL's counters by kind (issue 15, item 6): data-page and log-page reads and writes by
//! the path that caused them, merges, flushes, WOB bytes, recovery; exposed to the lab as
//! [`crate::PageStore::report`] (name and value, in this order).
//!
//! The paper's figures count page reads and page writes of each method (ICL paper §3,
//! Figure 5): ICL's page writes are [`IclStats::page_writes`], its page reads
//! [`IclStats::page_reads`]. Erases and lifetime come from the simulated device under the
//! store ([`crate::PageStore::device_stats`]).

use serde::Serialize;

macro_rules! counters {
    ($(#[$meta:meta])* pub struct $ty:ident { $($(#[doc = $doc:expr])+ $name:ident,)+ }) => {
        $(#[$meta])*
        pub struct $ty {
            $($(#[doc = $doc])+ pub $name: u64,)+
        }

        impl $ty {
            /// Every counter as (name, value), in declaration order.
            pub fn counters(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)+]
            }
        }
    };
}

counters! {
    /// Counters of an [`super::IclStore`] since it was opened.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
    pub struct IclStats {
        /// Home pages read by the read path.
        data_reads,
        /// Home pages read to pick a recovered page's record before a flush or merge.
        data_reads_resolve,
        /// Home pages read by log-space merges.
        data_reads_merge,
        /// Pages written home whole because the write changed at least the threshold (first
        /// writes included).
        data_writes_whole,
        /// Pages written home because their logs reached the merge threshold.
        data_writes_merge,
        /// Pages written home by log-space merges.
        data_writes_bulk,
        /// Home pages restored from the double-write area by recovery.
        data_writes_restore,
        /// Log pages read by the read path (at most one per page read).
        log_reads,
        /// Log pages read to copy pages' previous logs forward at a flush.
        log_reads_copy,
        /// Log pages read by log-space merges.
        log_reads_merge,
        /// Log pages read to pick a recovered page's record.
        log_reads_resolve,
        /// Log pages read by recovery's scan of the log space.
        log_reads_recovery,
        /// Log pages written.
        log_writes,
        /// Double-write slots and directories written.
        dw_writes,
        /// Generation records written.
        gen_writes,
        /// WOB flushes.
        flushes,
        /// Records written to log pages (tombstones included).
        records_written,
        /// Records that carried a previous ICL log forward.
        copy_forwards,
        /// Tombstones written.
        tombstones_written,
        /// Merges because a page's logs reached the threshold.
        merges_threshold,
        /// Log-space merges (the log space ran short).
        merges_bulk,
        /// Pages log-space merges could not rebuild (their home page is damaged); their
        /// reads report corruption.
        merge_failures,
        /// Record bytes put into the WOB by writes.
        wob_logged_bytes,
        /// Record bytes in the WOB now.
        wob_bytes,
        /// Most record bytes in the WOB at once.
        wob_peak_bytes,
        /// WOB capacity in record bytes.
        wob_capacity_bytes,
        /// Approximate memory of the WOB's entries, bytes.
        wob_memory_bytes,
        /// Mapping-table entries now.
        mapping_entries,
        /// Approximate memory of the mapping table, bytes.
        mapping_memory_bytes,
        /// Memory of the reused I/O buffers kept (a log page, a flush's log pages), bytes.
        io_buffer_memory_bytes,
        /// Log-space generation now.
        generation,
        /// Log pages in use in this generation.
        log_pages_used,
        /// Recovered pages whose record had to be picked by a read or flush.
        resolutions,
        /// Of those, pages whose newest record did not apply and an older one did.
        resolved_older,
        /// Of those, pages whose records did not apply to their (newer) home page.
        resolved_home,
        /// Valid log pages of the current generation recovery found.
        recovered_log_pages,
        /// Records recovery found in them.
        recovered_records,
        /// Device time recovery took, µs (simulated devices; measured on files).
        recovery_device_us,
        /// Device syncs (callers', merges', recovery's).
        device_syncs,
    }
}

impl IclStats {
    /// Page writes of every kind (data, log, double-write, generation records): what
    /// the paper's Figure 5 compares with the direct store's page writes.
    pub fn page_writes(&self) -> u64 {
        self.data_writes_whole
            + self.data_writes_merge
            + self.data_writes_bulk
            + self.data_writes_restore
            + self.log_writes
            + self.dw_writes
            + self.gen_writes
    }

    /// Page reads of every kind.
    pub fn page_reads(&self) -> u64 {
        self.data_reads
            + self.data_reads_resolve
            + self.data_reads_merge
            + self.log_reads
            + self.log_reads_copy
            + self.log_reads_merge
            + self.log_reads_resolve
            + self.log_reads_recovery
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_list_every_field_and_totals_add_up() {
        let s = IclStats {
            data_reads: 1,
            log_reads: 2,
            log_writes: 3,
            data_writes_merge: 4,
            ..IclStats::default()
        };
        let c = s.counters();
        assert_eq!(c[0].0, "data_reads");
        assert_eq!(c.len(), 39);
        assert!(c.contains(&("log_writes", 3)));
        assert_eq!((s.page_reads(), s.page_writes()), (3, 7));
    }
}
