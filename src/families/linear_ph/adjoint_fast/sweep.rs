//! The lanes' arithmetic of the adjoint's fast engine: both sweeps of a block's groups,
//! stepped together, each operation the reference's (`linear_ph::adjoint_reference`) in
//! the same order, products and sums rounded apart, compiled per instruction set and, for
//! n ≤ 8, per state size.

use super::CandidateGroup;
#[cfg(target_arch = "x86_64")]
use crate::kernels::lanes::{Avx2, Avx512};
use crate::kernels::lanes::{Lanes, Portable, Simd, SimdLevel, ZERO};
use crate::linear_ph::adjoint_reference::SweepShape;

/// What every candidate of a run shares: the sizes, the stream (per step k < N: U_k, d_k,
/// ω_k) and the terminal sample (d_N, ω_N).
pub(super) struct Problem<'a> {
    pub shape: SweepShape,
    pub stream: &'a [f64],
    pub terminal: (&'a [f64], f64),
}

impl Problem<'_> {
    /// (U_k, d_k, ω_k).
    fn step(&self, k: usize) -> (&[f64], &[f64], f64) {
        let (sm, m) = (self.shape.stages * self.shape.inputs, self.shape.inputs);
        let width = self.shape.stream_width();
        let values = &self.stream[k * width..(k + 1) * width];
        (&values[..sm], &values[sm..sm + m], values[sm + m])
    }
}

/// One group's sweeps in progress.
pub(super) struct GroupSweep {
    x: Vec<Lanes>,
    cost: Lanes,
    /// x_k at k ≡ 0 mod S.
    checkpoints: Vec<Lanes>,
    /// The segment being swept backward, recomputed from its checkpoint.
    segment: Vec<Lanes>,
    /// Δ [x; u], before it is added to x.
    increment: Vec<Lanes>,
    /// r = C x − d.
    r: Vec<Lanes>,
    lambda: Vec<Lanes>,
    /// λ_{k+1} while λ_k is formed.
    previous: Vec<Lanes>,
    g_delta: Vec<Lanes>,
    g_output: Vec<Lanes>,
}

impl GroupSweep {
    pub fn new(shape: &SweepShape, group: &CandidateGroup) -> Self {
        let (n, m, p) = (shape.states, shape.inputs, shape.width());
        GroupSweep {
            x: group.x0.clone(),
            cost: ZERO,
            checkpoints: vec![ZERO; shape.checkpoints() * n],
            segment: vec![ZERO; shape.segment * n],
            increment: vec![ZERO; n],
            r: vec![ZERO; m],
            lambda: vec![ZERO; n],
            previous: vec![ZERO; n],
            g_delta: vec![ZERO; n * p],
            g_output: vec![ZERO; m * n],
        }
    }

    /// Lane `lane`'s raw result: [cost, λ_0, Ḡ_Δ, Ḡ_C].
    pub fn raw_into(&self, lane: usize, raw: &mut [f64]) {
        let values = std::iter::once(&self.cost)
            .chain(&self.lambda)
            .chain(&self.g_delta)
            .chain(&self.g_output);
        for (out, value) in raw.iter_mut().zip(values) {
            *out = value[lane];
        }
    }
}

/// Both sweeps of `groups` with `level`'s instructions.
pub(super) fn sweep(
    level: SimdLevel,
    problem: &Problem,
    groups: &[CandidateGroup],
    sweeps: &mut [GroupSweep],
) {
    match level {
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 => {
            let simd = Avx512::new().expect("SimdLevel::get found AVX-512");
            // SAFETY: the token exists, so the CPU has the wrapper's features.
            unsafe { sweep_avx512(simd, problem, groups, sweeps) }
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => {
            let simd = Avx2::new().expect("SimdLevel::get found AVX2");
            // SAFETY: as above.
            unsafe { sweep_avx2(simd, problem, groups, sweeps) }
        }
        _ => sweep_in(Portable, problem, groups, sweeps),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
fn sweep_avx512(
    simd: Avx512,
    problem: &Problem,
    groups: &[CandidateGroup],
    sweeps: &mut [GroupSweep],
) {
    sweep_in(simd, problem, groups, sweeps);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn sweep_avx2(simd: Avx2, problem: &Problem, groups: &[CandidateGroup], sweeps: &mut [GroupSweep]) {
    sweep_in(simd, problem, groups, sweeps);
}

/// Calls [`sweep_with`] with n known at compile time where it is small (n ≤ 8), so that
/// the loops over the state unroll; else with n at run time (`N` = 0).
#[inline(always)]
fn sweep_in<S: Simd>(
    simd: S,
    problem: &Problem,
    groups: &[CandidateGroup],
    sweeps: &mut [GroupSweep],
) {
    macro_rules! with_states {
        ($($n:literal)*) => {
            match problem.shape.states {
                $($n => sweep_with::<S, $n>(simd, problem, groups, sweeps),)*
                _ => sweep_with::<S, 0>(simd, problem, groups, sweeps),
            }
        };
    }
    with_states!(1 2 3 4 5 6 7 8)
}

/// The forward sweep, the terminal sample and the backward sweep of every group, the
/// groups in step with one another.
#[inline(always)]
fn sweep_with<S: Simd, const N: usize>(
    simd: S,
    problem: &Problem,
    groups: &[CandidateGroup],
    sweeps: &mut [GroupSweep],
) {
    let shape = &problem.shape;
    let (steps, segment) = (shape.steps, shape.segment);
    let n = if N > 0 { N } else { shape.states };
    // Forward: r_k = C x_k − d_k, cost += ½ ω_k |r_k|², x_{k+1} = x_k + Δ [x_k; U_k].
    for k in 0..steps {
        let (u, d, w) = problem.step(k);
        let half_w = simd.splat(0.5 * w);
        let checkpoint = (k % segment == 0).then_some((k / segment) * n);
        for (group, state) in groups.iter().zip(sweeps.iter_mut()) {
            if let Some(at) = checkpoint {
                state.checkpoints[at..at + n].copy_from_slice(&state.x);
            }
            let squares = residual(simd, n, &group.output, &state.x, d, &mut state.r);
            let cost = simd.add(simd.load(&state.cost), simd.mul(half_w, squares));
            simd.store(&mut state.cost, cost);
            advance::<S, N>(simd, n, &group.delta, &mut state.x, u, &mut state.increment);
        }
    }
    // The terminal sample: cost += ½ ω_N |r_N|², λ_N = ω_N Cᵀ r_N, Ḡ_C = ω_N r_N x_Nᵀ.
    let (d_end, w_end) = problem.terminal;
    for (group, state) in groups.iter().zip(sweeps.iter_mut()) {
        let squares = residual(simd, n, &group.output, &state.x, d_end, &mut state.r);
        let cost = simd.add(
            simd.load(&state.cost),
            simd.mul(simd.splat(0.5 * w_end), squares),
        );
        simd.store(&mut state.cost, cost);
        let GroupSweep {
            x,
            r,
            lambda,
            previous,
            g_output,
            ..
        } = state;
        adjoint_step::<S, N>(simd, n, group, lambda, previous, r, w_end);
        accumulate_output(simd, n, g_output, r, x, w_end);
    }
    // Backward, segment by segment from the last.
    for first in (0..steps).step_by(segment).rev() {
        let end = (first + segment).min(steps);
        let at = (first / segment) * n;
        for state in sweeps.iter_mut() {
            let (checkpoints, states) = (&state.checkpoints, &mut state.segment);
            states[..n].copy_from_slice(&checkpoints[at..at + n]);
        }
        for k in first..end - 1 {
            let (u, _, _) = problem.step(k);
            let local = (k - first) * n;
            for (group, state) in groups.iter().zip(sweeps.iter_mut()) {
                let (done, next) = state.segment.split_at_mut(local + n);
                next[..n].copy_from_slice(&done[local..]);
                advance::<S, N>(
                    simd,
                    n,
                    &group.delta,
                    &mut next[..n],
                    u,
                    &mut state.increment,
                );
            }
        }
        for k in (first..end).rev() {
            let (u, d, w) = problem.step(k);
            let local = (k - first) * n;
            for (group, state) in groups.iter().zip(sweeps.iter_mut()) {
                let GroupSweep {
                    segment,
                    r,
                    lambda,
                    previous,
                    g_delta,
                    g_output,
                    ..
                } = state;
                let xk = &segment[local..local + n];
                residual(simd, n, &group.output, xk, d, r);
                accumulate_delta(simd, n, g_delta, lambda, xk, u);
                accumulate_output(simd, n, g_output, r, xk, w);
                adjoint_step::<S, N>(simd, n, group, lambda, previous, r, w);
            }
        }
    }
}

/// r = C x − d, each row's sum from 0 in column order; returns |r|² summed in row order.
#[inline(always)]
fn residual<S: Simd>(
    simd: S,
    n: usize,
    output: &[Lanes],
    x: &[Lanes],
    d: &[f64],
    r: &mut [Lanes],
) -> S::V {
    let x = &x[..n];
    let mut squares = simd.zero();
    for (row, (out, &d_row)) in r.iter_mut().zip(d).enumerate() {
        let mut acc = simd.zero();
        for (entry, x_c) in output[row * n..(row + 1) * n].iter().zip(x) {
            acc = simd.add(acc, simd.mul(simd.load(entry), simd.load(x_c)));
        }
        let value = simd.sub(acc, simd.splat(d_row));
        simd.store(out, value);
        squares = simd.add(squares, simd.mul(value, value));
    }
    squares
}

/// x ← x + Δ [x; u]: every row of Δ [x; u] summed from 0 over x's columns, then u's,
/// before x changes. With n fixed (`N` > 0) the rows' sums advance side by side, column by
/// column, in registers (independent chains; each row's order is the same).
#[inline(always)]
fn advance<S: Simd, const N: usize>(
    simd: S,
    n: usize,
    delta: &[Lanes],
    x: &mut [Lanes],
    u: &[f64],
    increment: &mut [Lanes],
) {
    let p = n + u.len();
    if N > 0 {
        let x = &mut x[..N];
        let state: [S::V; N] = std::array::from_fn(|c| simd.load(&x[c]));
        let mut acc = [simd.zero(); N];
        for (c, &x_c) in state.iter().enumerate() {
            for (row, acc) in acc.iter_mut().enumerate() {
                *acc = simd.add(*acc, simd.mul(simd.load(&delta[row * p + c]), x_c));
            }
        }
        for (j, &u_j) in u.iter().enumerate() {
            let u_j = simd.splat(u_j);
            for (row, acc) in acc.iter_mut().enumerate() {
                *acc = simd.add(*acc, simd.mul(simd.load(&delta[row * p + N + j]), u_j));
            }
        }
        for ((x_r, &value), &acc) in x.iter_mut().zip(&state).zip(&acc) {
            simd.store(x_r, simd.add(value, acc));
        }
        return;
    }
    let (x, increment) = (&mut x[..n], &mut increment[..n]);
    for (row, out) in increment.iter_mut().enumerate() {
        let entries = &delta[row * p..(row + 1) * p];
        let mut acc = simd.zero();
        for (entry, x_c) in entries[..n].iter().zip(x.iter()) {
            acc = simd.add(acc, simd.mul(simd.load(entry), simd.load(x_c)));
        }
        for (entry, &u_j) in entries[n..].iter().zip(u) {
            acc = simd.add(acc, simd.mul(simd.load(entry), simd.splat(u_j)));
        }
        simd.store(out, acc);
    }
    for (x_r, step) in x.iter_mut().zip(increment.iter()) {
        let value = simd.add(simd.load(x_r), simd.load(step));
        simd.store(x_r, value);
    }
}

/// λ ← λ + Δ_xᵀ λ + ω Cᵀ r: per column c, (λ_c + Σ_row Δ[row, c] λ_row) + ω Σ_row
/// C[row, c] r_row, each sum from 0 in row order, from λ as it was (`previous`). With n
/// fixed (`N` > 0) the columns' sums advance side by side, row by row, in registers.
#[inline(always)]
fn adjoint_step<S: Simd, const N: usize>(
    simd: S,
    n: usize,
    group: &CandidateGroup,
    lambda: &mut [Lanes],
    previous: &mut [Lanes],
    r: &[Lanes],
    w: f64,
) {
    let p = group.delta.len() / n;
    let w = simd.splat(w);
    if N > 0 {
        let lambda = &mut lambda[..N];
        let before: [S::V; N] = std::array::from_fn(|c| simd.load(&lambda[c]));
        let mut acc = [simd.zero(); N];
        for (row, &l) in before.iter().enumerate() {
            for (c, acc) in acc.iter_mut().enumerate() {
                *acc = simd.add(*acc, simd.mul(simd.load(&group.delta[row * p + c]), l));
            }
        }
        let mut forcing = [simd.zero(); N];
        for (row, r_row) in r.iter().enumerate() {
            let r_row = simd.load(r_row);
            for (c, forcing) in forcing.iter_mut().enumerate() {
                let entry = simd.load(&group.output[row * N + c]);
                *forcing = simd.add(*forcing, simd.mul(entry, r_row));
            }
        }
        for (c, out) in lambda.iter_mut().enumerate() {
            simd.store(
                out,
                simd.add(simd.add(before[c], acc[c]), simd.mul(w, forcing[c])),
            );
        }
        return;
    }
    let (lambda, previous) = (&mut lambda[..n], &mut previous[..n]);
    previous.copy_from_slice(lambda);
    for (c, out) in lambda.iter_mut().enumerate() {
        let mut acc = simd.zero();
        for (row, l) in previous.iter().enumerate() {
            acc = simd.add(
                acc,
                simd.mul(simd.load(&group.delta[row * p + c]), simd.load(l)),
            );
        }
        let mut forcing = simd.zero();
        for (row, r_row) in r.iter().enumerate() {
            let entry = &group.output[row * n + c];
            forcing = simd.add(forcing, simd.mul(simd.load(entry), simd.load(r_row)));
        }
        let value = simd.add(simd.add(simd.load(&previous[c]), acc), simd.mul(w, forcing));
        simd.store(out, value);
    }
}

/// Ḡ_Δ += λ [x; u]ᵀ (λ before this step's update).
#[inline(always)]
fn accumulate_delta<S: Simd>(
    simd: S,
    n: usize,
    g_delta: &mut [Lanes],
    lambda: &[Lanes],
    x: &[Lanes],
    u: &[f64],
) {
    let (lambda, x) = (&lambda[..n], &x[..n]);
    let p = n + u.len();
    for (row, l) in lambda.iter().enumerate() {
        let l = simd.load(l);
        let entries = &mut g_delta[row * p..(row + 1) * p];
        let (on_x, on_u) = entries.split_at_mut(n);
        for (entry, x_c) in on_x.iter_mut().zip(x) {
            let value = simd.add(simd.load(entry), simd.mul(l, simd.load(x_c)));
            simd.store(entry, value);
        }
        for (entry, &u_j) in on_u.iter_mut().zip(u) {
            let value = simd.add(simd.load(entry), simd.mul(l, simd.splat(u_j)));
            simd.store(entry, value);
        }
    }
}

/// Ḡ_C += (ω r) xᵀ.
#[inline(always)]
fn accumulate_output<S: Simd>(
    simd: S,
    n: usize,
    g_output: &mut [Lanes],
    r: &[Lanes],
    x: &[Lanes],
    w: f64,
) {
    let x = &x[..n];
    let w = simd.splat(w);
    for (row, r_row) in r.iter().enumerate() {
        let weighted = simd.mul(w, simd.load(r_row));
        for (entry, x_c) in g_output[row * n..(row + 1) * n].iter_mut().zip(x) {
            let value = simd.add(simd.load(entry), simd.mul(weighted, simd.load(x_c)));
            simd.store(entry, value);
        }
    }
}
