//! `compare --plot out.svg`: I/O cost per reference against buffer size, one line per
//! policy × store × device, as an SVG (plotters; no fonts needed).

use crate::result::RunResult;
use crate::LabError;
use plotters::prelude::*;
use std::path::Path;

/// Draws `runs` into an SVG at `path`: x = buffer pages, y = `io_cost` (µs of device
/// time per reference); runs with the same policy, store and device form a line.
pub fn plot_svg(runs: &[RunResult], path: &Path, title: &str) -> Result<(), LabError> {
    let err = |e: &dyn std::fmt::Display| LabError::Usage(format!("plot {}: {e}", path.display()));
    if runs.is_empty() {
        return Err(err(&"no runs to plot"));
    }
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in runs {
        let key = format!("{} / {} / {}", r.policy, r.store, r.device);
        let pt = (r.buffer_pages as f64, r.io_cost);
        match series.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(pt),
            None => series.push((key, vec![pt])),
        }
    }
    for (_, v) in &mut series {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let (xmin, xmax) = runs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| {
        let x = r.buffer_pages as f64;
        (lo.min(x), hi.max(x))
    });
    let ymax = runs.iter().map(|r| r.io_cost).fold(0.0f64, f64::max);
    let pad = ((xmax - xmin) * 0.05).max(1.0);
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((xmin - pad)..(xmax + pad), 0.0..(ymax * 1.1).max(1e-9))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("buffer (pages)")
        .y_desc("I/O cost (device µs per reference)")
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).stroke_width(2);
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color))
            .map_err(|e| err(&e))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], Palette99::pick(i)));
        chart
            .draw_series(
                pts.iter()
                    .map(|&p| Circle::new(p, 3, Palette99::pick(i).filled())),
            )
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg_with_a_line_per_configuration() {
        let run = |policy: &str, frames: usize, cost: f64| RunResult {
            policy: policy.into(),
            store: "direct".into(),
            device: "sim:mtron".into(),
            buffer_pages: frames,
            io_cost: cost,
            ..RunResult::default()
        };
        let runs = vec![
            run("lru", 100, 5.0),
            run("lru", 200, 4.0),
            run("cfdc", 100, 3.0),
            run("cfdc", 200, 2.5),
        ];
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.svg");
        plot_svg(&runs, &p, "test").unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.starts_with("<svg") || svg.contains("<svg"));
        assert!(
            svg.contains("lru / direct / sim:mtron") && svg.contains("cfdc / direct / sim:mtron")
        );
        assert!(plot_svg(&[], &p, "empty").is_err());
    }
}
