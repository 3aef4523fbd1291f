//! The CPU backend: every member integrated in f64, spread over all cores with rayon: by
//! the fast engine (SIMD blocks of members, [`CpuPath::Fast`]) or the family's reference
//! integrator; or the twin of its GPU kernel, which runs through the executor like the GPU
//! ([`super::twin`]). Members are independent (a block's lanes never mix), so results
//! depend neither on the thread count nor on the chunking.

use rayon::prelude::*;

use super::executor::ExecutorOptions;
use crate::error::Result;
use crate::kernels::{CpuPath, Family, FastEngine};
use crate::plan::MemoryBudget;
use crate::plan::ResultSink;
use crate::plan::budget::members_within;

/// Most members per chunk: enough to keep every core busy, few enough that progress moves.
const MAX_CHUNK_MEMBERS: usize = 1 << 16;

/// Members per chunk of a CPU run whose results may take `result_budget` bytes.
pub fn chunk_members<F: Family>(family: &F, result_budget: usize) -> usize {
    let per_member = family.record_spec().member_bytes(family.grid().records());
    members_within(result_budget, per_member).clamp(1, MAX_CHUNK_MEMBERS)
}

/// Streams the run into `sink` in chunks of members whose results fit the default
/// [`MemoryBudget`]'s share.
pub fn run_into<F: Family>(family: &F, path: CpuPath, sink: &mut dyn ResultSink) -> Result<()> {
    run_into_within(family, path, MemoryBudget::default().results(), sink)
}

/// Streams the run into `sink` in chunks of members whose results fit `result_budget`
/// bytes.
pub fn run_into_within<F: Family>(
    family: &F,
    path: CpuPath,
    result_budget: usize,
    sink: &mut dyn ResultSink,
) -> Result<()> {
    if path == CpuPath::Twin {
        let options = ExecutorOptions {
            result_budget: Some(result_budget),
            ..ExecutorOptions::default()
        };
        return super::twin::run_into(family, &options, sink).map(|_| ());
    }
    family.check_stream()?;
    let grid = family.grid();
    let chunk = chunk_members(family, result_budget);
    let total = family.member_count();
    // The fast engine where the family has one and it is asked for, else the reference
    // integrator.
    let engine = match path {
        CpuPath::Fast => family.fast_engine(),
        _ => None,
    };
    let block = engine.map_or(1, |engine| engine.block_members().max(1));
    for first in (0..total).step_by(chunk) {
        let end = (first + chunk).min(total);
        // Every block runs to its end and the first error in member order is reported, so
        // that a failing run names the same member whatever the thread count.
        let blocks: Vec<Result<Vec<_>>> = (first..end)
            .step_by(block)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|start| {
                let members = (start..(start + block).min(end))
                    .map(|i| family.member(i))
                    .collect::<Result<Vec<_>>>()?;
                let mut results = match engine {
                    Some(engine) => engine.run(engine.prepare(members)?)?,
                    None => members
                        .iter()
                        .map(|member| family.reference(member))
                        .collect::<Result<_>>()?,
                };
                for result in &mut results {
                    result.complete_status(grid, family.record_spec());
                }
                Ok(results)
            })
            .collect();
        let blocks = blocks.into_iter().collect::<Result<Vec<_>>>()?;
        let results: Vec<_> = blocks.into_iter().flatten().collect();
        let done = first + results.len();
        sink.accept(first, results)?;
        sink.progress((done * grid.steps) as u64);
    }
    Ok(())
}
