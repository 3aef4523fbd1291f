//! The `backend`, `adapter`, `precision` and `memory_budget` arguments every running
//! function shares, and opening the backend they ask for (the library's
//! [`Backend::open`], as the CLI's `--backend`, `--adapter`, `--precision` and
//! `--memory-budget`). What `auto` chose, and why, goes to the `harbor` logger at INFO.

use harbor::backend::gpu::Precision;
use harbor::backend::{AdapterSelector, Backend, BackendKind, BackendRequest};
use harbor::kernels::Family;
use harbor::plan::MemoryBudget;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

use crate::errors::{Kind, error, from_harbor, in_python_words};

/// Which backend, adapter, precision and memory budget a call asked for.
#[derive(Debug, Clone)]
pub struct DeviceChoice {
    pub kind: BackendKind,
    pub adapter: Option<String>,
    pub precision: Option<Precision>,
    pub budget: MemoryBudget,
}

impl DeviceChoice {
    /// The choice of the keyword arguments: `backend` one of auto, gpu, cpu, reference,
    /// twin; `precision` f32 or f64; `memory_budget` bytes (an int) or a size such as
    /// `"512MiB"`.
    pub fn from_arguments(
        backend: &str,
        adapter: Option<String>,
        precision: Option<&str>,
        memory_budget: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let kind = BackendKind::from_name("backend", backend).map_err(from_harbor)?;
        let precision = precision
            .map(|name| Precision::from_name("precision", name))
            .transpose()
            .map_err(from_harbor)?;
        let budget = match memory_budget.filter(|b| !b.is_none()) {
            None => MemoryBudget::default(),
            Some(value) if value.is_instance_of::<PyInt>() => {
                let bytes: u64 = value.extract().map_err(|_| {
                    error(
                        Kind::Config,
                        format!("memory_budget: {value} is not a number of bytes ≥ 0"),
                    )
                })?;
                MemoryBudget::new("memory_budget", bytes).map_err(from_harbor)?
            }
            Some(value) if value.is_instance_of::<PyString>() => {
                MemoryBudget::parse("memory_budget", &value.extract::<String>()?)
                    .map_err(from_harbor)?
            }
            Some(value) => {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "memory_budget: expected bytes (an int) or a size such as \"512MiB\", got {}",
                    value.get_type().name()?
                )));
            }
        };
        Ok(DeviceChoice {
            kind,
            adapter,
            precision,
            budget,
        })
    }

    /// Opens the backend asked for and hands it `family` (`auto` moves to the CPU where
    /// the family's kernel cannot run on the adapter); says what ran, and why, at INFO.
    pub fn open_for<F: Family>(&self, family: &F) -> harbor::Result<Backend> {
        let request = BackendRequest {
            kind: self.kind,
            adapter: self
                .adapter
                .as_ref()
                .map(|pattern| AdapterSelector::new(pattern.clone(), "adapter")),
            precision: self.precision,
        };
        let (backend, chosen) = Backend::open(&request)?;
        let line = match &chosen.fallback {
            Some(reason) => format!("backend: {} — {reason}", chosen.description),
            None => format!("backend: {}", chosen.description),
        };
        log::info!(target: "harbor", "{}", in_python_words(&line));
        let (backend, reason) = backend.for_family(family, self.kind == BackendKind::Auto);
        if let Some(reason) = reason {
            log::info!(target: "harbor", "{}", in_python_words(&reason));
        }
        Ok(backend)
    }
}
