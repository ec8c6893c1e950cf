//! Progress of a reproduction: runs done out of the runs planned, elapsed time and an ETA
//! on stderr (`--quiet` or `--json` silence it).
//!
//! The plan comes from a planning pass over the same code (`ReproduceOptions::plan_only`):
//! the reproduction's [`Runner`](super::runner::Runner) counts the distinct runs it would
//! make without making them (memoized repeats are not runs), and the two reproductions
//! that drive their own runs (`stablebuffer`, `cfdc-engine`) count their loops. The ETA
//! is the mean wall time of the runs so far times the runs left.

use super::ReproduceOptions;
use std::cell::Cell;
use std::time::Instant;

/// Counts a reproduction's runs and prints one progress line per run.
#[derive(Debug)]
pub(super) struct Tally {
    paper: &'static str,
    planned: Option<usize>,
    show: bool,
    plan_only: bool,
    done: Cell<usize>,
    started: Instant,
}

impl Tally {
    /// The tally of `paper` under `opts`.
    pub(super) fn new(paper: &'static str, opts: &ReproduceOptions) -> Self {
        Self {
            paper,
            planned: opts.planned_runs,
            show: opts.progress && !opts.plan_only,
            plan_only: opts.plan_only,
            done: Cell::new(0),
            started: Instant::now(),
        }
    }

    /// Whether this is a planning pass (count, do not run).
    pub(super) fn plan_only(&self) -> bool {
        self.plan_only
    }

    /// Counts one run; prints `what` with the progress (not in a planning pass).
    pub(super) fn tick(&self, what: &str) {
        let done = self.done.get() + 1;
        self.done.set(done);
        if self.show {
            eprintln!(
                "[{}] {what}",
                self.status(done, self.started.elapsed().as_secs_f64())
            );
        }
    }

    /// Runs counted so far.
    pub(super) fn done(&self) -> usize {
        self.done.get()
    }

    /// Wall seconds since the tally started.
    pub(super) fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// `paper run 12/80, 45 s, ETA 4 min 10 s` (without a plan: `paper run 12, 45 s`).
    pub(super) fn status(&self, done: usize, elapsed_s: f64) -> String {
        match self.planned {
            Some(n) if n >= done && done > 0 => {
                let eta = elapsed_s / done as f64 * (n - done) as f64;
                format!(
                    "{} run {done}/{n}, {}, ETA {}",
                    self.paper,
                    duration(elapsed_s),
                    duration(eta)
                )
            }
            _ => format!("{} run {done}, {}", self.paper, duration(elapsed_s)),
        }
    }
}

/// `42 s`, `4 min 10 s`, `1 h 05 min`.
pub(super) fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, s % 3600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_and_eta() {
        let opts = ReproduceOptions {
            planned_runs: Some(80),
            ..ReproduceOptions::default()
        };
        let t = Tally::new("icl", &opts);
        assert_eq!(
            t.status(20, 60.0),
            "icl run 20/80, 1 min 00 s, ETA 3 min 00 s"
        );
        let unplanned = Tally::new("icl", &ReproduceOptions::default());
        assert_eq!(unplanned.status(3, 5.0), "icl run 3, 5 s");
        assert_eq!(duration(3_900.0), "1 h 05 min");
        t.tick("x");
        assert_eq!(t.done(), 1);
    }
}
