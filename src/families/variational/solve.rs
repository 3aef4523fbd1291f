//! Newton settings shared by the marching and the boundary-value solves, and the projection
//! of points onto the holonomic constraints.

use super::discrete::{PointTerms, Scratch};
use super::model::LagrangianModel;

/// Newton's stopping rule: the update's max-norm at most `tolerance` · max(1, ‖q‖_∞),
/// within `max_iterations` iterations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    pub tolerance: f64,
    pub max_iterations: usize,
}

/// Moves q onto φ_h(q, t) = 0 by Gauss–Newton steps q ← q − Jᵀ (J Jᵀ)⁻¹ φ (J = ∂φ_h/∂q),
/// the closest point to first order; returns max |φ_h| at the end. Used for initial
/// guesses and drawn knots; at most 50 steps.
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
    for _ in 0..50 {
        scratch.point(model, parameters, t, q, &zeros, &mut terms);
        residual = terms
            .constraints
            .iter()
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        if ch == 0 || residual <= 1e-15 * q.iter().fold(1.0_f64, |m, v| m.max(v.abs())) {
            break;
        }
        let j = nalgebra::DMatrix::from_row_slice(ch, d, &terms.jacobian);
        let phi = nalgebra::DVector::from_column_slice(&terms.constraints);
        let Some(y) = (&j * j.transpose()).lu().solve(&phi) else {
            break;
        };
        let step = j.transpose() * y;
        for c in 0..d {
            q[c] -= step[c];
        }
    }
    residual
}
