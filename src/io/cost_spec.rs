//! `[cost]` of gradient and identification problems: the quadrature of the output error
//! and the regularisation (λ/2) Σ_parts d(w_part, w_ref,part)².
//!
//! ```toml
//! [cost]
//! quadrature = "left"          # or "trapezoid"
//! regularization = 1e-3        # λ ≥ 0
//! regularized = ["Q"]          # the penalised parts (default: all)
//! q_distance = "log"           # ‖log(Q_ref^-½ Q Q_ref^-½)‖_F; default "euclidean", ‖Q − Q_ref‖_F
//! [cost.reference]             # w_ref: zero where omitted (Q: I under q_distance = "log")
//! Q = [[1.0, 0.0], [0.0, 1.0]]
//! ```

use nalgebra::{DMatrix, DVector};
use serde::Deserialize;

use crate::error::Result;
use crate::linear_ph::{Parameters, Quadrature};
use crate::linear_ph::{Parts, QDistance, Regularization};
use crate::model::validate::{check_skew, check_symmetric, matrix_from_rows, vector_from_slice};

type Rows = Vec<Vec<f64>>;

/// `[cost]`.
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CostSpec {
    /// λ ≥ 0 of the regularisation (λ/2) Σ_parts d(w_part, w_ref,part)².
    #[serde(default)]
    pub(crate) regularization: f64,
    /// The parts in the regularisation's norm (default: all).
    #[serde(default)]
    pub(crate) regularized: Option<Vec<String>>,
    /// The quadrature of ∫_0^T |y − d|² dt on the grid.
    #[serde(default)]
    pub(crate) quadrature: Quadrature,
    /// w_ref, the values the parts are drawn towards: zero where omitted (Q: I under
    /// q_distance = "log").
    #[serde(default)]
    pub(crate) reference: Option<ParametersSpec>,
    /// How Q's distance from Q_ref is measured: "euclidean" (default) or "log".
    #[serde(default)]
    pub(crate) q_distance: QDistance,
}

impl CostSpec {
    /// The regularisation for n states and m inputs.
    pub(crate) fn regularization(&self, n: usize, m: usize) -> Result<Regularization> {
        let mut reference = match &self.reference {
            Some(spec) => reference_parameters(spec, n, m)?,
            None => Parameters::zeros(n, m),
        };
        let q_omitted = self.reference.as_ref().is_none_or(|spec| spec.q.is_none());
        if self.q_distance == QDistance::Log && q_omitted {
            reference.q = DMatrix::identity(n, n);
        }
        let parts = match &self.regularized {
            Some(names) => Parts::parse("cost.regularized", names)?,
            None => Parts::ALL,
        };
        // Checked with the plan (`GradientPlan::new`).
        Ok(Regularization {
            weight: self.regularization,
            reference,
            parts,
            q_distance: self.q_distance,
        })
    }
}

/// `[cost.reference]`: w_ref, zero where omitted (Q: I under `q_distance = "log"`).
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ParametersSpec {
    /// J_ref, n × n rows, skew-symmetric.
    #[serde(rename = "J", default)]
    j: Option<Rows>,
    /// R_ref, n × n rows, symmetric.
    #[serde(rename = "R", default)]
    r: Option<Rows>,
    /// Q_ref, n × n rows, symmetric (positive definite under q_distance = "log").
    #[serde(rename = "Q", default)]
    q: Option<Rows>,
    /// B_ref, n × m rows.
    #[serde(rename = "B", default)]
    b: Option<Rows>,
    /// x0_ref, n entries.
    #[serde(default)]
    x0: Option<Vec<f64>>,
}

/// w_ref: shapes checked, J skew, R and Q symmetric (no definiteness: w_ref = 0 is allowed).
fn reference_parameters(spec: &ParametersSpec, n: usize, m: usize) -> Result<Parameters> {
    let why = format!("n = {n}, m = {m} from the candidate");
    let square = |name: &str, rows: &Option<Rows>| -> Result<DMatrix<f64>> {
        rows.as_ref().map_or(Ok(DMatrix::zeros(n, n)), |rows| {
            matrix_from_rows(&format!("cost.reference.{name}"), rows, n, n, &why)
        })
    };
    let j = square("J", &spec.j)?;
    let r = square("R", &spec.r)?;
    let q = square("Q", &spec.q)?;
    check_skew("cost.reference.J", &j)?;
    check_symmetric("cost.reference.R", &r)?;
    check_symmetric("cost.reference.Q", &q)?;
    let b = spec.b.as_ref().map_or(Ok(DMatrix::zeros(n, m)), |rows| {
        matrix_from_rows("cost.reference.B", rows, n, m, &why)
    })?;
    let x0 = spec.x0.as_ref().map_or(Ok(DVector::zeros(n)), |x0| {
        vector_from_slice("cost.reference.x0", x0, n, &why)
    })?;
    Ok(Parameters { j, r, q, b, x0 })
}
