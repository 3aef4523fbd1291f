//! The GPU ensemble executor: runs a [`Plan`] with the specialised step kernel.
//!
//! Members are processed in chunks sized by the adapter's storage-binding and buffer limits
//! (or an explicit cap); each chunk's step operators are built on the host (f64, all cores),
//! converted to the run's precision and uploaded structure-of-arrays. Time advances in
//! dispatches of bounded work; after each, the records written in it are read back. The
//! chunk's final states and totals are read back at the end.

use std::sync::mpsc;
use std::time::Instant;

use rayon::prelude::*;

use super::context::{GpuContext, Precision};
use super::layout::{KernelLayout, KernelParams};
use super::shader::{KernelKey, MAX_STATES_COOPERATIVE, MAX_STATES_PER_INVOCATION, WORKGROUP_SIZE};
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::plan::operators::StepOperators;
use crate::results::{
    EnergyTotals, HOST_RESULT_BUDGET, MemberResult, ResultSink, Results, member_result_bytes,
    members_within,
};

/// Knobs of a GPU run; the defaults derive everything from the adapter's limits.
#[derive(Debug, Clone, Default)]
pub struct GpuRunOptions {
    /// Cap on members per chunk (below what the limits allow); tests use it to force
    /// chunking.
    pub max_chunk_members: Option<usize>,
    /// Cap on steps per dispatch.
    pub max_steps_per_dispatch: Option<usize>,
    /// Force the workgroup-cooperative kernel (true) or the per-invocation one (false);
    /// default: cooperative exactly when n exceeds the per-invocation limit.
    pub cooperative: Option<bool>,
}

/// Where a GPU run spent its time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuRunStats {
    /// Host side: building step operators, converting and uploading them.
    pub prepare_seconds: f64,
    /// From submitting each dispatch to its completion (the kernel's own time).
    pub device_seconds: f64,
    /// Copying records and states back and unpacking them.
    pub readback_seconds: f64,
    pub dispatches: usize,
    pub chunks: usize,
}

/// Floating-point work per dispatch that keeps one dispatch well under a second on a
/// software adapter.
const FLOPS_PER_DISPATCH: usize = 1 << 31;

/// Loop iterations one invocation may execute per dispatch. Mesa's llvmpipe (lavapipe)
/// caps the loop iterations of an invocation at 65535 and silently leaves loops beyond
/// that, truncating the run; dispatches are cut well below that on every adapter.
pub const LOOP_ITERATIONS_PER_DISPATCH: usize = 60_000;

/// How a run is cut into chunks and dispatches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    pub members_per_chunk: usize,
    pub steps_per_dispatch: usize,
    pub records_per_dispatch: usize,
}

/// Chunk and dispatch sizes of `plan` for `layout` under the binding limit
/// `binding_bytes`.
pub fn chunking(
    layout: &KernelLayout,
    cooperative: bool,
    precision: Precision,
    plan: &Plan,
    binding_bytes: u64,
    options: &GpuRunOptions,
) -> Result<Chunking> {
    let (members, steps, record_every) = (plan.ensemble.len(), plan.steps, plan.record_every);
    let size = precision.size() as u64;
    let widest = layout
        .operator_entries()
        .max(layout.state_entries())
        .max(layout.record_entries()) as u64
        * size;
    let by_limit = (binding_bytes / widest) as usize;
    if by_limit == 0 {
        return Err(Error::Gpu(format!(
            "one member needs {widest} bytes per buffer, more than the adapter's {binding_bytes}-byte storage binding"
        )));
    }
    let members_per_chunk = by_limit
        .min(members)
        .min(options.max_chunk_members.unwrap_or(usize::MAX))
        .max(1);
    let flops = layout.flops_per_step().max(1) * members_per_chunk;
    let mut steps_per_dispatch = (FLOPS_PER_DISPATCH / flops).clamp(1, steps);
    let iterations = layout.loop_iterations_per_step(cooperative, WORKGROUP_SIZE as usize);
    steps_per_dispatch = steps_per_dispatch.min((LOOP_ITERATIONS_PER_DISPATCH / iterations).max(1));
    if let Some(cap) = options.max_steps_per_dispatch {
        steps_per_dispatch = steps_per_dispatch.min(cap.max(1));
    }
    // A window of L steps holds at most ⌊L / every⌋ + 2 records; they must fit one binding.
    let record_bytes = layout.record_entries() as u64 * size * members_per_chunk as u64;
    let record_capacity = (binding_bytes / record_bytes) as usize;
    if record_capacity < 2 {
        steps_per_dispatch = steps_per_dispatch.min(record_every.saturating_sub(1).max(1));
    } else {
        steps_per_dispatch = steps_per_dispatch.min((record_capacity - 1) * record_every);
    }
    let records_per_dispatch = (steps_per_dispatch / record_every + 2).min(record_capacity.max(1));
    Ok(Chunking {
        members_per_chunk,
        steps_per_dispatch,
        records_per_dispatch,
    })
}

/// The rows of one member's [Δ; Y; W] with W padded to s·`rank` rows (zero rows change
/// nothing), each of width p.
fn stacked_rows(op: &StepOperators, rank: usize) -> Vec<f64> {
    let p = op.width();
    let mut rows = Vec::with_capacity((op.states + op.stages * (op.inputs + rank)) * p);
    rows.extend_from_slice(&op.delta);
    rows.extend_from_slice(&op.output);
    for stage in 0..op.stages {
        for k in 0..rank {
            if k < op.rank {
                let start = (stage * op.rank + k) * p;
                rows.extend_from_slice(&op.dissipation[start..start + p]);
            } else {
                rows.extend(std::iter::repeat_n(0.0, p));
            }
        }
    }
    rows
}

/// Packs a chunk's operators for the kernel: per-invocation kernels read them
/// structure-of-arrays (entry e of member i at e·count + i, entries [Δ; Y; W] row-major then
/// Q); the cooperative kernel reads them member-major and column-major (member i at
/// i·entries: [Δ; Y; W] entry (row, c) at c·rows + row, then Q at rows·p + c·n + r).
pub fn pack_operators(operators: &[StepOperators], rank: usize, cooperative: bool) -> Vec<f64> {
    let count = operators.len();
    let Some(first) = operators.first() else {
        return Vec::new();
    };
    let (n, p) = (first.states, first.width());
    let rows = n + first.stages * (first.inputs + rank);
    let entries = rows * p + n * n;
    let mut packed = vec![0.0; entries * count];
    for (i, op) in operators.iter().enumerate() {
        let stacked = stacked_rows(op, rank);
        for row in 0..rows {
            for c in 0..p {
                let value = stacked[row * p + c];
                if cooperative {
                    packed[i * entries + c * rows + row] = value;
                } else {
                    packed[(row * p + c) * count + i] = value;
                }
            }
        }
        for r in 0..n {
            for c in 0..n {
                let value = op.q[r * n + c];
                if cooperative {
                    packed[i * entries + rows * p + c * n + r] = value;
                } else {
                    packed[(rows * p + r * n + c) * count + i] = value;
                }
            }
        }
    }
    packed
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

/// Copies `bytes` of `source` into `readback`, waits, and returns them as f64.
fn read_back(
    ctx: &GpuContext,
    source: &wgpu::Buffer,
    readback: &wgpu::Buffer,
    bytes: u64,
    precision: Precision,
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
        from_bytes(&view, precision)
    };
    readback.unmap();
    Ok(values)
}

/// Runs every member of `plan` on the GPU and collects the results.
pub fn run(ctx: &GpuContext, plan: &Plan, options: &GpuRunOptions) -> Result<Results> {
    let mut members = Vec::with_capacity(plan.ensemble.len());
    run_into(ctx, plan, options, &mut members)?;
    Ok(plan.results(&backend_name(ctx), ctx.precision.name(), members))
}

/// The backend label of results computed on `ctx`.
pub fn backend_name(ctx: &GpuContext) -> String {
    format!("gpu: {}", ctx.adapter.describe())
}

/// Runs every member of `plan` on the GPU, streaming each chunk's results into `sink`.
pub fn run_into(
    ctx: &GpuContext,
    plan: &Plan,
    options: &GpuRunOptions,
    sink: &mut dyn ResultSink,
) -> Result<GpuRunStats> {
    let mut stats = GpuRunStats::default();
    let first = &plan.ensemble.prototype().system;
    let (n, m, s) = (first.states(), first.inputs(), plan.scheme.stages);
    if n > MAX_STATES_COOPERATIVE {
        return Err(Error::invalid(
            "system",
            format!(
                "state size n = {n} exceeds the GPU kernels' limit of {MAX_STATES_COOPERATIVE}; use --backend cpu"
            ),
        ));
    }
    let cooperative = options.cooperative.unwrap_or(n > MAX_STATES_PER_INVOCATION);
    if !cooperative && n > MAX_STATES_PER_INVOCATION {
        return Err(Error::invalid(
            "system",
            format!(
                "state size n = {n} exceeds the per-invocation kernel's limit of {MAX_STATES_PER_INVOCATION}"
            ),
        ));
    }
    let precision = ctx.precision;
    let total = plan.ensemble.len();
    let record_points = plan.record_points();
    let widest_rank = n; // rank ≤ n; the layout bound for chunk sizing
    let sizing_layout = KernelLayout {
        states: n,
        stages: s,
        inputs: m,
        rank: widest_rank,
    };
    let binding = ctx
        .limits
        .max_storage_buffer_binding_size
        .min(ctx.limits.max_buffer_size);
    let mut plan_chunks = chunking(
        &sizing_layout,
        cooperative,
        precision,
        plan,
        binding,
        options,
    )?;
    let per_member = member_result_bytes(n, s, m, record_points.len());
    plan_chunks.members_per_chunk = plan_chunks
        .members_per_chunk
        .min(members_within(HOST_RESULT_BUDGET, per_member));
    let size = precision.size() as u64;
    let scalars = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("scalars"),
        size: 16,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    ctx.queue
        .write_buffer(&scalars, 0, &to_bytes(&[plan.h], precision));
    // The stage inputs are shared by all members: converted once, uploaded per dispatch.
    let inputs_bytes = to_bytes(&plan.inputs.values, precision);
    let params_buffer = buffer(
        ctx,
        "params",
        std::mem::size_of::<KernelParams>() as u64,
        wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    );

    for chunk_start in (0..total).step_by(plan_chunks.members_per_chunk) {
        let prepare_started = Instant::now();
        stats.chunks += 1;
        let chunk = plan
            .ensemble
            .members(chunk_start..(chunk_start + plan_chunks.members_per_chunk).min(total))?;
        let count = chunk.len();
        let operators: Vec<StepOperators> = chunk
            .par_iter()
            .map(|member| StepOperators::new(plan, member))
            .collect::<Result<_>>()?;
        let rank = operators.iter().map(|o| o.rank).max().unwrap_or(0);
        let key = KernelKey {
            precision,
            states: n,
            stages: s,
            inputs: m,
            rank,
            cooperative,
        };
        let layout = key.layout();
        let kernel = ctx.kernel(&key)?;

        let ops_packed = pack_operators(&operators, rank, cooperative);
        let ops_buffer = buffer(
            ctx,
            "operators",
            ops_packed.len() as u64 * size,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        );
        ctx.queue
            .write_buffer(&ops_buffer, 0, &to_bytes(&ops_packed, precision));
        drop(ops_packed);

        let state_entries = layout.state_entries();
        let mut state = vec![0.0; state_entries * count];
        for (i, member) in chunk.iter().enumerate() {
            for r in 0..n {
                state[r * count + i] = member.x0[r];
            }
        }
        let state_bytes = (state_entries * count) as u64 * size;
        let state_buffer = buffer(
            ctx,
            "state",
            state_bytes,
            wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
        );
        ctx.queue
            .write_buffer(&state_buffer, 0, &to_bytes(&state, precision));

        let record_entries = layout.record_entries();
        let record_bytes =
            (plan_chunks.records_per_dispatch * record_entries * count) as u64 * size;
        let records_buffer = buffer(
            ctx,
            "records",
            record_bytes,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        );
        let readback = buffer(
            ctx,
            "readback",
            record_bytes.max(state_bytes),
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let sm = s * m;
        let inputs_buffer = buffer(
            ctx,
            "inputs",
            (plan_chunks.steps_per_dispatch * sm) as u64 * size,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        );
        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("linear_ph_step"),
            layout: &kernel.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params_buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: ops_buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: inputs_buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: state_buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: records_buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 5,
                    resource: scalars.as_entire_binding(),
                },
            ],
        });

        stats.prepare_seconds += prepare_started.elapsed().as_secs_f64();
        let mut results: Vec<MemberResult> = chunk
            .iter()
            .map(|member| {
                let mut r = MemberResult::default();
                r.trajectory.reserve((record_points.len() + 1) * n);
                r.trajectory.extend(member.x0.iter());
                r
            })
            .collect();
        // One workgroup per member (cooperative) or one invocation per member.
        let workgroups = if cooperative {
            count as u32
        } else {
            count.div_ceil(WORKGROUP_SIZE as usize) as u32
        };
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension.max(1);
        let grid_x = workgroups.min(max_dim);
        let grid_y = workgroups.div_ceil(grid_x);
        let mut next_record = 0;
        for step_begin in (0..plan.steps).step_by(plan_chunks.steps_per_dispatch) {
            let step_count = plan_chunks.steps_per_dispatch.min(plan.steps - step_begin);
            let params = KernelParams {
                members: count as u32,
                step_begin: step_begin as u32,
                step_count: step_count as u32,
                steps_total: plan.steps as u32,
                record_every: plan.record_every as u32,
                row_width: if cooperative {
                    grid_x
                } else {
                    grid_x * WORKGROUP_SIZE
                },
                pad0: 0,
                pad1: 0,
            };
            ctx.queue
                .write_buffer(&params_buffer, 0, bytemuck::bytes_of(&params));
            if sm > 0 {
                let bytes = sm * precision.size();
                let u = &inputs_bytes[step_begin * bytes..(step_begin + step_count) * bytes];
                ctx.queue.write_buffer(&inputs_buffer, 0, u);
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
            sink.progress((chunk_start * plan.steps + count * done) as u64);
            let in_dispatch = record_points[next_record..]
                .iter()
                .take_while(|&&k| k <= done)
                .count();
            if in_dispatch > 0 {
                let bytes = (in_dispatch * record_entries * count) as u64 * size;
                let values = read_back(ctx, &records_buffer, &readback, bytes, precision)?;
                for slot in 0..in_dispatch {
                    let base = slot * record_entries;
                    for (i, result) in results.iter_mut().enumerate() {
                        let at = |e: usize| values[(base + e) * count + i];
                        result.trajectory.extend((0..n).map(at));
                        result.outputs.extend((0..sm).map(|row| at(n + row)));
                        result.window_energy.push([
                            at(n + sm),
                            at(n + sm + 1),
                            at(n + sm + 2),
                            at(n + sm + 3),
                        ]);
                    }
                }
                next_record += in_dispatch;
            }
            stats.readback_seconds += readback_started.elapsed().as_secs_f64();
        }
        let state = read_back(ctx, &state_buffer, &readback, state_bytes, precision)?;
        for (i, result) in results.iter_mut().enumerate() {
            let at = |e: usize| state[e * count + i];
            result.final_state = (0..n).map(at).collect();
            let total = |c: usize| at(2 * n + c) + at(2 * n + 4 + c);
            result.totals = EnergyTotals {
                stored: total(0),
                supplied: total(1),
                port: total(2),
                dissipated: total(3),
                max_abs_residual: at(2 * n + 16),
            };
        }
        sink.accept(chunk_start, results)?;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Config;

    fn plan(members: usize, steps: usize, every: usize) -> Plan {
        let text = format!(
            "[system]\nkind = 'linear-ph'\nJ = [[0.0, 1.0], [-1.0, 0.0]]\nQ = [[1.0, 0.0], [0.0, 1.0]]\nx0 = [0.0, -1.0]\n\
             [scheme]\nfamily = 'gauss'\nstages = 2\nh = 0.01\nt_end = {}\n[output]\nevery = {every}\n\
             [ensemble]\nmembers = {members}\nx0 = {{ kind = 'perturb', sigma = 0.1 }}\n",
            steps as f64 * 0.01
        );
        Config::from_str_with(&text, &[], "test")
            .unwrap()
            .plan()
            .unwrap()
    }

    /// Chunks follow the storage-binding limit: with a 1 MiB binding, an ensemble of a
    /// million 2-state members is cut so that every buffer of a chunk fits.
    #[test]
    fn chunks_fit_the_binding_limit() {
        let plan = plan(1 << 20, 1000, 10);
        let layout = KernelLayout {
            states: 2,
            stages: 2,
            inputs: 0,
            rank: 2,
        };
        let binding = 1 << 20;
        let c = chunking(
            &layout,
            false,
            Precision::F64,
            &plan,
            binding,
            &GpuRunOptions::default(),
        )
        .unwrap();
        let widest = layout
            .operator_entries()
            .max(layout.state_entries())
            .max(layout.record_entries())
            * 8;
        assert!(c.members_per_chunk * widest <= binding as usize);
        assert!(c.members_per_chunk < 1 << 20 && c.members_per_chunk > 1000);
        let record_bytes =
            c.records_per_dispatch * layout.record_entries() * 8 * c.members_per_chunk;
        assert!(
            record_bytes <= binding as usize,
            "records of a dispatch fit: {record_bytes}"
        );
        assert!(
            c.steps_per_dispatch / 10 + 2
                >= c.records_per_dispatch.min(c.steps_per_dispatch / 10 + 2)
        );
    }

    /// Dispatches stay under the per-invocation loop budget for both kernels.
    #[test]
    fn dispatches_respect_the_loop_budget() {
        let plan = plan(4, 1_000_000, 1_000_000);
        for (layout, cooperative) in [
            (
                KernelLayout {
                    states: 2,
                    stages: 2,
                    inputs: 1,
                    rank: 1,
                },
                false,
            ),
            (
                KernelLayout {
                    states: 32,
                    stages: 4,
                    inputs: 1,
                    rank: 16,
                },
                false,
            ),
            (
                KernelLayout {
                    states: 100,
                    stages: 2,
                    inputs: 1,
                    rank: 50,
                },
                true,
            ),
        ] {
            let c = chunking(
                &layout,
                cooperative,
                Precision::F64,
                &plan,
                1 << 27,
                &GpuRunOptions::default(),
            )
            .unwrap();
            let per_step = layout.loop_iterations_per_step(cooperative, WORKGROUP_SIZE as usize);
            assert!(
                c.steps_per_dispatch * per_step <= LOOP_ITERATIONS_PER_DISPATCH,
                "{layout:?}"
            );
        }
    }

    /// A member wider than a binding is a clear error.
    #[test]
    fn members_larger_than_a_binding_are_rejected() {
        let plan = plan(4, 10, 1);
        let layout = KernelLayout {
            states: 128,
            stages: 4,
            inputs: 4,
            rank: 128,
        };
        let e = chunking(
            &layout,
            true,
            Precision::F64,
            &plan,
            4096,
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
