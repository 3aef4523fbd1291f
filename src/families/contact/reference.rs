//! The recording loop of the contact family's reference integrator.

use crate::plan::{MemberResult, RecordSpec, StepGrid};

/// Integrates one member through the grid with `step(k, y)`, recording [x, p, z] samples
/// and H(t, y) by `energy(k, y)` (k: steps done), with H at the start and the end as totals,
/// and the first step after which y was not finite.
pub fn record_member(
    grid: &StepGrid,
    spec: &RecordSpec,
    y0: Vec<f64>,
    h0: f64,
    mut step: impl FnMut(usize, &mut [f64]),
    mut energy: impl FnMut(usize, &[f64]) -> f64,
) -> MemberResult {
    let mut y = y0;
    let mut result = MemberResult::with_capacity(spec, grid.records());
    result.trajectory.extend_from_slice(&y);
    result.channels[0].push(h0);
    let mut last = h0;
    let record_points = grid.record_points();
    let mut next = record_points.iter().copied().peekable();
    for k in 0..grid.steps {
        step(k, &mut y);
        if result.nonfinite_step.is_none() && !y.iter().all(|v| v.is_finite()) {
            result.nonfinite_step = Some(k as u64 + 1);
        }
        if next.peek() == Some(&(k + 1)) {
            next.next();
            result.trajectory.extend_from_slice(&y);
            last = energy(k + 1, &y);
            result.channels[0].push(last);
        }
    }
    result.final_state = y;
    result.totals = vec![h0, last];
    result
}
