//! One step of the discrete-time PH system (Kotyczka & Lefèvre 2019, Definition 1) for a
//! nonlinear model ẋ = f(x, u) = (J(x) − R(x)) ∇H(x) + G(x) u under s-stage Gauss–Legendre
//! collocation, in f64. With stage increments Z_i = x_i − x_k and u_i = u(t_k + c_i h):
//!
//! ```text
//!   Z_i = h Σ_j a_ij f(x_k + Z_j, u_j)                          (stage equations)
//!   x_{k+1} = x_k + h Σ_j b_j f(x_j, u_j)                       (Kahan-compensated)
//!   e_i = ∇H(x_i),  y_i = b_i G(x_i)ᵀ e_i                      (eq. 30, M = diag(b))
//!   port = h Σ_i y_iᵀ u_i,  dissipated = h Σ_i b_i e_iᵀ R(x_i) e_i
//!   stored = H(x_{k+1}) − H(x_k),  supplied = port − dissipated
//! ```
//!
//! The stage equations are solved by Newton's method with the exact Jacobian
//! I − h (a_ij ∂f/∂x(x_j, u_j)) (∂f/∂x derived symbolically), from Z = 0, until the update's
//! largest entry is at most `tolerance` times the largest of |x_k| and |Z| (or vanishes).
//! Gauss's mass matrix is diagonal (condition C1 of the paper), so the discrete Dirac
//! structure holds for a state-dependent J; the balance stored = supplied is exact for
//! quadratic H and of order 2s otherwise.

use nalgebra::{DMatrix, DVector};

use super::model::ExpressionModel;
use crate::compensated::kahan_add;
use crate::tableau::Scheme;

/// The stage solve's stopping rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    /// Relative size of the last update at which the iteration stops.
    pub tolerance: f64,
    /// Most iterations per step; more is a failure of that member at that step.
    pub max_iterations: usize,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        NewtonSettings {
            tolerance: 1e-14,
            max_iterations: 50,
        }
    }
}

/// The energies of one step: stored, supplied, port, dissipated.
pub type StepEnergies = [f64; 4];

/// Why a step could not be taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepFailure {
    /// Newton did not meet the tolerance within the iteration cap; the last update's
    /// relative size.
    NoConvergence(f64),
    /// f, ∂f/∂x, H or the Newton matrix was not finite or singular.
    NotFinite,
}

/// One member's stepper: its parameters, the scheme and work buffers.
pub struct GaussStepper<'a> {
    model: &'a ExpressionModel,
    settings: NewtonSettings,
    h: f64,
    s: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    /// [x, θ, u] of one stage point.
    vars: Vec<f64>,
    /// The stage tape's outputs at each stage, stage-major.
    stage_out: Vec<f64>,
    scratch: Vec<f64>,
    z: Vec<f64>,
    residual: DVector<f64>,
    /// The state the last step ended in and H there: the next step starts from it, so
    /// its H(x_k) is not evaluated twice.
    last_state: Vec<f64>,
    last_energy: Option<f64>,
}

impl<'a> GaussStepper<'a> {
    pub fn new(
        model: &'a ExpressionModel,
        scheme: &Scheme,
        h: f64,
        parameters: &[f64],
        settings: NewtonSettings,
    ) -> Self {
        let (n, s) = (model.n(), scheme.stages);
        let mut vars = vec![0.0; model.stage_vars()];
        vars[n..n + parameters.len()].copy_from_slice(parameters);
        GaussStepper {
            model,
            settings,
            h,
            s,
            a: scheme.a_row_major(),
            b: scheme.b.clone(),
            vars,
            stage_out: vec![0.0; s * model.stage.n_outputs()],
            scratch: Vec::new(),
            z: vec![0.0; s * n],
            residual: DVector::zeros(s * n),
            last_state: vec![0.0; n],
            last_energy: None,
        }
    }

    /// H(x) at the member's parameters.
    pub fn hamiltonian(&mut self, x: &[f64]) -> f64 {
        let n = self.model.n();
        self.vars[..n].copy_from_slice(x);
        let vars = &self.vars[..self.model.energy.n_vars()];
        let mut out = [0.0];
        self.model.energy.eval(vars, &mut out, &mut self.scratch);
        out[0]
    }

    /// Evaluates the stage tape at x_k + Z_i and u_i for every stage.
    fn evaluate_stages(&mut self, x: &[f64], u: &[f64]) {
        let (n, m) = (self.model.n(), self.model.inputs);
        let width = self.model.stage.n_outputs();
        let u_base = n + self.model.parameters.len();
        for i in 0..self.s {
            for ((var, x), z) in self.vars.iter_mut().zip(x).zip(&self.z[i * n..(i + 1) * n]) {
                *var = x + z;
            }
            self.vars[u_base..].copy_from_slice(&u[i * m..(i + 1) * m]);
            self.model.stage.eval(
                &self.vars,
                &mut self.stage_out[i * width..(i + 1) * width],
                &mut self.scratch,
            );
        }
    }

    /// f at stage i (after [`Self::evaluate_stages`]).
    fn flow(&self, i: usize) -> &[f64] {
        let width = self.model.stage.n_outputs();
        &self.stage_out[i * width..i * width + self.model.n()]
    }

    /// Solves the stage equations for the step from `x` with stage inputs `u` (s × m,
    /// stage-major); on success the stage tape holds the final stage points.
    fn solve_stages(&mut self, x: &[f64], u: &[f64]) -> Result<(), StepFailure> {
        let (n, s, h) = (self.model.n(), self.s, self.h);
        let width = self.model.stage.n_outputs();
        self.z.iter_mut().for_each(|v| *v = 0.0);
        let scale_x = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let mut last = f64::INFINITY;
        for _ in 0..self.settings.max_iterations {
            self.evaluate_stages(x, u);
            if !self.stage_out.iter().all(|v| v.is_finite()) {
                return Err(StepFailure::NotFinite);
            }
            // F_i = Z_i − h Σ_j a_ij f_j;  ∂F/∂Z = I − h (a_ij ∂f/∂x_j).
            for i in 0..s {
                for r in 0..n {
                    let mut sum = 0.0;
                    for j in 0..s {
                        sum += self.a[i * s + j] * self.flow(j)[r];
                    }
                    self.residual[i * n + r] = -(self.z[i * n + r] - h * sum);
                }
            }
            // Every entry is written: a fresh matrix per iteration, consumed by its LU.
            let mut matrix = DMatrix::zeros(s * n, s * n);
            for i in 0..s {
                for j in 0..s {
                    let factor = h * self.a[i * s + j];
                    let jacobian = &self.stage_out[j * width + n..j * width + n + n * n];
                    for r in 0..n {
                        for c in 0..n {
                            let identity = if i == j && r == c { 1.0 } else { 0.0 };
                            matrix[(i * n + r, j * n + c)] =
                                identity - factor * jacobian[r * n + c];
                        }
                    }
                }
            }
            let lu = matrix.lu();
            let Some(update) = lu.solve(&self.residual) else {
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
                self.evaluate_stages(x, u);
                if !self.stage_out.iter().all(|v| v.is_finite()) {
                    return Err(StepFailure::NotFinite);
                }
                return Ok(());
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
        let width = self.model.stage.n_outputs();
        let before = match self.last_energy {
            Some(energy) if self.last_state == x => energy,
            _ => self.hamiltonian(x),
        };
        self.solve_stages(x, u)?;
        let (mut port, mut dissipated) = (0.0, 0.0);
        for i in 0..s {
            let out = &self.stage_out[i * width..(i + 1) * width];
            dissipated += self.b[i] * out[n + n * n];
            for k in 0..m {
                let yk = self.b[i] * out[n + n * n + 1 + k];
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
