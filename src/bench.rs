//! Throughput measurements: member-steps per second of the CPU reference path (all cores)
//! and the GPU path side by side, with the GPU's achieved floating-point rate.
//!
//! Linear-PH cases integrate ensembles of mass–spring–damper chains (n = 2k states, Gauss
//! s = 2, h = 0.01) whose initial states are perturbed per member; contact cases ensembles
//! of damped, forced Duffing chains ([`contact_chain_plan`]). The GPU figure counts
//! the kernel's own time (submission to completion of every dispatch); the end-to-end
//! figure adds the host's parameter build, uploads and read-backs. The CPU path is timed on
//! a subset of the members small enough to finish in about a second — member-steps per
//! second does not depend on the member count once all cores are busy.

use std::time::Instant;

use serde::Serialize;

use crate::backend::cpu;
use crate::backend::gpu::{GpuContext, GpuRunOptions, Precision, run_into};
use crate::error::{Error, Result};
use crate::kernels::CpuPath;
use crate::kernels::Family;
use crate::model::chain::{chain_initial_state, mass_spring_damper_chain};
use crate::model::{ContactMember, ContactSystem, Damping, Potential, Signal};
use crate::plan::ensemble::Draw;
use crate::plan::{
    ContactEnsembleSpec, ContactMethod, ContactPlan, DrawnEnsemble, EnsembleSpec, LinearPhPlan,
    Member, MemberResult, ParameterDraw, Recording, ResultSink,
};
use crate::tableau::Composition;
use crate::tableau::{Scheme, SchemeFamily};
use nalgebra::{DMatrix, DVector};

/// One benchmark configuration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BenchCase {
    /// `linear-ph` (mass–spring–damper chains, Gauss s = 2) or `contact` (damped, forced
    /// Duffing chains under the splitting `composition`).
    pub family: &'static str,
    pub members: usize,
    /// n: states of the linear-PH chain, degrees of freedom of the contact chain.
    pub states: usize,
    pub precision: Precision,
    pub steps: usize,
    /// What each member records (linear-PH; contact cases record everything).
    pub recording: Recording,
}

/// What one case measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchRow {
    pub case: BenchCase,
    /// GPU member-steps per second, kernel time only.
    pub gpu_device: Option<f64>,
    /// GPU member-steps per second including host preparation and read-back.
    pub gpu_end_to_end: Option<f64>,
    /// CPU reference member-steps per second on all cores.
    pub cpu: f64,
    /// Members the CPU path was timed on.
    pub cpu_members: usize,
    /// Achieved GPU floating-point operations per second (kernel time).
    pub gpu_flops: Option<f64>,
    /// Floating-point operations per member-step, counted from the kernel.
    pub flops_per_step: usize,
    /// Why the GPU part was skipped, if it was.
    pub skipped: Option<String>,
}

/// The plan of a benchmark case: `members` chains of n = `states` (even) states, recording
/// what `recording` switches on once, at the last step.
pub fn chain_plan(
    members: usize,
    states: usize,
    steps: usize,
    recording: Recording,
) -> Result<LinearPhPlan> {
    let half = (states / 2).max(1);
    let nominal = Member {
        system: mass_spring_damper_chain(half, 1.0, 0.05)?,
        x0: chain_initial_state(half),
    };
    let spec = EnsembleSpec {
        members,
        seed: 1,
        j: Draw::Fixed,
        r: Draw::Fixed,
        q: Draw::Fixed,
        b: Draw::Fixed,
        x0: Draw::Perturb { sigma: 0.1 },
    };
    let ensemble = DrawnEnsemble::new(nominal, spec, None)?;
    let signals = [Signal::Harmonic {
        amplitude: 1.0,
        omega: 1.0,
        phase: 0.0,
        offset: 0.0,
    }];
    LinearPhPlan::new(
        Scheme::new(SchemeFamily::Gauss, 2)?,
        0.01,
        steps as f64 * 0.01,
        ensemble,
        &signals,
        steps,
    )
    .map(|plan| plan.with_recording(recording))
}

/// A sink that drops results (benchmarks measure the computation, not the disk).
struct Discard;

impl ResultSink for Discard {
    fn accept(&mut self, _first: usize, _members: Vec<MemberResult>) -> Result<()> {
        Ok(())
    }
}

/// Measures one case of the family built by `make(members, steps)`; `gpu` None measures
/// the CPU path alone. GPU cases whose per-member parameters would exceed
/// `max_param_bytes` are skipped with the reason.
pub fn measure<F: Family>(
    case: BenchCase,
    make: impl Fn(usize, usize) -> Result<F>,
    gpu: Option<&GpuContext>,
    max_param_bytes: u64,
) -> Result<BenchRow> {
    let plan = make(case.members, case.steps)?;
    // A case no GPU kernel can run is still measured on the CPU.
    let bound = plan.kernel_bound();
    let flops_per_step = bound.as_ref().map_or(0, |b| b.flops_per_step);
    // CPU on a subset of about a second's work, estimated from a 16-member run.
    let probe = make(16.min(case.members), case.steps)?;
    let started = Instant::now();
    cpu::run_into(&probe, CpuPath::Reference, &mut Discard)?;
    let probe_rate = (16.min(case.members) * case.steps) as f64 / started.elapsed().as_secs_f64();
    let cpu_members = ((probe_rate / case.steps as f64) as usize).clamp(16, case.members);
    let cpu_plan = make(cpu_members, case.steps)?;
    let started = Instant::now();
    cpu::run_into(&cpu_plan, CpuPath::Reference, &mut Discard)?;
    let cpu_rate = (cpu_members * case.steps) as f64 / started.elapsed().as_secs_f64();
    let mut row = BenchRow {
        case,
        gpu_device: None,
        gpu_end_to_end: None,
        cpu: cpu_rate,
        cpu_members,
        gpu_flops: None,
        flops_per_step,
        skipped: None,
    };
    let bound = match bound {
        Ok(bound) => bound,
        Err(e) => {
            row.skipped = Some(e.to_string());
            return Ok(row);
        }
    };
    let Some(ctx) = gpu else {
        row.skipped = Some("no GPU".into());
        return Ok(row);
    };
    if ctx.precision != case.precision {
        row.skipped = Some(format!(
            "the device was opened for {}",
            ctx.precision.name()
        ));
        return Ok(row);
    }
    let bytes = (bound.params.entries() * case.members * case.precision.size()) as u64;
    if bytes > max_param_bytes {
        row.skipped = Some(format!(
            "parameters need {:.1} GiB > --max-operator-gib",
            bytes as f64 / (1u64 << 30) as f64
        ));
        return Ok(row);
    }
    // Warm-up: compiles the pipeline and lets the driver finish any lazy compilation.
    run_into(ctx, &make(64, 2)?, &GpuRunOptions::default(), &mut Discard)?;
    let started = Instant::now();
    let stats = run_into(ctx, &plan, &GpuRunOptions::default(), &mut Discard)?;
    let wall = started.elapsed().as_secs_f64();
    let member_steps = (case.members * case.steps) as f64;
    row.gpu_device = Some(member_steps / stats.device_seconds.max(1e-12));
    row.gpu_end_to_end = Some(member_steps / wall);
    row.gpu_flops = Some(member_steps * flops_per_step as f64 / stats.device_seconds.max(1e-12));
    Ok(row)
}

/// The plan of a contact benchmark case: `members` chains of n = `dof` oscillators,
/// H = ½|p|² + ½ xᵀ K x + (β/4) Σ x_i⁴ − cos(t) x_1 + α z with K the chain Laplacian
/// (tridiagonal 2, −1), β = 0.1, α uniform in [0.01, 0.1] and x0 perturbed per member,
/// h = 0.01, under the splitting `composition`.
pub fn contact_chain_plan(
    members: usize,
    dof: usize,
    steps: usize,
    composition: &str,
) -> Result<ContactPlan> {
    let n = dof.max(1);
    let k = DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
        0 => 2.0,
        1 => -1.0,
        _ => 0.0,
    });
    let mut amplitude = DVector::zeros(n);
    amplitude[0] = 1.0;
    let system = ContactSystem::new(
        "bench",
        DMatrix::identity(n, n),
        vec![
            Potential::Harmonic { k },
            Potential::Quartic { beta: 0.1 },
            Potential::Forcing {
                amplitude,
                signal: Signal::Harmonic {
                    amplitude: 1.0,
                    omega: 1.0,
                    phase: std::f64::consts::FRAC_PI_2,
                    offset: 0.0,
                },
            },
        ],
        Damping::Constant { alpha: 0.05 },
    )?;
    let x0 = DVector::from_fn(n, |i, _| 0.1 * (i as f64 + 1.0));
    let nominal = ContactMember::new("bench", system, x0, DVector::zeros(n), 0.0)?;
    let spec = ContactEnsembleSpec {
        members,
        seed: 1,
        x0: ParameterDraw::Perturb { sigma: 0.1 },
        p0: ParameterDraw::Fixed,
        z0: ParameterDraw::Fixed,
        alpha: ParameterDraw::Uniform {
            low: 0.01,
            high: 0.1,
        },
        beta: ParameterDraw::Fixed,
        omega: ParameterDraw::Fixed,
        gamma: ParameterDraw::Fixed,
        epsilon: ParameterDraw::Fixed,
        amplitude: ParameterDraw::Fixed,
    };
    ContactPlan::new(
        ContactMethod::Splitting(Composition::by_name(composition)?),
        0.01,
        steps as f64 * 0.01,
        nominal,
        Some(spec),
        steps,
    )
}

/// What a benchmark runs: one workload per family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    /// Mass–spring–damper chains under Gauss s = 2 ([`chain_plan`]).
    LinearPhChain,
    /// Damped, forced Duffing chains under `composition` ([`contact_chain_plan`]).
    ContactChain { composition: String },
}

impl Workload {
    /// The family's name in tables.
    pub fn family(&self) -> &'static str {
        match self {
            Workload::LinearPhChain => "linear-ph",
            Workload::ContactChain { .. } => "contact",
        }
    }

    /// Checks a size n (`--states`): linear-PH chains have n = 2 × masses states, contact
    /// chains n ≥ 1 degrees of freedom.
    pub fn check_size(&self, n: usize) -> Result<()> {
        match self {
            Workload::LinearPhChain if n == 0 || n % 2 == 1 => Err(Error::invalid(
                "--states",
                format!("chain state sizes are even (n = 2 × masses), got {n}"),
            )),
            Workload::ContactChain { .. } if n == 0 => Err(Error::invalid(
                "--states",
                "contact chains need at least 1 degree of freedom, got 0",
            )),
            _ => Ok(()),
        }
    }

    /// Measures `case` (its `states` is the size n) with [`measure`].
    pub fn measure(
        &self,
        case: BenchCase,
        gpu: Option<&GpuContext>,
        max_param_bytes: u64,
    ) -> Result<BenchRow> {
        let n = case.states;
        match self {
            Workload::LinearPhChain => measure(
                case,
                |members, steps| chain_plan(members, n, steps, case.recording),
                gpu,
                max_param_bytes,
            ),
            Workload::ContactChain { composition } => measure(
                case,
                |members, steps| contact_chain_plan(members, n, steps, composition),
                gpu,
                max_param_bytes,
            ),
        }
    }
}

/// The header line of the printed table.
pub fn header() -> String {
    format!(
        "{:<9} {:<5} {:>3} {:>8} {:>6} {:>14} {:>14} {:>14} {:>9} {:>11}  {}",
        "family",
        "prec",
        "n",
        "members",
        "steps",
        "GPU kernel",
        "GPU end-to-end",
        "CPU all cores",
        "GPU/CPU",
        "GPU GFLOP/s",
        "note"
    )
}

/// One line of the printed table.
pub fn row(r: &BenchRow) -> String {
    let rate = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.3e}"));
    format!(
        "{:<9} {:<5} {:>3} {:>8} {:>6} {:>14} {:>14} {:>14.3e} {:>9} {:>11}  {}",
        r.case.family,
        r.case.precision.name(),
        r.case.states,
        r.case.members,
        r.case.steps,
        rate(r.gpu_device),
        rate(r.gpu_end_to_end),
        r.cpu,
        r.gpu_device
            .map_or("—".into(), |g| format!("{:.2}", g / r.cpu)),
        r.gpu_flops
            .map_or("—".into(), |f| format!("{:.2}", f / 1e9)),
        r.skipped
            .clone()
            .unwrap_or_else(|| format!("CPU timed on {} members", r.cpu_members)),
    )
}
