//! Arbitrary input never panics: every format (and auto-detection) answers with
//! references or errors, plain or behind compression magic bytes.

use flashbuf_trace::{Format, TraceReader};
use proptest::prelude::*;
use std::io::Cursor;

/// Reads everything it can: goes on after parse errors, stops at the end, after a final
/// error, or after a bounded amount of work (a corrupt line may ask for 2^24 pages).
fn drain(bytes: Vec<u8>, format: Option<Format>, page_size: u32) {
    let Ok(mut reader) =
        TraceReader::from_reader(Cursor::new(bytes), "fuzz.trace", format, page_size)
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
    ])
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
