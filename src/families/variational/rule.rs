//! Discrete Lagrangians: rules that turn L(z, t) over the jet z = (q, q̇[, q̈]) into
//! L_d(q_k, …, q_{k+r}) on r + 1 consecutive grid points, each a weighted sum of L at jets
//! that are linear in the points,
//!
//! ```text
//!   L_d = h Σ_e w_e L(z_e, t_k + τ_e h),   z_e = Σ_i a_e[i] ⊗ q_{k+i},
//! ```
//!
//! where a_e\[i\] holds one coefficient per jet block (q, q̇, q̈). Then, exactly,
//!
//! ```text
//!   ∂L_d/∂q_{k+i} = h Σ_e w_e Σ_b a_e[i][b] ∇_b L(z_e),
//!   ∂²L_d/∂q_{k+i}∂q_{k+j} = h Σ_e w_e Σ_{b,b'} a_e[i][b] a_e[j][b'] ∇²_{bb'} L(z_e).
//! ```
//!
//! The rules:
//!
//! - `midpoint` (order 1, default): L_d = h L((q₀ + q₁)/2, (q₁ − q₀)/h, t_k + h/2);
//! - `trapezoid` (order 1): L_d = (h/2) [L(q₀, (q₁ − q₀)/h, t_k) + L(q₁, (q₁ − q₀)/h, t_{k+1})];
//! - `central` (order 2, default): L_d = h L(q₁, (q₂ − q₀)/2h, (q₂ − 2q₁ + q₀)/h², t_{k+1}).
//!
//! Constraints that use derivatives are imposed once per discrete Lagrangian at the rule's
//! constraint jet (the midpoint jet for both order-1 rules, the central jet for order 2).

use serde::Deserialize;

/// A rule as named in `[scheme] rule`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RuleName {
    /// Order 1: L at the midpoint and the difference quotient.
    Midpoint,
    /// Order 1: the average of L at both ends with the difference quotient.
    Trapezoid,
    /// Order 2: L at the middle point with central differences.
    Central,
}

impl RuleName {
    pub fn name(self) -> &'static str {
        match self {
            RuleName::Midpoint => "midpoint",
            RuleName::Trapezoid => "trapezoid",
            RuleName::Central => "central",
        }
    }

    /// The order of Lagrangian the rule discretizes.
    pub fn lagrangian_order(self) -> usize {
        match self {
            RuleName::Midpoint | RuleName::Trapezoid => 1,
            RuleName::Central => 2,
        }
    }

    /// The default rule for a Lagrangian of `order`.
    pub fn default_for(order: usize) -> RuleName {
        if order == 2 {
            RuleName::Central
        } else {
            RuleName::Midpoint
        }
    }
}

/// One evaluation of L in a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// w_e.
    pub weight: f64,
    /// τ_e: the time is t_k + τ_e h.
    pub time: f64,
    /// a_e\[i\]\[b\]: point i of the window, jet block b.
    pub coefficients: Vec<Vec<f64>>,
}

/// A rule at a step size h.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscreteRule {
    pub name: RuleName,
    /// r: the window holds r + 1 points.
    pub order: usize,
    pub h: f64,
    pub evaluations: Vec<Evaluation>,
    /// The jet where derivative constraints are imposed.
    pub constraint_point: Evaluation,
}

impl DiscreteRule {
    pub fn new(name: RuleName, h: f64) -> Self {
        let midpoint = Evaluation {
            weight: 1.0,
            time: 0.5,
            coefficients: vec![vec![0.5, -1.0 / h], vec![0.5, 1.0 / h]],
        };
        let (evaluations, constraint_point) = match name {
            RuleName::Midpoint => (vec![midpoint.clone()], midpoint),
            RuleName::Trapezoid => (
                vec![
                    Evaluation {
                        weight: 0.5,
                        time: 0.0,
                        coefficients: vec![vec![1.0, -1.0 / h], vec![0.0, 1.0 / h]],
                    },
                    Evaluation {
                        weight: 0.5,
                        time: 1.0,
                        coefficients: vec![vec![0.0, -1.0 / h], vec![1.0, 1.0 / h]],
                    },
                ],
                midpoint,
            ),
            RuleName::Central => {
                let central = Evaluation {
                    weight: 1.0,
                    time: 1.0,
                    coefficients: vec![
                        vec![0.0, -0.5 / h, 1.0 / (h * h)],
                        vec![1.0, 0.0, -2.0 / (h * h)],
                        vec![0.0, 0.5 / h, 1.0 / (h * h)],
                    ],
                };
                (vec![central.clone()], central)
            }
        };
        DiscreteRule {
            name,
            order: name.lagrangian_order(),
            h,
            evaluations,
            constraint_point,
        }
    }

    /// The jet z = Σ_i a\[i\] ⊗ q_i of `evaluation` over the window's points q_i = base +
    /// offsets\[i\] (each of d coordinates), written into `z` ((r + 1)·d values), as
    ///
    /// ```text
    ///   z_b = (Σ_i a[i][b]) base + Σ_i a[i][b] offsets[i],
    /// ```
    ///
    /// where Σ_i a\[i\]\[b\] is 1 for the position block and exactly 0 for the derivative
    /// blocks: differences of the points are formed from the offsets, so a marcher that
    /// keeps the increments q_{k+1} − q_k as its unknowns loses no digits to cancellation
    /// in the difference quotients.
    pub fn jet(evaluation: &Evaluation, base: &[f64], offsets: &[&[f64]], z: &mut [f64]) {
        let d = base.len();
        let blocks = evaluation.coefficients[0].len();
        for b in 0..blocks {
            let sum: f64 = evaluation.coefficients.iter().map(|a| a[b]).sum();
            for c in 0..d {
                z[b * d + c] = sum * base[c];
            }
        }
        for (i, q) in offsets.iter().enumerate() {
            for (b, &a) in evaluation.coefficients[i].iter().enumerate() {
                if a != 0.0 {
                    for c in 0..d {
                        z[b * d + c] += a * q[c];
                    }
                }
            }
        }
    }
}
