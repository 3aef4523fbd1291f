//! Where a run executes: the CPU (the family's f64 reference integrator, or the twin of its
//! kernel, on all cores) or a GPU adapter, chosen here once so that the CLI, the studies and
//! later bindings all call the same thing. `auto` prefers a GPU and falls back to the CPU
//! with the reason.

pub mod cpu;
pub mod footprint;
pub mod gpu;

pub use footprint::Footprint;

use crate::error::{Error, Result};
use crate::kernels::{CpuPath, Family};
use crate::plan::{MemberResult, MemoryBudget, ResultSink};
use crate::results::Results;
use gpu::context::adapter_selector;
use gpu::{GpuContext, GpuRunOptions, Precision};

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendKind {
    /// The best GPU adapter, else the CPU path.
    #[default]
    Auto,
    /// The GPU path; an error when no adapter is usable.
    Gpu,
    /// The family's f64 reference integrator on all CPU cores.
    Cpu,
}

/// A backend request: kind, adapter name substring, precision.
#[derive(Debug, Clone, Default)]
pub struct BackendRequest {
    pub kind: BackendKind,
    /// Adapter name substring; `HARBOR_ADAPTER` when `None`.
    pub adapter: Option<String>,
    /// GPU precision; f64 where supported when `None`.
    pub precision: Option<Precision>,
}

/// An opened backend.
pub enum Backend {
    Cpu(CpuPath),
    Gpu(Box<GpuContext>, GpuRunOptions),
}

/// How a backend was chosen, for the one line the CLI prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub description: String,
    /// Why `auto` fell back to the CPU, if it did.
    pub fallback: Option<String>,
}

impl Backend {
    /// Opens what `request` asks for. An explicit adapter or precision that cannot be
    /// honoured is an error, not a reason to fall back.
    pub fn open(request: &BackendRequest) -> Result<(Backend, Choice)> {
        let selector = adapter_selector(request.adapter.as_deref());
        let cpu = || {
            (
                Backend::Cpu(CpuPath::Reference),
                format!(
                    "cpu (f64 reference on {} threads)",
                    rayon::current_num_threads()
                ),
            )
        };
        let gpu = |ctx: GpuContext| {
            let description = gpu_description(&ctx);
            (
                Backend::Gpu(Box::new(ctx), GpuRunOptions::default()),
                description,
            )
        };
        let ((backend, description), fallback) = match request.kind {
            BackendKind::Cpu => {
                if request.precision == Some(Precision::F32) {
                    return Err(Error::invalid(
                        "--precision",
                        "the CPU reference path runs in f64 only",
                    ));
                }
                (cpu(), None)
            }
            BackendKind::Gpu => (
                gpu(GpuContext::open(selector.as_deref(), request.precision)?),
                None,
            ),
            BackendKind::Auto => match GpuContext::open(selector.as_deref(), request.precision) {
                Ok(ctx) => (gpu(ctx), None),
                Err(e @ Error::Invalid { .. }) => return Err(e),
                Err(e) => (cpu(), Some(format!("no usable GPU: {e}"))),
            },
        };
        Ok((
            backend,
            Choice {
                description,
                fallback,
            },
        ))
    }

    /// The label written with results: `cpu` or `gpu: <adapter>`.
    pub fn label(&self) -> String {
        match self {
            Backend::Cpu(_) => "cpu".into(),
            Backend::Gpu(ctx, _) => gpu::backend_name(ctx),
        }
    }

    /// `f64` on the CPU, the context's precision on a GPU.
    pub fn precision(&self) -> Precision {
        match self {
            Backend::Cpu(_) => Precision::F64,
            Backend::Gpu(ctx, _) => ctx.precision,
        }
    }

    /// Runs every member of `family`, streaming chunks into `sink`.
    pub fn run_into<F: Family>(&self, family: &F, sink: &mut dyn ResultSink) -> Result<()> {
        match self {
            Backend::Cpu(path) => cpu::run_into(family, *path, sink),
            Backend::Gpu(ctx, options) => gpu::run_into(ctx, family, options, sink).map(|_| ()),
        }
    }

    /// Runs every member of `family`, streaming chunks whose results fit `budget` into
    /// `sink`.
    pub fn run_into_within<F: Family>(
        &self,
        family: &F,
        budget: &MemoryBudget,
        sink: &mut dyn ResultSink,
    ) -> Result<()> {
        match self {
            Backend::Cpu(path) => cpu::run_into_within(family, *path, budget.results(), sink),
            Backend::Gpu(ctx, options) => {
                let mut options = options.clone();
                options.result_budget = Some(budget.results());
                gpu::run_into(ctx, family, &options, sink).map(|_| ())
            }
        }
    }

    /// Runs every member of `family` and collects the results.
    pub fn run<F: Family>(&self, family: &F) -> Result<Results> {
        let mut members: Vec<MemberResult> = Vec::with_capacity(family.member_count());
        self.run_into(family, &mut members)?;
        Ok(Results::new(
            family,
            &self.label(),
            self.precision(),
            members,
        ))
    }
}

fn gpu_description(ctx: &GpuContext) -> String {
    format!(
        "gpu on {} ({})",
        ctx.adapter.describe(),
        ctx.precision.name()
    )
}
