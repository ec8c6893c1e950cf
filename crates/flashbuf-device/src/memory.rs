//! An in-memory device: a growable byte vector behind a lock.

use crate::{check_range, counters::Counters, Device, DeviceError, IoOp, WriteOp};
use flashbuf_core::DeviceStats;
use parking_lot::RwLock;

/// A device whose bytes live in memory. `sync` is a no-op that always succeeds (memory is
/// as durable as it gets; crash simulation is a wrapper's job).
///
/// ```
/// use flashbuf_device::{Device, MemDevice};
/// let d = MemDevice::new(8192);
/// d.write_at(4096, b"hello").unwrap();
/// let mut b = [0u8; 5];
/// d.read_at(4096, &mut b).unwrap();
/// assert_eq!(&b, b"hello");
/// assert!(d.read_at(8190, &mut b).is_err());
/// ```
#[derive(Debug, Default)]
pub struct MemDevice {
    bytes: RwLock<Vec<u8>>,
    counters: Counters,
}

impl MemDevice {
    /// A zeroed device of `len` bytes.
    pub fn new(len: u64) -> Self {
        Self {
            bytes: RwLock::new(vec![0u8; len as usize]),
            counters: Counters::default(),
        }
    }

    /// A copy of all bytes (for tests and crash images).
    pub fn snapshot(&self) -> Vec<u8> {
        self.bytes.read().clone()
    }

    /// A device holding exactly `bytes`.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self {
            bytes: RwLock::new(bytes),
            counters: Counters::default(),
        }
    }
}

impl Device for MemDevice {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let bytes = self.bytes.read();
        check_range(IoOp::Read, offset, buf.len(), bytes.len() as u64)?;
        let at = offset as usize;
        buf.copy_from_slice(&bytes[at..at + buf.len()]);
        self.counters.read(buf.len());
        Ok(())
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        let mut bytes = self.bytes.write();
        check_range(IoOp::Write, offset, buf.len(), bytes.len() as u64)?;
        let at = offset as usize;
        bytes[at..at + buf.len()].copy_from_slice(buf);
        self.counters.write(buf.len());
        Ok(())
    }

    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        let mut bytes = self.bytes.write();
        let len = bytes.len() as u64;
        for op in ops {
            check_range(IoOp::Write, op.offset, op.data.len(), len)?;
        }
        for op in ops {
            let at = op.offset as usize;
            bytes[at..at + op.data.len()].copy_from_slice(op.data);
            self.counters.write(op.data.len());
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.counters.sync();
        Ok(())
    }

    fn len(&self) -> u64 {
        self.bytes.read().len() as u64
    }

    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        let len = usize::try_from(len)
            .map_err(|_| DeviceError::Config(format!("{len} bytes do not fit in memory")))?;
        self.bytes.write().resize(len, 0);
        Ok(())
    }

    fn stats(&self) -> DeviceStats {
        self.counters.snapshot()
    }

    fn describe(&self) -> String {
        "memory".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_is_all_or_nothing_on_range_errors() {
        let d = MemDevice::new(100);
        let r = d.write_batch(&[
            WriteOp {
                offset: 0,
                data: b"ab",
            },
            WriteOp {
                offset: 99,
                data: b"cd",
            },
        ]);
        assert!(matches!(r, Err(DeviceError::OutOfRange { .. })));
        assert_eq!(d.snapshot()[0], 0);
        assert_eq!(d.stats().writes, 0);
    }

    #[test]
    fn set_len_grows_with_zeros() {
        let d = MemDevice::new(0);
        d.set_len(10).unwrap();
        let mut b = [1u8; 10];
        d.read_at(0, &mut b).unwrap();
        assert_eq!(b, [0; 10]);
        assert_eq!(d.stats().reads, 1);
    }
}
