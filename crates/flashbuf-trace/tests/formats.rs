//! Each format on small inline samples, with exact expected references; compression
//! variants; the batch and iterator APIs; and bad input with its exact messages.

use flashbuf_trace::{Compression, Format, PageRef, TraceError, TraceReader};
use std::io::Write;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write sample");
    path
}

fn zst(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).expect("zstd")
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).expect("gzip");
    e.finish().expect("gzip")
}

fn read_all(path: &Path, format: Option<Format>, ps: u32) -> Result<Vec<PageRef>, TraceError> {
    TraceReader::open(path, format, ps)?.collect()
}

/// Reads `text` as plain, `.zst` and `.gz` (also under misleading names), with the format
/// given and detected, and checks that every variant yields `expect`.
fn check(format: Format, text: &str, ps: u32, expect: &[PageRef]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let variants = [
        ("plain.trace", text.as_bytes().to_vec(), Compression::None),
        ("t.zst", zst(text.as_bytes()), Compression::Zstd),
        ("t.gz", gz(text.as_bytes()), Compression::Gzip),
        // Compression comes from the magic bytes, not the name.
        ("zstd-named.gz", zst(text.as_bytes()), Compression::Zstd),
        ("gzip-named.txt", gz(text.as_bytes()), Compression::Gzip),
    ];
    for (name, bytes, compression) in variants {
        let path = write(dir.path(), name, &bytes);
        for given in [Some(format), None] {
            let reader = TraceReader::open(&path, given, ps).expect("open");
            assert_eq!(reader.format(), format, "{name} {given:?}");
            assert_eq!(reader.compression(), compression, "{name}");
            let got: Vec<PageRef> = reader.collect::<Result<_, _>>().expect("read");
            assert_eq!(got, expect, "{name} {given:?}");
        }
    }
}

const fn r(page: u64) -> PageRef {
    PageRef::read(page)
}
const fn w(page: u64) -> PageRef {
    PageRef::write(page)
}

#[test]
fn pagetrace() {
    let text = "op,page\nR,1\nW,2\n\n   \n# a comment\nR,16777216\r\nw, 3 \nr,0";
    check(
        Format::PageTrace,
        text,
        4096,
        &[r(1), w(2), r(16777216), w(3), r(0)],
    );
    // The page size does not matter; a header is optional.
    check(
        Format::PageTrace,
        "W,5\nR,18446744073709551615\n",
        1,
        &[w(5), r(u64::MAX)],
    );
}

#[test]
fn msr() {
    let text = "128166372003061629,hm,1,Read,8192,8192,100\n\
                128166372003061630,hm,1,Write,4095,2,50\n\
                128166372003061631,hm,1,write,12288,0,5\n\
                128166372003061632,hm,1,READ,0,16384,5\n";
    check(
        Format::Msr,
        text,
        4096,
        &[r(2), r(3), w(0), w(1), w(3), r(0), r(1), r(2), r(3)],
    );
    check(Format::Msr, text, 8192, &[r(1), w(0), w(1), r(0), r(1)]);
    check(Format::Msr, text, 512, &{
        let mut v: Vec<PageRef> = (16..32).map(r).collect();
        v.extend([w(7), w(8), w(24)]);
        v.extend((0..32).map(r));
        v
    });
    // A header line is skipped.
    let with_header =
        format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{text}");
    check(
        Format::Msr,
        &with_header,
        8192,
        &[r(1), w(0), w(1), r(0), r(1)],
    );
}

#[test]
fn spc() {
    let asu = |a: u64, p: u64| (a << 40) | p;
    let text = "0,8,4096,r,0.000000\n1,7,1024,W,0.010000\n2,0,0,R,0.02\n0,303567,3584,w,0.000000\n";
    check(
        Format::Spc,
        text,
        4096,
        &[
            r(1),
            w(asu(1, 0)),
            w(asu(1, 1)),
            r(asu(2, 0)),
            // bytes 303567 * 512 = 155426304 ..= 155429887: pages 37945 and 37946
            w(37945),
            w(37946),
        ],
    );
    check(
        Format::Spc,
        text,
        512,
        &[
            r(8),
            r(9),
            r(10),
            r(11),
            r(12),
            r(13),
            r(14),
            r(15),
            w(asu(1, 7)),
            w(asu(1, 8)),
            r(asu(2, 0)),
            w(303567),
            w(303568),
            w(303569),
            w(303570),
            w(303571),
            w(303572),
            w(303573),
        ],
    );
}

#[test]
fn lcs_csv() {
    let text = "version,time,op,size,lbn\n\
                1,5633898,2a,512,9\n\
                1,5633899,28,6656,8\n\
                1,5633900,0x12,0,0\n\
                1,5633901,0xAA,8192,16\n\
                1,5633902,88,0,24\n\
                1,5633903,0a,512,0\n\
                1,5633904,08,1,7\n\
                1,5633905,a8,513,7\n\
                1,5633906,8a,1,1\n\
                1,5633907,35,0,0\n";
    check(
        Format::LcsCsv,
        text,
        4096,
        &[
            w(1),
            r(1),
            r(2),
            w(2),
            w(3),
            r(3),
            w(0),
            r(0),
            r(0),
            r(1),
            w(0),
        ],
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "lcs.csv", text.as_bytes());
    let mut reader = TraceReader::open(&path, None, 4096).expect("open");
    let n = reader.by_ref().count();
    assert_eq!(n, 11);
    assert_eq!(reader.skipped(), 2, "opcodes 0x12 and 0x35 are skipped");
    assert_eq!(reader.line(), 11);
}

#[test]
fn disksim() {
    let dev = |d: u64, p: u64| (d << 40) | p;
    let text = "938513000 4 16 16 0\n938828000 3 7 2 1\n0.000000\t0 0 0 3\n";
    check(
        Format::DiskSim,
        text,
        4096,
        &[w(dev(4, 2)), w(dev(4, 3)), r(dev(3, 0)), r(dev(3, 1)), r(0)],
    );
    check(
        Format::DiskSim,
        text,
        8192,
        &[w(dev(4, 1)), r(dev(3, 0)), r(0)],
    );
}

#[test]
fn arc() {
    let text = "1 1 0 0\n10 3 0 0\n5 0 0 0\n7 1 0 0\n";
    check(
        Format::ArcLis,
        text,
        4096,
        &[r(1), r(10), r(11), r(12), r(7)],
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "t.lis", text.as_bytes());
    let mut reader = TraceReader::open(&path, None, 4096).expect("open");
    assert_eq!(reader.by_ref().count(), 5);
    assert_eq!(reader.skipped(), 1);
}

#[test]
fn batches_split_requests_and_continue() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "t.lis", b"100 5 0 0\n200 2 0 0\n");
    let mut reader = TraceReader::open(&path, None, 4096).expect("open");
    let mut out = Vec::new();
    let mut sizes = Vec::new();
    loop {
        let n = reader.next_batch(&mut out, 3).expect("batch");
        if n == 0 {
            break;
        }
        sizes.push(n);
    }
    assert_eq!(sizes, [3, 3, 1]);
    assert_eq!(
        out,
        [r(100), r(101), r(102), r(103), r(104), r(200), r(201)]
    );
    assert_eq!(reader.next_batch(&mut out, 3).expect("end"), 0);
    assert_eq!(reader.next_batch(&mut out, 0).expect("max 0"), 0);
}

#[test]
fn error_after_some_refs_comes_with_the_next_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "trace.csv", b"op,page\nR,1\nX,2\nW,3\n");
    let mut reader = TraceReader::open(&path, None, 4096).expect("open");
    let mut out = Vec::new();
    assert_eq!(reader.next_batch(&mut out, 100).expect("first"), 1);
    let e = reader.next_batch(&mut out, 100).expect_err("bad line");
    assert_eq!(e.line(), Some(3));
    assert!(
        e.to_string()
            .ends_with("trace.csv line 3: expected op R or W, found 'X'"),
        "{e}"
    );
    // The bad line is consumed; reading goes on.
    assert_eq!(reader.next_batch(&mut out, 100).expect("rest"), 1);
    assert_eq!(out, [r(1), w(3)]);
    assert_eq!(reader.next_batch(&mut out, 100).expect("end"), 0);
}

#[test]
fn lines_across_buffer_refills() {
    // More than one buffer of lines of varying lengths, compressed.
    let mut text = String::from("op,page\n");
    let mut expect = Vec::new();
    let mut i: u64 = 0;
    while text.len() < 3 * flashbuf_trace::BUFFER_BYTES + 12345 {
        let page = i * i % 1_000_003 * 977;
        let op = if i.is_multiple_of(5) { "W" } else { "R" };
        text.push_str(&format!("{op},{page}\n"));
        if i.is_multiple_of(1000) {
            text.push_str("# checkpoint\n\n");
        }
        expect.push(if i.is_multiple_of(5) {
            w(page)
        } else {
            r(page)
        });
        i += 1;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes) in [
        ("a.csv", text.as_bytes().to_vec()),
        ("a.csv.zst", zst(text.as_bytes())),
    ] {
        let path = write(dir.path(), name, &bytes);
        let mut reader = TraceReader::open(&path, None, 4096).expect("open");
        let mut out = Vec::new();
        while reader.next_batch(&mut out, 7777).expect("batch") > 0 {}
        assert_eq!(out.len(), expect.len());
        assert!(out == expect);
        assert_eq!(reader.line(), text.lines().count() as u64);
    }
}

#[test]
fn reader_can_move_to_another_thread() {
    fn is_send<T: Send>() {}
    is_send::<TraceReader>();
    is_send::<TraceError>();
}

#[test]
fn format_names() {
    for f in Format::ALL {
        assert_eq!(f.to_string().parse::<Format>(), Ok(f));
        assert_eq!(Format::parse_arg(f.name()), Ok(Some(f)));
    }
    assert_eq!(Format::parse_arg("auto"), Ok(None));
    assert_eq!("LCS-CSV".parse::<Format>(), Ok(Format::LcsCsv));
    let e = "blk".parse::<Format>().expect_err("unknown");
    assert!(e.to_string().contains(
        "valid formats: auto, pagetrace, msr, spc, lcs-csv, disksim, arc, \
                   oracle-general, blkparse, blkparse-d, pagebin"
    ));
    assert_eq!(Format::ALL.len(), 10);
    for (alias, f) in [
        ("oracleGeneral", Format::OracleGeneral),
        ("bin", Format::PageBin),
        (
            "BLKPARSE-Q",
            Format::Blkparse(flashbuf_trace::BlkAction::Queue),
        ),
        (
            "blktrace",
            Format::Blkparse(flashbuf_trace::BlkAction::Queue),
        ),
    ] {
        assert_eq!(alias.parse::<Format>(), Ok(f), "{alias}");
    }
}

// ---- bad input ----

fn first_error(name: &str, bytes: &[u8], format: Option<Format>) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), name, bytes);
    let e = read_all(&path, format, 4096).expect_err("must fail");
    let msg = e.to_string();
    assert!(msg.contains(name), "message names the file: {msg}");
    msg
}

#[test]
fn bad_pagetrace_lines() {
    let cases: [(&[u8], &str); 8] = [
        (b"op,page\nR,1\nX,5\n", "trace.csv line 3: expected op R or W, found 'X'"),
        (b"op,page\nR,1\nRead,5\n", "trace.csv line 3: expected op R or W, found 'Read'"),
        (b"op,page\nR,12a\n", "trace.csv line 2: expected a page number, found '12a'"),
        (b"op,page\nR,1\nW,1,2\n", "trace.csv line 3: expected 2 comma-separated fields (op,page), found 3"),
        (b"op,page\nR\n", "trace.csv line 2: expected 2 comma-separated fields (op,page), found 1"),
        (b"op,page\nR,1\nW,", "trace.csv line 3: expected a page number, found '' (last line has no line break: is the file truncated?)"),
        (b"op,page\nR,\xff\n", "trace.csv line 2: expected a page number, found '\\xff'"),
        (b"op,page\nW,99999999999999999999\n", "trace.csv line 2: a page number '99999999999999999999' is too large"),
    ];
    for (bytes, want) in cases {
        let msg = first_error("trace.csv", bytes, None);
        assert!(msg.ends_with(want), "got {msg:?}, want {want:?}");
    }
    // Invalid UTF-8 in the op field, with the format given.
    let msg = first_error("trace.csv", b"R,1\n\xc3(,2\n", Some(Format::PageTrace));
    assert!(
        msg.ends_with("trace.csv line 2: expected op R or W, found '\\xc3('"),
        "{msg}"
    );
}

#[test]
fn bad_lines_of_other_formats() {
    let cases: [(&str, &[u8], &str); 12] = [
        ("t.msr", b"1,hm,0,Read,0,8192,0\n2,hm,0,Trim,0,8192,0\n", "line 2: expected type Read or Write, found 'Trim'"),
        ("t.msr", b"1,hm,0,Read,0,8192,0\n2,hm,0,Read,0,8192\n", "line 2: expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found 6"),
        ("t.msr", b"1,hm,0,Read,0,8192,0\n2,h\xffm,0,Read,0,8192,0\n", "line 2: hostname 'h\\xffm' is not valid UTF-8"),
        ("t.msr", b"1,hm,0,Read,0,8192,0\n2,hm,0,Write,x1,8192,0\n", "line 2: expected a byte offset, found 'x1'"),
        ("t.spc", b"0,8,4096,r,0.0\n0,8,4096,q,0.0\n", "line 2: expected opcode r or w, found 'q'"),
        ("t.spc", b"0,8,4096,r,0.0\n0,8,4096,r,0.0,extra\n", "line 2: expected 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found 6"),
        ("t.csv", b"version,time,op,size,lbn\n1,5,2a,512,9\n1,5,zz,512,9\n", "line 3: expected a SCSI opcode in hex (e.g. 28 or 0x2a), found 'zz'"),
        ("t.csv", b"version,time,op,size,lbn\n1,5,2a,512,9\n1,5,2a,512\n", "line 3: expected 5 comma-separated fields (version,time,op,size,lbn), found 4"),
        ("t.trace", b"1 2 3 4 0\n1 2 3 4 0 9\n", "line 2: expected 5 whitespace-separated fields (time device sector sectors flags), found 6"),
        ("t.trace", b"1 2 3 4 0\n1 2 3 4 w\n", "line 2: expected flags, found 'w'"),
        ("t.lis", b"1 1 0 0\n1 1 0\n", "line 2: expected 4 whitespace-separated fields (first_page page_count _ _), found 3"),
        ("t.lis", b"1 1 0 0\n1 99999999 0 0\n", "line 2: page count 99999999 is more than the limit of 16777216"),
    ];
    for (name, bytes, want) in cases {
        let msg = first_error(name, bytes, None);
        assert!(
            msg.ends_with(&format!("{name} {want}")),
            "got {msg:?}, want {want:?}"
        );
    }
}

#[test]
fn truncated_compressed_streams_are_errors() {
    let mut text = String::from("op,page\n");
    for i in 0..200_000u64 {
        text.push_str(&format!("R,{}\n", i * 7919 % 100_003));
    }
    for (name, full) in [
        ("cut.pagetrace.csv.zst", zst(text.as_bytes())),
        ("cut.pagetrace.csv.gz", gz(text.as_bytes())),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(dir.path(), name, &full[..full.len() / 2]);
        let mut reader = TraceReader::open(&path, None, 4096).expect("open");
        let mut out = Vec::new();
        let err = loop {
            match reader.next_batch(&mut out, 65536) {
                Ok(0) => panic!(
                    "{name}: truncated stream read as a clean end after {} refs",
                    out.len()
                ),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert!(
            matches!(err, TraceError::Decompress { .. }),
            "{name}: {err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(name) && msg.contains("stream is truncated or corrupt (after line "),
            "{msg}"
        );
        assert!(out.len() < 200_000);
        // The error is final.
        assert_eq!(reader.next_batch(&mut out, 10).expect("end"), 0);
    }
    // A stream cut inside the magic bytes' frame header fails when opened or read.
    let dir = tempfile::tempdir().expect("tempdir");
    let full = zst(text.as_bytes());
    let path = write(dir.path(), "tiny.zst", &full[..6]);
    let res = TraceReader::open(&path, Some(Format::PageTrace), 4096)
        .and_then(|r| r.collect::<Result<Vec<_>, _>>());
    let msg = res.expect_err("must fail").to_string();
    assert!(msg.contains("tiny.zst"), "{msg}");
}

#[test]
fn unknown_format_names_file_and_first_line() {
    let msg = first_error("mystery.txt", b"\n# hi\nhello world\nR,1\n", None);
    assert!(msg.contains("mystery.txt: unknown trace format"), "{msg}");
    assert!(
        msg.contains("the first line 'hello world' matches none of"),
        "{msg}"
    );
    let msg = first_error("empty.txt", b"", None);
    assert!(msg.contains("empty"), "{msg}");
    let msg = first_error("four.txt", b"1,2,3,4\n", None);
    assert!(msg.contains("'1,2,3,4'"), "{msg}");
    // The name decides when the content cannot: an empty page trace is just empty.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "empty.pagetrace.csv", b"op,page\n");
    let reader = TraceReader::open(&path, None, 4096).expect("open");
    assert_eq!(reader.format(), Format::PageTrace);
    assert_eq!(reader.count(), 0);
}

#[test]
fn open_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.csv");
    let e = TraceReader::open(&missing, None, 4096).expect_err("missing");
    assert!(matches!(e, TraceError::Io { .. }));
    assert!(e.to_string().contains("missing.csv"), "{e}");
    let path = write(dir.path(), "a.csv", b"R,1\n");
    let e = TraceReader::open(&path, None, 0).expect_err("page size 0");
    assert!(matches!(e, TraceError::BadPageSize { .. }), "{e}");
}

#[test]
fn line_too_long_is_an_error() {
    let mut bytes = b"op,page\nR,1\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'7', flashbuf_trace::BUFFER_BYTES + 10));
    bytes.push(b'\n');
    let msg = first_error("long.csv", &bytes, None);
    assert!(
        msg.contains("long.csv line 3: line longer than 1024 KiB"),
        "{msg}"
    );
}
