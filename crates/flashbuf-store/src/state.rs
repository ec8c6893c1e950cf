//! The A/B state record every store keeps behind its superblock (format version 2,
//! issue 11): the durable extent of the data area, and store-specific bytes (StableBuffer:
//! the copies its last completed `sync` promised).
//!
//! Two copies, A at [`Superblock::BYTES`] and B right after it, each `copy_bytes` long (a
//! multiple of 4096, so that `O_DIRECT` can write it). At rest both hold the same, latest
//! generation. A commit writes the *next* generation into one copy and syncs the device,
//! then into the other and syncs again. So a power cut during a commit leaves at least one
//! copy of the previous or the new generation intact (a torn copy fails its checksum;
//! recovery takes the valid copy with the highest generation), and damage at rest to one
//! copy loses nothing: the other holds the same generation. (Alternating copies with one
//! sync would leave the latest generation in one copy only: a damaged newest copy would
//! then silently fall back to an older promise record, and a second damage — to a
//! promised slot — would serve stale data; the fuzzer found exactly that.) Copies carry
//! the format's salt (in the field and in the checksum mask), so a copy left by an earlier
//! format of the device is never taken.
//!
//! | bytes | field |
//! |-------|-------|
//! | 0..4  | CRC32C of bytes 4..64+n, XOR a mask derived from the salt |
//! | 4..12 | magic `FBSTATE\0` |
//! | 12..20 | generation (the higher valid copy wins) |
//! | 20..28 | salt of the format |
//! | 28..36 | data end: the device length the store has grown to (truncation check) |
//! | 36..40 | length `n` of the store-specific payload |
//! | 40..64 | zero |
//! | 64..64+n | payload |
//!
//! # The extent
//! A store grows its device with `set_len` as writes need it; each caller's `sync` notes
//! the device length *before* syncing the device (so that length is durable once the sync
//! returns: a file system may make data durable before a size change, never a size change
//! it has not synced), then, if it exceeds the recorded data end, commits it. So every
//! page a `sync` promises lies below a durable data end, and a file shorter than its
//! durable data end has lost data that was promised: `StateArea::check_extent` refuses
//! to open it. A file *longer* than the record (growth since the last sync, or a device
//! extended on purpose) is fine: nothing promised lies beyond the record. Growth itself
//! costs no extra I/O; a sync after growth costs one commit.
//!
//! # Damage
//! One damaged copy is survivable: the other holds the same generation (or, if a commit
//! was cut short, the previous one, which is then the durable truth). Both damaged: the
//! store cannot know what it promised and refuses to open.

use crate::{Poison, StoreError, Superblock};
use flashbuf_core::page::crc32c;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::AlignedBuf;
use flashbuf_device::Device;
use parking_lot::Mutex;

/// Magic of a state record copy.
pub const STATE_MAGIC: [u8; 8] = *b"FBSTATE\0";
/// Bytes of a copy's header (before the payload).
pub const STATE_HEADER_BYTES: usize = 64;

/// What a state record copy says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateRecord {
    /// Generation (each commit adds one).
    pub generation: u64,
    /// The device length the store has grown to.
    pub data_end: u64,
    /// Store-specific bytes.
    pub payload: Vec<u8>,
}

/// Why a copy is not valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyInvalid {
    /// All zero (never written).
    Empty,
    /// Magic, salt, length or checksum wrong (torn, damaged, another format's).
    Damaged,
}

fn mask(salt: u64) -> u32 {
    (SplitMix64::new(salt ^ 0x5354_4154_4521_u64).next_u64() >> 32) as u32
}

/// Bytes of one copy for a payload of at most `payload_max` bytes.
pub fn copy_bytes_for(payload_max: usize) -> u64 {
    ((STATE_HEADER_BYTES + payload_max) as u64).div_ceil(4096) * 4096
}

/// Encodes `r` into a copy of `copy_bytes` bytes.
pub fn encode(r: &StateRecord, salt: u64, copy_bytes: u64) -> Result<Vec<u8>, StoreError> {
    let n = r.payload.len();
    if (STATE_HEADER_BYTES + n) as u64 > copy_bytes {
        return Err(StoreError::Invalid(format!(
            "state record of {n} bytes does not fit a copy of {copy_bytes} bytes"
        )));
    }
    let mut b = vec![0u8; copy_bytes as usize];
    b[4..12].copy_from_slice(&STATE_MAGIC);
    b[12..20].copy_from_slice(&r.generation.to_le_bytes());
    b[20..28].copy_from_slice(&salt.to_le_bytes());
    b[28..36].copy_from_slice(&r.data_end.to_le_bytes());
    b[36..40].copy_from_slice(&(n as u32).to_le_bytes());
    b[STATE_HEADER_BYTES..STATE_HEADER_BYTES + n].copy_from_slice(&r.payload);
    let c = crc32c(&b[4..STATE_HEADER_BYTES + n]) ^ mask(salt);
    b[0..4].copy_from_slice(&c.to_le_bytes());
    Ok(b)
}

/// Decodes a copy written with `salt`.
pub fn decode(b: &[u8], salt: u64) -> Result<StateRecord, CopyInvalid> {
    let u64_at = |at: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(a)
    };
    if b.len() < STATE_HEADER_BYTES {
        return Err(CopyInvalid::Damaged);
    }
    if b.iter().all(|&x| x == 0) {
        return Err(CopyInvalid::Empty);
    }
    let n = u32::from_le_bytes([b[36], b[37], b[38], b[39]]) as usize;
    if b[4..12] != STATE_MAGIC || u64_at(20) != salt || STATE_HEADER_BYTES + n > b.len() {
        return Err(CopyInvalid::Damaged);
    }
    let stored = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if stored != crc32c(&b[4..STATE_HEADER_BYTES + n]) ^ mask(salt) {
        return Err(CopyInvalid::Damaged);
    }
    Ok(StateRecord {
        generation: u64_at(12),
        data_end: u64_at(28),
        payload: b[STATE_HEADER_BYTES..STATE_HEADER_BYTES + n].to_vec(),
    })
}

#[derive(Debug)]
struct Current {
    record: StateRecord,
    /// The copy (0: A, 1: B) the next commit writes first.
    next_copy: u64,
}

/// The state record area of an open store.
#[derive(Debug)]
pub(crate) struct StateArea {
    copy_bytes: u64,
    salt: u64,
    current: Mutex<Current>,
}

/// What loading the state area found besides the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LoadNote {
    /// The other copy was damaged (not merely empty or older).
    pub(crate) other_damaged: bool,
}

/// Bytes of one copy of the state record for stores whose record holds little besides the
/// data extent (direct, ICL, log-structured).
pub(crate) const SMALL_COPY_BYTES: u64 = 4096;

impl StateArea {
    /// Byte offset of copy `k` (0: A, 1: B).
    fn offset(&self, k: u64) -> u64 {
        Superblock::BYTES as u64 + k * self.copy_bytes
    }

    /// Writes both copies of a new format (generation 1, `data_end`, `payload`); not
    /// synced (the caller syncs the whole format).
    pub(crate) fn format(
        dev: &dyn Device,
        copy_bytes: u64,
        salt: u64,
        data_end: u64,
        payload: Vec<u8>,
    ) -> Result<Self, StoreError> {
        let area = Self {
            copy_bytes,
            salt,
            current: Mutex::new(Current {
                record: StateRecord {
                    generation: 1,
                    data_end,
                    payload,
                },
                next_copy: 0,
            }),
        };
        let cur = area.current.lock();
        area.write_copy(dev, 0, &cur.record)?;
        area.write_copy(dev, 1, &cur.record)?;
        drop(cur);
        Ok(area)
    }

    fn write_copy(&self, dev: &dyn Device, k: u64, r: &StateRecord) -> Result<(), StoreError> {
        let enc = encode(r, self.salt, self.copy_bytes)?;
        let mut b = AlignedBuf::zeroed(enc.len(), 4096);
        b.copy_from_slice(&enc);
        dev.write_at(self.offset(k), &b)?;
        Ok(())
    }

    /// Reads both copies and takes the valid one with the highest generation; refuses if
    /// neither is valid.
    pub(crate) fn load(
        dev: &dyn Device,
        copy_bytes: u64,
        salt: u64,
    ) -> Result<(Self, LoadNote), StoreError> {
        let area_end = Superblock::BYTES as u64 + 2 * copy_bytes;
        if dev.len() < area_end {
            return Err(StoreError::Format(format!(
                "{} holds {} bytes, less than the end of its state records ({area_end}): the store file is truncated",
                dev.describe(),
                dev.len()
            )));
        }
        let mut b = AlignedBuf::zeroed(copy_bytes as usize, 4096);
        let mut copies = [Err(CopyInvalid::Empty), Err(CopyInvalid::Empty)];
        for (k, c) in copies.iter_mut().enumerate() {
            dev.read_at(Superblock::BYTES as u64 + k as u64 * copy_bytes, &mut b)?;
            *c = decode(&b, salt);
        }
        let best = match (&copies[0], &copies[1]) {
            (Ok(a), Ok(b)) if b.generation > a.generation => 1,
            (Ok(a), Ok(b)) if a.generation > b.generation => 0,
            (Ok(_), _) => 0,
            (Err(_), Ok(_)) => 1,
            (Err(_), Err(_)) => {
                return Err(StoreError::Format(
                    "both copies of the state record are damaged: the store cannot tell what it promised (the store is corrupt)"
                        .to_string(),
                ))
            }
        };
        let other_damaged = matches!(copies[1 - best], Err(CopyInvalid::Damaged));
        // A commit cut short between its two writes leaves the copies apart: the next
        // commit writes the stale (or damaged) one first.
        let next_copy = match (&copies[0], &copies[1]) {
            (Ok(a), Ok(b)) if a.generation == b.generation => 0,
            _ => 1 - best as u64,
        };
        let [a, b] = copies;
        let record = if best == 0 { a } else { b }.map_err(|_| {
            StoreError::Invalid("state record vanished while loading (a bug)".to_string())
        })?;
        Ok((
            Self {
                copy_bytes,
                salt,
                current: Mutex::new(Current { record, next_copy }),
            },
            LoadNote { other_damaged },
        ))
    }

    /// Refuses a superblock naming another state record size than `copy_bytes` (`kind`
    /// names the store in the message).
    pub(crate) fn check_copy_size(
        sb: &Superblock,
        copy_bytes: u64,
        kind: &str,
    ) -> Result<(), StoreError> {
        if u64::from(sb.state_copy_bytes) != copy_bytes {
            return Err(StoreError::Format(format!(
                "{kind} store with a state record of {} bytes (expected {copy_bytes}): the store is corrupt",
                sb.state_copy_bytes
            )));
        }
        Ok(())
    }

    /// [`Self::load`], then refuses a device shorter than the durable extent (a file that
    /// lost pages that were synced).
    pub(crate) fn load_checked(
        dev: &dyn Device,
        copy_bytes: u64,
        salt: u64,
    ) -> Result<Self, StoreError> {
        let (area, _) = Self::load(dev, copy_bytes, salt)?;
        area.check_extent(dev)?;
        Ok(area)
    }

    /// The durable record (as of the last commit).
    pub(crate) fn record(&self) -> StateRecord {
        self.current.lock().record.clone()
    }

    /// The durable data end.
    pub(crate) fn data_end(&self) -> u64 {
        self.current.lock().record.data_end
    }

    /// Refuses a device shorter than the durable data end.
    pub(crate) fn check_extent(&self, dev: &dyn Device) -> Result<(), StoreError> {
        let end = self.data_end();
        if dev.len() < end {
            return Err(StoreError::Format(format!(
                "{} holds {} bytes, but the store's state record says its data area extends to byte {end}: the store file is truncated ({} bytes missing)",
                dev.describe(),
                dev.len(),
                end - dev.len()
            )));
        }
        Ok(())
    }

    /// Commits the next generation with `data_end` and/or `payload` changed (`None`: keep):
    /// one copy, sync, the other copy, sync; returns once both are durable. Commits are
    /// serialized. A device error poisons the store.
    pub(crate) fn commit(
        &self,
        dev: &dyn Device,
        poison: &Poison,
        data_end: Option<u64>,
        payload: Option<Vec<u8>>,
    ) -> Result<(), StoreError> {
        let mut cur = self.current.lock();
        poison.check()?;
        let mut next = cur.record.clone();
        next.generation += 1;
        if let Some(e) = data_end {
            next.data_end = e;
        }
        if let Some(p) = payload {
            next.payload = p;
        }
        let enc = encode(&next, self.salt, self.copy_bytes)?;
        let mut b = AlignedBuf::zeroed(enc.len(), 4096);
        b.copy_from_slice(&enc);
        let first = cur.next_copy;
        for k in [first, 1 - first] {
            poison.guard(dev.write_at(self.offset(k), &b))?;
            poison.guard(dev.sync())?;
        }
        cur.record = next;
        cur.next_copy = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashbuf_device::MemDevice;

    #[test]
    fn roundtrip_and_every_damage_is_invalid() {
        let r = StateRecord {
            generation: 9,
            data_end: 1 << 20,
            payload: vec![1, 2, 3, 4, 5],
        };
        let b = encode(&r, 77, 4096).unwrap();
        assert_eq!(decode(&b, 77).unwrap(), r);
        assert_eq!(
            decode(&b, 78),
            Err(CopyInvalid::Damaged),
            "another format's salt"
        );
        for at in (0..STATE_HEADER_BYTES + 5).step_by(3) {
            let mut d = b.clone();
            d[at] ^= 0x08;
            assert!(decode(&d, 77).is_err(), "flip at {at}");
        }
        assert_eq!(decode(&vec![0u8; 4096], 77), Err(CopyInvalid::Empty));
        assert!(encode(&r, 1, 64).is_err());
        assert_eq!(copy_bytes_for(4032), 4096);
        assert_eq!(copy_bytes_for(4033), 8192);
    }

    #[test]
    fn commits_write_both_copies_and_one_damaged_copy_loses_nothing() {
        let dev = MemDevice::new(3 * 4096);
        let poison = Poison::default();
        let a = StateArea::format(&dev, 4096, 5, 100, vec![]).unwrap();
        a.commit(&dev, &poison, Some(200), None).unwrap();
        a.commit(&dev, &poison, None, Some(vec![7])).unwrap();
        let (b, note) = StateArea::load(&dev, 4096, 5).unwrap();
        let latest = StateRecord {
            generation: 3,
            data_end: 200,
            payload: vec![7],
        };
        assert_eq!(b.record(), latest);
        assert!(!note.other_damaged);
        for k in [0u64, 1] {
            let d = MemDevice::from_bytes(dev.snapshot());
            d.write_at(Superblock::BYTES as u64 + k * 4096 + 30, &[0xFF])
                .unwrap();
            let (c, note) = StateArea::load(&d, 4096, 5).unwrap();
            assert_eq!(c.record(), latest, "copy {k} damaged");
            assert!(note.other_damaged);
            // The next commit rewrites the damaged copy first, then the good one.
            c.commit(&d, &poison, Some(300), None).unwrap();
            let (e, note) = StateArea::load(&d, 4096, 5).unwrap();
            assert_eq!((e.record().generation, e.data_end()), (4, 300));
            assert!(!note.other_damaged);
        }
        dev.write_at(Superblock::BYTES as u64 + 10, &[0xFF])
            .unwrap();
        dev.write_at(Superblock::BYTES as u64 + 4096 + 10, &[0xFF])
            .unwrap();
        let e = StateArea::load(&dev, 4096, 5).unwrap_err().to_string();
        assert!(e.contains("both copies"), "{e}");
        let short = MemDevice::new(4096);
        assert!(StateArea::load(&short, 4096, 5)
            .unwrap_err()
            .to_string()
            .contains("truncated"));
    }
}
