//! Generation salts: a store formatted again on the same device gets a salt that differs
//! from the previous format's, so that nothing the old format left behind (staged slots,
//! log summaries, checkpoints) passes the new format's checks.

use flashbuf_core::rng::SplitMix64;

/// A salt that differs from `prev`: the previous salt, the clock and the process id mixed.
pub(crate) fn fresh_salt(prev: Option<u64>) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut r = SplitMix64::new(
        prev.unwrap_or(0).wrapping_add(1) ^ nanos ^ u64::from(std::process::id()) << 40,
    );
    let s = r.next_u64();
    if Some(s) == prev {
        s ^ 1
    } else {
        s
    }
}
