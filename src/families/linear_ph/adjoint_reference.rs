//! The reference sweeps of the discrete adjoint: one member's forward and backward sweeps
//! whole, in f64, the method as defined. The kernel (`shaders/linear_ph/adjoint_sweep.wgsl`)
//! and its twin (`linear_ph::adjoint_twin`) run the same sums in the same order, window by
//! window; the tests hold the three to the same bits.
//!
//! Forward (k = 0…N−1, checkpoints x_k at k ≡ 0 mod S):
//!
//! ```text
//!   r_k = C x_k − d_k,   cost += ½ ω_k |r_k|²,   x_{k+1} = x_k + Δ [x_k; U_k]
//! ```
//!
//! then the terminal sample: cost += ½ ω_N |r_N|², λ_N = ω_N Cᵀ r_N, Ḡ_C = ω_N r_N x_Nᵀ.
//! Backward, segment by segment from the last: the segment's states are recomputed from its
//! checkpoint by the same forward step (bit for bit the states of the forward sweep), then
//! for k from the segment's end down to its start:
//!
//! ```text
//!   Ḡ_Δ += λ_{k+1} [x_k; U_k]ᵀ,   Ḡ_C += ω_k r_k x_kᵀ,
//!   λ_k = λ_{k+1} + Δ_xᵀ λ_{k+1} + ω_k Cᵀ r_k          (Δ_x: the first n columns of Δ)
//! ```
//!
//! so that λ_0 = ∂𝒥/∂x0, Ḡ_Δ = ∂𝒥/∂Δ and Ḡ_C = ∂𝒥/∂C for the data term of the cost
//! (`linear_ph::gradient_plan`).

use crate::plan::SharedStream;

/// The sizes of one sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepShape {
    /// n.
    pub states: usize,
    /// m.
    pub inputs: usize,
    /// s.
    pub stages: usize,
    /// N.
    pub steps: usize,
    /// S: steps between checkpoints (the length of a recomputed segment).
    pub segment: usize,
}

impl SweepShape {
    /// p = n + s m.
    pub fn width(&self) -> usize {
        self.states + self.stages * self.inputs
    }

    /// Checkpoints ⌈N / S⌉: x_k for k = 0, S, 2S, … < N.
    pub fn checkpoints(&self) -> usize {
        self.steps.div_ceil(self.segment)
    }

    /// Stream values per step: U_k (s m), d_k (m), ω_k.
    pub fn stream_width(&self) -> usize {
        self.stages * self.inputs + self.inputs + 1
    }
}

/// A member's operators: Δ (n × p) and C = Bᵀ Q (m × n), row-major.
pub struct SweepOperators<'a> {
    pub delta: &'a [f64],
    pub output: &'a [f64],
}

/// The raw result of one member's sweeps.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepResult {
    /// [cost, λ_0 (n), Ḡ_Δ (n·p), Ḡ_C (m·n)] (`linear_ph::gradient_plan::raw_width`).
    pub raw: Vec<f64>,
    /// The first step (1-based) after which the state, the cost or the adjoint was not
    /// finite.
    pub nonfinite_step: Option<u64>,
}

/// x ← x + Δ [x; u] (the forward step); `delta` is n reals of work space.
fn advance(shape: &SweepShape, ops: &SweepOperators, x: &mut [f64], u: &[f64], delta: &mut [f64]) {
    let (n, p) = (shape.states, shape.width());
    for (r, out) in delta.iter_mut().enumerate() {
        let row = &ops.delta[r * p..(r + 1) * p];
        let mut acc = 0.0;
        for c in 0..n {
            acc += row[c] * x[c];
        }
        for (j, &uj) in u.iter().enumerate() {
            acc += row[n + j] * uj;
        }
        *out = acc;
    }
    for (x_r, d_r) in x.iter_mut().zip(delta.iter()) {
        *x_r += d_r;
    }
}

/// r = C x − d; returns |r|².
fn residual(shape: &SweepShape, ops: &SweepOperators, x: &[f64], d: &[f64], r: &mut [f64]) -> f64 {
    let n = shape.states;
    let mut squares = 0.0;
    for (row, out) in r.iter_mut().enumerate() {
        let mut acc = 0.0;
        for (&c_entry, &x_c) in ops.output[row * n..(row + 1) * n].iter().zip(x) {
            acc += c_entry * x_c;
        }
        *out = acc - d[row];
        squares += *out * *out;
    }
    squares
}

/// λ ← λ + Δ_xᵀ λ + ω Cᵀ r; `previous` is n reals of work space.
fn adjoint_step(
    shape: &SweepShape,
    ops: &SweepOperators,
    lambda: &mut [f64],
    r: &[f64],
    w: f64,
    previous: &mut [f64],
) {
    let (n, m, p) = (shape.states, shape.inputs, shape.width());
    previous.copy_from_slice(lambda);
    for (c, out) in lambda.iter_mut().enumerate() {
        let mut acc = 0.0;
        for (row, &l) in previous.iter().enumerate() {
            acc += ops.delta[row * p + c] * l;
        }
        let mut forcing = 0.0;
        for (row, &r_row) in r.iter().enumerate().take(m) {
            forcing += ops.output[row * n + c] * r_row;
        }
        *out = previous[c] + acc + w * forcing;
    }
}

fn all_finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

/// The forward and backward sweeps of one member from x0 (both passes of `main` in
/// `adjoint_sweep.wgsl`, over the whole grid at once).
pub fn adjoint_sweep(
    shape: &SweepShape,
    ops: &SweepOperators,
    x0: &[f64],
    stream: &SharedStream,
    terminal: (&[f64], f64),
) -> SweepResult {
    let (n, m, steps, segment) = (shape.states, shape.inputs, shape.steps, shape.segment);
    let (sm, p) = (shape.stages * m, shape.width());
    let mut status: Option<u64> = None;
    let mut note = |step: usize, finite: bool| {
        if !finite && status.is_none() {
            status = Some(step as u64);
        }
    };
    let mut x = x0.to_vec();
    let mut r = vec![0.0; m];
    let mut cost = 0.0;
    let mut checkpoints = vec![0.0; shape.checkpoints() * n];
    let mut scratch = Vec::new();
    let mut work = vec![0.0; n];
    // Forward.
    for k in 0..steps {
        if k % segment == 0 {
            checkpoints[(k / segment) * n..(k / segment + 1) * n].copy_from_slice(&x);
        }
        let values = stream.step(k, &mut scratch);
        let (u, rest) = values.split_at(sm);
        let (d, w) = (&rest[..m], rest[m]);
        cost += 0.5 * w * residual(shape, ops, &x, d, &mut r);
        advance(shape, ops, &mut x, u, &mut work);
        note(k + 1, all_finite(&x) && cost.is_finite());
    }
    let (d_end, w_end) = terminal;
    cost += 0.5 * w_end * residual(shape, ops, &x, d_end, &mut r);
    let mut lambda = vec![0.0; n];
    let mut g_delta = vec![0.0; n * p];
    let mut g_output = vec![0.0; m * n];
    adjoint_step(shape, ops, &mut lambda, &r, w_end, &mut work);
    for row in 0..m {
        for c in 0..n {
            g_output[row * n + c] += w_end * r[row] * x[c];
        }
    }
    // Backward, segment by segment.
    let mut states = vec![0.0; segment * n];
    for first in (0..steps).step_by(segment).rev() {
        let end = (first + segment).min(steps);
        states[..n].copy_from_slice(&checkpoints[(first / segment) * n..(first / segment + 1) * n]);
        for k in first..end - 1 {
            let values = stream.step(k, &mut scratch);
            let local = (k - first) * n;
            let (done, next) = states.split_at_mut(local + n);
            next[..n].copy_from_slice(&done[local..local + n]);
            advance(shape, ops, &mut next[..n], &values[..sm], &mut work);
        }
        for k in (first..end).rev() {
            let xk = &states[(k - first) * n..(k - first + 1) * n];
            let values = stream.step(k, &mut scratch);
            let (u, rest) = values.split_at(sm);
            let (d, w) = (&rest[..m], rest[m]);
            residual(shape, ops, xk, d, &mut r);
            for row in 0..n {
                let l = lambda[row];
                for c in 0..n {
                    g_delta[row * p + c] += l * xk[c];
                }
                for (j, &uj) in u.iter().enumerate() {
                    g_delta[row * p + n + j] += l * uj;
                }
            }
            for row in 0..m {
                for c in 0..n {
                    g_output[row * n + c] += w * r[row] * xk[c];
                }
            }
            adjoint_step(shape, ops, &mut lambda, &r, w, &mut work);
            note(k + 1, all_finite(&lambda));
        }
    }
    let mut raw = Vec::with_capacity(1 + n + n * p + m * n);
    raw.push(cost);
    raw.extend_from_slice(&lambda);
    raw.extend_from_slice(&g_delta);
    raw.extend_from_slice(&g_output);
    if status.is_none() && !all_finite(&raw) {
        status = Some(steps as u64);
    }
    SweepResult {
        raw,
        nonfinite_step: status,
    }
}
