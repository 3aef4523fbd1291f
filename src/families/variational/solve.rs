//! Newton settings shared by the marching and the boundary-value solves, and the projection
//! of points onto the holonomic constraints.

use super::discrete::{PointTerms, Scratch};
use super::model::LagrangianModel;
use crate::kernels::dense_lu;

/// Newton's stopping rule: the update's max-norm at most `tolerance` · max(1, ‖q‖_∞),
/// within `max_iterations` iterations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    pub tolerance: f64,
    pub max_iterations: usize,
}

/// Largest Gauss–Newton steps of [`project`].
pub const PROJECTION_STEPS: usize = 50;

/// Moves q onto φ_h(q, t) = 0 by Gauss–Newton steps q ← q − Jᵀ (J Jᵀ)⁻¹ φ (J = ∂φ_h/∂q),
/// the closest point to first order; returns max |φ_h| at the end. Used for initial
/// guesses and drawn knots; at most [`PROJECTION_STEPS`] steps. Every sum runs in index
/// order from 0 and J Jᵀ is solved by [`lu_solve`], as the boundary-value kernel does
/// (`project` in shaders/variational/boundary.wgsl).
pub fn project(
    scratch: &mut Scratch,
    model: &LagrangianModel,
    parameters: &[f64],
    t: f64,
    q: &mut [f64],
) -> f64 {
    let (d, ch) = (model.d(), model.holonomic_count());
    let mut terms = PointTerms::default();
    let zeros = vec![0.0; ch];
    let mut residual = f64::INFINITY;
    let mut gram = vec![0.0; ch * ch];
    let mut y = vec![0.0; ch];
    let mut pivot = vec![0; ch];
    for _ in 0..PROJECTION_STEPS {
        scratch.point(model, parameters, t, q, &zeros, &mut terms);
        residual = terms
            .constraints
            .iter()
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        if ch == 0 || residual <= 1e-15 * q.iter().fold(1.0_f64, |m, v| m.max(v.abs())) {
            break;
        }
        let j = &terms.jacobian;
        for r in 0..ch {
            for s in 0..ch {
                let mut sum = 0.0;
                for c in 0..d {
                    sum += j[r * d + c] * j[s * d + c];
                }
                gram[r * ch + s] = sum;
            }
        }
        y.copy_from_slice(&terms.constraints);
        if !lu_solve(&mut gram, &mut pivot, &mut y) {
            break;
        }
        for c in 0..d {
            let mut step = 0.0;
            for r in 0..ch {
                step += j[r * d + c] * y[r];
            }
            q[c] -= step;
        }
    }
    residual
}

/// Solves A x = b in place (A, n × n row-major, is overwritten by its LU factors) by
/// [`dense_lu::factorise`] and [`dense_lu::solve`] (nalgebra's order, as the kernels'
/// generated solver); false at a zero diagonal of U.
pub fn lu_solve(a: &mut [f64], pivot: &mut [usize], b: &mut [f64]) -> bool {
    dense_lu::factorise(a, pivot);
    dense_lu::solve(a, pivot, b)
}
