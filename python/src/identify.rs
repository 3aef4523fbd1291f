//! `harbor.identify`: a port-Hamiltonian model (J, R, Q, B, x0) fitted to input/output
//! data by Monte-Carlo initialisation and Riemannian conjugate gradients, as the CLI's
//! `harbor identify` fits it (the same config, checks, backend and report), returned as
//! NumPy arrays: the identified matrices, the cost history of every start, the fitted
//! outputs beside the data, and identification.json's content.

use std::path::PathBuf;
use std::time::Instant;

use harbor::identify::{OutputError, Status, identify as fit};
use harbor::io::identify_output::{IdentifyReport, OutputComparison};
use harbor::io::identify_spec::IdentifyConfig;
use harbor::linear_ph::OutputData;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::arrays::{matrix, shaped, vector};
use crate::config_source::ConfigSource;
use crate::device_choice::DeviceChoice;
use crate::errors::{from_harbor, guarded};
use crate::python_json::to_python;
use crate::watcher::Watcher;

/// What an identification found: the best start's model, every start's cost history, and
/// the fitted outputs beside the data (training and, with test inputs, cross-validation).
#[pyclass(frozen, get_all, module = "harbor")]
pub struct IdentifyResult {
    /// The identified J (skew): (n, n).
    #[pyo3(name = "J")]
    j: Py<PyAny>,
    /// The identified R (symmetric PSD): (n, n).
    #[pyo3(name = "R")]
    r: Py<PyAny>,
    /// The identified Q (symmetric PD): (n, n).
    #[pyo3(name = "Q")]
    q: Py<PyAny>,
    /// The identified B: (n, m).
    #[pyo3(name = "B")]
    b: Py<PyAny>,
    /// The identified x0: (n,).
    x0: Py<PyAny>,
    /// The best start's cost before its descent (its Monte-Carlo candidate's or its
    /// initial guess's).
    cost_initial: f64,
    /// The best start's final cost.
    cost_final: f64,
    /// Per start, 𝒥(w_k) for k = 0…iterations (a list of 1-D arrays).
    cost_history: Py<PyList>,
    /// The index of the best start in `cost_history`.
    best_start: usize,
    /// The training outputs: `times` (N + 1,), `data`, `fitted` and `initial` (N + 1, m;
    /// `initial` are the best start's outputs before the descent), and the errors `l2`,
    /// `max` and `relative_max`.
    training: Py<PyDict>,
    /// The same on the test inputs (without `initial`), or None without test inputs.
    cross_validation: Py<PyAny>,
    /// identification.json's content as a dict.
    summary: Py<PyAny>,
    /// The backend's label.
    backend: String,
}

#[pymethods]
impl IdentifyResult {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "IdentifyResult(J={}, cost_initial={:e}, cost_final={:e}, starts={}, backend={:?})",
            self.j.bind(py).getattr("shape")?.repr()?,
            self.cost_initial,
            self.cost_final,
            self.cost_history.bind(py).len(),
            self.backend
        ))
    }
}

/// Identifies a port-Hamiltonian model from the data of an identify config (module docs).
#[pyfunction]
#[pyo3(signature = (
    config, *, backend = "auto", overrides = None, adapter = None, precision = None,
    memory_budget = None, work_limit = None, progress = None, base_dir = None
))]
#[allow(clippy::too_many_arguments)]
pub fn identify(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    backend: &str,
    overrides: Option<&Bound<'_, PyAny>>,
    adapter: Option<String>,
    precision: Option<&str>,
    memory_budget: Option<&Bound<'_, PyAny>>,
    work_limit: Option<f64>,
    progress: Option<&Bound<'_, PyAny>>,
    base_dir: Option<PathBuf>,
) -> PyResult<IdentifyResult> {
    guarded(|| {
        let mut source = ConfigSource::read(config, base_dir)?;
        source.apply_overrides(overrides)?;
        let choice = DeviceChoice::from_arguments(backend, adapter, precision, memory_budget)?;
        let watcher = Watcher::new(py, progress)?;
        let report = py.detach(|| -> harbor::Result<IdentifyReport> {
            let mut config =
                IdentifyConfig::from_table(source.table, &source.origin, source.base_dir)?;
            if let Some(limit) = work_limit {
                config = config.with_work_limit("work_limit", limit)?;
            }
            let problem = config.problem(&choice.budget)?;
            let backend = choice.open_for(&problem.problem)?;
            let iterations = problem.setup.optimizer.max_iterations as u64;
            let started = Instant::now();
            let outcome = fit(
                &backend,
                &choice.budget,
                &problem.problem,
                &problem.setup,
                &mut |status| match status {
                    Status::MonteCarlo {
                        evaluated,
                        total,
                        best_cost,
                    } => watcher.report(
                        "monte-carlo",
                        evaluated as u64,
                        total as u64,
                        Some(best_cost),
                    ),
                    Status::Descent(progress) => watcher.report(
                        "descent",
                        progress.iterations as u64,
                        iterations,
                        Some(progress.best_cost),
                    ),
                },
            )?;
            IdentifyReport::new(
                &problem,
                outcome,
                started.elapsed().as_secs_f64(),
                backend.label(),
            )
        });
        if let Some(stopped) = watcher.finish(py) {
            return Err(stopped);
        }
        result(py, report.map_err(from_harbor)?)
    })
}

/// Outputs (N + 1 rows of m channels) as an (N + 1, m) array.
fn outputs(py: Python<'_>, data: &OutputData) -> PyResult<Py<PyAny>> {
    shaped(py, vec![data.rows(), data.channels], data.values.clone())
}

/// A comparison of outputs as a dict (module docs of [`IdentifyResult`]).
fn comparison(py: Python<'_>, outputs_of: &OutputComparison) -> PyResult<Py<PyDict>> {
    let dict = PyDict::new(py);
    let rows = outputs_of.data.rows();
    let times: Vec<f64> = (0..rows).map(|k| k as f64 * outputs_of.h).collect();
    dict.set_item("times", shaped(py, vec![rows], times)?)?;
    dict.set_item("data", outputs(py, &outputs_of.data)?)?;
    dict.set_item("fitted", outputs(py, &outputs_of.fitted)?)?;
    if let Some(initial) = &outputs_of.initial {
        dict.set_item("initial", outputs(py, initial)?)?;
    }
    let OutputError {
        l2,
        max,
        relative_max,
    } = outputs_of.error;
    dict.set_item("l2", l2)?;
    dict.set_item("max", max)?;
    dict.set_item("relative_max", relative_max)?;
    Ok(dict.unbind())
}

/// The Python result of a finished identification.
fn result(py: Python<'_>, report: IdentifyReport) -> PyResult<IdentifyResult> {
    let outcome = &report.outcome;
    let best = outcome.best_start();
    let w = best.point.parameters();
    let history = PyList::empty(py);
    for start in &outcome.starts {
        history.append(shaped(
            py,
            vec![start.history.len()],
            start.history.clone(),
        )?)?;
    }
    Ok(IdentifyResult {
        j: matrix(py, &w.j)?,
        r: matrix(py, &w.r)?,
        q: matrix(py, &w.q)?,
        b: matrix(py, &w.b)?,
        x0: vector(py, &w.x0)?,
        cost_initial: best.cost_initial,
        cost_final: best.cost,
        cost_history: history.unbind(),
        best_start: outcome.best,
        training: comparison(py, &report.training)?,
        cross_validation: match &report.cross_validation {
            Some(cv) => comparison(py, cv)?.into_any(),
            None => py.None(),
        },
        summary: to_python(py, &report.json())?,
        backend: report.backend.clone(),
    })
}
