//! Measures how fast a trace is read: opening, reading the file, decompression and parsing
//! (or record decoding), batch API, one thread.
//!
//! `cargo run --release -p flashbuf-trace --example read_speed -- FILE [FORMAT|auto] [PAGE_SIZE] [ROUNDS]`
//!
//! Prints, per round, the references, writes, wall time and references per second; the
//! best round last, with the file's size in bytes per reference. To compare the formats of
//! one trace, convert it first (`flashbuf convert --trace T --to bin --out T.pagebin` and
//! `--out T.pagebin.zst`) and run this on each file; run it twice and take the second
//! figures (the first run pulls the file into the page cache).

use flashbuf_trace::{Format, Op, TraceReader};
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next().map(PathBuf::from) else {
        eprintln!("usage: read_speed FILE [FORMAT|auto] [PAGE_SIZE] [ROUNDS]");
        std::process::exit(2);
    };
    let format = match args.next() {
        Some(f) => Format::parse_arg(&f)?,
        None => None,
    };
    let page_size: u32 = args.next().map_or(Ok(4096), |s| s.parse())?;
    let rounds: u32 = args.next().map_or(Ok(5), |s| s.parse())?;

    let mut best = f64::MAX;
    let mut refs = 0u64;
    for round in 1..=rounds {
        let start = Instant::now();
        let mut reader = TraceReader::open(&path, format, page_size)?;
        let mut batch = Vec::with_capacity(65536);
        let (mut n, mut writes) = (0u64, 0u64);
        loop {
            batch.clear();
            let got = reader.next_batch(&mut batch, 65536)?;
            if got == 0 {
                break;
            }
            n += got as u64;
            writes += batch.iter().filter(|r| r.op == Op::Write).count() as u64;
        }
        let secs = start.elapsed().as_secs_f64();
        best = best.min(secs);
        refs = n;
        println!(
            "round {round}: {} ({}, {}): {n} refs, {writes} writes, {:.1} ms, {:.1} M refs/s",
            path.display(),
            reader.format(),
            reader.compression().name(),
            secs * 1e3,
            n as f64 / secs / 1e6
        );
    }
    let file_bytes = std::fs::metadata(&path)?.len();
    println!(
        "best: {refs} refs in {:.1} ms = {:.1} M refs/s; file {file_bytes} bytes = {:.2} bytes/ref",
        best * 1e3,
        refs as f64 / best / 1e6,
        file_bytes as f64 / refs.max(1) as f64
    );
    Ok(())
}
