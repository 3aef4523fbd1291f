//! The tables of the energy-preserving projection of s-stage Gauss collocation (Hairer
//! 2010; Cohen & Hairer 2011), computed once per plan from the definitions in double-double
//! and rounded to f64 once.
//!
//! On a step [t_k, t_k + h] the collocation polynomial of degree s is
//! x(τ) = x_k + Σ_j L_j(τ) Z_j (τ ∈ [0, 1], Z_j = x(c_j) − x_k), with L_j the polynomial of
//! degree s with L_j(0) = 0 and L_j(c_m) = δ_jm, i.e. L_j(τ) = τ ℓ_j(τ) / c_j (ℓ_j the
//! Lagrange basis on the Gauss nodes c). Stage j's effort is the projection
//!
//! ```text
//!   ē_j = (1/b_j) ∫₀¹ ℓ_j(τ) ∇H(x(τ)) dτ ≈ Σ_k W_kj ∇H(x(σ_k)),   W_kj = w_k ℓ_j(σ_k) / b_j,
//! ```
//!
//! with the q-node Gauss–Legendre rule (σ_k, w_k) on [0, 1]. The rule integrates
//! polynomials of degree ≤ 2q − 1 exactly; for H a polynomial of degree d the integrand
//! ℓ_j ∇H(x(τ)) has degree (s − 1) + (d − 1) s = d s − 1, so the projection is exact for
//! d ≤ ⌊2q / s⌋. The default q = s(s + 1) is exact for d ≤ 2s + 2. With q = s the nodes are
//! the c's, W is the identity and ē_j = ∇H(x(c_j)): Gauss collocation.

use super::polynomial::{Dd, LagrangeBasis, UnitQuadrature};
use crate::error::{Error, Result};

/// The largest number of quadrature nodes harbor takes: beyond it a rule is no more exact
/// for any H harbor can integrate in f64, only slower.
pub const MAX_QUADRATURE: usize = 128;

/// The energy-preserving projection's tables for s stages and a q-node rule; `k × s`
/// tables are row-major (row k = quadrature node σ_k, column j = stage).
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectionRule {
    pub stages: usize,
    pub quadrature: usize,
    /// Quadrature nodes σ_k ∈ (0, 1), increasing.
    pub nodes: Vec<f64>,
    /// Quadrature weights w_k, Σ_k w_k = 1.
    pub weights: Vec<f64>,
    /// ℓ_j(σ_k), q × s.
    pub lagrange: Vec<f64>,
    /// L_j(σ_k) = σ_k ℓ_j(σ_k) / c_j, q × s: x(σ_k) = x_k + Σ_j L_j(σ_k) Z_j.
    pub lift: Vec<f64>,
    /// W_kj = w_k ℓ_j(σ_k) / b_j, q × s: ē_j = Σ_k W_kj ∇H(x(σ_k)).
    pub projection: Vec<f64>,
}

impl ProjectionRule {
    /// The default number of nodes for s stages: q = s(s + 1), exact for polynomial H of
    /// degree ≤ 2s + 2.
    pub fn default_quadrature(stages: usize) -> usize {
        stages * (stages + 1)
    }

    /// The largest degree d of a polynomial H whose projections a q-node rule computes
    /// exactly with s stages: d s − 1 ≤ 2q − 1, i.e. d = ⌊2q / s⌋.
    pub fn exact_degree(stages: usize, quadrature: usize) -> usize {
        2 * quadrature / stages.max(1)
    }

    /// The tables for `stages` Gauss nodes and a `quadrature`-node rule; `quadrature` must
    /// lie in s ..= [`MAX_QUADRATURE`] (fewer than s nodes cannot give s independent
    /// projections). Errors name `scheme.quadrature` and `scheme.stages`.
    ///
    /// ```
    /// use harbor::tableau::ProjectionRule;
    ///
    /// // s = 1: ℓ₁ = 1, b₁ = 1, c₁ = ½, so W_k1 = w_k and L₁(σ) = 2σ.
    /// let rule = ProjectionRule::new(1, 2)?;
    /// assert_eq!(rule.projection, rule.weights);
    /// assert!((rule.lift[0] - 2.0 * rule.nodes[0]).abs() < 1e-16);
    /// assert_eq!(ProjectionRule::exact_degree(1, 2), 4);
    ///
    /// let too_few = ProjectionRule::new(3, 2).unwrap_err().to_string();
    /// assert!(too_few.starts_with("scheme.quadrature: must be at least s = 3"));
    /// # Ok::<(), harbor::Error>(())
    /// ```
    pub fn new(stages: usize, quadrature: usize) -> Result<Self> {
        let range = super::Family::Gauss.stage_range();
        if !range.contains(&stages) {
            return Err(Error::invalid(
                "scheme.stages",
                format!(
                    "energy-preserving takes {} to {} stages, got {stages}",
                    range.start(),
                    range.end()
                ),
            ));
        }
        if quadrature < stages {
            return Err(Error::invalid(
                "scheme.quadrature",
                format!(
                    "must be at least s = {stages} nodes (fewer cannot give {stages} independent projections; q = s is Gauss collocation), got {quadrature}"
                ),
            ));
        }
        if quadrature > MAX_QUADRATURE {
            return Err(Error::invalid(
                "scheme.quadrature",
                format!(
                    "must be at most {MAX_QUADRATURE} nodes, got {quadrature} (the default s(s + 1) = {} is exact for polynomial H of degree ≤ {})",
                    Self::default_quadrature(stages),
                    2 * stages + 2
                ),
            ));
        }
        let gauss = UnitQuadrature::gauss(stages);
        let (c, b) = (&gauss.nodes, &gauss.weights);
        let basis = LagrangeBasis::new(c);
        let rule = UnitQuadrature::gauss(quadrature);
        let mut lagrange = Vec::with_capacity(quadrature * stages);
        let mut lift = Vec::with_capacity(quadrature * stages);
        let mut projection = Vec::with_capacity(quadrature * stages);
        for (&sigma, &w) in rule.nodes.iter().zip(&rule.weights) {
            for j in 0..stages {
                let ell: Dd = basis.eval(j, sigma);
                lagrange.push(f64::from(ell));
                lift.push(f64::from(sigma * ell / c[j]));
                projection.push(f64::from(w * ell / b[j]));
            }
        }
        let (nodes, weights) = rule.to_f64();
        Ok(ProjectionRule {
            stages,
            quadrature,
            nodes,
            weights,
            lagrange,
            lift,
            projection,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tableau::Tableau;

    /// Σ_k W_kj σ_k^m against (1/b_j) ∫₀¹ ℓ_j(τ) τ^m dτ in closed form for s = 2, where
    /// c = ½ ∓ √3/6, b = ½ and ℓ_1(τ) = (τ − c₂)/(c₁ − c₂): the integral is
    /// (1/(m + 2) − c₂/(m + 1)) / (c₁ − c₂). Exact for m + 1 ≤ 2q − 1, not beyond.
    #[test]
    fn the_projection_integrates_to_its_degree_and_no_further() {
        let r3 = 3f64.sqrt() / 6.0;
        let (c1, c2) = (0.5 - r3, 0.5 + r3);
        for q in [2, 3, 5] {
            let rule = ProjectionRule::new(2, q).unwrap();
            for m in 0..=2 * q {
                let quadrature: f64 = (0..q)
                    .map(|k| rule.projection[k * 2] * rule.nodes[k].powi(m as i32))
                    .sum();
                let mf = m as f64;
                let exact = (1.0 / (mf + 2.0) - c2 / (mf + 1.0)) / (c1 - c2) / 0.5;
                let error = (quadrature - exact).abs();
                if m + 1 < 2 * q {
                    assert!(error <= 4e-16, "q = {q}, m = {m}: error {error:e}");
                } else {
                    assert!(error > 1e-9, "q = {q}, m = {m}: exact beyond the degree?");
                }
            }
        }
    }

    /// L_j interpolates every τ^m, 1 ≤ m ≤ s, vanishing at 0: Σ_j L_j(σ) c_j^m = σ^m.
    #[test]
    fn the_lift_interpolates_through_zero_and_the_stage_points() {
        for s in 1..=8 {
            let tableau = Tableau::gauss(s).unwrap();
            let rule = ProjectionRule::new(s, ProjectionRule::default_quadrature(s)).unwrap();
            for (k, sigma) in rule.nodes.iter().enumerate() {
                for m in 1..=s as i32 {
                    let sum: f64 = (0..s)
                        .map(|j| rule.lift[k * s + j] * tableau.c[j].powi(m))
                        .sum();
                    assert!((sum - sigma.powi(m)).abs() <= 1e-13, "s = {s}, m = {m}");
                }
            }
        }
    }

    /// With q = s the nodes are the collocation nodes: W and L are the identity, and the
    /// rule's nodes and weights are the tableau's c and b.
    #[test]
    fn q_equal_to_s_is_gauss_collocation() {
        for s in 1..=8 {
            let tableau = Tableau::gauss(s).unwrap();
            let rule = ProjectionRule::new(s, s).unwrap();
            for k in 0..s {
                assert!((rule.nodes[k] - tableau.c[k]).abs() <= 1e-16, "s = {s}");
                assert!((rule.weights[k] - tableau.b[k]).abs() <= 1e-16, "s = {s}");
                for j in 0..s {
                    let delta = if j == k { 1.0 } else { 0.0 };
                    assert!((rule.projection[k * s + j] - delta).abs() <= 1e-14);
                    assert!((rule.lift[k * s + j] - delta).abs() <= 1e-14);
                }
            }
        }
    }

    #[test]
    fn the_largest_rule_is_a_rule() {
        let rule = ProjectionRule::new(8, MAX_QUADRATURE).unwrap();
        let total: f64 = rule.weights.iter().sum();
        assert!((total - 1.0).abs() <= 1e-14, "Σ w = {total}");
        // ∫₀¹ σ^(2q−1) = 1/(2q).
        let top: f64 = rule
            .nodes
            .iter()
            .zip(&rule.weights)
            .map(|(x, w)| w * x.powi(2 * MAX_QUADRATURE as i32 - 1))
            .sum();
        assert!(
            (top * 2.0 * MAX_QUADRATURE as f64 - 1.0).abs() <= 1e-12,
            "{top:e}"
        );
        assert!(rule.nodes.windows(2).all(|p| p[0] < p[1]));
    }

    #[test]
    fn bad_counts_are_refused_naming_the_key() {
        let zero = ProjectionRule::new(2, 0).unwrap_err().to_string();
        assert!(
            zero.starts_with("scheme.quadrature: must be at least s = 2"),
            "{zero}"
        );
        assert!(zero.ends_with("got 0"), "{zero}");
        let many = ProjectionRule::new(2, 1000).unwrap_err().to_string();
        assert!(many.contains("at most 128 nodes, got 1000"), "{many}");
        let stages = ProjectionRule::new(9, 90).unwrap_err().to_string();
        assert!(stages.starts_with("scheme.stages: "), "{stages}");
        assert_eq!(ProjectionRule::default_quadrature(2), 6);
        assert_eq!(ProjectionRule::exact_degree(2, 6), 6);
        assert_eq!(ProjectionRule::exact_degree(3, 12), 8);
    }
}
