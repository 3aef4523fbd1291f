//! Short CPU timings repeated: a case of a few milliseconds timed once is at the mercy of
//! one thread wake-up or one descheduling on a shared machine, so it runs again until its
//! runs have taken a quarter second together, and each figure is the median of its runs.

use crate::error::Result;

/// Seconds that the runs of one short CPU timing take together at least (see
/// [`median_of_runs`]).
const REPEAT_SECONDS: f64 = 0.25;

/// Most runs of one CPU timing.
const MAX_RUNS: usize = 25;

/// The median of each figure of `run` (seconds) over repeated runs: run again while the
/// runs have taken less than [`REPEAT_SECONDS`] together, at most [`MAX_RUNS`] times. A
/// case of a few milliseconds timed once is at the mercy of one thread wake-up or one
/// descheduling on a shared machine; a case of a second or more runs once.
pub(super) fn median_of_runs<const K: usize>(
    mut run: impl FnMut() -> Result<[f64; K]>,
) -> Result<[f64; K]> {
    let mut runs = Vec::new();
    let mut total = 0.0;
    while runs.is_empty() || (total < REPEAT_SECONDS && runs.len() < MAX_RUNS) {
        let figures = run()?;
        total += figures.iter().sum::<f64>();
        runs.push(figures);
    }
    Ok(std::array::from_fn(|k| {
        let mut values: Vec<f64> = runs.iter().map(|figures| figures[k]).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// Short runs repeat until they have taken [`REPEAT_SECONDS`] (or [`MAX_RUNS`] runs),
    /// each figure the median of its own values; a long run runs once.
    #[test]
    fn short_timings_are_medians_of_repeated_runs() {
        let mut figures = [[0.1, 0.01], [0.02, 0.03], [0.05, 0.2]].into_iter();
        let mut runs = 0;
        let medians = median_of_runs(|| {
            runs += 1;
            Ok(figures.next().expect("at most three runs"))
        });
        assert_eq!((medians.unwrap(), runs), ([0.05, 0.03], 3));
        let mut runs = 0;
        let once = median_of_runs(|| {
            runs += 1;
            Ok([2.0])
        });
        assert_eq!((once.unwrap(), runs), ([2.0], 1));
        let mut runs = 0;
        let instant = median_of_runs(|| {
            runs += 1;
            Ok([0.0])
        });
        assert_eq!((instant.unwrap(), runs), ([0.0], MAX_RUNS));
        let failing: Result<[f64; 1]> = median_of_runs(|| Err(Error::invalid("run", "fails")));
        assert!(failing.is_err());
    }
}
