//! The benchmark's baseline: the damped, driven pendulum chain of [`super::workloads`]
//! written out by hand in Rust, as a programmer would for this one model — not on any run
//! path; `harbor bench --family port-hamiltonian` times it beside the fast engine and the
//! reference integrator. For D pendulums (x = [q, p], n = 2D), with k the coupling and c
//! the damping:
//!
//! ```text
//!   H = Σ p_i²/2 + Σ (1 − cos q_i) + (k/2) Σ (q_{i+1} − q_i)²
//!   q̇_i = p_i,   ṗ_i = −sin q_i − k (L q)_i − c p_i + δ_i0 u     (L: the path's Laplacian)
//!   ∂f/∂x = [[0, I], [−diag(cos q) − k L, −c I]],   eᵀRe = c Σ p_i²,   Gᵀe = p_0
//! ```
//!
//! integrated by the same method as the plan: Gauss s = 2 with Newton from Z = 0 on the
//! exact Jacobian until max|ΔZ| ≤ tolerance · max(|x_k|, |Z|), a dense LU with partial
//! pivoting on stack arrays (sizes fixed at compile time per D), x updated with Kahan
//! summation, and the step's energies (stored, port, dissipated) summed. It uses std's sin
//! and cos. Its numbers agree with the reference's to rounding; they are not meant to be
//! bit-identical.

use rayon::prelude::*;
use std::time::Instant;

use super::plan::{PortHamiltonianMember, PortHamiltonianPlan};
use crate::compensated::kahan_add;
use crate::error::Result;

/// Degrees of freedom the baseline is compiled for.
pub const DEGREES: std::ops::RangeInclusive<usize> = 1..=8;

/// What the baseline computes for one member: its final state, the summed energies
/// [stored, supplied, port, dissipated] and the step whose stage solve failed (0: none).
#[derive(Debug, Clone, PartialEq)]
pub struct HandResult {
    pub final_state: Vec<f64>,
    pub energies: [f64; 4],
    pub failed_step: usize,
}

/// Integrates `member` of `plan` (a pendulum chain of `dof` degrees of freedom, Gauss
/// s = 2); `None` when `dof` is outside [`DEGREES`] or the plan is not s = 2.
pub fn integrate(
    plan: &PortHamiltonianPlan,
    dof: usize,
    member: &PortHamiltonianMember,
) -> Option<HandResult> {
    if plan.scheme.stages != 2 || plan.model.n() != 2 * dof {
        return None;
    }
    macro_rules! sizes {
        ($($d:literal),*) => {
            match dof {
                $($d => Some(Chain::<$d, { 2 * $d }, { 4 * $d }>::new(plan, member).run(plan)),)*
                _ => None,
            }
        };
    }
    sizes!(1, 2, 3, 4, 5, 6, 7, 8)
}

/// Seconds the baseline takes for members `0..count` of `plan` on all cores (the members
/// are drawn beforehand, outside the timing); `None` where [`integrate`] has no baseline.
pub fn time(plan: &PortHamiltonianPlan, dof: usize, count: usize) -> Option<Result<f64>> {
    if !DEGREES.contains(&dof) || plan.scheme.stages != 2 || plan.model.n() != 2 * dof {
        return None;
    }
    let members = match (0..count)
        .into_par_iter()
        .map(|i| plan.member(i))
        .collect::<Result<Vec<_>>>()
    {
        Ok(members) => members,
        Err(e) => return Some(Err(e)),
    };
    let started = Instant::now();
    let failed: usize = members
        .par_iter()
        .map(|member| integrate(plan, dof, member).map_or(0, |r| r.failed_step))
        .sum();
    let seconds = started.elapsed().as_secs_f64();
    std::hint::black_box(failed);
    Some(Ok(seconds))
}

/// One member of a chain of D pendulums: N = 2D states, M = 2N stage unknowns.
struct Chain<const D: usize, const N: usize, const M: usize> {
    c: f64,
    k: f64,
    a: [[f64; 2]; 2],
    b: [f64; 2],
    h: f64,
    tolerance: f64,
    max_iterations: usize,
    x: [f64; N],
}

impl<const D: usize, const N: usize, const M: usize> Chain<D, N, M> {
    fn new(plan: &PortHamiltonianPlan, member: &PortHamiltonianMember) -> Self {
        let a = &plan.scheme.a_positions;
        let mut x = [0.0; N];
        x.copy_from_slice(&member.x0);
        Chain {
            c: member.parameters[0],
            k: member.parameters[1],
            a: [[a[(0, 0)], a[(0, 1)]], [a[(1, 0)], a[(1, 1)]]],
            b: [plan.scheme.b[0], plan.scheme.b[1]],
            h: plan.grid.h,
            tolerance: plan.newton.tolerance,
            max_iterations: plan.newton.max_iterations,
            x,
        }
    }

    /// H(x).
    fn energy(&self, x: &[f64; N]) -> f64 {
        let (q, p) = x.split_at(D);
        let mut h = 0.0;
        for i in 0..D {
            h += 0.5 * p[i] * p[i] + (1.0 - q[i].cos());
        }
        for i in 1..D {
            let d = q[i] - q[i - 1];
            h += 0.5 * self.k * d * d;
        }
        h
    }

    /// f(x, u).
    fn flow(&self, x: &[f64; N], u: f64, f: &mut [f64; N]) {
        let (q, p) = x.split_at(D);
        for i in 0..D {
            let mut spring = 0.0;
            if i > 0 {
                spring += q[i] - q[i - 1];
            }
            if i + 1 < D {
                spring -= q[i + 1] - q[i];
            }
            f[i] = p[i];
            f[D + i] = -q[i].sin() - self.k * spring - self.c * p[i];
        }
        f[D] += u;
    }

    /// The lower-left block of ∂f/∂x, −(diag(cos q) + k L), row-major D × D.
    fn stiffness(&self, x: &[f64; N], out: &mut [[f64; D]; D]) {
        for (i, row) in out.iter_mut().enumerate() {
            *row = [0.0; D];
            let degree = usize::from(i > 0) + usize::from(i + 1 < D);
            row[i] = -(x[i].cos() + self.k * degree as f64);
            if i > 0 {
                row[i - 1] = self.k;
            }
            if i + 1 < D {
                row[i + 1] = self.k;
            }
        }
    }

    /// Integrates through the plan's grid.
    fn run(mut self, plan: &PortHamiltonianPlan) -> HandResult {
        let mut carry = [0.0; N];
        let mut energies = [0.0; 4];
        let mut before = self.energy(&self.x);
        let mut scratch = Vec::new();
        for step in 0..plan.grid.steps {
            let u = plan.inputs.step(step, &mut scratch);
            let u = [u[0], u[1]];
            let Some(flows) = self.solve(&u) else {
                return HandResult {
                    final_state: vec![f64::NAN; N],
                    energies: [f64::NAN; 4],
                    failed_step: step + 1,
                };
            };
            let (mut port, mut dissipated) = (0.0, 0.0);
            for (j, (_, point)) in flows.iter().enumerate() {
                let y = self.b[j] * point[D];
                port += y * u[j];
                let p = &point[D..];
                dissipated += self.b[j] * self.c * p.iter().map(|p| p * p).sum::<f64>();
            }
            for (r, (x, carry)) in self.x.iter_mut().zip(&mut carry).enumerate() {
                let delta = self.b[0] * flows[0].0[r] + self.b[1] * flows[1].0[r];
                kahan_add(x, carry, self.h * delta);
            }
            let after = self.energy(&self.x);
            let (port, dissipated) = (self.h * port, self.h * dissipated);
            for (sum, value) in
                energies
                    .iter_mut()
                    .zip([after - before, port - dissipated, port, dissipated])
            {
                *sum += value;
            }
            before = after;
        }
        HandResult {
            final_state: self.x.to_vec(),
            energies,
            failed_step: 0,
        }
    }

    /// Solves the stage equations of the step from `self.x` with stage inputs `u`; the
    /// flows and stage points at the solution, or `None` when Newton fails.
    fn solve(&self, u: &[f64; 2]) -> Option<[([f64; N], [f64; N]); 2]> {
        let (h, x) = (self.h, &self.x);
        let mut z = [[0.0; N]; 2];
        let scale_x = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let stage_point = |z: &[f64; N]| -> [f64; N] { std::array::from_fn(|r| x[r] + z[r]) };
        for _ in 0..self.max_iterations {
            let mut f = [[0.0; N]; 2];
            let mut stiffness = [[[0.0; D]; D]; 2];
            for j in 0..2 {
                let point = stage_point(&z[j]);
                self.flow(&point, u[j], &mut f[j]);
                self.stiffness(&point, &mut stiffness[j]);
            }
            // rhs = −(Z_i − h Σ_j a_ij f_j); matrix = I − h a_ij ∂f/∂x_j.
            let mut rhs = [0.0; M];
            let mut matrix = [[0.0; M]; M];
            for i in 0..2 {
                for r in 0..N {
                    rhs[i * N + r] =
                        -(z[i][r] - h * (self.a[i][0] * f[0][r] + self.a[i][1] * f[1][r]));
                    matrix[i * N + r][i * N + r] = 1.0;
                }
                for j in 0..2 {
                    let factor = h * self.a[i][j];
                    for r in 0..D {
                        // ∂q̇/∂p = I, ∂ṗ/∂q = stiffness, ∂ṗ/∂p = −c I.
                        matrix[i * N + r][j * N + D + r] -= factor;
                        matrix[i * N + D + r][j * N + D + r] += factor * self.c;
                        for c in 0..D {
                            matrix[i * N + D + r][j * N + c] -= factor * stiffness[j][r][c];
                        }
                    }
                }
            }
            if !lu_solve(&mut matrix, &mut rhs) {
                return None;
            }
            let mut largest = 0.0_f64;
            for (e, d) in rhs.iter().enumerate() {
                z[e / N][e % N] += d;
                largest = largest.max(d.abs());
            }
            let scale = z.iter().flatten().fold(scale_x, |m, v| m.max(v.abs()));
            let last = if scale > 0.0 { largest / scale } else { 0.0 };
            if last <= self.tolerance {
                let points = [stage_point(&z[0]), stage_point(&z[1])];
                let mut flows = [([0.0; N], points[0]), ([0.0; N], points[1])];
                for (j, (f, point)) in flows.iter_mut().enumerate() {
                    self.flow(point, u[j], f);
                }
                return flows
                    .iter()
                    .all(|(f, _)| f.iter().all(|v| v.is_finite()))
                    .then_some(flows);
            }
        }
        None
    }
}

/// Solves `matrix` d = `rhs` in place (d in `rhs`) by LU with partial pivoting; false when
/// a pivot is zero or d is not finite.
fn lu_solve<const M: usize>(matrix: &mut [[f64; M]; M], rhs: &mut [f64; M]) -> bool {
    for i in 0..M {
        let mut pivot = i;
        for r in i + 1..M {
            if matrix[r][i].abs() > matrix[pivot][i].abs() {
                pivot = r;
            }
        }
        if matrix[pivot][i] == 0.0 {
            return false;
        }
        matrix.swap(i, pivot);
        rhs.swap(i, pivot);
        let inverse = 1.0 / matrix[i][i];
        let (top, below) = matrix.split_at_mut(i + 1);
        let pivot_row = &top[i];
        for (offset, row) in below.iter_mut().enumerate() {
            let l = row[i] * inverse;
            if l != 0.0 {
                for (entry, &p) in row[i + 1..].iter_mut().zip(&pivot_row[i + 1..]) {
                    *entry -= l * p;
                }
                rhs[i + 1 + offset] -= l * rhs[i];
            }
        }
    }
    for i in (0..M).rev() {
        let mut sum = rhs[i];
        for c in i + 1..M {
            sum -= matrix[i][c] * rhs[c];
        }
        rhs[i] = sum / matrix[i][i];
    }
    rhs.iter().all(|v| v.is_finite())
}
