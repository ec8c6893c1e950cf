//! The order in which a flush writes an instance home, and the partition-run rule: the
//! paper's patterns as uFLIP defines them (paper §3.1–§3.2, which takes its patterns and
//! their costs `T_x` from uFLIP; design.md §4; issue 16 item 3), and the two extra rules
//! we once applied, kept as named store options.
//!
//! - **As printed (the default, `order=pattern`)**: a *sequential* instance is written in
//!   ascending destinations; a *partitioned* one round-robin across its partitions
//!   (`p1[0], p2[0], …, pP[0], p1[1], …`, partitions in ascending address order, a
//!   shorter partition dropping out when it ends) — uFLIP's partitioned pattern, where
//!   each partition is a sequential stream and the streams are interleaved; a *focused*
//!   one in its own order, which we read as **the order its pages were staged**: by the
//!   staging sequence of each page's staged copy, i.e. the order the DBMS wrote the
//!   versions being flushed. uFLIP's focused pattern is random writes within the area;
//!   the DBMS's own order within the area is that random order, and the paper's
//!   Flush Manager only says each page "will be read out of the StableBuffer and written
//!   to its actual destination" — it does not sort them.
//! - **`order=sorted`**: every instance written sorted by destination (partitioned runs
//!   one after the other, a focused area ascending) — cheaper on an FTL that merges
//!   per block, and the order we used before issue 16.
//!
//! The write order never matters for durability: a flush frees its slots only after the
//! whole batch is written and synced, so any order leaves the staged copies valid until
//! the home copies are durable (the crash suites run both orders).
//!
//! The partition-run rule ([`MinRun`]): as printed, any sequential run of at least two
//! pages is a partition (`min-run=2`); `min-run=theta` asks `max(2, ⌈θ_seq⌉)` pages.
//!
//! # Measured effect (issue 16)
//! `flashbuf replay --trace T --policy none --store stable-buffer[:OPTS] --device sim:D
//! --limit 200000` on steady devices; direct ÷ StableBuffer device time (`--store direct`
//! for the numerator; the paper's lower figures: mtron 2.3×, usb-stick 4.2×, sd-card 1.5×).
//! `both` = `order=sorted,min-run=theta`, the behaviour before issue 16 (identical times).
//!
//! | trace | device | default | `order=sorted` | `min-run=theta` | both |
//! |---|---|---|---|---|---|
//! | pgbench s50 sb256k | mtron / usb / sd | 1.36 / 2.14 / 0.91 | 1.36 / 2.15 / 0.91 | 1.36 / 3.45 / 1.20 | 1.36 / 3.45 / 1.20 |
//! | pgbench s50 sb16m | mtron / usb / sd | 1.29 / 2.98 / 0.98 | 1.30 / 2.98 / 0.98 | 1.29 / 3.04 / 0.98 | 1.30 / 3.04 / 0.98 |
//! | oltp t8 sb256k | mtron / usb / sd | 3.43 / 5.13 / 2.97 | 3.51 / 5.12 / 2.97 | 3.43 / 8.14 / 4.06 | 3.51 / 8.14 / 4.06 |
//! | oltp t8 sb16m | mtron / usb / sd | 2.47 / 6.17 / 2.29 | 2.57 / 6.17 / 2.29 | 2.47 / 6.62 / 2.20 | 2.57 / 6.62 / 2.20 |
//! | pgbench s20 (shared) | mtron / usb / sd | 2.26 / 3.71 / 1.42 | 2.30 / 3.69 / 1.42 | 2.26 / 4.76 / 1.67 | 2.30 / 4.76 / 1.67 |
//!
//! - `order=sorted` moves mtron by 0–4% (round-robin and staging order cost a little more
//!   on its 32-log-block BAST) and the USB stick and SD card by under 1%: their flushes are
//!   4–13 pages, about one page per erase block, so the order within a flush hardly
//!   changes which blocks merge.
//! - `min-run=theta` is what matters on the USB stick and the SD card (4 log blocks, 1–2 MB
//!   blocks): with 2-page partitions the selection takes "partitioned" instances of three
//!   or four scattered pairs (pgbench s50 sb256k, USB: 6,883 such flushes of 6 pages
//!   against 534 with `theta`), each pair a full merge of its own block, and flushing
//!   more often absorbs fewer rewrites in place (11% of the writes against 21%).
//! - The default meets the paper's figures on both oltp traces. On pgbench s20 it falls
//!   short on all three (2.26 / 3.71 / 1.42); `min-run=theta` lifts the USB stick and the
//!   SD card to 4.76 / 1.67 and `order=sorted` mtron to 2.30. The pgbench s50 traces fall
//!   short with every variant. The cause is the trace's density, not the order: a flush
//!   writes the staged pages of one focused area (the staging area's size), and pgbench
//!   s50's updates spread over ≈ 1 GB (120,832–136,960 dense pages), so the fullest area
//!   holds 80 of mtron's 2,048 staged pages and 6 of the USB/SD's 512 (pgbench s20,
//!   414 MB: 191 and 13; oltp: 218–309 and 17–19). The ratio follows that density (mtron:
//!   80 → 1.3×, 191 → 2.3×, 218 → 2.5×, 309 → 3.5×). On the BAST devices a flush pays
//!   about one full merge per erase block it touches whatever its size (USB: ≈ 4 erases
//!   per flush), so a 6-page flush saves little over 6 random writes; the SD card's 1 MB
//!   blocks make a 4 MB area four blocks, and pgbench s50's flushes cost as much per page
//!   as direct writes (178–200 ms of write time per home page against 145–196 ms per
//!   direct write), leaving only the in-place absorption (0–21% of the writes).

use super::patterns::{Pattern, MIN_PARTITION_RUN};
use crate::StoreError;

/// In what order a flush writes an instance's pages home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteOrder {
    /// Each pattern's own order (uFLIP): sequential ascending, partitioned round-robin,
    /// focused in staging order. The paper's reading and the default.
    #[default]
    Pattern,
    /// Every instance sorted by destination (an extra rule; `order=sorted`).
    Sorted,
}

impl WriteOrder {
    /// The option value (`pattern`, `sorted`).
    pub fn name(self) -> &'static str {
        match self {
            WriteOrder::Pattern => "pattern",
            WriteOrder::Sorted => "sorted",
        }
    }

    /// Parses an option value; the error lists the valid ones.
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "pattern" => Ok(WriteOrder::Pattern),
            "sorted" => Ok(WriteOrder::Sorted),
            _ => Err(StoreError::Invalid(format!(
                "unknown write order '{s}'; valid: pattern, sorted"
            ))),
        }
    }
}

/// The shortest sequential run that makes a partition of a partitioned instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MinRun {
    /// Two pages: any sequential run (a single page has no order). The paper's reading
    /// and the default (`min-run=2`).
    #[default]
    Pair,
    /// `max(2, ⌈θ_seq⌉)` pages: a run shorter than θ_seq writes like random pages (an
    /// extra rule; `min-run=theta`).
    Theta,
}

impl MinRun {
    /// The option value (`2`, `theta`).
    pub fn name(self) -> &'static str {
        match self {
            MinRun::Pair => "2",
            MinRun::Theta => "theta",
        }
    }

    /// Parses an option value; the error lists the valid ones.
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "2" => Ok(MinRun::Pair),
            "theta" => Ok(MinRun::Theta),
            _ => Err(StoreError::Invalid(format!(
                "unknown minimum partition run '{s}'; valid: 2, theta"
            ))),
        }
    }

    /// The minimum run in pages, given `θ_seq` in pages.
    pub fn pages(self, theta_seq_pages: f64) -> u64 {
        match self {
            MinRun::Pair => MIN_PARTITION_RUN,
            MinRun::Theta => (theta_seq_pages.ceil() as u64).max(MIN_PARTITION_RUN),
        }
    }
}

/// Puts a flush's `(destination, slot)` pairs in the order they are written home:
/// `order` for an instance of `pattern`; `staged_seq(slot)` is the staging sequence of the
/// slot's copy (the focused pattern's own order).
///
/// ```
/// use flashbuf_store::stable_buffer::{arrange, Pattern, WriteOrder};
/// // Two partitions, 10..13 and 20..22 (slot = destination here).
/// let mut items: Vec<(u64, u32)> = [20, 10, 11, 21, 12].map(|d| (d, d as u32)).to_vec();
/// arrange(Pattern::Partitioned, WriteOrder::Pattern, &mut items, |s| u64::from(s));
/// let dests: Vec<u64> = items.iter().map(|i| i.0).collect();
/// assert_eq!(dests, [10, 20, 11, 21, 12]);
/// arrange(Pattern::Partitioned, WriteOrder::Sorted, &mut items, |s| u64::from(s));
/// assert_eq!(items.iter().map(|i| i.0).collect::<Vec<_>>(), [10, 11, 12, 20, 21]);
/// ```
pub fn arrange(
    pattern: Pattern,
    order: WriteOrder,
    items: &mut Vec<(u64, u32)>,
    staged_seq: impl Fn(u32) -> u64,
) {
    items.sort_unstable_by_key(|&(d, _)| d);
    match (order, pattern) {
        (WriteOrder::Sorted, _) | (WriteOrder::Pattern, Pattern::Sequential) => {}
        (WriteOrder::Pattern, Pattern::Partitioned) => *items = round_robin(items),
        (WriteOrder::Pattern, Pattern::Focused) => {
            items.sort_by_key(|&(d, s)| (staged_seq(s), d));
        }
    }
}

/// `sorted` (ascending destinations) split into its maximal runs of consecutive
/// destinations and interleaved: the first page of each run, then the second, and so on.
fn round_robin(sorted: &[(u64, u32)]) -> Vec<(u64, u32)> {
    let mut runs: Vec<&[(u64, u32)]> = Vec::new();
    let mut start = 0;
    for i in 1..=sorted.len() {
        if i == sorted.len() || sorted[i].0 != sorted[i - 1].0 + 1 {
            runs.push(&sorted[start..i]);
            start = i;
        }
    }
    let longest = runs.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(sorted.len());
    for k in 0..longest {
        out.extend(runs.iter().filter_map(|r| r.get(k).copied()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dests(items: &[(u64, u32)]) -> Vec<u64> {
        items.iter().map(|i| i.0).collect()
    }

    #[test]
    fn partitioned_is_round_robin_across_uneven_partitions() {
        // Partitions 100..104, 5..7, 50..53 (given in no order; slot k holds item k).
        let ds = [101, 5, 50, 103, 6, 51, 100, 52, 102];
        let mut items: Vec<(u64, u32)> = ds.iter().zip(0u32..).map(|(&d, s)| (d, s)).collect();
        arrange(Pattern::Partitioned, WriteOrder::Pattern, &mut items, |_| 0);
        assert_eq!(dests(&items), [5, 50, 100, 6, 51, 101, 52, 102, 103]);
        // Each partition's pages stay ascending and keep their slots.
        for &(d, s) in &items {
            assert_eq!(ds[s as usize], d);
        }
    }

    #[test]
    fn focused_is_written_in_staging_order() {
        // Staging sequence = 1000 - destination: the last-staged page is the lowest.
        let mut items: Vec<(u64, u32)> = [7u64, 900, 3, 42].map(|d| (d, d as u32)).to_vec();
        arrange(Pattern::Focused, WriteOrder::Pattern, &mut items, |s| {
            1000 - u64::from(s)
        });
        assert_eq!(dests(&items), [900, 42, 7, 3]);
        arrange(Pattern::Focused, WriteOrder::Sorted, &mut items, |s| {
            1000 - u64::from(s)
        });
        assert_eq!(dests(&items), [3, 7, 42, 900]);
    }

    #[test]
    fn sequential_is_ascending_in_every_order() {
        for order in [WriteOrder::Pattern, WriteOrder::Sorted] {
            let mut items: Vec<(u64, u32)> = [12u64, 10, 11].map(|d| (d, 0)).to_vec();
            arrange(Pattern::Sequential, order, &mut items, |_| 0);
            assert_eq!(dests(&items), [10, 11, 12], "{order:?}");
        }
    }

    #[test]
    fn options_parse_and_name_round_trip() {
        for o in [WriteOrder::Pattern, WriteOrder::Sorted] {
            assert_eq!(WriteOrder::parse(o.name()).ok(), Some(o));
        }
        for m in [MinRun::Pair, MinRun::Theta] {
            assert_eq!(MinRun::parse(m.name()).ok(), Some(m));
        }
        let e = WriteOrder::parse("random").unwrap_err().to_string();
        assert!(e.contains("pattern, sorted"), "{e}");
        assert!(MinRun::parse("3").is_err());
        assert_eq!(MinRun::Pair.pages(8.0), 2);
        assert_eq!(MinRun::Theta.pages(7.2), 8);
        assert_eq!(MinRun::Theta.pages(1.0), 2);
    }
}
