//! How a run is cut for a device: members into chunks whose buffers fit the device's
//! storage binding and the host's result budget, time into dispatches bounded by work, by
//! the loop budget of software adapters and by the record slots a binding holds.

use super::ExecutorOptions;
use crate::error::{Error, Result};
use crate::kernels::KernelSource;
use crate::kernels::Precision;
use crate::plan::StepGrid;

/// Floating-point work per dispatch. Fewer, longer dispatches amortise what a dispatch does
/// once (the private copy of a member's operators, state in and out, the submission): 2^33
/// instead of 2^31 ran 16384 n = 8 linear-PH members recording everything 1.4× faster on
/// llvmpipe (two cores), where a dispatch of 2^33 takes about 0.2–0.9 s of the linear-PH
/// kernels (10–50 GFLOP/s) and up to about 6 s of the contact kernel (n = 8: 1.4 GFLOP/s).
const FLOPS_PER_DISPATCH: usize = 1 << 33;

/// Mesa's llvmpipe (lavapipe) counts the loop passes of an invocation, of all its loops
/// together, and silently leaves every loop once 65535 have run, truncating the run.
pub const LLVMPIPE_LOOP_LIMIT: usize = 65_535;

/// Loop iterations one invocation may execute per dispatch on CPU adapters, counted as
/// `steps · KernelSource::loop_iterations_per_step`: below [`LLVMPIPE_LOOP_LIMIT`] by room
/// for the loops a kernel runs once per dispatch (loading and storing its state), which
/// each family's tests keep within that room.
pub const LOOP_ITERATIONS_PER_DISPATCH: usize = 60_000;

/// How a run is cut into chunks and dispatches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    pub members_per_chunk: usize,
    pub steps_per_dispatch: usize,
    pub records_per_dispatch: usize,
}

/// What bounds a chunk and a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLimits {
    /// Bytes of one storage binding.
    pub binding_bytes: u64,
    /// Loop iterations one invocation may run per dispatch (`Some` on adapters that
    /// truncate long loops, such as llvmpipe).
    pub loop_iterations: Option<usize>,
    /// Members whose results fit the host's result budget.
    pub host_members: usize,
    /// Values of the shared stream per step (its window per dispatch is one binding too).
    pub stream_width: usize,
}

/// Chunk and dispatch sizes for `kernel` (the run's largest variant) over `members`
/// members on `grid`. Every buffer of a chunk fits one binding, with room for at least two
/// record slots, so that a dispatch can always hold a cadence record and the final one.
pub fn chunking(
    kernel: &KernelSource,
    precision: Precision,
    members: usize,
    grid: &StepGrid,
    limits: &ChunkLimits,
    options: &ExecutorOptions,
) -> Result<Chunking> {
    // The kernels' cadence (≤ N, the same records), so that products with it stay in range.
    let (steps, record_every) = (grid.steps, grid.record_stride());
    let size = precision.size() as u64;
    let record_entries = kernel.record.entries().max(1);
    let widest = kernel
        .params
        .entries()
        .max(kernel.state.entries())
        .max(kernel.scratch)
        .max(2 * record_entries) as u64
        * size;
    let by_limit = (limits.binding_bytes / widest) as usize;
    if by_limit == 0 {
        return Err(Error::Gpu(format!(
            "one member needs {widest} bytes per buffer, more than the adapter's {}-byte storage binding",
            limits.binding_bytes
        )));
    }
    // Members per chunk are a u32 in the kernels' dispatch parameters.
    let members_per_chunk = by_limit
        .min(members)
        .min(u32::MAX as usize)
        .min(limits.host_members)
        .min(options.max_chunk_members.unwrap_or(usize::MAX))
        .max(1);
    let flops = kernel.flops_per_step.max(1) * members_per_chunk;
    let mut steps_per_dispatch = (FLOPS_PER_DISPATCH / flops).clamp(1, steps.max(1));
    if let Some(budget) = limits.loop_iterations {
        let per_step = kernel.loop_iterations_per_step.max(1);
        if per_step > budget {
            return Err(Error::Gpu(format!(
                "one step of {} runs {per_step} loop iterations per invocation, more than the {budget} this adapter runs without silently truncating loops; use a composition with fewer stages (scheme.composition), fewer degrees of freedom, or --backend cpu",
                kernel.name
            )));
        }
        steps_per_dispatch = steps_per_dispatch.min(budget / per_step);
    }
    if let Some(cap) = options.max_steps_per_dispatch {
        steps_per_dispatch = steps_per_dispatch.min(cap.max(1));
    }
    // The stream's window of a dispatch fits one binding.
    let stream_step_bytes = limits.stream_width as u64 * size;
    if let Some(by_stream) = limits.binding_bytes.checked_div(stream_step_bytes) {
        let by_stream = by_stream as usize;
        if by_stream == 0 {
            return Err(Error::Gpu(format!(
                "one step's shared values take {stream_step_bytes} bytes, more than the adapter's {}-byte storage binding",
                limits.binding_bytes
            )));
        }
        steps_per_dispatch = steps_per_dispatch.min(by_stream);
    }
    // Windows start at multiples of the kernel's step multiple (its segments): the work and
    // cap bounds are rounded to a whole number of segments, at least one, which the loop
    // budget must allow.
    let multiple = kernel.step_multiple.max(1).min(steps.max(1));
    if steps_per_dispatch < steps {
        steps_per_dispatch = (steps_per_dispatch - steps_per_dispatch % multiple).max(multiple);
    }
    if let Some(budget) = limits.loop_iterations {
        let needed = multiple * kernel.loop_iterations_per_step.max(1);
        if needed > budget {
            return Err(Error::Gpu(format!(
                "one segment of {} ({multiple} steps) runs {needed} loop iterations per invocation, more than the {budget} this adapter runs without silently truncating loops; use shorter segments (gradient.checkpoint_every), fewer steps per solve (a larger scheme.h) or --backend cpu",
                kernel.name
            )));
        }
    }
    // A window of L steps holds at most min(L, ⌈L / every⌉ + 1) records: ⌈L / every⌉
    // multiples of the cadence and the final step. With `capacity` ≥ 2 slots,
    // L ≤ (capacity − 1) · every keeps them in.
    let record_bytes = record_entries as u64 * size * members_per_chunk as u64;
    let record_capacity = (limits.binding_bytes / record_bytes) as usize;
    debug_assert!(record_capacity >= 2);
    steps_per_dispatch = steps_per_dispatch.min((record_capacity - 1).saturating_mul(record_every));
    let records_per_dispatch = (steps_per_dispatch.div_ceil(record_every) + 1)
        .min(steps_per_dispatch)
        .min(record_capacity);
    Ok(Chunking {
        members_per_chunk,
        steps_per_dispatch,
        records_per_dispatch,
    })
}
