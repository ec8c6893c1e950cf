#![allow(clippy::unwrap_used)]
//! Regression (found by `fuzz_store_open`): opening or creating an ICL store with page size
//! 0 divided by zero while sizing the log space in pages, and panicked. It must be refused
//! like any invalid page size.

use flashbuf_device::MemDevice;
use flashbuf_store::registry::{parse_text, StoreContext};

#[test]
fn page_size_zero_is_refused_not_a_panic() {
    let p = parse_text("icl").unwrap();
    for ps in [0usize, 1000] {
        match p
            .factory
            .create(Box::new(MemDevice::new(0)), &StoreContext::new(ps))
        {
            Err(e) => assert!(e.to_string().contains("page size"), "{e}"),
            Ok(_) => panic!("page size {ps} accepted"),
        }
        assert!(p
            .factory
            .open(Box::new(MemDevice::new(0)), &StoreContext::new(ps))
            .is_err());
        assert!(p.factory.check(ps).is_err());
    }
}
