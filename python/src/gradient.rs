//! `harbor.gradient`: cost and exact discrete-adjoint gradient of one candidate model or a
//! batch against input/output data, as the CLI's `harbor gradient` computes them (the same
//! problem file, checks, backend and sums), returned as NumPy arrays.

use std::path::PathBuf;

use harbor::identify::{Evaluation, evaluate_reporting};
use harbor::io::gradient_spec::GradientConfig;
use harbor::kernels::Family;
use nalgebra::DMatrix;
use pyo3::prelude::*;

use crate::arrays::{matrix, shaped, vector};
use crate::config_source::ConfigSource;
use crate::device_choice::DeviceChoice;
use crate::errors::{from_harbor, guarded};
use crate::watcher::Watcher;

/// Cost and gradient of the candidate(s) (gradient.json's content as arrays): for a single
/// `[candidate]` the cost is a float and each gradient a matrix (J, R, Q: n × n, B: n × m,
/// x0: n); for a batch (`[candidates]`) the cost is an array over the candidates and every
/// gradient has a leading candidate axis.
#[pyclass(frozen, get_all, module = "harbor")]
pub struct GradientResult {
    /// Whether the problem was a batch of candidates (`[candidates]`).
    batch: bool,
    /// 𝒥(w): a float, or (candidates,) for a batch.
    cost: Py<PyAny>,
    /// ∇_J 𝒥 (skew): (n, n), or (candidates, n, n).
    #[pyo3(name = "J")]
    j: Py<PyAny>,
    /// ∇_R 𝒥 (symmetric): (n, n), or (candidates, n, n).
    #[pyo3(name = "R")]
    r: Py<PyAny>,
    /// ∇_Q 𝒥 (symmetric): (n, n), or (candidates, n, n).
    #[pyo3(name = "Q")]
    q: Py<PyAny>,
    /// ∇_B 𝒥: (n, m), or (candidates, n, m).
    #[pyo3(name = "B")]
    b: Py<PyAny>,
    /// ∇_x0 𝒥: (n,), or (candidates, n).
    x0: Py<PyAny>,
    /// The backend's label.
    backend: String,
}

#[pymethods]
impl GradientResult {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "GradientResult(batch={}, cost={}, J={}, backend={:?})",
            if self.batch { "True" } else { "False" },
            self.cost.bind(py).repr()?,
            self.j.bind(py).getattr("shape")?.repr()?,
            self.backend
        ))
    }
}

/// Cost and gradient of the candidate(s) of a gradient problem (module docs).
#[pyfunction]
#[pyo3(signature = (
    problem, *, backend = "auto", overrides = None, adapter = None, precision = None,
    memory_budget = None, work_limit = None, progress = None, base_dir = None
))]
#[allow(clippy::too_many_arguments)]
pub fn gradient(
    py: Python<'_>,
    problem: &Bound<'_, PyAny>,
    backend: &str,
    overrides: Option<&Bound<'_, PyAny>>,
    adapter: Option<String>,
    precision: Option<&str>,
    memory_budget: Option<&Bound<'_, PyAny>>,
    work_limit: Option<f64>,
    progress: Option<&Bound<'_, PyAny>>,
    base_dir: Option<PathBuf>,
) -> PyResult<GradientResult> {
    guarded(|| {
        let mut source = ConfigSource::read(problem, base_dir)?;
        source.apply_overrides(overrides)?;
        let choice = DeviceChoice::from_arguments(backend, adapter, precision, memory_budget)?;
        let watcher = Watcher::new(py, progress)?;
        let outcome = py.detach(|| -> harbor::Result<(Vec<Evaluation>, bool, String)> {
            let mut config =
                GradientConfig::from_table(source.table, &source.origin, source.base_dir)?;
            if let Some(limit) = work_limit {
                config = config.with_work_limit("work_limit", limit)?;
            }
            let problem = config.problem(&choice.budget)?;
            let plan = &problem.plan;
            let backend = choice.open_for(plan)?;
            let total = (plan.member_count() as u64).saturating_mul(plan.grid().steps as u64);
            let evaluations = evaluate_reporting(&backend, plan, &choice.budget, &mut |done| {
                watcher.report("gradient", done, total, None)
            })?;
            Ok((evaluations, problem.batch, backend.label()))
        });
        if let Some(stopped) = watcher.finish(py) {
            return Err(stopped);
        }
        let (evaluations, batch, backend) = outcome.map_err(from_harbor)?;
        result(py, &evaluations, batch, backend)
    })
}

/// The arrays of `evaluations`: one candidate's, or every candidate's stacked.
fn result(
    py: Python<'_>,
    evaluations: &[Evaluation],
    batch: bool,
    backend: String,
) -> PyResult<GradientResult> {
    if !batch && let [only] = evaluations {
        let g = &only.gradient;
        return Ok(GradientResult {
            batch,
            cost: only.cost.into_pyobject(py)?.into_any().unbind(),
            j: matrix(py, &g.j)?,
            r: matrix(py, &g.r)?,
            q: matrix(py, &g.q)?,
            b: matrix(py, &g.b)?,
            x0: vector(py, &g.x0)?,
            backend,
        });
    }
    let count = evaluations.len();
    let stacked = |part: &dyn Fn(&Evaluation) -> &DMatrix<f64>| -> PyResult<Py<PyAny>> {
        let (rows, columns) = evaluations.first().map_or((0, 0), |e| part(e).shape());
        let values = evaluations
            .iter()
            .flat_map(|e| {
                part(e)
                    .row_iter()
                    .flat_map(|row| row.iter().copied().collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            })
            .collect();
        shaped(py, vec![count, rows, columns], values)
    };
    let n = evaluations.first().map_or(0, |e| e.gradient.x0.len());
    Ok(GradientResult {
        batch,
        cost: shaped(
            py,
            vec![count],
            evaluations.iter().map(|e| e.cost).collect(),
        )?,
        j: stacked(&|e| &e.gradient.j)?,
        r: stacked(&|e| &e.gradient.r)?,
        q: stacked(&|e| &e.gradient.q)?,
        b: stacked(&|e| &e.gradient.b)?,
        x0: shaped(
            py,
            vec![count, n],
            evaluations
                .iter()
                .flat_map(|e| e.gradient.x0.iter().copied())
                .collect(),
        )?,
        backend,
    })
}
