//! How a run is cut for the GPU: members into chunks whose buffers fit the adapter's
//! storage binding and the host's result budget, time into dispatches bounded by work, by
//! the loop budget of software adapters and by the record slots a binding holds.

use super::context::Precision;
use super::executor::GpuRunOptions;
use crate::error::{Error, Result};
use crate::kernels::KernelSource;
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
    options: &GpuRunOptions,
) -> Result<Chunking> {
    // The kernels' cadence (≤ N, the same records), so that products with it stay in range.
    let (steps, record_every) = (grid.steps, grid.record_stride());
    let size = precision.size() as u64;
    let record_entries = kernel.record.entries().max(1);
    let widest = kernel
        .params
        .entries()
        .max(kernel.state.entries())
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
                "one segment of {} ({multiple} steps) runs {needed} loop iterations per invocation, more than the {budget} this adapter runs without silently truncating loops; use shorter segments (gradient.checkpoint_every) or --backend cpu",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear_ph::shape::LinearPhShape;

    fn limits(binding_bytes: u64) -> ChunkLimits {
        ChunkLimits {
            binding_bytes,
            loop_iterations: Some(LOOP_ITERATIONS_PER_DISPATCH),
            host_members: usize::MAX,
            stream_width: 0,
        }
    }

    /// A long single-member run with a wide stream: the stream window of a dispatch fits
    /// the binding, so the dispatch is cut below what the work bound alone would allow.
    #[test]
    fn the_stream_window_fits_the_binding() {
        let kernel = shape(2, 2, 0, 2, false);
        let g = grid(1 << 24, 1 << 24);
        let binding = 1 << 20;
        let stream_width = 16;
        let c = chunking(
            &kernel,
            Precision::F64,
            1,
            &g,
            &ChunkLimits {
                stream_width,
                loop_iterations: None,
                ..limits(binding)
            },
            &GpuRunOptions::default(),
        )
        .unwrap();
        assert!(c.steps_per_dispatch * stream_width * 8 <= binding as usize);
        assert_eq!(
            c.steps_per_dispatch,
            (binding as usize) / (stream_width * 8)
        );
    }

    /// A one-degree-of-freedom contact kernel: its record slot is the widest buffer, so the
    /// binding size sets the number of slots.
    fn one_dof_contact_kernel() -> KernelSource {
        use crate::families::contact::{ContactShape, TimeChannels};
        ContactShape {
            dof: 1,
            harmonic: true,
            quartic: false,
            pendulum: false,
            kepler: false,
            time: TimeChannels::default(),
            stages: 1,
            herglotz: false,
        }
        .kernel()
    }

    fn grid(steps: usize, record_every: usize) -> StepGrid {
        StepGrid {
            h: 0.01,
            steps,
            record_every,
        }
    }

    fn shape(
        states: usize,
        stages: usize,
        inputs: usize,
        rank: usize,
        cooperative: bool,
    ) -> KernelSource {
        LinearPhShape {
            states,
            stages,
            inputs,
            rank,
            cooperative,
            recording: crate::plan::Recording::default(),
        }
        .kernel()
    }

    /// The most record points any window of `steps_per_dispatch` consecutive steps holds
    /// on `grid`, counted from the grid's actual record points.
    fn most_records_per_window(grid: &StepGrid, steps_per_dispatch: usize) -> usize {
        let points = grid.record_points();
        (0..grid.steps)
            .step_by(steps_per_dispatch)
            .map(|begin| {
                points
                    .iter()
                    .filter(|&&k| k > begin && k <= begin + steps_per_dispatch)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    /// Chunks follow the storage-binding limit: with a 1 MiB binding, an ensemble of a
    /// million 2-state members is cut so that every buffer of a chunk fits, and every
    /// dispatch's records fit the record slots.
    #[test]
    fn chunks_fit_the_binding_limit() {
        let kernel = shape(2, 2, 0, 2, false);
        let binding = 1 << 20;
        for (steps, every) in [(1000, 10), (1000, 1), (997, 13)] {
            let g = grid(steps, every);
            let c = chunking(
                &kernel,
                Precision::F64,
                1 << 20,
                &g,
                &limits(binding),
                &GpuRunOptions::default(),
            )
            .unwrap();
            let widest = kernel
                .params
                .entries()
                .max(kernel.state.entries())
                .max(kernel.record.entries())
                * 8;
            assert!(c.members_per_chunk * widest <= binding as usize);
            assert!(c.members_per_chunk < 1 << 20 && c.members_per_chunk > 1000);
            let record_bytes =
                c.records_per_dispatch * kernel.record.entries() * 8 * c.members_per_chunk;
            assert!(
                record_bytes <= binding as usize,
                "records of a dispatch fit: {record_bytes}"
            );
            let needed = most_records_per_window(&g, c.steps_per_dispatch);
            assert!(
                c.records_per_dispatch >= needed,
                "{steps} steps every {every}: {} slots for {needed} records",
                c.records_per_dispatch
            );
        }
    }

    /// Dispatches stay under the per-invocation loop budget for both kernels.
    #[test]
    fn dispatches_respect_the_loop_budget() {
        let g = grid(1_000_000, 1_000_000);
        for kernel in [
            shape(2, 2, 1, 1, false),
            shape(32, 4, 1, 16, false),
            shape(100, 2, 1, 50, true),
        ] {
            let c = chunking(
                &kernel,
                Precision::F64,
                4,
                &g,
                &limits(1 << 27),
                &GpuRunOptions::default(),
            )
            .unwrap();
            assert!(
                c.steps_per_dispatch * kernel.loop_iterations_per_step
                    <= LOOP_ITERATIONS_PER_DISPATCH,
                "{}: {} steps × {} iterations",
                kernel.name,
                c.steps_per_dispatch,
                kernel.loop_iterations_per_step
            );
            assert!(c.steps_per_dispatch >= 1);
        }
    }

    /// When the record slots are the widest buffer (a one-degree-of-freedom contact
    /// member), chunks still leave room for two slots, so that a dispatch ending off the
    /// cadence holds its last cadence record and the final one.
    #[test]
    fn two_record_slots_always_fit() {
        let kernel = one_dof_contact_kernel();
        assert!(kernel.record.entries() >= kernel.state.entries());
        let binding = 1 << 20;
        for (steps, every) in [(15, 10), (10, 10), (7, 3), (1000, 1)] {
            let g = grid(steps, every);
            let c = chunking(
                &kernel,
                Precision::F64,
                1 << 30,
                &g,
                &limits(binding),
                &GpuRunOptions::default(),
            )
            .unwrap();
            let slots = c.records_per_dispatch;
            assert!(slots * kernel.record.entries() * 8 * c.members_per_chunk <= binding as usize);
            assert!(
                slots >= most_records_per_window(&g, c.steps_per_dispatch),
                "{steps} steps every {every}: {slots} slots, {} steps per dispatch",
                c.steps_per_dispatch
            );
        }
    }

    /// Every dispatch window of every grid has slots for all its records, whatever the
    /// dispatch length, cadence and binding size (brute force over small cases).
    #[test]
    fn record_slots_cover_every_window() {
        let kernel = one_dof_contact_kernel();
        let record = kernel.record.entries() as u64 * 8;
        for steps in 1..40 {
            for every in 1..12 {
                for cap in 1..15 {
                    for slots in 2..6 {
                        let g = grid(steps, every);
                        let options = GpuRunOptions {
                            max_chunk_members: Some(1),
                            max_steps_per_dispatch: Some(cap),
                            ..Default::default()
                        };
                        let c = chunking(
                            &kernel,
                            Precision::F64,
                            1,
                            &g,
                            &limits(slots * record),
                            &options,
                        )
                        .unwrap();
                        let needed = most_records_per_window(&g, c.steps_per_dispatch);
                        assert!(
                            c.records_per_dispatch >= needed
                                && c.records_per_dispatch as u64 <= slots,
                            "steps {steps} every {every} cap {cap} binding {slots} slots: {c:?} for {needed} records"
                        );
                    }
                }
            }
        }
    }

    /// A step that alone exceeds the loop budget is an error on adapters that truncate
    /// loops, and fine on the others.
    #[test]
    fn a_step_beyond_the_loop_budget_is_refused_where_loops_are_truncated() {
        let mut kernel = shape(2, 2, 1, 1, false);
        kernel.loop_iterations_per_step = LOOP_ITERATIONS_PER_DISPATCH + 1;
        let e = chunking(
            &kernel,
            Precision::F64,
            4,
            &grid(10, 1),
            &limits(1 << 27),
            &GpuRunOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("loop iterations per invocation") && e.contains("scheme.composition"),
            "{e}"
        );
        let unlimited = ChunkLimits {
            loop_iterations: None,
            ..limits(1 << 27)
        };
        let c = chunking(
            &kernel,
            Precision::F64,
            4,
            &grid(10, 1),
            &unlimited,
            &GpuRunOptions::default(),
        )
        .unwrap();
        assert_eq!(c.steps_per_dispatch, 10);
    }

    /// A member wider than a binding is a clear error.
    #[test]
    fn members_larger_than_a_binding_are_rejected() {
        let kernel = shape(128, 4, 4, 128, true);
        let e = chunking(
            &kernel,
            Precision::F64,
            4,
            &grid(10, 1),
            &limits(4096),
            &GpuRunOptions::default(),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("more than the adapter's 4096-byte storage binding"),
            "{e}"
        );
    }
}
