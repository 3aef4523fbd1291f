//! The host and upload stages of a chunk: its members drawn, packed by the family and
//! converted to the run's precision on the host ([`PreparedChunk`], which runs ahead on a
//! thread of its own while the previous chunk is on the device), then its buffers created
//! and bound ([`ChunkBuffers`]).

use std::ops::Range;
use std::time::Instant;

use rayon::prelude::*;

use super::context::{GpuContext, Precision};
use super::pipeline::Kernel;
use super::transfer::{Contents, buffer, to_bytes, upload};
use crate::error::Result;
use crate::kernels::abi::{BINDINGS, binding_index};
use crate::kernels::{Family, GpuKernel, KernelSource};
use crate::plan::MemberResult;

/// A chunk ready for upload: its kernel variant, parameters and initial state in the run's
/// precision, and each member's records at t = 0.
pub struct PreparedChunk {
    /// The chunk's members, as indices of the run.
    pub members: Range<usize>,
    pub kernel: KernelSource,
    pub params: Vec<u8>,
    pub state: Vec<u8>,
    /// Per member, its result holding the sample at t = 0 ([`Family::record_start`]).
    pub starts: Vec<MemberResult>,
    /// Host seconds the preparation took.
    pub seconds: f64,
}

impl PreparedChunk {
    /// Draws the members of `members`, packs them with `kernel` and converts the buffers.
    pub fn prepare<F: Family>(
        family: &F,
        kernel: &F::Kernel,
        members: Range<usize>,
        precision: Precision,
    ) -> Result<Self> {
        let started = Instant::now();
        // The first error in member order, whatever the thread count.
        let drawn: Vec<Result<F::Member>> = members
            .clone()
            .into_par_iter()
            .map(|i| family.member(i))
            .collect();
        let drawn = drawn.into_iter().collect::<Result<Vec<_>>>()?;
        let chunk = kernel.kernel_chunk(&drawn)?;
        let spec = family.record_spec();
        let starts = drawn
            .iter()
            .map(|member| {
                let mut result = MemberResult::with_capacity(spec, 0);
                family.record_start(member, &mut result);
                result
            })
            .collect();
        drop(drawn);
        let params = to_bytes(
            &chunk.params,
            precision,
            Contents::Values("per-member parameters"),
        )?;
        let state = to_bytes(&chunk.state, precision, Contents::Values("initial states"))?;
        Ok(PreparedChunk {
            members,
            kernel: chunk.kernel,
            params,
            state,
            starts,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    pub fn count(&self) -> usize {
        self.members.len()
    }
}

/// The buffers every chunk of a run binds: the dispatch parameters, the shared stream's
/// window and the run's constants.
pub struct RunBuffers {
    pub dispatch: wgpu::Buffer,
    pub stream: wgpu::Buffer,
    pub constants: wgpu::Buffer,
}

/// A chunk's device buffers and their bind group. Records are copied after each dispatch
/// into one of two read-back buffers in turn, so that one window's records are decoded
/// while the next window runs.
pub struct ChunkBuffers {
    pub params: wgpu::Buffer,
    pub state: wgpu::Buffer,
    pub records: wgpu::Buffer,
    pub readback: [wgpu::Buffer; 2],
    pub bind_group: wgpu::BindGroup,
    pub state_bytes: u64,
}

impl ChunkBuffers {
    /// Uploads `prepared` and binds it with `run`'s buffers for `kernel`, with room for
    /// `records_per_dispatch` record slots per member.
    pub fn upload(
        ctx: &GpuContext,
        prepared: &PreparedChunk,
        kernel: &Kernel,
        run: &RunBuffers,
        records_per_dispatch: usize,
    ) -> Self {
        let storage = wgpu::BufferUsages::STORAGE;
        let size = ctx.precision.size() as u64;
        let params = upload(ctx, "params", &prepared.params, storage);
        let state = upload(
            ctx,
            "state",
            &prepared.state,
            storage | wgpu::BufferUsages::COPY_SRC,
        );
        let state_bytes = prepared.state.len() as u64;
        let record_entries = prepared.kernel.record.entries();
        let record_bytes = (records_per_dispatch * record_entries * prepared.count()) as u64 * size;
        let records = buffer(
            ctx,
            "records",
            record_bytes,
            storage | wgpu::BufferUsages::COPY_SRC,
        );
        let readback = [0, 1].map(|_| {
            buffer(
                ctx,
                "readback",
                record_bytes.max(state_bytes),
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )
        });
        let resources: [(&str, &wgpu::Buffer); 6] = [
            ("dispatch", &run.dispatch),
            ("params", &params),
            ("stream", &run.stream),
            ("state", &state),
            ("records", &records),
            ("constants", &run.constants),
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
            label: Some(prepared.kernel.name),
            layout: &kernel.layout,
            entries: &entries,
        });
        ChunkBuffers {
            params,
            state,
            records,
            readback,
            bind_group,
            state_bytes,
        }
    }
}
