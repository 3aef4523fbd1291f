//! The terms of the discrete equations, evaluated from the model's tapes by the rule's
//! chain rule ([`super::rule`]): for one discrete Lagrangian on the window
//! (q_k, …, q_{k+r}) with window multipliers λ_k,
//!
//! ```text
//!   g_i = ∂L_d/∂q_{k+i} + h (∂φ_w/∂q_{k+i})ᵀ λ_k,
//!   H_ij = ∂²L_d/∂q_{k+i}∂q_{k+j} + h Σ_j λ_kj ∂²φ_wj/∂q_{k+i}∂q_{k+j},
//! ```
//!
//! with φ_w(z_c) at the rule's constraint jet z_c (and, with generalised forces, the
//! Lagrange–d'Alembert terms (h/2) f(z_c) added to g of both points, their derivatives to
//! H); and for one grid point with multipliers
//! μ_k of the holonomic constraints, φ_h(q_k, t_k), its Jacobian and Σ_j μ_kj ∇²φ_hj.

use super::model::LagrangianModel;
use super::rule::{DiscreteRule, Evaluation};

/// Reusable buffers for evaluating one model's tapes.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    vars: Vec<f64>,
    outputs: Vec<f64>,
    tape: Vec<f64>,
    z: Vec<f64>,
}

/// One window's terms (w = r + 1 points of d coordinates; n = w·d).
#[derive(Debug, Clone, Default)]
pub struct WindowTerms {
    /// g, n values: the augmented gradient by point then coordinate.
    pub gradient: Vec<f64>,
    /// H, n × n row-major.
    pub hessian: Vec<f64>,
    /// φ_w (c_w).
    pub constraints: Vec<f64>,
    /// ∂φ_w/∂(q_k … q_{k+r}), c_w × n row-major.
    pub constraint_jacobian: Vec<f64>,
}

/// What the Ostrogradsky energy takes from one order-2 window: L, a = ∂L/∂q̇, b = ∂L/∂q̈
/// at its central jet, and that jet's q̈.
#[derive(Debug, Clone, PartialEq)]
pub struct OstrogradskyParts {
    pub lagrangian: f64,
    pub velocity_gradient: Vec<f64>,
    pub acceleration_gradient: Vec<f64>,
    pub acceleration: Vec<f64>,
}

impl OstrogradskyParts {
    /// The energy of the step between the windows centred at t_k (`self`) and t_{k+1}
    /// (`next`), whose increment is Δ = q_{k+1} − q_k: the Ostrogradsky energy
    /// E = p₀ · q̇ + p₁ · q̈ − L with p₁ = ∂L/∂q̈ and p₀ = ∂L/∂q̇ − d/dt ∂L/∂q̈, at the step's
    /// midpoint to second order,
    ///
    /// ```text
    ///   E_{k+½} = [½ (a_k + a_{k+1}) − (b_{k+1} − b_k)/h] · Δ/h
    ///           + ½ (b_k · q̈_k + b_{k+1} · q̈_{k+1}) − ½ (L_k + L_{k+1}).
    /// ```
    ///
    /// Along a discrete cubic spline (L = ½|q̈|²) it is exactly constant.
    pub fn step_energy(&self, next: &OstrogradskyParts, delta: &[f64], h: f64) -> f64 {
        let mut energy = -0.5 * (self.lagrangian + next.lagrangian);
        for (c, &increment) in delta.iter().enumerate() {
            let momentum = 0.5 * (self.velocity_gradient[c] + next.velocity_gradient[c])
                - (next.acceleration_gradient[c] - self.acceleration_gradient[c]) / h;
            energy += momentum * increment / h
                + 0.5
                    * (self.acceleration_gradient[c] * self.acceleration[c]
                        + next.acceleration_gradient[c] * next.acceleration[c]);
        }
        energy
    }
}

/// One point's holonomic terms.
#[derive(Debug, Clone, Default)]
pub struct PointTerms {
    /// φ_h (c_h).
    pub constraints: Vec<f64>,
    /// ∂φ_h/∂q, c_h × d.
    pub jacobian: Vec<f64>,
    /// Σ_j μ_j ∇²φ_hj, d × d.
    pub hessian: Vec<f64>,
}

impl Scratch {
    /// Loads [z, t, θ] into the variables.
    fn load(&mut self, model: &LagrangianModel, t: f64, parameters: &[f64]) {
        let m = model.jet();
        self.vars.resize(model.vars(), 0.0);
        self.vars[..m].copy_from_slice(&self.z[..m]);
        self.vars[m] = t;
        self.vars[m + 1..].copy_from_slice(parameters);
    }

    /// The window terms of the points base + offsets\[i\] (r + 1 slices of d; see
    /// [`DiscreteRule::jet`]) at t_k with multipliers `lambda`.
    #[expect(clippy::too_many_arguments, reason = "a window's data and its output")]
    pub fn window(
        &mut self,
        model: &LagrangianModel,
        rule: &DiscreteRule,
        parameters: &[f64],
        t_k: f64,
        base: &[f64],
        offsets: &[&[f64]],
        lambda: &[f64],
        out: &mut WindowTerms,
    ) {
        let d = model.d();
        let m = model.jet();
        let w = offsets.len();
        let n = w * d;
        let h = rule.h;
        out.gradient.clear();
        out.gradient.resize(n, 0.0);
        out.hessian.clear();
        out.hessian.resize(n * n, 0.0);
        self.z.resize(m, 0.0);
        for evaluation in &rule.evaluations {
            DiscreteRule::jet(evaluation, base, offsets, &mut self.z);
            self.load(model, t_k + evaluation.time * h, parameters);
            self.outputs.resize(model.lagrangian.n_outputs(), 0.0);
            model
                .lagrangian
                .eval(&self.vars, &mut self.outputs, &mut self.tape);
            let grad = &self.outputs[1..1 + m];
            let hess = &self.outputs[1 + m..1 + m + m * m];
            let scale = h * evaluation.weight;
            chain_gradient(evaluation, d, scale, grad, &mut out.gradient);
            chain_hessian(evaluation, d, scale, hess, &mut out.hessian);
        }
        if let Some(forces) = &model.forces {
            // Lagrange–d'Alembert: f_d^± = (h/2) f at the rule's midpoint jet, added to the
            // equations of both points (so p_{k+1} carries f_d^+), with its Jacobian.
            let evaluation = &rule.constraint_point;
            DiscreteRule::jet(evaluation, base, offsets, &mut self.z);
            self.load(model, t_k + evaluation.time * h, parameters);
            self.outputs.resize(forces.n_outputs(), 0.0);
            forces.eval(&self.vars, &mut self.outputs, &mut self.tape);
            let half = 0.5 * h;
            for i in 0..w {
                for c in 0..d {
                    out.gradient[i * d + c] += half * self.outputs[c];
                    for (j, coefficients) in evaluation.coefficients.iter().enumerate() {
                        for (b, &a) in coefficients.iter().enumerate() {
                            if a == 0.0 {
                                continue;
                            }
                            for c2 in 0..d {
                                out.hessian[(i * d + c) * n + j * d + c2] +=
                                    half * a * self.outputs[d + c * m + b * d + c2];
                            }
                        }
                    }
                }
            }
        }
        let cw = model.window_count();
        out.constraints.clear();
        out.constraint_jacobian.clear();
        if cw == 0 {
            return;
        }
        let evaluation = &rule.constraint_point;
        DiscreteRule::jet(evaluation, base, offsets, &mut self.z);
        self.load(model, t_k + evaluation.time * h, parameters);
        self.outputs.resize(model.window.n_outputs(), 0.0);
        model
            .window
            .eval(&self.vars, &mut self.outputs, &mut self.tape);
        out.constraints.extend_from_slice(&self.outputs[..cw]);
        out.constraint_jacobian.resize(cw * n, 0.0);
        for (j, &multiplier) in lambda.iter().enumerate().take(cw) {
            let grad = &self.outputs[cw + j * m..cw + (j + 1) * m];
            let base = cw + cw * m + j * m * m;
            let hess = &self.outputs[base..base + m * m];
            // The Jacobian row of constraint j, and h λ_j times its Hessian into H.
            let mut row = vec![0.0; n];
            chain_gradient(evaluation, d, 1.0, grad, &mut row);
            out.constraint_jacobian[j * n..(j + 1) * n].copy_from_slice(&row);
            let weight = h * multiplier;
            for (g, r) in out.gradient.iter_mut().zip(&row) {
                *g += weight * r;
            }
            if weight != 0.0 {
                chain_hessian(evaluation, d, weight, hess, &mut out.hessian);
            }
        }
    }

    /// The holonomic terms of point q at time t with multipliers `mu`.
    pub fn point(
        &mut self,
        model: &LagrangianModel,
        parameters: &[f64],
        t: f64,
        q: &[f64],
        mu: &[f64],
        out: &mut PointTerms,
    ) {
        let d = model.d();
        let ch = model.holonomic_count();
        out.constraints.clear();
        out.jacobian.clear();
        out.hessian.clear();
        out.hessian.resize(d * d, 0.0);
        if ch == 0 {
            return;
        }
        self.z.clear();
        self.z.resize(model.jet(), 0.0);
        self.z[..d].copy_from_slice(q);
        self.load(model, t, parameters);
        self.outputs.resize(model.holonomic.n_outputs(), 0.0);
        model
            .holonomic
            .eval(&self.vars, &mut self.outputs, &mut self.tape);
        out.constraints.extend_from_slice(&self.outputs[..ch]);
        out.jacobian
            .extend_from_slice(&self.outputs[ch..ch + ch * d]);
        let base = ch + ch * d;
        for (j, &weight) in mu.iter().enumerate() {
            let hess = &self.outputs[base + j * d * d..base + (j + 1) * d * d];
            for (o, v) in out.hessian.iter_mut().zip(hess) {
                *o += weight * v;
            }
        }
    }

    /// E = q̇ · ∂L/∂q̇ − L at the rule's constraint jet of the window base + offsets
    /// (order 1; NaN for order 2).
    pub fn energy(
        &mut self,
        model: &LagrangianModel,
        rule: &DiscreteRule,
        parameters: &[f64],
        t_k: f64,
        base: &[f64],
        offsets: &[&[f64]],
    ) -> f64 {
        let Some(tape) = &model.energy else {
            return f64::NAN;
        };
        let evaluation = &rule.constraint_point;
        self.z.resize(model.jet(), 0.0);
        DiscreteRule::jet(evaluation, base, offsets, &mut self.z);
        self.load(model, t_k + evaluation.time * rule.h, parameters);
        let mut e = [0.0];
        tape.eval(&self.vars, &mut e, &mut self.tape);
        e[0]
    }

    /// L, ∂L/∂q̇ and ∂L/∂q̈ at the central jet z = (q, q̇, q̈) of an order-2 window base +
    /// offsets, and its q̈ (the terms of the Ostrogradsky energy, [`OstrogradskyParts`]).
    pub fn ostrogradsky_parts(
        &mut self,
        model: &LagrangianModel,
        rule: &DiscreteRule,
        parameters: &[f64],
        t_k: f64,
        base: &[f64],
        offsets: &[&[f64]],
    ) -> OstrogradskyParts {
        let d = model.d();
        let m = model.jet();
        let evaluation = &rule.constraint_point;
        self.z.resize(m, 0.0);
        DiscreteRule::jet(evaluation, base, offsets, &mut self.z);
        self.load(model, t_k + evaluation.time * rule.h, parameters);
        self.outputs.resize(model.lagrangian.n_outputs(), 0.0);
        model
            .lagrangian
            .eval(&self.vars, &mut self.outputs, &mut self.tape);
        OstrogradskyParts {
            lagrangian: self.outputs[0],
            velocity_gradient: self.outputs[1 + d..1 + 2 * d].to_vec(),
            acceleration_gradient: self.outputs[1 + 2 * d..1 + 3 * d].to_vec(),
            acceleration: self.z[2 * d..3 * d].to_vec(),
        }
    }

    /// The window's discrete Lagrangian L_d = h Σ_e w_e L(z_e) and the observables at its
    /// constraint jet (into `observables`).
    #[expect(clippy::too_many_arguments, reason = "a window's data and its outputs")]
    pub fn lagrangian_and_observables(
        &mut self,
        model: &LagrangianModel,
        rule: &DiscreteRule,
        parameters: &[f64],
        t_k: f64,
        base: &[f64],
        offsets: &[&[f64]],
        observables: &mut Vec<f64>,
    ) -> f64 {
        let h = rule.h;
        self.z.resize(model.jet(), 0.0);
        let mut sum = 0.0;
        for evaluation in &rule.evaluations {
            DiscreteRule::jet(evaluation, base, offsets, &mut self.z);
            self.load(model, t_k + evaluation.time * h, parameters);
            self.outputs.resize(model.lagrangian.n_outputs(), 0.0);
            model
                .lagrangian
                .eval(&self.vars, &mut self.outputs, &mut self.tape);
            sum += evaluation.weight * self.outputs[0];
        }
        let evaluation = &rule.constraint_point;
        DiscreteRule::jet(evaluation, base, offsets, &mut self.z);
        self.load(model, t_k + evaluation.time * h, parameters);
        observables.resize(model.observables.n_outputs(), 0.0);
        model
            .observables
            .eval(&self.vars, observables, &mut self.tape);
        h * sum
    }

    /// ξ(q) (d values) into `out`; false when the model names no symmetry.
    pub fn generator(
        &mut self,
        model: &LagrangianModel,
        parameters: &[f64],
        q: &[f64],
        out: &mut Vec<f64>,
    ) -> bool {
        let Some(tape) = &model.symmetry else {
            return false;
        };
        self.z.clear();
        self.z.resize(model.jet(), 0.0);
        self.z[..q.len()].copy_from_slice(q);
        self.load(model, 0.0, parameters);
        out.resize(q.len(), 0.0);
        tape.eval(&self.vars, out, &mut self.tape);
        true
    }
}

/// g_(i,c) += s Σ_b a[i][b] ∇_b L_c.
fn chain_gradient(evaluation: &Evaluation, d: usize, scale: f64, grad: &[f64], out: &mut [f64]) {
    for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
        for (b, &a) in coefficients.iter().enumerate() {
            if a == 0.0 {
                continue;
            }
            for c in 0..d {
                out[i * d + c] += scale * a * grad[b * d + c];
            }
        }
    }
}

/// H_(i,c),(j,c') += s Σ_{b,b'} a[i][b] a[j][b'] ∇²_{(b,c),(b',c')} L.
fn chain_hessian(evaluation: &Evaluation, d: usize, scale: f64, hess: &[f64], out: &mut [f64]) {
    let w = evaluation.coefficients.len();
    let n = w * d;
    let m = hess.len().isqrt();
    for i in 0..w {
        for j in 0..w {
            for (b, &a) in evaluation.coefficients[i].iter().enumerate() {
                if a == 0.0 {
                    continue;
                }
                for (b2, &a2) in evaluation.coefficients[j].iter().enumerate() {
                    if a2 == 0.0 {
                        continue;
                    }
                    let f = scale * a * a2;
                    for c in 0..d {
                        for c2 in 0..d {
                            out[(i * d + c) * n + j * d + c2] +=
                                f * hess[(b * d + c) * m + b2 * d + c2];
                        }
                    }
                }
            }
        }
    }
}
