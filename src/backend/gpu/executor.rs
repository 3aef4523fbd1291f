//! The GPU executor, one for every model family: runs any [`Family`] with its specialised
//! kernel.
//!
//! Members are processed in chunks sized by the adapter's storage-binding and buffer limits
//! and by the host's result budget (or an explicit cap). For each chunk the family builds
//! its kernel variant, packed parameters and initial state (f64, converted to the run's
//! precision on upload); the engine allocates the buffers, binds them from the declared
//! bindings, and advances time in dispatches bounded by work and by the per-invocation loop
//! budget. A family walks the grid in one or more passes ([`Family::passes`]: a forward
//! sweep, then a backward one for adjoints), each dispatch told its pass; the state persists
//! across passes. After each dispatch of the first pass the records written in it are read
//! back and decoded through the family's record layout; the chunk's final state at the end.

use std::sync::mpsc;
use std::time::Instant;

use super::chunking::{ChunkLimits, Chunking, LOOP_ITERATIONS_PER_DISPATCH, chunking};
use super::context::{GpuContext, Precision};
use crate::error::{Error, Num, Result};
use crate::kernels::abi::{BINDINGS, DispatchParams, binding_index};
use crate::kernels::family::kernel_of;
use crate::kernels::wgsl::assemble;
use crate::kernels::{Direction, Family, GpuKernel, KernelSource, MemberView};
use crate::plan::MemoryBudget;
use crate::plan::budget::members_within;
use crate::plan::record::nonfinite_step;
use crate::plan::{MemberResult, ResultSink};
use crate::results::Results;

/// Knobs of a GPU run; the defaults derive everything from the adapter's limits.
#[derive(Debug, Clone, Default)]
pub struct GpuRunOptions {
    /// Cap on members per chunk (below what the limits allow); tests use it to force
    /// chunking.
    pub max_chunk_members: Option<usize>,
    /// Cap on steps per dispatch.
    pub max_steps_per_dispatch: Option<usize>,
    /// Bytes of results held on the host before they go to the sink (default: the default
    /// [`MemoryBudget`]'s share).
    pub result_budget: Option<usize>,
}

impl GpuRunOptions {
    /// These options with results held within `budget`'s share.
    pub fn within(&self, budget: &MemoryBudget) -> GpuRunOptions {
        GpuRunOptions {
            result_budget: Some(budget.results()),
            ..self.clone()
        }
    }
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

/// What a buffer holds, for the errors of [`to_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contents {
    /// Run-wide constants (h, method coefficients): a non-zero one must stay non-zero.
    Constants,
    /// Per-member parameters, initial states, shared inputs: each must stay finite.
    Values(&'static str),
}

/// Converts f64 values to the run's precision as bytes. In f32 a finite value beyond the
/// largest f32 (3.4028235e38, where the conversion gives ±∞) is refused, as is a non-zero
/// constant that rounds to 0 (a step h that vanishes would silently freeze the run);
/// values already non-finite pass as they are (the kernels flag them).
fn to_bytes(values: &[f64], precision: Precision, contents: Contents) -> Result<Vec<u8>> {
    match precision {
        Precision::F64 => Ok(bytemuck::cast_slice(values).to_vec()),
        Precision::F32 => {
            let mut narrow = Vec::with_capacity(values.len());
            for (index, &v) in values.iter().enumerate() {
                let single = v as f32;
                let lost = match contents {
                    Contents::Constants => {
                        (v.is_finite() && !single.is_finite()) || (v != 0.0 && single == 0.0)
                    }
                    Contents::Values(_) => v.is_finite() && !single.is_finite(),
                };
                if lost {
                    let what = match contents {
                        Contents::Constants => "run constants (h, method coefficients)",
                        Contents::Values(what) => what,
                    };
                    return Err(Error::invalid(
                        "--precision",
                        format!(
                            "f32 cannot represent entry {index} of the {what}, {}: it is {} (f32 holds magnitudes from 1.4e-45 to 3.4028235e38); run with --precision f64",
                            Num(v),
                            if single.is_finite() {
                                "rounded to 0"
                            } else {
                                "beyond the largest f32"
                            }
                        ),
                    ));
                }
                narrow.push(single);
            }
            Ok(bytemuck::cast_slice(&narrow).to_vec())
        }
    }
}

fn from_bytes(bytes: &[u8], precision: Precision) -> Vec<f64> {
    match precision {
        // Copies without assuming the mapping's alignment (an empty range may have none).
        Precision::F64 => bytemuck::pod_collect_to_vec::<u8, f64>(bytes),
        Precision::F32 => bytemuck::pod_collect_to_vec::<u8, f32>(bytes)
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
    contents: Contents,
    usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer> {
    let bytes = to_bytes(values, ctx.precision, contents)?;
    let target = buffer(
        ctx,
        label,
        bytes.len() as u64,
        usage | wgpu::BufferUsages::COPY_DST,
    );
    if !bytes.is_empty() {
        ctx.queue.write_buffer(&target, 0, &bytes);
    }
    Ok(target)
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

/// The run's largest kernel variant and how the run is cut into chunks and dispatches.
pub fn plan_chunks<F: Family>(
    ctx: &GpuContext,
    family: &F,
    options: &GpuRunOptions,
) -> Result<(KernelSource, Chunking)> {
    let grid = family.grid();
    let bound = kernel_of(family)?.kernel_bound()?;
    let per_member = family.record_spec().member_bytes(grid.records());
    let result_budget = options
        .result_budget
        .unwrap_or_else(|| MemoryBudget::default().results());
    let limits = ChunkLimits {
        binding_bytes: ctx
            .limits
            .max_storage_buffer_binding_size
            .min(ctx.limits.max_buffer_size),
        loop_iterations: ctx.adapter.software.then_some(LOOP_ITERATIONS_PER_DISPATCH),
        host_members: members_within(result_budget, per_member),
        stream_width: family.shared_stream().width(),
    };
    let plan = chunking(
        &bound,
        ctx.precision,
        family.member_count(),
        grid,
        &limits,
        options,
    )?;
    Ok((bound, plan))
}

/// Device bytes of one chunk's buffers under `plan`: params, state, records, their
/// read-back copy, the stream window, constants and dispatch parameters.
pub fn chunk_device_bytes<F: Family>(
    family: &F,
    bound: &KernelSource,
    plan: &Chunking,
    precision: super::context::Precision,
) -> u64 {
    let size = precision.size() as u64;
    let members = plan.members_per_chunk as u64;
    let params = bound.params.entries() as u64 * members;
    let state = bound.state.entries() as u64 * members;
    let records = (plan.records_per_dispatch * bound.record.entries()) as u64 * members;
    let stream = (plan.steps_per_dispatch * family.shared_stream().width()) as u64;
    let constants = kernel_of(family).map_or(0, |kernel| kernel.constants().len()) as u64;
    (params + state + 2 * records.max(state) + stream + constants) * size
        + std::mem::size_of::<DispatchParams>() as u64
}

/// Runs every member of `family` on the GPU, streaming each chunk's results into `sink`.
pub fn run_into<F: Family>(
    ctx: &GpuContext,
    family: &F,
    options: &GpuRunOptions,
    sink: &mut dyn ResultSink,
) -> Result<GpuRunStats> {
    let family_kernel = kernel_of(family)?;
    let precision = ctx.precision;
    let grid = *family.grid();
    let total = family.member_count();
    let record_points = grid.record_points();
    let (bound, plan) = plan_chunks(ctx, family, options)?;
    // Every dispatch's counts fit the kernels' u32, checked before any work.
    DispatchParams::new(
        plan.members_per_chunk,
        0,
        plan.steps_per_dispatch,
        &grid,
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
    let mut stats = GpuRunStats {
        flops_per_step: bound.flops_per_step,
        ..Default::default()
    };
    let size = precision.size() as u64;
    let storage = wgpu::BufferUsages::STORAGE;
    let constants = upload(
        ctx,
        "constants",
        &family_kernel.constants(),
        Contents::Constants,
        storage,
    )?;
    // The shared stream is sampled (or read from its cache) and uploaded per dispatch.
    let stream = family.shared_stream();
    let stream_width = stream.width();
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

    let mut assembled: Option<(KernelSource, std::sync::Arc<super::pipeline::Kernel>)> = None;
    for chunk_start in (0..total).step_by(plan.members_per_chunk) {
        let prepare_started = Instant::now();
        stats.chunks += 1;
        let chunk_end = (chunk_start + plan.members_per_chunk).min(total);
        let members = {
            use rayon::prelude::*;
            // The first error in member order, whatever the thread count.
            let drawn: Vec<Result<_>> = (chunk_start..chunk_end)
                .into_par_iter()
                .map(|i| family.member(i))
                .collect();
            drawn.into_iter().collect::<Result<Vec<_>>>()?
        };
        let count = members.len();
        let chunk = family_kernel.kernel_chunk(&members)?;
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
        // Chunks usually share their variant: assemble (and look up) only when it changes.
        if assembled
            .as_ref()
            .is_none_or(|(source, _)| source != kernel_source)
        {
            let text = assemble(kernel_source, precision)?;
            let kernel = ctx.kernel(kernel_source.name, &text)?;
            assembled = Some((kernel_source.clone(), kernel));
        }
        let kernel = &assembled.as_ref().expect("assembled above").1;
        let params = upload(
            ctx,
            "params",
            &chunk.params,
            Contents::Values("per-member parameters"),
            storage,
        )?;
        let state_bytes = chunk.state.len() as u64 * size;
        let state = upload(
            ctx,
            "state",
            &chunk.state,
            Contents::Values("initial states"),
            storage | wgpu::BufferUsages::COPY_SRC,
        )?;
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
        // At most `count` ≤ u32::MAX workgroups (the chunking caps members per chunk).
        let workgroups = u32::try_from(count.div_ceil(members_per_workgroup))
            .map_err(|_| Error::Gpu(format!("{count} members need too many workgroups")))?;
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension.max(1);
        let grid_x = workgroups.min(max_dim);
        let grid_y = workgroups.div_ceil(grid_x);
        let mut next_record = 0;
        let windows: Vec<usize> = (0..grid.steps).step_by(plan.steps_per_dispatch).collect();
        let passes = family_kernel.passes();
        for (pass, direction) in passes.iter().enumerate() {
            let ordered: Vec<usize> = match direction {
                Direction::Forward => windows.clone(),
                Direction::Backward => windows.iter().rev().copied().collect(),
            };
            let mut covered = 0;
            for &step_begin in &ordered {
                let step_count = plan.steps_per_dispatch.min(grid.steps - step_begin);
                let params = DispatchParams::new(
                    count,
                    step_begin,
                    step_count,
                    &grid,
                    grid_x as usize * members_per_workgroup,
                    pass,
                )?;
                ctx.queue
                    .write_buffer(&dispatch_buffer, 0, bytemuck::bytes_of(&params));
                if stream_width > 0 {
                    let window = stream.window(step_begin, step_count);
                    let bytes = to_bytes(
                        &window,
                        precision,
                        Contents::Values("shared inputs (signals sampled at the stage times)"),
                    )?;
                    ctx.queue.write_buffer(&stream_buffer, 0, &bytes);
                }
                let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
                let mut encoder =
                    ctx.device
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
                covered += step_count;
                let walked = (pass * grid.steps + covered) / passes.len();
                sink.progress((chunk_start * grid.steps + count * walked) as u64);
                if pass > 0 {
                    stats.readback_seconds += readback_started.elapsed().as_secs_f64();
                    continue;
                }
                let in_dispatch = record_points[next_record..]
                    .iter()
                    .take_while(|&&k| k <= done)
                    .count();
                if in_dispatch > 0 && record_entries > 0 {
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
                            family_kernel.decode_record(&view, result);
                        }
                    }
                    next_record += in_dispatch;
                }
                stats.readback_seconds += readback_started.elapsed().as_secs_f64();
            }
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
            family_kernel.decode_final(&view, result);
            result.nonfinite_step = nonfinite_step(view.get("status", 0));
            result.complete_status(&grid, family.record_spec());
        }
        sink.accept(chunk_start, results)?;
    }
    Ok(stats)
}
