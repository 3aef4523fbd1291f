//! The regularisation term of a gradient problem's cost: (λ/2) Σ over the penalised parts
//! of the squared distance of each part from its reference value.

use super::parts::Parts;
use crate::error::{Error, Result};
use crate::linear_ph::Parameters;
use crate::model::validate::{STRUCTURE_TOLERANCE, smallest_eigenvalue};

/// How the distance of Q from Q_ref is measured.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum QDistance {
    /// ‖Q − Q_ref‖_F, as for every other part.
    #[default]
    Euclidean,
    /// ‖log(Q_ref^{−½} Q Q_ref^{−½})‖_F, the affine-invariant (Riemannian) distance on the
    /// symmetric positive definite matrices: the penalty (λ/2) ‖log(Q_ref^{−½} Q Q_ref^{−½})‖²_F,
    /// with Q_ref = I the seed's (λ/2) ‖log Q‖²_F. Invariant under Q ↦ A Q Aᵀ,
    /// Q_ref ↦ A Q_ref Aᵀ, and infinite at the cone's boundary.
    Log,
}

/// The regularisation (λ/2) Σ_parts d(w_part, w_ref,part)², d the Frobenius distance (for Q
/// the one chosen by `q_distance`).
#[derive(Debug, Clone, PartialEq)]
pub struct Regularization {
    /// λ ≥ 0.
    pub weight: f64,
    pub reference: Parameters,
    /// The parts in the norm (all by default).
    pub parts: Parts,
    pub q_distance: QDistance,
}

impl Regularization {
    /// No regularisation (λ = 0).
    pub fn none(n: usize, m: usize) -> Self {
        Regularization {
            weight: 0.0,
            reference: Parameters::zeros(n, m),
            parts: Parts::ALL,
            q_distance: QDistance::Euclidean,
        }
    }

    /// λ finite and ≥ 0; under the log distance Q penalised and Q_ref positive definite
    /// (smallest eigenvalue above the structure tolerance times its largest entry).
    pub fn check(&self) -> Result<()> {
        let weight = self.weight;
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(Error::invalid(
                "cost.regularization",
                format!("must be a finite number ≥ 0, got {weight}"),
            ));
        }
        if self.q_distance == QDistance::Log {
            if !self.parts.q {
                return Err(Error::invalid(
                    "cost.q_distance",
                    "is \"log\", but Q is not among the penalised parts (cost.regularized): add \"Q\" or drop q_distance",
                ));
            }
            let q_ref = &self.reference.q;
            let lambda = smallest_eigenvalue(q_ref);
            let scale = q_ref.amax();
            if !(q_ref.iter().all(|v| v.is_finite()) && lambda > STRUCTURE_TOLERANCE * scale) {
                return Err(Error::invalid(
                    "cost.reference.Q",
                    format!(
                        "must be positive definite for cost.q_distance = \"log\" (the distance is measured from it; omitted, it is I): smallest eigenvalue {lambda:.3e}, largest entry {scale:.3e}"
                    ),
                ));
            }
        }
        Ok(())
    }
}
