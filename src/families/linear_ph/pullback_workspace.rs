//! The pullback of the step operators ([`step_pullback`](super::step_pullback)) in buffers
//! reused from candidate to candidate. Identification pulls every candidate's cotangents
//! back to (J, R, Q, B) on the host; with fresh matrices and nalgebra's allocating LU, the
//! allocations cost more than the arithmetic.
//!
//! [`PullbackWorkspace::system_gradient`] takes the same operations in the same order as
//! [`step_pullback::system_gradient`](super::step_pullback::system_gradient), so it gives the
//! same bits (tested). With a^{(c)} the stage matrix of state component c (one matrix but
//! under a partitioned scheme) and U_j the columns of v = [x; U] that hold stage j's input:
//!
//! ```text
//!   L = (J − R) Q,   𝒢[(j,r),(l,c)] = δ_jl δ_rc − (h L[r,c]) a^{(c)}_jl,   𝒢 g = f,
//!   X_j = x + h Σ_l a_jl g_l,   μ = 𝒢^{−T} ḡ,  ḡ_(j,r) = (h b_j) Ḡ_Δ[r, ·],
//!   L̄ = Σ_j μ_j X_jᵀ,   B̄ = Σ_j μ_j[:, U_j],
//!   ∇_J = skew(L̄ Q),  ∇_R = −sym(L̄ Q),  ∇_Q = sym((J − R)ᵀ L̄ + B Ḡ_C),  ∇_B = B̄ + Q Ḡ_Cᵀ.
//! ```
//!
//! The LU factorisations are nalgebra's steps in place ([`lu_in_place`](super::lu_in_place));
//! the products are nalgebra's `gemm`'s ([`product_in_place`](super::product_in_place)). For
//! n ≤ 5 nothing is allocated but the four matrices returned; larger products go to
//! matrixmultiply, which allocates its packing buffers itself.

use nalgebra::DMatrix;

use crate::error::{Error, Result};
use crate::linear_ph::LinearPh;
use crate::linear_ph::lu_in_place::{factor_in_place, solve_in_place};
use crate::linear_ph::product_in_place::{fit, product};
use crate::linear_ph::step_pullback::SystemGradient;
use crate::tableau::Scheme;

/// Buffers for the pullback of one candidate at a time; sized by the first candidate and
/// resized only when a candidate's sizes differ.
#[derive(Debug, Default)]
pub struct PullbackWorkspace {
    /// J − R (n × n).
    j_minus_r: DMatrix<f64>,
    /// (J − R)ᵀ.
    j_minus_r_transposed: DMatrix<f64>,
    /// L = (J − R) Q (n × n).
    drift: DMatrix<f64>,
    /// 𝒢 (s n × s n), then its LU factors.
    stage_factors: DMatrix<f64>,
    /// The row exchanges of 𝒢's factorisation.
    stage_swaps: Vec<(usize, usize)>,
    /// 𝒢ᵀ, then its LU factors.
    transposed_factors: DMatrix<f64>,
    /// The row exchanges of 𝒢ᵀ's factorisation.
    transposed_swaps: Vec<(usize, usize)>,
    /// The forcing f for every unit vector of v = [x; U], then the rates g: row-major,
    /// s n rows (stage-major) of p = n + s m entries, one per unit vector.
    rates: Vec<f64>,
    /// The stage states, transposed (p × s n): column (j, c) holds X_j[c] for every v.
    stage_states_transposed: DMatrix<f64>,
    /// ḡ, then μ, row-major as `rates`.
    mu: Vec<f64>,
    /// μ_j (n × p), stage j's rows of μ.
    mu_stage: DMatrix<f64>,
    /// Ḡ_C (m × n).
    output_bar: DMatrix<f64>,
    /// Ḡ_Cᵀ (n × m).
    output_bar_transposed: DMatrix<f64>,
    /// μ_j X_jᵀ (n × n).
    stage_product: DMatrix<f64>,
    /// L̄ (n × n).
    l_bar: DMatrix<f64>,
    /// B̄ (n × m).
    b_bar: DMatrix<f64>,
    /// L̄ Q (n × n).
    l_bar_q: DMatrix<f64>,
    /// (J − R)ᵀ L̄ + B Ḡ_C (n × n), ∇_Q before its symmetric part.
    q_raw: DMatrix<f64>,
    /// B Ḡ_C (n × n).
    b_output: DMatrix<f64>,
    /// Q Ḡ_Cᵀ (n × m).
    q_output: DMatrix<f64>,
}

/// The pairs (stage, component) of `stages` stages of `width` components, in the order of
/// the stacked index stage · width + component.
fn stage_major(stages: usize, width: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..stages).flat_map(move |stage| (0..width).map(move |component| (stage, component)))
}

impl PullbackWorkspace {
    /// The gradient with respect to (J, R, Q, B), each in its structure, from the cotangents
    /// Ḡ_Δ (`delta_bar`, n × p, row-major) and Ḡ_C (`output_bar`, m × n, row-major) of the
    /// step operators of `system` under `scheme` at step h (`split`: the position block's
    /// size under a partitioned scheme). The bits of `step_pullback::system_gradient`.
    pub fn system_gradient(
        &mut self,
        scheme: &Scheme,
        split: Option<usize>,
        h: f64,
        system: &LinearPh,
        delta_bar: &[f64],
        output_bar: &[f64],
    ) -> Result<SystemGradient> {
        let (n, m, s) = (system.states(), system.inputs(), scheme.stages);
        let p = n + s * m;
        assert!(n > 0, "a system has at least one state");
        assert_eq!(delta_bar.len(), n * p, "Ḡ_Δ is n × p");
        assert_eq!(output_bar.len(), m * n, "Ḡ_C is m × n");
        self.shape_buffers(n, m, s);
        self.solve_stages(scheme, split, h, system)?;
        self.pull_back(scheme, h, delta_bar)?;
        // Ḡ_C and Ḡ_Cᵀ, owned: nalgebra's products take their factors unit-stride.
        for (i, row) in output_bar.chunks_exact(n).enumerate() {
            for (c, &value) in row.iter().enumerate() {
                self.output_bar[(i, c)] = value;
            }
        }
        self.output_bar_transposed.tr_copy_from(&self.output_bar);
        // ∂/∂J = L̄ Q, ∂/∂R = −L̄ Q, ∂/∂Q = (J − R)ᵀ L̄ + B Ḡ_C, ∂/∂B = B̄ + Q Ḡ_Cᵀ.
        product(&mut self.l_bar_q, &self.l_bar, &system.q);
        self.j_minus_r_transposed.tr_copy_from(&self.j_minus_r);
        product(&mut self.q_raw, &self.j_minus_r_transposed, &self.l_bar);
        product(&mut self.b_output, &system.b, &self.output_bar);
        self.q_raw += &self.b_output;
        product(&mut self.q_output, &system.q, &self.output_bar_transposed);
        let (lq, raw) = (&self.l_bar_q, &self.q_raw);
        Ok(SystemGradient {
            j: DMatrix::from_fn(n, n, |r, c| (lq[(r, c)] - lq[(c, r)]) * 0.5),
            r: DMatrix::from_fn(n, n, |r, c| -((lq[(r, c)] + lq[(c, r)]) * 0.5)),
            q: DMatrix::from_fn(n, n, |r, c| (raw[(r, c)] + raw[(c, r)]) * 0.5),
            b: &self.b_bar + &self.q_output,
        })
    }

    /// Shapes every buffer for n states, m inputs and s stages.
    fn shape_buffers(&mut self, n: usize, m: usize, s: usize) {
        let (p, size) = (n + s * m, s * n);
        for (matrix, rows, cols) in [
            (&mut self.j_minus_r, n, n),
            (&mut self.j_minus_r_transposed, n, n),
            (&mut self.drift, n, n),
            (&mut self.stage_factors, size, size),
            (&mut self.transposed_factors, size, size),
            (&mut self.stage_states_transposed, p, size),
            (&mut self.mu_stage, n, p),
            (&mut self.output_bar, m, n),
            (&mut self.output_bar_transposed, n, m),
            (&mut self.stage_product, n, n),
            (&mut self.l_bar, n, n),
            (&mut self.b_bar, n, m),
            (&mut self.l_bar_q, n, n),
            (&mut self.q_raw, n, n),
            (&mut self.b_output, n, n),
            (&mut self.q_output, n, m),
        ] {
            fit(matrix, rows, cols);
        }
        self.rates.resize(size * p, 0.0);
        self.mu.resize(size * p, 0.0);
    }

    /// Forms and factors 𝒢 and 𝒢ᵀ and solves 𝒢 g = f for every unit vector of v, leaving
    /// the stage states X (`StageSolve::new`).
    fn solve_stages(
        &mut self,
        scheme: &Scheme,
        split: Option<usize>,
        h: f64,
        system: &LinearPh,
    ) -> Result<()> {
        let (n, m, s) = (system.states(), system.inputs(), scheme.stages);
        let p = n + s * m;
        // L = (J − R) Q, as `LinearPh::drift` forms it.
        self.j_minus_r.copy_from(&system.j);
        self.j_minus_r -= &system.r;
        product(&mut self.drift, &self.j_minus_r, &system.q);
        let coefficient = |c: usize, j: usize, k: usize| {
            if split.is_some_and(|half| c >= half) {
                scheme.a_momenta[(j, k)]
            } else {
                scheme.a_positions[(j, k)]
            }
        };
        let l = &self.drift;
        for (k, c) in stage_major(s, n) {
            let col = k * n + c;
            for (j, r) in stage_major(s, n) {
                let row = j * n + r;
                let identity = if row == col { 1.0 } else { 0.0 };
                let entry = identity - h * l[(r, c)] * coefficient(c, j, k);
                self.stage_factors[(row, col)] = entry;
                self.transposed_factors[(col, row)] = entry;
            }
        }
        let singular = || Error::Numerical {
            context: "stage matrix".into(),
            problem: format!("I − h (A ⊗ L) is singular at h = {h}"),
        };
        if !factor_in_place(&mut self.stage_factors, &mut self.stage_swaps) {
            return Err(singular());
        }
        // Row (j, r) of f: L[r, col] for a state column; B[r, c] for the input column (l, c)
        // of stage l = j, else 0.
        for (j, r) in stage_major(s, n) {
            let row = &mut self.rates[(j * n + r) * p..][..p];
            for (col, entry) in row[..n].iter_mut().enumerate() {
                *entry = l[(r, col)];
            }
            for ((stage, channel), entry) in stage_major(s, m).zip(&mut row[n..]) {
                *entry = if stage == j {
                    system.b[(r, channel)]
                } else {
                    0.0
                };
            }
        }
        if !solve_in_place(&self.stage_factors, &self.stage_swaps, &mut self.rates, p) {
            return Err(singular());
        }
        let rates = &self.rates;
        for col in 0..p {
            for (j, c) in stage_major(s, n) {
                let base = if col == c { 1.0 } else { 0.0 };
                let z: f64 = (0..s)
                    .map(|k| coefficient(c, j, k) * rates[(k * n + c) * p + col])
                    .sum();
                self.stage_states_transposed[(col, j * n + c)] = base + h * z;
            }
        }
        // 𝒢ᵀ is factored whether or not its solve is needed, as `StageSolve::new` does; a
        // zero on its U's diagonal is the transposed solve's error.
        let _ = factor_in_place(&mut self.transposed_factors, &mut self.transposed_swaps);
        Ok(())
    }

    /// μ = 𝒢^{−T} ḡ with ḡ_(j, r) = (h b_j) Ḡ_Δ[r, ·], then L̄ = Σ_j μ_j X_jᵀ and
    /// B̄ = Σ_j μ_j[:, U_j] (`StageSolve::pull_back`).
    fn pull_back(&mut self, scheme: &Scheme, h: f64, delta_bar: &[f64]) -> Result<()> {
        let (n, m, s) = (self.l_bar.nrows(), self.b_bar.ncols(), scheme.stages);
        let p = n + s * m;
        for (j, r) in stage_major(s, n) {
            let row = &mut self.mu[(j * n + r) * p..][..p];
            for (entry, &cotangent) in row.iter_mut().zip(&delta_bar[r * p..][..p]) {
                *entry = h * scheme.b[j] * cotangent;
            }
        }
        if !solve_in_place(
            &self.transposed_factors,
            &self.transposed_swaps,
            &mut self.mu,
            p,
        ) {
            return Err(Error::Numerical {
                context: "stage matrix".into(),
                problem: "the transposed stage matrix is singular".into(),
            });
        }
        self.l_bar.fill(0.0);
        self.b_bar.fill(0.0);
        for j in 0..s {
            // μ_j (n × p) copied out of the row-major μ: nalgebra's products read their left
            // factor's columns as unit-stride vectors.
            for (r, row) in self.mu[j * n * p..][..n * p].chunks_exact(p).enumerate() {
                for (col, &value) in row.iter().enumerate() {
                    self.mu_stage[(r, col)] = value;
                }
            }
            let stage_states = self.stage_states_transposed.columns(j * n, n);
            product(&mut self.stage_product, &self.mu_stage, &stage_states);
            self.l_bar += &self.stage_product;
            self.b_bar += self.mu_stage.columns(n + j * m, m);
        }
        Ok(())
    }
}
