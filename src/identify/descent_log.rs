//! A descent's walk as recorded by a shard of an identification's descent stage, and the
//! walks replayed by its merge. A start's walk depends on its own evaluations alone and it
//! takes one batch per loop turn while active, so its state after batch b is a function
//! of (start, b): the shard runs each start to its own stop (no successive halving, no
//! evaluation budget — those couple the starts) and records its iterates and, per batch,
//! its evaluations, iterations and stop; the merge runs the same loop (`advance_all` of
//! the private `descent_loop` module) over the records with the configured halving and
//! budget, which stop starts exactly where the unsharded run stops them.

use serde::{Deserialize, Serialize};

use super::conjugate_gradient::{StartResult, Stop};
use super::descent_loop::Starts;
use super::records::PointRecord;
use super::walker::Walker;
use crate::error::{Error, Result};

/// The point, cost and gradient norm after an accepted step (k = 0: the start).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iterate {
    pub point: PointRecord,
    pub cost: f64,
    pub gradient_norm: f64,
}

impl Iterate {
    pub(super) fn of(w: &Walker) -> Self {
        Iterate {
            point: PointRecord::of(&w.point),
            cost: w.cost,
            gradient_norm: w.gradient_norm(),
        }
    }
}

/// One batch of a start: the evaluations it added, and its iterations and stop after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BatchEntry {
    pub evaluations: usize,
    pub iterations: usize,
    pub stop: Option<Stop>,
}

/// One start's walk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartLog {
    /// Iterates k = 0 … K.
    pub iterates: Vec<Iterate>,
    /// Its stop before any batch (a zero gradient, no iterations allowed).
    pub initial_stop: Option<Stop>,
    /// Batch by batch while it ran.
    pub batches: Vec<BatchEntry>,
}

impl StartLog {
    pub(super) fn new(start: Iterate, initial_stop: Option<Stop>) -> Self {
        StartLog {
            iterates: vec![start],
            initial_stop,
            batches: Vec::new(),
        }
    }

    /// Checks that the record is one walk: iterations never fall, never pass the iterates
    /// recorded, and the walk ends stopped.
    pub fn check(&self, what: &str) -> Result<()> {
        let refuse = |problem: &str| Err(Error::invalid(what, problem.to_string()));
        if self.iterates.is_empty() {
            return refuse("a walk without its start");
        }
        let mut iterations = 0;
        for entry in &self.batches {
            if entry.iterations < iterations || entry.iterations >= self.iterates.len() {
                return refuse("iterations out of order with the iterates recorded");
            }
            iterations = entry.iterations;
        }
        let stopped = self
            .batches
            .last()
            .map_or(self.initial_stop, |entry| entry.stop);
        if stopped.is_none() {
            return refuse("a walk that did not stop");
        }
        Ok(())
    }

    /// The result of the walk stopped (`why`) after `iterations` accepted steps.
    fn result(&self, iterations: usize, why: Stop) -> Result<StartResult> {
        let at = &self.iterates[iterations];
        Ok(StartResult {
            point: at.point.point()?,
            cost_initial: self.iterates[0].cost,
            cost: at.cost,
            iterations,
            history: self.iterates[..=iterations]
                .iter()
                .map(|i| i.cost)
                .collect(),
            gradient_norm: at.gradient_norm,
            stop: why,
        })
    }
}

/// Recorded walks replayed: where each start stands after the batches taken so far.
pub(super) struct ReplayedStarts<'a> {
    logs: &'a [StartLog],
    batch: usize,
    iterations: Vec<usize>,
    stops: Vec<Option<Stop>>,
}

impl<'a> ReplayedStarts<'a> {
    pub(super) fn new(logs: &'a [StartLog]) -> Self {
        ReplayedStarts {
            logs,
            batch: 0,
            iterations: vec![0; logs.len()],
            stops: logs.iter().map(|log| log.initial_stop).collect(),
        }
    }

    /// The starts' results, in order.
    pub(super) fn results(&self) -> Result<Vec<StartResult>> {
        (0..self.logs.len())
            .map(|i| self.logs[i].result(self.iterations[i], self.stops[i].unwrap_or(Stop::Budget)))
            .collect()
    }

    fn entry(&self, start: usize) -> Result<BatchEntry> {
        self.logs[start]
            .batches
            .get(self.batch)
            .copied()
            .ok_or_else(|| {
                Error::invalid(
                    "descent shards",
                    format!(
                        "start {start}'s record ends before batch {} although it still runs",
                        self.batch
                    ),
                )
            })
    }
}

impl Starts for ReplayedStarts<'_> {
    fn len(&self) -> usize {
        self.logs.len()
    }

    fn is_active(&self, start: usize) -> bool {
        self.stops[start].is_none()
    }

    fn iterations(&self, start: usize) -> usize {
        self.iterations[start]
    }

    fn cost(&self, start: usize) -> f64 {
        self.logs[start].iterates[self.iterations[start]].cost
    }

    fn stop(&mut self, start: usize, why: Stop) {
        self.stops[start] = Some(why);
    }

    fn prepare(&mut self, active: &[usize]) -> Result<usize> {
        active.iter().map(|&i| Ok(self.entry(i)?.evaluations)).sum()
    }

    fn advance(&mut self, active: &[usize]) -> Result<()> {
        for &i in active {
            let entry = self.entry(i)?;
            self.iterations[i] = entry.iterations;
            self.stops[i] = entry.stop;
        }
        self.batch += 1;
        Ok(())
    }
}
