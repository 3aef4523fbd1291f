//! Riemannian conjugate gradients with Armijo backtracking, from many starting points at
//! once: every line-search trial of every start goes into one batch of evaluations.
//!
//! # The iteration (per start)
//!
//! With g_k = grad 𝒥(w_k) (the Riemannian gradient, [`super::manifold`]) and the direction
//! η_0 = −g_0:
//!
//! 1. **Armijo backtracking, refined.** Trial steps σ, βσ, β²σ, … (β = `backtrack`,
//!    `trials` of them per batch, the next batch continuing where the last stopped). Of the
//!    trials that pass the Armijo test 𝒥(R_{w_k}(σ η_k)) ≤ 𝒥(w_k) + c σ ⟨g_k, η_k⟩
//!    (c = `armijo`) the one of lowest cost is accepted. Its evaluation brings the gradient
//!    along, so the slope φ'(σ) of φ(t) = 𝒥(R_{w_k}(t η_k)) is known as well as
//!    φ'(0) = ⟨g_k, η_k⟩; with `refine`, the zero of the secant through them,
//!    t* = σ φ'(0) / (φ'(0) − φ'(σ)) (the line minimum of a quadratic φ), is evaluated in
//!    the next batch and replaces σ when it passes the Armijo test at a lower cost. It is
//!    skipped when φ' does not increase or t* is within 0.1 % of σ. Conjugate directions
//!    lose their conjugacy under inexact line minima, and on the ill-conditioned fits of
//!    identification this one extra evaluation per iteration is what lets them work.
//!    The first trial is `initial_step` / ‖η_0‖ at k = 0 (a move of length
//!    `initial_step`) and afterwards 2 σ_{k−1} ⟨g_{k−1}, η_{k−1}⟩ / ⟨g_k, η_k⟩ (twice the
//!    step whose first-order decrease matches the last one).
//! 2. **Direction** (Sato 2022, eq. (11) of the seed): every tangent space is the same
//!    vector space and vectors are transported by the identity, 𝒯(η_k) = η_k, scaled by
//!    s_k = min(1, ‖η_k‖_{w_k} / ‖η_k‖_{w_{k+1}}) so that transport never lengthens a
//!    direction; then η_{k+1} = −g_{k+1} + β_{k+1} s_k 𝒯(η_k) with the Polak–Ribière+
//!    coefficient β_{k+1} = max(0, ⟨g_{k+1}, g_{k+1} − 𝒯(g_k)⟩_{w_{k+1}} / ‖g_k‖²_{w_k}).
//! 3. **Restarts**: η_{k+1} = −g_{k+1} where β⁺ = 0, whenever η_{k+1} is not a descent
//!    direction (⟨g_{k+1}, η_{k+1}⟩ ≥ 0), when backtracking along a conjugate direction
//!    finds no decrease within `max_backtracks` halvings, and every `restart_every`
//!    iterations if that is not 0 (the default: periodic restarts throw away the
//!    conjugacy that the refined line search builds up).
//!
//! A start stops when ‖g_k‖ ≤ `gradient_tolerance` ‖g_0‖, when consecutive gradients differ
//! by less than `gradient_change_tolerance` (the seed's rule, [`super::stopping`]; off by
//! default), when the cost has fallen by less
//! than `relative_decrease` (relative) over the last `stall_window` iterations, after
//! `max_iterations` iterations, or when no step along −g_k decreases the cost. All starts
//! stop when the next batch would exceed `evaluation_budget`.
//!
//! **Successive halving** (`prune_every` = k > 0): each time every active start has made
//! another k iterations, the costlier half of the active starts stops, so that the starts
//! explore side by side early and the budget goes into depth on the best of them later.

use std::fmt;

use super::descent_live::LiveStarts;
use super::descent_log::StartLog;
use super::descent_loop::advance_all;
use super::gradient::Evaluation;
use super::manifold::{Geometry, Point};
use crate::error::{Error, Result};

/// The settings of the iteration (module docs; `[optimizer]` of an identify config, every
/// key defaulting to [`CgSettings::default`]).
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CgSettings {
    /// Iterations per start at most.
    pub max_iterations: usize,
    /// Length ‖σ η_0‖ of the first trial move.
    pub initial_step: f64,
    /// c in the Armijo condition, 0 < c < 1.
    pub armijo: f64,
    /// β, the factor between trial steps, 0 < β < 1.
    pub backtrack: f64,
    /// Trial steps per start in one batch.
    pub trials: usize,
    /// Refine the accepted trial by one secant step on the slope along the curve (one
    /// more evaluation, in the next batch); off reproduces plain backtracking.
    pub refine: bool,
    /// Backtracking steps without a decrease before a restart (or a stop along −g).
    pub max_backtracks: usize,
    /// Periodic restart along −g every this many iterations; 0: never (Polak–Ribière+
    /// restarts by itself where β⁺ = 0).
    pub restart_every: usize,
    /// Iterations over which `relative_decrease` is measured.
    pub stall_window: usize,
    /// Successive halving: each time every active start has made another `prune_every`
    /// iterations, the costlier half of them stops; 0: never.
    pub prune_every: usize,
    /// A start stops when ‖g_k‖ ≤ gradient_tolerance ‖g_0‖.
    pub gradient_tolerance: f64,
    /// A start stops when the cost fell by less than this (relative) over `stall_window`
    /// iterations.
    pub relative_decrease: f64,
    /// The seed's rule: a start stops when ‖g_{k+1} − g_k‖ < this (absolute; 0: off;
    /// [`super::stopping`]).
    pub gradient_change_tolerance: f64,
    /// Total cost+gradient evaluations allowed (trials included).
    pub evaluation_budget: Option<usize>,
}

impl Default for CgSettings {
    fn default() -> Self {
        CgSettings {
            max_iterations: 100,
            initial_step: 1.0,
            armijo: 1e-4,
            backtrack: 0.5,
            trials: 4,
            refine: true,
            max_backtracks: 40,
            restart_every: 0,
            stall_window: 10,
            prune_every: 10,
            gradient_tolerance: 1e-8,
            relative_decrease: 1e-10,
            gradient_change_tolerance: 0.0,
            evaluation_budget: None,
        }
    }
}

impl CgSettings {
    /// Refuses settings outside their ranges, naming the field under `optimizer.`.
    pub fn check(&self) -> Result<()> {
        let open_unit = |name: &str, v: f64| {
            if v > 0.0 && v < 1.0 {
                Ok(())
            } else {
                Err(Error::invalid(
                    format!("optimizer.{name}"),
                    format!("must lie strictly between 0 and 1, got {v}"),
                ))
            }
        };
        open_unit("armijo", self.armijo)?;
        open_unit("backtrack", self.backtrack)?;
        if !(self.initial_step.is_finite() && self.initial_step > 0.0) {
            return Err(Error::invalid(
                "optimizer.initial_step",
                format!("must be a finite number > 0, got {}", self.initial_step),
            ));
        }
        for (name, value) in [
            ("gradient_tolerance", self.gradient_tolerance),
            ("relative_decrease", self.relative_decrease),
            ("gradient_change_tolerance", self.gradient_change_tolerance),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(Error::invalid(
                    format!("optimizer.{name}"),
                    format!("must be a finite number ≥ 0, got {value}"),
                ));
            }
        }
        for (name, value) in [
            ("trials", self.trials),
            ("max_backtracks", self.max_backtracks),
            ("stall_window", self.stall_window),
        ] {
            if value == 0 {
                return Err(Error::invalid(
                    format!("optimizer.{name}"),
                    "must be ≥ 1, got 0",
                ));
            }
        }
        Ok(())
    }
}

/// Why a start stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    Iterations,
    Gradient,
    GradientChange,
    Stalled,
    LineSearch,
    Budget,
    Pruned,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stop::Iterations => "iteration budget",
            Stop::Gradient => "gradient norm",
            Stop::GradientChange => "gradient change",
            Stop::Stalled => "relative decrease",
            Stop::LineSearch => "no descent step",
            Stop::Budget => "evaluation budget",
            Stop::Pruned => "pruned (costlier half)",
        })
    }
}

/// Where a start ended.
#[derive(Debug, Clone)]
pub struct StartResult {
    pub point: Point,
    pub cost_initial: f64,
    pub cost: f64,
    pub iterations: usize,
    /// 𝒥(w_k), k = 0…iterations.
    pub history: Vec<f64>,
    pub gradient_norm: f64,
    pub stop: Stop,
}

/// What the progress callback sees after every batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub evaluations: usize,
    pub best_cost: f64,
    pub active: usize,
    pub iterations: usize,
}

/// Minimises from every start (a point with its evaluation), all advanced together:
/// `evaluate` gets every trial point of every active start in one slice and returns their
/// costs and Euclidean gradients in order. Returns the starts' results, in the order
/// given, and the number of evaluations made. `progress` hears where the starts stand after
/// every batch; an error it returns stops the minimisation (a caller's interrupt).
pub fn minimize(
    geometry: &Geometry,
    starts: Vec<(Point, Evaluation)>,
    settings: &CgSettings,
    evaluate: &mut dyn FnMut(&[Point]) -> Result<Vec<Evaluation>>,
    progress: &mut dyn FnMut(&Progress) -> Result<()>,
) -> Result<(Vec<StartResult>, usize)> {
    let (results, evaluations, _) =
        minimize_recording(geometry, starts, settings, evaluate, progress, false)?;
    Ok((results, evaluations))
}

/// As [`minimize`], with each start's walk recorded when `record` (its iterates and, per
/// batch, its evaluations, iterations and stop: [`StartLog`]).
pub fn minimize_recording(
    geometry: &Geometry,
    starts: Vec<(Point, Evaluation)>,
    settings: &CgSettings,
    evaluate: &mut dyn FnMut(&[Point]) -> Result<Vec<Evaluation>>,
    progress: &mut dyn FnMut(&Progress) -> Result<()>,
    record: bool,
) -> Result<(Vec<StartResult>, usize, Vec<StartLog>)> {
    settings.check()?;
    let mut live = LiveStarts::new(geometry, starts, settings, evaluate, record);
    let evaluations = advance_all(&mut live, settings, progress)?;
    let (results, logs) = live.finish();
    Ok((results, evaluations, logs))
}

#[cfg(test)]
mod tests {
    use nalgebra::{DMatrix, DVector};

    use super::*;
    use crate::linear_ph::Parameters;
    use crate::linear_ph::Parts;

    /// 𝒥(B) = ½ Σ_i d_i (b_i − c_i)² over the 10 entries of a 5×2 B, curvatures d_i spread
    /// over four decades (condition number 10⁴).
    fn quadratic(point: &Point) -> Evaluation {
        let (n, m) = point.shape();
        let d = |i: usize| 10f64.powf(4.0 * i as f64 / (n * m - 1) as f64);
        let c = |i: usize| (i as f64 * 0.7).sin();
        let mut gradient = Parameters::zeros(n, m);
        let mut cost = 0.0;
        for (i, b) in point.b.iter().enumerate() {
            cost += 0.5 * d(i) * (b - c(i)).powi(2);
            gradient.b[i] = d(i) * (b - c(i));
        }
        Evaluation { cost, gradient }
    }

    /// A start with B = offset · 1 (everything else fixed).
    fn start(offset: f64) -> (Point, Evaluation) {
        let n = 5;
        let point = Point::new(
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, 0),
            Some(DMatrix::zeros(n, n)),
            DMatrix::identity(n, n),
            DMatrix::from_element(n, 2, offset),
            DVector::zeros(n),
        )
        .unwrap();
        let evaluation = quadratic(&point);
        (point, evaluation)
    }

    fn minimize_quadratic(starts: &[f64], settings: CgSettings) -> Vec<StartResult> {
        let geometry = Geometry {
            fit: Parts {
                b: true,
                ..Parts::NONE
            },
        };
        let (results, _) = minimize(
            &geometry,
            starts.iter().map(|&offset| start(offset)).collect(),
            &settings,
            &mut |points| Ok(points.iter().map(quadratic).collect()),
            &mut |_| Ok(()),
        )
        .unwrap();
        results
    }

    fn run(refine: bool, iterations: usize) -> StartResult {
        let settings = CgSettings {
            max_iterations: iterations,
            refine,
            gradient_tolerance: 0.0,
            relative_decrease: 0.0,
            ..CgSettings::default()
        };
        minimize_quadratic(&[0.0], settings).remove(0)
    }

    #[test]
    fn successive_halving_keeps_the_cheaper_half_until_one_start_is_left() {
        let settings = CgSettings {
            max_iterations: 9,
            refine: false,
            gradient_tolerance: 0.0,
            relative_decrease: 0.0,
            prune_every: 2,
            ..CgSettings::default()
        };
        let results = minimize_quadratic(&[3.0, 0.0, 9.0, -1.0, 30.0], settings);
        let pruned: Vec<usize> = results.iter().map(|r| r.iterations).collect();
        let survivors: Vec<&StartResult> =
            results.iter().filter(|r| r.stop != Stop::Pruned).collect();
        assert_eq!(survivors.len(), 1, "iterations {pruned:?}");
        assert_eq!(survivors[0].stop, Stop::Iterations);
        // 5 → 3 once all have 2 iterations, 3 → 2 at 4, 2 → 1 at 6 (a start that needed
        // an extra backtracking batch lags, so the others may be further on).
        let mut rounds: Vec<usize> = results
            .iter()
            .filter(|r| r.stop == Stop::Pruned)
            .map(|r| r.iterations)
            .collect();
        rounds.sort();
        assert_eq!(rounds.len(), 4, "iterations {pruned:?}");
        for (at, least) in rounds.iter().zip([2, 2, 4, 6]) {
            assert!(*at >= least, "iterations {pruned:?}");
        }
        // The survivor was the cheapest when each was pruned and its cost never rose since.
        for r in results.iter().filter(|r| r.stop == Stop::Pruned) {
            assert!(r.cost >= survivors[0].cost, "{r:?}");
        }
    }

    #[test]
    fn recorded_walks_replayed_with_halving_and_a_budget_equal_the_live_run() {
        use super::super::descent_log::ReplayedStarts;
        use super::super::descent_loop::advance_all;
        let geometry = Geometry {
            fit: Parts {
                b: true,
                ..Parts::NONE
            },
        };
        let offsets = [3.0, 0.0, 9.0, -1.0, 30.0, 0.5, 7.0];
        let starts = || {
            offsets
                .iter()
                .map(|&offset| start(offset))
                .collect::<Vec<_>>()
        };
        for (prune_every, budget) in [(2, None), (3, Some(160)), (0, Some(90)), (0, None)] {
            let settings = CgSettings {
                max_iterations: 12,
                refine: true,
                gradient_tolerance: 0.0,
                relative_decrease: 0.0,
                prune_every,
                evaluation_budget: budget,
                ..CgSettings::default()
            };
            let (live, live_evaluations) = minimize(
                &geometry,
                starts(),
                &settings,
                &mut |points| Ok(points.iter().map(quadratic).collect()),
                &mut |_| Ok(()),
            )
            .unwrap();
            // Each walk alone to its own stop, recorded; then replayed with the settings.
            let alone = CgSettings {
                prune_every: 0,
                evaluation_budget: None,
                ..settings.clone()
            };
            let (_, _, walks) = minimize_recording(
                &geometry,
                starts(),
                &alone,
                &mut |points| Ok(points.iter().map(quadratic).collect()),
                &mut |_| Ok(()),
                true,
            )
            .unwrap();
            let mut replay = ReplayedStarts::new(&walks);
            let evaluations = advance_all(&mut replay, &settings, &mut |_| Ok(())).unwrap();
            let replayed = replay.results().unwrap();
            assert_eq!(evaluations, live_evaluations, "{prune_every} {budget:?}");
            for (a, b) in live.iter().zip(&replayed) {
                assert_eq!(
                    (a.stop, a.iterations, &a.history, a.gradient_norm.to_bits()),
                    (b.stop, b.iterations, &b.history, b.gradient_norm.to_bits()),
                    "{prune_every} {budget:?}"
                );
                assert_eq!(a.point.b, b.point.b);
            }
            let stops: Vec<Stop> = live.iter().map(|r| r.stop).collect();
            if prune_every > 0 {
                assert!(stops.contains(&Stop::Pruned), "{stops:?}");
            }
            if budget.is_some() {
                assert!(
                    stops.contains(&Stop::Budget),
                    "{prune_every} {budget:?}: {stops:?}"
                );
            }
        }
    }

    #[test]
    fn the_seeds_gradient_change_rule_stops_a_start_once_the_gradient_settles() {
        let settings = |tolerance| CgSettings {
            max_iterations: 60,
            gradient_tolerance: 0.0,
            relative_decrease: 0.0,
            gradient_change_tolerance: tolerance,
            ..CgSettings::default()
        };
        let off = minimize_quadratic(&[0.0], settings(0.0)).remove(0);
        assert_ne!(off.stop, Stop::GradientChange, "{off:?}");
        let on = minimize_quadratic(&[0.0], settings(1e-3)).remove(0);
        assert_eq!(on.stop, Stop::GradientChange, "{on:?}");
        assert!(
            on.iterations <= off.iterations,
            "{} vs {}",
            on.iterations,
            off.iterations
        );
        // The two runs agree step for step until the rule stops one of them.
        assert_eq!(on.history[..], off.history[..on.history.len()]);
    }

    #[test]
    fn refined_line_search_makes_conjugate_gradients_finite_on_a_quadratic() {
        // With exact line minima, CG minimises a quadratic in 10 unknowns in 10 steps (up
        // to rounding); the secant refinement is exact on a quadratic, plain backtracking
        // is not.
        let refined = run(true, 14);
        let plain = run(false, 14);
        let initial = refined.cost_initial;
        assert!(
            refined.cost <= 1e-20 * initial,
            "refined: {:e} of {initial:e} after 14 iterations",
            refined.cost
        );
        assert!(
            plain.cost > 1e3 * refined.cost.max(1e-30 * initial),
            "plain backtracking {:e} vs refined {:e}",
            plain.cost,
            refined.cost
        );
        for pair in refined.history.windows(2) {
            assert!(pair[1] <= pair[0], "cost rose: {pair:?}");
        }
    }
}
