//! One step of the discrete-time PH system of Kotyczka & Lefèvre (2019), Definition 1, for a
//! linear member ẋ = L x + B u with L = (J − R) Q, in f64.
//!
//! With stage increments Z_i = x_i − x_0 and a^{(r)} the stage matrix of state component r
//! (IIIA for positions, IIIB for momenta under the Lobatto pair; one matrix otherwise):
//!
//! ```text
//!   Z_i[r] = h Σ_j a^{(r)}_ij (L (x_0 + Z_j) + B u_j)[r]        (stage equations)
//!   f_i = −(L x_i + B u_i),  e_i = Q x_i                        (flows, efforts)
//!   δ = x_1 − x_0 = −h Σ_j b_j f_j
//!   y_i = Bᵀ Σ_j m_ij e_j                                      (discrete output, eq. 30)
//!   port = h Σ_i y_iᵀ u_i,   dissipated = h Σ_ij m_ij e_iᵀ R e_j
//!   ΔH̃ = port − dissipated = −h eᵀ (M ⊗ I) f   (J constant)   (supplied, eq. 24)
//!   ΔH̄ = H(x_1) − H(x_0) = δᵀ Q (x_0 + δ/2)                   (stored, eq. 39)
//! ```
//!
//! The stage matrix I − h (a^{(r)}_ij L[r, c]) is constant for a linear member, so it is
//! LU-factored once (partial pivoting, as `nalgebra::LU` does it, in place) and each step is
//! a pair of triangular solves. [`CollocationStepper::rebuild`] refactors for another member
//! in the same buffers, so building many members' steppers allocates nothing per member.
//!
//! # Why the dissipation is h eᵀ (M ⊗ R) e and not the printed eq. (71)
//!
//! §5.2 of the paper closes the port of the lossless oscillator by u^k = −r y^k + v^k (70)
//! and substitutes it into (37), which prints ΔH̃^k = −r h (y^k)ᵀ y^k + h (y^k)ᵀ v^k (71),
//! y^k = Gᵀ M e^k the discrete output (30). Taken as printed, that feedback acts on the
//! M-weighted efforts and is not the collocation of the damped system (65) that the paper
//! integrates (R in the dynamics, stage inputs u_i = −r gᵀ e_i); for (65) the supplied
//! energy (24) is
//!
//! ```text
//!   ΔH̃ = −h eᵀ (M ⊗ I) f = h eᵀ (M ⊗ J) e − h eᵀ (M ⊗ R) e + h yᵀ u
//!      = port − h eᵀ (M ⊗ R) e                          (J constant: (M ⊗ J) skew)
//! ```
//!
//! so harbor books dissipated = h eᵀ (M ⊗ R) e = h Σ_ij m_ij e_iᵀ R e_j, which is ≥ 0 for
//! every R ⪰ 0 (M is a Gram matrix, positive definite) and keeps Gauss's ΔH̄ = ΔH̃ exact with
//! damping. With R = r g gᵀ it is r h yᵀ (M⁻¹ ⊗ 1) y, and (71) as printed is r h yᵀ y: the
//! two agree exactly where M = I, one stage (the implicit midpoint rule); for s ≥ 2 Gauss
//! stages (71) would book Σ_i b_i² of the energy the storage loses (½ at s = 2).
//! `tests/dissipation_booking.rs` checks both, step by step.

use nalgebra::{DMatrix, DVector};

use crate::compensated::kahan_add;
use crate::error::{Error, Result};
use crate::linear_ph::lu_in_place::factor_in_place;
use crate::linear_ph::product_in_place::fit;
use crate::linear_ph::{LinearPhMember, LinearPhPlan, StepEnergy};

/// A member's constant step data: the factored stage matrix and the scheme coefficients.
pub struct CollocationStepper {
    n: usize,
    m: usize,
    s: usize,
    h: f64,
    l: DMatrix<f64>,
    /// J − R, the left factor of L (a work buffer of [`CollocationStepper::rebuild`]).
    j_minus_r: DMatrix<f64>,
    q: DMatrix<f64>,
    r: DMatrix<f64>,
    bmat: DMatrix<f64>,
    /// a^{(r)}_ij laid out as `stage_coef[(r · s + i) · s + j]`.
    stage_coef: Vec<f64>,
    weights: Vec<f64>,
    mass: DMatrix<f64>,
    /// The stage matrix P (I − h A ⊗ L) = L_u U factored in place: U on and above the
    /// diagonal, the unit-diagonal L_u below it.
    lu: DMatrix<f64>,
    /// The row swaps (i, pivot) of P, in the order they were made.
    swaps: Vec<(usize, usize)>,
    has_dissipation: bool,
}

/// Work buffers reused across steps; after [`CollocationStepper::solve_stages`] they hold
/// that step's stage quantities (stage-major, s × n).
pub struct StepScratch {
    rhs: DVector<f64>,
    drift0: Vec<f64>,
    pub stage_states: Vec<f64>,
    pub stage_rates: Vec<f64>,
    pub efforts: Vec<f64>,
    pub weighted_efforts: Vec<f64>,
    pub delta: Vec<f64>,
}

/// Fills `coef` with the stage matrices of n state components under `plan`'s scheme,
/// a^{(r)}_ij at `coef[(r · s + i) · s + j]`: IIIA for the positions (r below the split)
/// and IIIB for the momenta under the Lobatto pair, the one matrix otherwise.
pub fn fill_stage_coefficients(plan: &LinearPhPlan, n: usize, coef: &mut Vec<f64>) {
    let scheme = &plan.scheme;
    let s = scheme.stages;
    let split = plan.split.unwrap_or(n);
    coef.clear();
    coef.resize(n * s * s, 0.0);
    for r in 0..n {
        let a = if r < split {
            &scheme.a_positions
        } else {
            &scheme.a_momenta
        };
        for i in 0..s {
            for j in 0..s {
                coef[(r * s + i) * s + j] = a[(i, j)];
            }
        }
    }
}

impl CollocationStepper {
    /// Factors the stage matrix of `member` under `plan`'s scheme and step size.
    pub fn new(plan: &LinearPhPlan, member: &LinearPhMember) -> Result<Self> {
        let empty = || DMatrix::zeros(0, 0);
        let mut stepper = CollocationStepper {
            n: 0,
            m: 0,
            s: 0,
            h: 0.0,
            l: empty(),
            j_minus_r: empty(),
            q: empty(),
            r: empty(),
            bmat: empty(),
            stage_coef: Vec::new(),
            weights: Vec::new(),
            mass: empty(),
            lu: empty(),
            swaps: Vec::new(),
            has_dissipation: false,
        };
        stepper.rebuild(plan, member)?;
        Ok(stepper)
    }

    /// Refactors this stepper for `member` under `plan`'s scheme and step size, in the
    /// buffers it holds: L = (J − R) Q, the stage matrix I − h (a^{(r)}_ij L[r, c]) and its
    /// LU factors (the same operations, so the same bits, as [`CollocationStepper::new`]).
    pub fn rebuild(&mut self, plan: &LinearPhPlan, member: &LinearPhMember) -> Result<()> {
        let scheme = &plan.scheme;
        let system = &member.system;
        let (n, s, h) = (system.states(), scheme.stages, plan.grid.h);
        let m = system.inputs();
        (self.n, self.m, self.s, self.h) = (n, m, s, h);
        // L = (J − R) Q, as `LinearPh::drift` forms it.
        fit(&mut self.j_minus_r, n, n);
        self.j_minus_r.copy_from(&system.j);
        self.j_minus_r -= &system.r;
        fit(&mut self.l, n, n);
        self.l.gemm(1.0, &self.j_minus_r, &system.q, 0.0);
        fill_stage_coefficients(plan, n, &mut self.stage_coef);
        let size = n * s;
        fit(&mut self.lu, size, size);
        for col in 0..size {
            for row in 0..size {
                let (i, r) = (row / n, row % n);
                let (j, c) = (col / n, col % n);
                let identity = if row == col { 1.0 } else { 0.0 };
                self.lu[(row, col)] =
                    identity - h * self.stage_coef[(r * s + i) * s + j] * self.l[(r, c)];
            }
        }
        // Gaussian elimination with partial pivoting, step for step as `nalgebra::LU::new`.
        if !factor_in_place(&mut self.lu, &mut self.swaps) {
            return Err(Error::Numerical {
                context: "stage matrix".into(),
                problem: format!("I − h (A ⊗ L) is singular at h = {h}"),
            });
        }
        for (mine, theirs) in [
            (&mut self.q, &system.q),
            (&mut self.r, &system.r),
            (&mut self.bmat, &system.b),
            (&mut self.mass, &scheme.m),
        ] {
            fit(mine, theirs.nrows(), theirs.ncols());
            mine.copy_from(theirs);
        }
        self.weights.clear();
        self.weights.extend_from_slice(&scheme.b);
        self.has_dissipation = system.r.amax() > 0.0;
        Ok(())
    }

    /// Whether `scratch` has the sizes of this stepper's step.
    pub fn fits(&self, scratch: &StepScratch) -> bool {
        scratch.rhs.len() == self.n * self.s && scratch.delta.len() == self.n
    }

    /// Fresh work buffers for this stepper.
    pub fn scratch(&self) -> StepScratch {
        let (n, s) = (self.n, self.s);
        StepScratch {
            rhs: DVector::zeros(n * s),
            drift0: vec![0.0; n],
            stage_states: vec![0.0; n * s],
            stage_rates: vec![0.0; n * s],
            efforts: vec![0.0; n * s],
            weighted_efforts: vec![0.0; n * s],
            delta: vec![0.0; n],
        }
    }

    /// The linear part of a step from x with stage inputs `u` (s × m, stage-major): solves
    /// the stage equations and fills the stage states, rates, efforts, M-weighted efforts and
    /// the increment δ in `w`, and the discrete output y (s × m); returns the port energy
    /// h Σ_i y_iᵀ u_i.
    pub fn solve_stages(&self, x: &[f64], u: &[f64], y: &mut [f64], w: &mut StepScratch) -> f64 {
        let (n, m, s, h) = (self.n, self.m, self.s, self.h);
        // Column-major entries: l[c · n + r] = L[r, c], b[c · n + r] = B[r, c], ….
        let (l, b, q) = (self.l.as_slice(), self.bmat.as_slice(), self.q.as_slice());
        let mass = self.mass.as_slice();
        // L x_0.
        for r in 0..n {
            w.drift0[r] = (0..n).map(|c| l[c * n + r] * x[c]).sum();
        }
        // rhs_(i,r) = h Σ_j a^{(r)}_ij (L x_0 + B u_j)[r].
        for i in 0..s {
            for r in 0..n {
                let mut acc = 0.0;
                for j in 0..s {
                    let forcing: f64 = (0..m).map(|c| b[c * n + r] * u[j * m + c]).sum();
                    acc += self.stage_coef[(r * s + i) * s + j] * (w.drift0[r] + forcing);
                }
                w.rhs[i * n + r] = h * acc;
            }
        }
        // P (I − h A ⊗ L) = L_u U: permute, then the two triangular solves (`LU::solve_mut`).
        // nalgebra's own triangular solves (`solve_in_place` gains only from many
        // right-hand sides; a step has one).
        for &(i, pivot) in &self.swaps {
            w.rhs.swap_rows(i, pivot);
        }
        let _ = self
            .lu
            .solve_lower_triangular_with_diag_mut(&mut w.rhs, 1.0);
        let _ = self.lu.solve_upper_triangular_mut(&mut w.rhs);
        // Stage states, rates −f_i = L x_i + B u_i, efforts e_i = Q x_i.
        for i in 0..s {
            for (r, &x_r) in x.iter().enumerate() {
                w.stage_states[i * n + r] = x_r + w.rhs[i * n + r];
            }
            for r in 0..n {
                let xi = &w.stage_states[i * n..(i + 1) * n];
                let drift: f64 = (0..n).map(|c| l[c * n + r] * xi[c]).sum();
                let forcing: f64 = (0..m).map(|c| b[c * n + r] * u[i * m + c]).sum();
                w.stage_rates[i * n + r] = drift + forcing;
                w.efforts[i * n + r] = (0..n).map(|c| q[c * n + r] * xi[c]).sum();
            }
        }
        // (M e)_i = Σ_j m_ij e_j.
        for i in 0..s {
            for r in 0..n {
                w.weighted_efforts[i * n + r] =
                    (0..s).map(|j| mass[j * s + i] * w.efforts[j * n + r]).sum();
            }
        }
        // y_i = Bᵀ (M e)_i and the port energy h Σ_i y_iᵀ u_i.
        let mut port = 0.0;
        for i in 0..s {
            for c in 0..m {
                let yi: f64 = (0..n)
                    .map(|r| b[c * n + r] * w.weighted_efforts[i * n + r])
                    .sum();
                y[i * m + c] = yi;
                port += yi * u[i * m + c];
            }
        }
        for r in 0..n {
            w.delta[r] = h
                * (0..s)
                    .map(|j| self.weights[j] * w.stage_rates[j * n + r])
                    .sum::<f64>();
        }
        port * h
    }

    /// Advances x by one step with stage inputs `u` (s × m, stage-major), Kahan-compensated
    /// through `carry`; writes the discrete output y (s × m) and returns the step energies.
    pub fn step(
        &self,
        x: &mut [f64],
        carry: &mut [f64],
        u: &[f64],
        y: &mut [f64],
        w: &mut StepScratch,
    ) -> StepEnergy {
        let (n, s, h) = (self.n, self.s, self.h);
        let port = self.solve_stages(x, u, y, w);
        // h Σ_ij m_ij e_iᵀ R e_j = h Σ_i (M e)_iᵀ R e_i.
        let mut dissipated = 0.0;
        if self.has_dissipation {
            for i in 0..s {
                for r in 0..n {
                    let re: f64 = (0..n).map(|c| self.r[(r, c)] * w.efforts[i * n + c]).sum();
                    dissipated += w.weighted_efforts[i * n + r] * re;
                }
            }
            dissipated *= h;
        }
        // ΔH̄ = δᵀ Q (x_0 + δ/2); x ← x + δ.
        let mut stored = 0.0;
        for r in 0..n {
            let q_mid: f64 = (0..n)
                .map(|c| self.q[(r, c)] * (x[c] + 0.5 * w.delta[c]))
                .sum();
            stored += w.delta[r] * q_mid;
        }
        for ((x_r, carry_r), &delta_r) in x.iter_mut().zip(carry.iter_mut()).zip(&w.delta) {
            kahan_add(x_r, carry_r, delta_r);
        }
        StepEnergy {
            stored,
            supplied: port - dissipated,
            port,
            dissipated,
        }
    }
}
