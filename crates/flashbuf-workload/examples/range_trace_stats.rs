//! Dirty-range statistics of a range I/O trace (`op,page,ranges,new`, see
//! `../shared/traces/README.md`), computed with the same code as the engine's
//! ([`flashbuf_workload::dirty_stats`]), for comparison:
//!
//! ```text
//! zstd -dc ../shared/traces/tpcc-pg15-w4.iotrace-ranges.csv.zst | \
//!     cargo run --release -p flashbuf-workload --example range_trace_stats
//! ```
//!
//! Prints, over overwrites (`new = 0`): the exact runs as logged, and the same runs as the
//! pool would record them ([`DirtyRanges`]: at most four ranges, the closest neighbours
//! merged), each as JSON.

use flashbuf_core::DirtyRanges;
use flashbuf_workload::dirty_stats::DirtyHistogram;
use std::io::BufRead;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut exact, mut capped) = (DirtyHistogram::default(), DirtyHistogram::default());
    let (mut reads, mut first_writes) = (0u64, 0u64);
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line?;
        if n == 0 && line.starts_with("op,") {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        match (f.first(), f.get(3)) {
            (Some(&"R"), _) => reads += 1,
            (Some(&"W"), Some(&"0")) => {
                let (mut bytes, mut runs, mut d) = (0usize, 0usize, DirtyRanges::new());
                for r in f[2].split(';').filter(|s| !s.is_empty()) {
                    let (o, l) = r
                        .split_once(':')
                        .ok_or(format!("line {}: bad range {r}", n + 1))?;
                    let (o, l): (usize, usize) = (o.parse()?, l.parse()?);
                    bytes += l;
                    runs += 1;
                    d.add(o, l);
                }
                exact.add(bytes, runs);
                capped.add(d.total_bytes(), d.count());
            }
            (Some(&"W"), Some(_)) => first_writes += 1,
            _ => return Err(format!("line {}: '{line}'", n + 1).into()),
        }
    }
    println!("reads {reads}, first writes {first_writes}");
    println!("exact:  {}", serde_json::to_string(&exact.summary())?);
    println!("capped: {}", serde_json::to_string(&capped.summary())?);
    Ok(())
}
