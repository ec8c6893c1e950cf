//! FD-Buffer's windows and the policy advisor (§4.4): every reference feeds the
//! Two-Stack estimators and the window counters; when a window closes, the advisor picks
//! the `M_c` minimising Eq. (3) for the next window (with `io_count`, the misses and
//! write-backs counted per access instead, `super::cost`; with the clustered-cost variant,
//! at an `R` that depends on `M_d`, `super::clustered_cost`) and, with `track_accuracy`,
//! leaves a [`WindowRecord`].
//!
//! Whether a window may close is one comparison a reference (`refs_check`, the fewest
//! references after which the window kind can close; the kind's own test only from
//! there): cachegrind, first 2 M TPC-C references at 1,241 frames (`flashbuf bench
//! --data none --limit 2000000 --policy fd-buffer`), 10 M fewer instructions in this
//! file's lines of the reference path (23.5 M -> 13.5 M).

use super::cost::Curves;
use super::two_stack::ABSENT;
use super::{FdBuffer, MissRates, PoolOrder, Window, WindowRecord};
use flashbuf_core::FrameId;

/// Counters of the current window.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct WindowStats {
    pub(super) refs: u64,
    pub(super) writes: u64,
    pub(super) c_hits: u64,
    pub(super) d_hits: u64,
    pub(super) d_write_hits: u64,
    pub(super) reads_io: u64,
    pub(super) writes_io: u64,
    pub(super) observed_us: f64,
}

impl<C: PoolOrder, D: PoolOrder> FdBuffer<C, D> {
    /// A reference to `pid`, held by `frame`: the estimators, the window's counters, and
    /// the advisor when the window closes.
    #[inline(always)]
    pub(super) fn reference(&mut self, frame: FrameId, pid: u64, write: bool) {
        if self.stream.is_none() {
            let slots = &mut self.fr[frame.index()].slots;
            if let Some((f, which)) = self.est.access_in(slots, frame, pid, write) {
                self.fr[f.index()].slots[which] = ABSENT[which];
            }
        }
        if let Some(s) = self.shadow.as_mut() {
            s.access_resident(frame, pid, write);
        }
        self.win.refs += 1;
        self.win.writes += u64::from(write);
        if write {
            if let Some(c) = self.clustered_cost.as_mut() {
                c.on_write(pid);
            }
        }
        // Below `refs_check` references no window can close: one comparison a reference.
        if self.win.refs >= self.refs_check && self.window_closes() {
            self.close_window();
        }
    }

    /// The fewest references after which a window of `window` may close.
    pub(super) fn refs_check(window: &Window) -> u64 {
        match *window {
            Window::Refs(n) => n,
            Window::CostBound {
                min_refs, max_refs, ..
            } => min_refs.min(max_refs),
        }
    }

    /// Whether the window closes now.
    fn window_closes(&self) -> bool {
        match self.opts.window {
            Window::Refs(n) => self.win.refs >= n,
            Window::CostBound {
                q,
                min_refs,
                max_refs,
            } => {
                self.win.refs >= max_refs
                    || (self.win.refs >= min_refs
                        && self.window_io_cost_us() * 1000.0 >= self.last_comp_ns / q)
            }
        }
    }

    fn window_io_cost_us(&self) -> f64 {
        if self.opts_observes_io() {
            self.win.observed_us
        } else {
            let c = self.opts.read_cost_us;
            self.win.reads_io as f64 * c + self.win.writes_io as f64 * c * self.r()
        }
    }

    fn opts_observes_io(&self) -> bool {
        self.rate.is_some()
    }

    /// The policy advisor (§4.4): runs at the end of each window.
    fn close_window(&mut self) {
        let t0 = self.opts.clock.as_ref().map(|c| c());
        let r = self.r();
        // The counters are read once, and zeroed as they are read (the next window's);
        // a detached estimator's go back to it.
        match self.stream.as_mut() {
            None => self.curves.fill_and_clear(self.est.counters_mut()),
            Some(s) => match s.next_window() {
                Some(mut c) => {
                    self.curves.fill_and_clear(&mut c);
                    s.give_back(c);
                }
                None => {
                    // The contract was broken: keep `M_c`, count it (see `Detached`).
                    s.underruns += 1;
                    self.win = WindowStats::default();
                    return;
                }
            },
        }
        let io = self.opts.io_count;
        let from = self.opts.paid_moves.then_some(self.m_c);
        // `cusum_moves` refines paid moves (its documented contract): without them, moves
        // stay free whatever it says.
        let cusum = io && from.is_some() && self.opts.cusum_moves;
        let next = match self.clustered_cost.as_mut() {
            Some(c) => {
                c.close_window();
                if let Some(cl) = self.clusters.as_ref() {
                    c.calibrate(cl.drained(), self.m - self.m_c);
                }
                let c = &*c;
                let r_at = |m_d| r * c.r_factor(m_d);
                if cusum {
                    self.savings.choose(&self.curves, r_at, self.m_c)
                } else if io {
                    self.curves.best_m_c_io_from(r_at, from).0
                } else {
                    self.curves.best_m_c_by(r_at).0
                }
            }
            None if cusum => self.savings.choose(&self.curves, |_| r, self.m_c),
            None if io => self.curves.best_m_c_io_from(|_| r, from).0,
            None => self.curves.best_m_c(r).0,
        };
        let estimated = self.curves.rates(self.m_c);
        let mut work = 5 * self.m as u64;
        let estimated_without_pr = self.shadow.as_ref().map(|s| {
            work += 4 * self.m as u64;
            Curves::new(s.counters()).rates(self.m_c)
        });
        if self.opts.track_accuracy {
            let w = self.win;
            let frac = |miss: u64, total: u64| {
                if total == 0 {
                    0.0
                } else {
                    miss as f64 / total as f64
                }
            };
            let measured = MissRates {
                p_c: frac(w.refs - w.c_hits, w.refs),
                p_d: frac(w.refs - w.d_hits, w.refs),
                p_d_w: frac(w.writes - w.d_write_hits, w.writes),
            };
            self.records.push(WindowRecord {
                index: self.stats.windows,
                refs: w.refs,
                writes: w.writes,
                m_c: self.m_c,
                next_m_c: next,
                r,
                estimated,
                estimated_without_pr,
                measured,
            });
        }
        self.last_est = estimated;
        self.m_c = next;
        if let Some(s) = self.shadow.as_mut() {
            s.clear_counters();
        }
        self.win = WindowStats::default();
        self.stats.windows += 1;
        self.stats.advisor_work += work;
        self.last_comp_ns = match (t0, self.opts.clock.as_ref()) {
            (Some(t0), Some(c)) => {
                let dt = c().saturating_sub(t0);
                self.stats.advisor_ns += dt;
                dt as f64
            }
            _ => work as f64,
        };
    }
}
