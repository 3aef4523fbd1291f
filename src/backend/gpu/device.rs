//! A GPU adapter as a place where chunks run: the run's and each chunk's buffers bound from
//! the declared bindings, the kernel variant assembled and compiled (once per variant), a
//! window's dispatch submitted with its records copied into one of two read-back buffers.

use std::sync::Arc;

use super::context::GpuContext;
use super::pipeline::Kernel;
use super::transfer::{buffer, read_back, read_mapped, upload};
use crate::backend::executor::chunk_stage::PreparedChunk;
use crate::backend::executor::chunking::LOOP_ITERATIONS_PER_DISPATCH;
use crate::backend::executor::conversion::{Contents, to_bytes};
use crate::backend::executor::device::{ChunkDevice, RecordCopy, Window};
use crate::error::{Error, Result};
use crate::kernels::abi::{BINDINGS, DispatchParams, binding_index};
use crate::kernels::wgsl::assemble;
use crate::kernels::{GpuKernel, KernelSource, Precision};

/// The buffers every chunk of a run binds: the dispatch parameters, the shared stream's
/// window and the run's constants; and the kernel variant last assembled, since chunks
/// usually share it.
pub struct RunBuffers {
    pub dispatch: wgpu::Buffer,
    pub stream: wgpu::Buffer,
    pub constants: wgpu::Buffer,
    assembled: Option<(KernelSource, Arc<Kernel>)>,
}

/// A chunk's device buffers, its bind group and its kernel's pipeline. Records are copied
/// after each dispatch into one of two read-back buffers in turn, so that one window's
/// records are decoded while the next window runs.
pub struct ChunkBuffers {
    pub params: wgpu::Buffer,
    /// Per-member scratch, on the device only (at least one real: no zero-sized buffers).
    pub scratch: wgpu::Buffer,
    pub state: wgpu::Buffer,
    pub records: wgpu::Buffer,
    pub readback: [wgpu::Buffer; 2],
    pub bind_group: wgpu::BindGroup,
    pub state_bytes: u64,
    pub kernel: Arc<Kernel>,
    /// Workgroups of a dispatch: (x, y) of the 2-D grid.
    pub workgroups: (u32, u32),
}

impl ChunkDevice for GpuContext {
    type Run = RunBuffers;
    type Chunk = ChunkBuffers;
    type Ticket = wgpu::SubmissionIndex;

    fn precision(&self) -> Precision {
        self.precision
    }

    fn label(&self) -> String {
        super::backend_name(self)
    }

    fn binding_bytes(&self) -> u64 {
        self.limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size)
    }

    fn loop_budget(&self) -> Option<usize> {
        self.adapter
            .software
            .then_some(LOOP_ITERATIONS_PER_DISPATCH)
    }

    fn row_width(&self, members: usize, per_workgroup: usize) -> usize {
        let workgroups = members.div_ceil(per_workgroup);
        let max_dim = self.limits.max_compute_workgroups_per_dimension.max(1) as usize;
        workgroups.min(max_dim) * per_workgroup
    }

    fn begin_run(&self, constants: &[f64], stream_values: usize) -> Result<RunBuffers> {
        let size = self.precision.size() as u64;
        let storage = wgpu::BufferUsages::STORAGE;
        let constants = to_bytes(constants, self.precision, Contents::Constants)?;
        Ok(RunBuffers {
            dispatch: buffer(
                self,
                "dispatch",
                std::mem::size_of::<DispatchParams>() as u64,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            stream: buffer(
                self,
                "stream",
                stream_values as u64 * size,
                storage | wgpu::BufferUsages::COPY_DST,
            ),
            constants: upload(self, "constants", &constants, storage),
            assembled: None,
        })
    }

    fn upload(
        &self,
        run: &mut RunBuffers,
        prepared: &PreparedChunk,
        records_per_dispatch: usize,
    ) -> Result<ChunkBuffers> {
        let source = &prepared.kernel;
        // Chunks usually share their variant: assemble (and look up) only when it changes.
        if run
            .assembled
            .as_ref()
            .is_none_or(|(known, _)| known != source)
        {
            let text = assemble(source, self.precision)?;
            run.assembled = Some((source.clone(), self.kernel(source.name, &text)?));
        }
        let kernel = run.assembled.as_ref().expect("assembled above").1.clone();
        let storage = wgpu::BufferUsages::STORAGE;
        let size = self.precision.size() as u64;
        let params = upload(self, "params", &prepared.params, storage);
        let state = upload(
            self,
            "state",
            &prepared.state,
            storage | wgpu::BufferUsages::COPY_SRC,
        );
        let state_bytes = prepared.state.len() as u64;
        let record_entries = source.record.entries();
        let record_bytes = (records_per_dispatch * record_entries * prepared.count()) as u64 * size;
        let records = buffer(
            self,
            "records",
            record_bytes,
            storage | wgpu::BufferUsages::COPY_SRC,
        );
        let readback = [0, 1].map(|_| {
            buffer(
                self,
                "readback",
                record_bytes.max(state_bytes),
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )
        });
        let scratch = buffer(
            self,
            "scratch",
            (source.scratch * prepared.count()).max(1) as u64 * size,
            storage,
        );
        let resources: [(&str, &wgpu::Buffer); 7] = [
            ("dispatch", &run.dispatch),
            ("params", &params),
            ("stream", &run.stream),
            ("state", &state),
            ("records", &records),
            ("constants", &run.constants),
            ("scratch", &scratch),
        ];
        debug_assert_eq!(resources.len(), BINDINGS.len());
        let entries: Vec<wgpu::BindGroupEntry> = resources
            .iter()
            .map(|(name, buffer)| wgpu::BindGroupEntry {
                binding: binding_index(name),
                resource: buffer.as_entire_binding(),
            })
            .collect();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(source.name),
            layout: &kernel.layout,
            entries: &entries,
        });
        let per_workgroup = source.members_per_workgroup.max(1) as usize;
        let count = prepared.count();
        // At most `count` ≤ u32::MAX workgroups (the chunking caps members per chunk).
        let workgroups = u32::try_from(count.div_ceil(per_workgroup))
            .map_err(|_| Error::Gpu(format!("{count} members need too many workgroups")))?;
        let grid_x = (self.row_width(count, per_workgroup) / per_workgroup).max(1) as u32;
        Ok(ChunkBuffers {
            params,
            scratch,
            state,
            records,
            readback,
            bind_group,
            state_bytes,
            kernel,
            workgroups: (grid_x, workgroups.div_ceil(grid_x)),
        })
    }

    fn submit<K: GpuKernel>(
        &self,
        _kernel: &K,
        _source: &KernelSource,
        run: &RunBuffers,
        chunk: &ChunkBuffers,
        window: &Window,
    ) -> Result<wgpu::SubmissionIndex> {
        let (params, stream) = (&window.params, window.stream);
        // Queued writes run after the windows submitted before them.
        self.queue
            .write_buffer(&run.dispatch, 0, bytemuck::bytes_of(params));
        if !stream.is_empty() {
            let bytes = to_bytes(
                stream,
                self.precision,
                Contents::Values("shared inputs (signals sampled at the stage times)"),
            )?;
            self.queue.write_buffer(&run.stream, 0, &bytes);
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("steps"),
            });
        {
            let mut compute = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("steps"),
                timestamp_writes: None,
            });
            compute.set_pipeline(&chunk.kernel.pipeline);
            compute.set_bind_group(0, &chunk.bind_group, &[]);
            compute.dispatch_workgroups(chunk.workgroups.0, chunk.workgroups.1, 1);
        }
        if let Some(copy) = window.records {
            let bytes = copy.values as u64 * self.precision.size() as u64;
            encoder.copy_buffer_to_buffer(
                &chunk.records,
                0,
                &chunk.readback[copy.buffer],
                0,
                bytes,
            );
        }
        let submission = self.queue.submit([encoder.finish()]);
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(Error::Gpu(format!("dispatch failed: {error}")));
        }
        Ok(submission)
    }

    fn complete(
        &self,
        chunk: &ChunkBuffers,
        submission: wgpu::SubmissionIndex,
        records: Option<RecordCopy>,
    ) -> Result<Option<Vec<f64>>> {
        let Some(copy) = records else {
            self.device
                .poll(wgpu::PollType::Wait {
                    submission_index: Some(submission),
                    timeout: None,
                })
                .map_err(|e| Error::Gpu(format!("waiting for the device failed: {e}")))?;
            return Ok(None);
        };
        let bytes = copy.values as u64 * self.precision.size() as u64;
        read_mapped(self, &chunk.readback[copy.buffer], bytes, submission).map(Some)
    }

    fn read_state(&self, chunk: &ChunkBuffers) -> Result<Vec<f64>> {
        read_back(self, &chunk.state, &chunk.readback[0], chunk.state_bytes)
    }
}
