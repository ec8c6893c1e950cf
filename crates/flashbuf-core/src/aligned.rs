//! Heap buffers with a chosen alignment, as `O_DIRECT` requires.

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A zero-initialised heap buffer whose start address is a multiple of `align`.
///
/// ```
/// use flashbuf_core::AlignedBuf;
/// let mut b = AlignedBuf::zeroed(8192, 4096);
/// assert_eq!(b.as_ptr() as usize % 4096, 0);
/// b[0] = 1;
/// assert_eq!(b.len(), 8192);
/// ```
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only give shared access to the bytes.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zero bytes aligned to `align` (a power of two). A zero `len`
    /// allocates one alignment unit so that the pointer is always valid.
    ///
    /// # Panics
    /// If `align` is not a power of two or the size overflows; both are programming errors.
    pub fn zeroed(len: usize, align: usize) -> Self {
        let size = len.max(align).max(1);
        let layout = match Layout::from_size_align(size, align) {
            Ok(l) => l,
            Err(e) => panic!("invalid aligned buffer layout ({len} bytes, align {align}): {e}"),
        };
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        Self { ptr, len, layout }
    }

    /// The alignment of the start address.
    pub fn align(&self) -> usize {
        self.layout.align()
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .field("align", &self.layout.align())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        for align in [512, 4096, 65536] {
            let b = AlignedBuf::zeroed(3 * align, align);
            assert_eq!(b.as_ptr() as usize % align, 0);
            assert!(b.iter().all(|&x| x == 0));
        }
        let e = AlignedBuf::zeroed(0, 4096);
        assert!(e.is_empty());
    }
}
