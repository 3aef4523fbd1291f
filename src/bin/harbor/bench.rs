//! `harbor bench`: member-steps per second of the fast CPU engine, the CPU reference
//! integrator and the GPU side by side, for the built-in chains or a configuration.

use std::path::Path;

use harbor::backend::gpu::{GpuContext, Precision};
use harbor::bench::machine_load::{CpuTimes, MachineLoad, OtherWork};
use harbor::bench::{BenchCase, BenchRow, Workload};
use harbor::families::{FamilyWorkload, WorkloadOptions};
use harbor::io::Config;
use harbor::plan::Recording;
use harbor::{Error, Result};

use crate::PrecisionArg;

/// What to measure: the chains of a family at given sizes, or one configuration.
pub enum BenchTarget<'a> {
    Chains {
        family: &'a str,
        composition: &'a str,
        members: &'a [usize],
        states: &'a [usize],
        steps: usize,
        recording: Recording,
    },
    Config {
        path: &'a Path,
        overrides: &'a [String],
    },
}

/// Which backends a benchmark measures besides the fast CPU engine.
pub struct BenchBackends<'a> {
    /// Measure the reference integrator.
    pub reference: bool,
    /// GPU precisions to open an adapter in.
    pub precisions: &'a [PrecisionArg],
}

/// Measures every case on the fast CPU engine, the reference integrator and, for each
/// precision an adapter opens in, the GPU; prints one line per backend and writes the rows
/// as JSON to `json_path` if given, saying where.
pub fn bench(
    target: BenchTarget,
    backends: BenchBackends,
    adapter: Option<&str>,
    max_operator_gib: f64,
    json_path: Option<&Path>,
) -> Result<()> {
    let mut cases: Vec<(Workload, BenchCase)> = Vec::new();
    match target {
        BenchTarget::Chains {
            family,
            composition,
            members,
            states,
            steps,
            recording,
        } => {
            if steps == 0 {
                return Err(Error::invalid("--steps", "must be ≥ 1, got 0"));
            }
            let options = WorkloadOptions {
                composition: composition.to_string(),
            };
            let workload = Workload::Family(FamilyWorkload::new(family, &options)?);
            for &n in states {
                workload.check_size(n)?;
            }
            for &n in states {
                for &count in members {
                    let case = BenchCase {
                        family: workload.family()?,
                        members: count,
                        states: n,
                        steps,
                        recording,
                        reference: backends.reference,
                    };
                    cases.push((workload.clone(), case));
                }
            }
        }
        BenchTarget::Config { path, overrides } => {
            let config = Config::load(path, overrides)?;
            let mut case = Workload::config_case(&config)?;
            case.reference = backends.reference;
            cases.push((Workload::Config(Box::new(config)), case));
        }
    }
    let selector = crate::environment::adapter_selector(adapter);
    let mut gpus = Vec::new();
    for &precision in backends.precisions {
        let precision = Precision::from(precision);
        match GpuContext::open_with(selector.as_ref(), Some(precision)) {
            Ok(ctx) => {
                eprintln!("GPU: {} ({})", ctx.adapter.describe(), precision.name());
                gpus.push(ctx);
            }
            Err(e) => eprintln!("GPU {} unavailable: {e}", precision.name()),
        }
    }
    let max_bytes = (max_operator_gib * (1u64 << 30) as f64) as u64;
    let mut rows = Vec::new();
    let load = MachineLoad::now(rayon::current_num_threads());
    say!("{}", load.describe());
    if let Some(warning) = load.warning() {
        say!("{warning}");
    }
    say!("{}", harbor::bench::header());
    for (workload, case) in cases {
        let load = MachineLoad::now(load.threads);
        let before = CpuTimes::now();
        let row = workload.measure(case, &gpus, max_bytes)?;
        let other_work = before
            .zip(CpuTimes::now())
            .and_then(|(before, after)| before.others_between(&after, load.cpus))
            .map(|cpus| OtherWork {
                other_processes_cpus: cpus,
                cpus: load.cpus,
            });
        for line in harbor::bench::rows(&row) {
            say!("{line}");
        }
        if let Some(warning) = other_work.and_then(|work| work.warning()) {
            say!("{warning}");
        }
        rows.push(with_machine(&row, &load, other_work));
    }
    say!(
        "member-st/s: member-steps per second of the integration alone (CPU: operators built beforehand; GPU: kernel time); end-to-end adds the set-up (and uploads, read-backs); setup: its share of the end-to-end time; simulate: the CPU path as harbor simulate runs it, files and statistics written (end to end); vs cpu: against the fast CPU engine; flop/st: operations per member-step counted from the GPU kernel's step (every row's GFLOP/s at that count); B/st and GB/s: bytes the kernel moves from GPU global memory (its own count); CPU figures of runs shorter than a quarter second: medians of repeated runs"
    );
    if let Some(path) = json_path {
        let text = serde_json::to_string_pretty(&rows).expect("rows serialise");
        std::fs::write(path, text + "\n").map_err(|e| Error::io(path, e))?;
        say!("wrote {}", path.display());
    }
    Ok(())
}

/// `row` as JSON with `"machine"`: the CPUs, threads, the 1-minute load before the case and
/// the CPUs other processes kept busy during it (`null` where unknown).
fn with_machine(
    row: &BenchRow,
    load: &MachineLoad,
    other_work: Option<OtherWork>,
) -> serde_json::Value {
    let mut value = serde_json::to_value(row).expect("rows serialise");
    value["machine"] = serde_json::json!({
        "cpus": load.cpus,
        "threads": load.threads,
        "load_1min": load.load_1min,
        "other_processes_cpus": other_work.map(|work| work.other_processes_cpus),
    });
    value
}
