//! The loop that advances many descents together, batch by batch, whatever holds them:
//! live walkers evaluating their trials ([`super::conjugate_gradient::minimize`]), or the
//! recorded walks of sharded descents replayed by a merge
//! ([`super::descent_log::ReplayedStarts`]). One loop for both is what makes a sharded
//! identification's successive halving and evaluation budget act exactly as in one run.
//!
//! Per batch: the active starts; if the batch's evaluations would exceed the budget, all of
//! them stop (`Budget`); else every active start takes its batch; then successive halving.

use super::conjugate_gradient::{CgSettings, Progress, Stop};
use crate::error::Result;

/// Starts advanced together: each active start takes exactly one batch per loop turn, and
/// its walk depends on its own evaluations alone.
pub(super) trait Starts {
    fn len(&self) -> usize;
    fn is_active(&self, start: usize) -> bool;
    /// Accepted steps so far.
    fn iterations(&self, start: usize) -> usize;
    fn cost(&self, start: usize) -> f64;
    fn stop(&mut self, start: usize, why: Stop);
    /// Prepares the next batch of the `active` starts; returns its evaluations.
    fn prepare(&mut self, active: &[usize]) -> Result<usize>;
    /// Evaluates the prepared batch; every start of `active` takes its trials.
    fn advance(&mut self, active: &[usize]) -> Result<()>;
}

/// Runs `starts` until none is active; returns the evaluations made. `progress` hears
/// where the starts stand after every batch; an error it returns stops the loop.
pub(super) fn advance_all(
    starts: &mut dyn Starts,
    settings: &CgSettings,
    progress: &mut dyn FnMut(&Progress) -> Result<()>,
) -> Result<usize> {
    let mut evaluations = 0;
    let mut prune_at = settings.prune_every;
    loop {
        let active: Vec<usize> = (0..starts.len()).filter(|&i| starts.is_active(i)).collect();
        if active.is_empty() {
            break;
        }
        let batch = starts.prepare(&active)?;
        if let Some(budget) = settings.evaluation_budget
            && evaluations + batch > budget
        {
            for &i in &active {
                starts.stop(i, Stop::Budget);
            }
            break;
        }
        starts.advance(&active)?;
        evaluations += batch;
        if settings.prune_every > 0 {
            prune(starts, &mut prune_at, settings.prune_every);
        }
        let len = starts.len();
        progress(&Progress {
            evaluations,
            best_cost: (0..len)
                .map(|i| starts.cost(i))
                .fold(f64::INFINITY, f64::min),
            active: (0..len).filter(|&i| starts.is_active(i)).count(),
            iterations: (0..len).map(|i| starts.iterations(i)).max().unwrap_or(0),
        })?;
    }
    Ok(evaluations)
}

/// Successive halving: once every active start has made `prune_at` iterations, stops the
/// costlier half of them (the cheaper ⌈a/2⌉ of a active go on) and moves `prune_at` on by
/// `every`. A lone active start is never pruned.
fn prune(starts: &mut dyn Starts, prune_at: &mut usize, every: usize) {
    let mut active: Vec<usize> = (0..starts.len()).filter(|&i| starts.is_active(i)).collect();
    if active.len() < 2 || active.iter().any(|&i| starts.iterations(i) < *prune_at) {
        return;
    }
    active.sort_by(|&a, &b| starts.cost(a).total_cmp(&starts.cost(b)).then(a.cmp(&b)));
    for &i in &active[active.len().div_ceil(2)..] {
        starts.stop(i, Stop::Pruned);
    }
    *prune_at += every;
}
