//! The CPU twin of the GPU ensemble kernel (`shaders/linear_ph_step.wgsl`): the same step
//! from the same [`StepOperators`], in f64, with the same loop shape.

use crate::compensated::kahan_add;
use crate::plan::operators::StepOperators;
use crate::results::StepEnergy;

/// One step x ← x + Δv with v = [x; u]; y ← Y v; energies as in the kernel:
/// stored = δᵀ Q (x + δ/2), port = h yᵀ u, dissipated = h ‖W v‖².
pub fn operator_step(
    ops: &StepOperators,
    h: f64,
    x: &mut [f64],
    carry: &mut [f64],
    u: &[f64],
    y: &mut [f64],
    delta: &mut [f64],
) -> StepEnergy {
    let (n, p) = (ops.states, ops.width());
    let v = |c: usize| if c < n { x[c] } else { u[c - n] };
    for (r, d) in delta.iter_mut().enumerate() {
        *d = (0..p).map(|c| ops.delta[r * p + c] * v(c)).sum();
    }
    let mut port = 0.0;
    for (row, y_row) in y.iter_mut().enumerate() {
        *y_row = (0..p).map(|c| ops.output[row * p + c] * v(c)).sum();
        port += *y_row * u[row];
    }
    let mut dissipated = 0.0;
    for row in 0..ops.stages * ops.rank {
        let w: f64 = (0..p).map(|c| ops.dissipation[row * p + c] * v(c)).sum();
        dissipated += w * w;
    }
    let mut stored = 0.0;
    for r in 0..n {
        let q_mid: f64 = (0..n)
            .map(|c| ops.q[r * n + c] * (x[c] + 0.5 * delta[c]))
            .sum();
        stored += delta[r] * q_mid;
    }
    for ((x_r, carry_r), &d) in x.iter_mut().zip(carry.iter_mut()).zip(delta.iter()) {
        kahan_add(x_r, carry_r, d);
    }
    let (port, dissipated) = (h * port, h * dissipated);
    StepEnergy {
        stored,
        supplied: port - dissipated,
        port,
        dissipated,
    }
}
