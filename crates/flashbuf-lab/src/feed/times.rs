//! Where a feed's two threads spend a replay ([`FeedTimes`]): which of them bounds a run.
//! `flashbuf bench` reports it; a thread that hardly waits is the one to make faster.

use serde::Serialize;
use std::time::{Duration, Instant};

/// Seconds each side of a feed spent, over one replay (machine figures: they vary from
/// run to run; not in the result documents, which hold the run's decisions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct FeedTimes {
    /// The reader thread reading, decompressing, parsing and mapping the trace, and
    /// applying a workload transform.
    pub decode_s: f64,
    /// The reader thread running the policy's stream model (FD-Buffer's estimator); 0
    /// without one.
    pub model_s: f64,
    /// The reader thread waiting for the replay to take a batch (the channel full).
    pub reader_wait_s: f64,
    /// The replay thread waiting for the reader's next batch.
    pub replay_wait_s: f64,
}

/// Which thread bounds a run ([`FeedTimes::bound`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Reader,
    Replay,
    Both,
}

impl FeedTimes {
    /// The thread that bounds the run: the one that waited less for the other
    /// (`"reader"` or `"replay"`), or `"both"` when neither waited for more than a
    /// twentieth of the reader's run (its decoding, model and waits: the run's span).
    pub fn bound(&self) -> &'static str {
        match self.which() {
            Bound::Reader => "reader",
            Bound::Replay => "replay",
            Bound::Both => "both",
        }
    }

    /// [`FeedTimes::bound`] in words, for a sentence: `"the reader"`, `"the replay"` or
    /// `"both threads"`.
    pub fn bound_in_words(&self) -> &'static str {
        match self.which() {
            Bound::Reader => "the reader",
            Bound::Replay => "the replay",
            Bound::Both => "both threads",
        }
    }

    fn which(&self) -> Bound {
        let span = self.decode_s + self.model_s + self.reader_wait_s;
        if self.reader_wait_s.max(self.replay_wait_s) <= span / 20.0 {
            Bound::Both
        } else if self.replay_wait_s > self.reader_wait_s {
            Bound::Reader
        } else {
            Bound::Replay
        }
    }
}

/// The time of the sections it measures, added up.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally(Duration);

impl Tally {
    /// Runs `f`, adding its time.
    #[inline]
    pub(crate) fn time<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        self.0 += t.elapsed();
        r
    }

    /// Seconds so far.
    pub(crate) fn secs(&self) -> f64 {
        self.0.as_secs_f64()
    }

    /// The time added since `earlier` (a copy of this tally taken then).
    pub(crate) fn since(&self, earlier: Tally) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// Takes `d` off the total (time an enclosed section counted elsewhere).
    pub(crate) fn subtract(&mut self, d: Duration) {
        self.0 = self.0.saturating_sub(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_the_thread_that_waited_less() {
        let t = |reader_wait_s, replay_wait_s| FeedTimes {
            decode_s: 0.050,
            model_s: 0.040,
            reader_wait_s,
            replay_wait_s,
        };
        assert_eq!(t(0.001, 0.030).bound(), "reader");
        assert_eq!(t(0.030, 0.001).bound(), "replay");
        // Neither waited a twentieth of the 0.092 s the reader ran: both bind.
        assert_eq!(t(0.002, 0.004).bound(), "both");
        assert_eq!(t(0.002, 0.005).bound(), "reader");
    }

    #[test]
    fn a_tally_adds_its_sections() {
        let mut t = Tally::default();
        let pause = Duration::from_millis(2);
        assert_eq!(t.time(|| 7), 7);
        t.time(|| std::thread::sleep(pause));
        t.time(|| std::thread::sleep(pause));
        assert!(t.secs() >= 2.0 * pause.as_secs_f64(), "{}", t.secs());
    }
}
