//! The written-page set's payload in the state record: its encoding (within a budget, with
//! a cut) and its checked decoding; the format is in the module documentation of
//! [`super`], *Encoding*.

use super::{Snapshot, TAG};
use crate::StoreError;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(v: u64) -> usize {
    (64 - v.max(1).leading_zeros() as usize).div_ceil(7)
}

/// Something that calls a visitor with disjoint, non-adjacent ranges `start..end` in
/// ascending order until the visitor returns false.
pub(super) type RangeVisitor<'a> = &'a mut dyn FnMut(u64, u64) -> bool;

/// Encodes the ranges `each_range` gives below `cut` that fit `budget_bytes`; the first
/// range left out (or the old cut, if lower) becomes the cut. The ranges are read once
/// and only as far as the budget or the cut reaches.
pub(super) fn encode(
    each_range: impl FnOnce(RangeVisitor<'_>),
    cut: u64,
    budget_bytes: usize,
) -> Snapshot {
    // Worst case of the fixed fields: tag, a 10-byte cut, a 10-byte count.
    let mut used = 21usize;
    let mut prev_end = 0u64;
    let mut kept = 0u64;
    let mut new_cut = cut;
    let mut body = Vec::new();
    each_range(&mut |s, e| {
        if s >= cut {
            return false;
        }
        let e = e.min(cut);
        let pair = varint_len(s - prev_end) + varint_len(e - s);
        if used + pair > budget_bytes {
            new_cut = s;
            return false;
        }
        used += pair;
        put_varint(&mut body, s - prev_end);
        put_varint(&mut body, e - s);
        prev_end = e;
        kept += 1;
        true
    });
    let mut out = vec![TAG];
    put_varint(&mut out, if new_cut == u64::MAX { 0 } else { new_cut + 1 });
    put_varint(&mut out, kept);
    out.extend_from_slice(&body);
    Snapshot {
        payload: out,
        cut: new_cut,
    }
}

fn malformed(why: &str) -> StoreError {
    StoreError::Format(format!(
        "the written-page map in the state record is malformed ({why}): the store is corrupt"
    ))
}

fn get_varint(b: &[u8], at: &mut usize) -> Result<u64, StoreError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b
            .get(*at)
            .ok_or_else(|| malformed("ends inside a number"))?;
        *at += 1;
        let bits = u64::from(byte & 0x7f);
        if shift == 63 && bits > 1 {
            return Err(malformed("a number overflows"));
        }
        v |= bits << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(malformed("a number overflows"))
}

/// Ascending, disjoint, non-adjacent ranges `start..end` and the cut (`u64::MAX`: none).
pub(super) type Decoded = (Vec<(u64, u64)>, u64);

pub(super) fn decode(b: &[u8], kind: &str) -> Result<Decoded, StoreError> {
    match b.first() {
        Some(&TAG) => {}
        None => {
            return Err(StoreError::Format(format!(
                "this {kind} store was formatted by an earlier flashbuf (its state record has no written-page map, so pages lost at rest would read as never written); it is not opened: read it with that version or recreate it"
            )))
        }
        Some(t) => return Err(malformed(&format!("unknown tag {t:#04x}"))),
    }
    let mut at = 1;
    let cut = match get_varint(b, &mut at)? {
        0 => u64::MAX,
        c => c - 1,
    };
    let n = get_varint(b, &mut at)?;
    let mut ranges = Vec::new();
    let mut prev_end = 0u64;
    for i in 0..n {
        let gap = get_varint(b, &mut at)?;
        let len = get_varint(b, &mut at)?;
        if len == 0 || (i > 0 && gap == 0) {
            return Err(malformed("an empty or adjacent range"));
        }
        let s = prev_end
            .checked_add(gap)
            .ok_or_else(|| malformed("a page id overflows"))?;
        let e = s
            .checked_add(len)
            .filter(|&e| e <= cut)
            .ok_or_else(|| malformed("a range beyond the cut"))?;
        ranges.push((s, e));
        prev_end = e;
    }
    if at != b.len() {
        return Err(malformed("bytes after the last range"));
    }
    Ok((ranges, cut))
}
