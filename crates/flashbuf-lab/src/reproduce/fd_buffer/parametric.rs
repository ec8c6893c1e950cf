//! The parametric studies: Figs. 9-10 (asymmetry and workload models), Fig. 11 (window
//! size), Fig. 12 (epoch size), Fig. 7 (the SSD), and a sensitivity table.

use super::*;
use crate::reproduce::runner::{count, improvement, pct, secs, upct};

/// Figs. 9 and 10: the asymmetry models RM1/RM2 and the workload models WM1/WM2.
pub(super) fn figs_9_10(
    cx: &mut Ctx<'_>,
    tpcc: &Path,
    plain: &RunConfig,
) -> Result<Vec<Section>, LabError> {
    let mut sections = Vec::new();
    for (title, cases, note) in [
        (
            "Fig. 9: asymmetry models RM1/RM2 (TPC-C, sd-card, 3%)",
            vec![
                ("RM1", rm(AsymmetryModel::Rm1)),
                ("RM2", rm(AsymmetryModel::Rm2)),
            ],
            "paper: under RM1 FD-Buffer gains more over the static LRU and CFDC; over CASA it \
             gains more under RM2 than under RM1",
        ),
        (
            "Fig. 10: workload models WM1/WM2 (TPC-C, sd-card, 3%, w0 = trace's write ratio)",
            vec![
                ("WM1", wm(WorkloadModel::Wm1, 5_000)),
                ("WM2", wm(WorkloadModel::Wm2, 5_000)),
            ],
            "paper: WM1 narrows the gaps (more writes, clustering matters more); under WM2 \
             FD-Buffer's improvement over CASA grows by 2-9 points",
        ),
    ] {
        let mut sec = Section::new(
            title,
            &[
                "model",
                "LRU s",
                "CFDC s",
                "CASA s",
                "FD-Buffer s",
                "FD/order s",
                "FD over LRU",
                "FD over CFDC",
                "FD over CASA",
                "FD/order over CASA",
            ],
        );
        let base = cx.all(tpcc, SD_CARD, BUFFER, plain)?;
        let mut rows = vec![("none", base)];
        for (name, ro) in &cases {
            rows.push((name, cx.all(tpcc, SD_CARD, BUFFER, ro)?));
        }
        for (name, rs) in rows {
            let t = |i: usize| rs[i].1.device_time_us;
            sec.row(vec![
                name.into(),
                secs(t(0)),
                secs(t(1)),
                secs(t(2)),
                secs(t(FD)),
                secs(t(FD_O)),
                upct(improvement(t(FD), t(0))),
                upct(improvement(t(FD), t(1))),
                upct(improvement(t(FD), t(2))),
                upct(improvement(t(FD_O), t(2))),
            ]);
        }
        sec.notes.push(note.into());
        sections.push(sec);
    }

    Ok(sections)
}

/// Fig. 11: the estimation window size (FD-Buffer).
pub(super) fn fig_11(
    cx: &mut Ctx<'_>,
    tpcc: &Path,
    plain: &RunConfig,
) -> Result<Section, LabError> {
    let mut f11 = Section::new(
        "Fig. 11: estimation window size (FD-Buffer, TPC-C, sd-card, 3%)",
        &[
            "window",
            "refs",
            "none s",
            "WM1 s",
            "WM2 s",
            "none vs 1x",
            "WM1 vs 1x",
            "WM2 vs 1x",
            "advisor/wall",
            "advisor/device",
        ],
    );
    let workloads = [
        plain.clone(),
        wm(WorkloadModel::Wm1, 5_000),
        wm(WorkloadModel::Wm2, 5_000),
    ];
    let mut base = [0.0f64; 3];
    let mut grid: Vec<(f64, [RunResult; 3])> = Vec::new();
    for &k in WINDOW_FACTORS {
        let refs = (5_000.0 * k).round() as u64;
        let p = if refs == 5_000 {
            FD_PAPER.to_string()
        } else {
            format!("{FD_PAPER},window={refs}")
        };
        let mut rs = Vec::new();
        for ro in &workloads {
            rs.push(cx.run(tpcc, &p, SD_CARD, BufferSize::Ratio(BUFFER), ro)?);
        }
        if refs == 5_000 {
            for (b, r) in base.iter_mut().zip(&rs) {
                *b = r.device_time_us;
            }
        }
        if let Ok(arr) = <[RunResult; 3]>::try_from(rs) {
            grid.push((k, arr));
        }
    }
    for (k, rs) in &grid {
        let adv_ns = rs[0]
            .policy_report
            .get("advisor_ns")
            .copied()
            .unwrap_or(0.0);
        f11.row(vec![
            format!("{k}x"),
            count((5_000.0 * k).round() as u64),
            secs(rs[0].device_time_us),
            secs(rs[1].device_time_us),
            secs(rs[2].device_time_us),
            pct(rs[0].device_time_us / base[0] - 1.0),
            pct(rs[1].device_time_us / base[1] - 1.0),
            pct(rs[2].device_time_us / base[2] - 1.0),
            format!(
                "{:.3}%",
                adv_ns * 1e-9 / rs[0].wall_time_s.max(1e-9) * 100.0
            ),
            format!(
                "{:.5}%",
                adv_ns * 1e-3 / rs[0].device_time_us.max(1e-9) * 100.0
            ),
        ]);
    }
    f11.notes.push(
        "paper: cost steady for 0.25x-1x; 2.7-7.1% worse at 5x; advisor overhead 0.2% of I/O \
         time at 1x, 1% at 0.25x, < 0.1% at 5x. advisor/wall = advisor CPU time / replay wall \
         time here; advisor/device = / virtual device time (the paper's measure)"
            .into(),
    );

    Ok(f11)
}

/// Fig. 12: the epoch size of the synthetic workloads (CASA vs FD-Buffer).
pub(super) fn fig_12(cx: &mut Ctx<'_>, tpcc: &Path) -> Result<Section, LabError> {
    let mut f12 = Section::new(
        "Fig. 12: epoch size of the synthetic workloads (CASA vs FD-Buffer, TPC-C, sd-card, 3%)",
        &[
            "model",
            "epoch",
            "CASA s",
            "FD-Buffer s",
            "FD/order s",
            "FD over CASA",
            "FD/order over CASA",
        ],
    );
    for (name, model) in [("WM1", WorkloadModel::Wm1), ("WM2", WorkloadModel::Wm2)] {
        for epoch in [1_250u64, 2_500, 5_000] {
            let ro = wm(model, epoch);
            let mut t = Vec::new();
            for p in [CASA, FD_PAPER, FD_ORDER] {
                t.push(
                    cx.run(tpcc, p, SD_CARD, BufferSize::Ratio(BUFFER), &ro)?
                        .device_time_us,
                );
            }
            f12.row(vec![
                name.into(),
                count(epoch),
                secs(t[0]),
                secs(t[1]),
                secs(t[2]),
                upct(improvement(t[1], t[0])),
                upct(improvement(t[2], t[0])),
            ]);
        }
    }
    f12.notes.push(
        "paper: FD-Buffer over CASA stays about 4% under WM1 and above 20% under WM2 at every \
         epoch size"
            .into(),
    );

    Ok(f12)
}

/// Fig. 7: the SSD (flash-25).
pub(super) fn fig_7(cx: &mut Ctx<'_>, tpcc: &Path, plain: &RunConfig) -> Result<Section, LabError> {
    let mut f7 = Section::new(
        "Fig. 7: the SSD (TPC-C, flash-25 = Mtron MOBI3500, 3%)",
        &[
            "policy",
            "reads",
            "writes",
            "device s",
            "FD-Buffer better by",
            "FD/order better by",
            "paper: FD-Buffer better by",
        ],
    );
    let (cl25, f25) = cx.cluster(FLASH_25, tpcc)?;
    let rs = cx.all(tpcc, FLASH_25, BUFFER, plain)?;
    let paper7 = ["37.4%", "32.2%", "10.9%"];
    for (i, (label, r)) in rs.iter().enumerate() {
        f7.row(vec![
            (*label).into(),
            count(r.page_reads),
            count(r.page_writes),
            secs(r.device_time_us),
            if i < FD {
                upct(improvement(rs[FD].1.device_time_us, r.device_time_us))
            } else {
                String::new()
            },
            if i < FD {
                upct(improvement(rs[FD_O].1.device_time_us, r.device_time_us))
            } else {
                String::new()
            },
            paper7.get(i).map_or(String::new(), |s| s.to_string()),
        ]);
    }
    f7.notes.push(format!(
        "flash-25: read {:.0} us, write {:.0} us per random 8 KB page (R = {:.1}), cluster {cl25} \
         pages; the paper used a 12 GB TPC-C data set, ours is 339 MB",
        f25.read_us,
        f25.write_us,
        f25.write_us / f25.read_us
    ));

    Ok(f7)
}

/// Sensitivity: R source, clustering, victim cluster, window.
pub(super) fn sensitivity(
    cx: &mut Ctx<'_>,
    tpcc: &Path,
    plain: &RunConfig,
    fd_paper: f64,
    opts: &ReproduceOptions,
) -> Result<Section, LabError> {
    let mut sv = Section::new(
        "Sensitivity: R source, clustering, victim cluster, window (TPC-C, sd-card, 3%)",
        &[
            "policy",
            "reads",
            "writes",
            "write ms/page",
            "device s",
            "vs FD-Buffer (paper)",
        ],
    );
    for p in [
        "lru",
        "casa",
        "fd-buffer",
        "fd-buffer:r=online",
        LRU,
        CASA,
        "casa:clustering=drain",
        "casa:clustering=drain,choice=metric,learn=true",
        FD_PAPER,
        FD_ORDER,
        "fd-buffer:clustering=drain",
        "fd-buffer:clustering=drain,victim=order",
        "fd-buffer:clustering=drain,victim=order,window=25000,group=1",
        "fd-buffer:clustering=batch,r=online",
        "fd-buffer:clustering=drain,victim=order,window=1000000000,init=0.05",
    ] {
        let r = cx.run(tpcc, p, SD_CARD, BufferSize::Ratio(BUFFER), plain)?;
        sv.row(vec![
            p.into(),
            count(r.page_reads),
            count(r.page_writes),
            format!("{:.1}", r.write_time_per_page_us / 1000.0),
            secs(r.device_time_us),
            pct(r.device_time_us / fd_paper - 1.0),
        ]);
    }
    sv.notes.extend([
        "casa / fd-buffer without learn / r=online take their costs from the device facts (a \
         random-write profile: R = 146 on sd-card); clustered writes cost far less (about 23 ms \
         vs 198 ms), which online measurements see"
            .to_string(),
        "window=1000000000,init=0.05 is a static split (M_c = 5% of the buffer, never revised): a \
         bound on what a better-tuned advisor could reach here"
            .to_string(),
        format!(
            "{} runs, {:.0} s wall{}",
            cx.rn.runs_done(),
            cx.rn.elapsed_s(),
            match opts.limit_refs {
                Some(n) => format!("; first {n} references of each trace only"),
                None => String::new(),
            }
        ),
    ]);

    Ok(sv)
}
