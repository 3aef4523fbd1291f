//! The GPU executor, one for every model family: runs any [`Family`] with its specialised
//! kernel.
//!
//! Members are processed in chunks sized by the adapter's storage-binding and buffer limits
//! and by the host's result budget (or an explicit cap). For each chunk the family builds
//! its kernel variant, packed parameters and initial state (f64, converted to the run's
//! precision on upload); the engine allocates the buffers, binds them from the declared
//! bindings, and advances time in dispatches bounded by work and by the per-invocation loop
//! budget. After each dispatch the records written in it are read back and decoded through
//! the family's record layout; the chunk's final state at the end.

use std::sync::mpsc;
use std::time::Instant;

use super::context::{GpuContext, Precision};
use crate::error::{Error, Result};
use crate::kernels::abi::{BINDINGS, DispatchParams, binding_index};
use crate::kernels::wgsl::assemble;
use crate::kernels::{Family, KernelSource, MemberView};
use crate::plan::record::{HOST_RESULT_BUDGET, members_within};
use crate::plan::{MemberResult, ResultSink, StepGrid};
use crate::results::Results;

/// Knobs of a GPU run; the defaults derive everything from the adapter's limits.
#[derive(Debug, Clone, Default)]
pub struct GpuRunOptions {
    /// Cap on members per chunk (below what the limits allow); tests use it to force
    /// chunking.
    pub max_chunk_members: Option<usize>,
    /// Cap on steps per dispatch.
    pub max_steps_per_dispatch: Option<usize>,
}

/// Where a GPU run spent its time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuRunStats {
    /// Host side: building member parameters, converting and uploading them.
    pub prepare_seconds: f64,
    /// From submitting each dispatch to its completion (the kernel's own time).
    pub device_seconds: f64,
    /// Copying records and states back and decoding them.
    pub readback_seconds: f64,
    pub dispatches: usize,
    pub chunks: usize,
    /// Floating-point operations per member-step of the largest kernel variant.
    pub flops_per_step: usize,
}

/// Floating-point work per dispatch that keeps one dispatch well under a second on a
/// software adapter.
const FLOPS_PER_DISPATCH: usize = 1 << 31;

/// Loop iterations one invocation may execute per dispatch on CPU adapters. Mesa's
/// llvmpipe (lavapipe) caps the loop iterations of an invocation at 65535 and silently
/// leaves loops beyond that, truncating the run; dispatches are cut well below that there.
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
    let (steps, record_every) = (grid.steps, grid.record_every);
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
    let members_per_chunk = by_limit
        .min(members)
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
    // A window of L steps holds at most min(L, ⌈L / every⌉ + 1) records: ⌈L / every⌉
    // multiples of the cadence and the final step. With `capacity` ≥ 2 slots,
    // L ≤ (capacity − 1) · every keeps them in.
    let record_bytes = record_entries as u64 * size * members_per_chunk as u64;
    let record_capacity = (limits.binding_bytes / record_bytes) as usize;
    debug_assert!(record_capacity >= 2);
    steps_per_dispatch = steps_per_dispatch.min((record_capacity - 1) * record_every);
    let records_per_dispatch = (steps_per_dispatch.div_ceil(record_every) + 1)
        .min(steps_per_dispatch)
        .min(record_capacity);
    Ok(Chunking {
        members_per_chunk,
        steps_per_dispatch,
        records_per_dispatch,
    })
}

/// Converts f64 values to the run's precision as bytes.
fn to_bytes(values: &[f64], precision: Precision) -> Vec<u8> {
    match precision {
        Precision::F64 => bytemuck::cast_slice(values).to_vec(),
        Precision::F32 => {
            let narrow: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            bytemuck::cast_slice(&narrow).to_vec()
        }
    }
}

fn from_bytes(bytes: &[u8], precision: Precision) -> Vec<f64> {
    match precision {
        Precision::F64 => bytemuck::cast_slice::<u8, f64>(bytes).to_vec(),
        Precision::F32 => bytemuck::cast_slice::<u8, f32>(bytes)
            .iter()
            .map(|&v| v as f64)
            .collect(),
    }
}

fn buffer(ctx: &GpuContext, label: &str, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16).next_multiple_of(8),
        usage,
        mapped_at_creation: false,
    })
}

/// A buffer holding `values` in the run's precision.
fn upload(
    ctx: &GpuContext,
    label: &str,
    values: &[f64],
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let bytes = to_bytes(values, ctx.precision);
    let target = buffer(
        ctx,
        label,
        bytes.len() as u64,
        usage | wgpu::BufferUsages::COPY_DST,
    );
    if !bytes.is_empty() {
        ctx.queue.write_buffer(&target, 0, &bytes);
    }
    target
}

/// Copies `bytes` of `source` into `readback`, waits, and returns them as f64.
fn read_back(
    ctx: &GpuContext,
    source: &wgpu::Buffer,
    readback: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<f64>> {
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("read back"),
        });
    encoder.copy_buffer_to_buffer(source, 0, readback, 0, bytes);
    ctx.queue.submit([encoder.finish()]);
    let slice = readback.slice(..bytes);
    let (sender, receiver) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Gpu(format!("waiting for the device failed: {e}")))?;
    receiver
        .recv()
        .map_err(|_| Error::Gpu("the read-back was dropped".into()))?
        .map_err(|e| Error::Gpu(format!("mapping the read-back buffer failed: {e}")))?;
    let values = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| Error::Gpu(format!("reading mapped memory failed: {e}")))?;
        from_bytes(&view, ctx.precision)
    };
    readback.unmap();
    Ok(values)
}

/// The backend label of results computed on `ctx`.
pub fn backend_name(ctx: &GpuContext) -> String {
    format!("gpu: {}", ctx.adapter.describe())
}

/// Runs every member of `family` on the GPU and collects the results.
pub fn run<F: Family>(ctx: &GpuContext, family: &F, options: &GpuRunOptions) -> Result<Results> {
    let mut members = Vec::with_capacity(family.member_count());
    run_into(ctx, family, options, &mut members)?;
    Ok(Results::new(
        family,
        &backend_name(ctx),
        ctx.precision,
        members,
    ))
}

/// Runs every member of `family` on the GPU, streaming each chunk's results into `sink`.
pub fn run_into<F: Family>(
    ctx: &GpuContext,
    family: &F,
    options: &GpuRunOptions,
    sink: &mut dyn ResultSink,
) -> Result<GpuRunStats> {
    let precision = ctx.precision;
    let grid = *family.grid();
    let total = family.member_count();
    let record_points = grid.record_points();
    let bound = family.kernel_bound()?;
    let mut stats = GpuRunStats {
        flops_per_step: bound.flops_per_step,
        ..Default::default()
    };
    let per_member = family.record_spec().member_bytes(record_points.len());
    let limits = ChunkLimits {
        binding_bytes: ctx
            .limits
            .max_storage_buffer_binding_size
            .min(ctx.limits.max_buffer_size),
        // llvmpipe (lavapipe) leaves loops silently after 65535 iterations per invocation.
        loop_iterations: (ctx.adapter.device_type == "Cpu").then_some(LOOP_ITERATIONS_PER_DISPATCH),
        host_members: members_within(HOST_RESULT_BUDGET, per_member),
    };
    let plan = chunking(&bound, precision, total, &grid, &limits, options)?;
    let size = precision.size() as u64;
    let storage = wgpu::BufferUsages::STORAGE;
    let constants = upload(ctx, "constants", &family.constants(), storage);
    // The shared stream is converted once and uploaded per dispatch.
    let stream = family.shared_stream();
    let stream_width = stream.width();
    let stream_bytes = to_bytes(&stream.values, precision);
    let dispatch_buffer = buffer(
        ctx,
        "dispatch",
        std::mem::size_of::<DispatchParams>() as u64,
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    );
    let stream_buffer = buffer(
        ctx,
        "stream",
        (plan.steps_per_dispatch * stream_width) as u64 * size,
        storage | wgpu::BufferUsages::COPY_DST,
    );

    for chunk_start in (0..total).step_by(plan.members_per_chunk) {
        let prepare_started = Instant::now();
        stats.chunks += 1;
        let chunk_end = (chunk_start + plan.members_per_chunk).min(total);
        let members = {
            use rayon::prelude::*;
            (chunk_start..chunk_end)
                .into_par_iter()
                .map(|i| family.member(i))
                .collect::<Result<Vec<_>>>()?
        };
        let count = members.len();
        let chunk = family.kernel_chunk(&members)?;
        let spec = family.record_spec();
        let mut results: Vec<MemberResult> = members
            .iter()
            .map(|member| {
                let mut result = MemberResult::with_capacity(spec, record_points.len());
                family.record_start(member, &mut result);
                result
            })
            .collect();
        drop(members);
        let kernel_source = &chunk.kernel;
        let source = assemble(kernel_source, precision)?;
        let kernel = ctx.kernel(kernel_source.name, &source)?;
        let params = upload(ctx, "params", &chunk.params, storage);
        let state_bytes = chunk.state.len() as u64 * size;
        let state = upload(
            ctx,
            "state",
            &chunk.state,
            storage | wgpu::BufferUsages::COPY_SRC,
        );
        let record_entries = kernel_source.record.entries();
        let record_bytes = (plan.records_per_dispatch * record_entries * count) as u64 * size;
        let records = buffer(
            ctx,
            "records",
            record_bytes,
            storage | wgpu::BufferUsages::COPY_SRC,
        );
        let readback = buffer(
            ctx,
            "readback",
            record_bytes.max(state_bytes),
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let resources: Vec<(&str, &wgpu::Buffer)> = vec![
            ("dispatch", &dispatch_buffer),
            ("params", &params),
            ("stream", &stream_buffer),
            ("state", &state),
            ("records", &records),
            ("constants", &constants),
        ];
        debug_assert_eq!(resources.len(), BINDINGS.len());
        let entries: Vec<wgpu::BindGroupEntry> = resources
            .iter()
            .map(|(name, buffer)| wgpu::BindGroupEntry {
                binding: binding_index(name),
                resource: buffer.as_entire_binding(),
            })
            .collect();
        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel_source.name),
            layout: &kernel.layout,
            entries: &entries,
        });
        stats.prepare_seconds += prepare_started.elapsed().as_secs_f64();

        let members_per_workgroup = kernel_source.members_per_workgroup.max(1) as usize;
        let workgroups = count.div_ceil(members_per_workgroup) as u32;
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension.max(1);
        let grid_x = workgroups.min(max_dim);
        let grid_y = workgroups.div_ceil(grid_x);
        let mut next_record = 0;
        for step_begin in (0..grid.steps).step_by(plan.steps_per_dispatch) {
            let step_count = plan.steps_per_dispatch.min(grid.steps - step_begin);
            let params = DispatchParams {
                members: count as u32,
                step_begin: step_begin as u32,
                step_count: step_count as u32,
                steps_total: grid.steps as u32,
                record_every: grid.record_every as u32,
                row_width: grid_x * members_per_workgroup as u32,
                pad0: 0,
                pad1: 0,
            };
            ctx.queue
                .write_buffer(&dispatch_buffer, 0, bytemuck::bytes_of(&params));
            if stream_width > 0 {
                let bytes = stream_width * precision.size();
                let u = &stream_bytes[step_begin * bytes..(step_begin + step_count) * bytes];
                ctx.queue.write_buffer(&stream_buffer, 0, u);
            }
            let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
            let mut encoder = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("steps"),
                });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("steps"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&kernel.pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(grid_x, grid_y, 1);
            }
            let dispatch_started = Instant::now();
            ctx.queue.submit([encoder.finish()]);
            ctx.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| Error::Gpu(format!("waiting for the device failed: {e}")))?;
            stats.device_seconds += dispatch_started.elapsed().as_secs_f64();
            stats.dispatches += 1;
            if let Some(error) = pollster::block_on(scope.pop()) {
                return Err(Error::Gpu(format!("dispatch failed: {error}")));
            }
            let readback_started = Instant::now();
            let done = step_begin + step_count;
            sink.progress((chunk_start * grid.steps + count * done) as u64);
            let in_dispatch = record_points[next_record..]
                .iter()
                .take_while(|&&k| k <= done)
                .count();
            if in_dispatch > 0 {
                let bytes = (in_dispatch * record_entries * count) as u64 * size;
                let values = read_back(ctx, &records, &readback, bytes)?;
                for slot in 0..in_dispatch {
                    for (i, result) in results.iter_mut().enumerate() {
                        let view = MemberView {
                            layout: &kernel_source.record,
                            values: &values,
                            members: count,
                            base: slot * record_entries,
                            member: i,
                        };
                        family.decode_record(&view, result);
                    }
                }
                next_record += in_dispatch;
            }
            stats.readback_seconds += readback_started.elapsed().as_secs_f64();
        }
        let final_state = read_back(ctx, &state, &readback, state_bytes)?;
        for (i, result) in results.iter_mut().enumerate() {
            let view = MemberView {
                layout: &kernel_source.state,
                values: &final_state,
                members: count,
                base: 0,
                member: i,
            };
            family.decode_final(&view, result);
        }
        sink.accept(chunk_start, results)?;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::linear_ph::LinearPhShape;

    fn limits(binding_bytes: u64) -> ChunkLimits {
        ChunkLimits {
            binding_bytes,
            loop_iterations: Some(LOOP_ITERATIONS_PER_DISPATCH),
            host_members: usize::MAX,
        }
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
        use crate::kernels::contact::ContactShape;
        use crate::model::contact::TimeChannels;
        let kernel = ContactShape {
            dof: 1,
            harmonic: true,
            quartic: false,
            pendulum: false,
            kepler: false,
            time: TimeChannels::default(),
            stages: 1,
            herglotz: false,
        }
        .kernel();
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
        use crate::kernels::contact::ContactShape;
        use crate::model::contact::TimeChannels;
        // One degree of freedom: the record slot is the widest buffer, so the binding size
        // sets the number of slots.
        let kernel = ContactShape {
            dof: 1,
            harmonic: true,
            quartic: false,
            pendulum: false,
            kepler: false,
            time: TimeChannels::default(),
            stages: 1,
            herglotz: false,
        }
        .kernel();
        let record = kernel.record.entries() as u64 * 8;
        for steps in 1..40 {
            for every in 1..12 {
                for cap in 1..15 {
                    for slots in 2..6 {
                        let g = grid(steps, every);
                        let options = GpuRunOptions {
                            max_chunk_members: Some(1),
                            max_steps_per_dispatch: Some(cap),
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
