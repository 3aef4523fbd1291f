//! The plan of a gradient evaluation: K candidate models against one data set.
//!
//! # Conventions
//!
//! - Grid: t_k = k h, k = 0…N, N = T / h. A candidate w = (J, R, Q, B, x0) is advanced by the
//!   collocation step every simulation uses (the planner's operators, inputs sampled at the
//!   stage times t_k + c_i h): x_{k+1} = x_k + Δ [x_k; U_k].
//! - Outputs y_k = C x_k with C = Bᵀ Q at the grid points (the model's output map), compared
//!   with data d_k given at the same N + 1 points.
//! - Cost 𝒥(w) = ½ Σ_{k=0}^{N} ω_k |y_k − d_k|² + (λ/2) ‖w − w_ref‖², the norm the
//!   Frobenius norm summed over J, R, Q, B and x0 (for Q optionally the affine-invariant
//!   distance, [`Regularization`]), with quadrature weights ω_k of
//!   ∫_0^T dt: `left` (ω_k = h for k < N, ω_N = 0: ½ h Σ_{k<N}, the left-endpoint rule) or
//!   `trapezoid` (ω_0 = ω_N = h/2, h otherwise).
//!
//! The kernels see, per step k < N, the stream values [U_k (s·m), d_k (m), ω_k], and the
//! terminal pair (d_N, ω_N) among the constants.

use nalgebra::{DMatrix, DVector};

use super::ensemble::LinearPhEnsemble;
use super::plan::{LinearPhMember, LinearPhPlan};
use crate::error::{Error, Result};
use crate::linear_ph::regularization::Regularization;
use crate::plan::grid::StepGrid;
use crate::plan::record::{RecordSpec, Recording};
use crate::plan::stream::SharedStream;
use crate::tableau::Scheme;

/// The quadrature of ∫_0^T |y − d|² dt on the grid.
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
pub enum Quadrature {
    /// ω_k = h for k < N, ω_N = 0.
    #[default]
    Left,
    /// ω_0 = ω_N = h/2, ω_k = h otherwise.
    Trapezoid,
}

impl Quadrature {
    /// ω_k on a grid of `steps` steps of size h.
    pub fn weight(self, k: usize, steps: usize, h: f64) -> f64 {
        match self {
            Quadrature::Left => {
                if k < steps {
                    h
                } else {
                    0.0
                }
            }
            Quadrature::Trapezoid => {
                if k == 0 || k == steps {
                    0.5 * h
                } else {
                    h
                }
            }
        }
    }
}

/// The parameters w = (J, R, Q, B, x0) as plain matrices: a reference w_ref, a gradient.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameters {
    pub j: DMatrix<f64>,
    pub r: DMatrix<f64>,
    pub q: DMatrix<f64>,
    pub b: DMatrix<f64>,
    pub x0: DVector<f64>,
}

impl Parameters {
    /// All zeros for n states and m inputs.
    pub fn zeros(n: usize, m: usize) -> Self {
        Parameters {
            j: DMatrix::zeros(n, n),
            r: DMatrix::zeros(n, n),
            q: DMatrix::zeros(n, n),
            b: DMatrix::zeros(n, m),
            x0: DVector::zeros(n),
        }
    }

    /// ⟨self, other⟩ = Σ over the five parts of the Frobenius inner products.
    pub fn dot(&self, other: &Parameters) -> f64 {
        self.j.dot(&other.j)
            + self.r.dot(&other.r)
            + self.q.dot(&other.q)
            + self.b.dot(&other.b)
            + self.x0.dot(&other.x0)
    }

    /// The five parts by name, in the order J, R, Q, B, x0.
    pub fn parts(&self) -> [(&'static str, DMatrix<f64>); 5] {
        [
            ("J", self.j.clone()),
            ("R", self.r.clone()),
            ("Q", self.q.clone()),
            ("B", self.b.clone()),
            (
                "x0",
                DMatrix::from_column_slice(self.x0.len(), 1, self.x0.as_slice()),
            ),
        ]
    }
}

/// Measured outputs d_k at t_k = k h, k = 0…N.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputData {
    /// m, the output channels.
    pub channels: usize,
    /// (N + 1) × m, row-major.
    pub values: Vec<f64>,
}

impl OutputData {
    /// d_k.
    pub fn row(&self, k: usize) -> &[f64] {
        &self.values[k * self.channels..(k + 1) * self.channels]
    }

    /// Rows N + 1.
    pub fn rows(&self) -> usize {
        self.values.len().checked_div(self.channels).unwrap_or(0)
    }
}

/// Everything a backend needs to evaluate cost and gradient of every candidate.
#[derive(Debug, Clone)]
pub struct GradientPlan {
    /// The candidates as a linear-PH ensemble under the scheme, grid and stage inputs of
    /// the problem (recording the final state only).
    pub model: LinearPhPlan,
    pub data: OutputData,
    pub quadrature: Quadrature,
    /// Steps between checkpoints of the forward sweep (1 keeps every state); `None` picks
    /// ⌈√N⌉ within the kernels' limits.
    pub checkpoint_every: Option<usize>,
    pub regularization: Regularization,
    /// Per step k < N: [U_k, d_k, ω_k].
    stream: SharedStream,
    records: RecordSpec,
}

impl GradientPlan {
    /// Checks the data against the model (rows N + 1, m channels, finite values) and
    /// the scheme (collocation with one stage matrix: the gradient's pullback does not
    /// project onto the Lobatto pair's canonical form).
    pub fn new(
        model: LinearPhPlan,
        data: OutputData,
        quadrature: Quadrature,
        checkpoint_every: Option<usize>,
        regularization: Regularization,
    ) -> Result<Self> {
        check_scheme(&model.scheme)?;
        let (steps, m, h) = (model.grid.steps, model.inputs_count(), model.grid.h);
        if m == 0 {
            return Err(Error::invalid(
                "input",
                "a gradient needs at least one input: the outputs y = Bᵀ Q x compared with the data have one channel per input",
            ));
        }
        if data.channels != m {
            return Err(Error::invalid(
                "data",
                format!(
                    "has {} output channel(s), the model has m = {m} (one per input)",
                    data.channels
                ),
            ));
        }
        if data.rows() != steps + 1 {
            return Err(Error::invalid(
                "data",
                format!(
                    "has {} sample(s), the grid t_k = k h for k = 0…N has N + 1 = {} (h = {h}, N = {steps})",
                    data.rows(),
                    steps + 1
                ),
            ));
        }
        if let Some(at) = data.values.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "data",
                format!(
                    "y[{}] at t = {} (row {}) is {}",
                    at % m,
                    (at / m) as f64 * h,
                    at / m,
                    data.values[at]
                ),
            ));
        }
        if let Some(0) = checkpoint_every {
            return Err(Error::invalid(
                "gradient.checkpoint_every",
                "must be ≥ 1 (1 keeps every state), got 0",
            ));
        }
        regularization.check()?;
        model.check_inputs()?;
        let model = model.with_recording(Recording::FINAL_STATE);
        let width = model.inputs.width();
        let values_per_step = width + m + 1;
        let capacity = steps.checked_mul(values_per_step).ok_or_else(|| {
            Error::invalid(
                "scheme.t_end",
                format!("N = {steps} steps of {values_per_step} stream values each overflow the address space"),
            )
        })?;
        let mut values = Vec::with_capacity(capacity);
        let mut scratch = Vec::new();
        for k in 0..steps {
            values.extend_from_slice(model.inputs.step(k, &mut scratch));
            values.extend_from_slice(data.row(k));
            values.push(quadrature.weight(k, steps, h));
        }
        let stream = SharedStream::tabulated(1, width + m + 1, h, values);
        let n = model.states();
        let s = model.scheme.stages;
        let records = RecordSpec {
            state_width: raw_width(n, m, s),
            trajectory: false,
            channels: Vec::new(),
            totals: Vec::new(),
            totals_group: "cost",
        };
        Ok(GradientPlan {
            model,
            data,
            quadrature,
            checkpoint_every,
            regularization,
            stream,
            records,
        })
    }

    /// The same problem (data, cost, scheme, grid, inputs) for other candidates, which must
    /// have this plan's n and m: how an optimiser evaluates its trial points in one batch.
    pub fn with_candidates(&self, candidates: Vec<LinearPhMember>) -> Result<GradientPlan> {
        let (n, m) = (self.model.states(), self.model.inputs_count());
        if candidates.is_empty() {
            return Err(Error::invalid("candidates", "has no members"));
        }
        if let Some((index, c)) = candidates
            .iter()
            .enumerate()
            .find(|(_, c)| c.system.states() != n || c.system.inputs() != m || c.x0.len() != n)
        {
            return Err(Error::invalid(
                format!("candidates[{index}]"),
                format!(
                    "has n = {}, m = {}, x0 of length {}; the problem has n = {n}, m = {m}",
                    c.system.states(),
                    c.system.inputs(),
                    c.x0.len()
                ),
            ));
        }
        let mut plan = self.clone();
        plan.model.ensemble = LinearPhEnsemble::List(candidates);
        Ok(plan)
    }

    pub fn grid(&self) -> &StepGrid {
        &self.model.grid
    }

    /// Per step k < N: [U_k (s·m), d_k (m), ω_k].
    pub fn stream(&self) -> &SharedStream {
        &self.stream
    }

    /// (d_N, ω_N).
    pub fn terminal(&self) -> (&[f64], f64) {
        let steps = self.grid().steps;
        (
            self.data.row(steps),
            self.quadrature.weight(steps, steps, self.grid().h),
        )
    }

    /// What a member's raw result holds (see [`raw_width`]).
    pub fn record_spec(&self) -> &RecordSpec {
        &self.records
    }
}

/// Refuses partitioned schemes: gradients support gauss and lobatto-iiia, whose step has
/// one stage matrix; the Lobatto pair's canonical form (fixed J, block-diagonal R and Q) is
/// not a parameter space the gradient projects onto.
pub fn check_scheme(scheme: &Scheme) -> Result<()> {
    if scheme.is_partitioned() {
        return Err(Error::invalid(
            "scheme.family",
            format!(
                "is {}; gradients support gauss and lobatto-iiia: the lobatto-pair's canonical form (fixed J, block-diagonal R and Q) is not a parameter space the gradient projects onto",
                scheme.family.name()
            ),
        ));
    }
    Ok(())
}

/// Width of a candidate's raw result: [data cost, λ_0 (n), Ḡ_Δ (n·p), Ḡ_C (m·n)] with
/// p = n + s m, Ḡ_Δ = Σ_k λ_{k+1} [x_k; U_k]ᵀ and Ḡ_C = Σ_k ω_k (C x_k − d_k) x_kᵀ, both
/// row-major.
pub fn raw_width(n: usize, m: usize, s: usize) -> usize {
    1 + n + n * (n + s * m) + m * n
}
