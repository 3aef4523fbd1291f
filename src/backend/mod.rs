//! Where a run executes: the CPU (the fast SIMD engine, the family's f64 reference
//! integrator, or the twin of its kernel, on all cores) or a GPU adapter, chosen here once so
//! that the CLI, the studies and later bindings all call the same thing. `auto` prefers a hardware GPU and falls back to
//! the CPU with the reason, also when the only adapters are software rasterisers (llvmpipe),
//! which are slower than the CPU path.

pub mod cpu;
pub mod executor;
pub mod footprint;
pub mod gpu;
mod ordered_blocks;
pub mod twin;

pub use footprint::Footprint;

use crate::error::{Error, Result};
use crate::kernels::family::kernel_of;
use crate::kernels::lanes::SimdLevel;
use crate::kernels::{CpuPath, Family, GpuKernel};
use crate::plan::{MemberResult, MemoryBudget, ResultSink};
use crate::results::Results;
use executor::ExecutorOptions;
pub use gpu::context::AdapterSelector;
use gpu::context::{AdapterSummary, AutoAdapter};
use gpu::{GpuContext, Precision};

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendKind {
    /// The best hardware GPU adapter (or the one a selector names), else the CPU path.
    #[default]
    Auto,
    /// The GPU path; an error when no adapter is usable.
    Gpu,
    /// The fast f64 CPU engine (SIMD blocks of members) on all cores.
    Cpu,
    /// The family's f64 reference integrator on all CPU cores.
    Reference,
    /// The CPU twin of the family's GPU kernel through the executor, on all CPU cores.
    Twin,
}

impl BackendKind {
    /// Every kind by the name the front ends take (`--backend`, Python's `backend=`).
    pub const NAMED: [(&'static str, BackendKind); 5] = [
        ("auto", BackendKind::Auto),
        ("gpu", BackendKind::Gpu),
        ("cpu", BackendKind::Cpu),
        ("reference", BackendKind::Reference),
        ("twin", BackendKind::Twin),
    ];

    /// The kind called `name`; an unknown name is an error on `field` that lists the
    /// names.
    pub fn from_name(field: &str, name: &str) -> Result<Self> {
        Self::NAMED
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, kind)| *kind)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::NAMED.iter().map(|(known, _)| *known).collect();
                Error::invalid(
                    field,
                    format!("unknown backend {name:?}: expected {}", names.join(", ")),
                )
            })
    }
}

/// A backend request: kind, adapter name substring, precision.
#[derive(Debug, Clone, Default)]
pub struct BackendRequest {
    pub kind: BackendKind,
    /// The adapter to open (a name substring); the best one when `None`.
    pub adapter: Option<AdapterSelector>,
    /// GPU precision; f64 where supported when `None`.
    pub precision: Option<Precision>,
}

/// An opened backend.
pub enum Backend {
    Cpu(CpuPath),
    Gpu(Box<GpuContext>, ExecutorOptions),
}

/// How a backend was chosen, for the one line the CLI prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub description: String,
    /// Why `auto` chose the CPU, if it did.
    pub fallback: Option<String>,
}

impl Backend {
    /// Opens what `request` asks for. An explicit adapter or precision that cannot be
    /// honoured is an error, not a reason to fall back. `auto` without a selector takes the
    /// CPU path when the only adapters are software rasterisers; with one (`--adapter`,
    /// `HARBOR_ADAPTER`) it opens the adapter named, software or not.
    pub fn open(request: &BackendRequest) -> Result<(Backend, Choice)> {
        let selector = request.adapter.clone();
        let cpu = || -> Result<(Backend, String)> {
            Ok((
                Backend::Cpu(CpuPath::Fast),
                format!(
                    "cpu (f64 SIMD engine, {}, on {} threads)",
                    SimdLevel::get().name(),
                    rayon::current_num_threads()
                ),
            ))
        };
        let reference = || {
            (
                Backend::Cpu(CpuPath::Reference),
                format!(
                    "cpu reference (f64, stage equations solved every step, on {} threads)",
                    rayon::current_num_threads()
                ),
            )
        };
        let twin = || {
            (
                Backend::Cpu(CpuPath::Twin),
                format!(
                    "cpu twin of the GPU kernels (f64, the GPU's chunks and dispatch windows run on the CPU, on {} threads)",
                    rayon::current_num_threads()
                ),
            )
        };
        let gpu = |ctx: GpuContext| {
            let description = gpu_description(&ctx);
            (
                Backend::Gpu(Box::new(ctx), ExecutorOptions::default()),
                description,
            )
        };
        if matches!(
            request.kind,
            BackendKind::Cpu | BackendKind::Reference | BackendKind::Twin
        ) && request.precision == Some(Precision::F32)
        {
            return Err(Error::invalid(
                "--precision",
                "the CPU paths run in f64 only",
            ));
        }
        let ((backend, description), fallback) = match request.kind {
            BackendKind::Cpu => (cpu()?, None),
            BackendKind::Reference => (reference(), None),
            BackendKind::Twin => (twin(), None),
            BackendKind::Gpu => (
                gpu(GpuContext::open_with(selector.as_ref(), request.precision)?),
                None,
            ),
            BackendKind::Auto => {
                let opened = match &selector {
                    Some(selector) => GpuContext::open_with(Some(selector), request.precision)
                        .map(|ctx| AutoAdapter::Hardware(Box::new(ctx))),
                    None => GpuContext::open_hardware(request.precision),
                };
                match opened {
                    Ok(AutoAdapter::Hardware(ctx)) => (gpu(*ctx), None),
                    Ok(AutoAdapter::SoftwareOnly(adapters)) => {
                        (cpu()?, Some(software_only_reason(&adapters)))
                    }
                    Err(e @ Error::Invalid { .. }) => return Err(e),
                    Err(e) => (cpu()?, Some(format!("no usable GPU: {e}"))),
                }
            }
        };
        Ok((
            backend,
            Choice {
                description,
                fallback,
            },
        ))
    }

    /// Under `auto`, the CPU engine in place of a GPU whose kernels cannot run `family`'s
    /// plan (a state size above the kernels' limits), with the reason to print; any other
    /// backend as it is.
    pub fn for_family<F: Family>(self, family: &F, auto: bool) -> (Backend, Option<String>) {
        match (&self, auto) {
            (Backend::Gpu(..), true) => match kernel_of(family).and_then(GpuKernel::kernel_bound) {
                Ok(_) => (self, None),
                Err(e) => (
                    Backend::Cpu(CpuPath::Fast),
                    Some(format!(
                        "backend: cpu (f64 SIMD engine, {}) — the GPU kernels cannot run this plan: {e}",
                        SimdLevel::get().name()
                    )),
                ),
            },
            _ => (self, None),
        }
    }

    /// The label written with results: `cpu` or `gpu: <adapter>`.
    pub fn label(&self) -> String {
        match self {
            Backend::Cpu(CpuPath::Fast) => "cpu".into(),
            Backend::Cpu(CpuPath::Reference) => "cpu-reference".into(),
            Backend::Cpu(CpuPath::Twin) => twin::TWIN_LABEL.into(),
            Backend::Gpu(ctx, _) => gpu::backend_name(ctx),
        }
    }

    /// What integrates `family`'s members here, as summary.json's `engine` names it:
    /// `fast` (the family's fast CPU engine), `reference` (its reference integrator: asked
    /// for, or the CPU path of a family without a fast engine), `twin` (the CPU twin of its
    /// GPU kernel) or `kernel` (its GPU kernel).
    pub fn engine<F: Family>(&self, family: &F) -> &'static str {
        match self {
            Backend::Cpu(CpuPath::Fast) if family.fast_engine().is_some() => "fast",
            Backend::Cpu(CpuPath::Fast | CpuPath::Reference) => "reference",
            Backend::Cpu(CpuPath::Twin) => "twin",
            Backend::Gpu(..) => "kernel",
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
                gpu::run_into(ctx, family, &options.within(budget), sink).map(|_| ())
            }
        }
    }

    /// Runs every member of `family` and collects the results, after checking that all of
    /// them fit `budget`'s results share at once (see [`Footprint::check_collected`]).
    pub fn run_within<F: Family>(&self, family: &F, budget: &MemoryBudget) -> Result<Results> {
        self.footprint(family, budget)?.check_collected(budget)?;
        let mut members: Vec<MemberResult> = Vec::with_capacity(family.member_count());
        self.run_into_within(family, budget, &mut members)?;
        Ok(Results::new(
            family,
            &self.label(),
            self.precision(),
            members,
        ))
    }

    /// Runs every member of `family` and collects the results (no budget check: for runs
    /// whose size the caller knows).
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

/// Why `auto` runs the CPU path when every adapter (best first) is a software rasteriser.
fn software_only_reason(adapters: &[AdapterSummary]) -> String {
    let names: Vec<&str> = adapters.iter().map(|a| a.name.as_str()).collect();
    let first = names.first().copied().unwrap_or_default();
    match names.as_slice() {
        [only] => format!(
            "the only adapter, {only}, is a software rasteriser, slower than the CPU path; --backend gpu uses it"
        ),
        _ => format!(
            "every adapter ({}) is a software rasteriser, slower than the CPU path; --backend gpu uses {first}",
            names.join(", ")
        ),
    }
}

fn gpu_description(ctx: &GpuContext) -> String {
    format!(
        "gpu on {} ({})",
        ctx.adapter.describe(),
        ctx.precision.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn software(name: &str) -> AdapterSummary {
        AdapterSummary::for_tests(name, true, true)
    }

    #[test]
    fn the_software_only_reason_names_the_adapters_and_the_way_to_use_them() {
        assert_eq!(
            software_only_reason(&[software("llvmpipe")]),
            "the only adapter, llvmpipe, is a software rasteriser, slower than the CPU path; --backend gpu uses it"
        );
        let two = software_only_reason(&[software("llvmpipe"), software("WARP")]);
        assert!(
            two.contains("every adapter (llvmpipe, WARP)")
                && two.ends_with("--backend gpu uses llvmpipe"),
            "{two}"
        );
    }
}
