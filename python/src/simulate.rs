//! `harbor.simulate`: any family's run, its arrays handed to NumPy without another copy.
//!
//! The run is the CLI's `harbor simulate` (the same config, plan, backend, chunks and
//! summary) with its arrays kept in memory ([`SimulationArrays`]) instead of streamed to
//! files: each value is copied once, from the backend's results into its array, whose
//! buffer the NumPy array then owns. Before any work the arrays and what the backend holds
//! in flight are checked against the memory available.

use std::path::PathBuf;
use std::time::Instant;

use harbor::io::simulation_arrays::{SimulationArrays, SimulationOutput};
use harbor::io::summary::RunLabels;
use harbor::io::{Config, FamilyVisitor};
use harbor::kernels::Family;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::arrays::into_numpy;
use crate::config_source::ConfigSource;
use crate::device_choice::DeviceChoice;
use crate::errors::{from_harbor, guarded};
use crate::python_json::to_python;
use crate::watcher::Watcher;

/// The results of a simulation: NumPy arrays indexed by member first, as the files of
/// `harbor simulate` hold them, and the run's summary.
#[pyclass(frozen, get_all, module = "harbor")]
pub struct SimulationResult {
    /// The family (`linear-ph`, `contact`, `port-hamiltonian`, `variational`).
    family: String,
    /// Sample times, t = 0 first: (samples,).
    times: Py<PyAny>,
    /// States at the sample times, (members, samples, state); None when the run records
    /// no trajectory (`output.trajectory = false`, and variational runs, whose path is the
    /// channel `path`).
    trajectory: Py<PyAny>,
    /// Per-member final states: (members, state).
    final_state: Py<PyAny>,
    /// Per-member totals: (members, totals), columns named by `totals_names`.
    totals: Py<PyAny>,
    /// The names of the columns of `totals`.
    totals_names: Py<PyTuple>,
    /// Per member (int64): 0 while finite, else the first step after which it was not.
    nonfinite_step: Py<PyAny>,
    /// The family's energy channel (linear and nonlinear PH: (members, windows, 4) of
    /// stored, supplied, port, dissipated; variational: (members, records), the energy at
    /// each record point); None when the run records none.
    energy: Py<PyAny>,
    /// The discrete outputs y^k (PH families: (members, records, s, m)); None when the run
    /// records none.
    outputs: Py<PyAny>,
    /// Every channel the family records, by name (`energy`, `outputs`, `hamiltonian`,
    /// `path`, `multipliers`, `momentum`, `observables`, …), as the `<name>.npy` files.
    channels: Py<PyDict>,
    /// summary.json's content (without its list of files) as a dict.
    summary: Py<PyAny>,
    /// The backend's label (`cpu`, `cpu-reference`, `twin`, `gpu: <adapter>`).
    backend: String,
    /// What integrated the members: `fast`, `reference`, `twin` or `kernel`.
    engine: String,
    /// `f64`, or the GPU's `f32`.
    precision: String,
}

#[pymethods]
impl SimulationResult {
    /// The column of `totals` called `name` (one value per member).
    fn total(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let names: Vec<String> = self.totals_names.bind(py).extract()?;
        let Some(index) = names.iter().position(|n| n == name) else {
            return Err(pyo3::exceptions::PyKeyError::new_err(format!(
                "{name:?}: the totals are {}",
                names.join(", ")
            )));
        };
        let slice = pyo3::types::PySlice::full(py);
        Ok(self.totals.bind(py).get_item((slice, index))?.unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let shape = |array: &Py<PyAny>| -> PyResult<String> {
            Ok(array.bind(py).getattr("shape")?.repr()?.to_string())
        };
        let channels: Vec<String> = self.channels.bind(py).keys().extract()?;
        Ok(format!(
            "SimulationResult(family={:?}, final_state={}, channels={channels:?}, backend={:?}, engine={:?}, precision={:?})",
            self.family,
            shape(&self.final_state)?,
            self.backend,
            self.engine,
            self.precision
        ))
    }
}

/// Integrates the ensemble of a config and returns its arrays (module docs).
#[pyfunction]
#[pyo3(signature = (
    config, *, backend = "auto", members = None, overrides = None, adapter = None,
    precision = None, memory_budget = None, keep_nonfinite = false, progress = None,
    base_dir = None
))]
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    backend: &str,
    members: Option<i64>,
    overrides: Option<&Bound<'_, PyAny>>,
    adapter: Option<String>,
    precision: Option<&str>,
    memory_budget: Option<&Bound<'_, PyAny>>,
    keep_nonfinite: bool,
    progress: Option<&Bound<'_, PyAny>>,
    base_dir: Option<PathBuf>,
) -> PyResult<SimulationResult> {
    guarded(|| {
        let mut source = ConfigSource::read(config, base_dir)?;
        source.apply_overrides(overrides)?;
        if let Some(members) = members {
            source.set("ensemble.members", toml::Value::Integer(members))?;
        }
        let choice = DeviceChoice::from_arguments(backend, adapter, precision, memory_budget)?;
        let watcher = Watcher::new(py, progress)?;
        let run = py.detach(|| -> harbor::Result<InMemoryRun> {
            let config = Config::from_table(source.table, &source.origin, source.base_dir)?;
            config.run_plan()?.visit(InMemory {
                choice: &choice,
                watcher: watcher.clone(),
                keep_nonfinite,
            })
        });
        if let Some(stopped) = watcher.finish(py) {
            return Err(stopped);
        }
        let run = run.map_err(from_harbor)?;
        if let Some(warning) = &run.warning {
            let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
            PyErr::warn(py, &category, &std::ffi::CString::new(warning.as_str())?, 1)?;
        }
        result(py, run)
    })
}

/// A finished run: its arrays and summary, its family and the warning to give.
struct InMemoryRun {
    output: SimulationOutput,
    family: &'static str,
    warning: Option<String>,
}

/// Runs any family's plan into arrays in memory.
struct InMemory<'a> {
    choice: &'a DeviceChoice,
    watcher: Watcher,
    keep_nonfinite: bool,
}

impl FamilyVisitor for InMemory<'_> {
    type Output = harbor::Result<InMemoryRun>;

    fn visit<F: Family>(self, family: &F) -> Self::Output {
        let backend = self.choice.open_for(family)?;
        let budget = &self.choice.budget;
        // What the run needs, against what the machine has, before any work.
        let footprint = backend.footprint(family, budget)?;
        SimulationArrays::check_memory(family, &footprint)?;
        let mut arrays = SimulationArrays::new(family)?;
        let total = (family.member_count() as u64).saturating_mul(family.grid().steps as u64);
        let watcher = self.watcher;
        arrays.on_progress(move |done| watcher.report("simulate", done, total, None));
        let started = Instant::now();
        backend.run_into_within(family, budget, &mut arrays)?;
        let seconds = started.elapsed().as_secs_f64();
        let warning = match arrays.nonfinite_description() {
            Some(what) if !self.keep_nonfinite => {
                return Err(harbor::Error::Numerical {
                    context: "simulation".into(),
                    problem: format!(
                        "{what}; nothing was returned — call again with keep_nonfinite=True to keep the results (summary['nonfinite'] counts those members, nonfinite_step flags each)"
                    ),
                });
            }
            Some(what) => Some(format!(
                "{what}; they are counted in summary['nonfinite'], each member's status is in nonfinite_step"
            )),
            None => None,
        };
        let label = backend.label();
        let labels = RunLabels {
            backend: &label,
            engine: backend.engine(family),
            precision: backend.precision().name(),
            seconds,
        };
        Ok(InMemoryRun {
            output: arrays.finish(&labels, family)?,
            family: family.name(),
            warning,
        })
    }
}

/// The Python result of a finished run: every buffer moved into its NumPy array.
fn result(py: Python<'_>, run: InMemoryRun) -> PyResult<SimulationResult> {
    let output = run.output;
    let summary = to_python(py, &serde_json::Value::Object(output.summary))?;
    let text = |key: &str| -> PyResult<String> {
        summary
            .bind(py)
            .get_item(key)
            .and_then(|v| v.extract::<String>())
    };
    let (backend, engine, precision) = (text("backend")?, text("engine")?, text("precision")?);
    let channels = PyDict::new(py);
    for channel in output.channels {
        let name = channel.name.clone();
        channels.set_item(name, into_numpy(py, channel)?)?;
    }
    let channel = |name: &str| -> PyResult<Py<PyAny>> {
        Ok(channels
            .get_item(name)?
            .map_or_else(|| py.None(), |array| array.unbind()))
    };
    let (energy, outputs) = (channel("energy")?, channel("outputs")?);
    Ok(SimulationResult {
        family: run.family.to_string(),
        times: into_numpy(py, output.times)?,
        trajectory: match output.trajectory {
            Some(trajectory) => into_numpy(py, trajectory)?,
            None => py.None(),
        },
        final_state: into_numpy(py, output.final_state)?,
        totals: into_numpy(py, output.totals)?,
        totals_names: PyTuple::new(py, output.totals_names)?.unbind(),
        nonfinite_step: into_numpy(py, output.nonfinite_step)?,
        energy,
        outputs,
        channels: channels.unbind(),
        summary,
        backend,
        engine,
        precision,
    })
}
