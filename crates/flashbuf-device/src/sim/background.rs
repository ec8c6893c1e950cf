//! The background handle of a [`SimDevice`](super::SimDevice)
//! ([`Device::background`]): the same device state, its requests on the background
//! stream (see [`super::queue`]).

use super::device::Inner;
use super::queue::StreamId;
use crate::{Device, DeviceError, HeadWrite, WriteOp};
use flashbuf_core::DeviceStats;
use parking_lot::Mutex;
use std::sync::Arc;

/// A [`Device`] serving every request on its device's background stream.
#[derive(Debug)]
pub(super) struct SimBackground {
    inner: Arc<Mutex<Inner>>,
    stream: StreamId,
    capacity: u64,
    name: String,
}

impl SimBackground {
    /// A handle on the background stream of the device whose state is `inner` (opening
    /// the stream if this is the first handle).
    pub(super) fn new(inner: Arc<Mutex<Inner>>, capacity: u64, name: String) -> Self {
        let stream = inner.lock().background_stream();
        Self {
            inner,
            stream,
            capacity,
            name,
        }
    }
}

impl Device for SimBackground {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        self.inner.lock().read_on(self.stream, offset, buf)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        self.inner.lock().write_on(self.stream, offset, buf)
    }

    /// The ops one after another on the background stream (it has one slot).
    fn write_batch(&self, ops: &[WriteOp<'_>]) -> Result<(), DeviceError> {
        let mut inner = self.inner.lock();
        for op in ops {
            inner.write_on(self.stream, op.offset, op.data)?;
        }
        Ok(())
    }

    fn read_head(&self, offset: u64, len: usize, head: &mut [u8]) -> Result<(), DeviceError> {
        self.inner
            .lock()
            .read_head_on(self.stream, offset, len, head)
    }

    fn write_head(&self, offset: u64, len: usize, head: &[u8]) -> Result<(), DeviceError> {
        self.inner
            .lock()
            .write_head_on(self.stream, offset, len, head)
    }

    fn write_heads(&self, ops: &[HeadWrite<'_>]) -> Result<(), DeviceError> {
        let mut inner = self.inner.lock();
        for op in ops {
            inner.write_head_on(self.stream, op.offset, op.len, op.head)?;
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.inner.lock().sync_on(self.stream)
    }

    fn len(&self) -> u64 {
        self.inner.lock().len
    }

    fn set_len(&self, len: u64) -> Result<(), DeviceError> {
        self.inner.lock().set_len(len, self.capacity, &self.name)
    }

    fn max_len(&self) -> Option<u64> {
        Some(self.capacity)
    }

    fn stats(&self) -> DeviceStats {
        self.inner.lock().device_stats()
    }

    fn describe(&self) -> String {
        format!("{} (background)", self.name)
    }
}
