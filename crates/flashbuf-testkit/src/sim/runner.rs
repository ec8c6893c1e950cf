//! [`run`]: the ops applied through a front, and the crash points checked after each crash.

use super::{mode_label, CrashChoice, Edit, Op, SimConfig, SimFailure, SimReport};
use crate::content::{fill, write_stamp, STAMP_BYTES};
use crate::fronts::{BatchPage, Front, FrontBuilder, FrontError};
use crate::model::{Model, PageValue, Violation};
use crate::CrashStore;
use flashbuf_core::page::HEADER_BYTES;
use flashbuf_core::rng::SplitMix64;
use flashbuf_core::PageId;
use flashbuf_device::fault::{CrashMode, FaultDevice};
use flashbuf_store::{PageStore, ReadOutcome};
use std::ops::Range;
use std::sync::Arc;

/// Never-written pages probed after every crash, beyond `0..pages` (phantom check).
fn probes(pages: u32) -> [PageId; 3] {
    let p = u64::from(pages);
    [PageId(p), PageId(p + 17), PageId(1 << 20)]
}

struct Runner<'a> {
    factory: &'a CrashStore,
    builder: FrontBuilder<'a>,
    cfg: SimConfig,
    model: Model,
    next_tag: u64,
    report: SimReport,
    payload_len: usize,
}

/// A store reopened after a crash: its device, the store, and what each page holds.
type Recovered = (
    Arc<FaultDevice>,
    Box<dyn PageStore>,
    Vec<(PageId, PageValue)>,
);

struct Up {
    dev: Arc<FaultDevice>,
    front: Box<dyn Front>,
}

/// Runs `ops` on a fresh store built by `factory`, through the front `builder` makes, and
/// checks it against the model; see the module documentation.
pub fn run(
    factory: &CrashStore,
    builder: FrontBuilder<'_>,
    cfg: &SimConfig,
    ops: &[Op],
) -> Result<SimReport, Box<SimFailure>> {
    let mut r = Runner {
        factory,
        builder,
        cfg: *cfg,
        model: Model::new(),
        next_tag: 1,
        report: SimReport {
            scenarios: 1,
            ..SimReport::default()
        },
        payload_len: cfg.page_size.saturating_sub(HEADER_BYTES),
    };
    let mut front_name = String::from("?");
    let fail =
        |r: &Runner<'_>, front: &str, i: usize, op: String, mode: Option<String>, d: String| {
            Box::new(SimFailure {
                store: r.factory.name.clone(),
                front: front.to_string(),
                config: r.cfg,
                op_index: i,
                op,
                crash_mode: mode,
                detail: d,
            })
        };
    if cfg.pages == 0 || cfg.page_size < HEADER_BYTES + STAMP_BYTES + 8 {
        return Err(fail(
            &r,
            &front_name,
            0,
            "setup".into(),
            None,
            format!("no pages or page size {} too small", cfg.page_size),
        ));
    }
    let dev = Arc::new(FaultDevice::new(0));
    let store = factory
        .create(Box::new(dev.clone()), cfg.page_size)
        .map_err(|e| fail(&r, &front_name, 0, "create".into(), None, e.to_string()))?;
    // The store's buffers: the page, or its metadata page in metadata-only mode.
    let buf_bytes = store.page_size();
    if buf_bytes < HEADER_BYTES + STAMP_BYTES + 8 {
        let d = format!("store buffers of {buf_bytes} bytes are too small");
        return Err(fail(&r, &front_name, 0, "create".into(), None, d));
    }
    r.payload_len = buf_bytes - HEADER_BYTES;
    let front = builder(store)
        .map_err(|e| fail(&r, &front_name, 0, "front".into(), None, e.to_string()))?;
    front_name = front.describe();
    let mut up = Up { dev, front };
    for (i, op) in ops.iter().enumerate() {
        r.report.ops += 1;
        let res = match op {
            Op::Crash(choice) => r.crash(&mut up, i, Some(*choice)),
            _ => r.apply(&mut up, op).map_err(|d| (None, d)),
        };
        if let Err((mode, d)) = res {
            return Err(fail(&r, &front_name, i, format!("{op:?}"), mode, d));
        }
    }
    if let Err((mode, d)) = r.crash(&mut up, ops.len(), None) {
        return Err(fail(
            &r,
            &front_name,
            ops.len(),
            "final crash".into(),
            mode,
            d,
        ));
    }
    Ok(r.report)
}

impl Runner<'_> {
    fn pid(&self, page: u32) -> PageId {
        PageId(u64::from(page % self.cfg.pages))
    }

    /// The new payload of `pid` after `edit`, and the ranges it changed; `None` if the
    /// page cannot be written through this front (reported corrupt, read-before-write).
    fn edited(
        &mut self,
        pid: PageId,
        edit: Edit,
        front: &dyn Front,
    ) -> Option<(u64, Vec<u8>, Vec<Range<usize>>)> {
        let base = self.model.latest(pid);
        if base == PageValue::Corrupt && !front.can_overwrite_corrupt() {
            return None;
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        let n = self.payload_len;
        let mut rng = SplitMix64::new(edit.seed ^ tag.wrapping_mul(0xA24B_AED4_963E_E407));
        match base {
            PageValue::Data { payload, .. } if !edit.whole => {
                let mut p = payload.to_vec();
                write_stamp(&mut p, pid, tag);
                let start = STAMP_BYTES + rng.below((n - STAMP_BYTES) as u64) as usize;
                let len = 1 + rng.below((n - start).min(700) as u64) as usize;
                for b in &mut p[start..start + len] {
                    *b = rng.next_u64() as u8;
                }
                Some((tag, p, vec![0..STAMP_BYTES, start..start + len]))
            }
            _ => {
                let mut p = vec![0u8; n];
                fill(&mut p, pid, tag, self.cfg.seed ^ edit.seed);
                let whole: Range<usize> = 0..n;
                Some((tag, p, vec![whole]))
            }
        }
    }

    fn apply(&mut self, up: &mut Up, op: &Op) -> Result<(), String> {
        match op {
            Op::Write { page, edit } => {
                let pid = self.pid(*page);
                if let Some((tag, p, changed)) = self.edited(pid, *edit, up.front.as_ref()) {
                    up.front
                        .write(pid, tag, &p, &changed)
                        .map_err(|e| format!("write of {pid} failed: {e}"))?;
                    self.model.write(pid, tag, p.into());
                }
            }
            Op::Batch { writes } => {
                let mut seen = Vec::new();
                let mut edits = Vec::new();
                for (page, edit) in writes {
                    let pid = self.pid(*page);
                    if seen.contains(&pid) {
                        continue;
                    }
                    seen.push(pid);
                    if let Some(e) = self.edited(pid, *edit, up.front.as_ref()) {
                        edits.push((pid, e));
                    }
                }
                let batch: Vec<BatchPage<'_>> = edits
                    .iter()
                    .map(|(pid, (tag, p, changed))| BatchPage {
                        pid: *pid,
                        tag: *tag,
                        payload: p,
                        changed: changed.clone(),
                    })
                    .collect();
                if !batch.is_empty() {
                    up.front
                        .write_batch(&batch)
                        .map_err(|e| format!("batch write failed: {e}"))?;
                }
                for (pid, (tag, p, _)) in edits {
                    self.model.write(pid, tag, p.into());
                }
            }
            Op::Read { page } => {
                let pid = self.pid(*page);
                let mut p = vec![0u8; self.payload_len];
                let r = up.front.read(pid, &mut p);
                let r = match &r {
                    Ok(o) => Ok(*o),
                    Err(FrontError::Store(e)) => Err(e),
                    Err(FrontError::Other(s)) => return Err(format!("read of {pid}: {s}")),
                };
                self.model
                    .check_live(pid, r, &p)
                    .map_err(|v| format!("live read: {v}"))?;
            }
            Op::Flush => up.front.flush().map_err(|e| format!("flush failed: {e}"))?,
            Op::Sync => {
                up.front.sync().map_err(|e| format!("sync failed: {e}"))?;
                self.model.sync();
            }
            Op::Crash(_) => {}
        }
        Ok(())
    }

    /// Checks crash images of the current device; continues on the first one's store.
    fn crash(
        &mut self,
        up: &mut Up,
        op_index: usize,
        choice: Option<CrashChoice>,
    ) -> Result<(), (Option<String>, String)> {
        up.front
            .check_invariants()
            .map_err(|e| (None, format!("invariants before the crash: {e}")))?;
        let pending = up.dev.pending_writes();
        let mut rng = SplitMix64::new(
            self.cfg.seed ^ (op_index as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D),
        );
        let first = choice.unwrap_or(CrashChoice {
            kind: 3,
            at: 0,
            seed: rng.next_u64(),
            tear: 2,
        });
        let mut modes = vec![
            first.mode(pending),
            CrashMode::LoseUnsynced,
            CrashMode::KeepAll,
        ];
        while modes.len() < self.cfg.fanout {
            modes.push(CrashChoice::random(&mut rng).mode(pending));
        }
        modes.truncate(self.cfg.fanout.max(1));
        let mut next: Option<Recovered> = None;
        for mode in &modes {
            let img = up.dev.crash_image(*mode);
            let m = || Some(format!("{mode:?}"));
            let dev = Arc::new(FaultDevice::from_image(img));
            let store = self
                .factory
                .open(Box::new(dev.clone()), self.cfg.page_size)
                .map_err(|e| (m(), format!("reopen after the crash failed: {e}")))?;
            store
                .check_invariants()
                .map_err(|e| (m(), format!("invariants after recovery: {e}")))?;
            let seen = self
                .verify(store.as_ref())
                .map_err(|v| (m(), v.to_string()))?;
            self.report.crash_points += 1;
            *self.report.by_mode.entry(mode_label(mode)).or_default() += 1;
            if next.is_none() {
                next = Some((dev, store, seen));
            }
        }
        let Some((dev, store, seen)) = next else {
            return Err((None, "no crash mode".into()));
        };
        for (pid, v) in seen {
            self.model.recovered(pid, v);
        }
        let front = (self.builder)(store).map_err(|e| (None, format!("front: {e}")))?;
        *up = Up { dev, front };
        Ok(())
    }

    /// Reads every page and probe of a recovered store and judges it.
    fn verify(&mut self, store: &dyn PageStore) -> Result<Vec<(PageId, PageValue)>, Violation> {
        let mut page = vec![0u8; HEADER_BYTES + self.payload_len];
        let mut seen = Vec::with_capacity(self.cfg.pages as usize);
        let pids = (0..u64::from(self.cfg.pages))
            .map(PageId)
            .chain(probes(self.cfg.pages));
        for pid in pids {
            page.fill(0xEE);
            let r = store.read_page(pid, &mut page);
            let (v, value) =
                self.model
                    .check_recovered(pid, r.as_ref().map(|o| *o), &page[HEADER_BYTES..])?;
            if let Ok(ReadOutcome::Unwritten) = r {
                if page.iter().any(|&b| b != 0) {
                    return Err(Violation {
                        pid,
                        kind: "unwritten not zeroed",
                        detail: "read reported unwritten but left bytes in the buffer".into(),
                    });
                }
            }
            self.report.count(v);
            if pid.0 < u64::from(self.cfg.pages) {
                seen.push((pid, value));
            }
        }
        Ok(seen)
    }
}
