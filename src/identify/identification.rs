//! The identification run: Monte-Carlo initialisation, then Riemannian conjugate gradients
//! from the best candidates, every batch evaluated on one backend.

use rayon::prelude::*;

use super::conjugate_gradient::{CgSettings, Progress, StartResult, minimize};
use super::gradient::{Evaluation, evaluate_trials};
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
    /// One per kept candidate, in the order of their initial costs.
    pub starts: Vec<StartResult>,
    /// The start with the lowest final cost.
    pub best: usize,
    /// The Monte-Carlo candidate index of every start.
    pub candidate_indices: Vec<usize>,
    pub monte_carlo_evaluations: usize,
    pub descent_evaluations: usize,
}

impl Outcome {
    pub fn best_start(&self) -> &StartResult {
        &self.starts[self.best]
    }

    pub fn evaluations(&self) -> usize {
        self.monte_carlo_evaluations + self.descent_evaluations
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
    mc.check()?;
    setup.optimizer.check()?;
    if setup.fit.is_empty() {
        return Err(Error::invalid(
            "model.fit",
            "names no part: fit at least one of J, R, Q, B, x0",
        ));
    }
    if let Some(total) = setup.optimizer.evaluation_budget
        && total <= mc.candidates
    {
        return Err(Error::invalid(
            "optimizer.evaluation_budget",
            format!(
                "is {total}, no more than the {} Monte-Carlo candidates: nothing is left for the descent",
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

/// The kept candidates, refused when every candidate overflowed.
pub fn refuse_none_kept(
    setup: &Setup,
    kept: Vec<(usize, Evaluation)>,
) -> Result<Vec<(usize, Evaluation)>> {
    if kept.is_empty() {
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
/// candidates it counts.
pub fn descent_settings(setup: &Setup) -> CgSettings {
    let mut optimizer = setup.optimizer.clone();
    optimizer.evaluation_budget = optimizer
        .evaluation_budget
        .map(|b| b - setup.monte_carlo.candidates);
    optimizer
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
    let starts = kept
        .into_iter()
        .map(|(i, evaluation)| Ok((mc.draw(&setup.template, setup.fit, i)?, evaluation)))
        .collect::<Result<Vec<_>>>()?;
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
        candidate_indices,
        mc.candidates,
        descent_evaluations,
    ))
}

impl Outcome {
    /// The outcome of descents `starts` from the candidates `candidate_indices`: the best
    /// start is the one of lowest final cost (the first of equals).
    pub fn new(
        starts: Vec<StartResult>,
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
            candidate_indices,
            monte_carlo_evaluations,
            descent_evaluations,
        }
    }
}
