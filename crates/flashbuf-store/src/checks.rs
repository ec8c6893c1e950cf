//! Checks every store makes of its callers' buffers and of its device, in one place.

use crate::StoreError;
use flashbuf_core::page;
use flashbuf_core::PageId;
use flashbuf_device::Device;

/// Refuses a buffer that is not one page of `page_size` bytes.
pub(crate) fn check_buf(len: usize, page_size: usize) -> Result<(), StoreError> {
    if len != page_size {
        return Err(StoreError::Invalid(format!(
            "buffer of {len} bytes for a store with page size {page_size}"
        )));
    }
    Ok(())
}

/// Refuses a page handed over for writing that is not one page sealed for `pid`.
pub(crate) fn check_sealed(pid: PageId, page: &[u8], page_size: usize) -> Result<(), StoreError> {
    check_buf(page.len(), page_size)?;
    let h = page::read_header(page);
    if h.page_id != pid {
        return Err(StoreError::Invalid(format!(
            "write of {pid} with a page sealed for {}",
            h.page_id
        )));
    }
    debug_assert!(
        page::check(page, pid).is_ok(),
        "{pid} handed to the store unsealed"
    );
    Ok(())
}

/// Refuses a page size that is not a multiple of `dev`'s alignment (`O_DIRECT`).
pub(crate) fn check_alignment<D: Device + ?Sized>(
    dev: &D,
    page_size: usize,
) -> Result<(), StoreError> {
    let a = dev.alignment().max(1);
    if !page_size.is_multiple_of(a) {
        return Err(StoreError::Invalid(format!(
            "page size {page_size} is not a multiple of {}'s alignment ({a} bytes)",
            dev.describe()
        )));
    }
    Ok(())
}
