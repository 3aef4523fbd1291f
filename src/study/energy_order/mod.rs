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
//!
//! Everything runs on the CPU in f64 (the reference stepper of the collocation schemes),
//! one system at a time. [`prepare`] checks the whole sweep and bounds its work before any
//! of it is done; [`Prepared::run`] then does it, reporting progress.

use crate::backend::cpu;
use crate::error::{Error, Result};
use crate::io::config::Config;
use crate::kernels::CpuPath;
use crate::linear_ph::LinearFlow;
use crate::linear_ph::LinearPhConfig;
use crate::linear_ph::{EnergyTotals, LinearPhMember};
use crate::model::Signal;
use crate::plan::MemberResult;
use crate::tableau::Scheme;

mod report;
mod work;

pub use report::ZERO_ERROR_FLOOR;
use work::check_work;
pub use work::{MAX_REFERENCE_WORK, MAX_SWEEP_STEPS, WorkEstimate};

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

/// Progress of a running study: `done` of `total` work units (reference quadrature nodes,
/// then scheme steps), and what is being done.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    pub done: u64,
    pub total: u64,
    pub stage: &'a str,
}

/// A study whose whole sweep has been checked and whose work is within the caps.
#[derive(Debug, Clone)]
pub struct Prepared<'c> {
    config: &'c Config,
    member: LinearPhMember,
    signals: Vec<Signal>,
    schemes: Vec<Scheme>,
    steps: Vec<usize>,
    /// The bound of the work, as checked against the caps.
    pub estimate: WorkEstimate,
    /// The exact number of reference quadrature nodes (≤ `estimate.reference_nodes`).
    pub reference_nodes: u64,
}

/// Runs the sweep of `config.study` on the CPU (f64) reference path: [`prepare`] then
/// [`Prepared::run`] without progress reports.
pub fn run(config: &Config) -> Result<EnergyOrderStudy> {
    prepare(config)?.run(&mut |_| {})
}

/// Checks everything the study needs before any work, in this order, and refuses:
///
/// - an `[ensemble]` section. The study measures one system's energy errors against the
///   exact flow of that same system ([`LinearFlow`] of `[system]`); with an ensemble, the
///   integrated member 0 is a perturbed system and the "error" is the perturbation, a
///   constant that looks like a converged error of slope 0. Studying the nominal system
///   instead would silently ignore part of the config, so the section is refused;
/// - an invalid system or input, `study.schemes` empty, fewer than two `study.h`, a
///   non-finite or negative `study.fit_floor`, a non-positive `study.fit_decades`;
/// - every `study.h[i]` that is not finite and positive, does not divide `scheme.t_end`
///   into a whole number of steps (at most 2³² − 1), or repeats an earlier one; every
///   `study.schemes[i]` with unsupported stages or listed twice;
/// - work beyond the caps ([`WorkEstimate`]): the reference flow's bound over
///   [`MAX_REFERENCE_WORK`], or the sweep's scheme steps over [`MAX_SWEEP_STEPS`];
/// - every (scheme, h) point whose plan does not assemble (e.g. the Lobatto pair on a
///   system not in canonical form, inputs that are not finite at some stage time).
pub fn prepare(config: &Config) -> Result<Prepared<'_>> {
    if let Some(ensemble) = &config.ensemble {
        let members = ensemble
            .get("members")
            .map_or_else(|| "an unknown number of".to_string(), |m| m.to_string());
        return Err(Error::invalid(
            "ensemble",
            format!(
                "energy-order studies exactly one system, the [system] whose exact flow is the reference, but [ensemble] draws {members} perturbed member(s); member 0 would be compared with the flow of the unperturbed system — remove the [ensemble] section"
            ),
        ));
    }
    let member = config.member()?;
    let signals = config.signals()?;
    let t_end = config.scheme.t_end;
    let study = &config.study;
    // `[study]` on its own was checked when the config was loaded (`StudySpec::check`);
    // what depends on the system and t_end is checked here.
    let steps = (0..study.h.len())
        .map(|i| study.step_count(i, t_end))
        .collect::<Result<Vec<_>>>()?;
    let schemes = study
        .schemes
        .iter()
        .map(|choice| Scheme::new(choice.family, choice.stages))
        .collect::<Result<Vec<_>>>()?;
    let sweep_steps = schemes.len() as u64 * steps.iter().map(|&n| n as u64).sum::<u64>();
    let flow = LinearFlow::new(&member.system, &signals);
    let estimate = WorkEstimate::of(
        &flow,
        member.system.states(),
        t_end,
        sweep_steps,
        schemes.len() * steps.len(),
    );
    check_work(&estimate, &signals, &study.h, &steps, t_end)?;
    let reference_nodes = flow.nodes(t_end);
    // Every point's plan is assembled (and dropped) now, so a point that cannot run is
    // reported before the first one runs.
    for (i, (choice, scheme)) in study.schemes.iter().zip(&schemes).enumerate() {
        for index in 0..study.h.len() {
            config
                .study_plan(*choice, index)
                .map_err(|e| match e {
                    Error::Invalid { field, problem } => Error::invalid(
                        field,
                        format!(
                            "{problem} (needed by study.schemes[{i}] = {}; remove it from study.schemes or change the system)",
                            scheme.label()
                        ),
                    ),
                    other => other,
                })?;
        }
    }
    Ok(Prepared {
        config,
        member,
        signals,
        schemes,
        steps,
        estimate,
        reference_nodes,
    })
}

impl Prepared<'_> {
    /// Total work units of [`Self::run`]: reference quadrature nodes plus scheme steps.
    pub fn total_work(&self) -> u64 {
        self.reference_nodes + self.estimate.sweep_steps
    }

    /// Computes the reference ΔH_tot, then every (scheme, h) point on the CPU reference
    /// path in f64, calling `progress` as work units complete.
    pub fn run(&self, progress: &mut dyn FnMut(Progress)) -> Result<EnergyOrderStudy> {
        let config = self.config;
        let t_end = config.scheme.t_end;
        let total = self.total_work();
        let flow = LinearFlow::new(&self.member.system, &self.signals);
        let reference = flow.energy_change_with_progress(&self.member.x0, t_end, &mut |done| {
            progress(Progress {
                done,
                total,
                stage: "exact reference flow",
            })
        });
        if !reference.is_finite() {
            return Err(Error::Numerical {
                context: "exact reference flow".into(),
                problem: format!(
                    "ΔH_tot = {reference}: the exact solution overflows f64 over t_end = {t_end}"
                ),
            });
        }
        if reference.abs() < 1e-300 {
            return Err(Error::invalid(
                "study",
                format!(
                    "the exact energy change ΔH_tot is {reference:e}, so relative energy errors are undefined"
                ),
            ));
        }
        let mut done = self.reference_nodes;
        let mut points = Vec::new();
        let mut fits = Vec::new();
        for (choice, scheme) in config.study.schemes.iter().zip(&self.schemes) {
            let mut scheme_points = Vec::new();
            for (index, (&h, &steps)) in config.study.h.iter().zip(&self.steps).enumerate() {
                let stage = format!("{} h = {h}", scheme.label());
                progress(Progress {
                    done,
                    total,
                    stage: &stage,
                });
                let mut plan = config.study_plan(*choice, index)?;
                plan.grid.record_every = plan.grid.steps;
                let mut results: Vec<MemberResult> = Vec::new();
                cpu::run_into(&plan, CpuPath::Reference, &mut results)?;
                done += steps as u64;
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
        progress(Progress {
            done,
            total,
            stage: "done",
        });
        Ok(EnergyOrderStudy {
            reference_energy_change: reference,
            points,
            fits,
        })
    }
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
