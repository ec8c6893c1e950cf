//! [`forward_device!`](crate::forward_device): the one pass-through helper of device
//! wrappers, so that a wrapper writes only the [`Device`](crate::Device) methods it changes.

/// Writes [`Device`](crate::Device) methods that pass straight through to a wrapped device,
/// inside an `impl Device for ...` block. The first argument says where the wrapped device
/// is: a field of `self` (`inner => ...`), or behind a pointer (`deref => ...`, for
/// `Arc<D>`/`Box<D>`); then the methods to forward, by name (`read_at`, `write_at`,
/// `write_batch`, `read_head`, `write_head`, `write_heads`, `prefetch`, `sync`, `len`, `set_len`,
/// `max_len`, `stats`, `alignment`, `describe`, `background`, `join_background`).
/// Forward `background` only if handing the inner device's background queue past the
/// wrapper is sound (see [`Device::background`](crate::Device::background)); a wrapper
/// that must see every request wraps the handle itself or keeps the default `None`.
/// A method neither written nor forwarded keeps the trait's default (if it has one) —
/// the compiler names a required one that is missing.
///
/// ```
/// use flashbuf_device::{forward_device, Device, DeviceError, MemDevice};
/// /// Counts syncs; everything else passes through.
/// struct Syncs<D> { inner: D, n: std::sync::atomic::AtomicU64 }
/// impl<D: Device> Device for Syncs<D> {
///     fn sync(&self) -> Result<(), DeviceError> {
///         self.n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         self.inner.sync()
///     }
///     forward_device!(inner => read_at, write_at, write_batch, len, set_len, max_len,
///                     stats, alignment, describe);
/// }
/// let d = Syncs { inner: MemDevice::new(4096), n: Default::default() };
/// d.write_at(0, &[1; 8])?;
/// d.sync()?;
/// assert_eq!((d.len(), d.describe()), (4096, MemDevice::new(0).describe()));
/// # Ok::<(), DeviceError>(())
/// ```
#[macro_export]
macro_rules! forward_device {
    (deref => $($method:ident),+ $(,)?) => {
        $( $crate::forward_device!(@method [deref] $method); )+
    };
    ($field:ident => $($method:ident),+ $(,)?) => {
        $( $crate::forward_device!(@method [. $field] $method); )+
    };
    (@to $s:tt [deref]) => { &**$s };
    (@to $s:tt [. $field:ident]) => { &$s.$field };
    (@method $to:tt read_at) => {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::read_at($crate::forward_device!(@to self $to), offset, buf)
        }
    };
    (@method $to:tt write_at) => {
        fn write_at(&self, offset: u64, buf: &[u8]) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::write_at($crate::forward_device!(@to self $to), offset, buf)
        }
    };
    (@method $to:tt write_batch) => {
        fn write_batch(&self, ops: &[$crate::WriteOp<'_>]) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::write_batch($crate::forward_device!(@to self $to), ops)
        }
    };
    (@method $to:tt read_head) => {
        fn read_head(&self, offset: u64, len: usize, head: &mut [u8]) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::read_head($crate::forward_device!(@to self $to), offset, len, head)
        }
    };
    (@method $to:tt write_head) => {
        fn write_head(&self, offset: u64, len: usize, head: &[u8]) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::write_head($crate::forward_device!(@to self $to), offset, len, head)
        }
    };
    (@method $to:tt write_heads) => {
        fn write_heads(&self, ops: &[$crate::HeadWrite<'_>]) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::write_heads($crate::forward_device!(@to self $to), ops)
        }
    };
    (@method $to:tt prefetch) => {
        fn prefetch(&self, offset: u64, len: usize) {
            $crate::Device::prefetch($crate::forward_device!(@to self $to), offset, len)
        }
    };
    (@method $to:tt sync) => {
        fn sync(&self) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::sync($crate::forward_device!(@to self $to))
        }
    };
    (@method $to:tt len) => {
        fn len(&self) -> u64 {
            $crate::Device::len($crate::forward_device!(@to self $to))
        }
    };
    (@method $to:tt set_len) => {
        fn set_len(&self, len: u64) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::set_len($crate::forward_device!(@to self $to), len)
        }
    };
    (@method $to:tt max_len) => {
        fn max_len(&self) -> ::core::option::Option<u64> {
            $crate::Device::max_len($crate::forward_device!(@to self $to))
        }
    };
    (@method $to:tt stats) => {
        fn stats(&self) -> $crate::DeviceStats {
            $crate::Device::stats($crate::forward_device!(@to self $to))
        }
    };
    (@method $to:tt alignment) => {
        fn alignment(&self) -> usize {
            $crate::Device::alignment($crate::forward_device!(@to self $to))
        }
    };
    (@method $to:tt background) => {
        fn background(&self) -> ::core::option::Option<::std::boxed::Box<dyn $crate::Device>> {
            $crate::Device::background($crate::forward_device!(@to self $to))
        }
    };
    (@method $to:tt join_background) => {
        fn join_background(&self) -> ::core::result::Result<(), $crate::DeviceError> {
            $crate::Device::join_background($crate::forward_device!(@to self $to))
        }
    };
    (@method $to:tt describe) => {
        fn describe(&self) -> ::std::string::String {
            $crate::Device::describe($crate::forward_device!(@to self $to))
        }
    };
}
