//! The binary formats (libCacheSim's oracleGeneral, flashbuf's pagebin) and blkparse text:
//! exact references on small inputs, compressed and plain, given and detected; every kind
//! of bad input with its message; batches and records across buffer refills; and the round
//! trip of every bundled sample through the page-reference CSV and pagebin.

use flashbuf_trace::{
    BlkAction, Compression, Format, PageBinWriter, PageRef, TraceError, TraceReader, BUFFER_BYTES,
};
use std::io::Cursor;
use std::path::{Path, PathBuf};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/traces/");

fn og(time: u32, id: u64, size: u32, next: i64) -> Vec<u8> {
    let mut r = Vec::with_capacity(24);
    r.extend_from_slice(&time.to_le_bytes());
    r.extend_from_slice(&id.to_le_bytes());
    r.extend_from_slice(&size.to_le_bytes());
    r.extend_from_slice(&next.to_le_bytes());
    r
}

fn pagebin(refs: &[PageRef]) -> Vec<u8> {
    let mut w = PageBinWriter::new(Vec::new()).expect("header");
    w.write_refs(refs).expect("write");
    w.finish().expect("finish")
}

fn zst(b: &[u8]) -> Vec<u8> {
    zstd::encode_all(b, 3).expect("zstd")
}

fn reader(bytes: Vec<u8>, name: &str, format: Option<Format>) -> TraceReader {
    TraceReader::from_reader(Cursor::new(bytes), name, format, 4096).expect("open")
}

fn read_all(bytes: Vec<u8>, name: &str, format: Option<Format>) -> Vec<PageRef> {
    reader(bytes, name, format)
        .collect::<Result<_, _>>()
        .expect("read")
}

/// Everything the reader yields, errors as their messages, with batches of `batch`.
fn outcome(mut r: TraceReader, batch: usize) -> Vec<Result<PageRef, String>> {
    let mut got = Vec::new();
    let mut out = Vec::new();
    for _ in 0..1_000_000 {
        out.clear();
        match r.next_batch(&mut out, batch) {
            Ok(0) => return got,
            Ok(_) => got.extend(out.iter().copied().map(Ok)),
            Err(e) => got.push(Err(e.to_string())),
        }
    }
    panic!("no end");
}

const fn r(page: u64) -> PageRef {
    PageRef::read(page)
}
const fn w(page: u64) -> PageRef {
    PageRef::write(page)
}

// ---- oracleGeneral ----

#[test]
fn oracle_general_records_plain_and_zstd() {
    let mut b = Vec::new();
    b.extend(og(5_633_898, 42_932_745, 512, -1));
    b.extend(og(5_633_898, 7, 4096, 3));
    b.extend(og(5_633_899, 9, 0, -1)); // size 0: skipped, as libCacheSim does
    b.extend(og(5_633_899, u64::MAX, 1, i64::MAX));
    b.extend(og(5_633_900, 7, 65536, -1));
    let want = [r(42_932_745), r(7), r(u64::MAX), r(7)];
    for (bytes, compression) in [(b.clone(), Compression::None), (zst(&b), Compression::Zstd)] {
        for (name, given) in [
            ("w01.oracleGeneral", None),
            ("cluster52.oracleGeneral.sample10.zst", None),
            ("anything.bin", Some(Format::OracleGeneral)),
        ] {
            let mut rd = reader(bytes.clone(), name, given);
            assert_eq!(rd.format(), Format::OracleGeneral, "{name}");
            assert_eq!(rd.compression(), compression);
            let got: Vec<PageRef> = rd.by_ref().collect::<Result<_, _>>().expect("read");
            assert_eq!(got, want, "{name}");
            assert_eq!(rd.skipped(), 1);
            assert_eq!(rd.line(), 5, "records read");
        }
    }
    // The page size plays no part.
    let at_1 = TraceReader::from_reader(Cursor::new(b), "t.oracleGeneral", None, 1)
        .expect("open")
        .collect::<Result<Vec<_>, _>>()
        .expect("read");
    assert_eq!(at_1, want);
}

#[test]
fn oracle_general_partial_last_record_names_file_and_record() {
    let mut b = Vec::new();
    for id in 0..3 {
        b.extend(og(1, id, 512, -1));
    }
    b.extend(&og(1, 99, 512, -1)[..5]);
    for bytes in [b.clone(), zst(&b)] {
        let got = outcome(reader(bytes, "t.oracleGeneral", None), 2);
        assert_eq!(
            got,
            [
                Ok(r(0)),
                Ok(r(1)),
                Ok(r(2)),
                Err(
                    "t.oracleGeneral record 4: incomplete record: the trace ends 5 bytes into \
                     this 24-byte record (is the file truncated?)"
                        .to_string()
                )
            ]
        );
    }
    let e = reader(b, "t.oracleGeneral", None)
        .find_map(Result::err)
        .expect("an error");
    assert_eq!(e.record(), Some(4));
    assert!(matches!(e, TraceError::Record { .. }));
}

#[test]
fn oracle_general_bad_record_is_consumed_and_reading_goes_on() {
    let mut b = og(1, 1, 512, -1);
    b.extend(og(1, 2, 512, -7));
    b.extend(og(1, 3, 512, 10));
    let got = outcome(reader(b, "t.oracleGeneral", None), 10);
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], Ok(r(1)));
    let e = got[1].as_ref().expect_err("record 2");
    assert!(
        e.starts_with("t.oracleGeneral record 2: next_access_vtime -7 is below -1"),
        "{e}"
    );
    assert_eq!(got[2], Ok(r(3)));
}

#[test]
fn binary_without_a_name_is_not_guessed() {
    let b = og(1, 1, 512, -1);
    let e = TraceReader::from_reader(Cursor::new(b), "trace.bin", None, 4096).expect_err("unknown");
    let m = e.to_string();
    assert!(m.starts_with("trace.bin: unknown trace format"), "{m}");
    assert!(m.contains("--format oracle-general"), "{m}");
}

// ---- pagebin ----

#[test]
fn pagebin_round_trip_plain_and_zstd() {
    let refs = [
        r(0),
        w(7),
        r(1 << 62),
        w(flashbuf_trace::PAGEBIN_MAX_PAGE),
        r(7),
    ];
    let b = pagebin(&refs);
    assert_eq!(b.len(), 16 + 8 * refs.len());
    for (bytes, compression) in [(b.clone(), Compression::None), (zst(&b), Compression::Zstd)] {
        for (name, given) in [("t.csv", None), ("x", Some(Format::PageBin))] {
            let mut rd = reader(bytes.clone(), name, given);
            assert_eq!(rd.format(), Format::PageBin);
            assert_eq!(rd.compression(), compression);
            let got: Vec<PageRef> = rd.by_ref().collect::<Result<_, _>>().expect("read");
            assert_eq!(got, refs);
            assert_eq!(rd.line(), 5);
        }
    }
    // A header alone is an empty trace.
    assert_eq!(read_all(pagebin(&[]), "e.pagebin", None), []);
}

#[test]
fn pagebin_bad_headers() {
    let good = pagebin(&[r(1)]);
    let first_error = |bytes: Vec<u8>, format: Option<Format>| -> String {
        let mut rd = match TraceReader::from_reader(Cursor::new(bytes), "h.pagebin", format, 4096) {
            Ok(rd) => rd,
            Err(e) => return e.to_string(),
        };
        let e = rd.next().expect("an item").expect_err("an error");
        assert!(rd.next().is_none(), "a bad header is final");
        e.to_string()
    };
    let mut magic = good.clone();
    magic[3] = b'X';
    assert_eq!(
        first_error(magic, Some(Format::PageBin)),
        "h.pagebin: bad pagebin header: expected the magic bytes 89 46 42 50 41 47 45 0a, \
         found 89 46 42 58 41 47 45 0a"
    );
    let mut version = good.clone();
    version[8] = 2;
    assert_eq!(
        first_error(version, None),
        "h.pagebin: bad pagebin header: version 2 is not supported (this reader reads version 1)"
    );
    assert_eq!(
        first_error(good[..11].to_vec(), None),
        "h.pagebin: bad pagebin header: the file holds 11 bytes, fewer than the 16-byte header"
    );
    assert_eq!(
        first_error(Vec::new(), None),
        "h.pagebin: bad pagebin header: the file holds 0 bytes, fewer than the 16-byte header"
    );
    // Text given as pagebin.
    assert!(
        first_error(b"op,page\nR,1\nW,2\nR,3\n".to_vec(), Some(Format::PageBin))
            .contains("expected the magic bytes")
    );
}

#[test]
fn pagebin_error_after_some_refs_comes_with_the_next_call() {
    let refs: Vec<PageRef> = (0..10).map(w).collect();
    let mut b = pagebin(&refs);
    b.extend_from_slice(&[1, 2, 3]);
    let mut rd = reader(b, "cut.pagebin", None);
    let mut out = Vec::new();
    assert_eq!(rd.next_batch(&mut out, 100).expect("refs first"), 10);
    assert_eq!(out, refs);
    let e = rd.next_batch(&mut out, 100).expect_err("then the error");
    assert_eq!(
        e.to_string(),
        "cut.pagebin record 11: incomplete record: the trace ends 3 bytes into this 8-byte \
         record (is the file truncated?)"
    );
    assert_eq!(rd.next_batch(&mut out, 100).expect("end"), 0);
}

#[test]
fn truncated_zstd_pagebin_is_a_decompress_error_after_a_record() {
    let refs: Vec<PageRef> = (0..200_000u64)
        .map(|i| PageRef::read(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20))
        .collect();
    let z = zst(&pagebin(&refs));
    let cut = z[..z.len() / 2].to_vec();
    let got = outcome(reader(cut, "t.pagebin.zst", None), 4096);
    let (last, good) = got.split_last().expect("items");
    assert!(good.len() > 1000 && good.iter().all(Result::is_ok));
    let e = last.as_ref().expect_err("an error");
    assert!(
        e.contains("t.pagebin.zst: zstd stream is truncated or corrupt (after record"),
        "{e}"
    );
}

/// Records straddle the 1 MiB buffer's refills (24 does not divide 2^20), batches of
/// every size end inside runs of records: the references are the same.
#[test]
fn records_across_buffer_refills() {
    let n = (3 * BUFFER_BYTES / 24 + 17) as u64;
    let mut b = Vec::with_capacity(n as usize * 24);
    let mut want = Vec::new();
    for i in 0..n {
        let id = i.wrapping_mul(2_654_435_761) % 100_000;
        let size = if i % 1000 == 999 { 0 } else { 512 };
        b.extend(og(i as u32, id, size, -1));
        if size > 0 {
            want.push(r(id));
        }
    }
    let want_bin: Vec<PageRef> = want
        .iter()
        .enumerate()
        .map(|(i, x)| if i % 3 == 0 { w(x.page.0) } else { *x })
        .collect();
    let bin = pagebin(&want_bin);
    for batch in [1, 7, 4096, 1 << 20] {
        let got = outcome(reader(b.clone(), "big.oracleGeneral", None), batch);
        assert_eq!(
            got,
            want.iter().copied().map(Ok).collect::<Vec<_>>(),
            "{batch}"
        );
        let got = outcome(reader(bin.clone(), "big.pagebin", None), batch);
        assert_eq!(
            got,
            want_bin.iter().copied().map(Ok).collect::<Vec<_>>(),
            "{batch}"
        );
    }
    assert_eq!(
        read_all(zst(&b), "big.oracleGeneral.zst", None).len(),
        want.len()
    );
}

// ---- blkparse ----

const BLKPARSE: &str = "\
Input file sda.blktrace.0 added
  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]
  8,0    3        2     0.000009447   697  G  WS 3417048 + 8 [kjournald]
  8,0    3        3     0.000011319   697  P   N [kjournald]
  8,0    3        4     0.000013546   697  Q  WS 3417056 + 8 [kjournald]
  8,0    3        5     0.000014001   697  M  WS 3417056 + 8 [kjournald]
  8,0    3        0     0.000025098     0  m   N cfq697 insert_request
  8,0    3        6     0.000038543   697  U   N [kjournald] 1
  8,0    3        7     0.000047689   697  D  WS 3417048 + 16 [kjournald]
  8,0    1        1     0.001146016     0  C  WS 3417048 + 16 [0]
  8,0    1        2     0.002000000  1200  Q  RA 0 + 24 [cat]
  8,0    1        3     0.002000001  1200  Q FWS [(null)]
  8,0    1        4     0.002000002  1200  Q   D 4096 + 4096 [fstrim]
  8,0    1        5     0.002000003  1200  D  RA 0 + 24 [cat]
  8,0    1        6     0.002000004  1200  D FWS [(null)]
CPU1 (8,0):
 Reads Queued:           1,       12KiB\t Writes Queued:           2,        8KiB
 IO unplugs:             1        \t Timer unplugs:           0

Throughput (R/W): 12KiB/s / 8KiB/s
Events (8,0): 14 entries
Skips: 0 forward (0 -   0.0%)
";

const SDA: u64 = (8 << 12) << 40;

#[test]
fn blkparse_queue_and_issue_events() {
    let page = |byte: u64| SDA | (byte / 4096);
    let q_want = [
        w(page(3_417_048 * 512)),
        w(page(3_417_056 * 512)),
        r(page(0)),
        r(page(4096)),
        r(page(8192)),
    ];
    let d_want = [
        w(page(3_417_048 * 512)),
        w(page(3_417_048 * 512 + 4096)),
        r(page(0)),
        r(page(4096)),
        r(page(8192)),
    ];
    for bytes in [BLKPARSE.as_bytes().to_vec(), zst(BLKPARSE.as_bytes())] {
        let mut q = reader(bytes.clone(), "sda.txt", None);
        assert_eq!(q.format(), Format::Blkparse(BlkAction::Queue));
        let got: Vec<PageRef> = q.by_ref().collect::<Result<_, _>>().expect("read");
        assert_eq!(got, q_want);
        assert_eq!(q.skipped(), 2, "the flush and the discard");
        let mut d = reader(bytes, "sda.txt", Some(Format::Blkparse(BlkAction::Issue)));
        let got: Vec<PageRef> = d.by_ref().collect::<Result<_, _>>().expect("read");
        assert_eq!(got, d_want);
        assert_eq!(d.skipped(), 1, "the flush");
    }
    // At 512-byte pages every sector is a page.
    let at_512 =
        TraceReader::from_reader(Cursor::new(BLKPARSE.as_bytes().to_vec()), "s", None, 512)
            .expect("open")
            .collect::<Result<Vec<_>, _>>()
            .expect("read");
    assert_eq!(at_512.len(), 8 + 8 + 24);
}

#[test]
fn blkparse_malformed_lines_name_the_line_and_reading_goes_on() {
    let text = BLKPARSE
        .replace(
            "  8,0    3        4     0.000013546   697  Q  WS 3417056 + 8 [kjournald]",
            "  8,0    3        4     0.000013546   697  Q  WS 3417056 8 [kjournald]",
        )
        .replace("Skips: 0 forward", "Skipped: 0 forward");
    let got = outcome(reader(text.into_bytes(), "bad.blkparse", None), 100);
    let errors: Vec<&String> = got.iter().filter_map(|x| x.as_ref().err()).collect();
    assert_eq!(
        errors,
        [
            "bad.blkparse line 5: expected '+ count' after sector 3417056, found '8'",
            "bad.blkparse line 22: expected a blkparse event 'maj,min cpu sequence time pid \
             action RWBS ...' or a line of its summary, found 'Skipped: 0 forward (0 -   0.0%)'"
        ]
    );
    assert_eq!(got.iter().filter(|x| x.is_ok()).count(), 4);
}

// ---- every bundled sample ----

fn samples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(SAMPLES)
        .expect("samples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e != "md"))
        .collect();
    v.sort();
    v
}

fn csv(refs: &[PageRef]) -> Vec<u8> {
    let mut s = String::from("op,page\n");
    for x in refs {
        s.push_str(&format!("{},{}\n", x.op, x.page.0));
    }
    s.into_bytes()
}

/// Sample → references → page-reference CSV → references → pagebin (plain and zstd) →
/// references: all equal.
#[test]
fn every_bundled_sample_round_trips_through_csv_and_pagebin() {
    let all = samples();
    assert!(all.len() >= 9, "{all:?}");
    for path in all {
        let name = path.display().to_string();
        for ps in [512, 4096, 8192] {
            let refs: Vec<PageRef> = TraceReader::open(&path, None, ps)
                .expect("open")
                .collect::<Result<_, _>>()
                .expect("read");
            assert!(refs.len() >= 500, "{name}");
            let via_csv = read_all(csv(&refs), "t.csv", None);
            assert_eq!(via_csv, refs, "{name} via CSV");
            let bin = pagebin(&via_csv);
            assert_eq!(read_all(bin.clone(), "t.pagebin", None), refs, "{name}");
            assert_eq!(read_all(zst(&bin), "t.pagebin.zst", None), refs, "{name}");
        }
    }
}

#[test]
fn bundled_binary_samples_are_detected() {
    for (name, format) in [
        (
            "cloudPhysicsIO-sample.oracleGeneral.bin.zst",
            Format::OracleGeneral,
        ),
        ("pgbench-sample.pagebin.zst", Format::PageBin),
        (
            "pgbench-sample.blkparse.txt.zst",
            Format::Blkparse(BlkAction::Queue),
        ),
    ] {
        let rd = TraceReader::open(&Path::new(SAMPLES).join(name), None, 4096).expect("open");
        assert_eq!(rd.format(), format, "{name}");
        assert_eq!(rd.compression(), Compression::Zstd);
    }
}
