//! Format auto-detection from the start of the (decompressed) content, with the file name
//! as a fallback.
//!
//! Binary formats first:
//! - content starting with the pagebin magic ([`PAGEBIN_MAGIC`]) → [`Format::PageBin`];
//! - a name containing `oracleGeneral` (any case), with content that is empty or holds a
//!   NUL byte (binary) → [`Format::OracleGeneral`]: the format has no magic, so only the
//!   name (libCacheSim's corpora are named `*.oracleGeneral*`) or `--format oracle-general`
//!   identifies it.
//!
//! Then the text rules, applied to the first line that is neither blank, nor a `#`
//! comment, nor blkparse's `Input file X added`:
//! - a blkparse event `maj,min cpu seq time pid action RWBS ...` →
//!   [`Format::Blkparse`] counting `Q` events;
//! - `op,page` (the page-trace header), or `R,<n>` / `W,<n>` → [`Format::PageTrace`];
//! - 7 comma-separated fields with `Read`/`Write` in field 4 → [`Format::Msr`];
//! - 5 comma-separated fields with `r`/`w` in field 4 → [`Format::Spc`];
//! - 5 comma-separated fields with a hex opcode in field 3 and a number in field 4 →
//!   [`Format::LcsCsv`];
//! - 5 whitespace-separated numbers → [`Format::DiskSim`]; 4 → [`Format::ArcLis`].
//!
//! A first line that starts with a letter is taken for a header and the rules are applied
//! to the line after it (a header alone still identifies `op,page` and
//! `version,time,op,size,lbn`). When the content decides nothing (empty file, only
//! comments, or a first line that matches no rule), the file name decides if it contains
//! `pagetrace`, `pagebin`, `oraclegeneral`, `msr`, `.spc`, `lcs` or `cloudphysics`,
//! `disksim`, `blkparse` or `blktrace`, or `.lis`; otherwise the result is
//! [`TraceError::UnknownFormat`](crate::TraceError::UnknownFormat).

use crate::formats::fields::{expect_number, parse_u64, show, split, split_ws, trim};
use crate::formats::lcs::parse_hex_op;
use crate::formats::{blkparse, pagetrace};
use crate::{BlkAction, Format, PAGEBIN_MAGIC};
use std::path::Path;

/// Detects the format of the text `head` (the start of the content) read from `path`.
/// `Err` carries the reason for an unknown format.
pub fn detect(head: &[u8], path: &Path) -> Result<Format, String> {
    let magic_len = head.len().min(PAGEBIN_MAGIC.len());
    if magic_len > 0 && head[..magic_len] == PAGEBIN_MAGIC[..magic_len] {
        return Ok(Format::PageBin);
    }
    let by_name = from_name(path);
    let binary = head.contains(&0);
    if by_name == Some(Format::OracleGeneral) && (head.is_empty() || binary) {
        return Ok(Format::OracleGeneral);
    }
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| {
            let t = trim(l);
            !t.is_empty() && t[0] != b'#' && !is_blkparse_preamble(t)
        });
    let first = lines.next();
    let Some(first) = first else {
        return by_name.ok_or_else(|| {
            "the file is empty (or holds only blank and comment lines) and its name \
             suggests no format"
                .to_string()
        });
    };
    if let Some(f) = classify(first) {
        return Ok(f);
    }
    let looks_like_header = trim(first).first().is_some_and(u8::is_ascii_alphabetic);
    if looks_like_header {
        if let Some(f) = header_format(first) {
            return Ok(f);
        }
        if let Some(f) = lines.next().and_then(classify) {
            if matches!(f, Format::Msr | Format::Spc | Format::LcsCsv) {
                return Ok(f);
            }
        }
    }
    by_name.ok_or_else(|| {
        let hint = if binary {
            "; the content is binary: an oracleGeneral trace needs `oracleGeneral` in its \
             file name or --format oracle-general"
        } else {
            ""
        };
        format!(
            "the first line '{}' matches none of: page trace (`op,page`), MSR (7 CSV fields, \
             Read/Write in field 4), SPC (5 CSV fields, r/w in field 4), libCacheSim CSV \
             (5 CSV fields, hex opcode in field 3), DiskSim (5 whitespace-separated numbers), \
             ARC .lis (4 whitespace-separated numbers), blkparse (`maj,min cpu seq time pid \
             action RWBS ...`), pagebin (its magic bytes){hint}",
            show(first)
        )
    })
}

/// blkparse's `Input file X added` lines, printed before the events.
fn is_blkparse_preamble(t: &[u8]) -> bool {
    t.starts_with(b"Input file ") && t.ends_with(b" added")
}

/// The format one data line looks like, if any.
fn classify(line: &[u8]) -> Option<Format> {
    if pagetrace::is_header(line) {
        return Some(Format::PageTrace);
    }
    if blkparse::is_event(line) {
        return Some(Format::Blkparse(BlkAction::Queue));
    }
    if line.contains(&b',') {
        if let Ok([op, page]) = split::<2>(line, b',') {
            let op_ok = matches!(trim(op), b"R" | b"W" | b"r" | b"w");
            return (op_ok && parse_u64(page).is_some()).then_some(Format::PageTrace);
        }
        if let Ok(f) = split::<7>(line, b',') {
            let ty = trim(f[3]);
            let rw = ty.eq_ignore_ascii_case(b"read") || ty.eq_ignore_ascii_case(b"write");
            return rw.then_some(Format::Msr);
        }
        if let Ok(f) = split::<5>(line, b',') {
            if matches!(trim(f[3]), b"r" | b"w" | b"R" | b"W") {
                return Some(Format::Spc);
            }
            if parse_hex_op(f[2]).is_some() && parse_u64(f[3]).is_some() {
                return Some(Format::LcsCsv);
            }
        }
        return None;
    }
    let numbers = |fields: &[&[u8]]| fields.iter().all(|f| expect_number(f, "").is_ok());
    if let Ok(f) = split_ws::<5>(line) {
        return numbers(&f).then_some(Format::DiskSim);
    }
    if let Ok(f) = split_ws::<4>(line) {
        return numbers(&f).then_some(Format::ArcLis);
    }
    None
}

/// Formats recognisable from their header line alone.
fn header_format(line: &[u8]) -> Option<Format> {
    let names = split::<5>(line, b',').ok()?;
    let is = |i: usize, name: &[u8]| trim(names[i]).eq_ignore_ascii_case(name);
    (is(2, b"op") && is(4, b"lbn")).then_some(Format::LcsCsv)
}

/// The format the file name suggests, if any.
fn from_name(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let has = |s: &str| name.contains(s);
    if has("pagetrace") {
        Some(Format::PageTrace)
    } else if has("oraclegeneral") {
        Some(Format::OracleGeneral)
    } else if has("pagebin") {
        Some(Format::PageBin)
    } else if has("blkparse") || has("blktrace") {
        Some(Format::Blkparse(BlkAction::Queue))
    } else if has(".lis") {
        Some(Format::ArcLis)
    } else if has("disksim") {
        Some(Format::DiskSim)
    } else if has(".spc") {
        Some(Format::Spc)
    } else if has("lcs") || has("cloudphysics") {
        Some(Format::LcsCsv)
    } else if has("msr") {
        Some(Format::Msr)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Result<Format, String> {
        detect(s.as_bytes(), Path::new("x.txt"))
    }

    #[test]
    fn content_rules() {
        assert_eq!(d("op,page\nR,1\n"), Ok(Format::PageTrace));
        assert_eq!(d("\n# c\nW,1\n"), Ok(Format::PageTrace));
        assert_eq!(d("1,h,0,Read,0,8192,0\n"), Ok(Format::Msr));
        assert_eq!(
            d("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n1,h,0,write,0,1,0\n"),
            Ok(Format::Msr)
        );
        assert_eq!(d("0,303567,3584,w,0.000000\n"), Ok(Format::Spc));
        assert_eq!(d("version,time,op,size,lbn\n"), Ok(Format::LcsCsv));
        assert_eq!(d("1,5633898,2a,512,42932745\n"), Ok(Format::LcsCsv));
        assert_eq!(d("938513000 4 264719034 16 0\n"), Ok(Format::DiskSim));
        assert_eq!(d("1 1 0 0\r\n"), Ok(Format::ArcLis));
        let e = d("hello world\n").expect_err("an error");
        assert!(e.contains("'hello world'"), "{e}");
        assert!(d("").expect_err("an error").contains("empty"));
    }

    #[test]
    fn name_fallback() {
        assert_eq!(detect(b"", Path::new("a.lis")), Ok(Format::ArcLis));
        assert_eq!(
            detect(b"garbage\n", Path::new("t.pagetrace.csv.zst")),
            Ok(Format::PageTrace)
        );
        // Content wins over the name.
        assert_eq!(detect(b"R,1\n", Path::new("a.lis")), Ok(Format::PageTrace));
        assert_eq!(detect(b"", Path::new("sda.blktrace.txt")), Ok(Q));
        assert_eq!(
            detect(b"junk\n", Path::new("x.pagebin")),
            Ok(Format::PageBin)
        );
    }

    const Q: Format = Format::Blkparse(BlkAction::Queue);

    #[test]
    fn binary_formats() {
        let mut bin = PAGEBIN_MAGIC.to_vec();
        assert_eq!(detect(&bin, Path::new("t.csv")), Ok(Format::PageBin));
        bin.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(detect(&bin, Path::new("t.lis")), Ok(Format::PageBin));
        // A cut file that holds part of the magic is still taken for pagebin (its header
        // check then says what is missing).
        assert_eq!(detect(&bin[..3], Path::new("t")), Ok(Format::PageBin));
        let og = [0x6a, 0xf7, 0x55, 0x00, 0x09, 0x1a, 0x8f, 0x02, 0, 0, 0, 0];
        let name = Path::new("cloudPhysicsIO.oracleGeneral.bin.zst");
        assert_eq!(detect(&og, name), Ok(Format::OracleGeneral));
        assert_eq!(detect(b"", name), Ok(Format::OracleGeneral));
        // Text named oracleGeneral is read as text; binary without the name is unknown.
        assert_eq!(detect(b"R,1\n", name), Ok(Format::PageTrace));
        let e = detect(&og, Path::new("trace.bin")).expect_err("unknown");
        assert!(e.contains("needs `oracleGeneral` in its file name"), "{e}");
    }

    #[test]
    fn blkparse_shape() {
        let ev = "  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]\n";
        assert_eq!(d(ev), Ok(Q));
        assert_eq!(d(&format!("Input file sda.blktrace.0 added\n{ev}")), Ok(Q));
        assert_eq!(
            d("259,0 1 1 0.000001 0 m N cfq insert\n"),
            Ok(Q),
            "any action identifies the format"
        );
        assert!(d("8,0 3 1 0.1 697 Q\n").is_err());
    }
}
