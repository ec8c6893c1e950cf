//! `--dirty-bytes empirical:FILE`: the ranges of real overwrites, drawn at random.
//!
//! The sample is every overwrite (`new` = 0) of the range I/O CSV `FILE`, up to
//! [`SAMPLE_MAX_WRITES`], kept as one flat list of runs and one index per write (8 bytes
//! per run, 4 per write). Each draw picks a write uniformly with the run's seed, so the
//! changed-byte distribution of the replay is the source's (its mean is reported).

use crate::LabError;
use flashbuf_core::rng::SplitMix64;
use flashbuf_trace::{Op, RangeStream};
use std::path::Path;

/// Overwrites kept from the source at most (the TPC-C range trace holds about 1 M).
pub const SAMPLE_MAX_WRITES: usize = 2_000_000;

/// The overwrites of a range I/O CSV and a seeded generator.
#[derive(Debug)]
pub struct Empirical {
    runs: Vec<(u32, u32)>,
    /// `starts[i]..starts[i + 1]` are write `i`'s runs.
    starts: Vec<u32>,
    rng: SplitMix64,
}

impl Empirical {
    /// Loads the overwrites of `path`; refuses a file without any.
    pub fn load(path: &Path, seed: u64) -> Result<Self, LabError> {
        let mut s = RangeStream::open(path)?;
        let mut runs = Vec::new();
        let mut starts = vec![0u32];
        while let Some(r) = s.next_record()? {
            if r.op == Op::Write && r.new == 0 && !r.ranges.is_empty() {
                runs.extend_from_slice(r.ranges);
                let end = u32::try_from(runs.len()).map_err(|_| {
                    LabError::Usage(format!("{}: too many ranges for a sample", path.display()))
                })?;
                starts.push(end);
                if starts.len() > SAMPLE_MAX_WRITES {
                    break;
                }
            }
        }
        if starts.len() == 1 {
            return Err(LabError::Usage(format!(
                "--dirty-bytes empirical:{}: the file holds no overwrite with ranges (is it a range I/O CSV?)",
                path.display()
            )));
        }
        Ok(Self {
            runs,
            starts,
            rng: SplitMix64::new(seed ^ 0xD1B5_4A32_D192_ED03),
        })
    }

    /// Overwrites in the sample.
    pub fn writes(&self) -> usize {
        self.starts.len() - 1
    }

    /// The runs of one overwrite drawn at random.
    pub fn draw(&mut self) -> &[(u32, u32)] {
        let i = self.rng.below(self.writes() as u64) as usize;
        &self.runs[self.starts[i] as usize..self.starts[i + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_only_overwrites_and_refuses_none() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.csv");
        std::fs::write(
            &p,
            "op,page,ranges,new\nR,1,,\nW,1,0:8192,1\nW,1,40:8;90:2,0\n",
        )
        .unwrap();
        let mut e = Empirical::load(&p, 7).unwrap();
        assert_eq!(e.writes(), 1);
        for _ in 0..10 {
            assert_eq!(e.draw(), &[(40, 8), (90, 2)]);
        }
        std::fs::write(&p, "op,page,ranges,new\nR,1,,\nW,1,0:8192,1\n").unwrap();
        let err = Empirical::load(&p, 7).unwrap_err().to_string();
        assert!(err.contains("no overwrite"), "{err}");
    }
}
