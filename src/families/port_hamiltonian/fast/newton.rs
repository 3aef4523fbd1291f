//! The stage equations of one Gauss step solved for a block of members side by side, with
//! the reference's operations in the reference's order in every lane
//! ([`super::super::gauss_step`]):
//!
//! ```text
//!   F_i(Z) = Z_i − h Σ_j a_ij f(x_k + Z_j, u_j) = 0,
//!   (I − h (a_ij ∂f/∂x(x_k + Z_j, u_j))) ΔZ = −F(Z),   Z ← Z + ΔZ,   from Z = 0,
//! ```
//!
//! until max|ΔZ| ≤ tolerance · max(|x_k|, |Z|) (or the scale vanishes). All lanes iterate
//! together: the stage tape runs once per iteration over the s stage points of every lane
//! ([`crate::expr::Tape::eval_lanes_inline`]), the Newton matrices are assembled and solved
//! lane by lane ([`super::lu`]). A lane that converged keeps its Z (its updates are masked
//! out), a lane that failed is marked and left alone, so each lane's Z, and the stage
//! outputs at its final stage points, are those the reference computes for its member.
//!
//! Layouts (`B` lanes, `P = s·B` stage points, point `j·B + l` is stage j of lane l):
//! stage variables `[x, θ, u]` and outputs `[f, ∂f/∂x, eᵀRe, Gᵀe]` point-minor
//! (`value[v · P + j · B + l]`), Z and the right-hand side `[(i · n + r) · B + l]`, the
//! Newton matrix `[(row · s·n + column) · B + l]`.

use super::lu::{LuWork, solve_lanes};
use crate::families::port_hamiltonian::gauss_step::NewtonSettings;
use crate::families::port_hamiltonian::model::ExpressionModel;
use crate::tableau::Scheme;

/// A block's stage solve: the scheme, the settings and the work buffers.
#[derive(Debug, Clone)]
pub struct LaneNewton<'a> {
    model: &'a ExpressionModel,
    settings: NewtonSettings,
    h: f64,
    /// s, n, m, lanes B.
    stages: usize,
    n: usize,
    m: usize,
    lanes: usize,
    /// a_ij, row-major.
    a: Vec<f64>,
    /// The stage tape's variables at every stage point.
    vars: Vec<f64>,
    /// The stage tape's outputs at every stage point.
    stage_out: Vec<f64>,
    scratch: Vec<f64>,
    z: Vec<f64>,
    rhs: Vec<f64>,
    matrix: Vec<f64>,
    lu: LuWork,
    /// Lanes still iterating.
    solving: Vec<bool>,
    /// Lanes whose values in the current check were not finite (or whose matrix was
    /// singular).
    bad: Vec<bool>,
    scale_x: Vec<f64>,
    largest: Vec<f64>,
    scale: Vec<f64>,
}

impl<'a> LaneNewton<'a> {
    /// The solve for `lanes` members with parameters `parameters` (θ_p of lane l at
    /// `p · lanes + l`).
    pub fn new(
        model: &'a ExpressionModel,
        scheme: &Scheme,
        h: f64,
        settings: NewtonSettings,
        lanes: usize,
        parameters: &[f64],
    ) -> Self {
        let (n, m, stages) = (model.n(), model.inputs, scheme.stages);
        let count = model.parameters.len();
        assert_eq!(parameters.len(), count * lanes, "parameters × lanes");
        let points = stages * lanes;
        let dim = stages * n;
        let mut vars = vec![0.0; model.stage_vars() * points];
        for p in 0..count {
            for j in 0..stages {
                vars[(n + p) * points + j * lanes..][..lanes]
                    .copy_from_slice(&parameters[p * lanes..][..lanes]);
            }
        }
        LaneNewton {
            model,
            settings,
            h,
            stages,
            n,
            m,
            lanes,
            a: (0..stages * stages)
                .map(|e| scheme.a_positions[(e / stages, e % stages)])
                .collect(),
            vars,
            stage_out: vec![0.0; model.stage.n_outputs() * points],
            scratch: Vec::new(),
            z: vec![0.0; dim * lanes],
            rhs: vec![0.0; dim * lanes],
            matrix: vec![0.0; dim * dim * lanes],
            lu: LuWork::new(lanes),
            solving: vec![false; lanes],
            bad: vec![false; lanes],
            scale_x: vec![0.0; lanes],
            largest: vec![0.0; lanes],
            scale: vec![0.0; lanes],
        }
    }

    /// Output `o` of the stage tape at stage `j`, one value per lane (after
    /// [`Self::solve`]: at the final stage points).
    #[inline(always)]
    pub fn output(&self, o: usize, j: usize) -> &[f64] {
        &self.stage_out[(o * self.stages + j) * self.lanes..][..self.lanes]
    }

    /// Sets the stage inputs u_j (s × m, stage-major), the same for every lane.
    pub fn set_inputs(&mut self, u: &[f64]) {
        let points = self.stages * self.lanes;
        let u_base = self.n + self.model.parameters.len();
        for j in 0..self.stages {
            for k in 0..self.m {
                self.vars[(u_base + k) * points + j * self.lanes..][..self.lanes]
                    .fill(u[j * self.m + k]);
            }
        }
    }

    /// Solves the stage equations from `x` (n × lanes) in every lane not marked in
    /// `failed`, and marks those whose solve fails (a value not finite, a singular
    /// matrix, no convergence within the iteration cap), as the reference fails them.
    #[inline(always)]
    pub fn solve(&mut self, x: &[f64], failed: &mut [bool]) {
        let (n, lanes, h) = (self.n, self.lanes, self.h);
        let (s, dim) = (self.stages, self.stages * self.n);
        self.z.fill(0.0);
        self.scale_x.fill(0.0);
        for row in x.chunks_exact(lanes) {
            for (scale, &v) in self.scale_x.iter_mut().zip(row) {
                *scale = scale.max(v.abs());
            }
        }
        for (solving, &failed) in self.solving.iter_mut().zip(failed.iter()) {
            *solving = !failed;
        }
        for _ in 0..self.settings.max_iterations {
            if !self.solving.contains(&true) {
                break;
            }
            self.evaluate(x);
            self.bad.fill(false);
            mark_nonfinite(&self.stage_out, &mut self.bad);
            // F_i = Z_i − h Σ_j a_ij f_j: rhs = −F.
            for i in 0..s {
                for r in 0..n {
                    let rhs = &mut self.rhs[(i * n + r) * lanes..][..lanes];
                    rhs.fill(0.0);
                    for j in 0..s {
                        let a_ij = self.a[i * s + j];
                        let f = &self.stage_out[(r * s + j) * lanes..][..lanes];
                        for (sum, &f) in rhs.iter_mut().zip(f) {
                            *sum += a_ij * f;
                        }
                    }
                    let z = &self.z[(i * n + r) * lanes..][..lanes];
                    for (sum, &z) in rhs.iter_mut().zip(z) {
                        *sum = -(z - h * *sum);
                    }
                }
            }
            // ∂F/∂Z = I − h (a_ij ∂f/∂x_j).
            for i in 0..s {
                for j in 0..s {
                    let factor = h * self.a[i * s + j];
                    for r in 0..n {
                        for c in 0..n {
                            let identity = if i == j && r == c { 1.0 } else { 0.0 };
                            let o = n + r * n + c;
                            let jacobian = &self.stage_out[(o * s + j) * lanes..][..lanes];
                            let row = i * n + r;
                            let entry =
                                &mut self.matrix[(row * dim + j * n + c) * lanes..][..lanes];
                            for (e, &d) in entry.iter_mut().zip(jacobian) {
                                *e = identity - factor * d;
                            }
                        }
                    }
                }
            }
            solve_lanes(
                &mut self.matrix,
                &mut self.rhs,
                dim,
                lanes,
                &mut self.bad,
                &mut self.lu,
            );
            mark_nonfinite(&self.rhs, &mut self.bad);
            for ((solving, failed), &bad) in self
                .solving
                .iter_mut()
                .zip(failed.iter_mut())
                .zip(&self.bad)
            {
                *failed |= *solving && bad;
                *solving &= !bad;
            }
            // Z ← Z + ΔZ in the lanes still iterating; the update's size relative to x, Z.
            self.largest.fill(0.0);
            for (z, update) in self
                .z
                .chunks_exact_mut(lanes)
                .zip(self.rhs.chunks_exact(lanes))
            {
                for (((z, &d), largest), &solving) in z
                    .iter_mut()
                    .zip(update)
                    .zip(self.largest.iter_mut())
                    .zip(&self.solving)
                {
                    *z = if solving { *z + d } else { *z };
                    *largest = largest.max(d.abs());
                }
            }
            self.scale.copy_from_slice(&self.scale_x);
            for z in self.z.chunks_exact(lanes) {
                for (scale, &z) in self.scale.iter_mut().zip(z) {
                    *scale = scale.max(z.abs());
                }
            }
            for ((solving, &largest), &scale) in
                self.solving.iter_mut().zip(&self.largest).zip(&self.scale)
            {
                let last = if scale > 0.0 { largest / scale } else { 0.0 };
                *solving &= last > self.settings.tolerance || last.is_nan();
            }
        }
        // Lanes still iterating did not converge within the cap.
        for (failed, &solving) in failed.iter_mut().zip(&self.solving) {
            *failed |= solving;
        }
        // The stage points where each converged lane stopped.
        self.evaluate(x);
        self.bad.fill(false);
        mark_nonfinite(&self.stage_out, &mut self.bad);
        for (failed, &bad) in failed.iter_mut().zip(&self.bad) {
            *failed |= bad;
        }
    }

    /// The stage tape at x_k + Z_j, u_j for every stage j and lane.
    #[inline(always)]
    fn evaluate(&mut self, x: &[f64]) {
        let (n, lanes) = (self.n, self.lanes);
        let points = self.stages * lanes;
        for j in 0..self.stages {
            for r in 0..n {
                let var = &mut self.vars[r * points + j * lanes..][..lanes];
                let z = &self.z[(j * n + r) * lanes..][..lanes];
                let x = &x[r * lanes..][..lanes];
                for ((v, &x), &z) in var.iter_mut().zip(x).zip(z) {
                    *v = x + z;
                }
            }
        }
        self.model.stage.eval_lanes_inline(
            &self.vars,
            points,
            &mut self.stage_out,
            &mut self.scratch,
        );
    }
}

/// Marks in `bad` the lanes (`values` is rows of `bad.len()` lanes) with a value that is
/// not finite.
#[inline(always)]
pub fn mark_nonfinite(values: &[f64], bad: &mut [bool]) {
    for row in values.chunks_exact(bad.len()) {
        for (bad, &v) in bad.iter_mut().zip(row) {
            *bad |= !v.is_finite();
        }
    }
}
