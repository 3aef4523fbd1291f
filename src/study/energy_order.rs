//! `harbor study energy-order`: Kotyczka & Lefèvre Fig. 3/5. For each scheme and step size,
//! the relative errors of total supplied and stored energy,
//!
//! ```text
//!   ε̃ = (ΔH̃_tot − ΔH_tot) / ΔH_tot,   ε̄ = (ΔH̄_tot − ΔH_tot) / ΔH_tot,
//! ```
//!
//! against ΔH_tot = H(x(T)) − H(x(0)) of the continuous system from [`LinearFlow`], and the
//! least-squares slope of log|ε| over log h in the asymptotic regime: over the finest
//! `fit_decades` decades of h whose errors (both of them) exceed `fit_floor`, below which
//! rounding dominates.

use crate::backend::cpu;
use crate::error::{Error, Result};
use crate::io::config::Config;
use crate::io::plot::{Marker, Panel, Series, panels_svg};
use crate::kernels::CpuPath;
use crate::plan::{EnergyTotals, MemberResult};
use crate::reference::LinearFlow;
use crate::tableau::Scheme;

/// One (scheme, h) point.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderPoint {
    pub scheme: String,
    pub order: usize,
    pub h: f64,
    pub steps: usize,
    pub supplied_total: f64,
    pub stored_total: f64,
    pub supplied_error: f64,
    pub stored_error: f64,
    /// Whether the point enters the slope fit.
    pub fitted: bool,
}

/// The fitted slopes of one scheme.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderFit {
    pub scheme: String,
    pub expected_order: usize,
    pub supplied_slope: f64,
    pub stored_slope: f64,
    pub points: usize,
    pub h_min: f64,
    pub h_max: f64,
}

/// The whole study.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyOrderStudy {
    pub reference_energy_change: f64,
    pub points: Vec<OrderPoint>,
    pub fits: Vec<OrderFit>,
}

/// Least-squares slope of y over x.
pub fn slope(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// Runs the sweep of `config.study` on the CPU reference path.
pub fn run(config: &Config) -> Result<EnergyOrderStudy> {
    let member = config.member()?;
    let signals = config.signals()?;
    let t_end = config.scheme.t_end;
    let flow = LinearFlow::new(&member.system, &signals);
    let reference = flow.energy_change(&member.x0, t_end);
    if reference.abs() < 1e-300 {
        return Err(Error::invalid(
            "study",
            "the exact energy change ΔH_tot is zero, so relative energy errors are undefined",
        ));
    }
    if config.study.schemes.is_empty() || config.study.h.len() < 2 {
        return Err(Error::invalid(
            "study",
            "needs at least one scheme and two step sizes",
        ));
    }
    let mut points = Vec::new();
    let mut fits = Vec::new();
    for choice in &config.study.schemes {
        let scheme = Scheme::new(choice.family, choice.stages)?;
        let mut scheme_points = Vec::new();
        for &h in &config.study.h {
            let mut plan = config.plan_with(choice.family, choice.stages, h)?;
            plan.grid.record_every = plan.grid.steps;
            let mut results: Vec<MemberResult> = Vec::new();
            cpu::run_into(&plan, CpuPath::Reference, &mut results)?;
            let totals = EnergyTotals::of(&results[0]);
            let supplied_error = (totals.supplied - reference) / reference;
            let stored_error = (totals.stored - reference) / reference;
            scheme_points.push(OrderPoint {
                scheme: scheme.label(),
                order: scheme.order,
                h,
                steps: plan.grid.steps,
                supplied_total: totals.supplied,
                stored_total: totals.stored,
                supplied_error,
                stored_error,
                fitted: false,
            });
        }
        mark_fit_window(
            &mut scheme_points,
            config.study.fit_floor,
            config.study.fit_decades,
        );
        let used: Vec<&OrderPoint> = scheme_points.iter().filter(|p| p.fitted).collect();
        if used.len() >= 2 {
            let log_h: Vec<f64> = used.iter().map(|p| p.h.ln()).collect();
            let log = |f: &dyn Fn(&OrderPoint) -> f64| -> Vec<f64> {
                used.iter().map(|p| f(p).abs().ln()).collect()
            };
            fits.push(OrderFit {
                scheme: scheme.label(),
                expected_order: scheme.order,
                supplied_slope: slope(&log_h, &log(&|p| p.supplied_error)),
                stored_slope: slope(&log_h, &log(&|p| p.stored_error)),
                points: used.len(),
                h_min: used.iter().map(|p| p.h).fold(f64::INFINITY, f64::min),
                h_max: used.iter().map(|p| p.h).fold(0.0, f64::max),
            });
        }
        points.extend(scheme_points);
    }
    Ok(EnergyOrderStudy {
        reference_energy_change: reference,
        points,
        fits,
    })
}

/// Marks the points of one scheme that enter the fit: both errors above `floor`, and h
/// within `decades` decades of the finest such point.
fn mark_fit_window(points: &mut [OrderPoint], floor: f64, decades: f64) {
    let above = |p: &OrderPoint| p.supplied_error.abs() > floor && p.stored_error.abs() > floor;
    let finest = points
        .iter()
        .filter(|p| above(p))
        .map(|p| p.h)
        .fold(f64::INFINITY, f64::min);
    let coarsest = finest * 10f64.powf(decades) * (1.0 + 1e-12);
    for p in points.iter_mut() {
        p.fitted = above(p) && p.h <= coarsest;
    }
}

impl EnergyOrderStudy {
    /// The table printed by the command: one row per point, then the fitted slopes.
    pub fn table(&self) -> String {
        let mut out = format!("exact ΔH_tot = {:.15e}\n\n", self.reference_energy_change);
        out += &format!(
            "{:<16} {:>8} {:>7} {:>12} {:>12} {:>4}\n",
            "scheme", "h", "steps", "|ε̃| supplied", "|ε̄| stored", "fit"
        );
        for p in &self.points {
            out += &format!(
                "{:<16} {:>8} {:>7} {:>12.3e} {:>12.3e} {:>4}\n",
                p.scheme,
                p.h,
                p.steps,
                p.supplied_error.abs(),
                p.stored_error.abs(),
                if p.fitted { "yes" } else { "no" }
            );
        }
        out += &format!(
            "\n{:<16} {:>6} {:>15} {:>13} {:>7} {:>16}\n",
            "scheme", "order", "slope supplied", "slope stored", "points", "h range"
        );
        for f in &self.fits {
            out += &format!(
                "{:<16} {:>6} {:>15.3} {:>13.3} {:>7} {:>16}\n",
                f.scheme,
                f.expected_order,
                f.supplied_slope,
                f.stored_slope,
                f.points,
                format!("[{}, {}]", f.h_min, f.h_max)
            );
        }
        out
    }

    /// CSV of the points.
    pub fn points_csv(&self) -> String {
        let mut out = String::from(
            "scheme,order,h,steps,supplied_total,stored_total,supplied_rel_error,stored_rel_error,fitted\n",
        );
        for p in &self.points {
            out += &format!(
                "{},{},{},{},{:.17e},{:.17e},{:.17e},{:.17e},{}\n",
                p.scheme,
                p.order,
                p.h,
                p.steps,
                p.supplied_total,
                p.stored_total,
                p.supplied_error,
                p.stored_error,
                p.fitted
            );
        }
        out
    }

    /// CSV of the fitted slopes.
    pub fn fits_csv(&self) -> String {
        let mut out =
            String::from("scheme,expected_order,supplied_slope,stored_slope,points,h_min,h_max\n");
        for f in &self.fits {
            out += &format!(
                "{},{},{:.6},{:.6},{},{},{}\n",
                f.scheme,
                f.expected_order,
                f.supplied_slope,
                f.stored_slope,
                f.points,
                f.h_min,
                f.h_max
            );
        }
        out
    }
}

impl EnergyOrderStudy {
    /// The log–log plot of Kotyczka & Lefèvre Fig. 3/5: one panel per scheme family, the
    /// relative supplied-energy error as thick lines with circles and the stored-energy
    /// error as thin lines with crosses (errors of exactly zero are left out).
    pub fn panels(&self) -> Vec<Panel> {
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
                    let curve = |f: &dyn Fn(&OrderPoint) -> f64| -> Vec<(f64, f64)> {
                        self.points
                            .iter()
                            .filter(|p| p.scheme == *scheme)
                            .map(|p| (p.h, f(p).abs()))
                            .collect()
                    };
                    series.push(Series {
                        label: format!("{scheme} supplied"),
                        points: curve(&|p| p.supplied_error),
                        color,
                        width: 2,
                        marker: Marker::Circle,
                    });
                    series.push(Series {
                        label: format!("{scheme} stored"),
                        points: curve(&|p| p.stored_error),
                        color,
                        width: 1,
                        marker: Marker::Cross,
                    });
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
    pub fn svg(&self, path: &std::path::Path, title: &str) -> Result<()> {
        panels_svg(path, title, &self.panels())
    }
}
