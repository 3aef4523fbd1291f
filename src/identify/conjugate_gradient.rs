//! Riemannian conjugate gradients with Armijo backtracking, from many starting points at
//! once: every line-search trial of every start goes into one batch of evaluations.
//!
//! # The iteration (per start)
//!
//! With g_k = grad 𝒥(w_k) (the Riemannian gradient, [`super::manifold`]) and the direction
//! η_0 = −g_0:
//!
//! 1. **Armijo backtracking.** Trial steps σ, βσ, β²σ, … (β = `backtrack`, `trials` of them
//!    per batch, the next batch continuing where the last stopped); the largest σ with
//!    𝒥(R_{w_k}(σ η_k)) ≤ 𝒥(w_k) + c σ ⟨g_k, η_k⟩ (c = `armijo`) is taken:
//!    w_{k+1} = R_{w_k}(σ_k η_k). The first trial is `initial_step` / ‖η_0‖ at k = 0
//!    (a move of length `initial_step`) and afterwards 2 σ_{k−1} ⟨g_{k−1}, η_{k−1}⟩ /
//!    ⟨g_k, η_k⟩ (twice the step whose first-order decrease matches the last one).
//! 2. **Direction** (Sato 2022, eq. (11) of the seed): every tangent space is the same
//!    vector space and vectors are transported by the identity, 𝒯(η_k) = η_k, scaled by
//!    s_k = min(1, ‖η_k‖_{w_k} / ‖η_k‖_{w_{k+1}}) so that transport never lengthens a
//!    direction; then η_{k+1} = −g_{k+1} + β_{k+1} s_k 𝒯(η_k) with the Polak–Ribière+
//!    coefficient β_{k+1} = max(0, ⟨g_{k+1}, g_{k+1} − 𝒯(g_k)⟩_{w_{k+1}} / ‖g_k‖²_{w_k}).
//! 3. **Restarts**: η_{k+1} = −g_{k+1} every `restart_every` iterations, whenever η_{k+1}
//!    is not a descent direction (⟨g_{k+1}, η_{k+1}⟩ ≥ 0), and when backtracking along a
//!    conjugate direction finds no decrease within `max_backtracks` halvings.
//!
//! A start stops when ‖g_k‖ ≤ `gradient_tolerance` ‖g_0‖, when the cost has fallen by less
//! than `relative_decrease` (relative) over the last `restart_every` iterations, after
//! `max_iterations` iterations, or when no step along −g_k decreases the cost. All starts
//! stop when the next batch would exceed `evaluation_budget`.

use std::fmt;

use super::gradient::Evaluation;
use super::manifold::{Geometry, Point, Tangent};
use crate::error::{Error, Result};

/// The settings of the iteration (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct CgSettings {
    pub max_iterations: usize,
    /// Length ‖σ η_0‖ of the first trial move.
    pub initial_step: f64,
    /// c in the Armijo condition, 0 < c < 1.
    pub armijo: f64,
    /// β, the factor between trial steps, 0 < β < 1.
    pub backtrack: f64,
    /// Trial steps per start in one batch.
    pub trials: usize,
    /// Backtracking steps without a decrease before a restart (or a stop along −g).
    pub max_backtracks: usize,
    pub restart_every: usize,
    pub gradient_tolerance: f64,
    pub relative_decrease: f64,
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
            max_backtracks: 40,
            restart_every: 5,
            gradient_tolerance: 1e-8,
            relative_decrease: 1e-10,
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
            ("restart_every", self.restart_every),
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Iterations,
    Gradient,
    Stalled,
    LineSearch,
    Budget,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stop::Iterations => "iteration budget",
            Stop::Gradient => "gradient norm",
            Stop::Stalled => "relative decrease",
            Stop::LineSearch => "no descent step",
            Stop::Budget => "evaluation budget",
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

/// A trial step with its point and evaluation (`None` when the retraction failed).
type Trial = (f64, Option<(Point, Evaluation)>);

/// One start's walk.
struct Walker {
    point: Point,
    cost: f64,
    grad: Tangent,
    grad_norm_sq: f64,
    grad_norm_initial: f64,
    direction: Tangent,
    /// ⟨g_k, η_k⟩ < 0.
    slope: f64,
    /// The first trial step of the next batch.
    step: f64,
    /// Backtracking steps taken along the current direction.
    backtracks: usize,
    steepest: bool,
    since_restart: usize,
    history: Vec<f64>,
    stop: Option<Stop>,
}

impl Walker {
    fn new(
        geometry: &Geometry,
        point: Point,
        evaluation: &Evaluation,
        settings: &CgSettings,
    ) -> Self {
        let grad = geometry.gradient(&point, &evaluation.gradient);
        let grad_norm_sq = geometry.inner(&point, &grad, &grad);
        let norm = grad_norm_sq.sqrt();
        let stop = if norm.is_nan() || norm <= 0.0 {
            Some(Stop::Gradient)
        } else if settings.max_iterations == 0 {
            Some(Stop::Iterations)
        } else {
            None
        };
        Walker {
            direction: grad.scaled(-1.0),
            slope: -grad_norm_sq,
            step: settings.initial_step / norm.max(f64::MIN_POSITIVE),
            point,
            cost: evaluation.cost,
            grad,
            grad_norm_sq,
            grad_norm_initial: norm,
            backtracks: 0,
            steepest: true,
            since_restart: 0,
            history: vec![evaluation.cost],
            stop,
        }
    }

    /// Moves to the accepted trial and picks the next direction (module docs, 2 and 3).
    fn accept(
        &mut self,
        geometry: &Geometry,
        settings: &CgSettings,
        step: f64,
        point: Point,
        evaluation: &Evaluation,
    ) {
        let grad = geometry.gradient(&point, &evaluation.gradient);
        let grad_norm_sq = geometry.inner(&point, &grad, &grad);
        self.since_restart += 1;
        let mut beta = 0.0;
        if self.since_restart < settings.restart_every {
            let cross = geometry.inner(&point, &grad, &self.grad);
            beta = ((grad_norm_sq - cross) / self.grad_norm_sq).max(0.0);
        } else {
            self.since_restart = 0;
        }
        let mut direction = grad.scaled(-1.0);
        if beta > 0.0 {
            let before = geometry.norm(&self.point, &self.direction);
            let after = geometry.norm(&point, &self.direction);
            let scale = if after > before { before / after } else { 1.0 };
            direction = Tangent::combine(-1.0, &grad, beta * scale, &self.direction);
        }
        let mut slope = geometry.inner(&point, &grad, &direction);
        self.steepest = beta == 0.0;
        if slope.is_nan() || slope >= 0.0 {
            direction = grad.scaled(-1.0);
            slope = -grad_norm_sq;
            self.steepest = true;
            self.since_restart = 0;
        }
        let next = 2.0 * step * self.slope / slope;
        self.step = if next.is_finite() && next > 0.0 {
            next
        } else {
            step
        };
        self.point = point;
        self.cost = evaluation.cost;
        self.grad = grad;
        self.grad_norm_sq = grad_norm_sq;
        self.direction = direction;
        self.slope = slope;
        self.backtracks = 0;
        self.history.push(self.cost);
        let iterations = self.history.len() - 1;
        let window = settings.restart_every;
        if grad_norm_sq.sqrt() <= settings.gradient_tolerance * self.grad_norm_initial
            || self.cost == 0.0
        {
            self.stop = Some(Stop::Gradient);
        } else if iterations >= window
            && self.history[iterations - window] - self.cost
                <= settings.relative_decrease * self.history[iterations - window].abs()
        {
            self.stop = Some(Stop::Stalled);
        } else if iterations >= settings.max_iterations {
            self.stop = Some(Stop::Iterations);
        }
    }

    /// No trial of the batch decreased the cost enough: continue backtracking, restart
    /// along −g, or stop.
    fn reject(&mut self, settings: &CgSettings, smallest: f64) {
        self.backtracks += settings.trials;
        self.step = smallest * settings.backtrack;
        if self.backtracks < settings.max_backtracks {
            return;
        }
        if self.steepest {
            self.stop = Some(Stop::LineSearch);
            return;
        }
        self.direction = self.grad.scaled(-1.0);
        let slope = -self.grad_norm_sq;
        self.step = settings.initial_step / self.grad_norm_sq.sqrt();
        self.slope = slope;
        self.steepest = true;
        self.since_restart = 0;
        self.backtracks = 0;
    }

    fn result(self) -> StartResult {
        StartResult {
            cost_initial: self.history[0],
            cost: self.cost,
            iterations: self.history.len() - 1,
            gradient_norm: self.grad_norm_sq.sqrt(),
            stop: self.stop.unwrap_or(Stop::Budget),
            point: self.point,
            history: self.history,
        }
    }
}

/// Minimises from every start (a point with its evaluation), all advanced together:
/// `evaluate` gets every trial point of every active start in one slice and returns their
/// costs and Euclidean gradients in order. Returns the starts' results, in the order
/// given, and the number of evaluations made.
pub fn minimize(
    geometry: &Geometry,
    starts: Vec<(Point, Evaluation)>,
    settings: &CgSettings,
    evaluate: &mut dyn FnMut(&[Point]) -> Result<Vec<Evaluation>>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(Vec<StartResult>, usize)> {
    settings.check()?;
    let mut walkers: Vec<Walker> = starts
        .into_iter()
        .map(|(point, evaluation)| Walker::new(geometry, point, &evaluation, settings))
        .collect();
    let mut evaluations = 0;
    loop {
        let active: Vec<usize> = (0..walkers.len())
            .filter(|&i| walkers[i].stop.is_none())
            .collect();
        if active.is_empty() {
            break;
        }
        // Every trial of every active start: (start, step, point).
        // Every trial of every active start: (start, step, whether its point exists), the
        // points in the same order.
        let mut trials: Vec<(usize, f64, bool)> = Vec::new();
        let mut points: Vec<Point> = Vec::new();
        for &i in &active {
            let w = &walkers[i];
            let mut step = w.step;
            for _ in 0..settings.trials {
                // A retraction that leaves the manifold numerically (Q loses its
                // Cholesky factor) counts as a failed trial.
                let point = geometry.retract(&w.point, &w.direction, step).ok();
                trials.push((i, step, point.is_some()));
                points.extend(point);
                step *= settings.backtrack;
            }
        }
        if let Some(budget) = settings.evaluation_budget
            && evaluations + points.len() > budget
        {
            for &i in &active {
                walkers[i].stop = Some(Stop::Budget);
            }
            break;
        }
        let results = if points.is_empty() {
            Vec::new()
        } else {
            evaluate(&points)?
        };
        evaluations += points.len();
        let mut evaluated = points.into_iter().zip(results);
        let mut per_start: Vec<Vec<Trial>> = vec![Vec::new(); walkers.len()];
        for (i, step, exists) in trials {
            let trial = if exists { evaluated.next() } else { None };
            per_start[i].push((step, trial));
        }
        for &i in &active {
            let w = &mut walkers[i];
            let mut smallest = f64::INFINITY;
            let mut accepted = None;
            for (step, evaluated) in per_start[i].drain(..) {
                smallest = smallest.min(step);
                if accepted.is_some() {
                    continue;
                }
                if let Some((point, evaluation)) = evaluated
                    && evaluation.cost.is_finite()
                    && evaluation.cost <= w.cost + settings.armijo * step * w.slope
                {
                    accepted = Some((step, point, evaluation));
                }
            }
            match accepted {
                Some((step, point, evaluation)) => {
                    w.accept(geometry, settings, step, point, &evaluation)
                }
                None => w.reject(settings, smallest),
            }
        }
        progress(&Progress {
            evaluations,
            best_cost: walkers.iter().map(|w| w.cost).fold(f64::INFINITY, f64::min),
            active: walkers.iter().filter(|w| w.stop.is_none()).count(),
            iterations: walkers
                .iter()
                .map(|w| w.history.len() - 1)
                .max()
                .unwrap_or(0),
        });
    }
    Ok((
        walkers.into_iter().map(Walker::result).collect(),
        evaluations,
    ))
}
