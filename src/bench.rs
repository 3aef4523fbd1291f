//! Throughput measurements: member-steps per second of the CPU reference path (all cores)
//! and the GPU path side by side, with the GPU's achieved floating-point rate.
//!
//! Every case integrates an ensemble of mass–spring–damper chains (n = 2k states, Gauss
//! s = 2, h = 0.01) whose initial states are perturbed per member. The GPU figure counts
//! the kernel's own time (submission to completion of every dispatch); the end-to-end
//! figure adds the host's operator build, uploads and read-backs. The CPU path is timed on
//! a subset of the members small enough to finish in about a second — member-steps per
//! second does not depend on the member count once all cores are busy.

use std::time::Instant;

use serde::Serialize;

use crate::backend::cpu;
use crate::backend::gpu::{GpuContext, GpuRunOptions, Precision, run_into};
use crate::error::Result;
use crate::kernels::CpuPath;
use crate::kernels::linear_ph::LinearPhShape;
use crate::model::Signal;
use crate::model::chain::{chain_initial_state, mass_spring_damper_chain};
use crate::plan::ensemble::Draw;
use crate::plan::{DrawnEnsemble, EnsembleSpec, LinearPhPlan, Member, MemberResult, ResultSink};
use crate::tableau::{Scheme, SchemeFamily};

/// One benchmark configuration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BenchCase {
    pub members: usize,
    pub states: usize,
    pub precision: Precision,
    pub steps: usize,
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

/// The plan of a benchmark case: `members` chains of n = `states` (even) states.
pub fn chain_plan(members: usize, states: usize, steps: usize) -> Result<LinearPhPlan> {
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
}

/// A sink that drops results (benchmarks measure the computation, not the disk).
struct Discard;

impl ResultSink for Discard {
    fn accept(&mut self, _first: usize, _members: Vec<MemberResult>) -> Result<()> {
        Ok(())
    }
}

/// Operator bytes of a case on the GPU (the dominant memory).
pub fn operator_bytes(case: &BenchCase, rank: usize) -> u64 {
    let layout = LinearPhShape {
        states: case.states,
        stages: 2,
        inputs: 1,
        rank,
        cooperative: false,
    };
    (layout.operator_entries() * case.members * case.precision.size()) as u64
}

/// Measures one case; `gpu` None measures the CPU path alone. GPU cases whose operators
/// would exceed `max_operator_bytes` are skipped with the reason.
pub fn measure(
    case: BenchCase,
    gpu: Option<&GpuContext>,
    max_operator_bytes: u64,
) -> Result<BenchRow> {
    let plan = chain_plan(case.members, case.states, case.steps)?;
    let rank = plan.ensemble.prototype().system.states() / 2;
    let layout = LinearPhShape {
        states: case.states.max(2),
        stages: 2,
        inputs: 1,
        rank,
        cooperative: false,
    };
    // CPU on a subset: about 1e7 multiply-adds of stage solves.
    let n = case.states.max(2);
    let cpu_members = (10_000_000 / (case.steps * n * n * 4)).clamp(16, case.members);
    let cpu_plan = chain_plan(cpu_members, case.states, case.steps)?;
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
        flops_per_step: layout.flops_per_step(),
        skipped: None,
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
    let bytes = operator_bytes(&case, rank);
    if bytes > max_operator_bytes {
        row.skipped = Some(format!(
            "operators need {:.1} GiB > --max-operator-gib",
            bytes as f64 / (1u64 << 30) as f64
        ));
        return Ok(row);
    }
    // Warm-up: compiles the pipeline and lets the driver finish any lazy compilation.
    run_into(
        ctx,
        &chain_plan(64, case.states, 2)?,
        &GpuRunOptions::default(),
        &mut Discard,
    )?;
    let started = Instant::now();
    let stats = run_into(ctx, &plan, &GpuRunOptions::default(), &mut Discard)?;
    let wall = started.elapsed().as_secs_f64();
    let member_steps = (case.members * case.steps) as f64;
    row.gpu_device = Some(member_steps / stats.device_seconds.max(1e-12));
    row.gpu_end_to_end = Some(member_steps / wall);
    row.gpu_flops =
        Some(member_steps * layout.flops_per_step() as f64 / stats.device_seconds.max(1e-12));
    Ok(row)
}

/// The header line of the printed table.
pub fn header() -> String {
    format!(
        "{:<5} {:>3} {:>8} {:>6} {:>14} {:>14} {:>14} {:>9} {:>11}  {}",
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
        "{:<5} {:>3} {:>8} {:>6} {:>14} {:>14} {:>14.3e} {:>9} {:>11}  {}",
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
