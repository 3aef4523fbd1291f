//! The `--backend`, `--adapter`, `--precision` and `--memory-budget` arguments every
//! running command shares, and opening the backend they ask for.

use clap::ValueEnum;
use harbor::Result;
use harbor::backend::gpu::Precision;
use harbor::backend::{Backend, BackendKind, BackendRequest};
use harbor::kernels::Family;
use harbor::plan::MemoryBudget;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The best hardware GPU adapter, else the CPU path (also when the only adapters are
    /// software rasterisers such as llvmpipe, which are slower than it).
    Auto,
    /// The GPU path; fails when no adapter is usable.
    Gpu,
    /// The fast f64 CPU engine (SIMD blocks of members) on all cores; families without
    /// one (variational) run their f64 reference integrator there.
    Cpu,
    /// The f64 reference integrator (the method as defined: stage equations solved every
    /// step) on all cores.
    Reference,
    /// The CPU twin of the GPU kernel (f64, all cores) run through the GPU's executor: the
    /// same chunks, buffers and dispatch windows, each window run on the CPU. It validates
    /// GPU results and bisects a GPU difference without an adapter.
    Twin,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    F64,
    F32,
}

impl From<PrecisionArg> for Precision {
    fn from(p: PrecisionArg) -> Precision {
        match p {
            PrecisionArg::F64 => Precision::F64,
            PrecisionArg::F32 => Precision::F32,
        }
    }
}

/// Which backend, adapter and precision the user asked for.
#[derive(clap::Args)]
pub struct DeviceArgs {
    /// Where to run: auto picks the best hardware GPU adapter, else the CPU path (also over
    /// a software rasteriser such as llvmpipe), and says which.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Pick the GPU adapter whose name contains this (case-insensitive); also read from
    /// the HARBOR_ADAPTER environment variable.
    #[arg(long)]
    adapter: Option<String>,
    /// GPU precision; default f64 where the adapter supports it, else f32.
    #[arg(long, value_enum)]
    precision: Option<PrecisionArg>,
    /// Host memory the run is planned in (e.g. 512MiB, 2GiB; default 1GiB, also read from
    /// HARBOR_MEMORY_BUDGET): a quarter of it holds results in flight, so members stream
    /// to disk in chunks of that size.
    #[arg(long, value_name = "SIZE")]
    memory_budget: Option<String>,
}

impl DeviceArgs {
    /// The memory budget asked for: --memory-budget, else HARBOR_MEMORY_BUDGET, else 1 GiB.
    pub fn budget(&self) -> Result<MemoryBudget> {
        crate::environment::memory_budget(self.memory_budget.as_deref())
    }

    /// Whether the backend is left to `auto`.
    pub fn is_auto(&self) -> bool {
        self.backend == BackendArg::Auto
    }

    /// Opens the backend asked for; `auto` (and `announce`) says on stderr which one runs
    /// and, after a fallback, why.
    pub fn open(&self, announce: bool) -> Result<Backend> {
        let request = BackendRequest {
            kind: match self.backend {
                BackendArg::Auto => BackendKind::Auto,
                BackendArg::Gpu => BackendKind::Gpu,
                BackendArg::Cpu => BackendKind::Cpu,
                BackendArg::Reference => BackendKind::Reference,
                BackendArg::Twin => BackendKind::Twin,
            },
            adapter: crate::environment::adapter_selector(self.adapter.as_deref()),
            precision: self.precision.map(Precision::from),
        };
        let (backend, chosen) = Backend::open(&request)?;
        if announce || self.backend == BackendArg::Auto {
            match &chosen.fallback {
                Some(reason) => eprintln!("backend: {} — {reason}", chosen.description),
                None => eprintln!("backend: {}", chosen.description),
            }
        }
        Ok(backend)
    }

    /// Opens the backend asked for and hands it to `family` (`auto` moves to the CPU path
    /// where the family's kernel cannot run on the adapter, and says why on stderr).
    pub fn open_for<F: Family>(&self, family: &F) -> Result<Backend> {
        let (backend, reason) = self.open(false)?.for_family(family, self.is_auto());
        if let Some(reason) = reason {
            eprintln!("{reason}");
        }
        Ok(backend)
    }
}
