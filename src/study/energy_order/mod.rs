//! `harbor study energy-order`: Kotyczka & Lefèvre Fig. 3/5, for any family that can
//! supply a reference of its continuous system. For each scheme and step size, the
//! relative errors of total supplied and stored energy and of the final state,
//!
//! ```text
//!   ε̃ = (ΔH̃_tot − ΔH_tot) / ΔH_tot,   ε̄ = (ΔH̄_tot − ΔH_tot) / ΔH_tot,
//!   δx = ‖x_N − x(T)‖_∞ / ‖x(T)‖_∞,
//! ```
//!
//! against ΔH_tot = H(x(T)) − H(x(0)) and x(T) of the continuous system (the family's
//! [`EnergyOrderSubject::reference`]: the exact flow of a linear system, an order-16
//! reference integration of a nonlinear one), and the least-squares slopes of log|ε| and
//! log δx over log h in the asymptotic regime: over the finest `fit_decades` decades of h
//! whose energy errors (both of them) exceed `fit_floor`, below which rounding dominates.
//!
//! Everything runs on the CPU in f64 (the reference stepper of each scheme), one system
//! at a time. [`prepare`] checks the whole sweep and bounds its work before any of it is
//! done; [`Prepared::run`] then does it, reporting progress. A `[system]` kind takes part
//! through [`crate::families::SystemKind::energy_order`].

use crate::error::{Error, Result};
use crate::io::config::Config;
use crate::io::study_spec::SchemeChoice;

mod report;

pub use report::ZERO_ERROR_FLOOR;

/// The most scheme steps a study may take, summed over every (scheme, h) point. At n = 2 a
/// step takes well under a microsecond (linear) to a few microseconds (nonlinear, Newton);
/// the inputs sampled for one point take steps × stages × inputs × 8 bytes, so this also
/// bounds the memory of a point.
pub const MAX_SWEEP_STEPS: u64 = 10_000_000;

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
    /// ‖x_N − x(T)‖_∞ / ‖x(T)‖_∞.
    pub state_error: f64,
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
    /// Over the fitted points whose state error is above the floor; NaN when fewer than
    /// two are.
    pub state_slope: f64,
    pub points: usize,
    pub h_min: f64,
    pub h_max: f64,
}

/// The whole study.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyOrderStudy {
    /// What the errors are measured against ("exact flow", …).
    pub reference: String,
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

/// Progress of a running study: `done` of `total` work units (reference work, then scheme
/// steps), and what is being done.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    pub done: u64,
    pub total: u64,
    pub stage: &'a str,
}

/// The continuous system's solution the errors are measured against.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// x(T).
    pub final_state: Vec<f64>,
    /// ΔH_tot = H(x(T)) − H(x(0)).
    pub energy_change: f64,
}

/// What one (scheme, h) point of the sweep produced.
#[derive(Debug, Clone, PartialEq)]
pub struct PointRun {
    /// The scheme's label (`gauss-2`); the part before the last `-` groups the plot panels.
    pub scheme: String,
    /// Its classical order.
    pub order: usize,
    /// Σ_k ΔH̃^k, the discrete supplied energy (port minus dissipated).
    pub supplied_total: f64,
    /// Σ_k ΔH̄^k, the discrete change of stored energy.
    pub stored_total: f64,
    /// x_N.
    pub final_state: Vec<f64>,
}

/// What an energy-order study needs of a family: the schemes it sweeps by default, the
/// checks and work bound of a sweep, the reference of the continuous system, and one
/// point's run. Built per config by [`crate::families::SystemKind::energy_order`].
pub trait EnergyOrderSubject {
    /// The schemes swept when `study.schemes` is not given.
    fn default_schemes(&self) -> Vec<SchemeChoice>;

    /// Checks every (scheme, h) point (`study.schemes[i]`, `study.h[j]` with `steps[j]`
    /// steps) before any work: the scheme applies to the system, the plan assembles, the
    /// reference's work is within the family's cap. Errors name the field at fault.
    fn check_sweep(&self, schemes: &[SchemeChoice], steps: &[usize]) -> Result<()>;

    /// The reference's work units, for progress (0 where they are not known in advance).
    fn reference_work(&self) -> u64;

    /// One line on what the reference is and what it costs, for the command's header.
    fn describe_reference(&self) -> String;

    /// What the errors are measured against, as the table's first line names it.
    fn reference_name(&self) -> &'static str;

    /// The reference solution at t_end, calling `progress` with the work units done.
    fn reference(&self, progress: &mut dyn FnMut(u64)) -> Result<Reference>;

    /// Runs `scheme` at step size `study.h[index]` on the CPU reference path in f64.
    fn run_point(&self, scheme: SchemeChoice, index: usize) -> Result<PointRun>;
}

/// A study whose whole sweep has been checked and whose work is within the caps.
pub struct Prepared<'c> {
    config: &'c Config,
    subject: Box<dyn EnergyOrderSubject + 'c>,
    /// The schemes swept: `study.schemes`, or the family's default.
    pub schemes: Vec<SchemeChoice>,
    steps: Vec<usize>,
    /// Scheme steps over the whole sweep, Σ_schemes Σ_h t_end / h.
    pub sweep_steps: u64,
}

/// Runs the sweep of `config.study` on the CPU (f64) reference path: [`prepare`] then
/// [`Prepared::run`] without progress reports.
pub fn run(config: &Config) -> Result<EnergyOrderStudy> {
    prepare(config)?.run(&mut |_| {})
}

/// Checks everything the study needs before any work, in this order, and refuses:
///
/// - an `[ensemble]` section. The study measures one system's errors against the
///   continuous solution of that same system; with an ensemble, the integrated member 0 is
///   a perturbed system and the "error" is the perturbation, a constant that looks like a
///   converged error of slope 0. Studying the nominal system instead would silently ignore
///   part of the config, so the section is refused;
/// - a `[system]` kind without a reference of its continuous system;
/// - `study.schemes` empty, fewer than two `study.h`, a non-finite or negative
///   `study.fit_floor`, a non-positive `study.fit_decades` (when the config was loaded);
/// - every `study.h[i]` that does not divide `scheme.t_end` into a whole number of steps
///   (at most 2³² − 1);
/// - a sweep of more than [`MAX_SWEEP_STEPS`] scheme steps;
/// - whatever the family's [`EnergyOrderSubject::check_sweep`] refuses: a scheme that does
///   not integrate the system, a point whose plan does not assemble, reference work
///   beyond the family's cap.
pub fn prepare(config: &Config) -> Result<Prepared<'_>> {
    if let Some(ensemble) = &config.ensemble {
        let members = ensemble
            .get("members")
            .map_or_else(|| "an unknown number of".to_string(), |m| m.to_string());
        return Err(Error::invalid(
            "ensemble",
            format!(
                "energy-order studies exactly one system, the [system] whose continuous solution is the reference, but [ensemble] draws {members} perturbed member(s); member 0 would be compared with the solution of the unperturbed system — remove the [ensemble] section"
            ),
        ));
    }
    let subject = config.system.energy_order(config)?;
    let t_end = config.scheme.t_end;
    let study = &config.study;
    let schemes = study
        .schemes
        .clone()
        .unwrap_or_else(|| subject.default_schemes());
    // `[study]` on its own was checked when the config was loaded (`StudySpec::check`);
    // what depends on the system and t_end is checked here.
    let steps = (0..study.h.len())
        .map(|i| study.step_count(i, t_end))
        .collect::<Result<Vec<_>>>()?;
    let sweep_steps = schemes.len() as u64 * steps.iter().map(|&n| n as u64).sum::<u64>();
    if sweep_steps > MAX_SWEEP_STEPS {
        let (finest, finest_steps) = study
            .h
            .iter()
            .zip(&steps)
            .min_by(|a, b| a.0.total_cmp(b.0))
            .map_or((f64::NAN, 0), |(&h, &n)| (h, n));
        return Err(Error::invalid(
            "study.h",
            format!(
                "the sweep would take {sweep_steps} scheme steps in all (Σ over {} point(s) of t_end / h; the finest h = {finest} alone takes {finest_steps} per scheme), above the cap of {MAX_SWEEP_STEPS} (energy_order::MAX_SWEEP_STEPS); drop the smallest step sizes from study.h or shorten scheme.t_end",
                schemes.len() * steps.len()
            ),
        ));
    }
    subject.check_sweep(&schemes, &steps)?;
    Ok(Prepared {
        config,
        subject,
        schemes,
        steps,
        sweep_steps,
    })
}

impl Prepared<'_> {
    /// Total work units of [`Self::run`]: reference work plus scheme steps.
    pub fn total_work(&self) -> u64 {
        self.subject.reference_work() + self.sweep_steps
    }

    /// The family's line on the reference and its cost.
    pub fn describe_reference(&self) -> String {
        self.subject.describe_reference()
    }

    /// The number of (scheme, h) points.
    pub fn points(&self) -> usize {
        self.schemes.len() * self.steps.len()
    }

    /// Computes the reference, then every (scheme, h) point on the CPU reference path in
    /// f64, calling `progress` as work units complete.
    pub fn run(&self, progress: &mut dyn FnMut(Progress)) -> Result<EnergyOrderStudy> {
        let config = self.config;
        let t_end = config.scheme.t_end;
        let total = self.total_work();
        let name = self.subject.reference_name();
        let reference = self.subject.reference(&mut |done| {
            progress(Progress {
                done,
                total,
                stage: name,
            })
        })?;
        let change = reference.energy_change;
        if !change.is_finite() || reference.final_state.iter().any(|v| !v.is_finite()) {
            return Err(Error::Numerical {
                context: name.into(),
                problem: format!(
                    "ΔH_tot = {change}, x(T) = {:?}: the continuous solution overflows f64 over t_end = {t_end}",
                    reference.final_state
                ),
            });
        }
        if change.abs() < 1e-300 {
            return Err(Error::invalid(
                "study",
                format!(
                    "the continuous energy change ΔH_tot is {change:e}, so relative energy errors are undefined"
                ),
            ));
        }
        let state_scale = max_abs(&reference.final_state).max(f64::MIN_POSITIVE);
        let mut done = self.subject.reference_work();
        let mut points = Vec::new();
        let mut fits = Vec::new();
        for choice in &self.schemes {
            let mut scheme_points = Vec::new();
            for (index, (&h, &steps)) in config.study.h.iter().zip(&self.steps).enumerate() {
                let stage = format!("{}-{} h = {h}", choice.family.name(), choice.stages);
                progress(Progress {
                    done,
                    total,
                    stage: &stage,
                });
                let run = self.subject.run_point(*choice, index)?;
                done += steps as u64;
                let difference: Vec<f64> = run
                    .final_state
                    .iter()
                    .zip(&reference.final_state)
                    .map(|(a, b)| a - b)
                    .collect();
                scheme_points.push(OrderPoint {
                    scheme: run.scheme,
                    order: run.order,
                    h,
                    steps,
                    supplied_total: run.supplied_total,
                    stored_total: run.stored_total,
                    supplied_error: (run.supplied_total - change) / change,
                    stored_error: (run.stored_total - change) / change,
                    state_error: max_abs(&difference) / state_scale,
                    fitted: false,
                });
            }
            let floor = config.study.fit_floor;
            mark_fit_window(&mut scheme_points, floor, config.study.fit_decades);
            if let Some(fit) = fit_of(&scheme_points, floor) {
                fits.push(fit);
            }
            points.extend(scheme_points);
        }
        progress(Progress {
            done,
            total,
            stage: "done",
        });
        Ok(EnergyOrderStudy {
            reference: name.to_string(),
            reference_energy_change: change,
            points,
            fits,
        })
    }
}

/// max_i |v_i|.
fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}

/// The slopes of one scheme's fitted points; `None` with fewer than two.
fn fit_of(points: &[OrderPoint], floor: f64) -> Option<OrderFit> {
    let used: Vec<&OrderPoint> = points.iter().filter(|p| p.fitted).collect();
    if used.len() < 2 {
        return None;
    }
    let slope_of = |points: &[&OrderPoint], f: fn(&OrderPoint) -> f64| {
        let log_h: Vec<f64> = points.iter().map(|p| p.h.ln()).collect();
        let log_e: Vec<f64> = points.iter().map(|p| f(p).abs().ln()).collect();
        slope(&log_h, &log_e)
    };
    let state: Vec<&OrderPoint> = used
        .iter()
        .copied()
        .filter(|p| p.state_error > floor)
        .collect();
    Some(OrderFit {
        scheme: used[0].scheme.clone(),
        expected_order: used[0].order,
        supplied_slope: slope_of(&used, |p| p.supplied_error),
        stored_slope: slope_of(&used, |p| p.stored_error),
        state_slope: if state.len() >= 2 {
            slope_of(&state, |p| p.state_error)
        } else {
            f64::NAN
        },
        points: used.len(),
        h_min: used.iter().map(|p| p.h).fold(f64::INFINITY, f64::min),
        h_max: used.iter().map(|p| p.h).fold(0.0, f64::max),
    })
}

/// Marks the points of one scheme that enter the fit: both energy errors above `floor`,
/// and h within `decades` decades of the finest such point.
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

/// Wraps a point's plan error so it names the scheme that needs it:
/// `… (needed by study.schemes[i] = gauss-2; remove it from study.schemes or change the
/// system)`.
pub fn needed_by(error: Error, index: usize, scheme: SchemeChoice) -> Error {
    match error {
        Error::Invalid { field, problem } => Error::invalid(
            field,
            format!(
                "{problem} (needed by study.schemes[{index}] = {}-{}; remove it from study.schemes or change the system)",
                scheme.family.name(),
                scheme.stages
            ),
        ),
        other => other,
    }
}
