//! A disk drive model: seek time by distance, rotational delay from the platter's angle on
//! the virtual clock, media transfer, a read-ahead buffer and a write-back cache destaged
//! shortest-positioning-time-first. No FTL.
//!
//! - seek(d) = 0 for d = 0, else `seek_min + (seek_full − seek_min)·√(d / capacity)`;
//! - the platter turns at `rpm`; the angle of byte `x` is `(x mod track) / track` with
//!   `track = period / media time per byte`, and the angle under the head at virtual time
//!   `t` is `((t + phase) mod period) / period`, `phase` chosen by the seed;
//! - a read that falls inside the read-ahead window costs overhead and host transfer only;
//!   a miss waits for the disk, positions, transfers and refills the window (free);
//! - a write goes to the cache (overhead and host transfer); when the cache holds
//!   `write_cache_entries` writes, the one with the shortest positioning time is destaged
//!   first and the host waits for it. `sync` destages everything.

use super::profiles::HddModel;

#[derive(Debug, Clone)]
pub(crate) struct Hdd {
    capacity: u64,
    period_ns: u64,
    track_bytes: u64,
    media_ns_per_byte: f64,
    seek_min_ns: f64,
    seek_span_ns: f64,
    read_overhead_ns: u64,
    write_overhead_ns: u64,
    host_ns_per_byte: f64,
    readahead_bytes: u64,
    cache_entries: usize,
    phase_ns: u64,
    head: u64,
    disk_free_ns: u64,
    ra: (u64, u64),
    pending: Vec<(u64, u64)>,
}

fn ns(x: f64) -> u64 {
    x.round().max(0.0) as u64
}

impl Hdd {
    pub(crate) fn new(m: &HddModel, capacity: u64, seed: u64) -> Result<Self, String> {
        if m.rpm <= 0.0 || m.media_ns_per_byte <= 0.0 || m.seek_full_ms < m.seek_min_ms {
            return Err(format!("impossible disk model {m:?}"));
        }
        let period_ns = ns(60.0e9 / m.rpm);
        let track_bytes = ((period_ns as f64 / m.media_ns_per_byte) as u64).max(1);
        let mut rng = super::SplitMix64::new(seed ^ 0xD15C);
        Ok(Self {
            capacity: capacity.max(1),
            period_ns,
            track_bytes,
            media_ns_per_byte: m.media_ns_per_byte,
            seek_min_ns: m.seek_min_ms * 1e6,
            seek_span_ns: (m.seek_full_ms - m.seek_min_ms) * 1e6,
            read_overhead_ns: ns(m.read_overhead_us * 1e3),
            write_overhead_ns: ns(m.write_overhead_us * 1e3),
            host_ns_per_byte: m.host_ns_per_byte,
            readahead_bytes: m.readahead_bytes,
            cache_entries: m.write_cache_entries as usize,
            phase_ns: rng.next_u64() % period_ns.max(1),
            head: 0,
            disk_free_ns: 0,
            ra: (0, 0),
            pending: Vec::with_capacity(m.write_cache_entries as usize),
        })
    }

    fn xfer(&self, len: u64) -> u64 {
        ns(len as f64 * self.host_ns_per_byte)
    }

    fn media(&self, len: u64) -> u64 {
        ns(len as f64 * self.media_ns_per_byte)
    }

    /// Seek plus rotational wait to reach `target` starting at `at`.
    fn position_ns(&self, target: u64, at: u64) -> u64 {
        let dist = target.abs_diff(self.head);
        let seek = if dist == 0 {
            0
        } else {
            ns(self.seek_min_ns + self.seek_span_ns * (dist as f64 / self.capacity as f64).sqrt())
        };
        let arrive = at + seek;
        let p = self.period_ns;
        let now_pos = (arrive + self.phase_ns) % p;
        let target_pos = ns((target % self.track_bytes) as f64 * self.media_ns_per_byte) % p;
        let mut wait = (target_pos + p - now_pos) % p;
        if p - wait < 1_000 {
            wait = 0; // rounding: the sector is (just) under the head
        }
        seek + wait
    }

    fn access(&mut self, off: u64, len: u64, at: u64) -> u64 {
        let start = at.max(self.disk_free_ns);
        let end = start + self.position_ns(off, start) + self.media(len);
        self.head = off + len;
        self.disk_free_ns = end;
        end
    }

    fn destage_one(&mut self, at: u64) -> u64 {
        let start = at.max(self.disk_free_ns);
        let mut best = 0;
        let mut best_ns = u64::MAX;
        for (i, &(off, _)) in self.pending.iter().enumerate() {
            let p = self.position_ns(off, start);
            if p < best_ns {
                best_ns = p;
                best = i;
            }
        }
        let (off, len) = self.pending.swap_remove(best);
        self.access(off, len, start)
    }

    /// Completion time of a read arriving at `now`.
    pub(crate) fn read(&mut self, off: u64, len: u64, now: u64) -> u64 {
        let t = now + self.read_overhead_ns;
        if off >= self.ra.0 && off + len <= self.ra.1 {
            return t + self.xfer(len);
        }
        let end = self.access(off, len, t);
        let ra_end = (off + len + self.readahead_bytes).min(self.capacity);
        self.ra = (off, ra_end);
        self.head = ra_end;
        end + self.xfer(len)
    }

    /// Completion time of a write arriving at `now`.
    pub(crate) fn write(&mut self, off: u64, len: u64, now: u64) -> u64 {
        let t = now + self.write_overhead_ns + self.xfer(len);
        // Keep the read-ahead window coherent: a write inside it ends it.
        if off < self.ra.1 && off + len > self.ra.0 {
            self.ra = (0, 0);
        }
        if self.cache_entries == 0 {
            return self.access(off, len, t);
        }
        let mut done = t;
        if self.pending.len() == self.cache_entries {
            done = done.max(self.destage_one(now));
        }
        self.pending.push((off, len));
        done
    }

    /// Completion time of a sync arriving at `now`: the cache is destaged.
    pub(crate) fn sync(&mut self, now: u64) -> u64 {
        let mut done = now;
        while !self.pending.is_empty() {
            done = done.max(self.destage_one(now));
        }
        done.max(now)
    }
}
