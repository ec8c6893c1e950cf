//! Linux `blkparse` text output in its default format (blktrace's `blkparse_fmt.c`,
//! `process_default`): one event per line,
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]
//! maj,min cpu sequence  seconds.nanos   pid action RWBS sector + sectors [process]
//! ```
//!
//! then, at the end, the summary blkparse prints (`CPU0 (8,0):`, ` Reads Queued: ...`,
//! `Total (8,0):`, `Throughput (R/W): ...`, `Events (8,0): N entries`, `Skips: ...`, and
//! with `-s` one block per process headed `name (pid)`), and at the start the
//! `Input file X added` lines it prints on the same stream. Those lines are recognised and
//! skipped without being counted; any other line is an error naming it, and so is an event
//! line whose fixed fields (device `maj,min`, CPU, sequence, time, pid, action letters,
//! RWBS letters) are malformed, whatever its action.
//!
//! # Which events are requests
//! One action is counted: `Q` (queued) by default, `D` (issued to the driver) with
//! `--format blkparse-d` ([`BlkAction`](crate::BlkAction)). Every I/O shows up as several
//! events (typically `Q G I D C`, or `Q M` when merged into another request); counting one
//! kind gives each request once. `Q` is the default because it is the request stream the
//! layer above the device asked for — what a buffer or cache sitting there would see —
//! before the I/O scheduler merged adjacent requests (`M`/`F`), split them, reordered them
//! or issued them again after a requeue (`R`); `D` gives what the device was asked to do.
//! Stacked devices (device-mapper, md) emit `Q` on each layer traced: trace one layer.
//!
//! # RWBS and sizes
//! The main letter of RWBS (the first, or the second after a leading `F` = preflush) gives
//! the operation: `R` read, `W` write; `D` (discard) and `N` (no data: a pure flush) are
//! valid requests that reference nothing — skipped and counted by
//! [`TraceReader::skipped`](crate::TraceReader::skipped), as are requests of 0 sectors,
//! requests printed without a sector (`Q FWS [proc]`) and SCSI pass-through requests
//! (`bytes (cdb) [proc]`). The trailing flag letters (`F` FUA, `A`, `S`, `M`, ...) are
//! accepted and ignored; any other main letter is an error. Sectors are 512 bytes;
//! `sector + n` covers bytes `512·sector .. 512·(sector + n)`, converted to pages at the
//! page size like the other byte-addressed formats.
//!
//! Each device is its own address space (as DiskSim devices): the space number is
//! `maj · 4096 + min` and `page = (space << 40) | page_within_device`; a device whose major
//! or minor number exceeds 4095 is an error on its first request.

use super::fields::{expect_number, expect_u64, show, trim};
use super::{byte_span, in_space, Parsed};
use crate::{BlkAction, Op};

/// Largest major and minor number given an address space.
const MAX_DEVICE_NUMBER: u64 = 4095;

/// The fixed fields of an event line: device (major, minor), action, RWBS.
struct Event<'a> {
    major: u64,
    minor: u64,
    action: &'a [u8],
    rwbs: &'a [u8],
}

fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b == b' ' || b == b'\t')
        .filter(|t| !t.is_empty())
}

/// Parses one line in the mode `action`.
pub(crate) fn parse(line: &[u8], page_size: u64, action: BlkAction) -> Result<Parsed, String> {
    let starts_with_digit = trim(line).first().is_some_and(u8::is_ascii_digit);
    if !starts_with_digit || (!has_device(line) && is_process_header(trim(line))) {
        return summary_line(line);
    }
    let mut tok = tokens(line);
    let ev = event_header(&mut tok)?;
    if ev.action != [action.letter()] {
        return Ok(Parsed::Ignore);
    }
    let op = main_op(ev.rwbs)?;
    let Some((sector, sectors)) = request_range(&mut tok)? else {
        return Ok(Parsed::Skip);
    };
    let Some(op) = op else {
        return Ok(Parsed::Skip);
    };
    if sectors == 0 {
        return Ok(Parsed::Skip);
    }
    if ev.major > MAX_DEVICE_NUMBER || ev.minor > MAX_DEVICE_NUMBER {
        return Err(format!(
            "device {},{} cannot have its own address space (major and minor must be at \
             most {MAX_DEVICE_NUMBER})",
            ev.major, ev.minor
        ));
    }
    let offset = sector
        .checked_mul(512)
        .ok_or_else(|| format!("sector {sector} is too large"))?;
    let size = sectors
        .checked_mul(512)
        .ok_or_else(|| format!("sector count {sectors} is too large"))?;
    let space = (ev.major << 12) | ev.minor;
    in_space(byte_span(op, offset, size, page_size)?, space, "device")
}

/// Whether `line` is an event line of any action (used by auto-detection).
pub(crate) fn is_event(line: &[u8]) -> bool {
    event_header(&mut tokens(line)).is_ok()
}

fn has_device(line: &[u8]) -> bool {
    tokens(line).next().is_some_and(|t| t.contains(&b','))
}

/// The seven fixed fields, checked.
fn event_header<'a>(tok: &mut impl Iterator<Item = &'a [u8]>) -> Result<Event<'a>, String> {
    let mut f: [&[u8]; 7] = [&[]; 7];
    for (i, slot) in f.iter_mut().enumerate() {
        *slot = tok.next().ok_or_else(|| {
            format!(
                "expected an event 'maj,min cpu sequence time pid action RWBS ...', found only \
                 {i} fields"
            )
        })?;
    }
    let [device, cpu, seq, time, pid, action, rwbs] = f;
    let (major, minor) = match device.iter().position(|&b| b == b',') {
        Some(i) => (
            expect_u64(&device[..i], "a device major number")?,
            expect_u64(&device[i + 1..], "a device minor number")?,
        ),
        None => {
            return Err(format!(
                "expected a device maj,min, found '{}'",
                show(device)
            ))
        }
    };
    expect_u64(cpu, "a CPU number")?;
    expect_u64(seq, "a sequence number")?;
    expect_number(time, "a time in seconds")?;
    expect_u64(pid, "a process id")?;
    if !(1..=2).contains(&action.len()) || !action.iter().all(u8::is_ascii_alphabetic) {
        return Err(format!(
            "expected an action (one or two letters: Q, G, I, D, C, M, UT, m, ...), found '{}'",
            show(action)
        ));
    }
    if !(1..=8).contains(&rwbs.len()) || !rwbs.iter().all(u8::is_ascii_uppercase) {
        return Err(format!(
            "expected RWBS letters (e.g. R, WS, FWFS, D, N), found '{}'",
            show(rwbs)
        ));
    }
    Ok(Event {
        major,
        minor,
        action,
        rwbs,
    })
}

/// The operation of a request: `Some(op)` for R/W, `None` for a discard or no-data request.
fn main_op(rwbs: &[u8]) -> Result<Option<Op>, String> {
    let main = match rwbs {
        [b'F', m, ..] => *m,
        [m, ..] => *m,
        [] => 0,
    };
    match main {
        b'R' => Ok(Some(Op::Read)),
        b'W' => Ok(Some(Op::Write)),
        b'D' | b'N' => Ok(None),
        _ => Err(format!(
            "RWBS '{}' has no operation letter R, W, D (discard) or N (no data)",
            show(rwbs)
        )),
    }
}

/// What follows RWBS on a request line: `Some((sector, sectors))` for `sector + n
/// [process]` (an elapsed time `(t)` may come before the process), `None` for a request
/// printed without a range (`[process]`, `(t) [process]`, or a pass-through request
/// `bytes (cdb) [process]`).
fn request_range<'a>(
    tok: &mut impl Iterator<Item = &'a [u8]>,
) -> Result<Option<(u64, u64)>, String> {
    let bracket = |t: &[u8]| matches!(t.first(), Some(b'[' | b'('));
    let Some(first) = tok.next() else {
        return Err("expected 'sector + count [process]' after RWBS, found nothing".into());
    };
    if bracket(first) {
        return Ok(None);
    }
    let sector = expect_u64(first, "a sector number")?;
    match tok.next() {
        Some(b"+") => {}
        Some(t) if bracket(t) => return Ok(None),
        Some(t) => {
            return Err(format!(
                "expected '+ count' after sector {sector}, found '{}'",
                show(t)
            ))
        }
        None => {
            return Err(format!(
                "expected '+ count' after sector {sector}, found nothing"
            ))
        }
    }
    let sectors = expect_u64(tok.next().unwrap_or_default(), "a sector count")?;
    match tok.next() {
        Some(t) if bracket(t) => Ok(Some((sector, sectors))),
        t => Err(format!(
            "expected '[process]' after '{sector} + {sectors}', found '{}'",
            show(t.unwrap_or_default())
        )),
    }
}

/// A line of the summary (or the `Input file` preamble): ignored; anything else is an error.
fn summary_line(line: &[u8]) -> Result<Parsed, String> {
    let t = trim(line);
    let indented = matches!(line.first(), Some(b' ' | b'\t'));
    let known = (indented && t[0].is_ascii_alphabetic() && t.contains(&b':'))
        || (t.starts_with(b"CPU") && t.ends_with(b"):"))
        || (t.starts_with(b"Total (") && t.ends_with(b"):"))
        || t.starts_with(b"Throughput (R/W):")
        || (t.starts_with(b"Events (") && t.ends_with(b" entries"))
        || t.starts_with(b"Skips:")
        || (t.starts_with(b"Input file ") && t.ends_with(b" added"))
        || t.starts_with(b"discarded traces containing low-level device driver")
        || is_process_header(t);
    if known {
        Ok(Parsed::Ignore)
    } else {
        Err(format!(
            "expected a blkparse event 'maj,min cpu sequence time pid action RWBS ...' or a \
             line of its summary, found '{}'",
            show(t)
        ))
    }
}

/// `name (pid)` or `name (pid, ...)`: the head of a per-process block of the summary.
fn is_process_header(t: &[u8]) -> bool {
    let Some(body) = t.strip_suffix(b")") else {
        return false;
    };
    let Some(open) = body.windows(2).rposition(|w| w == b" (") else {
        return false;
    };
    let inner = &body[open + 2..];
    let inner = inner.strip_suffix(b", ...").unwrap_or(inner);
    open > 0 && !inner.is_empty() && inner.iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: BlkAction = BlkAction::Queue;
    const D: BlkAction = BlkAction::Issue;
    const DEV_8_0: u64 = (8u64 << 12) << 40;

    fn p(line: &str, action: BlkAction) -> Result<Parsed, String> {
        parse(line.as_bytes(), 4096, action)
    }

    #[test]
    fn requests() {
        let q = "  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]";
        let page = 3_417_048 * 512 / 4096;
        assert_eq!(p(q, Q), Ok(Parsed::One(Op::Write, DEV_8_0 | page)));
        assert_eq!(p(q, D), Ok(Parsed::Ignore));
        let d = "259,0    1       12     0.5   42  D   R 16 + 24 [fio]";
        let nvme = (259u64 << 12) << 40;
        assert_eq!(p(d, D), Ok(Parsed::Span(Op::Read, nvme | 2, nvme | 4)));
        // Preflush + write + FUA; an elapsed time before the process.
        let f = "  8,0  0  5  1.000000001  9  Q FWFS 8 + 8 (    1234) [jbd2/sda-8]";
        assert_eq!(p(f, Q), Ok(Parsed::One(Op::Write, DEV_8_0 | 1)));
        // Readahead flags; process names with spaces.
        let r = "  8,16 2 7 0.1 5 Q RA 0 + 1 [Web Content]";
        assert_eq!(p(r, Q), Ok(Parsed::One(Op::Read, (8u64 << 12 | 16) << 40)));
    }

    #[test]
    fn requests_without_data_are_skipped() {
        for line in [
            "  8,0  0  5  1.0  9  Q  DS 2048 + 2048 [fstrim]",
            "  8,0  0  5  1.0  9  Q  FN [kworker/0:1H]",
            "  8,0  0  5  1.0  9  Q FWS [(null)]",
            "  8,0  0  5  1.0  9  Q  WS 100 + 0 [jbd2]",
            "  8,0  0  5  1.0  9  Q  R 8 (12 00 00 ..) [scsi_id]",
            "  8,0  0  5  1.0  9  Q  N (    55) [sync]",
        ] {
            assert_eq!(p(line, Q), Ok(Parsed::Skip), "{line}");
        }
    }

    #[test]
    fn other_events_and_summary_are_ignored() {
        for line in [
            "  8,0    3        2     0.000009447   697  G  WS 3417048 + 8 [kjournald]",
            "  8,0    3        3     0.000011319   697  P   N [kjournald]",
            "  8,0    3        0     0.000025098     0  m   N cfq697 insert_request",
            "  8,0    3        5     0.000038543   697  UT  N [kjournald] 1",
            "  8,0    1        1     0.001146016     0  C  WS 3417048 + 8 [0]",
            "  8,0    1        1     0.001146016     0  A  WS 3417048 + 8 <- (8,1) 3417000",
            "CPU3 (8,0):",
            " Reads Queued:           0,        0KiB\t Writes Queued:         195,   29,228KiB",
            " IO unplugs:           104               Timer unplugs:           0",
            "Total (sde):",
            "Throughput (R/W): 0KiB/s / 9,119KiB/s",
            "Events (8,80): 1,002,880 entries",
            "Skips: 0 forward (0 -   0.0%)",
            "Input file sda.blktrace.0 added",
            "kjournald (697)",
            "fio (90790, ...)",
            "7zip (12)",
        ] {
            assert_eq!(p(line, Q), Ok(Parsed::Ignore), "{line}");
        }
    }

    #[test]
    fn malformed_lines() {
        let err = |line: &str| p(line, Q).expect_err(line);
        assert_eq!(
            err("  8,0  3  1"),
            "expected an event 'maj,min cpu sequence time pid action RWBS ...', found only 3 \
             fields"
        );
        assert_eq!(
            err("  8.0  3  1  0.1  5  Q  R 8 + 8 [x]"),
            "expected a device maj,min, found '8.0'"
        );
        assert_eq!(
            err("  8,0  3  x  0.1  5  Q  R 8 + 8 [x]"),
            "expected a sequence number, found 'x'"
        );
        assert_eq!(
            err("  8,0  3  1  0.1  5  Q1  R 8 + 8 [x]"),
            "expected an action (one or two letters: Q, G, I, D, C, M, UT, m, ...), found 'Q1'"
        );
        assert_eq!(
            err("  8,0  3  1  0.1  5  C  w 8 + 8 [0]"),
            "expected RWBS letters (e.g. R, WS, FWFS, D, N), found 'w'"
        );
        assert_eq!(
            err("  8,0  3  1  0.1  5  Q  SM 8 + 8 [x]"),
            "RWBS 'SM' has no operation letter R, W, D (discard) or N (no data)"
        );
        assert_eq!(
            err("  8,0  3  1  0.1  5  Q  R 8 - 8 [x]"),
            "expected '+ count' after sector 8, found '-'"
        );
        assert_eq!(
            err("  8,0  3  1  0.1  5  Q  R 8 + 8"),
            "expected '[process]' after '8 + 8', found ''"
        );
        assert_eq!(
            err("  8,0  3  1  0.1  5  Q  R 8 + x [p]"),
            "expected a sector count, found 'x'"
        );
        assert_eq!(
            err("  8,0  3  1  0.1  5  Q  R"),
            "expected 'sector + count [process]' after RWBS, found nothing"
        );
        assert!(err("8,5000 3 1 0.1 5 Q R 8 + 8 [p]").starts_with("device 8,5000 cannot"));
        assert!(err("Reads Queued: 5").starts_with("expected a blkparse event"));
        assert!(err("hello").contains("found 'hello'"));
        assert!(is_event(
            b"  8,0    3        2     0.000009447   697  G  WS 1 + 8 [k]"
        ));
        assert!(!is_event(b"1,5,2a,512,9"));
    }
}
