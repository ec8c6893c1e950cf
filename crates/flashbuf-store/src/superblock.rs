//! The superblock every store writes at byte 0 of its device.
//!
//! Layout (little-endian), in the first [`Superblock::BYTES`] bytes:
//!
//! | bytes    | field |
//! |----------|-------|
//! | 0..8     | magic `b"FLASHBUF"` |
//! | 8..12    | format version ([`SUPERBLOCK_FORMAT`]) |
//! | 12..28   | store kind, NUL-padded ASCII (`direct`, `stable-buffer`, ...) |
//! | 28..32   | page size in bytes |
//! | 32..40   | byte offset of the store's data area |
//! | 40..48   | configuration fingerprint (stores refuse a mismatch) |
//! | 48..56   | salt chosen at format time (generation stamp; every store has one) |
//! | 56..60   | bytes of one copy of the state record (a multiple of 4096) |
//! | 60..64   | length `n` of the store-specific extra bytes |
//! | 64..64+n | extra bytes (at most [`Superblock::EXTRA_MAX`]) |
//! | 4092..4096 | CRC32C of bytes 0..4092 |
//!
//! The superblock is written once, at format time. Behind it lie the two copies of the
//! store's state record ([`crate::state`]: the durable extent of the data area and
//! store-specific promises), then the store's own areas, from
//! [`Superblock::area_bytes`] on (a multiple of the page size, so that the data area stays
//! aligned for `O_DIRECT`).
//!
//! Format history: version 1 had no state record (a truncated store read as unwritten
//! pages; StableBuffer could not tell a damaged promised slot from a torn one); version 2
//! (issue 11) adds it. A version-1 store is refused with a message saying so.

use crate::StoreError;
use flashbuf_core::page::is_valid_page_size;
use flashbuf_device::Device;

/// Superblock magic.
pub const SUPERBLOCK_MAGIC: [u8; 8] = *b"FLASHBUF";
/// Superblock format version this build writes and reads.
pub const SUPERBLOCK_FORMAT: u32 = 2;

/// A decoded superblock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superblock {
    /// Store kind.
    pub kind: String,
    /// Page size in bytes.
    pub page_size: u32,
    /// Byte offset of the data area.
    pub data_offset: u64,
    /// Configuration fingerprint.
    pub config_fingerprint: u64,
    /// Salt chosen at format time.
    pub salt: u64,
    /// Bytes of one copy of the state record behind the superblock.
    pub state_copy_bytes: u32,
    /// Store-specific bytes.
    pub extra: Vec<u8>,
}

impl Superblock {
    /// Bytes of the encoded superblock.
    pub const BYTES: usize = 4096;
    /// Most store-specific extra bytes.
    pub const EXTRA_MAX: usize = 4096 - 68;
    /// Largest state record copy accepted (1 GiB).
    pub const STATE_COPY_MAX: u32 = 1 << 30;

    /// Bytes the superblock and two state copies of `state_copy_bytes` take at the start of
    /// the device, rounded up to whole pages of `page_size`: where the store's own areas
    /// begin.
    pub fn area_bytes(page_size: usize, state_copy_bytes: u64) -> u64 {
        let ps = page_size.max(1) as u64;
        (Self::BYTES as u64 + 2 * state_copy_bytes).div_ceil(ps) * ps
    }

    /// [`Self::area_bytes`] for the smallest state record (one 4096-byte block per copy,
    /// as the direct store has): where a direct store's data area begins.
    pub fn reserved_bytes(page_size: usize) -> u64 {
        Self::area_bytes(page_size, 4096)
    }

    /// Encodes into a `BYTES`-long buffer.
    pub fn encode(&self) -> Result<Vec<u8>, StoreError> {
        if self.kind.len() > 16 || self.extra.len() > Self::EXTRA_MAX {
            return Err(StoreError::Invalid(format!(
                "superblock kind '{}' or extra ({} bytes) too long",
                self.kind,
                self.extra.len()
            )));
        }
        let mut b = vec![0u8; Self::BYTES];
        b[0..8].copy_from_slice(&SUPERBLOCK_MAGIC);
        b[8..12].copy_from_slice(&SUPERBLOCK_FORMAT.to_le_bytes());
        b[12..12 + self.kind.len()].copy_from_slice(self.kind.as_bytes());
        b[28..32].copy_from_slice(&self.page_size.to_le_bytes());
        b[32..40].copy_from_slice(&self.data_offset.to_le_bytes());
        b[40..48].copy_from_slice(&self.config_fingerprint.to_le_bytes());
        b[48..56].copy_from_slice(&self.salt.to_le_bytes());
        b[56..60].copy_from_slice(&self.state_copy_bytes.to_le_bytes());
        b[60..64].copy_from_slice(&(self.extra.len() as u32).to_le_bytes());
        b[64..64 + self.extra.len()].copy_from_slice(&self.extra);
        let c = flashbuf_core::page::crc32c(&b[..Self::BYTES - 4]);
        b[Self::BYTES - 4..].copy_from_slice(&c.to_le_bytes());
        Ok(b)
    }

    /// Decodes and validates the bytes of a superblock; every refusal says why.
    pub fn decode(b: &[u8]) -> Result<Self, StoreError> {
        let refuse = |m: String| Err(StoreError::Format(m));
        if b.len() < Self::BYTES {
            return refuse(format!(
                "device holds {} bytes, too small for a flashbuf superblock",
                b.len()
            ));
        }
        if b[..Self::BYTES].iter().all(|&x| x == 0) {
            return refuse("device is not formatted (superblock is all zeros)".to_string());
        }
        if b[0..8] != SUPERBLOCK_MAGIC {
            return refuse(format!(
                "not a flashbuf store: wrong magic {:02x?} (expected \"FLASHBUF\")",
                &b[0..8]
            ));
        }
        let stored = u32::from_le_bytes([b[4092], b[4093], b[4094], b[4095]]);
        let computed = flashbuf_core::page::crc32c(&b[..Self::BYTES - 4]);
        if stored != computed {
            return refuse(format!(
                "superblock checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the store is corrupt"
            ));
        }
        let u32_at = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let u64_at = |at: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(a)
        };
        let format = u32_at(8);
        if format == 1 {
            return refuse(format!(
                "store format version 1, this build reads version {SUPERBLOCK_FORMAT}: the store was written by an earlier flashbuf without a state record (durable extent and promises); recreate it"
            ));
        }
        if format != SUPERBLOCK_FORMAT {
            return refuse(format!(
                "store format version {format}, this build reads version {SUPERBLOCK_FORMAT}"
            ));
        }
        let kind_bytes = &b[12..28];
        let end = kind_bytes.iter().position(|&x| x == 0).unwrap_or(16);
        let kind = String::from_utf8_lossy(&kind_bytes[..end]).into_owned();
        let page_size = u32_at(28);
        if !is_valid_page_size(page_size as usize) {
            return refuse(format!("superblock names an invalid page size {page_size}"));
        }
        let state_copy_bytes = u32_at(56);
        if state_copy_bytes == 0
            || !state_copy_bytes.is_multiple_of(4096)
            || state_copy_bytes > Self::STATE_COPY_MAX
        {
            return refuse(format!(
                "superblock names an invalid state record size {state_copy_bytes}"
            ));
        }
        let extra_len = u32_at(60) as usize;
        if extra_len > Self::EXTRA_MAX {
            return refuse(format!("superblock extra length {extra_len} is invalid"));
        }
        Ok(Self {
            kind,
            page_size,
            data_offset: u64_at(32),
            config_fingerprint: u64_at(40),
            salt: u64_at(48),
            state_copy_bytes,
            extra: b[64..64 + extra_len].to_vec(),
        })
    }

    /// Reads and validates the superblock of `dev`.
    pub fn read(dev: &dyn Device) -> Result<Self, StoreError> {
        if dev.len() < Self::BYTES as u64 {
            return Err(StoreError::Format(format!(
                "{} holds {} bytes, too small for a flashbuf store",
                dev.describe(),
                dev.len()
            )));
        }
        let mut b = flashbuf_core::AlignedBuf::zeroed(Self::BYTES, 4096);
        dev.read_at(0, &mut b)?;
        Self::decode(&b)
    }

    /// Writes the superblock to `dev` (not synced).
    pub fn write(&self, dev: &dyn Device) -> Result<(), StoreError> {
        let enc = self.encode()?;
        let mut b = flashbuf_core::AlignedBuf::zeroed(Self::BYTES, 4096);
        b.copy_from_slice(&enc);
        dev.write_at(0, &b)?;
        Ok(())
    }

    /// Checks that this superblock is what a store of `kind` with `page_size` and
    /// `fingerprint` expects; the error names the difference.
    pub fn expect(&self, kind: &str, page_size: usize, fingerprint: u64) -> Result<(), StoreError> {
        if self.kind != kind {
            return Err(StoreError::Format(format!(
                "device holds a '{}' store, not a '{kind}' store",
                self.kind
            )));
        }
        if self.page_size as usize != page_size {
            return Err(StoreError::Format(format!(
                "store was formatted with page size {} bytes, but page size {page_size} was requested",
                self.page_size
            )));
        }
        if self.config_fingerprint != fingerprint {
            return Err(StoreError::Format(format!(
                "store configuration differs from the one it was formatted with (fingerprint {:#x} on device, {fingerprint:#x} requested)",
                self.config_fingerprint
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sb() -> Superblock {
        Superblock {
            kind: "direct".into(),
            page_size: 4096,
            data_offset: 4096,
            config_fingerprint: 7,
            salt: 99,
            state_copy_bytes: 4096,
            extra: vec![1, 2, 3],
        }
    }

    #[test]
    fn roundtrip() {
        let b = sb().encode().unwrap();
        assert_eq!(Superblock::decode(&b).unwrap(), sb());
    }

    #[test]
    fn refusals_say_why() {
        let good = sb().encode().unwrap();
        let msg = |b: &[u8]| Superblock::decode(b).unwrap_err().to_string();
        assert!(msg(&vec![0u8; 4096]).contains("not formatted"));
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(msg(&bad).contains("wrong magic"));
        let mut bad = good.clone();
        bad[30] ^= 1;
        assert!(msg(&bad).contains("checksum mismatch"));
        assert!(msg(&good[..100]).contains("too small"));
        let reseal = |b: &mut Vec<u8>| {
            let c = flashbuf_core::page::crc32c(&b[..Superblock::BYTES - 4]);
            b[Superblock::BYTES - 4..].copy_from_slice(&c.to_le_bytes());
        };
        let mut v1 = good.clone();
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        reseal(&mut v1);
        assert!(msg(&v1).contains("format version 1") && msg(&v1).contains("recreate"));
        let mut bad_state = good.clone();
        bad_state[56..60].copy_from_slice(&100u32.to_le_bytes());
        reseal(&mut bad_state);
        assert!(msg(&bad_state).contains("state record size 100"));
        assert_eq!(Superblock::area_bytes(512, 4096), 12288);
        assert_eq!(Superblock::area_bytes(16384, 4096), 16384);
        assert_eq!(Superblock::reserved_bytes(65536), 65536);
        let s = Superblock::decode(&good).unwrap();
        assert!(s
            .expect("direct", 8192, 7)
            .unwrap_err()
            .to_string()
            .contains("page size 4096"));
        assert!(s
            .expect("icl", 4096, 7)
            .unwrap_err()
            .to_string()
            .contains("'direct' store"));
        assert!(s
            .expect("direct", 4096, 8)
            .unwrap_err()
            .to_string()
            .contains("configuration"));
        assert!(s.expect("direct", 4096, 7).is_ok());
    }
}
