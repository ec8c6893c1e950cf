//! The two halves of a miniature simulation ([`super::mini`]) that touch the trace and
//! the replay: the one pass that keeps the sampled references, and the runs on `jobs`
//! threads.

use super::mini::MiniConfig;
use super::shards::RateFilter;
use crate::config::RunConfig;
use crate::feed::{Feed, FeedOptions, SharedTrace};
use crate::replay::run_shared;
use crate::result::RunResult;
use crate::scan::TraceScan;
use crate::LabError;
use flashbuf_trace::PageRef;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The pass over the trace: the sampled references, the whole trace when it is needed
/// and fits, and the trace's scan (given to every run, so none reads the trace again).
pub(super) struct Read {
    pub(super) sampled: SharedTrace,
    pub(super) full: Option<SharedTrace>,
    pub(super) scan: TraceScan,
}

pub(super) fn read_sampled(
    c: &MiniConfig,
    f: &RateFilter,
    opts: &FeedOptions,
) -> Result<Read, LabError> {
    let t = Instant::now();
    let mut feed = Feed::start_with(&c.trace, c.format, c.page_size as u32, opts)?;
    let ref_bytes = std::mem::size_of::<PageRef>() as u64;
    let budget_refs =
        crate::limits::available_memory_bytes().map_or(1 << 30, |a| a / 4) / ref_bytes;
    let mut full: Option<Vec<PageRef>> = (c.check_full > 0).then(Vec::new);
    let (mut sampled, mut seen) = (Vec::new(), Vec::<u64>::new());
    let (mut references, mut writes, mut sampled_pages) = (0u64, 0u64, 0u64);
    while let Some(batch) = feed.next_batch()? {
        for r in &batch {
            let page = super::dense_page_u32(r.page.0)?;
            writes += u64::from(r.op.is_write());
            if f.keeps(page) {
                sampled.push(*r);
                let (w, b) = (page as usize / 64, 1u64 << (page % 64));
                if w >= seen.len() {
                    seen.resize(w + 1, 0);
                }
                sampled_pages += u64::from(seen[w] & b == 0);
                seen[w] |= b;
            }
        }
        references += batch.len() as u64;
        if let Some(v) = &mut full {
            v.extend_from_slice(&batch);
            if v.len() as u64 > budget_refs {
                full = None; // Each full run reads the file instead.
            }
        }
        feed.recycle(batch);
    }
    let summary = feed.finish()?;
    if references == 0 {
        return Err(LabError::Usage(format!(
            "{}: the trace holds no page references",
            c.trace.display()
        )));
    }
    let scan = TraceScan {
        references,
        writes,
        distinct_pages: summary.distinct_pages,
        dense_pages: summary.map.pages_count(),
        format: summary.format.to_string(),
        scan_time_s: t.elapsed().as_secs_f64(),
    };
    let mut small = summary.clone();
    small.references = sampled.len() as u64;
    small.distinct_pages = sampled_pages;
    Ok(Read {
        sampled: SharedTrace::from_refs(sampled, small, *opts),
        full: full.map(|v| SharedTrace::from_refs(v, summary, *opts)),
        scan,
    })
}

/// Runs `cfgs` over `shared` (or the file) on `jobs` threads; results in order. The first
/// error (of the earliest run) is returned.
pub(super) fn run_all(
    cfgs: &[RunConfig],
    scan: &TraceScan,
    shared: Option<&SharedTrace>,
    jobs: usize,
) -> Result<Vec<RunResult>, LabError> {
    let jobs = jobs.clamp(1, cfgs.len().max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let slots: Mutex<Vec<Option<Result<RunResult, LabError>>>> =
        Mutex::new((0..cfgs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(cfg) = cfgs.get(i) else { break };
                    let r = run_shared(cfg, Some(scan), shared);
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if let Ok(mut v) = slots.lock() {
                        v[i] = Some(r);
                    }
                }
            });
        }
    });
    let slots = slots
        .into_inner()
        .map_err(|_| LabError::Invariant("a miniature run panicked".into()))?;
    if let Some(i) = slots.iter().position(|r| matches!(r, Some(Err(_)))) {
        if let Some(Some(Err(e))) = slots.into_iter().nth(i) {
            return Err(e);
        }
        return Err(LabError::Invariant(
            "a miniature run's error was lost".into(),
        ));
    }
    slots
        .into_iter()
        .map(|r| match r {
            Some(Ok(r)) => Ok(r),
            _ => Err(LabError::Invariant("a miniature run did not finish".into())),
        })
        .collect()
}
