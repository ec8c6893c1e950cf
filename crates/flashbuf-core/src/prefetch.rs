//! A hint to the CPU that data will be read soon: [`prefetch`] starts moving the cache
//! line holding a value towards the first-level cache and returns at once.
//!
//! Hot loops that know their next references (a replay's batch) use it to overlap the
//! cache misses of reference `i + d` with the work of reference `i` — software
//! pipelining, the way hash joins prefetch their buckets (Chen et al., "Improving Hash
//! Join Performance through Prefetching", ICDE 2004). A prefetch never faults and never
//! changes a result; on targets without the instruction it does nothing.

/// Hints that `value` will be read soon (a no-op where the CPU has no prefetch
/// instruction). Takes a reference, so the address is always valid.
#[inline(always)]
pub fn prefetch<T: ?Sized>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = (value as *const T).cast::<i8>();
        // SAFETY: `_mm_prefetch` only hints the cache; it reads nothing architecturally
        // and cannot fault, and `p` comes from a live reference anyway. SSE is part of
        // the x86_64 baseline.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Hints that the byte at address `addr` will be read soon. Any address is allowed: the
/// instruction cannot fault, and nothing is dereferenced (for addresses published by one
/// thread for another's hints, possibly stale by the time they are used).
#[inline(always)]
pub fn prefetch_address(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `_mm_prefetch` only hints the cache; it reads nothing architecturally
        // and cannot fault, whatever the address. SSE is part of the x86_64 baseline.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr as *const i8)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Hints that element `i` of `items` will be read soon; nothing if `i` is out of range.
#[inline(always)]
pub fn prefetch_at<T>(items: &[T], i: usize) {
    if let Some(v) = items.get(i) {
        prefetch(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_changes_nothing_and_ignores_out_of_range() {
        let v = vec![7u64; 1000];
        prefetch(&v[999]);
        prefetch_at(&v, 3);
        prefetch_at(&v, 1_000_000);
        prefetch("str");
        assert!(v.iter().all(|&x| x == 7));
    }
}
