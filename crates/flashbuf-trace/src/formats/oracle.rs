//! libCacheSim's binary `oracleGeneral` trace (plain or zstd-compressed): no header, then
//! 24-byte little-endian records
//!
//! ```text
//! offset 0   u32 clock_time          request time (seconds in libCacheSim's corpora)
//! offset 4   u64 obj_id              the object requested
//! offset 12  u32 obj_size            its size in bytes
//! offset 16  i64 next_access_vtime   the (virtual) time of its next request; -1 or
//!                                    i64::MAX: never
//! ```
//!
//! as defined by libCacheSim's `traceReader/customizedReader/oracle/oracleGeneralBin.h`
//! (1a1a11a/libCacheSim; the header's struct, read field by field at those offsets).
//!
//! # Reading (and its deviations from libCacheSim)
//! - Each record becomes one **read** of page `obj_id`: the format has no operation field,
//!   so its corpora replay as read-only traces. The object id is used as the page number
//!   unchanged (in the block corpora it is the block number; in the others a hash).
//! - `obj_size` is otherwise ignored: an object is one page whatever its size, so the page
//!   size given to the reader plays no part. A record of size 0 is skipped and counted by
//!   [`TraceReader::skipped`](crate::TraceReader::skipped), as libCacheSim's readers do by
//!   default (`ignore_size_zero_req`), so that request counts equal libCacheSim's.
//! - `clock_time` is ignored; `next_access_vtime` is ignored but checked: a value below -1
//!   cannot come from libCacheSim's converters and is reported as a bad record (it is what
//!   a file that is not an oracleGeneral trace usually shows).
//! - A file whose length is not a multiple of 24 bytes ends in an incomplete record: an
//!   error naming the record (libCacheSim silently drops it).

use super::Parsed;
use crate::Op;

/// Bytes per record.
pub(crate) const RECORD_BYTES: usize = 24;

/// Decodes one record (`rec` holds exactly [`RECORD_BYTES`] bytes).
#[inline(always)]
pub(crate) fn decode(rec: &[u8]) -> Result<Parsed, String> {
    let obj_id = u64_at(rec, 4);
    let obj_size = u32::from_le_bytes([rec[12], rec[13], rec[14], rec[15]]);
    let next = u64_at(rec, 16) as i64;
    if next < -1 {
        return Err(bad_next(next));
    }
    if obj_size == 0 {
        return Ok(Parsed::Skip);
    }
    Ok(Parsed::One(Op::Read, obj_id))
}

#[inline(always)]
fn u64_at(rec: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&rec[at..at + 8]);
    u64::from_le_bytes(w)
}

#[cold]
fn bad_next(next: i64) -> String {
    format!(
        "next_access_vtime {next} is below -1: not an oracleGeneral record \
         (24 bytes: u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(time: u32, id: u64, size: u32, next: i64) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&time.to_le_bytes());
        r.extend_from_slice(&id.to_le_bytes());
        r.extend_from_slice(&size.to_le_bytes());
        r.extend_from_slice(&next.to_le_bytes());
        r
    }

    #[test]
    fn records() {
        assert_eq!(record(0, 0, 0, 0).len(), RECORD_BYTES);
        assert_eq!(
            decode(&record(5_633_898, 42_932_745, 512, -1)),
            Ok(Parsed::One(Op::Read, 42_932_745))
        );
        assert_eq!(
            decode(&record(1, u64::MAX, 1, i64::MAX)),
            Ok(Parsed::One(Op::Read, u64::MAX))
        );
        assert_eq!(
            decode(&record(1, 7, 4096, 12)),
            Ok(Parsed::One(Op::Read, 7))
        );
        assert_eq!(decode(&record(1, 7, 0, 3)), Ok(Parsed::Skip));
        let e = decode(&record(1, 7, 512, -2)).expect_err("an error");
        assert!(e.starts_with("next_access_vtime -2 is below -1"), "{e}");
        assert!(decode(&record(1, 7, 512, i64::MIN)).is_err());
    }
}
