//! Initial-value problems of first-order Lagrangians: the discrete Euler–Lagrange equations
//! with constraints (Marsden & West 2001, §3.4, with the multipliers of the seed's eq. 1.5),
//! marched one point at a time.
//!
//! With the augmented action Σ_k [L_d(q_k, q_{k+1}) + h λ_kᵀ φ_w(q_k, q_{k+1})] +
//! Σ_k h μ_kᵀ φ_h(q_k, t_k), the momentum arriving at q_k is
//!
//! ```text
//!   p_k = D₂L_d(q_{k−1}, q_k) + h D₂φ_w(q_{k−1}, q_k)ᵀ λ_{k−1},
//! ```
//!
//! and step k solves, for (q_{k+1}, λ_k, μ_k), the d + c_w + c_h equations
//!
//! ```text
//!   p_k + D₁L_d(q_k, q_{k+1}) + h D₁φ_w(q_k, q_{k+1})ᵀ λ_k + h ∇φ_h(q_k)ᵀ μ_k = 0,
//!   φ_w(q_k, q_{k+1}) = 0,
//!   φ_h(q_{k+1}, t_{k+1}) = 0,
//! ```
//!
//! by Newton's method with the exact Jacobian (the blocks D₁D₂L_d, h Σ λ ∂²φ_w, h D₁φ_wᵀ,
//! h ∇φ_h(q_k)ᵀ, D₂φ_w and ∇φ_h(q_{k+1})). The first step starts from the continuous
//! momentum p_0 = ∂L/∂q̇(q_0, q̇_0, 0) — the discrete Legendre transform identifies it with
//! −D₁L_d^aug(q_0, q_1) — so the discrete path takes the continuous initial data. The
//! discrete momentum p_k is what a symmetry's momentum map J_k = p_k · ξ(q_k) is read from,
//! and the energy E_k = q̇ · ∂L/∂q̇ − L at the rule's midpoint jet of each step.

use nalgebra::{DMatrix, DVector};

use super::discrete::{PointTerms, Scratch, WindowTerms};
use super::model::LagrangianModel;
use super::rule::DiscreteRule;
use super::solve::NewtonSettings;

/// Why a step did not produce the next point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepFailure {
    /// Newton did not converge within the iteration cap.
    NoConvergence,
    /// The Newton matrix is singular (the problem is not regular there).
    Singular,
    /// A value stopped being finite.
    NotFinite,
}

/// One step's outcome.
#[derive(Debug, Clone)]
pub struct Step {
    /// The new point's increment (order 1: q_{k+1} − q_k; order 2: q_{k+2} − q_{k+1}).
    pub next: Vec<f64>,
    /// λ of the window, then μ_k.
    pub multipliers: Vec<f64>,
    /// ∂L_d^aug/∂q_{k+i} of the window for i = 1 … r (r·d values): order 1, the momentum
    /// p_{k+1}; order 2, the window's shares of the next two points' momenta.
    pub outgoing: Vec<f64>,
    pub iterations: usize,
    /// max |φ_w| of the window and |φ_h| at q_{k+1}.
    pub residual: f64,
    /// max_c |p_k + D₁L_d + h D₁φ_wᵀ λ_k + h ∇φ_h(q_k)ᵀ μ_k|_c at the returned point,
    /// relative to max_c of the sum of the terms' magnitudes.
    pub equation_residual: f64,
}

/// The marching state of one member.
pub struct Marcher<'a> {
    pub model: &'a LagrangianModel,
    pub rule: &'a DiscreteRule,
    pub parameters: &'a [f64],
    pub newton: NewtonSettings,
    scratch: Scratch,
    window: WindowTerms,
    here: PointTerms,
    there: PointTerms,
}

impl<'a> Marcher<'a> {
    pub fn new(
        model: &'a LagrangianModel,
        rule: &'a DiscreteRule,
        parameters: &'a [f64],
        newton: NewtonSettings,
    ) -> Self {
        Marcher {
            model,
            rule,
            parameters,
            newton,
            scratch: Scratch::default(),
            window: WindowTerms::default(),
            here: PointTerms::default(),
            there: PointTerms::default(),
        }
    }

    /// p_0 = ∂L/∂q̇(q_0, q̇_0, t_0).
    pub fn initial_momentum(&mut self, q0: &[f64], qd0: &[f64], t0: f64) -> Vec<f64> {
        let d = self.model.d();
        let mut z = q0.to_vec();
        z.extend_from_slice(qd0);
        let mut vars = z;
        vars.push(t0);
        vars.extend_from_slice(self.parameters);
        let mut out = vec![0.0; self.model.lagrangian.n_outputs()];
        self.model.lagrangian.eval(&vars, &mut out, &mut Vec::new());
        out[1 + d..1 + 2 * d].to_vec()
    }

    /// The energy of the step from q_k by the increment `delta` at t_k.
    pub fn energy(&mut self, t_k: f64, q: &[f64], delta: &[f64]) -> f64 {
        let zeros = vec![0.0; q.len()];
        self.scratch.energy(
            self.model,
            self.rule,
            self.parameters,
            t_k,
            q,
            &[&zeros, delta],
        )
    }

    /// ξ(q) into `out`; false without a symmetry.
    pub fn generator(&mut self, q: &[f64], out: &mut Vec<f64>) -> bool {
        self.scratch.generator(self.model, self.parameters, q, out)
    }

    /// max |φ_h(q, t)| (0 without holonomic constraints).
    pub fn point_residual(&mut self, q: &[f64], t: f64) -> f64 {
        let mu = vec![0.0; self.model.holonomic_count()];
        self.scratch
            .point(self.model, self.parameters, t, q, &mu, &mut self.here);
        self.here
            .constraints
            .iter()
            .fold(0.0_f64, |m, v| m.max(v.abs()))
    }

    /// The step of the discrete Euler–Lagrange equation at q_k (time t_k) with arriving
    /// momentum p_k: Newton on the new point's increment Δ (so the difference quotients
    /// lose no digits), started at `guess`. The window is (q_k, q_k + Δ) for order 1
    /// (`last` = q_k, `previous` empty) and (q_k, q_{k+1}, q_{k+1} + Δ) for order 2 (`last`
    /// = q_{k+1}, `previous` = q_{k+1} − q_k).
    pub fn step(
        &mut self,
        t_k: f64,
        q: &[f64],
        last: &[f64],
        previous: &[f64],
        momentum: &[f64],
        guess: &[f64],
    ) -> Result<Step, StepFailure> {
        let model = self.model;
        let (d, cw, ch) = (model.d(), model.window_count(), model.holonomic_count());
        let h = self.rule.h;
        let size = d + cw + ch;
        let zeros_d = vec![0.0; d];
        let zeros_h = vec![0.0; ch];
        let minus_previous: Vec<f64> = previous.iter().map(|v| -v).collect();
        // The window's points as offsets from `last`: the new point is slot r.
        let r = self.rule.order;
        let mut delta = guess.to_vec();
        let mut next = vec![0.0; d];
        let mut lambda = vec![0.0; cw];
        let mut mu = vec![0.0; ch];
        let tolerance = self.newton.tolerance;
        let mut converged = false;
        for iteration in 1..=self.newton.max_iterations + 1 {
            for c in 0..d {
                next[c] = last[c] + delta[c];
            }
            let offsets: [&[f64]; 3] = [&minus_previous, &zeros_d, &delta];
            let offsets: &[&[f64]] = if r == 1 { &offsets[1..] } else { &offsets };
            self.scratch.window(
                model,
                self.rule,
                self.parameters,
                t_k,
                last,
                offsets,
                &lambda,
                &mut self.window,
            );
            self.scratch
                .point(model, self.parameters, t_k, q, &mu, &mut self.here);
            self.scratch.point(
                model,
                self.parameters,
                t_k + r as f64 * h,
                &next,
                &zeros_h,
                &mut self.there,
            );
            let w = &self.window;
            let n = (r + 1) * d;
            let mut residual = DVector::<f64>::zeros(size);
            let mut magnitude = vec![0.0_f64; d];
            for c in 0..d {
                let mut sum = momentum[c] + w.gradient[c];
                magnitude[c] = momentum[c].abs() + w.gradient[c].abs();
                for (j, &m) in mu.iter().enumerate() {
                    let term = h * self.here.jacobian[j * d + c] * m;
                    sum += term;
                    magnitude[c] += term.abs();
                }
                residual[c] = sum;
            }
            for j in 0..cw {
                residual[d + j] = w.constraints[j];
            }
            for j in 0..ch {
                residual[d + cw + j] = self.there.constraints[j];
            }
            if residual.iter().any(|v| !v.is_finite()) {
                return Err(StepFailure::NotFinite);
            }
            if converged {
                // The converged point: the window's later gradients (order 1: the momentum
                // p_{k+1} = D₂L_d + h D₂φ_wᵀ λ_k), the constraints' residual, and the
                // relative residual of the equations.
                let outgoing = w.gradient[d..n].to_vec();
                let residual_constraints = w
                    .constraints
                    .iter()
                    .chain(&self.there.constraints)
                    .fold(0.0_f64, |m, v| m.max(v.abs()));
                let largest =
                    |v: &mut dyn Iterator<Item = f64>| v.fold(0.0_f64, |m, x| m.max(x.abs()));
                let equation_residual = largest(&mut residual.iter().take(d).copied())
                    / largest(&mut magnitude.iter().copied()).max(f64::MIN_POSITIVE);
                if outgoing.iter().any(|v| !v.is_finite()) {
                    return Err(StepFailure::NotFinite);
                }
                return Ok(Step {
                    next: delta,
                    multipliers: lambda.iter().chain(&mu).copied().collect(),
                    outgoing,
                    iterations: iteration - 1,
                    residual: residual_constraints,
                    equation_residual,
                });
            }
            if iteration > self.newton.max_iterations {
                break;
            }
            let mut jacobian = DMatrix::<f64>::zeros(size, size);
            for c in 0..d {
                for c2 in 0..d {
                    jacobian[(c, c2)] = w.hessian[c * n + r * d + c2];
                }
                for j in 0..cw {
                    jacobian[(c, d + j)] = h * w.constraint_jacobian[j * n + c];
                }
                for j in 0..ch {
                    jacobian[(c, d + cw + j)] = h * self.here.jacobian[j * d + c];
                }
            }
            for j in 0..cw {
                for c2 in 0..d {
                    jacobian[(d + j, c2)] = w.constraint_jacobian[j * n + r * d + c2];
                }
            }
            for j in 0..ch {
                for c2 in 0..d {
                    jacobian[(d + cw + j, c2)] = self.there.jacobian[j * d + c2];
                }
            }
            let update = newton_update(jacobian, &residual)?;
            let mut change = 0.0_f64;
            for c in 0..d {
                delta[c] -= update[c];
                change = change.max(update[c].abs());
            }
            for j in 0..cw {
                lambda[j] -= update[d + j];
            }
            for j in 0..ch {
                mu[j] -= update[d + cw + j];
            }
            let scale = last
                .iter()
                .zip(&delta)
                .fold(1.0_f64, |m, (a, b)| m.max((a + b).abs()));
            converged = change <= tolerance * scale;
        }
        Err(StepFailure::NoConvergence)
    }
}

/// The Newton update x = A⁻¹ r of the step's system, by nalgebra's LU: `NotFinite` when A
/// holds a non-finite entry, `Singular` when its LU has a zero pivot.
pub(super) fn newton_update(
    jacobian: DMatrix<f64>,
    residual: &DVector<f64>,
) -> Result<DVector<f64>, StepFailure> {
    if jacobian.iter().any(|v| !v.is_finite()) {
        return Err(StepFailure::NotFinite);
    }
    jacobian.lu().solve(residual).ok_or(StepFailure::Singular)
}
