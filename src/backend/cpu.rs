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

/// Bytes of results a span holds at most (but one block): a run that records much per
/// member hands its results to the sink in pieces this small, so that the sink writes a
/// span while the next are computed (rather than all of them after the last block), and
/// the spans' buffers are reused from span to span instead of faulted in fresh.
const SPAN_RESULT_BYTES: usize = 4 << 20;

/// Members of a span over `steps` steps, each with `member_bytes` bytes of results: whole
/// blocks (at least one), at least [`SPAN_MEMBER_STEPS`] of work unless that would take
/// more than [`SPAN_RESULT_BYTES`].
fn span_members(block: usize, steps: usize, member_bytes: usize) -> usize {
    let for_work = SPAN_MEMBER_STEPS.div_ceil(steps.max(1));
    let within_bytes = SPAN_RESULT_BYTES / member_bytes.max(1);
    for_work.min(within_bytes).div_ceil(block).max(1) * block
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
    let member_bytes = spec.member_bytes(records);
    let span = span_members(block, grid.steps, member_bytes).min(chunk);
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
    let mut span_results: Option<ResultBlock> = None;
    let mut take = |results: ResultBlock, sink: &mut dyn ResultSink| -> Result<()> {
        let taken = first + span_results.as_ref().map_or(0, ResultBlock::len) + results.len();
        let span_done = taken == total || taken.is_multiple_of(span);
        let span_so_far = match span_results.take() {
            // A block that is a whole span goes to the sink as it is, without a copy.
            None if span_done => results,
            None => {
                let mut started =
                    ResultBlock::with_capacity(spec, records, span.min(total - first));
                started.append(results);
                started
            }
            Some(mut started) => {
                started.append(results);
                started
            }
        };
        if span_done {
            sink.accept(first, span_so_far)?;
            first = taken;
        } else {
            span_results = Some(span_so_far);
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

#[cfg(test)]
mod tests {
    use super::{SPAN_MEMBER_STEPS, SPAN_RESULT_BYTES, span_members};

    /// A span is whole blocks: enough for [`SPAN_MEMBER_STEPS`] of work where its results
    /// are small, as many as [`SPAN_RESULT_BYTES`] holds (rounded up to a block) where they
    /// are large, and one block where a member's results alone exceed that.
    #[test]
    fn spans_are_whole_blocks_of_bounded_results() {
        let block = 32;
        // The peer benchmark's shape: 600 steps, final states and totals only.
        let small = span_members(block, 600, 256);
        assert_eq!(
            small,
            SPAN_MEMBER_STEPS.div_ceil(600).div_ceil(block) * block
        );
        // 200 steps recording four energies and two outputs at every step.
        let member_bytes = 200 * 6 * 8;
        let large = span_members(block, 200, member_bytes);
        assert_eq!(large % block, 0);
        assert!(large * member_bytes <= SPAN_RESULT_BYTES + block * member_bytes);
        assert!(large * member_bytes > SPAN_RESULT_BYTES);
        assert!(large < SPAN_MEMBER_STEPS.div_ceil(200));
        assert_eq!(span_members(block, 10, 2 * SPAN_RESULT_BYTES), block);
    }
}
