//! What an energy-order study prints, writes and draws: the table, the CSV files and the
//! convergence plot.

use super::{EnergyOrderStudy, OrderPoint};
#[cfg(feature = "cli")]
use crate::error::Result;
#[cfg(feature = "cli")]
use crate::io::plot::panels_svg;
use crate::io::plot::{Marker, Panel, Series};

impl EnergyOrderStudy {
    /// The table printed by the command: one row per point, then the fitted slopes.
    pub fn table(&self) -> String {
        let mut out = format!(
            "CPU f64 reference path; ΔH_tot of the {} = {:.15e}\n\n",
            self.reference, self.reference_energy_change
        );
        out += &format!(
            "{:<20} {:>8} {:>7} {:>12} {:>12} {:>12} {:>4}\n",
            "scheme", "h", "steps", "|ε̃| supplied", "|ε̄| stored", "δx state", "fit"
        );
        for p in &self.points {
            out += &format!(
                "{:<20} {:>8} {:>7} {:>12.3e} {:>12.3e} {:>12.3e} {:>4}\n",
                p.scheme,
                p.h,
                p.steps,
                p.supplied_error.abs(),
                p.stored_error.abs(),
                p.state_error,
                if p.fitted { "yes" } else { "no" }
            );
        }
        out += &format!(
            "\n{:<20} {:>6} {:>15} {:>13} {:>12} {:>7} {:>16}\n",
            "scheme", "order", "slope supplied", "slope stored", "slope state", "points", "h range"
        );
        for f in &self.fits {
            out += &format!(
                "{:<20} {:>6} {:>15.3} {:>13.3} {:>12.3} {:>7} {:>16}\n",
                f.scheme,
                f.expected_order,
                f.supplied_slope,
                f.stored_slope,
                f.state_slope,
                f.points,
                format!("[{}, {}]", f.h_min, f.h_max)
            );
        }
        out
    }

    /// CSV of the points.
    pub fn points_csv(&self) -> String {
        let mut out = String::from(
            "scheme,order,h,steps,supplied_total,stored_total,supplied_rel_error,stored_rel_error,state_rel_error,fitted\n",
        );
        for p in &self.points {
            out += &format!(
                "{},{},{},{},{:.17e},{:.17e},{:.17e},{:.17e},{:.17e},{}\n",
                p.scheme,
                p.order,
                p.h,
                p.steps,
                p.supplied_total,
                p.stored_total,
                p.supplied_error,
                p.stored_error,
                p.state_error,
                p.fitted
            );
        }
        out
    }

    /// CSV of the fitted slopes.
    pub fn fits_csv(&self) -> String {
        let mut out = String::from(
            "scheme,expected_order,supplied_slope,stored_slope,state_slope,points,h_min,h_max\n",
        );
        for f in &self.fits {
            out += &format!(
                "{},{},{:.6},{:.6},{:.6},{},{},{}\n",
                f.scheme,
                f.expected_order,
                f.supplied_slope,
                f.stored_slope,
                f.state_slope,
                f.points,
                f.h_min,
                f.h_max
            );
        }
        out
    }
}

/// Which relative error of a point a plot series shows.
type ErrorOf = fn(&OrderPoint) -> f64;

/// The highest level at which an error of exactly zero is drawn on the log axis: below the
/// f64 round-off of a relative error (ε = 2.2e-16), so it reads as "below round-off".
pub const ZERO_ERROR_FLOOR: f64 = 1e-17;

impl EnergyOrderStudy {
    /// Whether some point has a supplied or stored error of exactly zero.
    pub fn has_zero_errors(&self) -> bool {
        self.points
            .iter()
            .any(|p| p.supplied_error == 0.0 || p.stored_error == 0.0)
    }

    /// Where errors of exactly zero are drawn on the log axis,
    ///
    /// ```text
    ///   floor = min(ZERO_ERROR_FLOOR, min_{ε ≠ 0} |ε| / 10),
    /// ```
    ///
    /// a decade below every non-zero error shown, so they stay distinguishable.
    pub fn zero_error_floor(&self) -> f64 {
        let smallest = self
            .points
            .iter()
            .flat_map(|p| [p.supplied_error.abs(), p.stored_error.abs()])
            .filter(|e| *e > 0.0)
            .fold(f64::INFINITY, f64::min);
        ZERO_ERROR_FLOOR.min(smallest / 10.0)
    }

    /// The log–log plot of Kotyczka & Lefèvre Fig. 3/5: one panel per scheme family, the
    /// relative supplied-energy error |ε̃| as thick lines with circles and the stored-energy
    /// error |ε̄| as thin lines with crosses. A log axis cannot show an error of exactly
    /// zero, so such points are left off the lines and drawn as triangles at
    /// [`Self::zero_error_floor`], in a series of their own labelled "= 0, drawn at …".
    pub fn panels(&self) -> Vec<Panel> {
        let floor = self.zero_error_floor();
        let mut families: Vec<String> = Vec::new();
        for p in &self.points {
            let family = p
                .scheme
                .rsplit_once('-')
                .map_or(p.scheme.clone(), |(f, _)| f.to_string());
            if !families.contains(&family) {
                families.push(family);
            }
        }
        families
            .iter()
            .map(|family| {
                let mut schemes: Vec<&str> = self
                    .points
                    .iter()
                    .filter(|p| p.scheme.starts_with(&format!("{family}-")))
                    .map(|p| p.scheme.as_str())
                    .collect();
                schemes.dedup();
                let mut series = Vec::new();
                for (color, scheme) in schemes.iter().enumerate() {
                    // (h, |ε|) of the non-zero errors, and (h, floor) of the zero ones.
                    let curve = |f: ErrorOf, zero: bool| -> Vec<(f64, f64)> {
                        self.points
                            .iter()
                            .filter(|p| p.scheme == *scheme && (f(p) == 0.0) == zero)
                            .map(|p| (p.h, if zero { floor } else { f(p).abs() }))
                            .collect()
                    };
                    let kinds: [(&str, ErrorOf, u32, Marker); 2] = [
                        ("supplied", |p| p.supplied_error, 2, Marker::Circle),
                        ("stored", |p| p.stored_error, 1, Marker::Cross),
                    ];
                    for (what, f, width, marker) in kinds {
                        series.push(Series {
                            label: format!("{scheme} {what}"),
                            points: curve(f, false),
                            color,
                            width,
                            marker,
                        });
                        let zeros = curve(f, true);
                        if !zeros.is_empty() {
                            series.push(Series {
                                label: format!("{scheme} {what} = 0, drawn at {floor:.0e}"),
                                points: zeros,
                                color,
                                width: 0,
                                marker: Marker::Triangle,
                            });
                        }
                    }
                }
                Panel {
                    title: family.clone(),
                    x_label: "step size h".into(),
                    y_label: "relative energy error".into(),
                    log_x: true,
                    log_y: true,
                    series,
                }
            })
            .collect()
    }

    /// Writes [`Self::panels`] to an SVG file.
    #[cfg(feature = "cli")]
    pub fn svg(&self, path: &std::path::Path, title: &str) -> Result<()> {
        panels_svg(path, title, &self.panels())
    }
}
