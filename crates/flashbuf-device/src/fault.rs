//! A fault-injecting device for crash and error tests.
//!
//! Modelled on SQLite's crash VFS (unsynced writes dropped or torn per sector, possibly left
//! as garbage) and redb's crash backend (a *live* image that reads see and a *durable*
//! image that survives a crash). The device keeps:
//! - the live image: every completed write;
//! - the durable image: the live image as of the last successful `sync`;
//! - the writes since that sync, in order.
//!
//! [`FaultDevice::crash_image`] builds what a power cut would leave: the durable image plus
//! some of the pending writes, chosen by a [`CrashMode`] (none, a prefix, or a seeded
//! random subset — i.e. any reordering), each kept whole or torn at sector boundaries, the
//! lost sectors holding their old bytes or garbage. [`FaultPlan`] fails the N-th read, write
//! or sync with `EIO` or `ENOSPC`. Everything is deterministic from the seeds given.
//!
//! Size changes (`set_len`) are durable at once, as a journaling file system's metadata
//! would be after its own commit; pending writes beyond a shrink are dropped.

use crate::{check_range, counters::Counters, Device, DeviceError, IoOp, MemDevice, WriteOp};
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::DeviceStats;
use parking_lot::Mutex;

/// The error an injected fault reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// An I/O error.
    Eio,
    /// Out of space.
    Enospc,
}

impl FaultKind {
    fn name(self) -> &'static str {
        match self {
            FaultKind::Eio => "EIO",
            FaultKind::Enospc => "ENOSPC",
        }
    }
}

/// Which operations fail. Counts start when the plan is set; `Some(n)` fails the n-th
/// operation of that kind (1-based); with `sticky`, every later one fails too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultPlan {
    /// Fail the n-th read.
    pub fail_read: Option<u64>,
    /// Fail the n-th write (a batch counts as one write per op).
    pub fail_write: Option<u64>,
    /// Fail the n-th sync.
    pub fail_sync: Option<u64>,
    /// The error reported.
    pub kind: FaultKind,
    /// Keep failing after the first fault (a device that went away).
    pub sticky: bool,
}

impl Default for FaultPlan {
    fn default() -> Self {
        Self {
            fail_read: None,
            fail_write: None,
            fail_sync: None,
            kind: FaultKind::Eio,
            sticky: false,
        }
    }
}

/// How a pending write may be torn by a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tear {
    /// Sector size: each sector of a torn write is persisted or lost on its own (512 or
    /// 4096 are the usual ones).
    pub sector_bytes: usize,
    /// Lost sectors hold random bytes instead of their old contents.
    pub garbage: bool,
}

/// What survives a crash of the pending (unsynced) writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// Nothing unsynced survives.
    LoseUnsynced,
    /// Every pending write survives (a crash right after the writes reached the medium).
    KeepAll,
    /// The first `writes` pending writes survive whole; with `tear`, the next one is torn.
    Prefix {
        /// Writes kept.
        writes: usize,
        /// How the next write is torn, if at all.
        tear: Option<Tear>,
    },
    /// Each pending write independently survives whole, is lost, or (with `tear`) is torn
    /// sector by sector: any subset in any order.
    Random {
        /// Seed of the choices.
        seed: u64,
        /// How writes may be torn, if at all.
        tear: Option<Tear>,
    },
}

#[derive(Debug)]
struct Pending {
    offset: u64,
    data: Vec<u8>,
}

#[derive(Debug, Default)]
struct Ops {
    reads: u64,
    writes: u64,
    syncs: u64,
    failed: bool,
}

#[derive(Debug)]
struct State {
    live: MemDevice,
    durable: MemDevice,
    pending: Vec<Pending>,
    plan: FaultPlan,
    ops: Ops,
}

/// A memory device with crash images and injected faults.
///
/// It has no background queue ([`Device::background`] is `None`): every request goes
/// through its one ordered log of pending writes, so crash images stay exact and stores
/// run their background work on their old path.
///
/// ```
/// use flashbuf_device::fault::{CrashMode, FaultDevice};
/// use flashbuf_device::Device;
/// let d = FaultDevice::new(4096);
/// d.write_at(0, b"synced").unwrap();
/// d.sync().unwrap();
/// d.write_at(0, b"lost!!").unwrap();
/// let after = d.crash_image(CrashMode::LoseUnsynced);
/// assert_eq!(&after[..6], b"synced");
/// ```
#[derive(Debug)]
pub struct FaultDevice {
    state: Mutex<State>,
    counters: Counters,
}

impl FaultDevice {
    /// A zeroed device of `len` bytes (all of it durable).
    pub fn new(len: u64) -> Self {
        Self::from_image(vec![0u8; len as usize])
    }

    /// A device whose live and durable images are `image` (e.g. a crash image, to reopen
    /// a store after a crash).
    pub fn from_image(image: Vec<u8>) -> Self {
        Self {
            state: Mutex::new(State {
                live: MemDevice::from_bytes(image.clone()),
                durable: MemDevice::from_bytes(image),
                pending: Vec::new(),
                plan: FaultPlan::default(),
                ops: Ops::default(),
            }),
            counters: Counters::default(),
        }
    }

    /// Sets the fault plan; operation counts restart from zero.
    pub fn set_plan(&self, plan: FaultPlan) {
        let mut s = self.state.lock();
        s.plan = plan;
        s.ops = Ops::default();
    }

    /// Writes since the last successful sync.
    pub fn pending_writes(&self) -> usize {
        self.state.lock().pending.len()
    }

    /// The live image (what reads see now).
    pub fn live_image(&self) -> Vec<u8> {
        self.state.lock().live.snapshot()
    }

    /// The durable image (what the last successful sync made durable).
    pub fn durable_image(&self) -> Vec<u8> {
        self.state.lock().durable.snapshot()
    }

    /// The image a crash now would leave, per `mode`. The device itself is unchanged.
    pub fn crash_image(&self, mode: CrashMode) -> Vec<u8> {
        let s = self.state.lock();
        let mut img = s.durable.snapshot();
        let n = s.pending.len();
        match mode {
            CrashMode::LoseUnsynced => {}
            CrashMode::KeepAll => {
                for p in &s.pending {
                    apply(&mut img, p, None);
                }
            }
            CrashMode::Prefix { writes, tear } => {
                for p in s.pending.iter().take(writes.min(n)) {
                    apply(&mut img, p, None);
                }
                if let (Some(t), Some(p)) = (tear, s.pending.get(writes)) {
                    let mut rng = SplitMix64::new(writes as u64 ^ 0x7EA2);
                    apply(&mut img, p, Some((t, &mut rng)));
                }
            }
            CrashMode::Random { seed, tear } => {
                let mut rng = SplitMix64::new(seed);
                for p in &s.pending {
                    let choice = rng.below(if tear.is_some() { 3 } else { 2 });
                    match (choice, tear) {
                        (0, _) => apply(&mut img, p, None),
                        (2, Some(t)) => apply(&mut img, p, Some((t, &mut rng))),
                        _ => {}
                    }
                }
            }
        }
        img
    }

    fn fault(&self, s: &mut State, op: IoOp) -> Result<(), DeviceError> {
        let (count, limit) = match op {
            IoOp::Read => {
                s.ops.reads += 1;
                (s.ops.reads, s.plan.fail_read)
            }
            IoOp::Write => {
                s.ops.writes += 1;
                (s.ops.writes, s.plan.fail_write)
            }
            IoOp::Sync => {
                s.ops.syncs += 1;
                (s.ops.syncs, s.plan.fail_sync)
            }
            IoOp::SetLen | IoOp::Open => return Ok(()),
        };
        let hit = match limit {
            Some(n) if count == n => true,
            Some(n) => s.plan.sticky && s.ops.failed && count > n,
            None => false,
        };
        if hit {
            s.ops.failed = true;
            return Err(DeviceError::Injected {
                op,
                kind: s.plan.kind.name(),
            });
        }
        Ok(())
    }
}

/// Applies pending write `p` to `img`, whole or torn sector by sector.
fn apply(img: &mut [u8], p: &Pending, tear: Option<(Tear, &mut SplitMix64)>) {
    let start = p.offset as usize;
    let end = (start + p.data.len()).min(img.len());
    if start >= end {
        return;
    }
    match tear {
        None => img[start..end].copy_from_slice(&p.data[..end - start]),
        Some((t, rng)) => {
            let sector = t.sector_bytes.max(1);
            // Sector boundaries are absolute device offsets.
            let mut at = start;
            while at < end {
                let next = ((at / sector) + 1) * sector;
                let stop = next.min(end);
                if rng.below(2) == 0 {
                    img[at..stop].copy_from_slice(&p.data[at - start..stop - start]);
                } else if t.garbage {
                    for b in &mut img[at..stop] {
                        *b = rng.next_u64() as u8;
                    }
                }
                at = stop;
            }
        }
    }
}

impl Device for FaultDevice {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        check_range(IoOp::Read, offset, buf.len(), s.live.len())?;
        self.fault(&mut s, IoOp::Read)?;
        s.live.read_at(offset, buf)?;
        self.counters.read(buf.len());
        Ok(())
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.write_batch(&[WriteOp { offset, data: buf }])
    }

    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        let len = s.live.len();
        for op in ops {
            check_range(IoOp::Write, op.offset, op.data.len(), len)?;
        }
        for op in ops {
            // Ops before a failing one in a batch are done (as a real device would).
            self.fault(&mut s, IoOp::Write)?;
            s.live.write_at(op.offset, op.data)?;
            s.pending.push(Pending {
                offset: op.offset,
                data: op.data.to_vec(),
            });
            self.counters.write(op.data.len());
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        self.fault(&mut s, IoOp::Sync)?;
        let pending = std::mem::take(&mut s.pending);
        for p in &pending {
            s.durable.write_at(p.offset, &p.data)?;
        }
        self.counters.sync();
        Ok(())
    }

    fn len(&self) -> u64 {
        self.state.lock().live.len()
    }

    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        let mut s = self.state.lock();
        s.live.set_len(len)?;
        s.durable.set_len(len)?;
        s.pending.retain(|p| p.offset + p.data.len() as u64 <= len);
        Ok(())
    }

    fn max_len(&self) -> Option<u64> {
        self.state.lock().live.max_len()
    }

    fn stats(&self) -> DeviceStats {
        self.counters.snapshot()
    }

    fn describe(&self) -> String {
        "fault(memory)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev_with_pending() -> FaultDevice {
        let d = FaultDevice::new(8192);
        d.write_at(0, &[1u8; 4096]).unwrap();
        d.sync().unwrap();
        d.write_at(0, &[2u8; 4096]).unwrap();
        d.write_at(4096, &[3u8; 4096]).unwrap();
        d
    }

    #[test]
    fn live_reads_see_unsynced_writes_and_crashes_lose_them() {
        let d = dev_with_pending();
        let mut b = [0u8; 1];
        d.read_at(0, &mut b).unwrap();
        assert_eq!(b[0], 2);
        assert_eq!(d.pending_writes(), 2);
        let img = d.crash_image(CrashMode::LoseUnsynced);
        assert!(img[..4096].iter().all(|&x| x == 1));
        assert!(img[4096..].iter().all(|&x| x == 0));
        let img = d.crash_image(CrashMode::KeepAll);
        assert_eq!((img[0], img[4096]), (2, 3));
        let img = d.crash_image(CrashMode::Prefix {
            writes: 1,
            tear: None,
        });
        assert_eq!((img[0], img[4096]), (2, 0));
    }

    #[test]
    fn torn_writes_mix_old_and_new_sectors_only_at_boundaries() {
        let d = dev_with_pending();
        let tear = Tear {
            sector_bytes: 512,
            garbage: false,
        };
        let mut saw_torn = false;
        for seed in 0..50 {
            let img = d.crash_image(CrashMode::Random {
                seed,
                tear: Some(tear),
            });
            for sector in img[..4096].chunks(512) {
                // Each sector is wholly old (1) or wholly new (2).
                assert!(
                    sector.iter().all(|&x| x == sector[0]) && (sector[0] == 1 || sector[0] == 2)
                );
            }
            let news = img[..4096].chunks(512).filter(|s| s[0] == 2).count();
            saw_torn |= news > 0 && news < 8;
        }
        assert!(saw_torn, "no seed tore the write");
        // Same seed, same image.
        let a = d.crash_image(CrashMode::Random {
            seed: 9,
            tear: Some(tear),
        });
        let b = d.crash_image(CrashMode::Random {
            seed: 9,
            tear: Some(tear),
        });
        assert_eq!(a, b);
    }

    #[test]
    fn garbage_tear_writes_noise_into_lost_sectors() {
        let d = dev_with_pending();
        let tear = Tear {
            sector_bytes: 4096,
            garbage: true,
        };
        let img = d.crash_image(CrashMode::Prefix {
            writes: 0,
            tear: Some(tear),
        });
        let s = &img[..4096];
        assert!(s.iter().all(|&x| x == 2) || s.iter().any(|&x| x != 1 && x != 2));
    }

    #[test]
    fn injected_faults_fail_the_nth_op_and_stick_if_asked() {
        let d = FaultDevice::new(4096);
        d.set_plan(FaultPlan {
            fail_write: Some(2),
            kind: FaultKind::Enospc,
            sticky: true,
            ..FaultPlan::default()
        });
        d.write_at(0, b"a").unwrap();
        let e = d.write_at(0, b"b").unwrap_err();
        assert!(e.to_string().contains("ENOSPC"), "{e}");
        assert!(d.write_at(0, b"c").is_err(), "sticky");
        let mut b = [0u8; 1];
        d.read_at(0, &mut b).unwrap();
        assert_eq!(&b, b"a");
        d.set_plan(FaultPlan {
            fail_sync: Some(1),
            ..FaultPlan::default()
        });
        assert!(d.sync().is_err());
        assert!(d.sync().is_ok(), "not sticky");
        assert_eq!(d.durable_image()[0], b'a');
    }

    #[test]
    fn from_image_reopens_a_crash_image() {
        let d = dev_with_pending();
        let d2 = FaultDevice::from_image(d.crash_image(CrashMode::KeepAll));
        let mut b = [0u8; 1];
        d2.read_at(4096, &mut b).unwrap();
        assert_eq!(b[0], 3);
        assert_eq!(d2.pending_writes(), 0);
    }
}
