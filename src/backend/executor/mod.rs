//! The executor, one for every model family and every place a chunk runs: runs any
//! [`Family`] with its kernel over chunks of members, on a GPU adapter (the WGSL kernel) or
//! on the CPU (the kernel's twin, [`crate::backend::twin`]), in four stages. A
//! [`ChunkDevice`] holds a chunk's buffers and runs a window; everything else is here.
//!
//! 1. **Plan** ([`plan_chunks`]): members are cut into chunks sized by the device's
//!    binding limit and by the host's result budget (or an explicit cap); steps into
//!    dispatch windows bounded by work and by the per-invocation loop budget.
//! 2. **Prepare and upload** (`chunk_stage`): per chunk the family draws its members and
//!    packs its kernel variant's parameters and initial state; the host converts them to
//!    the run's precision, the device creates the buffers. The next chunk is prepared on a
//!    thread of its own while the current one is on the device.
//! 3. **Dispatch**: a family walks the grid in one or more passes ([`GpuKernel::passes`]: a
//!    forward sweep, then a backward one for adjoints), each dispatch told its pass; the
//!    state persists across passes. Windows run back to back: the next window's shared
//!    values are sampled and queued while the current one runs, with at most two windows in
//!    flight.
//! 4. **Read back**: each window of the first pass copies its records into one of two
//!    read-back buffers in turn, decoded through the family's record layout while the next
//!    window runs; the chunk's final state at its end.

pub mod chunk_stage;
pub mod chunking;
pub mod conversion;
pub mod device;

use std::borrow::Cow;
use std::ops::Range;
use std::time::Instant;

use rayon::prelude::*;

use chunk_stage::PreparedChunk;
use chunking::{ChunkLimits, Chunking, chunking};
use device::{ChunkDevice, RecordCopy, Window};

use crate::error::{Error, Num, Result};
use crate::kernels::abi::DispatchParams;
use crate::kernels::family::kernel_of;
use crate::kernels::{Direction, Family, GpuKernel, KernelSource, MemberView, Precision};
use crate::plan::MemoryBudget;
use crate::plan::budget::members_within;
use crate::plan::record::nonfinite_step;
use crate::plan::{MemberResult, ResultBlock, ResultSink, StepGrid};
use crate::results::Results;

/// Knobs of a run through the executor; the defaults derive everything from the device's
/// limits.
#[derive(Debug, Clone, Default)]
pub struct ExecutorOptions {
    /// Cap on members per chunk (below what the limits allow); tests use it to force
    /// chunking.
    pub max_chunk_members: Option<usize>,
    /// Cap on steps per dispatch.
    pub max_steps_per_dispatch: Option<usize>,
    /// Bytes of results held on the host before they go to the sink (default: the default
    /// [`MemoryBudget`]'s share).
    pub result_budget: Option<usize>,
}

impl ExecutorOptions {
    /// These options with results held within `budget`'s share.
    pub fn within(&self, budget: &MemoryBudget) -> ExecutorOptions {
        ExecutorOptions {
            result_budget: Some(budget.results()),
            ..self.clone()
        }
    }
}

/// Where a run through the executor spent its time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ExecutorStats {
    /// Host side: drawing members, packing and converting their parameters (ahead of the
    /// device, on a thread of its own), creating the buffers and uploading them.
    pub prepare_seconds: f64,
    /// From the first submission of each chunk's windows to the completion of its last:
    /// the windows run back to back while the host samples inputs and decodes records.
    pub device_seconds: f64,
    /// Copying records and states back and decoding them.
    pub readback_seconds: f64,
    pub dispatches: usize,
    pub chunks: usize,
    /// Floating-point operations per member-step of the largest kernel variant.
    pub flops_per_step: usize,
}

/// Runs every member of `family` on `device` and collects the results.
pub fn run<D: ChunkDevice, F: Family>(
    device: &D,
    family: &F,
    options: &ExecutorOptions,
) -> Result<Results> {
    let mut members = Vec::with_capacity(family.member_count());
    run_into(device, family, options, &mut members)?;
    Ok(Results::new(
        family,
        &device.label(),
        device.precision(),
        members,
    ))
}

/// The run's largest kernel variant and how the run is cut into chunks and dispatches on
/// `device`.
pub fn plan_chunks<D: ChunkDevice, F: Family>(
    device: &D,
    family: &F,
    options: &ExecutorOptions,
) -> Result<(KernelSource, Chunking)> {
    let grid = family.grid();
    let bound = kernel_of(family)?.kernel_bound()?;
    let per_member = family.record_spec().member_bytes(grid.records());
    let result_budget = options
        .result_budget
        .unwrap_or_else(|| MemoryBudget::default().results());
    let limits = ChunkLimits {
        binding_bytes: device.binding_bytes(),
        loop_iterations: device.loop_budget(),
        host_members: members_within(result_budget, per_member),
        stream_width: family.shared_stream().width(),
    };
    let plan = chunking(
        &bound,
        device.precision(),
        family.member_count(),
        grid,
        &limits,
        options,
    )?;
    Ok((bound, plan))
}

/// Device bytes of one chunk's buffers under `plan`: params, state, records, the two
/// read-back buffers, the stream window, constants, scratch and dispatch parameters.
pub fn chunk_device_bytes<F: Family>(
    family: &F,
    bound: &KernelSource,
    plan: &Chunking,
    precision: Precision,
) -> u64 {
    let size = precision.size() as u64;
    let members = plan.members_per_chunk as u64;
    let params = bound.params.entries() as u64 * members;
    let state = bound.state.entries() as u64 * members;
    let scratch = bound.scratch.max(1) as u64 * members;
    let records = (plan.records_per_dispatch * bound.record.entries()) as u64 * members;
    let stream = (plan.steps_per_dispatch * family.shared_stream().width()) as u64;
    let constants = kernel_of(family).map_or(0, |kernel| kernel.constants().len()) as u64;
    (params + state + scratch + records + 2 * records.max(state) + stream + constants) * size
        + std::mem::size_of::<DispatchParams>() as u64
}

/// Runs every member of `family` on `device`, streaming each chunk's results into `sink`.
pub fn run_into<D: ChunkDevice, F: Family>(
    device: &D,
    family: &F,
    options: &ExecutorOptions,
    sink: &mut dyn ResultSink,
) -> Result<ExecutorStats> {
    let kernel = kernel_of(family)?;
    let precision = device.precision();
    let grid = *family.grid();
    let (bound, plan) = plan_chunks(device, family, options)?;
    check_run(family, &grid, &plan, precision)?;
    let mut stats = ExecutorStats {
        flops_per_step: bound.flops_per_step,
        ..Default::default()
    };
    let mut run = device.begin_run(
        &kernel.constants(),
        plan.steps_per_dispatch * family.shared_stream().width(),
    )?;
    // The record points and dispatch windows of the grid, the same for every chunk.
    let record_points = grid.record_points();
    let windows: Vec<usize> = (0..grid.steps).step_by(plan.steps_per_dispatch).collect();
    let total = family.member_count();
    let chunks: Vec<Range<usize>> = (0..total)
        .step_by(plan.members_per_chunk)
        .map(|start| start..(start + plan.members_per_chunk).min(total))
        .collect();
    std::thread::scope(|scope| {
        let prepare = |members: Range<usize>| {
            scope.spawn(move || PreparedChunk::prepare(family, kernel, members, precision))
        };
        let mut ahead = chunks.first().cloned().map(prepare);
        for next in chunks.iter().skip(1).cloned().map(Some).chain([None]) {
            let Some(handle) = ahead.take() else { break };
            let prepared = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            // The next chunk is prepared on the host while this one is on the device.
            ahead = next.map(prepare);
            let started = Instant::now();
            let buffers = device.upload(&mut run, &prepared, plan.records_per_dispatch)?;
            stats.chunks += 1;
            stats.prepare_seconds += prepared.seconds + started.elapsed().as_secs_f64();
            let chunk = ChunkRun {
                device,
                family,
                kernel,
                grid: &grid,
                plan: &plan,
                record_points: &record_points,
                windows: &windows,
                run: &run,
                buffers: &buffers,
            };
            let (members, results) = chunk.dispatch(prepared, sink, &mut stats)?;
            let block = ResultBlock::from_members(family.record_spec(), grid.records(), results);
            sink.accept(members.start, block)?;
        }
        Ok(stats)
    })
}

/// What a run checks before any work: every dispatch's counts fit the kernels' u32, the
/// shared stream's values, and in f32 that they fit the precision.
fn check_run<F: Family>(
    family: &F,
    grid: &StepGrid,
    plan: &Chunking,
    precision: Precision,
) -> Result<()> {
    DispatchParams::new(
        plan.members_per_chunk,
        0,
        plan.steps_per_dispatch,
        grid,
        0,
        0,
    )?;
    family.check_stream()?;
    if precision == Precision::F32 && family.shared_stream().width() > 0 {
        // A pass over the stream, so that an input f32 cannot hold is refused up front.
        if let Ok(largest) = family.shared_stream().max_abs()
            && largest > f32::MAX as f64
        {
            return Err(Error::invalid(
                "--precision",
                format!(
                    "f32 cannot represent the shared inputs (signals sampled at the stage times): the largest |value| is {}, beyond the largest f32, 3.4028235e38; run with --precision f64",
                    Num(largest)
                ),
            ));
        }
    }
    Ok(())
}

/// One chunk on a device: the run, the chunk's buffers and the family's kernel.
struct ChunkRun<'a, D: ChunkDevice, F: Family> {
    device: &'a D,
    family: &'a F,
    kernel: &'a F::Kernel,
    grid: &'a StepGrid,
    plan: &'a Chunking,
    /// The grid's record points, and the first step of each dispatch window.
    record_points: &'a [usize],
    windows: &'a [usize],
    run: &'a D::Run,
    buffers: &'a D::Chunk,
}

/// A submitted window: its ticket, and where its records wait to be read back.
struct InFlight<T> {
    ticket: T,
    /// Where the records of a window of the first pass that recorded were copied.
    records: Option<RecordCopy>,
    /// Member-steps done when it completes.
    progress: u64,
}

impl<D: ChunkDevice, F: Family> ChunkRun<'_, D, F> {
    /// Runs every pass over the grid for `prepared`'s members and returns their results.
    fn dispatch(
        &self,
        prepared: PreparedChunk,
        sink: &mut dyn ResultSink,
        stats: &mut ExecutorStats,
    ) -> Result<(Range<usize>, Vec<MemberResult>)> {
        let (device, grid) = (self.device, self.grid);
        let count = prepared.count();
        let source = &prepared.kernel;
        let record_points = self.record_points;
        let spec = self.family.record_spec();
        let mut results = prepared.starts;
        for result in &mut results {
            result.reserve_records(spec, record_points.len());
        }
        let members_per_workgroup = source.members_per_workgroup.max(1) as usize;
        let row_width = device.row_width(count, members_per_workgroup);
        let record_entries = source.record.entries();
        let stream = self.family.shared_stream();
        let windows = self.windows;
        let passes = self.kernel.passes();
        let mut next_record = 0;
        let mut in_flight: Option<InFlight<D::Ticket>> = None;
        let mut submitted = 0;
        let device_started = Instant::now();
        let mut decode = |window: InFlight<D::Ticket>, stats: &mut ExecutorStats| -> Result<()> {
            let values = device.complete(self.buffers, window.ticket, window.records)?;
            if let (Some(values), Some(copy)) = (values, window.records) {
                let decoding = Instant::now();
                // Members decode side by side, each its slots in order.
                results.par_iter_mut().enumerate().for_each(|(i, result)| {
                    for slot in 0..copy.slots {
                        let view = MemberView {
                            layout: &source.record,
                            values: &values,
                            members: count,
                            base: slot * record_entries,
                            member: i,
                        };
                        self.kernel.decode_record(&view, result);
                    }
                });
                stats.readback_seconds += decoding.elapsed().as_secs_f64();
            }
            sink.progress(window.progress)?;
            Ok(())
        };
        for (pass, direction) in passes.iter().enumerate() {
            let ordered: Vec<usize> = match direction {
                Direction::Forward => windows.to_vec(),
                Direction::Backward => windows.iter().rev().copied().collect(),
            };
            let mut covered = 0;
            for &step_begin in &ordered {
                let step_count = self.plan.steps_per_dispatch.min(grid.steps - step_begin);
                let params =
                    DispatchParams::new(count, step_begin, step_count, grid, row_width, pass)?;
                let window = if stream.width() > 0 {
                    stream.window(step_begin, step_count)
                } else {
                    Cow::Borrowed(&[][..])
                };
                let done = step_begin + step_count;
                let slots = if pass == 0 {
                    record_points[next_record..]
                        .iter()
                        .take_while(|&&k| k <= done)
                        .count()
                } else {
                    0
                };
                next_record += slots;
                let records = (slots > 0 && record_entries > 0).then_some(RecordCopy {
                    slots,
                    buffer: submitted % 2,
                    values: slots * record_entries * count,
                });
                let submitted_window = Window {
                    params,
                    stream: &window,
                    records,
                };
                let ticket = device.submit(
                    self.kernel,
                    source,
                    self.run,
                    self.buffers,
                    &submitted_window,
                )?;
                submitted += 1;
                stats.dispatches += 1;
                covered += step_count;
                let walked = (pass * grid.steps + covered) / passes.len();
                let window = InFlight {
                    ticket,
                    records,
                    progress: (prepared.members.start * grid.steps + count * walked) as u64,
                };
                // The previous window is read back while this one runs.
                if let Some(previous) = in_flight.replace(window) {
                    decode(previous, stats)?;
                }
            }
        }
        if let Some(last) = in_flight.take() {
            decode(last, stats)?;
        }
        stats.device_seconds += device_started.elapsed().as_secs_f64();
        let reading = Instant::now();
        let final_state = device.read_state(self.buffers)?;
        results.par_iter_mut().enumerate().for_each(|(i, result)| {
            let view = MemberView {
                layout: &source.state,
                values: &final_state,
                members: count,
                base: 0,
                member: i,
            };
            self.kernel.decode_final(&view, result);
            result.nonfinite_step = nonfinite_step(view.get("status", 0));
            result.complete_status(grid, spec);
        });
        stats.readback_seconds += reading.elapsed().as_secs_f64();
        Ok((prepared.members, results))
    }
}
