//! [`forward_store!`](crate::forward_store): the one pass-through helper of store
//! wrappers, so that a wrapper writes only the [`PageStore`](crate::PageStore) methods it
//! changes (the store-side twin of the device crate's `forward_device!`).

/// Writes [`PageStore`](crate::PageStore) methods that pass straight through to a wrapped
/// store, inside an `impl PageStore for ...` block. The first argument says where the
/// wrapped store is: a field of `self` (`inner => ...`), or behind a pointer (`deref =>
/// ...`, for `Arc<S>`/`Box<S>`); then the methods to forward, by name (`name`,
/// `page_size`, `read_page`, `write_page`, `write_pages`, `prefetch_page`, `sync`, `stats`, `device_stats`,
/// `check_invariants`, `report`). A method neither written nor forwarded keeps the trait's
/// default (if it has one) — the compiler names a required one that is missing.
///
/// ```
/// use flashbuf_core::{DirtyRanges, PageId};
/// use flashbuf_device::MemDevice;
/// use flashbuf_store::{forward_store, DirectStore, DirectStoreConfig, PageStore, StoreError};
/// /// Counts syncs; everything else passes through.
/// struct Syncs<S> { inner: S, n: std::sync::atomic::AtomicU64 }
/// impl<S: PageStore> PageStore for Syncs<S> {
///     fn sync(&self) -> Result<(), StoreError> {
///         self.n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         self.inner.sync()
///     }
///     forward_store!(inner => name, page_size, read_page, write_page, write_pages, stats,
///                    device_stats, check_invariants, report);
/// }
/// let inner = DirectStore::create(MemDevice::new(0), DirectStoreConfig::with_page_size(4096))?;
/// let s = Syncs { inner, n: Default::default() };
/// s.sync()?;
/// assert_eq!((s.name(), s.page_size()), ("direct", 4096));
/// # Ok::<(), StoreError>(())
/// ```
#[macro_export]
macro_rules! forward_store {
    (deref => $($method:ident),+ $(,)?) => {
        $( $crate::forward_store!(@method [deref] $method); )+
    };
    ($field:ident => $($method:ident),+ $(,)?) => {
        $( $crate::forward_store!(@method [. $field] $method); )+
    };
    (@to $s:tt [deref]) => { &**$s };
    (@to $s:tt [. $field:ident]) => { &$s.$field };
    (@method $to:tt name) => {
        fn name(&self) -> &'static str {
            $crate::PageStore::name($crate::forward_store!(@to self $to))
        }
    };
    (@method $to:tt page_size) => {
        fn page_size(&self) -> usize {
            $crate::PageStore::page_size($crate::forward_store!(@to self $to))
        }
    };
    (@method $to:tt read_page) => {
        fn read_page(
            &self,
            pid: $crate::__core::PageId,
            buf: &mut [u8],
        ) -> ::core::result::Result<$crate::ReadOutcome, $crate::StoreError> {
            $crate::PageStore::read_page($crate::forward_store!(@to self $to), pid, buf)
        }
    };
    (@method $to:tt write_page) => {
        fn write_page(
            &self,
            pid: $crate::__core::PageId,
            page: &[u8],
            dirty: &$crate::__core::DirtyRanges,
        ) -> ::core::result::Result<(), $crate::StoreError> {
            $crate::PageStore::write_page($crate::forward_store!(@to self $to), pid, page, dirty)
        }
    };
    (@method $to:tt write_pages) => {
        fn write_pages(
            &self,
            batch: &[$crate::PageWrite<'_>],
        ) -> ::core::result::Result<(), $crate::StoreError> {
            $crate::PageStore::write_pages($crate::forward_store!(@to self $to), batch)
        }
    };
    (@method $to:tt prefetch_page) => {
        fn prefetch_page(&self, pid: $crate::__core::PageId) {
            $crate::PageStore::prefetch_page($crate::forward_store!(@to self $to), pid)
        }
    };
    (@method $to:tt sync) => {
        fn sync(&self) -> ::core::result::Result<(), $crate::StoreError> {
            $crate::PageStore::sync($crate::forward_store!(@to self $to))
        }
    };
    (@method $to:tt stats) => {
        fn stats(&self) -> $crate::StoreStats {
            $crate::PageStore::stats($crate::forward_store!(@to self $to))
        }
    };
    (@method $to:tt device_stats) => {
        fn device_stats(&self) -> $crate::__core::DeviceStats {
            $crate::PageStore::device_stats($crate::forward_store!(@to self $to))
        }
    };
    (@method $to:tt check_invariants) => {
        fn check_invariants(&self) -> ::core::result::Result<(), ::std::string::String> {
            $crate::PageStore::check_invariants($crate::forward_store!(@to self $to))
        }
    };
    (@method $to:tt report) => {
        fn report(&self) -> ::std::vec::Vec<(::std::string::String, f64)> {
            $crate::PageStore::report($crate::forward_store!(@to self $to))
        }
    };
}
