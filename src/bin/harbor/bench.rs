//! `harbor bench`: member-steps per second of the CPU and GPU paths side by side.

use std::path::Path;

use harbor::backend::gpu::context::AdapterSelector;
use harbor::backend::gpu::{GpuContext, Precision};
use harbor::bench::Workload;
use harbor::plan::Recording;
use harbor::{Error, Result};

use crate::{BenchFamily, PrecisionArg};

/// Measures every (precision, state size, ensemble size) case on the CPU path and, where
/// an adapter opens in that precision, the GPU path; prints one row per case and writes
/// them as JSON to `json_path` if given, saying where.
#[expect(clippy::too_many_arguments, reason = "one per command-line option")]
pub fn bench(
    family: BenchFamily,
    composition: &str,
    members: &[usize],
    states: &[usize],
    precisions: &[PrecisionArg],
    steps: usize,
    recording: Recording,
    adapter: Option<&str>,
    max_operator_gib: f64,
    json_path: Option<&Path>,
) -> Result<()> {
    if steps == 0 {
        return Err(Error::invalid("--steps", "must be ≥ 1, got 0"));
    }
    let workload = match family {
        BenchFamily::LinearPh => Workload::LinearPhChain,
        BenchFamily::Contact => Workload::ContactChain {
            composition: composition.to_string(),
        },
    };
    for &n in states {
        workload.check_size(n)?;
    }
    let selector = AdapterSelector::resolve(adapter);
    let mut rows = Vec::new();
    let max_bytes = (max_operator_gib * (1u64 << 30) as f64) as u64;
    for &precision in precisions {
        let precision = Precision::from(precision);
        let gpu = match GpuContext::open_with(selector.as_ref(), Some(precision)) {
            Ok(ctx) => {
                eprintln!("GPU: {} ({})", ctx.adapter.describe(), precision.name());
                Some(ctx)
            }
            Err(e) => {
                eprintln!("GPU {} unavailable: {e}", precision.name());
                None
            }
        };
        for &n in states {
            for &count in members {
                let case = harbor::bench::BenchCase {
                    family: workload.family(),
                    members: count,
                    states: n,
                    precision,
                    steps,
                    recording,
                };
                let row = workload.measure(case, gpu.as_ref(), max_bytes)?;
                if rows.is_empty() {
                    say!("{}", harbor::bench::header());
                }
                say!("{}", harbor::bench::row(&row));
                rows.push(row);
            }
        }
    }
    say!(
        "rates in member-steps per second; GPU kernel = dispatch time only; CPU = f64 reference on {} threads",
        rayon::current_num_threads()
    );
    if let Some(path) = json_path {
        let text = serde_json::to_string_pretty(&rows).expect("rows serialise");
        std::fs::write(path, text + "\n").map_err(|e| Error::io(path, e))?;
        say!("wrote {}", path.display());
    }
    Ok(())
}
