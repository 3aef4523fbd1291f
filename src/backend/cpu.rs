//! The CPU backend: every member integrated in f64, spread over all cores with rayon: by
//! the fast engine (SIMD blocks of members, [`CpuPath::Fast`]) or the family's reference
//! integrator; or the twin of its GPU kernel, which runs through the executor like the GPU
//! ([`super::twin`]). Members are independent (a block's lanes never mix), so results
//! depend neither on the thread count nor on the chunking.

use std::ops::Range;

use super::executor::ExecutorOptions;
use super::ordered_blocks::{run_in_order, run_in_order_on_pool};
use crate::error::Result;
use crate::kernels::family::prepare_block;
use crate::kernels::{CpuPath, Family, FastEngine};
use crate::plan::MemoryBudget;
use crate::plan::budget::members_within;
use crate::plan::{ResultBlock, ResultSink};

/// Most members per chunk, the most a span holds: few enough that the results in flight
/// (a span being filled, the one at the sink and the blocks running) stay small.
const MAX_CHUNK_MEMBERS: usize = 1 << 16;

/// Member-steps a span holds at least, the unit handed to the sink: the sink's work per
/// call stays a small part of its work (2.6 ms at the fastest engine's 1.6e9
/// member-steps/s). The sink's work on one span overlaps the blocks of the next, so only
/// the last span's is not hidden.
const SPAN_MEMBER_STEPS: usize = 1 << 22;

/// Members of a span over `steps` steps: whole blocks, at least [`SPAN_MEMBER_STEPS`] of
/// work.
fn span_members(block: usize, steps: usize) -> usize {
    SPAN_MEMBER_STEPS.div_ceil(steps.max(1)).div_ceil(block) * block
}

/// Blocks in flight per thread where a span holds that many: the caller's thread wakes once
/// per half window to take the results, so a wide window means few wake-ups.
const BLOCKS_IN_FLIGHT_PER_THREAD: usize = 8;

/// Most blocks spawned and not yet taken, of spans of `span_blocks` blocks:
/// [`BLOCKS_IN_FLIGHT_PER_THREAD`] per thread, but no more than a span holds (so that the
/// blocks in flight hold at most a span's results), and at least two per thread.
fn blocks_in_flight(span_blocks: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    (BLOCKS_IN_FLIGHT_PER_THREAD * threads)
        .min(span_blocks)
        .max(2 * threads)
}

/// Most members of a block of the reference integrator: a few, so that the cost of a
/// block's job stays small beside its members' work.
const MAX_REFERENCE_BLOCK_MEMBERS: usize = 16;

/// Members of a reference integrator's block among `total`: at most
/// [`MAX_REFERENCE_BLOCK_MEMBERS`], and at least eight blocks per thread where there are
/// enough members, so that members of very different cost still spread over every core.
fn reference_block_members(total: usize) -> usize {
    (total / (8 * rayon::current_num_threads().max(1))).clamp(1, MAX_REFERENCE_BLOCK_MEMBERS)
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
    let block = match engine {
        Some(engine) => engine.block_members().max(1),
        None => reference_block_members(total),
    };
    let (spec, records) = (family.record_spec(), grid.records());
    // Spans handed to the sink as soon as their blocks are done, each within the results
    // budget's chunk, in blocks.
    let span = span_members(block, grid.steps).min(chunk);
    let blocks: Vec<Range<usize>> = (0..total)
        .step_by(span)
        .flat_map(|start| {
            let end = (start + span).min(total);
            (start..end)
                .step_by(block)
                .map(move |b| b..(b + block).min(end))
        })
        .collect();
    let run_block = |members: Range<usize>| -> Result<ResultBlock> {
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
    };
    // The blocks run on all cores with no barrier between them and are taken in member
    // order (so that a failing run names the same member whatever the thread count); a
    // span goes to the sink as soon as its last block is taken, while the next blocks run,
    // and progress is reported after every block (a stop then waits only for the blocks in
    // flight).
    let mut first = 0;
    let mut span_results = ResultBlock::with_capacity(spec, records, span.min(total));
    let mut take = |results: ResultBlock, sink: &mut dyn ResultSink| -> Result<()> {
        span_results.append(results);
        let taken = first + span_results.len();
        if taken == total || taken.is_multiple_of(span) {
            let next = ResultBlock::with_capacity(spec, records, span.min(total - taken));
            sink.accept(first, std::mem::replace(&mut span_results, next))?;
            first = taken;
        }
        sink.progress((taken * grid.steps) as u64)
    };
    let window = blocks_in_flight(span.div_ceil(block));
    let run = |b: usize| run_block(blocks[b].clone());
    match sink.as_send() {
        // Taken on a pool thread: no thread beside the pool's takes a core to take them.
        Some(sink) => {
            run_in_order_on_pool(blocks.len(), window, run, |results| take(results, sink))
        }
        None => run_in_order(blocks.len(), window, run, |results| take(results, sink)),
    }
}
