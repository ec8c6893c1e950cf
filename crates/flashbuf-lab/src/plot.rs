//! `compare --plot FILE [--metric M]`: a metric against buffer size, one line per policy ×
//! store, one panel per device (devices of very different speeds never share an axis).
//! The x-axis is logarithmic (buffer sizes are swept on a log scale); a single size gets
//! a decade around it. SVG or PNG by the file's extension (text is laid out and drawn
//! with the bundled DejaVu Sans Mono, `assets/`, so no system fonts are needed).

use crate::result::RunResult;
use crate::LabError;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// What the y-axis shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Misses / references.
    MissRatio,
    /// Write-backs / references.
    WriteBacks,
    /// Device µs per reference.
    Cost,
    /// The FTL's write amplification.
    Wa,
    /// Flash erases.
    Erases,
    /// Mean device time per reference (µs).
    Response,
}

impl Metric {
    /// Every metric with its name on the command line.
    pub const ALL: &'static [(&'static str, Metric)] = &[
        ("miss-ratio", Metric::MissRatio),
        ("write-backs", Metric::WriteBacks),
        ("cost", Metric::Cost),
        ("wa", Metric::Wa),
        ("erases", Metric::Erases),
        ("response", Metric::Response),
    ];

    /// Parses a metric name; the error lists the valid ones.
    pub fn parse(s: &str) -> Result<Self, LabError> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|&(_, m)| m)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                LabError::Usage(format!(
                    "unknown metric '{s}'; valid metrics: {}",
                    names.join(", ")
                ))
            })
    }

    fn value(self, r: &RunResult) -> f64 {
        match self {
            Metric::MissRatio => r.miss_ratio,
            Metric::WriteBacks => r.write_back_ratio,
            Metric::Cost => r.io_cost,
            Metric::Wa => r.write_amplification,
            Metric::Erases => r.erases as f64,
            Metric::Response => r.response_time_mean_us.unwrap_or(0.0),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Metric::MissRatio => "miss ratio",
            Metric::WriteBacks => "write-backs per reference",
            Metric::Cost => "I/O cost (device us per reference)",
            Metric::Wa => "flash write amplification",
            Metric::Erases => "flash erases",
            Metric::Response => "mean response time (device us per reference)",
        }
    }
}

/// Okabe–Ito's colour-blind-safe palette, then a few darker tones: legible on white.
const COLOURS: &[RGBColor] = &[
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(120, 60, 30),
    RGBColor(90, 90, 160),
    RGBColor(60, 120, 60),
];

fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

/// Lines of one panel: (policy / store, points sorted by buffer size).
type Lines = Vec<(String, Vec<(f64, f64)>)>;

/// The runs grouped by device, then by policy × store.
fn panels(runs: &[RunResult], metric: Metric) -> Vec<(String, Lines)> {
    let mut out: Vec<(String, Lines)> = Vec::new();
    for r in runs {
        let key = format!("{} / {}", r.policy, r.store);
        let pt = (r.buffer_pages.max(1) as f64, metric.value(r));
        let lines = match out.iter_mut().find(|(d, _)| *d == r.device) {
            Some((_, l)) => l,
            None => {
                out.push((r.device.clone(), Vec::new()));
                let last = out.len() - 1;
                &mut out[last].1
            }
        };
        match lines.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(pt),
            None => lines.push((key, vec![pt])),
        }
    }
    for (_, lines) in &mut out {
        for (_, v) in lines.iter_mut() {
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    out
}

/// Draws `runs` into `path` (SVG, or PNG if the name ends in `.png`).
pub fn plot(runs: &[RunResult], path: &Path, title: &str, metric: Metric) -> Result<(), LabError> {
    let err = |e: &dyn std::fmt::Display| LabError::Usage(format!("plot {}: {e}", path.display()));
    if runs.is_empty() {
        return Err(err(&"no runs to plot"));
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    // Text is measured (SVG) and drawn (PNG) with the bundled font.
    register_font();
    let panels = panels(runs, metric);
    let size = (960, 120 + 380 * panels.len() as u32);
    match ext.as_deref() {
        Some("svg") => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw(&root, &panels, title, metric).map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))
        }
        Some("png") => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&root, &panels, title, metric).map_err(|e| err(&e))?;
            root.present().map_err(|e| err(&e))
        }
        _ => Err(err(&"the file name must end in .svg or .png")),
    }
}

/// Registers the bundled font as plotters' `sans-serif` (once per process): every chart
/// of the lab lays out its text with it.
pub fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // A failure leaves plotters without the font; drawing then reports it.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            include_bytes!("../assets/DejaVuSansMono.ttf"),
        );
    });
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    panels: &[(String, Lines)],
    title: &str,
    metric: Metric,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let areas = root.split_evenly((panels.len(), 1));
    for ((device, lines), area) in panels.iter().zip(areas) {
        let pts = lines.iter().flat_map(|(_, v)| v.iter());
        let (xmin, xmax, ymax) = pts.fold((f64::MAX, f64::MIN, 0.0f64), |(lo, hi, y), p| {
            (lo.min(p.0), hi.max(p.0), y.max(p.1))
        });
        // A decade around a single size; a little room on each side otherwise.
        let (x0, x1) = if xmax / xmin < 1.5 {
            (xmin / 3.0, xmax * 3.0)
        } else {
            (xmin / 1.15, xmax * 1.15)
        };
        let y1 = if ymax > 0.0 { ymax * 1.12 } else { 1.0 };
        let mut chart = ChartBuilder::on(&area)
            .caption(device, ("sans-serif", 16))
            .margin(14)
            .x_label_area_size(42)
            .y_label_area_size(78)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..y1)?;
        chart
            .configure_mesh()
            .x_desc("buffer (pages, log scale)")
            .y_desc(metric.label())
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        for (i, (name, pts)) in lines.iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(policy: &str, device: &str, frames: usize, cost: f64) -> RunResult {
        RunResult {
            policy: policy.into(),
            store: "direct".into(),
            device: device.into(),
            buffer_pages: frames,
            io_cost: cost,
            miss_ratio: cost / 10.0,
            ..RunResult::default()
        }
    }

    #[test]
    fn one_panel_per_device_a_line_per_configuration() {
        let runs = vec![
            run("lru", "sim:mtron", 100, 5.0),
            run("lru", "sim:mtron", 1000, 4.0),
            run("cfdc", "sim:mtron", 100, 3.0),
            run("cfdc", "sim:mtron", 1000, 2.5),
            run("lru", "sim:hdd", 100, 900.0),
        ];
        let p = panels(&runs, Metric::Cost);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].1.len(), 2, "{p:?}");
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("x.svg");
        plot(&runs, &svg, "test", Metric::Cost).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("<svg"));
        assert!(text.contains("lru / direct") && text.contains("cfdc / direct"));
        assert!(text.contains("sim:mtron") && text.contains("sim:hdd"));
        let png = dir.path().join("x.png");
        plot(&runs, &png, "test", Metric::MissRatio).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "a PNG file");
        // A single size still plots.
        plot(&runs[..1], &svg, "one", Metric::Cost).unwrap();
        let e = plot(&runs, &dir.path().join("x.pdf"), "t", Metric::Cost).unwrap_err();
        assert!(e.to_string().contains(".svg or .png"), "{e}");
        assert!(plot(&[], &svg, "empty", Metric::Cost).is_err());
        assert!(Metric::parse("misses")
            .unwrap_err()
            .to_string()
            .contains("miss-ratio"));
    }
}
