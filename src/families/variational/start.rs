//! The discrete initial data of second-order initial-value problems.
//!
//! A regular second-order Lagrangian's Euler–Lagrange equation is of fourth order: its
//! solution is fixed by q, q̇, q̈ and q⃛ at t = 0 (consistent with the holonomic
//! constraints). The central rule's discrete equation at point k,
//!
//! ```text
//!   D₃L_d(w_{k−1}) + D₂L_d(w_k) + D₁L_d(w_{k+1}) + h ∇φ_h(q_k)ᵀ μ_k = 0,
//! ```
//!
//! (w_j the window centred at t_j) couples q_{k−2} … q_{k+2}, so the march needs four
//! consecutive points. They come from the data by matching central differences at t = 0 on
//! five points q_{−2} … q_2 — the two before t = 0 are ghosts that carry the data and are
//! not constrained — and imposing the discrete equation at point 0:
//!
//! ```text
//!   q_0 = q(0),
//!   q_1 = q_0 + h q̇(0) + (h²/2) q̈(0) + ∇φ_h(q_1)ᵀ ν,   φ_h(q_1) = 0,
//!   (q_1 − 2 q_0 + q_{−1})/h² = q̈(0),
//!   (q_2 − 2 q_1 + 2 q_{−1} − q_{−2})/2h³ = q⃛(0),
//!   D₃L_d(w_{−1}) + D₂L_d(w_0) + D₁L_d(w_1) + h ∇φ_h(q_0)ᵀ μ_0 = 0,   φ_h(q_2) = 0.
//! ```
//!
//! Without constraints (ν = 0) the central differences of q̇, q̈ and q⃛ at t = 0 equal the
//! data, and a smooth solution's central differences equal its derivatives to O(h²): the
//! discrete path starts consistently at the scheme's order. On holonomic constraints the
//! data's Taylor point leaves the constraint manifold at O(h³); ν moves it back along the
//! normal at q_1 (a projection that changes the discrete velocity by O(h²) in the normal
//! direction only), so that every grid point from t = 0 on lies on the constraints. The
//! second line is one Newton solve for (q_1 − q_0, ν); the third is explicit; the last two
//! are one Newton solve for (q_2 − q_1, μ_0), in which q_{−2} follows q_2 through the third
//! difference (so the Jacobian is D₁D₃L_d(w_1) + D₃D₁L_d(w_{−1})). Higher-order
//! constraints are not taken: their multipliers' initial values are data the problem does
//! not give (the plan refuses them; pose such problems as boundary-value problems).
//!
//! The start also returns the discrete momenta the march carries (the window shares of
//! [`super::ivp::Step::outgoing`]) and those of the path ending at q_1, from which the
//! momentum map J_0 = p_0 · ξ(q_0) + π_1 · ξ(q_1) is read.

use nalgebra::{DMatrix, DVector};

use super::discrete::{OstrogradskyParts, PointTerms, Scratch, WindowTerms};
use super::ivp::{StepFailure, newton_update};
use super::model::LagrangianModel;
use super::rule::DiscreteRule;
use super::solve::NewtonSettings;

/// The continuous initial data of a second-order problem at t = 0.
#[derive(Debug, Clone, Copy)]
pub struct SecondOrderData<'a> {
    pub q: &'a [f64],
    pub qd: &'a [f64],
    pub qdd: &'a [f64],
    pub qddd: &'a [f64],
}

/// The discrete start of a second-order march.
#[derive(Debug, Clone)]
pub struct SecondOrderStart {
    /// q_1 − q_0 and q_2 − q_1.
    pub first: Vec<f64>,
    pub second: Vec<f64>,
    /// μ_0.
    pub multipliers: Vec<f64>,
    /// The momentum arriving at q_1, D₃L_d(w_0) + D₂L_d(w_1) (+ μ terms), and w_1's share
    /// D₃L_d(w_1) of q_2's.
    pub momentum: Vec<f64>,
    pub pending: Vec<f64>,
    /// The momenta of the path ending at q_1: p_0 = D₃L_d(w_{−1}) + D₂L_d(w_0) and
    /// π_1 = D₃L_d(w_0).
    pub momentum_at_start: (Vec<f64>, Vec<f64>),
    /// The Ostrogradsky parts of w_0 and w_1 (the energy of the first step).
    pub parts: (OstrogradskyParts, OstrogradskyParts),
    /// Newton iterations of both solves.
    pub iterations: usize,
    /// max |φ_h| at q_1 and q_2.
    pub residual: f64,
    /// The relative residual of the discrete equation at point 0.
    pub equation_residual: f64,
}

/// Solves the start (module docs) for one member.
pub fn second_order_start(
    model: &LagrangianModel,
    rule: &DiscreteRule,
    parameters: &[f64],
    newton: NewtonSettings,
    data: SecondOrderData,
) -> Result<SecondOrderStart, StepFailure> {
    let (d, ch) = (model.d(), model.holonomic_count());
    let h = rule.h;
    let mut scratch = Scratch::default();
    let mut point = PointTerms::default();
    let q0 = data.q;
    // q_1: the Taylor point y = q_0 + h q̇ + (h²/2) q̈ moved along ∇φ_h(q_1)ᵀ ν onto the
    // constraints: Newton on (Δ_0, ν) for Δ_0 − y₀ − ∇φ_h(q_0 + Δ_0)ᵀ ν = 0, φ_h = 0.
    let taylor: Vec<f64> = (0..d)
        .map(|c| h * data.qd[c] + 0.5 * h * h * data.qdd[c])
        .collect();
    let mut first = taylor.clone();
    let mut iterations = 0;
    if ch > 0 {
        let mut nu = vec![0.0; ch];
        let mut q1 = vec![0.0; d];
        let mut converged = false;
        for iteration in 1..=newton.max_iterations + 1 {
            for c in 0..d {
                q1[c] = q0[c] + first[c];
            }
            scratch.point(model, parameters, h, &q1, &nu, &mut point);
            let mut residual = DVector::<f64>::zeros(d + ch);
            for c in 0..d {
                let normal: f64 = (0..ch).map(|j| point.jacobian[j * d + c] * nu[j]).sum();
                residual[c] = first[c] - taylor[c] - normal;
            }
            for j in 0..ch {
                residual[d + j] = point.constraints[j];
            }
            if residual.iter().any(|v| !v.is_finite()) {
                return Err(StepFailure::NotFinite);
            }
            if converged {
                iterations += iteration - 1;
                break;
            }
            if iteration > newton.max_iterations {
                return Err(StepFailure::NoConvergence);
            }
            let mut jacobian = DMatrix::<f64>::zeros(d + ch, d + ch);
            for c in 0..d {
                jacobian[(c, c)] = 1.0;
                for c2 in 0..d {
                    jacobian[(c, c2)] -= point.hessian[c * d + c2];
                }
                for j in 0..ch {
                    jacobian[(c, d + j)] = -point.jacobian[j * d + c];
                    jacobian[(d + j, c)] = point.jacobian[j * d + c];
                }
            }
            let Some(update) = jacobian.lu().solve(&residual) else {
                return Err(StepFailure::Singular);
            };
            let mut change = 0.0_f64;
            for c in 0..d {
                first[c] -= update[c];
                change = change.max(update[c].abs());
            }
            for j in 0..ch {
                nu[j] -= update[d + j];
            }
            converged = change <= newton.tolerance * scale(q0, &first);
        }
    }
    // Δ_{−1} = q_0 − q_{−1} = Δ_0 − h² q̈(0).
    let back: Vec<f64> = (0..d).map(|c| first[c] - h * h * data.qdd[c]).collect();
    // The window centred at 0, (q_{−1}, q_0, q_1), is fixed from here on.
    let minus_back: Vec<f64> = back.iter().map(|v| -v).collect();
    let zeros = vec![0.0; d];
    let mut w0 = WindowTerms::default();
    scratch.window(
        model,
        rule,
        parameters,
        -h,
        q0,
        &[&minus_back, &zeros, &first],
        &[],
        &mut w0,
    );
    let parts0 = scratch.ostrogradsky_parts(
        model,
        rule,
        parameters,
        -h,
        q0,
        &[&minus_back, &zeros, &first],
    );
    // (Δ_1, μ_0) by Newton on the discrete equation at 0 and φ_h(q_2) = 0; Δ_{−2} =
    // q_{−1} − q_{−2} = 2h³ q⃛(0) − Δ_1 + Δ_0 + Δ_{−1}.
    let mut second: Vec<f64> = (0..d)
        .map(|c| h * data.qd[c] + 1.5 * h * h * data.qdd[c] + 7.0 / 6.0 * h * h * h * data.qddd[c])
        .collect();
    let mut mu = vec![0.0; ch];
    let mut here = PointTerms::default();
    let mut there = PointTerms::default();
    let mut before = WindowTerms::default();
    let mut after = WindowTerms::default();
    let mut q2 = vec![0.0; d];
    let n = 3 * d;
    let zeros_h = vec![0.0; ch];
    let mut converged = false;
    for iteration in 1..=newton.max_iterations + 1 {
        // w_{−1} = (q_{−2}, q_{−1}, q_0) and w_1 = (q_0, q_1, q_2) as offsets from q_0.
        let far: Vec<f64> = (0..d)
            .map(|c| {
                let back_two = 2.0 * h * h * h * data.qddd[c] - second[c] + first[c] + back[c];
                -back[c] - back_two
            })
            .collect();
        let reach: Vec<f64> = (0..d).map(|c| first[c] + second[c]).collect();
        scratch.window(
            model,
            rule,
            parameters,
            -2.0 * h,
            q0,
            &[&far, &minus_back, &zeros],
            &[],
            &mut before,
        );
        scratch.window(
            model,
            rule,
            parameters,
            0.0,
            q0,
            &[&zeros, &first, &reach],
            &[],
            &mut after,
        );
        scratch.point(model, parameters, 0.0, q0, &mu, &mut here);
        for c in 0..d {
            q2[c] = q0[c] + reach[c];
        }
        scratch.point(model, parameters, 2.0 * h, &q2, &zeros_h, &mut there);
        let mut residual = DVector::<f64>::zeros(d + ch);
        let mut magnitude = vec![0.0_f64; d];
        for c in 0..d {
            let terms = [
                before.gradient[2 * d + c],
                w0.gradient[d + c],
                after.gradient[c],
            ];
            let mut sum: f64 = terms.iter().sum();
            magnitude[c] = terms.iter().map(|v| v.abs()).sum();
            for (j, &m) in mu.iter().enumerate() {
                let term = h * here.jacobian[j * d + c] * m;
                sum += term;
                magnitude[c] += term.abs();
            }
            residual[c] = sum;
        }
        for j in 0..ch {
            residual[d + j] = there.constraints[j];
        }
        if residual.iter().any(|v| !v.is_finite()) {
            return Err(StepFailure::NotFinite);
        }
        if converged {
            let largest = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0_f64, |m, x| m.max(x.abs()));
            let equation_residual = largest(&mut residual.iter().take(d).copied())
                / largest(&mut magnitude.iter().copied()).max(f64::MIN_POSITIVE);
            let mut q1 = q0.to_vec();
            for c in 0..d {
                q1[c] += first[c];
            }
            scratch.point(model, parameters, h, &q1, &zeros_h, &mut point);
            let residual_constraints = point
                .constraints
                .iter()
                .chain(&there.constraints)
                .fold(0.0_f64, |m, v| m.max(v.abs()));
            let parts1 = scratch.ostrogradsky_parts(
                model,
                rule,
                parameters,
                0.0,
                q0,
                &[&zeros, &first, &reach],
            );
            let slot = |w: &WindowTerms, i: usize| w.gradient[i * d..(i + 1) * d].to_vec();
            let sum = |a: Vec<f64>, b: Vec<f64>| -> Vec<f64> {
                a.iter().zip(&b).map(|(x, y)| x + y).collect()
            };
            let start = SecondOrderStart {
                momentum: sum(slot(&w0, 2), slot(&after, 1)),
                pending: slot(&after, 2),
                momentum_at_start: (sum(slot(&before, 2), slot(&w0, 1)), slot(&w0, 2)),
                first,
                second,
                multipliers: mu,
                parts: (parts0, parts1),
                iterations: iterations + iteration - 1,
                residual: residual_constraints,
                equation_residual,
            };
            if start.momentum.iter().any(|v| !v.is_finite()) {
                return Err(StepFailure::NotFinite);
            }
            return Ok(start);
        }
        if iteration > newton.max_iterations {
            break;
        }
        let mut jacobian = DMatrix::<f64>::zeros(d + ch, d + ch);
        for c in 0..d {
            for c2 in 0..d {
                jacobian[(c, c2)] =
                    after.hessian[c * n + 2 * d + c2] + before.hessian[(2 * d + c) * n + c2];
            }
            for j in 0..ch {
                jacobian[(c, d + j)] = h * here.jacobian[j * d + c];
            }
        }
        for j in 0..ch {
            for c2 in 0..d {
                jacobian[(d + j, c2)] = there.jacobian[j * d + c2];
            }
        }
        let update = newton_update(jacobian, &residual)?;
        let mut change = 0.0_f64;
        for c in 0..d {
            second[c] -= update[c];
            change = change.max(update[c].abs());
        }
        for j in 0..ch {
            mu[j] -= update[d + j];
        }
        let reach: Vec<f64> = (0..d).map(|c| first[c] + second[c]).collect();
        converged = change <= newton.tolerance * scale(q0, &reach);
    }
    Err(StepFailure::NoConvergence)
}

/// max(1, ‖q + Δ‖_∞): the scale of Newton's stopping rule.
fn scale(q: &[f64], delta: &[f64]) -> f64 {
    q.iter()
        .zip(delta)
        .fold(1.0_f64, |m, (a, b)| m.max((a + b).abs()))
}
