//! SVG plots of plain data: panels side by side, each with line series (optionally marked
//! by circles or crosses) on linear or logarithmic axes. Studies turn their results into
//! [`Panel`]s; nothing here knows about a study. Drawing them ([`panels_svg`]) comes with
//! the `cli` feature (plotters); the panels themselves are plain data.

#[cfg(feature = "cli")]
use std::path::Path;

#[cfg(feature = "cli")]
use plotters::prelude::*;

#[cfg(feature = "cli")]
use crate::error::{Error, Result};

#[cfg(feature = "cli")]
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// How the points of a series are marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    None,
    Circle,
    Cross,
    /// An open triangle: a point drawn somewhere other than its value (e.g. an error of
    /// exactly zero placed at a floor on a log axis).
    Triangle,
}

/// One line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Index into the palette.
    pub color: usize,
    /// Line width in pixels (0: markers only).
    pub width: u32,
    pub marker: Marker,
}

/// One chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

/// Maps a value to the axis: log10 on logarithmic axes (non-positive values are dropped).
#[cfg(feature = "cli")]
fn axis(value: f64, log: bool) -> Option<f64> {
    match log {
        true if value > 0.0 && value.is_finite() => Some(value.log10()),
        true => None,
        false if value.is_finite() => Some(value),
        false => None,
    }
}

/// The range of `values` with a margin.
#[cfg(feature = "cli")]
fn range(values: impl Iterator<Item = f64>, log: bool) -> std::ops::Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    let margin = if log {
        0.1
    } else {
        0.05 * (hi - lo).max(1e-12 * hi.abs().max(1.0))
    };
    (lo - margin)..(hi + margin)
}

/// Writes `panels` side by side to an SVG file at `path`.
#[cfg(feature = "cli")]
pub fn panels_svg(path: &Path, title: &str, panels: &[Panel]) -> Result<()> {
    let plot_error = |e: String| Error::io(path, std::io::Error::other(e));
    let count = panels.len().max(1) as u32;
    let root = SVGBackend::new(path, (560 * count, 460)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(e.to_string()))?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| plot_error(e.to_string()))?;
    let areas = root.split_evenly((1, panels.len().max(1)));
    for (area, panel) in areas.iter().zip(panels) {
        let mapped: Vec<Vec<(f64, f64)>> = panel
            .series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .filter_map(|&(x, y)| Some((axis(x, panel.log_x)?, axis(y, panel.log_y)?)))
                    .collect()
            })
            .collect();
        let x_range = range(mapped.iter().flatten().map(|p| p.0), panel.log_x);
        let y_range = range(mapped.iter().flatten().map(|p| p.1), panel.log_y);
        let mut chart = ChartBuilder::on(area)
            .caption(panel.title.as_str(), ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x_range, y_range)
            .map_err(|e| plot_error(e.to_string()))?;
        let label = |log: bool| {
            move |v: &f64| {
                if log {
                    format!("{:.1e}", 10f64.powf(*v))
                } else {
                    format!("{v:.3}")
                }
            }
        };
        let (x_format, y_format) = (label(panel.log_x), label(panel.log_y));
        chart
            .configure_mesh()
            .x_desc(panel.x_label.as_str())
            .y_desc(panel.y_label.as_str())
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .draw()
            .map_err(|e| plot_error(e.to_string()))?;
        for (series, points) in panel.series.iter().zip(&mapped) {
            let color = PALETTE[series.color % PALETTE.len()];
            let style = color.stroke_width(series.width.max(1));
            let marker = series.marker;
            if series.width > 0 {
                chart
                    .draw_series(LineSeries::new(points.clone(), style))
                    .map_err(|e| plot_error(e.to_string()))?
                    .label(series.label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            }
            let labelled = series.width == 0;
            let drawn = match marker {
                Marker::None => None,
                Marker::Circle => Some(
                    chart
                        .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
                        .map_err(|e| plot_error(e.to_string()))?,
                ),
                Marker::Cross => Some(
                    chart
                        .draw_series(points.iter().map(|&p| Cross::new(p, 5, style)))
                        .map_err(|e| plot_error(e.to_string()))?,
                ),
                Marker::Triangle => Some(
                    chart
                        .draw_series(points.iter().map(|&p| TriangleMarker::new(p, 6, style)))
                        .map_err(|e| plot_error(e.to_string()))?,
                ),
            };
            if let (true, Some(drawn)) = (labelled, drawn) {
                let drawn = drawn.label(series.label.as_str());
                match marker {
                    Marker::Cross => {
                        drawn.legend(move |(x, y)| Cross::new((x + 9, y), 5, style));
                    }
                    Marker::Triangle => {
                        drawn.legend(move |(x, y)| TriangleMarker::new((x + 9, y), 6, style));
                    }
                    _ => {
                        drawn.legend(move |(x, y)| Circle::new((x + 9, y), 4, color.filled()));
                    }
                }
            }
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
