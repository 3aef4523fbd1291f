//! One start's walk in [`super::conjugate_gradient`]: its point, gradient and direction,
//! the Armijo test of its trial steps, the secant refinement of the accepted one, the
//! conjugate direction that follows and its restarts (the module docs there state the
//! rules).

use super::conjugate_gradient::{CgSettings, StartResult, Stop};
use super::gradient::Evaluation;
use super::manifold::{Geometry, Point, Tangent};
use super::stopping;

/// A trial step with its point and evaluation (`None` when the retraction failed).
pub(super) type Trial = (f64, Option<(Point, Evaluation)>);

/// One start's walk.
pub(super) struct Walker {
    pub(super) point: Point,
    pub(super) cost: f64,
    grad: Tangent,
    grad_norm_sq: f64,
    grad_norm_initial: f64,
    pub(super) direction: Tangent,
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
    /// The best Armijo trial, waiting for the evaluation of its refinement.
    pending: Option<Pending>,
}

/// A trial that passed the Armijo test.
struct Accepted {
    step: f64,
    point: Point,
    evaluation: Evaluation,
}

/// The best Armijo trial and the refined step evaluated next.
struct Pending {
    accepted: Accepted,
    refined: f64,
}

impl Walker {
    pub(super) fn new(
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
            pending: None,
        }
    }

    /// Moves to the accepted trial and picks the next direction (module docs, 2 and 3).
    fn accept(&mut self, geometry: &Geometry, settings: &CgSettings, accepted: Accepted) {
        let Accepted {
            step,
            point,
            evaluation,
        } = accepted;
        let grad = geometry.gradient(&point, &evaluation.gradient);
        let grad_norm_sq = geometry.inner(&point, &grad, &grad);
        let change = stopping::gradient_change(geometry, &point, &grad, &self.grad);
        self.since_restart += 1;
        let mut beta = 0.0;
        if settings.restart_every == 0 || self.since_restart < settings.restart_every {
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
        let iterations = self.iterations();
        let window = settings.stall_window;
        if grad_norm_sq.sqrt() <= settings.gradient_tolerance * self.grad_norm_initial
            || self.cost == 0.0
        {
            self.stop = Some(Stop::Gradient);
        } else if stopping::gradient_settled(settings.gradient_change_tolerance, change) {
            self.stop = Some(Stop::GradientChange);
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

    /// The steps to evaluate in the next batch: the refinement when one is pending, else
    /// `trials` backtracking steps from `step`.
    pub(super) fn steps(&self, settings: &CgSettings) -> Vec<f64> {
        match &self.pending {
            Some(pending) => vec![pending.refined],
            None => (0..settings.trials)
                .scan(self.step, |step, _| {
                    let this = *step;
                    *step *= settings.backtrack;
                    Some(this)
                })
                .collect(),
        }
    }

    /// Whether the cost at `step` passes the Armijo test.
    fn armijo(&self, settings: &CgSettings, step: f64, cost: f64) -> bool {
        cost.is_finite() && cost <= self.cost + settings.armijo * step * self.slope
    }

    /// The zero of the secant through the slopes φ'(0) and φ'(σ) of φ(t) = 𝒥(R_w(t η)):
    /// t* = σ φ'(0) / (φ'(0) − φ'(σ)), the line minimum when φ is quadratic. `None` when
    /// φ' does not increase (no curvature to use) or t* is within 0.1 % of σ.
    fn refined_step(&self, geometry: &Geometry, accepted: &Accepted) -> Option<f64> {
        let step = accepted.step;
        let slope = geometry.slope_along(
            &self.point,
            &self.direction,
            step,
            &accepted.point,
            &accepted.evaluation.gradient,
        );
        let rise = slope - self.slope;
        if !(rise.is_finite() && rise > 0.0) {
            return None;
        }
        let refined = (step * -self.slope / rise).min(8.0 * step);
        ((refined / step - 1.0).abs() > 1e-3).then_some(refined)
    }

    /// Takes the result of a batch: the refinement's, or the backtracking trials'.
    pub(super) fn take(&mut self, geometry: &Geometry, settings: &CgSettings, trials: Vec<Trial>) {
        if let Some(Pending { accepted, .. }) = self.pending.take() {
            let chosen = match trials.into_iter().next() {
                Some((step, Some((point, evaluation))))
                    if evaluation.cost < accepted.evaluation.cost
                        && self.armijo(settings, step, evaluation.cost) =>
                {
                    Accepted {
                        step,
                        point,
                        evaluation,
                    }
                }
                _ => accepted,
            };
            self.accept(geometry, settings, chosen);
            return;
        }
        let mut smallest = f64::INFINITY;
        let mut best: Option<Accepted> = None;
        for (step, evaluated) in trials {
            smallest = smallest.min(step);
            if let Some((point, evaluation)) = evaluated
                && self.armijo(settings, step, evaluation.cost)
                && best
                    .as_ref()
                    .is_none_or(|best| evaluation.cost < best.evaluation.cost)
            {
                best = Some(Accepted {
                    step,
                    point,
                    evaluation,
                });
            }
        }
        let Some(accepted) = best else {
            self.reject(settings, smallest);
            return;
        };
        match settings
            .refine
            .then(|| self.refined_step(geometry, &accepted))
            .flatten()
        {
            Some(refined) => self.pending = Some(Pending { accepted, refined }),
            None => self.accept(geometry, settings, accepted),
        }
    }

    /// Whether the start still runs.
    pub(super) fn is_active(&self) -> bool {
        self.stop.is_none()
    }

    /// Iterations made (accepted steps).
    pub(super) fn iterations(&self) -> usize {
        self.history.len() - 1
    }

    /// Why the start stopped; `None` while it runs.
    pub(super) fn stopped(&self) -> Option<Stop> {
        self.stop
    }

    /// ‖g_k‖ at the current point.
    pub(super) fn gradient_norm(&self) -> f64 {
        self.grad_norm_sq.sqrt()
    }

    /// Stops the start, dropping a pending refinement.
    pub(super) fn stop(&mut self, why: Stop) {
        self.stop = Some(why);
        self.pending = None;
    }

    pub(super) fn result(self) -> StartResult {
        StartResult {
            cost_initial: self.history[0],
            cost: self.cost,
            iterations: self.iterations(),
            gradient_norm: self.gradient_norm(),
            stop: self.stop.unwrap_or(Stop::Budget),
            point: self.point,
            history: self.history,
        }
    }
}
