//! Checks of a caller's page buffers, shared by the stores.

use crate::StoreError;
use flashbuf_core::page;
use flashbuf_core::PageId;

/// Refuses a buffer that is not exactly one page of `page_size` bytes.
pub(crate) fn check_buf(len: usize, page_size: usize) -> Result<(), StoreError> {
    if len != page_size {
        return Err(StoreError::Invalid(format!(
            "buffer of {len} bytes for a store with page size {page_size}"
        )));
    }
    Ok(())
}

/// Refuses a page to be written as `pid` that is not one page long or is sealed for
/// another page; in debug builds also one that fails its check (a caller's bug).
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
