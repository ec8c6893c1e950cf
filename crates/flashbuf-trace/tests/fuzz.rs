//! Arbitrary input never panics: every format (and auto-detection) answers with
//! references or errors, plain or behind compression magic bytes.

use flashbuf_trace::{Format, TraceReader};
use proptest::prelude::*;
use std::io::Cursor;

/// Reads everything it can: goes on after parse errors, stops at the end, after a final
/// error, or after a bounded amount of work (a corrupt line may ask for 2^24 pages).
fn drain(bytes: Vec<u8>, format: Option<Format>, page_size: u32) {
    drain_named(bytes, format, page_size, "fuzz.trace")
}

/// [`drain`] of a file called `name` (which must contain `fuzz.trace`).
fn drain_named(bytes: Vec<u8>, format: Option<Format>, page_size: u32, name: &str) {
    let Ok(mut reader) = TraceReader::from_reader(Cursor::new(bytes), name, format, page_size)
    else {
        return;
    };
    let mut out = Vec::new();
    for _ in 0..10_000 {
        out.clear();
        match reader.next_batch(&mut out, 4096) {
            Ok(0) => return,
            Ok(n) => assert_eq!(n, out.len()),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("fuzz.trace"), "{msg}");
            }
        }
    }
    // Binary inputs here hold at most a few thousand records (each a reference or an
    // error), so reaching this point means the reader does not make progress.
    assert!(
        !reader.format().is_binary(),
        "binary input did not end after 10,000 batches"
    );
}

fn formats() -> impl Strategy<Value = Option<Format>> {
    prop_oneof![
        Just(None),
        proptest::sample::select(Format::ALL.to_vec()).prop_map(Some)
    ]
}

/// Text that looks like trace lines: the bytes the parsers care about, plus a few others.
fn tracey() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            8 => proptest::sample::select(b"0123456789".to_vec()),
            3 => proptest::sample::select(b",,  \n\n\t#\rRWrwx.e-".to_vec()),
            1 => proptest::sample::select(b"ReadWriteafAF\xff\xc3".to_vec()),
            1 => any::<u8>(),
        ],
        0..600,
    )
}

fn prefixes() -> impl Strategy<Value = Vec<u8>> {
    proptest::sample::select(vec![
        b"".to_vec(),
        b"op,page\n".to_vec(),
        b"version,time,op,size,lbn\n".to_vec(),
        b"1,h,0,Read,0,8192,0\n".to_vec(),
        b"0,8,4096,r,0.0\n".to_vec(),
        b"1,5,2a,512,9\n".to_vec(),
        b"938513000 4 16 16 0\n".to_vec(),
        b"1 1 0 0\n".to_vec(),
        vec![0x28, 0xb5, 0x2f, 0xfd],
        vec![0x1f, 0x8b],
        pagebin_header(),
        b"  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]\n".to_vec(),
    ])
}

fn pagebin_header() -> Vec<u8> {
    let mut h = flashbuf_trace::PAGEBIN_MAGIC.to_vec();
    h.extend_from_slice(&flashbuf_trace::PAGEBIN_VERSION.to_le_bytes());
    h.extend_from_slice(&[0; 4]);
    h
}

/// Random bytes as a binary trace: a valid pagebin header (perhaps damaged) or none, and
/// a body of any length (rarely a whole number of records).
fn binary_input() -> impl Strategy<Value = (Vec<u8>, &'static str)> {
    (
        proptest::collection::vec(any::<u8>(), 0..4000),
        0u8..4,
        any::<usize>(),
        any::<u8>(),
    )
        .prop_map(|(body, kind, at, byte)| {
            let mut b = Vec::new();
            let name = match kind {
                0 => "fuzz.trace.oracleGeneral.bin",
                1 => "fuzz.trace",
                _ => {
                    b = pagebin_header();
                    if kind == 3 {
                        let n = b.len();
                        b[at % n] ^= byte | 1;
                    }
                    "fuzz.trace.pagebin"
                }
            };
            b.extend(body);
            (b, name)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        format in formats(),
        page_size in prop_oneof![Just(1u32), Just(512), Just(4096), Just(8192), 1u32..100_000],
    ) {
        drain(bytes, format, page_size);
    }

    #[test]
    fn tracey_text_never_panics(
        prefix in prefixes(),
        body in tracey(),
        format in formats(),
        page_size in prop_oneof![Just(1u32), Just(4096), 1u32..u32::MAX],
    ) {
        let mut bytes = prefix;
        bytes.extend(body);
        drain(bytes, format, page_size);
    }

    /// Binary traces (detected, and forced to each format), plain and zstd-compressed,
    /// whole and cut anywhere: no panic, and every reader reaches its end (`drain`).
    #[test]
    fn binary_inputs_never_panic_nor_hang(
        (bytes, name) in binary_input(),
        format in formats(),
        cut in any::<usize>(),
    ) {
        let z = zstd::encode_all(&bytes[..], 1).expect("zstd");
        for data in [bytes.clone(), bytes[..cut % (bytes.len() + 1)].to_vec(), z.clone(), z[..cut % (z.len() + 1)].to_vec()] {
            drain_named(data.clone(), format, 4096, name);
            drain_named(data, Some(Format::OracleGeneral), 4096, name);
        }
    }

    #[test]
    fn compressed_garbage_never_panics(body in tracey(), format in formats(), gzip in any::<bool>()) {
        let compressed = if gzip {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&body).expect("gzip");
            e.finish().expect("gzip")
        } else {
            zstd::encode_all(&body[..], 1).expect("zstd")
        };
        // Whole, and cut anywhere.
        let cut = body.len() % (compressed.len() + 1);
        drain(compressed.clone(), format, 4096);
        drain(compressed[..cut].to_vec(), format, 4096);
    }
}

/// One line of a generated page trace, and what the reader must make of it.
#[derive(Clone, Debug)]
enum Line {
    Valid { write: bool, page: u64, style: u8 },
    Comment,
    Blank,
    Bad { page: u64, kind: u8 },
}

impl Line {
    fn text(&self) -> String {
        match *self {
            Line::Valid { write, page, style } => {
                let op = if write { "W" } else { "R" };
                match style % 4 {
                    0 | 1 => format!("{op},{page}"),
                    2 => format!("{op},{page}\r"),
                    _ => format!(" {} , {page} ", op.to_lowercase()),
                }
            }
            Line::Comment => "# note".to_string(),
            Line::Blank => String::new(),
            Line::Bad { page, kind } => match kind % 6 {
                0 => format!("X,{page}"),
                1 => format!("R,{page}x"),
                2 => format!("W,{page},1"),
                3 => "R".to_string(),
                4 => "W,".to_string(),
                _ => format!("R,{page}{page}99999999999999999999"),
            },
        }
    }
}

fn line() -> impl Strategy<Value = Line> {
    let page = prop_oneof![0u64..100, 0u64..1 << 32, any::<u64>()];
    prop_oneof![
        20 => (any::<bool>(), page.clone(), any::<u8>())
            .prop_map(|(write, page, style)| Line::Valid { write, page, style }),
        1 => Just(Line::Comment),
        1 => Just(Line::Blank),
        1 => (page, any::<u8>()).prop_map(|(page, kind)| Line::Bad { page, kind }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The reader (fast path included) agrees with a simple model on valid lines, and
    /// reports bad lines with their numbers and goes on.
    #[test]
    fn page_trace_matches_model(
        lines in proptest::collection::vec(line(), 0..300),
        final_newline in any::<bool>(),
        batch in 1usize..50,
    ) {
        let mut text = String::from("op,page\n");
        let mut expect: Vec<Result<flashbuf_trace::PageRef, u64>> = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            text.push_str(&l.text());
            if i + 1 < lines.len() || final_newline {
                text.push('\n');
            }
            let number = i as u64 + 2;
            match *l {
                Line::Valid { write, page, .. } => expect.push(Ok(if write {
                    flashbuf_trace::PageRef::write(page)
                } else {
                    flashbuf_trace::PageRef::read(page)
                })),
                Line::Comment | Line::Blank => {}
                Line::Bad { .. } => expect.push(Err(number)),
            }
        }
        let mut reader = TraceReader::from_reader(Cursor::new(text.into_bytes()), "model.csv", None, 4096)
            .expect("open");
        prop_assert_eq!(reader.format(), Format::PageTrace);
        let mut got = Vec::new();
        let mut out = Vec::new();
        loop {
            out.clear();
            match reader.next_batch(&mut out, batch) {
                Ok(0) => break,
                Ok(_) => got.extend(out.iter().copied().map(Ok)),
                Err(e) => got.push(Err(e.line().expect("a parse error"))),
            }
        }
        prop_assert_eq!(got, expect);
    }
}
