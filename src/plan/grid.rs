//! The time grid of a run: N steps of size h from t = 0, with a record every
//! `record_every` steps and at the last step.

use crate::error::{Error, Num, Result};

/// N steps of size h, recorded every `record_every` steps (the final step always).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepGrid {
    pub h: f64,
    pub steps: usize,
    pub record_every: usize,
}

/// Number of steps N = t_end / h, which must be a whole number (to 1e-9 relative).
pub fn step_count(h: f64, t_end: f64) -> Result<usize> {
    if !(h.is_finite() && h > 0.0) {
        return Err(Error::invalid(
            "scheme.h",
            format!("must be a finite number > 0, got {}", Num(h)),
        ));
    }
    if !(t_end.is_finite() && t_end > 0.0) {
        return Err(Error::invalid(
            "scheme.t_end",
            format!("must be a finite number > 0, got {}", Num(t_end)),
        ));
    }
    let ratio = t_end / h;
    let steps = ratio.round();
    if (ratio - steps).abs() > 1e-9 * ratio.max(1.0) || steps < 1.0 {
        return Err(Error::invalid(
            "scheme.h",
            format!(
                "t_end / h must be a whole number of steps: {} / {} = {}",
                Num(t_end),
                Num(h),
                Num(ratio)
            ),
        ));
    }
    if steps > u32::MAX as f64 {
        return Err(Error::invalid(
            "scheme.t_end",
            format!(
                "t_end / h = {} / {} = {} steps exceed the supported 2³² − 1; shorten scheme.t_end or lengthen scheme.h",
                Num(t_end),
                Num(h),
                Num(steps)
            ),
        ));
    }
    Ok(steps as usize)
}

impl StepGrid {
    /// The grid of t_end / h steps (a whole number), recorded every `record_every` steps.
    pub fn new(h: f64, t_end: f64, record_every: usize) -> Result<Self> {
        let steps = step_count(h, t_end)?;
        if record_every == 0 {
            return Err(Error::invalid("output.every", "must be ≥ 1, got 0"));
        }
        Ok(StepGrid {
            h,
            steps,
            record_every,
        })
    }

    /// t_end = N h.
    pub fn t_end(&self) -> f64 {
        self.h * self.steps as f64
    }

    /// The cadence as the kernels count it: `record_every` clamped to N. A cadence ≥ N
    /// records only the last step, exactly as a cadence of N does, so the clamp changes no
    /// record; it keeps the cadence within N ≤ 2³² − 1 (see [`step_count`]), the range of
    /// the kernels' 32-bit step counters.
    pub fn record_stride(&self) -> usize {
        self.record_every.min(self.steps.max(1))
    }

    /// Step indices (1-based, counting completed steps) at which samples are recorded:
    /// every `record_every` steps and the last step.
    pub fn record_points(&self) -> Vec<usize> {
        let mut points: Vec<usize> = (1..=self.steps)
            .filter(|k| k % self.record_every == 0)
            .collect();
        if points.last() != Some(&self.steps) {
            points.push(self.steps);
        }
        points
    }

    /// Number of record points, ⌊N / every⌋ plus one when N is not a multiple.
    pub fn records(&self) -> usize {
        self.records_through(self.steps)
    }

    /// Number of record points among steps 1…k (k ≤ N): ⌊k / every⌋, plus one at k = N
    /// when N is not a multiple.
    pub fn records_through(&self, k: usize) -> usize {
        k / self.record_every + usize::from(k == self.steps && !k.is_multiple_of(self.record_every))
    }

    /// Whether step k (1…N) ends at a record point: k a multiple of `every`, or k = N.
    pub fn is_record_point(&self, k: usize) -> bool {
        k.is_multiple_of(self.record_every) || k == self.steps
    }

    /// Times of the trajectory samples: t = 0 and every recorded step.
    pub fn sample_times(&self) -> Vec<f64> {
        std::iter::once(0.0)
            .chain(self.record_points().into_iter().map(|k| k as f64 * self.h))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_steps_are_refused_briefly_naming_both_settings() {
        let error = step_count(0.01, 1e300).unwrap_err().to_string();
        assert!(error.starts_with("scheme.t_end: "), "{error}");
        assert!(error.contains("1e300 / 0.01 = 1e302 steps"), "{error}");
        assert!(error.len() < 200, "{error}");
    }

    /// The record points counted through step k are those `record_points` lists up to k.
    #[test]
    fn record_points_are_counted_step_by_step() {
        for (steps, every) in [(8, 1), (8, 3), (9, 3), (8, 8), (8, 20), (5, usize::MAX)] {
            let grid = StepGrid {
                h: 0.1,
                steps,
                record_every: every,
            };
            let points = grid.record_points();
            for k in 0..=steps {
                let listed = points.iter().filter(|&&p| p <= k).count();
                assert_eq!(
                    grid.records_through(k),
                    listed,
                    "N = {steps}, every {every}, k {k}"
                );
                if k > 0 {
                    assert_eq!(grid.is_record_point(k), points.contains(&k), "k {k}");
                }
            }
        }
    }

    /// A cadence beyond N records exactly what the clamped cadence N records.
    #[test]
    fn the_record_stride_keeps_every_record() {
        for every in [7, 8, 9, 1 << 32, (1 << 32) + 1, usize::MAX] {
            let grid = StepGrid {
                h: 0.1,
                steps: 8,
                record_every: every,
            };
            let clamped = StepGrid {
                record_every: grid.record_stride(),
                ..grid
            };
            assert!(clamped.record_every <= 8, "{every}");
            assert_eq!(grid.record_points(), clamped.record_points(), "{every}");
            assert_eq!(grid.records(), clamped.records(), "{every}");
        }
    }

    #[test]
    fn record_count_matches_the_points() {
        for (steps, every) in [(10, 1), (10, 3), (10, 10), (10, 11), (1, 1), (7, 2)] {
            let grid = StepGrid {
                h: 0.1,
                steps,
                record_every: every,
            };
            assert_eq!(
                grid.records(),
                grid.record_points().len(),
                "{steps} {every}"
            );
        }
    }
}
