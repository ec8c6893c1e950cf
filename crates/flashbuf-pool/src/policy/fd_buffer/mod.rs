//! FD-Buffer: cost-based adaptive replacement with a clean pool and a dirty pool
//! (S. T. On, S. Gao, B. He, M. Wu, Q. Luo, J. Xu, "FD-Buffer: A Cost-Based Adaptive
//! Buffer Replacement Algorithm for Flash Memory Devices", IEEE Trans. Computers 63(9),
//! 2014).
//!
//! The parts, one file each:
//! - [`policy`]: the buffer manager (§4.2, Algorithms 1 and 2) as a [`Policy`];
//! - `window`: the window bookkeeping and the policy advisor's runs (§4.4);
//! - [`options`]: [`FdBufferOptions`] and their checks;
//! - [`report`](mod@report): the report, window records (Table 5) and their errors;
//! - [`spec`]: FD-Buffer's entry in the policy table (typed options, builder);
//! - [`order`]: the pluggable inner policies of the two pools;
//! - [`two_stack`]: the Two-Stack estimator (§4.3, Algorithms 3 and 4, present
//!   conditions, group-based stacks);
//! - [`cost`]: Eqs. (3), (5)–(7) and the advisor's minimisation;
//! - [`advisor`]: window rules, online `R`, advisor clock;
//! - [`cluster`]: write clustering in the dirty pool (§4.5);
//! - [`clustered_cost`]: a named variant, not the paper's (`cost=clustered`): the price
//!   of a clustered write-back as a function of the dirty pool's size, misses and
//!   write-backs counted per access instead of Eq. (3), moves of `M_c` charged, groups
//!   from the buffer size — its measurements against CASA and the others;
//! - [`moves`]: when the variant moves its split (`moves=cusum`: a move's price paid
//!   by the savings summed since the last move);
//! - [`calibration`]: the variant's `k(m)` scaled to the clusters the dirty pool really
//!   drains (`calibrate=drained`);
//! - `stream_model`: the estimators detached as a stream model, run where the references
//!   are known first (a replay's trace reader thread), sending each window's counters;
//! - [`naive`]: an `O(n)`-per-operation reference for differential tests.
//!
//! # How Algorithms 1 and 2 map onto the pool contract
//! A resident page is in the clean pool `C` if clean, in the dirty pool `D` once written
//! (Algorithm 1: a write hit in `C` does `C.Remove; D.Add`). On a miss the pool asks
//! [`Policy::choose_victim`], then calls `on_remove(victim)` and `on_insert(frame, page,
//! access)`: the frame joins `C` for a read and `D` for a write, which is exactly
//! Algorithm 2's frame movement (`D.Remove; C.Add` in FindVictimForClean, `C.Remove;
//! D.Add` in FindVictimForDirty).
//!
//! Algorithm 2 depends on whether the *incoming* access is a read (FindVictimForClean:
//! victim from `D` iff `|D| > M_d`) or a write (FindVictimForDirty: victim from `C` iff
//! `|C| > M_c`); with a full buffer the two differ exactly when `|C| = M_c`, the steady
//! state. The pool announces the incoming access through [`Policy::prepare_miss`] before
//! `choose_victim` (a driver that calls `choose_victim` itself, as tests do, calls
//! `prepare_miss` first too). Without an announcement the miss is taken as a read
//! (FindVictimForClean) and counted in the report as `unhinted_misses`; any reference
//! (`on_insert`, `on_hit`) clears the announcement.
//!
//! Pages written back without being evicted (cluster batches, `flush_all`) stay in the
//! pool they are in, clean (§4.5: only the evicted page moves). If the chosen pool has no
//! evictable frame (all pinned), the other pool gives the victim.
//!
//! When the clusters choose the dirty pool's victims by CFDC's priority (`victim=priority`,
//! the paper's §4.5 setup and the default), nothing reads the dirty pool's inner order,
//! so it is not kept: the pool is a count, and membership is the frames' tags and the
//! clusters. No decision changes (both golden files, the differential test); cachegrind,
//! `flashbuf bench --data none --limit 2000000 --buffer-pages 1241 --policy fd-buffer`
//! on the TPC-C trace: 1,752.9 M -> 1,736.2 M instructions, 14.4 M -> 12.6 M simulated
//! branch mispredictions, 28.3 M -> 26.5 M L1 data misses; 8 bytes less per frame.
//!
//! # Where the wall time goes
//! FD-Buffer runs at about 0.49x LRU's instructions but 0.42-0.50x its CPU time: its
//! state (396 bytes per frame against LRU's 62: two stacks, ghosts, four counter arrays,
//! clusters) also slows the replay's own code, whose data it pushes out of the caches.
//! `perf record -e cpu-clock -F 5000` (a timer, no hardware counters needed), `flashbuf
//! bench --data none --buffer-pages 1241 --runs 3` on the TPC-C trace, three quiet
//! rounds, stop 32: the replay loop outside any policy (`access_all`) takes 1.35-1.73x
//! (median 1.44x) the samples it takes in LRU's run, all code outside the policy
//! 1.12-1.37x (median 1.20x); the policy's own functions take the rest.
//! Where FD-Buffer can know an address early it prefetches it: [`Policy::prepare_miss`]
//! starts fetching the incoming page's ghost entry and, for a write, its cluster's map
//! entry, which `on_insert` reads only after the victim is chosen, evicted and the page
//! read (share of the samples, two runs each: `TwoStack::admit_in` 2.6 % -> 1.2-1.5 %,
//! `Clusters::enter` 2.9-3.3 % -> 2.6 %; no count changes).
//!
//! In a trace replay the estimators run on the trace reader's thread instead
//! (`stream_model.rs`, [`Policy::detach_stream_model`]): they depend on the references
//! alone, and with windows of fixed length the advisor reads them at references known in
//! advance. Same counts, estimates and window records (`tests/fd_buffer_stream_model.rs`);
//! `flashbuf bench --data none --runs 3` on the zstd CSV (parsing included, 2 cores),
//! interleaved, stop 38: TPC-C w4 12.3-12.8 -> 16.2-16.4 M refs/s, TPC-C w8 9.0-11.2 ->
//! 12.2-14.8 M refs/s.
//!
//! # Windows and the advisor
//! Every reference (hit or miss) feeds the Two-Stack estimator and the window counters.
//! When a window closes (by default after 5,000 references) the advisor computes
//! Eqs. (5)–(7) for every `M_c` in `1..=M−1` from the window's counters and takes the
//! `M_c` minimising Eq. (3) with the current `R`; it applies from the next reference. `M_c`
//! starts at `M/2` (option `initial_clean_ratio`; the paper does not say).
//!
//! # Asymmetry `R`
//! Fixed (from the device's facts, or the option `r=X`) or online (moving averages of the
//! latencies the pool measures, [`Policy::observe_io`]). A cost update
//! ([`Policy::update_costs`], reached through `BufferPool::update_costs`; the lab sends
//! one per epoch of an asymmetry model) sets a fixed `R` to the new `write_us / read_us`;
//! online `R` ignores it, since it measures the change. An explicit `r=X` thus holds
//! until the first update (before this interface, the lab scaled `X` by the model's
//! factor instead; the device's own `R` gives the same values either way).
//!
//! # Estimation accuracy (Table 5)
//! With `track_accuracy`, a second Two-Stack without present conditions runs alongside,
//! and each window leaves a [`WindowRecord`] in the report ([`PolicyReport::windows`]): the estimates of `P_c`, `P_d`, `P_d^w` at
//! the `M_c` in force during the window (with and without present conditions) and the
//! rates measured in the real pools during that window: `P_c` = accesses not found in `C`
//! / accesses, `P_d` = accesses not found in `D` / accesses, `P_d^w` = writes not found
//! in `D` / writes. [`mean_errors`] averages the paper's error `|v − v'| / v`.
//!
//! # Report
//! [`Policy::report`] gives `m_c`, `m_d`, `clean_pages`, `dirty_pages`, the last window's
//! estimates at the `M_c` in force (`est_p_c`, `est_p_d`, `est_p_d_w`), `r`, `windows`,
//! the advisor's overhead (`advisor_work` units, `advisor_ns` with a clock), the
//! estimator's per-access work (`stack_work`), `cluster_scans`, `unhinted_misses`, and
//! with `track_accuracy` the mean Table 5 errors (`err_p_c`, ..., `err_p_c_without_pr`, ...).
//! The clustered-cost variant adds its model at the `M_d` in force: `k_at_m_d` (expected
//! pages per drained cluster, from the recent writes, calibrated if asked), `r_factor`
//! (what `R` is multiplied by there) and `window_written_pages` (`P_w`, beyond which `k` is flat) — to
//! set beside the run's realised pages per cluster write — and its calibration:
//! `k_model_at_m_d` (`k` as read off the writes), `k_calibration` (the factor applied to
//! it, 1 with `calibrate=none`) and `mean_drained_pages` (the mean size of the clusters
//! chosen to drain in the last window that chose any; 0 before).
//!
//! # Driving it through the pool
//! ```
//! use flashbuf_core::{DeviceFacts, PageId};
//! use flashbuf_device::MemDevice;
//! use flashbuf_pool::policy::fd_buffer::{FdBuffer, FdBufferOptions};
//! use flashbuf_pool::BufferPool;
//! use flashbuf_store::{DirectStore, DirectStoreConfig};
//!
//! let policy = FdBuffer::new(64, FdBufferOptions::default().fixed_r(136.0).track_accuracy(true)).unwrap();
//! let store = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096)).unwrap();
//! let pool = BufferPool::new(store, 64, Box::new(policy)).unwrap();
//! for i in 0..20_000u64 {
//!     let (write, page) = (i % 7 == 0, (i * 31) % 500);
//!     if write {
//!         pool.write(PageId(page)).unwrap().write(0, b"x");
//!     } else {
//!         drop(pool.read(PageId(page)).unwrap());
//!     }
//! }
//! let report = pool.policy_report_full();
//! assert_eq!(report.windows.len(), 4); // Table 5: one record per window of 5,000
//! assert_eq!(report.get("unhinted_misses"), Some(0.0)); // the pool announced every miss
//! // The device got dearer to write: a fixed R follows.
//! pool.update_costs(&DeviceFacts { read_us: 100.0, write_us: 25_000.0, ..DeviceFacts::default() });
//! assert_eq!(pool.policy_report_full().get("r"), Some(250.0));
//! ```
pub mod advisor;
pub mod calibration;
pub mod cluster;
pub mod clustered_cost;
pub mod cost;
pub mod id_set;
pub mod moves;
pub mod naive;
mod option_table;
pub mod options;
pub mod order;
pub mod policy;
pub mod report;
pub mod spec;
mod stream_model;
pub mod two_stack;
mod window;

pub use advisor::{AdvisorClock, Asymmetry, RateEstimator, Window};
pub use calibration::Calibrate;
pub use cluster::{ClusterVictim, Clustering};
pub use cost::MissRates;
pub use options::FdBufferOptions;
pub use order::{FifoOrder, LruOrder, OrderKind, PoolOrder};
pub use policy::FdBuffer;
pub use report::{mean_errors, relative_errors, AdvisorStats, WindowRecord};

#[cfg(doc)]
use super::{Policy, PolicyReport};
use flashbuf_core::DeviceFacts;

/// The `R` a cost update sets, `write_us / read_us`, if that is a finite number ≥ 0.
fn update_r(costs: &DeviceFacts) -> Option<f64> {
    let r = costs.write_us / costs.read_us;
    (costs.read_us > 0.0 && r.is_finite() && r >= 0.0).then_some(r)
}

/// `M_c` before the first advisor run: `round(ratio · M)` within `1..M` (`M` for `M < 2`).
fn initial_m_c(m: usize, ratio: f64) -> usize {
    if m < 2 {
        return m;
    }
    ((m as f64 * ratio).round() as usize).clamp(1, m - 1)
}

/// `page / cluster_pages` (`cluster_pages ≥ 1`): a shift for the usual power of two, where
/// the 64-bit division took tens of cycles per dirty page entering a cluster and per
/// distinct page of the clustered-cost variant's walk.
#[inline(always)]
pub(crate) fn cluster_of(page: u64, cluster_pages: u64) -> u64 {
    if cluster_pages.is_power_of_two() {
        page >> cluster_pages.trailing_zeros()
    } else {
        page / cluster_pages
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cluster_of_divides() {
        for cp in [1u64, 2, 3, 7, 64, 100, 128, 1 << 20] {
            for p in [0u64, 1, 63, 64, 65, 127, 12_345_678, u64::MAX] {
                assert_eq!(super::cluster_of(p, cp), p / cp, "{p} / {cp}");
            }
        }
    }
}
