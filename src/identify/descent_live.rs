//! Live descents for the loop of [`super::descent_loop`]: walkers whose trial points go
//! into one batch of evaluations per loop turn, each walk recorded on request
//! ([`super::descent_log::StartLog`]) for a sharded identification's merge.

use super::conjugate_gradient::{CgSettings, StartResult, Stop};
use super::descent_log::{BatchEntry, Iterate, StartLog};
use super::descent_loop::Starts;
use super::gradient::Evaluation;
use super::manifold::{Geometry, Point};
use super::walker::{Trial, Walker};
use crate::error::Result;

/// Walkers advanced together, their next batch prepared.
pub(super) struct LiveStarts<'a> {
    geometry: &'a Geometry,
    settings: &'a CgSettings,
    walkers: Vec<Walker>,
    evaluate: &'a mut dyn FnMut(&[Point]) -> Result<Vec<Evaluation>>,
    /// The prepared batch: (start, step, whether its point exists), and the points in order.
    trials: Vec<(usize, f64, bool)>,
    points: Vec<Point>,
    /// Each start's walk, when recorded.
    logs: Option<Vec<StartLog>>,
}

impl<'a> LiveStarts<'a> {
    pub(super) fn new(
        geometry: &'a Geometry,
        starts: Vec<(Point, Evaluation)>,
        settings: &'a CgSettings,
        evaluate: &'a mut dyn FnMut(&[Point]) -> Result<Vec<Evaluation>>,
        record: bool,
    ) -> Self {
        let walkers: Vec<Walker> = starts
            .into_iter()
            .map(|(point, evaluation)| Walker::new(geometry, point, &evaluation, settings))
            .collect();
        let logs = record.then(|| {
            walkers
                .iter()
                .map(|w| StartLog::new(Iterate::of(w), w.stopped()))
                .collect()
        });
        LiveStarts {
            geometry,
            settings,
            walkers,
            evaluate,
            trials: Vec::new(),
            points: Vec::new(),
            logs,
        }
    }

    /// The starts' results in order, and their walks (empty unless recorded).
    pub(super) fn finish(self) -> (Vec<StartResult>, Vec<StartLog>) {
        (
            self.walkers.into_iter().map(Walker::result).collect(),
            self.logs.unwrap_or_default(),
        )
    }
}

impl Starts for LiveStarts<'_> {
    fn len(&self) -> usize {
        self.walkers.len()
    }

    fn is_active(&self, start: usize) -> bool {
        self.walkers[start].is_active()
    }

    fn iterations(&self, start: usize) -> usize {
        self.walkers[start].iterations()
    }

    fn cost(&self, start: usize) -> f64 {
        self.walkers[start].cost
    }

    fn stop(&mut self, start: usize, why: Stop) {
        self.walkers[start].stop(why);
    }

    fn prepare(&mut self, active: &[usize]) -> Result<usize> {
        self.trials.clear();
        self.points.clear();
        for &i in active {
            let w = &self.walkers[i];
            for step in w.steps(self.settings) {
                // A retraction that leaves the manifold numerically (Q loses its Cholesky
                // factor) counts as a failed trial.
                let point = self.geometry.retract(&w.point, &w.direction, step).ok();
                self.trials.push((i, step, point.is_some()));
                self.points.extend(point);
            }
        }
        Ok(self.points.len())
    }

    fn advance(&mut self, active: &[usize]) -> Result<()> {
        let points = std::mem::take(&mut self.points);
        let results = if points.is_empty() {
            Vec::new()
        } else {
            (self.evaluate)(&points)?
        };
        let mut evaluated = points.into_iter().zip(results);
        let mut per_start: Vec<Vec<Trial>> = vec![Vec::new(); self.walkers.len()];
        let mut counts = vec![0usize; self.walkers.len()];
        for (i, step, exists) in std::mem::take(&mut self.trials) {
            let trial = if exists { evaluated.next() } else { None };
            counts[i] += usize::from(exists);
            per_start[i].push((step, trial));
        }
        for &i in active {
            let walker = &mut self.walkers[i];
            let before = walker.iterations();
            walker.take(
                self.geometry,
                self.settings,
                std::mem::take(&mut per_start[i]),
            );
            if let Some(logs) = &mut self.logs {
                let log = &mut logs[i];
                if walker.iterations() > before {
                    log.iterates.push(Iterate::of(walker));
                }
                log.batches.push(BatchEntry {
                    evaluations: counts[i],
                    iterations: walker.iterations(),
                    stop: walker.stopped(),
                });
            }
        }
        Ok(())
    }
}
