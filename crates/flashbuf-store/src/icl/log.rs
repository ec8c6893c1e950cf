//! Logs in memory: the changed byte ranges of one page with the bytes they hold (their
//! on-device record form is `record.rs`).
//!
//! Paper: "The log consists of two parts, the header and the content of the log. The
//! header includes the information to identify the evicted DBMS-page, pairs of the offsets
//! and the sizes of the updated regions inside the DBMS-page. The content is the updated
//! tuples or the updated portions of the DBMS-page" (ICL paper, §2 *Write-optimized
//! buffer*, `../shared/papers/icl-write-optimized-layer.txt`).
//!
//! # Readings
//! - A log here is a set of sorted, disjoint, non-adjacent ranges with the bytes of the
//!   page's newest version in them. Where the paper keeps one log per eviction and an ICL
//!   log as "a set of logs" concatenated (§2 *InCremental Logging*), two logs of one page
//!   are kept as their union, the newer bytes winning ([`Log::newer_over`]): applying the
//!   union gives exactly what applying the logs in order gives, in fewer bytes.
//! - The log always covers the page header (bytes `0..HEADER_BYTES`): a store write is a
//!   newly sealed page, whose version and checksum changed whatever the caller's ranges say.
//! - A record also names its *target*: the version and checksum of the page it produces
//!   ([`Ident`]). A read accepts a record only if applying it gives a page that passes its
//!   check and carries that identity (see `read.rs`); a record without ranges (a
//!   *tombstone*) says "the home page is this version", written when a page with logs on
//!   the device goes home whole.
//! - Metadata only (`--data none`): a page in memory is its head
//!   ([`flashbuf_core::METADATA_PAGE_BYTES`]), so a log keeps the bytes of its ranges that
//!   lie in the head (the page header always, and the stamp where a range covers it) and
//!   only the lengths of the rest. Its *record bytes* — what packing, the WOB's capacity
//!   and the merge threshold count — stay those of the logical page
//!   ([`Log::record_bytes`]); what is stored is shorter ([`Log::encoded_bytes`]). The
//!   target's version and checksum are then those of the head, checked as with bytes.

use super::record::{encode_header, RANGE_BYTES, RECORD_HEADER_BYTES};
use flashbuf_core::page::{self, HEADER_BYTES};
use flashbuf_core::{DirtyRanges, PageId};
use smallvec::SmallVec;

/// A half-open byte range of a page, `start..end`.
pub type Span = (u32, u32);

/// A span list, inline up to 8 spans (a write's is at most the header and the
/// [`DirtyRanges::CAPACITY`] ranges; a union of two such lists rarely passes 8): the lists
/// a write builds and merges, and a decoded record's, allocate nothing.
pub type Spans = SmallVec<[Span; 8]>;

/// A log's content, inline up to a metadata-only page's head (64 bytes): without bytes
/// (`--data none`) a log allocates nothing; with bytes a longer content goes to the heap.
pub type LogBytes = SmallVec<[u8; 64]>;

/// The identity of a sealed page version: its header's version stamp and checksum (an
/// unwritten, all-zero page is version 0 with checksum 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ident {
    /// Version stamp.
    pub version: u64,
    /// Checksum stored in the header.
    pub crc: u32,
}

impl Ident {
    /// The identity stored in `page`'s header.
    pub fn of(page: &[u8]) -> Self {
        let h = page::read_header(page);
        Self {
            version: h.version,
            crc: h.checksum,
        }
    }
}

/// Changed ranges of one page and their bytes (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log {
    spans: Spans,
    bytes: LogBytes,
}

/// The union of two sorted, disjoint span lists; touching spans are joined. The lists
/// are merged in one pass (no sort, and no allocation up to 8 spans: a write merges two or
/// three lists).
pub fn union_spans(a: &[Span], b: &[Span]) -> Spans {
    debug_assert!(a.is_sorted() && b.is_sorted(), "unsorted spans");
    let mut out = Spans::new();
    let (mut i, mut j) = (0, 0);
    loop {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x <= y => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => return out,
        };
        match out.last_mut() {
            Some(last) if next.0 <= last.1 => last.1 = last.1.max(next.1),
            _ => out.push(next),
        }
    }
}

/// Total bytes of a span list.
pub fn span_bytes(spans: &[Span]) -> usize {
    spans.iter().map(|&(s, e)| (e - s) as usize).sum()
}

/// Bytes of a span list that lie below `kept` (the bytes a log of a `kept`-byte page image
/// holds: the whole page with bytes, the head in metadata mode).
pub fn kept_bytes(spans: &[Span], kept: usize) -> usize {
    let k = kept.min(u32::MAX as usize) as u32;
    spans
        .iter()
        .map(|&(s, e)| e.min(k).saturating_sub(s) as usize)
        .sum()
}

/// Bytes a record of these spans takes in a log page.
pub fn record_bytes_of(spans: &[Span]) -> usize {
    RECORD_HEADER_BYTES + RANGE_BYTES * spans.len() + span_bytes(spans)
}

/// The spans of a write: the caller's dirty ranges plus the page header, clipped to the
/// page.
pub fn write_spans(dirty: &DirtyRanges, page_size: usize) -> Spans {
    let ps = page_size as u32;
    let d: SmallVec<[Span; DirtyRanges::CAPACITY]> = dirty
        .iter()
        .map(|r| (r.start.min(ps), r.end.min(ps)))
        .filter(|&(s, e)| s < e)
        .collect();
    union_spans(&[(0, HEADER_BYTES as u32)], &d)
}

impl Log {
    /// The log of `spans` holding `page`'s bytes there — those below `page.len()`: a
    /// metadata-only page is its head, and the spans are the logical page's (module docs).
    pub fn from_page(page: &[u8], spans: Spans) -> Self {
        Self::from_page_in(page, spans, LogBytes::new())
    }

    /// [`Log::from_page`] with its content in `bytes` (emptied first; its heap room, if
    /// any, is reused: the WOB hands out the content buffers of the logs it let go of).
    pub fn from_page_in(page: &[u8], spans: Spans, mut bytes: LogBytes) -> Self {
        bytes.clear();
        bytes.reserve(kept_bytes(&spans, page.len()));
        for &(s, e) in &spans {
            let e = (e as usize).min(page.len());
            if (s as usize) < e {
                bytes.extend_from_slice(&page[s as usize..e]);
            }
        }
        Self { spans, bytes }
    }

    /// The log of `spans` holding `bytes` (their content, as a decoded record carries it).
    pub(super) fn from_content(spans: Spans, bytes: &[u8]) -> Self {
        Self {
            spans,
            bytes: LogBytes::from_slice(bytes),
        }
    }

    /// Its content buffer, for reuse ([`Log::from_page_in`]).
    pub fn into_bytes(self) -> LogBytes {
        self.bytes
    }

    /// The empty log.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Its spans (sorted, disjoint).
    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Bytes of content.
    pub fn data_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Bytes its record takes in a log page of the logical page size (what packing, the
    /// WOB and the threshold count, in either data mode).
    pub fn record_bytes(&self) -> usize {
        record_bytes_of(&self.spans)
    }

    /// Bytes its record is stored in: [`Log::record_bytes`] with bytes, less the content
    /// beyond the head in metadata mode.
    pub fn encoded_bytes(&self) -> usize {
        RECORD_HEADER_BYTES + RANGE_BYTES * self.spans.len() + self.bytes.len()
    }

    /// Bytes of heap memory it holds: its spans and content where they outgrew their
    /// inline room (which is part of the log's own size).
    pub fn heap_bytes(&self) -> usize {
        spilled_bytes(&self.spans) + spilled_bytes(&self.bytes)
    }

    /// Writes its bytes into `page` (an image of the length the log was made from: the
    /// page, or its head in metadata mode).
    ///
    /// # Panics
    /// If its bytes do not match its spans below `page.len()` (decoded records are
    /// checked, [`Log::check`]).
    pub fn apply(&self, page: &mut [u8]) {
        apply_spans(&self.spans, &self.bytes, page);
    }

    /// The cumulative log of `older` followed by `newer` (both of `kept`-byte images): the
    /// union of their spans, with `newer`'s bytes where it has them.
    ///
    /// The content is laid out directly (each log's bytes copied to their place in the
    /// union's content, `newer`'s last): one allocation when it outgrows the inline room,
    /// no image of the page (it was a zeroed scratch image up to the last span's end,
    /// then a copy out of it: two allocations per copy forward with bytes).
    ///
    /// # Panics
    /// If a log's bytes do not match its spans (as [`Log::apply`]).
    pub fn newer_over(older: &Log, newer: &Log, kept: usize) -> Log {
        newer_over_parts(&older.spans, &older.bytes, newer, kept, LogBytes::new())
    }

    /// Appends its record (`pid`, `target`) to `out`.
    pub fn encode_record(&self, pid: PageId, target: Ident, out: &mut Vec<u8>) {
        encode_header(pid, target, self.spans.len(), 0, out);
        for &(s, e) in &self.spans {
            out.extend_from_slice(&(s as u16).to_le_bytes());
            out.extend_from_slice(&((e - s) as u16).to_le_bytes());
        }
        out.extend_from_slice(&self.bytes);
    }

    /// Checks the shape: sorted, disjoint, non-adjacent, non-empty spans within
    /// `page_size`, and content of the right length for `kept`-byte images.
    pub fn check(&self, page_size: usize, kept: usize) -> Result<(), String> {
        check_shape(&self.spans, self.bytes.len(), page_size, kept)
    }
}

/// Bytes of heap a small vector holds: none while it fits its inline room.
fn spilled_bytes<A: smallvec::Array>(v: &SmallVec<A>) -> usize {
    if v.spilled() {
        v.capacity() * std::mem::size_of::<A::Item>()
    } else {
        0
    }
}

/// [`Log::newer_over`] of an older log given as its spans and their bytes, the content
/// in `content` (emptied first; its heap room, if any, reused).
pub(super) fn newer_over_parts(
    spans: &[Span],
    bytes: &[u8],
    newer: &Log,
    kept: usize,
    mut content: LogBytes,
) -> Log {
    let union = union_spans(spans, &newer.spans);
    content.clear();
    content.resize(kept_bytes(&union, kept), 0);
    place(&union, spans, bytes, kept, &mut content);
    place(&union, &newer.spans, &newer.bytes, kept, &mut content);
    Log {
        spans: union,
        bytes: content,
    }
}

/// Copies the content of `src` (spans and their bytes, of `kept`-byte images) to its
/// place in `dst`, the content of `union` (sorted, disjoint spans, each span of `src`
/// inside one of them).
fn place(union: &[Span], src: &[Span], bytes: &[u8], kept: usize, dst: &mut [u8]) {
    let clipped = |(s, e): Span| (s as usize, (e as usize).min(kept));
    // `u`: the union span holding the current source span; `base`: its content's start.
    let (mut u, mut base, mut from) = (0, 0, 0);
    for &span in src {
        let (s, e) = clipped(span);
        if s >= e {
            continue;
        }
        while union[u].1 as usize <= s {
            let (us, ue) = clipped(union[u]);
            base += ue.saturating_sub(us);
            u += 1;
        }
        let at = base + s - union[u].0 as usize;
        dst[at..at + (e - s)].copy_from_slice(&bytes[from..from + (e - s)]);
        from += e - s;
    }
}

/// Writes `bytes`, the content of `spans` below `page.len()`, into `page` ([`Log::apply`]).
pub(super) fn apply_spans(spans: &[Span], bytes: &[u8], page: &mut [u8]) {
    let mut at = 0;
    for &(s, e) in spans {
        let e = (e as usize).min(page.len());
        if (s as usize) < e {
            let n = e - s as usize;
            page[s as usize..e].copy_from_slice(&bytes[at..at + n]);
            at += n;
        }
    }
}

/// [`Log::check`] of spans and a content length.
pub(super) fn check_shape(
    spans: &[Span],
    content: usize,
    page_size: usize,
    kept: usize,
) -> Result<(), String> {
    let mut prev_end: Option<u32> = None;
    for &(s, e) in spans {
        if s >= e || e as usize > page_size {
            return Err(format!("span {s}..{e} is empty or beyond the page"));
        }
        if prev_end.is_some_and(|p| s <= p) {
            return Err(format!(
                "span {s}..{e} overlaps or touches the previous one"
            ));
        }
        prev_end = Some(e);
    }
    if kept_bytes(spans, kept) != content {
        return Err(format!(
            "{content} content bytes for spans of {}",
            kept_bytes(spans, kept)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_joins_overlapping_and_touching_spans() {
        assert_eq!(
            union_spans(&[(0, 4), (10, 12)], &[(4, 6), (11, 20), (30, 31)]),
            Spans::from_slice(&[(0, 6), (10, 20), (30, 31)])
        );
        assert_eq!(union_spans(&[], &[]).as_slice(), &[] as &[Span]);
    }

    /// The one-pass merge against the definition (sort the concatenation, join), on
    /// seeded random sorted disjoint lists.
    #[test]
    fn union_matches_sorting_the_concatenation() {
        let mut rng = flashbuf_core::rng::SplitMix64::new(7);
        let list = |rng: &mut flashbuf_core::rng::SplitMix64| {
            let mut at = 0u32;
            let mut v = Vec::new();
            for _ in 0..rng.below(6) {
                let s = at + rng.below(8) as u32 + 1;
                let e = s + rng.below(8) as u32 + 1;
                v.push((s, e));
                at = e;
            }
            v
        };
        for _ in 0..2_000 {
            let (a, b) = (list(&mut rng), list(&mut rng));
            let mut all: Vec<Span> = a.iter().chain(&b).copied().collect();
            all.sort_unstable();
            let mut want: Vec<Span> = Vec::new();
            for (s, e) in all {
                match want.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => want.push((s, e)),
                }
            }
            assert_eq!(
                union_spans(&a, &b).as_slice(),
                want.as_slice(),
                "{a:?} | {b:?}"
            );
        }
    }

    #[test]
    fn newer_bytes_win_and_apply_reconstructs() {
        let mut v1 = vec![0u8; 64];
        v1[10] = 1;
        v1[20] = 1;
        let older = Log::from_page(&v1, [(10, 11), (20, 21)].into_iter().collect());
        let mut v2 = v1.clone();
        v2[20] = 2;
        v2[40] = 2;
        let newer = Log::from_page(&v2, [(20, 21), (40, 41)].into_iter().collect());
        let both = Log::newer_over(&older, &newer, 64);
        let mut base = vec![0u8; 64];
        both.apply(&mut base);
        assert_eq!(base, v2);
        assert_eq!(both.record_bytes(), 24 + 3 * 4 + 3);
    }

    /// A log of random spans over `page`'s bytes below `kept` (spans may pass `kept`).
    fn random_log(rng: &mut flashbuf_core::rng::SplitMix64, page: &[u8], kept: usize) -> Log {
        let mut spans: SmallVec<[Span; 8]> = SmallVec::new();
        for _ in 0..rng.below(6) {
            let s = rng.below(page.len() as u64 - 1) as u32;
            let e = s + 1 + rng.below(300) as u32;
            spans.push((s, e.min(page.len() as u32)));
        }
        spans.sort_unstable();
        let spans = union_spans(&spans, &[]);
        Log::from_page(&page[..kept], spans)
    }

    /// `newer_over` lays the content out directly; the definition (stop 37's code): both
    /// logs applied in turn to a zeroed image up to the last span's end, the union's
    /// bytes read out of it. Equal for random logs, with `kept` cutting spans (metadata
    /// mode) or not.
    #[test]
    fn newer_over_is_both_logs_applied_to_an_image() {
        let mut rng = flashbuf_core::rng::SplitMix64::new(39);
        for case in 0..2_000 {
            let page_len = 1024;
            let kept = if case % 3 == 0 { 64 } else { page_len };
            let p1: Vec<u8> = (0..page_len).map(|_| rng.below(256) as u8).collect();
            let p2: Vec<u8> = (0..page_len).map(|_| rng.below(256) as u8).collect();
            let (older, newer) = (
                random_log(&mut rng, &p1, kept),
                random_log(&mut rng, &p2, kept),
            );
            let spans = union_spans(&older.spans, &newer.spans);
            let end = spans.last().map_or(0, |s| s.1 as usize);
            let mut image = vec![0u8; end.min(kept)];
            older.apply(&mut image);
            newer.apply(&mut image);
            let want = Log::from_page(&image, spans);
            assert_eq!(Log::newer_over(&older, &newer, kept), want, "case {case}");
            // Into a reused buffer holding other bytes (the WOB's spare ones).
            let used = LogBytes::from_elem(0xAB, 700);
            let reused = newer_over_parts(&older.spans, &older.bytes, &newer, kept, used);
            assert_eq!(reused, want, "case {case}, reused buffer");
        }
    }

    #[test]
    fn heap_counts_only_what_outgrew_the_inline_room() {
        let page = vec![3u8; 512];
        let head = Log::from_page(&page[..64], [(0, 32), (40, 300)].into_iter().collect());
        assert_eq!((head.data_bytes(), head.heap_bytes()), (56, 0));
        let whole = Log::from_page(&page, [(0, 32), (40, 300)].into_iter().collect());
        assert_eq!(whole.data_bytes(), 292);
        assert!(whole.heap_bytes() >= 292, "{}", whole.heap_bytes());
        let many: Spans = (0..10).map(|i| (i * 10, i * 10 + 5)).collect();
        assert!(Log::from_page(&page[..64], many).heap_bytes() >= 10 * 8);
    }

    #[test]
    fn write_spans_always_cover_the_header() {
        let mut d = DirtyRanges::new();
        d.add(100, 10);
        assert_eq!(
            write_spans(&d, 4096),
            Spans::from_slice(&[(0, 32), (100, 110)])
        );
        assert_eq!(
            write_spans(&DirtyRanges::full(512), 512),
            Spans::from_slice(&[(0, 512)])
        );
    }
}
