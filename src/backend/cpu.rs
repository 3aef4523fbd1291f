//! The CPU backend: every member integrated in f64, spread over all cores with rayon: by
//! the fast engine (SIMD blocks of members, [`CpuPath::Fast`]) or the family's reference
//! integrator; or the twin of its GPU kernel, which runs through the executor like the GPU
//! ([`super::twin`]). Members are independent (a block's lanes never mix), so results
//! depend neither on the thread count nor on the chunking.

use rayon::prelude::*;

use super::executor::ExecutorOptions;
use crate::error::Result;
use crate::kernels::family::prepare_block;
use crate::kernels::{CpuPath, Family, FastEngine};
use crate::plan::MemoryBudget;
use crate::plan::budget::members_within;
use crate::plan::{ResultBlock, ResultSink};

/// Most members per chunk: enough to keep every core busy, few enough that the results in
/// flight stay small.
const MAX_CHUNK_MEMBERS: usize = 1 << 16;

/// The least blocks per thread in a wave, the unit between two progress reports (and so
/// the points where a run can be stopped, [`ResultSink::progress`]): enough that the cores
/// stay busy to the end of each wave.
const WAVE_BLOCKS_PER_THREAD: usize = 4;

/// Member-steps a wave holds at least: its fork and join (tens of microseconds) stay a
/// small part of its work (2.6 ms at the fastest engine's 1.6e9 member-steps/s), and a
/// wave of long runs is still short (about a second at 4e6 member-steps/s).
const WAVE_MEMBER_STEPS: usize = 1 << 22;

/// Members of a wave over `steps` steps: as many whole blocks on every thread (so that
/// blocks of equal cost end together), at least [`WAVE_BLOCKS_PER_THREAD`] per thread and
/// at least [`WAVE_MEMBER_STEPS`] of work.
fn wave_members(block: usize, steps: usize) -> usize {
    let round = block * rayon::current_num_threads().max(1);
    let by_work = WAVE_MEMBER_STEPS.div_ceil(steps.max(1)).div_ceil(round) * round;
    (round * WAVE_BLOCKS_PER_THREAD).max(by_work)
}

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
    // What the engine's blocks share, prepared once for the whole run.
    let shared = engine.map(FastEngine::prepare_shared).transpose()?;
    let block = engine.map_or(1, |engine| engine.block_members().max(1));
    let wave = wave_members(block, grid.steps);
    let (spec, records) = (family.record_spec(), grid.records());
    for first in (0..total).step_by(chunk) {
        let end = (first + chunk).min(total);
        let mut results = ResultBlock::with_capacity(spec, records, end - first);
        // Waves of blocks, each spread over all cores, with progress reported between
        // them. Every block of a wave runs to its end and the first error in member order
        // is reported, so that a failing run names the same member whatever the thread
        // count.
        for wave_start in (first..end).step_by(wave) {
            let wave_end = (wave_start + wave).min(end);
            let blocks: Vec<Result<ResultBlock>> = (wave_start..wave_end)
                .step_by(block)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|start| {
                    let members = start..(start + block).min(wave_end);
                    let mut results = match (engine, &shared) {
                        (Some(engine), Some(shared)) => {
                            engine.run(prepare_block(family, engine, shared, members)?)?
                        }
                        _ => {
                            let results = members
                                .map(|i| family.member(i))
                                .collect::<Result<Vec<_>>>()?
                                .iter()
                                .map(|member| family.reference(member))
                                .collect::<Result<_>>()?;
                            ResultBlock::from_members(spec, records, results)
                        }
                    };
                    results.complete_status(grid, spec);
                    Ok(results)
                })
                .collect();
            for block in blocks {
                results.append(block?);
            }
            sink.progress((wave_end * grid.steps) as u64)?;
        }
        sink.accept(first, results)?;
    }
    Ok(())
}
