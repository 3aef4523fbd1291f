//! The log–log plot of `harbor study energy-order`: one panel per scheme family, the
//! relative supplied-energy error as solid lines with circles and the stored-energy error
//! as thin lines with crosses, as in Kotyczka & Lefèvre Fig. 3/5.

use std::path::Path;

use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::study::energy_order::{EnergyOrderStudy, OrderPoint};

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// Writes the study's error curves to an SVG file.
pub fn energy_order_svg(study: &EnergyOrderStudy, path: &Path, title: &str) -> Result<()> {
    let plot_error = |e: String| Error::io(path, std::io::Error::other(e));
    let mut families: Vec<String> = Vec::new();
    for p in &study.points {
        let family = p
            .scheme
            .rsplit_once('-')
            .map_or(p.scheme.clone(), |(f, _)| f.to_string());
        if !families.contains(&family) {
            families.push(family);
        }
    }
    let root = SVGBackend::new(path, (560 * families.len() as u32, 460)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(e.to_string()))?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| plot_error(e.to_string()))?;
    let panels = root.split_evenly((1, families.len()));
    for (panel, family) in panels.iter().zip(&families) {
        let points: Vec<_> = study
            .points
            .iter()
            .filter(|p| p.scheme.starts_with(&format!("{family}-")))
            .collect();
        let (h_lo, h_hi) = points.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), p| {
            (lo.min(p.h), hi.max(p.h))
        });
        let (e_lo, e_hi) = points
            .iter()
            .flat_map(|p| [p.supplied_error.abs(), p.stored_error.abs()])
            .filter(|&e| e > 0.0)
            .fold((f64::INFINITY, 0.0_f64), |(lo, hi), e| {
                (lo.min(e), hi.max(e))
            });
        let mut chart = ChartBuilder::on(panel)
            .caption(family.as_str(), ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (h_lo * 0.8..h_hi * 1.25).log_scale(),
                (e_lo * 0.3..e_hi * 3.0).log_scale(),
            )
            .map_err(|e| plot_error(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("step size h")
            .y_desc("relative energy error")
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .draw()
            .map_err(|e| plot_error(e.to_string()))?;
        let mut schemes: Vec<&str> = points.iter().map(|p| p.scheme.as_str()).collect();
        schemes.dedup();
        for (index, scheme) in schemes.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            let series: Vec<_> = points.iter().filter(|p| p.scheme == *scheme).collect();
            // An error of exactly zero has no place on a log axis and is left out.
            let curve = |f: &dyn Fn(&OrderPoint) -> f64| -> Vec<(f64, f64)> {
                series
                    .iter()
                    .map(|p| (p.h, f(p).abs()))
                    .filter(|&(_, e)| e > 0.0)
                    .collect()
            };
            let supplied = curve(&|p| p.supplied_error);
            let stored = curve(&|p| p.stored_error);
            chart
                .draw_series(LineSeries::new(supplied.clone(), color.stroke_width(2)))
                .map_err(|e| plot_error(e.to_string()))?
                .label(format!("{scheme} supplied"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart
                .draw_series(supplied.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(|e| plot_error(e.to_string()))?;
            chart
                .draw_series(LineSeries::new(stored.clone(), color.stroke_width(1)))
                .map_err(|e| plot_error(e.to_string()))?
                .label(format!("{scheme} stored"))
                .legend(move |(x, y)| Cross::new((x + 9, y), 4, color.stroke_width(1)));
            chart
                .draw_series(
                    stored
                        .iter()
                        .map(|&p| Cross::new(p, 5, color.stroke_width(1))),
                )
                .map_err(|e| plot_error(e.to_string()))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| plot_error(e.to_string()))?;
    }
    root.present().map_err(|e| plot_error(e.to_string()))?;
    Ok(())
}
