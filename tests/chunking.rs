//! The chunking of a run (members per chunk, steps and record slots per dispatch) against
//! the kernels of the families: every buffer within the binding limit, every window within
//! the loop budget where loops are truncated, and record slots for every record point.

use harbor::backend::executor::chunking::{ChunkLimits, LOOP_ITERATIONS_PER_DISPATCH, chunking};
use harbor::backend::gpu::ExecutorOptions;
use harbor::backend::gpu::Precision;
use harbor::kernels::KernelSource;
use harbor::linear_ph::shape::LinearPhShape;
use harbor::plan::StepGrid;

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
        &ExecutorOptions::default(),
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
    use harbor::contact::{ContactShape, TimeChannels};
    ContactShape {
        dof: 1,
        harmonic: true,
        quartic: false,
        pendulum: false,
        kepler: false,
        expression: None,
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
        recording: harbor::plan::Recording::default(),
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
            &ExecutorOptions::default(),
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
            &ExecutorOptions::default(),
        )
        .unwrap();
        assert!(
            c.steps_per_dispatch * kernel.loop_iterations_per_step <= LOOP_ITERATIONS_PER_DISPATCH,
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
            &ExecutorOptions::default(),
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
                    let options = ExecutorOptions {
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
                        c.records_per_dispatch >= needed && c.records_per_dispatch as u64 <= slots,
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
        &ExecutorOptions::default(),
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
        &ExecutorOptions::default(),
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
        &ExecutorOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("more than the adapter's 4096-byte storage binding"),
        "{e}"
    );
}
