//! One step of the energy-preserving collocation (Hairer 2010; Cohen & Hairer 2011)
//! extended to ports, for ẋ = (J(x) − R(x)) ∇H(x) + G(x) u on the s Gauss nodes c_i
//! (weights b_i, stage matrix a_ij, Lagrange basis ℓ_i), in f64. With stage increments
//! Z_i = x(c_i) − x_k, the collocation polynomial x(τ) = x_k + Σ_j L_j(τ) Z_j of degree s
//! (L_j(0) = 0, L_j(c_m) = δ_jm) and u_i = u(t_k + c_i h):
//!
//! ```text
//!   ē_i = (1/b_i) ∫₀¹ ℓ_i(τ) ∇H(x(τ)) dτ ≈ Σ_k W_ki ∇H(x(σ_k))       (q-node rule)
//!   F_i = (J(x_i) − R(x_i)) ē_i + G(x_i) u_i,   x_i = x_k + Z_i
//!   Z_i = h Σ_j a_ij F_j                                             (stage equations)
//!   x_{k+1} = x_k + h Σ_j b_j F_j                                    (Kahan-compensated)
//!   y_i = b_i G(x_i)ᵀ ē_i,  port = h Σ_i y_iᵀ u_i,  dissipated = h Σ_i b_i ē_iᵀ R(x_i) ē_i
//!   stored = H(x_{k+1}) − H(x_k),  supplied = port − dissipated
//! ```
//!
//! **The balance.** The polynomial p(τ) = x_k + h Σ_j (∫₀^τ ℓ_j) F_j has degree s,
//! p(0) = x_k and p(c_i) = x_k + h Σ_j a_ij F_j = x_k + Z_i, so p = x(τ): hence
//! x'(τ) = h Σ_i ℓ_i(τ) F_i and x(1) = x_k + h Σ_i b_i F_i = x_{k+1}. Then
//!
//! ```text
//!   H(x_{k+1}) − H(x_k) = ∫₀¹ ∇H(x(τ))ᵀ x'(τ) dτ = h Σ_i F_iᵀ ∫₀¹ ℓ_i(τ) ∇H(x(τ)) dτ
//!                       = h Σ_i b_i ē_iᵀ F_i
//!                       = h Σ_i b_i ē_iᵀ (J_i − R_i) ē_i + h Σ_i b_i ē_iᵀ G_i u_i
//!                       = −h Σ_i b_i ē_iᵀ R_i ē_i + h Σ_i y_iᵀ u_i = port − dissipated,
//! ```
//!
//! using ēᵀ J ē = 0 (J skew). The second equality needs the projection integral exact: for
//! H a polynomial of degree d the integrand has degree d s − 1, which a q-node Gauss rule
//! integrates exactly when d ≤ ⌊2q / s⌋ ([`ProjectionRule`]); then stored = supplied to
//! round-off for any J(x), R(x), G(x) and input. Otherwise the balance holds to the rule's
//! error, and the state is of order 2s for any q ≥ s.
//!
//! The stage equations Φ(Z) = Z − h (A ⊗ I) F(Z) = 0 are solved by Newton's method with the
//! exact Jacobian, from Z = 0, with the Gauss stepper's stopping rule and failures
//! ([`super::gauss_step`]):
//!
//! ```text
//!   ∂Φ_i/∂Z_m = δ_im I − h (a_im D_m + Σ_j a_ij (J_j − R_j) P_jm)
//!   D_m = ∂F/∂x at x_m with ē_m fixed (∂(J − R)/∂x contracted with ē_m, plus ∂(G u)/∂x)
//!   P_jm = ∂ē_j/∂Z_m = Σ_k W_kj L_m(σ_k) ∇²H(x(σ_k))
//! ```

use nalgebra::{DMatrix, DVector};

use super::gauss_step::{NewtonSettings, StepEnergies, StepFailure};
use super::model::{ExpressionModel, ProjectedTapes};
use crate::compensated::kahan_add;
use crate::tableau::{ProjectionRule, Scheme};

/// One member's energy-preserving stepper: its parameters, the scheme, the projection's
/// tables and work buffers.
pub struct EnergyPreservingStepper<'a> {
    model: &'a ExpressionModel,
    tapes: &'a ProjectedTapes,
    rule: &'a ProjectionRule,
    settings: NewtonSettings,
    h: f64,
    s: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    /// [x, θ, u, ē] of one point; [x, θ] is the gradient and energy tapes' prefix.
    vars: Vec<f64>,
    /// The gradient tape's outputs [∇H, ∇²H] at each quadrature node, node-major.
    node_out: Vec<f64>,
    /// The projected stage tape's outputs at each stage, stage-major.
    stage_out: Vec<f64>,
    /// One n × n block of the Newton matrix: P_jm, then (J_j − R_j) P_jm.
    block: Vec<f64>,
    product: Vec<f64>,
    scratch: Vec<f64>,
    z: Vec<f64>,
    residual: DVector<f64>,
    /// The state the last step ended in and H there (as in the Gauss stepper).
    last_state: Vec<f64>,
    last_energy: Option<f64>,
}

impl<'a> EnergyPreservingStepper<'a> {
    pub fn new(
        model: &'a ExpressionModel,
        tapes: &'a ProjectedTapes,
        rule: &'a ProjectionRule,
        scheme: &Scheme,
        h: f64,
        parameters: &[f64],
        settings: NewtonSettings,
    ) -> Self {
        let (n, s) = (model.n(), scheme.stages);
        let mut vars = vec![0.0; model.projected_stage_vars()];
        vars[n..n + parameters.len()].copy_from_slice(parameters);
        EnergyPreservingStepper {
            model,
            tapes,
            rule,
            settings,
            h,
            s,
            a: scheme.a_row_major(),
            b: scheme.b.clone(),
            vars,
            node_out: vec![0.0; rule.quadrature * tapes.gradient.n_outputs()],
            stage_out: vec![0.0; s * tapes.stage.n_outputs()],
            block: vec![0.0; n * n],
            product: vec![0.0; n * n],
            scratch: Vec::new(),
            z: vec![0.0; s * n],
            residual: DVector::zeros(s * n),
            last_state: vec![0.0; n],
            last_energy: None,
        }
    }

    /// H(x) at the member's parameters.
    fn hamiltonian(&mut self, x: &[f64]) -> f64 {
        let n = self.model.n();
        self.vars[..n].copy_from_slice(x);
        let vars = &self.vars[..self.model.energy.n_vars()];
        let mut out = [0.0];
        self.model.energy.eval(vars, &mut out, &mut self.scratch);
        out[0]
    }

    /// Evaluates ∇H and ∇²H at every quadrature node x(σ_k) = x_k + Σ_j L_j(σ_k) Z_j, the
    /// projections ē_i, and the projected stage tape at x_k + Z_i, u_i, ē_i for every stage.
    fn evaluate(&mut self, x: &[f64], u: &[f64]) -> Result<(), StepFailure> {
        let (n, m, s) = (self.model.n(), self.model.inputs, self.s);
        let u_base = n + self.model.parameters.len();
        let node_width = self.tapes.gradient.n_outputs();
        let width = self.tapes.stage.n_outputs();
        for k in 0..self.rule.quadrature {
            let lift = &self.rule.lift[k * s..(k + 1) * s];
            for (r, var) in self.vars[..n].iter_mut().enumerate() {
                let mut sum = 0.0;
                for (j, l) in lift.iter().enumerate() {
                    sum += l * self.z[j * n + r];
                }
                *var = x[r] + sum;
            }
            self.tapes.gradient.eval(
                &self.vars[..u_base],
                &mut self.node_out[k * node_width..(k + 1) * node_width],
                &mut self.scratch,
            );
        }
        for i in 0..s {
            for ((var, x), z) in self.vars.iter_mut().zip(x).zip(&self.z[i * n..(i + 1) * n]) {
                *var = x + z;
            }
            self.vars[u_base..u_base + m].copy_from_slice(&u[i * m..(i + 1) * m]);
            for r in 0..n {
                let mut sum = 0.0;
                for k in 0..self.rule.quadrature {
                    sum += self.rule.projection[k * s + i] * self.node_out[k * node_width + r];
                }
                self.vars[u_base + m + r] = sum;
            }
            self.tapes.stage.eval(
                &self.vars,
                &mut self.stage_out[i * width..(i + 1) * width],
                &mut self.scratch,
            );
        }
        let finite = |v: &[f64]| v.iter().all(|v| v.is_finite());
        if finite(&self.node_out) && finite(&self.stage_out) {
            Ok(())
        } else {
            Err(StepFailure::NotFinite)
        }
    }

    /// F at stage i (after [`Self::evaluate`]).
    fn flow(&self, i: usize) -> &[f64] {
        let width = self.tapes.stage.n_outputs();
        &self.stage_out[i * width..i * width + self.model.n()]
    }

    /// The Newton matrix ∂Φ/∂Z at the last evaluation (the module's formula).
    fn newton_matrix(&mut self) -> DMatrix<f64> {
        let (n, s, h) = (self.model.n(), self.s, self.h);
        let width = self.tapes.stage.n_outputs();
        let node_width = self.tapes.gradient.n_outputs();
        let mut matrix = DMatrix::zeros(s * n, s * n);
        // δ_im I − h a_im D_m.
        for i in 0..s {
            for m in 0..s {
                let factor = h * self.a[i * s + m];
                let d = &self.stage_out[m * width + n..m * width + n + n * n];
                for r in 0..n {
                    for c in 0..n {
                        let identity = if i == m && r == c { 1.0 } else { 0.0 };
                        matrix[(i * n + r, m * n + c)] = identity - factor * d[r * n + c];
                    }
                }
            }
        }
        // − h Σ_j a_ij (J_j − R_j) P_jm.
        for j in 0..s {
            let difference = &self.stage_out[j * width + n + n * n..j * width + n + 2 * n * n];
            for m in 0..s {
                self.block.iter_mut().for_each(|v| *v = 0.0);
                for k in 0..self.rule.quadrature {
                    let weight = self.rule.projection[k * s + j] * self.rule.lift[k * s + m];
                    let hessian = &self.node_out[k * node_width + n..(k + 1) * node_width];
                    for (p, hv) in self.block.iter_mut().zip(hessian) {
                        *p += weight * hv;
                    }
                }
                for r in 0..n {
                    for c in 0..n {
                        let mut sum = 0.0;
                        for l in 0..n {
                            sum += difference[r * n + l] * self.block[l * n + c];
                        }
                        self.product[r * n + c] = sum;
                    }
                }
                for i in 0..s {
                    let factor = h * self.a[i * s + j];
                    for r in 0..n {
                        for c in 0..n {
                            matrix[(i * n + r, m * n + c)] -= factor * self.product[r * n + c];
                        }
                    }
                }
            }
        }
        matrix
    }

    /// Solves the stage equations for the step from `x` with stage inputs `u` (s × m,
    /// stage-major); on success the buffers hold the final stage points' values.
    fn solve_stages(&mut self, x: &[f64], u: &[f64]) -> Result<(), StepFailure> {
        let (n, s, h) = (self.model.n(), self.s, self.h);
        self.z.iter_mut().for_each(|v| *v = 0.0);
        let scale_x = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let mut last = f64::INFINITY;
        for _ in 0..self.settings.max_iterations {
            self.evaluate(x, u)?;
            // Φ_i = Z_i − h Σ_j a_ij F_j.
            for i in 0..s {
                for r in 0..n {
                    let mut sum = 0.0;
                    for j in 0..s {
                        sum += self.a[i * s + j] * self.flow(j)[r];
                    }
                    self.residual[i * n + r] = -(self.z[i * n + r] - h * sum);
                }
            }
            let Some(update) = self.newton_matrix().lu().solve(&self.residual) else {
                return Err(StepFailure::NotFinite);
            };
            if !update.iter().all(|v| v.is_finite()) {
                return Err(StepFailure::NotFinite);
            }
            let mut largest = 0.0_f64;
            for (z, d) in self.z.iter_mut().zip(update.iter()) {
                *z += d;
                largest = largest.max(d.abs());
            }
            let scale = self.z.iter().fold(scale_x, |m, v| m.max(v.abs()));
            last = if scale > 0.0 { largest / scale } else { 0.0 };
            if last <= self.settings.tolerance {
                return self.evaluate(x, u);
            }
        }
        Err(StepFailure::NoConvergence(last))
    }

    /// Advances `x` (with its Kahan `carry`) by one step with stage inputs `u` (s × m,
    /// stage-major), writes the discrete outputs y (s × m) and returns the step's energies.
    pub fn step(
        &mut self,
        x: &mut [f64],
        carry: &mut [f64],
        u: &[f64],
        y: &mut [f64],
    ) -> Result<StepEnergies, StepFailure> {
        let (n, m, s, h) = (self.model.n(), self.model.inputs, self.s, self.h);
        let width = self.tapes.stage.n_outputs();
        let before = match self.last_energy {
            Some(energy) if self.last_state == x => energy,
            _ => self.hamiltonian(x),
        };
        self.solve_stages(x, u)?;
        let (mut port, mut dissipated) = (0.0, 0.0);
        let tail = n + 2 * n * n;
        for i in 0..s {
            let out = &self.stage_out[i * width..(i + 1) * width];
            dissipated += self.b[i] * out[tail];
            for k in 0..m {
                let yk = self.b[i] * out[tail + 1 + k];
                y[i * m + k] = yk;
                port += yk * u[i * m + k];
            }
        }
        for r in 0..n {
            let mut delta = 0.0;
            for i in 0..s {
                delta += self.b[i] * self.flow(i)[r];
            }
            kahan_add(&mut x[r], &mut carry[r], h * delta);
        }
        let after = self.hamiltonian(x);
        self.last_state.copy_from_slice(x);
        self.last_energy = Some(after);
        let (port, dissipated) = (h * port, h * dissipated);
        let stored = after - before;
        if !(stored.is_finite() && x.iter().all(|v| v.is_finite())) {
            return Err(StepFailure::NotFinite);
        }
        Ok([stored, port - dissipated, port, dissipated])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::port_hamiltonian::{Entry, ModelText};
    use crate::tableau::SchemeFamily;

    /// A quartic H with J, R and G depending on the state (variables [q, p, a, c, u]).
    fn model() -> ExpressionModel {
        let e = |text: &str| Entry::Expression(text.to_string());
        let n = Entry::Number;
        let text = ModelText {
            states: vec!["q".into(), "p".into()],
            parameters: vec![("a".into(), 0.8), ("c".into(), 0.2)],
            hamiltonian: "p^2/2 + q^2/2 + a*q^4/4 + q^2*p^2/3".into(),
            j: vec![vec![n(0.0), e("1 + q*p")], vec![e("-(1 + q*p)"), n(0.0)]],
            r: Some(vec![vec![n(0.0), n(0.0)], vec![n(0.0), e("c*(1 + q^2)")]]),
            g: Some(vec![vec![n(0.0)], vec![e("1 + 0.5*q")]]),
        };
        ExpressionModel::compile_projected("test", &text).unwrap()
    }

    /// Φ(Z) = Z − h (A ⊗ I) F(Z) at the stepper's current Z.
    fn residual(stepper: &mut EnergyPreservingStepper, x: &[f64], u: &[f64]) -> Vec<f64> {
        let (n, s, h) = (stepper.model.n(), stepper.s, stepper.h);
        stepper.evaluate(x, u).unwrap();
        (0..s * n)
            .map(|e| {
                let (i, r) = (e / n, e % n);
                let sum: f64 = (0..s)
                    .map(|j| stepper.a[i * s + j] * stepper.flow(j)[r])
                    .sum();
                stepper.z[e] - h * sum
            })
            .collect()
    }

    /// The Newton matrix is the Jacobian of Φ: against central differences (step 1e-6,
    /// truncation ~1e-12 · third derivatives) at a point away from Z = 0.
    #[test]
    fn the_newton_matrix_is_the_jacobian_of_the_stage_equations() {
        let model = model();
        let tapes = model.projected.as_ref().unwrap();
        for (s, q) in [(1, 2), (2, 6), (3, 5)] {
            let scheme = Scheme::new(SchemeFamily::Gauss, s).unwrap();
            let rule = ProjectionRule::new(s, q).unwrap();
            let settings = NewtonSettings::default();
            let mut stepper = EnergyPreservingStepper::new(
                &model,
                tapes,
                &rule,
                &scheme,
                0.3,
                &[0.8, 0.2],
                settings,
            );
            let (x, u) = ([0.9, -0.4], vec![0.7, -0.2, 0.4][..s].to_vec());
            let point: Vec<f64> = (0..2 * s).map(|e| 0.1 * (e as f64 + 1.0).sin()).collect();
            stepper.z.copy_from_slice(&point);
            stepper.evaluate(&x, &u).unwrap();
            let matrix = stepper.newton_matrix();
            let step = 1e-6;
            for column in 0..2 * s {
                let mut shifted = point.clone();
                shifted[column] += step;
                stepper.z.copy_from_slice(&shifted);
                let plus = residual(&mut stepper, &x, &u);
                shifted[column] -= 2.0 * step;
                stepper.z.copy_from_slice(&shifted);
                let minus = residual(&mut stepper, &x, &u);
                for row in 0..2 * s {
                    let difference = (plus[row] - minus[row]) / (2.0 * step);
                    let entry = matrix[(row, column)];
                    assert!(
                        (entry - difference).abs() <= 1e-8,
                        "s = {s}, q = {q}, ({row}, {column}): {entry:e} vs {difference:e}"
                    );
                }
            }
        }
    }
}
