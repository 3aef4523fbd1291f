//! The pullback of the step operators through the collocation stage solve: given the
//! cotangents of Δ (the step map x_{k+1} = x_k + Δ [x_k; U_k]) and of C = Bᵀ Q (the output
//! map y_k = C x_k), the gradient with respect to J, R, Q and B, in their structure.
//!
//! # The stage solve in rate form
//!
//! With L = (J − R) Q and a^{(c)} the stage matrix of state component c (one matrix for
//! monolithic schemes), the stage rates g_j = L X_j + B u_j at the stage states
//! X_j = x + Z_j, Z_j\[c] = h Σ_l a^{(c)}_jl g_l\[c], solve the linear system
//!
//! ```text
//!   𝒢 g = f,   𝒢[(j,r),(l,c)] = δ_jl δ_rc − h L[r,c] a^{(c)}_jl,   f_j = L x + B u_j,
//!   δ = h Σ_j b_j g_j                                      (the step's increment)
//! ```
//!
//! # Reverse mode
//!
//! For a cotangent δ̄ of δ, ḡ_j = h b_j δ̄ and μ = 𝒢^{−T} ḡ. The pairing ⟨δ̄, dδ⟩ then equals
//! ⟨μ, df − d𝒢 g⟩ with df_j = dL x + dB u_j and (d𝒢 g)_(j,r) = −h Σ_c dL\[r,c] Σ_l
//! a^{(c)}_jl g_l\[c] = −Σ_c dL\[r,c] Z_j\[c], so
//!
//! ```text
//!   L̄ = Σ_j μ_j (x + Z_j)ᵀ = Σ_j μ_j X_jᵀ,     B̄ = Σ_j μ_j u_jᵀ.
//! ```
//!
//! The step is linear in v = [x; U], so the cotangent of the whole matrix Δ (n × p,
//! p = n + s m) is the sum of these over the unit vectors v = e_col with δ̄ = Ḡ_Δ[:, col]:
//! one solve with 𝒢ᵀ for all p columns at once.
//!
//! # Through L = (J − R) Q and C = Bᵀ Q
//!
//! ```text
//!   ∂/∂J = L̄ Q,   ∂/∂R = −L̄ Q,   ∂/∂Q = (J − R)ᵀ L̄ + B Ḡ_C,   ∂/∂B = B̄ + Q Ḡ_Cᵀ,
//! ```
//!
//! projected onto the tangent spaces of the structure in the Frobenius inner product: the
//! skew part for J, the symmetric part for R and Q (so ⟨∇, D⟩ is the directional derivative
//! along every skew D for J and every symmetric D for R and Q). Nothing here depends on a
//! factorisation of R: the step operators are smooth functions of (J, R, Q, B).

use nalgebra::DMatrix;

use crate::error::{Error, Result};
use crate::linear_ph::LinearPh;
use crate::tableau::Scheme;

/// Cotangents of the step operators: ∂𝒥/∂Δ (n × p) and ∂𝒥/∂C (m × n).
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorCotangents {
    pub delta: DMatrix<f64>,
    pub output: DMatrix<f64>,
}

/// The gradient with respect to the system matrices, each in its structure (J skew, R and
/// Q symmetric).
#[derive(Debug, Clone, PartialEq)]
pub struct SystemGradient {
    pub j: DMatrix<f64>,
    pub r: DMatrix<f64>,
    pub q: DMatrix<f64>,
    pub b: DMatrix<f64>,
}

/// (X − Xᵀ)/2.
pub fn skew_part(x: &DMatrix<f64>) -> DMatrix<f64> {
    (x - x.transpose()) * 0.5
}

/// (X + Xᵀ)/2.
pub fn symmetric_part(x: &DMatrix<f64>) -> DMatrix<f64> {
    (x + x.transpose()) * 0.5
}

/// The stage solve of one system under a scheme, for every unit vector of v = [x; U].
pub struct StageSolve {
    n: usize,
    m: usize,
    s: usize,
    h: f64,
    /// 𝒢ᵀ, LU-factored.
    transposed: nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>,
    /// Stage states X (s n × p): row (j, r), column col = X_j[r] for v = e_col.
    stage_states: DMatrix<f64>,
    /// Stage rates g (s n × p).
    rates: DMatrix<f64>,
    weights: Vec<f64>,
}

impl StageSolve {
    /// Factors 𝒢 of `system` under `scheme` at step h (`split`: the size of the position
    /// block under a partitioned scheme) and solves it for every unit vector of v.
    pub fn new(scheme: &Scheme, split: Option<usize>, h: f64, system: &LinearPh) -> Result<Self> {
        let (n, m, s) = (system.states(), system.inputs(), scheme.stages);
        let p = n + s * m;
        let l = system.drift();
        let coefficient = |c: usize, j: usize, k: usize| {
            if split.is_some_and(|half| c >= half) {
                scheme.a_momenta[(j, k)]
            } else {
                scheme.a_positions[(j, k)]
            }
        };
        let size = s * n;
        let matrix = DMatrix::from_fn(size, size, |row, col| {
            let (j, r) = (row / n, row % n);
            let (k, c) = (col / n, col % n);
            let identity = if row == col { 1.0 } else { 0.0 };
            identity - h * l[(r, c)] * coefficient(c, j, k)
        });
        let singular = || Error::Numerical {
            context: "stage matrix".into(),
            problem: format!("I − h (A ⊗ L) is singular at h = {h}"),
        };
        let lu = matrix.clone().lu();
        if !lu.is_invertible() {
            return Err(singular());
        }
        // f for v = e_col: L e_col at every stage for a state column, B e_c at stage l for
        // the input column (l, c).
        let forcing = DMatrix::from_fn(size, p, |row, col| {
            let (j, r) = (row / n, row % n);
            if col < n {
                l[(r, col)]
            } else {
                let (stage, channel) = ((col - n) / m, (col - n) % m);
                if stage == j {
                    system.b[(r, channel)]
                } else {
                    0.0
                }
            }
        });
        let rates = lu.solve(&forcing).ok_or_else(singular)?;
        let stage_states = DMatrix::from_fn(size, p, |row, col| {
            let (j, c) = (row / n, row % n);
            let base = if col == c { 1.0 } else { 0.0 };
            let z: f64 = (0..s)
                .map(|k| coefficient(c, j, k) * rates[(k * n + c, col)])
                .sum();
            base + h * z
        });
        let transposed = matrix.transpose().lu();
        Ok(StageSolve {
            n,
            m,
            s,
            h,
            transposed,
            stage_states,
            rates,
            weights: scheme.b.clone(),
        })
    }

    /// Δ (n × p): δ = h Σ_j b_j g_j for every unit vector of v.
    pub fn step_operator(&self) -> DMatrix<f64> {
        let (n, s) = (self.n, self.s);
        let p = self.rates.ncols();
        DMatrix::from_fn(n, p, |r, col| {
            self.h
                * (0..s)
                    .map(|j| self.weights[j] * self.rates[(j * n + r, col)])
                    .sum::<f64>()
        })
    }

    /// (L̄, B̄) for the cotangent `delta_bar` (n × p) of Δ.
    pub fn pull_back(&self, delta_bar: &DMatrix<f64>) -> Result<(DMatrix<f64>, DMatrix<f64>)> {
        let (n, m, s) = (self.n, self.m, self.s);
        let p = delta_bar.ncols();
        // ḡ_(j, r) = h b_j Ḡ_Δ[r, col]; μ = 𝒢^{−T} ḡ.
        let rhs = DMatrix::from_fn(s * n, p, |row, col| {
            let (j, r) = (row / n, row % n);
            self.h * self.weights[j] * delta_bar[(r, col)]
        });
        let mu = self
            .transposed
            .solve(&rhs)
            .ok_or_else(|| Error::Numerical {
                context: "stage matrix".into(),
                problem: "the transposed stage matrix is singular".into(),
            })?;
        let mut l_bar = DMatrix::zeros(n, n);
        let mut b_bar = DMatrix::zeros(n, m);
        for j in 0..s {
            let mu_j = mu.rows(j * n, n);
            l_bar += mu_j * self.stage_states.rows(j * n, n).transpose();
            b_bar += mu_j.columns(n + j * m, m);
        }
        Ok((l_bar, b_bar))
    }
}

/// The gradient with respect to (J, R, Q, B), each in its structure, from the cotangents of
/// Δ and C = Bᵀ Q (module docs).
pub fn system_gradient(
    scheme: &Scheme,
    split: Option<usize>,
    h: f64,
    system: &LinearPh,
    cotangents: &OperatorCotangents,
) -> Result<SystemGradient> {
    let solve = StageSolve::new(scheme, split, h, system)?;
    let (l_bar, b_bar) = solve.pull_back(&cotangents.delta)?;
    let lq = &l_bar * &system.q;
    let dissipative = &system.j - &system.r;
    let q_raw = dissipative.transpose() * &l_bar + &system.b * &cotangents.output;
    Ok(SystemGradient {
        j: skew_part(&lq),
        r: -symmetric_part(&lq),
        q: symmetric_part(&q_raw),
        b: b_bar + &system.q * cotangents.output.transpose(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear_ph::StepOperators;
    use crate::linear_ph::{LinearPhMember, LinearPhPlan};
    use crate::model::Signal;
    use crate::tableau::SchemeFamily;
    use nalgebra::DVector;

    fn system(n: usize, m: usize, seed: u64) -> LinearPh {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let a = DMatrix::from_fn(n, n, |_, _| next());
        let c = DMatrix::from_fn(n, n, |_, _| next());
        let d = DMatrix::from_fn(n, n, |_, _| next());
        let b = DMatrix::from_fn(n, m, |_, _| next());
        LinearPh::new(
            "system",
            &a - a.transpose(),
            &c * c.transpose() * 0.3,
            DMatrix::identity(n, n) + &d * d.transpose() * 0.2,
            b,
        )
        .unwrap()
    }

    /// Cotangents Ḡ_Δ (n × p) and Ḡ_C (m × n) of small integers, less `shift`.
    fn cotangents(n: usize, m: usize, p: usize, shift: f64) -> OperatorCotangents {
        OperatorCotangents {
            delta: DMatrix::from_fn(n, p, |i, k| ((i * 7 + k * 3) % 5) as f64 - 2.0 - shift),
            output: DMatrix::from_fn(m, n, |i, k| ((i * 5 + k) % 3) as f64 - 1.0 - shift / 2.0),
        }
    }

    /// Δ from the rate form agrees with the planner's step operators (stage-increment form).
    #[test]
    fn the_rate_form_reproduces_the_step_operators() {
        for (family, stages) in [(SchemeFamily::Gauss, 1), (SchemeFamily::Gauss, 3)] {
            let scheme = Scheme::new(family, stages).unwrap();
            let sys = system(4, 2, 7);
            let member = LinearPhMember {
                system: sys.clone(),
                x0: DVector::zeros(4),
            };
            let plan = LinearPhPlan::new(
                scheme.clone(),
                0.05,
                1.0,
                vec![member.clone()],
                &[Signal::Zero, Signal::Zero],
                1,
            )
            .unwrap();
            let ops = StepOperators::new(&plan, &member).unwrap();
            let delta = StageSolve::new(&scheme, None, 0.05, &sys)
                .unwrap()
                .step_operator();
            let planner = DMatrix::from_row_slice(4, ops.width(), &ops.delta);
            assert!((delta - planner).amax() < 1e-14);
        }
    }

    /// The workspace's pullback gives this module's bits: every entry of the four gradients,
    /// over sizes on both sides of nalgebra's small-product path (n ≤ 5 and n > 5), one to
    /// three stages, a partitioned (Lobatto IIIA–IIIB) scheme, and one workspace reused
    /// through every size; and the same error for a singular stage matrix.
    #[test]
    fn the_workspace_gives_the_pullbacks_bits() {
        use crate::linear_ph::pullback_workspace::PullbackWorkspace;
        let mut workspace = PullbackWorkspace::default();
        let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let cases = [
            (SchemeFamily::Gauss, 2, 2, 1, None),
            (SchemeFamily::Gauss, 5, 2, 2, None),
            (SchemeFamily::Gauss, 3, 1, 3, None),
            (SchemeFamily::Gauss, 7, 3, 2, None),
            (SchemeFamily::LobattoPair, 4, 2, 3, Some(2)),
            (SchemeFamily::Gauss, 5, 2, 2, None),
        ];
        for (index, (family, n, m, stages, split)) in cases.into_iter().enumerate() {
            let scheme = Scheme::new(family, stages).unwrap();
            let p = n + stages * m;
            let sys = system(n, m, 31 + index as u64);
            let cot = cotangents(n, m, p, 0.5);
            let h = 0.07;
            let expected = system_gradient(&scheme, split, h, &sys, &cot).unwrap();
            let row_major = |m: &DMatrix<f64>| m.transpose().as_slice().to_vec();
            let found = workspace
                .system_gradient(
                    &scheme,
                    split,
                    h,
                    &sys,
                    &row_major(&cot.delta),
                    &row_major(&cot.output),
                )
                .unwrap();
            for (name, a, b) in [
                ("J", &found.j, &expected.j),
                ("R", &found.r, &expected.r),
                ("Q", &found.q, &expected.q),
                ("B", &found.b, &expected.b),
            ] {
                assert_eq!(bits(a), bits(b), "case {index}: ∇_{name}");
            }
        }
        // L = −R Q = −4 and a = ½ (implicit midpoint), so 𝒢 = 1 + 2h = 0 at h = −½.
        let scheme = Scheme::new(SchemeFamily::Gauss, 1).unwrap();
        let sys = LinearPh::new(
            "singular",
            DMatrix::zeros(1, 1),
            DMatrix::from_element(1, 1, 1.0),
            DMatrix::from_element(1, 1, 4.0),
            DMatrix::from_element(1, 1, 1.0),
        )
        .unwrap();
        let h = -0.5;
        let cot = OperatorCotangents {
            delta: DMatrix::from_element(1, 2, 1.0),
            output: DMatrix::from_element(1, 1, 1.0),
        };
        let expected = system_gradient(&scheme, None, h, &sys, &cot).unwrap_err();
        let found = workspace
            .system_gradient(&scheme, None, h, &sys, &[1.0, 1.0], &[1.0])
            .unwrap_err();
        assert_eq!(found.to_string(), expected.to_string());
    }

    /// ⟨Ḡ, dΔ⟩ along a random direction of (J, R, Q, B) equals the gradient's pairing:
    /// central differences of the operator itself (no time stepping involved).
    #[test]
    fn the_pullback_is_the_adjoint_of_the_operator_derivative() {
        let (n, m) = (3, 2);
        let h = 0.1;
        for stages in 1..=4 {
            let scheme = Scheme::new(SchemeFamily::Gauss, stages).unwrap();
            let p = n + stages * m;
            let sys = system(n, m, 11 + stages as u64);
            let dir = system(n, m, 99 + stages as u64);
            let cot = cotangents(n, m, p, 0.0);
            let (g_delta, g_out) = (&cot.delta, &cot.output);
            let grad = system_gradient(&scheme, None, h, &sys, &cot).unwrap();
            let (dj, dr, dq, db) = (
                dir.j.clone(),
                symmetric_part(&dir.r),
                symmetric_part(&dir.q),
                dir.b.clone(),
            );
            let pairing = grad.j.dot(&dj) + grad.r.dot(&dr) + grad.q.dot(&dq) + grad.b.dot(&db);
            let value = |t: f64| {
                let moved = LinearPh {
                    j: &sys.j + &dj * t,
                    r: &sys.r + &dr * t,
                    q: &sys.q + &dq * t,
                    b: &sys.b + &db * t,
                };
                let delta = StageSolve::new(&scheme, None, h, &moved)
                    .unwrap()
                    .step_operator();
                let c = moved.b.transpose() * &moved.q;
                g_delta.dot(&delta) + g_out.dot(&c)
            };
            let eps = 1e-5;
            let fd = (value(eps) - value(-eps)) / (2.0 * eps);
            assert!(
                (fd - pairing).abs() <= 1e-8 * pairing.abs().max(1.0),
                "s = {stages}: finite differences {fd}, pullback {pairing}"
            );
        }
    }
}
