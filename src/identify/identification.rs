//! The identification run: Monte-Carlo initialisation, then Riemannian conjugate gradients
//! from the best candidates, every batch evaluated on one backend.

use rayon::prelude::*;

use super::conjugate_gradient::{CgSettings, Progress, StartResult, minimize};
use super::gradient::{Evaluation, evaluate_trials};
use super::initial_guess::evaluated_guesses;
use super::manifold::{Geometry, Point};
use super::monte_carlo::{Best, MonteCarlo};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::linear_ph::GradientPlan;
use crate::linear_ph::Parts;
use crate::plan::MemoryBudget;

/// Candidates per Monte-Carlo batch at most (the batch's gradients are held in memory).
pub const MONTE_CARLO_BATCH: usize = 4096;

/// What to fit and how.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The parts fitted; the others keep the template's values.
    pub fit: Parts,
    /// Order n, the rank of R's factor, and the values of the fixed parts.
    pub template: Point,
    pub monte_carlo: MonteCarlo,
    /// Starts given by the user ([`super::initial_guess`]), descended from beside the
    /// kept Monte-Carlo candidates (alone with `monte_carlo.candidates = 0`).
    pub initial_guesses: Vec<Point>,
    /// `evaluation_budget`, when set, counts the Monte-Carlo evaluations too.
    pub optimizer: CgSettings,
}

/// Where the run stands, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Status {
    MonteCarlo {
        evaluated: usize,
        total: usize,
        best_cost: f64,
    },
    Descent(Progress),
}

/// What an identification found.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The initial guesses' starts first (in their order), then one per kept candidate, in
    /// the order of their initial costs.
    pub starts: Vec<StartResult>,
    /// The start with the lowest final cost.
    pub best: usize,
    /// How many of the first starts are the setup's initial guesses (one evaluation each).
    pub guesses: usize,
    /// The Monte-Carlo candidate index of every start after the guesses.
    pub candidate_indices: Vec<usize>,
    pub monte_carlo_evaluations: usize,
    pub descent_evaluations: usize,
}

impl Outcome {
    pub fn best_start(&self) -> &StartResult {
        &self.starts[self.best]
    }

    /// Every cost+gradient evaluation: Monte-Carlo, initial guesses and descent.
    pub fn evaluations(&self) -> usize {
        self.monte_carlo_evaluations + self.guesses + self.descent_evaluations
    }

    /// The Monte-Carlo candidate index of `start`; `None` for an initial guess.
    pub fn candidate(&self, start: usize) -> Option<usize> {
        start
            .checked_sub(self.guesses)
            .map(|i| self.candidate_indices[i])
    }

    /// Where `start` began: its initial guess, or its Monte-Carlo candidate drawn again.
    pub fn initial_point(&self, setup: &Setup, start: usize) -> Result<Point> {
        match self.candidate(start) {
            None => Ok(setup.initial_guesses[start].clone()),
            Some(index) => setup.monte_carlo.draw(&setup.template, setup.fit, index),
        }
    }
}

/// Evaluates `points` against `problem` (data, cost, scheme) on `backend`; overflowing
/// trajectories cost +∞.
pub fn evaluate_points(
    backend: &Backend,
    budget: &MemoryBudget,
    problem: &GradientPlan,
    points: &[Point],
) -> Result<Vec<Evaluation>> {
    let members = points.par_iter().map(Point::member).collect();
    evaluate_trials(backend, &problem.with_candidates(members)?, budget)
}

/// Runs the identification of `setup` against `problem` on `backend`. `status` hears where
/// the run stands after every batch of evaluations; an error it returns stops the run (a
/// caller's interrupt) and is returned.
pub fn identify(
    backend: &Backend,
    budget: &MemoryBudget,
    problem: &GradientPlan,
    setup: &Setup,
    status: &mut dyn FnMut(Status) -> Result<()>,
) -> Result<Outcome> {
    check_setup(setup)?;
    let all = 0..setup.monte_carlo.candidates;
    let kept = best_candidates(backend, budget, problem, setup, all, status)?;
    let kept = refuse_none_kept(setup, kept)?;
    descend(backend, budget, problem, setup, kept, status)
}

/// Refuses settings the identification cannot run with, naming the field.
pub fn check_setup(setup: &Setup) -> Result<()> {
    let mc = &setup.monte_carlo;
    let guesses = setup.initial_guesses.len();
    mc.check_beside(guesses)?;
    setup.optimizer.check()?;
    if setup.fit.is_empty() {
        return Err(Error::invalid(
            "model.fit",
            "names no part: fit at least one of J, R, Q, B, x0",
        ));
    }
    if let Some(total) = setup.optimizer.evaluation_budget
        && total <= mc.candidates + guesses
    {
        return Err(Error::invalid(
            "optimizer.evaluation_budget",
            format!(
                "is {total}, no more than the {} Monte-Carlo candidates and {guesses} initial guess(es): nothing is left for the descent",
                mc.candidates
            ),
        ));
    }
    Ok(())
}

/// The Monte-Carlo candidates `range` (all of them, or a shard's), evaluated in batches of
/// at most [`MONTE_CARLO_BATCH`]: the best `monte_carlo.keep` as (index, evaluation),
/// cheapest first (ties by index). Candidate i is a function of (seed, i), so the best of
/// the shards' best are the best of all.
pub fn best_candidates(
    backend: &Backend,
    budget: &MemoryBudget,
    problem: &GradientPlan,
    setup: &Setup,
    range: std::ops::Range<usize>,
    status: &mut dyn FnMut(Status) -> Result<()>,
) -> Result<Vec<(usize, Evaluation)>> {
    let mc = &setup.monte_carlo;
    let mut best = Best::new(mc.keep);
    let mut best_cost = f64::INFINITY;
    let mut first = range.start;
    while first < range.end {
        let count = MONTE_CARLO_BATCH.min(range.end - first);
        let points: Vec<Point> = (first..first + count)
            .into_par_iter()
            .map(|i| mc.draw(&setup.template, setup.fit, i))
            .collect::<Result<_>>()?;
        for (offset, evaluation) in evaluate_points(backend, budget, problem, &points)?
            .into_iter()
            .enumerate()
        {
            best_cost = best_cost.min(evaluation.cost);
            best.offer(first + offset, evaluation);
        }
        first += count;
        status(Status::MonteCarlo {
            evaluated: first - range.start,
            total: range.len(),
            best_cost,
        })?;
    }
    Ok(best.into_entries())
}

/// The kept candidates, refused when every candidate overflowed and no initial guess
/// gives a start.
pub fn refuse_none_kept(
    setup: &Setup,
    kept: Vec<(usize, Evaluation)>,
) -> Result<Vec<(usize, Evaluation)>> {
    if kept.is_empty() && setup.initial_guesses.is_empty() {
        let mc = &setup.monte_carlo;
        return Err(Error::Numerical {
            context: "monte_carlo".into(),
            problem: format!(
                "every one of the {} candidates overflows: lower monte_carlo.scale (now {}) or monte_carlo.spread",
                mc.candidates, mc.scale
            ),
        });
    }
    Ok(kept)
}

/// The optimizer's settings for the descent: the evaluation budget less the Monte-Carlo
/// candidates and the initial guesses it counts.
pub fn descent_settings(setup: &Setup) -> CgSettings {
    let mut optimizer = setup.optimizer.clone();
    let spent = setup.monte_carlo.candidates + setup.initial_guesses.len();
    optimizer.evaluation_budget = optimizer.evaluation_budget.map(|b| b.saturating_sub(spent));
    optimizer
}

/// Starts `range` of the descent, which starts from the initial guesses (evaluated here)
/// and then from the `kept` candidates (drawn again), in that order.
pub fn descent_starts(
    backend: &Backend,
    budget: &MemoryBudget,
    problem: &GradientPlan,
    setup: &Setup,
    kept: &[(usize, Evaluation)],
    range: std::ops::Range<usize>,
) -> Result<Vec<(Point, Evaluation)>> {
    let guesses = setup.initial_guesses.len();
    let mine = &setup.initial_guesses[range.start.min(guesses)..range.end.min(guesses)];
    let mut starts = evaluated_guesses(backend, budget, problem, mine)?;
    let mc = &setup.monte_carlo;
    for (i, evaluation) in &kept[range.start.max(guesses) - guesses..range.end - guesses] {
        starts.push((mc.draw(&setup.template, setup.fit, *i)?, evaluation.clone()));
    }
    Ok(starts)
}

/// The descents from the `kept` candidates, and the outcome of the identification.
pub fn descend(
    backend: &Backend,
    budget: &MemoryBudget,
    problem: &GradientPlan,
    setup: &Setup,
    kept: Vec<(usize, Evaluation)>,
    status: &mut dyn FnMut(Status) -> Result<()>,
) -> Result<Outcome> {
    let mc = &setup.monte_carlo;
    let candidate_indices: Vec<usize> = kept.iter().map(|(i, _)| *i).collect();
    let guesses = setup.initial_guesses.len();
    let all = 0..guesses + kept.len();
    let starts = descent_starts(backend, budget, problem, setup, &kept, all)?;
    let geometry = Geometry { fit: setup.fit };
    let (starts, descent_evaluations) = minimize(
        &geometry,
        starts,
        &descent_settings(setup),
        &mut |points| evaluate_points(backend, budget, problem, points),
        &mut |progress| status(Status::Descent(*progress)),
    )?;
    Ok(Outcome::new(
        starts,
        guesses,
        candidate_indices,
        mc.candidates,
        descent_evaluations,
    ))
}

impl Outcome {
    /// The outcome of descents `starts` from `guesses` initial guesses and then the
    /// candidates `candidate_indices`: the best start is the one of lowest final cost (the
    /// first of equals).
    pub fn new(
        starts: Vec<StartResult>,
        guesses: usize,
        candidate_indices: Vec<usize>,
        monte_carlo_evaluations: usize,
        descent_evaluations: usize,
    ) -> Self {
        let best = (0..starts.len())
            .min_by(|&a, &b| starts[a].cost.total_cmp(&starts[b].cost))
            .expect("at least one start");
        Outcome {
            starts,
            best,
            guesses,
            candidate_indices,
            monte_carlo_evaluations,
            descent_evaluations,
        }
    }
}
