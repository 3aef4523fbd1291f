//! Throughput measurements: member-steps per second of the fast CPU engine, the CPU
//! reference integrator (both on all cores) and the GPU path side by side, with the
//! achieved floating-point rate and (GPU) global-memory bandwidth, to be read against the
//! machine's roofline.
//!
//! Each family brings its benchmark systems (its [`crate::families::BenchWorkload`]: linear-PH
//! mass–spring–damper chains, contact damped forced Duffing chains), or a configuration is
//! measured as `harbor simulate` runs it. The GPU figure counts
//! the kernel's own time (submission to completion of every dispatch); the end-to-end
//! figure adds the host's parameter build, uploads and read-backs. The CPU path is timed on
//! a subset of the members small enough to finish in about a second — member-steps per
//! second does not depend on the member count once all cores are busy — and a CPU timing
//! shorter than that is repeated, each figure the median of its runs.

use std::time::Instant;

use serde::Serialize;

pub mod machine_load;
mod repeated_runs;
mod workloads;

use repeated_runs::median_of_runs;
pub use workloads::Workload;

use crate::backend::cpu;
use crate::backend::gpu::{ExecutorOptions, GpuContext, run_into};
use crate::error::{Error, Result};
use crate::io::output::SimulationWriter;
use crate::io::summary::RunLabels;
use crate::kernels::family::{kernel_of, prepare_block};
use crate::kernels::lanes::SimdLevel;
use crate::kernels::{CpuPath, Family, FastEngine, GpuKernel};
use crate::plan::{Recording, ResultBlock, ResultSink};
use rayon::prelude::*;

/// One benchmark configuration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BenchCase {
    /// The family, as `--family` names it.
    pub family: &'static str,
    pub members: usize,
    /// n: the size of a member ([`Family::states`]).
    pub states: usize,
    pub steps: usize,
    /// What each member records (where the family has the choice).
    pub recording: Recording,
    /// Whether the reference integrator is measured too.
    pub reference: bool,
}

/// One backend's figures on one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// `cpu` (the fast SIMD engine), `reference` (the stage-solving integrator), `gpu`, or
    /// `hand-rust` (a workload's model written by hand in Rust, the baseline).
    pub backend: &'static str,
    /// `f64` or `f32`.
    pub precision: &'static str,
    /// The SIMD level and threads, or the adapter.
    pub device: String,
    /// Members the rate was measured on.
    pub members: usize,
    /// Member-steps per second of the integration alone: per-member set-up (operators)
    /// excluded on the CPU, kernel time (submission to completion of every dispatch) on the
    /// GPU.
    pub member_steps_per_second: f64,
    /// Member-steps per second including the set-up (and on the GPU uploads and
    /// read-backs).
    pub end_to_end_member_steps_per_second: f64,
    /// Share of the end-to-end time spent before and around the integration: the per-member
    /// set-up on the CPU (members drawn, operators built), uploads, read-backs and the
    /// host's parameter build on the GPU; `None` where it is not measured apart.
    pub setup_share: Option<f64>,
    /// Floating-point operations per member-step, counted from the step.
    pub flops_per_member_step: usize,
    /// Bytes per member-step the kernel moves from global memory (GPU, counted from the
    /// kernel: operators and stage inputs), in the measurement's precision.
    pub bytes_per_member_step: usize,
    /// Achieved floating-point operations per second (integration alone).
    pub flops_per_second: f64,
    /// Achieved global-memory bytes per second (GPU; 0 on the CPU, whose operators stay
    /// in cache).
    pub bytes_per_second: f64,
}

/// What one case measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchRow {
    pub case: BenchCase,
    pub measurements: Vec<Measurement>,
    /// Backends not measured, with the reason.
    pub skipped: Vec<String>,
}

/// The GPU contexts a benchmark measures, one per precision that opened.
pub type GpuContexts<'a> = &'a [GpuContext];

/// Seconds of work the CPU timings aim at (they run on a prefix of the members: rates do
/// not depend on the member count once every core is busy).
const CPU_SECONDS: f64 = 1.0;

/// Host bytes the fast engine's prepared blocks may take in a benchmark.
const MAX_PREPARED_BYTES: usize = 1 << 30;

/// A sink that drops results (benchmarks measure the computation, not the disk).
struct Discard;

impl ResultSink for Discard {
    fn accept(&mut self, _first: usize, _members: ResultBlock) -> Result<()> {
        Ok(())
    }

    fn as_send(&mut self) -> Option<&mut (dyn ResultSink + Send)> {
        Some(self)
    }
}

/// Times the CPU path on members `0..count` of `plan`: the blocks' set-up (what they
/// share, then members and operators, all cores), then their integration by the fast engine (all cores); returns
/// (set-up, integration) seconds. A family without a fast engine is timed on its reference
/// integrator, as the CPU path runs it.
pub fn time_fast<F: Family>(plan: &F, count: usize) -> Result<(f64, f64)> {
    let Some(engine) = plan.fast_engine() else {
        let started = Instant::now();
        let members = (0..count)
            .into_par_iter()
            .map(|i| plan.member(i))
            .collect::<Result<Vec<_>>>()?;
        let setup = started.elapsed().as_secs_f64();
        let started = Instant::now();
        members
            .par_iter()
            .map(|member| plan.reference(member).map(|_| ()))
            .collect::<Result<Vec<()>>>()?;
        return Ok((setup, started.elapsed().as_secs_f64()));
    };
    let block = engine.block_members().max(1);
    let starts: Vec<usize> = (0..count).step_by(block).collect();
    let started = Instant::now();
    let shared = engine.prepare_shared()?;
    let blocks = starts
        .into_par_iter()
        .map(|start| prepare_block(plan, engine, &shared, start..(start + block).min(count)))
        .collect::<Result<Vec<_>>>()?;
    let setup = started.elapsed().as_secs_f64();
    let started = Instant::now();
    blocks
        .into_par_iter()
        .map(|block| engine.run(block).map(|results| results.len()))
        .collect::<Result<Vec<_>>>()?;
    Ok((setup, started.elapsed().as_secs_f64()))
}

/// Seconds `plan`'s run takes as `harbor simulate --backend cpu` runs it: every member
/// through the CPU path ([`CpuPath::Fast`]) into a [`SimulationWriter`] (NPY arrays and the
/// summary's statistics) in a temporary directory, summary.json included.
pub fn time_simulate<F: Family>(plan: &F) -> Result<f64> {
    let dir = tempfile::tempdir().map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let started = Instant::now();
    let mut writer = SimulationWriter::create(dir.path(), plan)?;
    cpu::run_into(plan, CpuPath::Fast, &mut writer)?;
    let labels = RunLabels {
        backend: "cpu",
        engine: "fast",
        precision: "f64",
        seconds: started.elapsed().as_secs_f64(),
    };
    writer.finish(&labels, plan)?;
    Ok(started.elapsed().as_secs_f64())
}

/// Times the reference integrator on members `0..count` of `plan` (all cores, set-up
/// included: it is part of each member's integration).
pub fn time_reference<F: Family>(plan: &F, count: usize) -> Result<f64> {
    let started = Instant::now();
    (0..count)
        .into_par_iter()
        .map(|i| plan.reference(&plan.member(i)?).map(|_| ()))
        .collect::<Result<Vec<()>>>()?;
    Ok(started.elapsed().as_secs_f64())
}

/// Members of a timing that takes about [`CPU_SECONDS`] at `rate` member-steps per
/// second, at least `floor`, at most `members`.
fn members_for(rate: f64, steps: usize, floor: usize, members: usize) -> usize {
    ((rate * CPU_SECONDS / steps as f64) as usize).clamp(floor.min(members), members)
}

/// Measures `plan` (built by `make(members, steps)` for `case`) on the fast CPU engine,
/// the reference integrator and every GPU context in `gpus`. GPU measurements whose
/// parameters would exceed `max_param_bytes` are skipped with the reason.
pub fn measure<F: Family>(
    case: BenchCase,
    make: impl Fn(usize, usize) -> Result<F>,
    gpus: GpuContexts,
    max_param_bytes: u64,
) -> Result<BenchRow> {
    let plan = make(case.members, case.steps)?;
    let bound = kernel_of(&plan).and_then(GpuKernel::kernel_bound);
    let flops = bound.as_ref().map_or(0, |b| b.flops_per_step);
    let entries = bound.as_ref().map_or(0, |b| b.params.entries());
    let steps = case.steps;
    let threads = rayon::current_num_threads();
    let mut row = BenchRow {
        case,
        measurements: Vec::new(),
        skipped: Vec::new(),
    };
    let cpu_measurement = |backend,
                           device: String,
                           members: usize,
                           seconds: f64,
                           total: f64,
                           setup_share: Option<f64>| {
        let done = (members * steps) as f64;
        Measurement {
            backend,
            precision: "f64",
            device,
            members,
            member_steps_per_second: done / seconds.max(1e-12),
            end_to_end_member_steps_per_second: done / total.max(1e-12),
            setup_share,
            flops_per_member_step: flops,
            bytes_per_member_step: 0,
            flops_per_second: done * flops as f64 / seconds.max(1e-12),
            bytes_per_second: 0.0,
        }
    };
    // The fast engine: a probe sizes a run of about CPU_SECONDS.
    let probe = case.members.min(1024);
    let (setup, stepping) = time_fast(&plan, probe)?;
    let prepared_bytes = (entries * 8).max(1);
    let fast_members = members_for(
        (probe * steps) as f64 / (setup + stepping).max(1e-9),
        steps,
        probe,
        case.members,
    )
    .min((MAX_PREPARED_BYTES / prepared_bytes).max(probe));
    let [setup, stepping] =
        median_of_runs(|| time_fast(&plan, fast_members).map(|(setup, run)| [setup, run]))?;
    let cpu_device = match plan.fast_engine() {
        Some(_) => format!("{}, {threads} threads", SimdLevel::get().name()),
        None => format!("no fast engine: reference, {threads} threads"),
    };
    row.measurements.push(cpu_measurement(
        "cpu",
        cpu_device.clone(),
        fast_members,
        stepping,
        setup + stepping,
        Some(setup / (setup + stepping).max(1e-12)),
    ));
    // The same members as `harbor simulate` runs them: streamed through the CPU path into
    // the NPY files and summary statistics of a temporary directory.
    let simulated = make(fast_members, steps)?;
    let [seconds] = median_of_runs(|| time_simulate(&simulated).map(|seconds| [seconds]))?;
    row.measurements.push(cpu_measurement(
        "simulate",
        format!("{cpu_device}, files written"),
        fast_members,
        seconds,
        seconds,
        None,
    ));
    // The reference integrator.
    if case.reference {
        let probe = case.members.min(16);
        let seconds = time_reference(&plan, probe)?;
        let reference_members = members_for(
            (probe * steps) as f64 / seconds.max(1e-9),
            steps,
            probe,
            case.members,
        );
        let [seconds] = median_of_runs(|| time_reference(&plan, reference_members).map(|s| [s]))?;
        row.measurements.push(cpu_measurement(
            "reference",
            format!("{threads} threads"),
            reference_members,
            seconds,
            seconds,
            None,
        ));
    }
    let bound = match bound {
        Ok(bound) => bound,
        Err(e) => {
            row.skipped.push(format!("gpu: {e}"));
            return Ok(row);
        }
    };
    for ctx in gpus {
        let precision = ctx.precision;
        // The kernel's count is in f64 bytes (every buffer holds reals of the precision).
        let bytes_per_step = bound.bytes_per_step * precision.size() / 8;
        let bytes = (bound.params.entries() * precision.size() * case.members) as u64;
        if bytes > max_param_bytes {
            row.skipped.push(format!(
                "gpu {}: parameters need {:.1} GiB > --max-operator-gib",
                precision.name(),
                bytes as f64 / (1u64 << 30) as f64
            ));
            continue;
        }
        // Warm-up: compiles the pipeline and lets the driver finish any lazy compilation.
        run_into(
            ctx,
            &make(64, 2)?,
            &ExecutorOptions::default(),
            &mut Discard,
        )?;
        let started = Instant::now();
        let stats = run_into(ctx, &plan, &ExecutorOptions::default(), &mut Discard)?;
        let wall = started.elapsed().as_secs_f64();
        let done = (case.members * steps) as f64;
        let kernel = stats.device_seconds.max(1e-12);
        row.measurements.push(Measurement {
            backend: "gpu",
            precision: precision.name(),
            device: ctx.adapter.describe(),
            members: case.members,
            member_steps_per_second: done / kernel,
            end_to_end_member_steps_per_second: done / wall,
            setup_share: Some((1.0 - kernel / wall).max(0.0)),
            flops_per_member_step: flops,
            bytes_per_member_step: bytes_per_step,
            flops_per_second: done * flops as f64 / kernel,
            bytes_per_second: done * bytes_per_step as f64 / kernel,
        });
    }
    Ok(row)
}

/// Adds to `row` the measurement of the workload's hand-written baseline (`description`
/// in the table), `time(count)` being its seconds for members `0..count` on all cores
/// (`None`: none at this size): a probe on at most 16 members sizes a run of about
/// `CPU_SECONDS`.
pub fn measure_baseline(
    row: &mut BenchRow,
    description: &str,
    time: impl Fn(usize) -> Option<Result<f64>>,
) -> Result<()> {
    let steps = row.case.steps;
    let probe = row.case.members.min(16);
    let Some(seconds) = time(probe) else {
        return Ok(());
    };
    let members = members_for(
        (probe * steps) as f64 / seconds?.max(1e-9),
        steps,
        probe,
        row.case.members,
    );
    let Some(seconds) = time(members) else {
        return Ok(());
    };
    let seconds = seconds?.max(1e-12);
    let rate = (members * steps) as f64 / seconds;
    row.measurements.push(Measurement {
        backend: "hand-rust",
        precision: "f64",
        device: format!("{description}, {} threads", rayon::current_num_threads()),
        members,
        member_steps_per_second: rate,
        end_to_end_member_steps_per_second: rate,
        setup_share: None,
        flops_per_member_step: 0,
        bytes_per_member_step: 0,
        flops_per_second: 0.0,
        bytes_per_second: 0.0,
    });
    Ok(())
}

/// The header line of the printed table.
pub fn header() -> String {
    format!(
        "{:<9} {:>3} {:>8} {:>6} {:<11} {:<9} {:<4} {:>13} {:>13} {:>6} {:>8} {:>7} {:>6} {:>8} {:>8}  {}",
        "family",
        "n",
        "members",
        "steps",
        "record",
        "backend",
        "prec",
        "member-st/s",
        "end-to-end",
        "setup",
        "vs cpu",
        "flop/st",
        "B/st",
        "GFLOP/s",
        "GB/s",
        "device (members timed)"
    )
}

/// The lines of one case: one per measurement, then the skipped backends.
pub fn rows(r: &BenchRow) -> Vec<String> {
    let cpu = r
        .measurements
        .iter()
        .find(|m| m.backend == "cpu")
        .map(|m| m.member_steps_per_second);
    let record = if r.case.recording == Recording::default() {
        "all"
    } else if r.case.recording == Recording::FINAL_STATE {
        "final-state"
    } else {
        "some"
    };
    let mut lines: Vec<String> = r
        .measurements
        .iter()
        .map(|m| {
            format!(
                "{:<9} {:>3} {:>8} {:>6} {:<11} {:<9} {:<4} {:>13.3e} {:>13.3e} {:>6} {:>8} {:>7} {:>6} {:>8.2} {:>8}  {} ({})",
                r.case.family,
                r.case.states,
                r.case.members,
                r.case.steps,
                record,
                m.backend,
                m.precision,
                m.member_steps_per_second,
                m.end_to_end_member_steps_per_second,
                m.setup_share
                    .map_or("—".into(), |share| format!("{:.0} %", 100.0 * share)),
                cpu.map_or("—".into(), |c| format!("{:.3}", m.member_steps_per_second / c)),
                m.flops_per_member_step,
                if m.backend == "gpu" {
                    m.bytes_per_member_step.to_string()
                } else {
                    "—".into()
                },
                m.flops_per_second / 1e9,
                if m.bytes_per_second > 0.0 {
                    format!("{:.2}", m.bytes_per_second / 1e9)
                } else {
                    "—".into()
                },
                m.device,
                m.members,
            )
        })
        .collect();
    lines.extend(r.skipped.iter().map(|why| format!("  skipped {why}")));
    lines
}
