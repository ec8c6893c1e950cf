//! The flash back end of a [`SimDevice`](super::SimDevice): an FTL over a NAND array,
//! with the channels' busy times and the write buffer that time its requests.

use super::ftl::Ftl;
use super::nand::{Nand, NandGeometry, OpCost};
use super::profiles::FlashModel;

#[derive(Debug)]
pub(super) struct Flash {
    pub(super) ftl: Box<dyn Ftl>,
    pub(super) page_bytes: u64,
    pub(super) read_overhead_ns: u64,
    pub(super) write_overhead_ns: u64,
    pub(super) host_ns_per_byte: f64,
    /// Each channel's booked operations.
    pub(super) channels: Vec<Channel>,
    /// Write buffer: completion time of the flash work of each buffered page (ring).
    pub(super) ring: Vec<u64>,
    pub(super) ring_pos: usize,
    pub(super) cost: OpCost,
}

pub(super) fn ns(x: f64) -> u64 {
    x.round().max(0.0) as u64
}

pub(super) fn build_flash(f: &FlashModel, capacity: u64, seed: u64) -> Result<Flash, String> {
    let page = u64::from(f.page_bytes);
    if page == 0 || f.pages_per_block == 0 {
        return Err("page size and pages per block must be positive".into());
    }
    if !(0.0..=10.0).contains(&f.over_provisioning) {
        return Err(format!(
            "over-provisioning {} out of 0..=10",
            f.over_provisioning
        ));
    }
    let logical_pages = u32::try_from(capacity.div_ceil(page))
        .map_err(|_| format!("{capacity} bytes is too many {page}-byte pages"))?;
    let data_blocks = logical_pages.div_ceil(f.pages_per_block);
    let op_blocks = (f64::from(data_blocks) * f.over_provisioning).ceil() as u32;
    let extra = f.ftl.extra_blocks(op_blocks);
    let geo = NandGeometry {
        page_bytes: f.page_bytes,
        pages_per_block: f.pages_per_block,
        blocks: data_blocks
            .checked_add(extra)
            .ok_or_else(|| "too many blocks".to_string())?,
        channels: f.channels,
    };
    let nand = Nand::new(geo, f.timing)?;
    let ftl = f.ftl.build(nand, logical_pages, seed)?;
    Ok(Flash {
        ftl,
        page_bytes: page,
        read_overhead_ns: ns(f.read_overhead_us * 1e3),
        write_overhead_ns: ns(f.write_overhead_us * 1e3),
        host_ns_per_byte: f.host_ns_per_byte,
        channels: vec![Channel::default(); f.channels as usize],
        ring: vec![0; f.write_buffer_pages as usize],
        ring_pos: 0,
        cost: OpCost::new(f.channels),
    })
}

impl Flash {
    #[inline]
    fn xfer(&self, len: u64) -> u64 {
        ns(len as f64 * self.host_ns_per_byte)
    }

    /// Schedules the recorded operations on their channels from `start` (of a request
    /// submitted at `submitted`); returns when the last one ends (`start` if there were
    /// none).
    fn schedule(&mut self, start: u64, submitted: u64) -> u64 {
        self.ftl.nand_mut().take_cost(&mut self.cost);
        let mut end = start;
        for (ch, &busy) in self.channels.iter_mut().zip(&self.cost.channel_ns) {
            if busy > 0 {
                end = end.max(ch.book(start, busy, submitted));
            }
        }
        end
    }

    /// Forgets bookings that end by `floor_ns`, the earliest time a request can still
    /// start (the earliest stream clock).
    pub(super) fn prune(&mut self, floor_ns: u64) {
        self.channels.iter_mut().for_each(|c| c.prune(floor_ns));
    }

    /// Every channel idle from time zero (preconditioning resets the clocks).
    pub(super) fn reset_channels(&mut self) {
        self.channels.iter_mut().for_each(|c| c.busy.clear());
    }

    pub(super) fn write(&mut self, off: u64, len: u64, now: u64, seq: &mut u64) -> u64 {
        let page = self.page_bytes;
        let first = off / page;
        let last = (off + len - 1) / page;
        let t_data = now + self.write_overhead_ns + self.xfer(len.min(page));
        let t_host = now + self.write_overhead_ns + self.xfer(len);
        for lpn in first..=last {
            let lpn32 = lpn as u32;
            let covered = off <= lpn * page && off + len >= (lpn + 1) * page;
            if !covered {
                // Read-modify-write of a partly written page.
                let _ = self.ftl.read(lpn32);
            }
            *seq += 1;
            self.ftl.write(lpn32, *seq);
        }
        let end = self.schedule(t_data, now);
        if self.ring.is_empty() {
            return t_host.max(end);
        }
        let mut done = t_host;
        for _ in first..=last {
            done = done.max(self.ring[self.ring_pos]);
            self.ring[self.ring_pos] = end;
            self.ring_pos = (self.ring_pos + 1) % self.ring.len();
        }
        done
    }

    pub(super) fn read(&mut self, off: u64, len: u64, now: u64) -> u64 {
        let page = self.page_bytes;
        let t0 = now + self.read_overhead_ns;
        for lpn in off / page..=(off + len - 1) / page {
            let _ = self.ftl.read(lpn as u32);
        }
        let end = self.schedule(t0, now);
        (end + self.xfer(len.min(page))).max(t0 + self.xfer(len))
    }

    /// A sync at `now` ends when every operation of a request submitted by `now` has.
    pub(super) fn sync(&mut self, now: u64) -> u64 {
        self.channels
            .iter()
            .map(|c| c.last_end_submitted_by(now))
            .fold(now, u64::max)
    }
}

/// One channel's booked operations: `(begin, end, submitted)` intervals, ns, sorted and
/// disjoint, `submitted` being the start of the request that booked it.
///
/// A request's operations on a channel take the earliest idle gap from its start that
/// fits them, so a request submitted earlier in virtual time is not delayed by work
/// another stream booked for later (a background stream's burst). When requests are
/// submitted in order of their start times (one stream, `qd=N` batches, streams picked by
/// earliest clock) no gap ever lies after a new request's start, and this is exactly
/// "busy until the last booked operation ends, the next one starts at the later of that
/// and its request's start".
/// Bookings a channel keeps before merging its oldest ones.
const MAX_BOOKINGS: usize = 1024;

#[derive(Debug, Clone, Default)]
pub(super) struct Channel {
    busy: Vec<(u64, u64, u64)>,
}

impl Channel {
    /// Books `len` ns from the first gap at or after `start`; returns the end.
    fn book(&mut self, start: u64, len: u64, submitted: u64) -> u64 {
        let mut at = start;
        let mut pos = self.busy.len();
        for (i, &(b, e, _)) in self.busy.iter().enumerate() {
            if e <= at {
                continue;
            }
            if b >= at + len {
                pos = i;
                break;
            }
            at = at.max(e);
        }
        self.busy.insert(pos, (at, at + len, submitted));
        if self.busy.len() > MAX_BOOKINGS {
            // A stream left idle keeps the floor down: merge the oldest half into one
            // booking (its gaps lie before every clock that still moves).
            let half = MAX_BOOKINGS / 2;
            let (b, _, _) = self.busy[0];
            let (_, e, _) = self.busy[half - 1];
            let s = self.busy[..half].iter().map(|x| x.2).max().unwrap_or(0);
            self.busy.drain(..half);
            self.busy.insert(0, (b, e, s));
        }
        at + len
    }

    fn prune(&mut self, floor: u64) {
        let gone = self
            .busy
            .iter()
            .take_while(|&&(_, e, _)| e <= floor)
            .count();
        if gone > 0 {
            self.busy.drain(..gone);
        }
    }

    /// The latest end of an operation booked by a request submitted at or before `now`.
    fn last_end_submitted_by(&self, now: u64) -> u64 {
        self.busy
            .iter()
            .filter(|&&(_, _, s)| s <= now)
            .map(|&(_, e, _)| e)
            .max()
            .unwrap_or(0)
    }
}
