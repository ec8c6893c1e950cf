//! Page-trace CSV in long runs of plain lines (the reader's bulk path) broken by other
//! lines: the same references as line-by-line parsing, and errors that name their line,
//! wherever the reads and batches split the text.

use flashbuf_trace::{PageRef, TraceError, TraceReader};
use std::path::Path;

/// `lines` plain lines of varying length, with the odd line the bulk path leaves to the
/// general parser; returns the text and its references.
fn trace(lines: u64) -> (String, Vec<PageRef>) {
    let mut text = String::from("op,page\n");
    let mut refs = Vec::new();
    for i in 0..lines {
        // 1 to 19 digits: 16 and more leave the bulk path.
        let page = (i * 0x9E37_79B9) % 10u64.pow(1 + (i % 19) as u32);
        match i % 1009 {
            7 => text.push_str(&format!("R,{page}\r\n")),
            8 => text.push_str(&format!(" w , {page}\n")),
            9 => text.push_str(&format!("# note\n\nr,{page}\n")),
            _ if i.is_multiple_of(3) => text.push_str(&format!("W,{page}\n")),
            _ => text.push_str(&format!("R,{page}\n")),
        }
        let write = i % 1009 == 8 || (i.is_multiple_of(3) && !matches!(i % 1009, 7 | 9));
        refs.push(if write {
            PageRef::write(page)
        } else {
            PageRef::read(page)
        });
    }
    (text, refs)
}

fn variants(dir: &Path, text: &[u8]) -> Vec<std::path::PathBuf> {
    let plain = dir.join("t.csv");
    std::fs::write(&plain, text).expect("write");
    let zst = dir.join("t.csv.zst");
    std::fs::write(&zst, zstd::encode_all(text, 3).expect("zstd")).expect("write");
    vec![plain, zst]
}

#[test]
fn runs_read_like_single_lines_at_any_batch_size() {
    let (text, want) = trace(300_000);
    let dir = tempfile::tempdir().expect("tempdir");
    for path in variants(dir.path(), text.as_bytes()) {
        for batch in [1, 63, 4096, 100_000] {
            let mut reader = TraceReader::open(&path, None, 4096).expect("open");
            let mut got = Vec::new();
            while reader.next_batch(&mut got, batch).expect("batch") > 0 {}
            assert!(got == want, "{path:?} batch {batch}");
            assert_eq!(reader.line(), text.lines().count() as u64);
        }
    }
}

#[test]
fn a_bad_line_deep_in_a_run_is_named_and_reading_goes_on() {
    let (mut text, want) = trace(200_000);
    // A bad line after megabytes of plain lines, then more plain lines.
    let bad_line = text.lines().count() as u64 + 1;
    text.push_str("R,12x4\n");
    let (more, more_refs) = trace(5_000);
    text.push_str(more.strip_prefix("op,page\n").expect("header"));
    let dir = tempfile::tempdir().expect("tempdir");
    for path in variants(dir.path(), text.as_bytes()) {
        let mut reader = TraceReader::open(&path, None, 4096).expect("open");
        let mut got = Vec::new();
        let err = loop {
            match reader.next_batch(&mut got, 50_000) {
                Ok(0) => panic!("no error in {path:?}"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        match &err {
            TraceError::Parse { line, message, .. } => {
                assert_eq!(*line, bad_line, "{path:?}");
                assert_eq!(message, "expected a page number, found '12x4'");
            }
            e => panic!("unexpected error {e}"),
        }
        assert!(got == want, "{path:?}: the references before the bad line");
        let mut rest = Vec::new();
        while reader.next_batch(&mut rest, 50_000).expect("after") > 0 {}
        assert!(rest == more_refs, "{path:?}: the references after it");
    }
}
