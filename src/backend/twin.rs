//! The CPU as a place where the executor runs chunks: a chunk's buffers in host memory, in
//! the device layouts, and each dispatch window run by the kernel's CPU twin
//! ([`crate::kernels::GpuKernel::twin`]) for every member of the chunk, in parallel, in
//! f64. Chunking, streaming, the record windows and their decoding are the GPU's, so the
//! CPU twin path differs from the GPU path only in where a chunk runs, and all of it is
//! tested without an adapter.

use std::sync::Mutex;

use rayon::prelude::*;

use super::executor::chunk_stage::PreparedChunk;
use super::executor::conversion::from_bytes;
use super::executor::device::{ChunkDevice, RecordCopy, Window};
use super::executor::{self, ExecutorOptions, ExecutorStats};
use crate::error::Result;
use crate::kernels::{GpuKernel, KernelSource, Precision, StorageBuffer, TwinBindings};
use crate::plan::ResultSink;
use crate::results::Results;

/// The label of results the twin computed.
pub const TWIN_LABEL: &str = "cpu-twin";

/// Bytes of one buffer of the twin: host memory, bounded like a large GPU's storage binding
/// so that one chunk's buffers stay a fraction of the host's memory.
pub const TWIN_BINDING_BYTES: u64 = 1 << 30;

/// Members a thread takes at a time within a dispatch.
const MEMBERS_PER_TASK: usize = 16;

/// The CPU, running kernels' twins in f64 on all cores.
#[derive(Debug, Clone, Copy, Default)]
pub struct TwinDevice;

/// The run's constants.
pub struct TwinRun {
    constants: Vec<f64>,
}

/// A chunk's buffers in host memory, in the kernel's layouts.
pub struct TwinChunk {
    params: Vec<f64>,
    state: StorageBuffer,
    records: StorageBuffer,
    scratch: StorageBuffer,
    readback: [Mutex<Vec<f64>>; 2],
}

impl ChunkDevice for TwinDevice {
    type Run = TwinRun;
    type Chunk = TwinChunk;
    /// A window has run when `submit` returns.
    type Ticket = ();

    fn precision(&self) -> Precision {
        Precision::F64
    }

    fn label(&self) -> String {
        TWIN_LABEL.into()
    }

    fn binding_bytes(&self) -> u64 {
        TWIN_BINDING_BYTES
    }

    fn loop_budget(&self) -> Option<usize> {
        None
    }

    fn row_width(&self, members: usize, _per_workgroup: usize) -> usize {
        members
    }

    fn begin_run(&self, constants: &[f64], _stream_values: usize) -> Result<TwinRun> {
        Ok(TwinRun {
            constants: constants.to_vec(),
        })
    }

    fn upload(
        &self,
        _run: &mut TwinRun,
        prepared: &PreparedChunk,
        records_per_dispatch: usize,
    ) -> Result<TwinChunk> {
        let records = records_per_dispatch * prepared.kernel.record.entries() * prepared.count();
        Ok(TwinChunk {
            params: from_bytes(&prepared.params, Precision::F64),
            state: StorageBuffer::new(&from_bytes(&prepared.state, Precision::F64)),
            records: StorageBuffer::zeros(records),
            scratch: StorageBuffer::zeros(prepared.kernel.scratch * prepared.count()),
            readback: [Mutex::new(Vec::new()), Mutex::new(Vec::new())],
        })
    }

    fn submit<K: GpuKernel>(
        &self,
        kernel: &K,
        source: &KernelSource,
        run: &TwinRun,
        chunk: &TwinChunk,
        window: &Window,
    ) -> Result<()> {
        let params = &window.params;
        let bindings = TwinBindings {
            dispatch: params,
            params: &chunk.params,
            stream: window.stream,
            state: &chunk.state,
            records: &chunk.records,
            constants: &run.constants,
            scratch: &chunk.scratch,
        };
        (0..params.members as usize)
            .into_par_iter()
            .with_min_len(MEMBERS_PER_TASK)
            .for_each(|member| kernel.twin(source, &bindings, member));
        if let Some(copy) = window.records {
            *lock(&chunk.readback[copy.buffer]) = chunk.records.read(copy.values);
        }
        Ok(())
    }

    fn complete(
        &self,
        chunk: &TwinChunk,
        _ticket: (),
        records: Option<RecordCopy>,
    ) -> Result<Option<Vec<f64>>> {
        Ok(records.map(|copy| std::mem::take(&mut *lock(&chunk.readback[copy.buffer]))))
    }

    fn read_state(&self, chunk: &TwinChunk) -> Result<Vec<f64>> {
        Ok(chunk.state.read(chunk.state.len()))
    }
}

fn lock(buffer: &Mutex<Vec<f64>>) -> std::sync::MutexGuard<'_, Vec<f64>> {
    buffer
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs every member of `family` through its kernel's twin and collects the results.
pub fn run<F: crate::kernels::Family>(family: &F, options: &ExecutorOptions) -> Result<Results> {
    executor::run(&TwinDevice, family, options)
}

/// Runs every member of `family` through its kernel's twin, streaming each chunk's results
/// into `sink`.
pub fn run_into<F: crate::kernels::Family>(
    family: &F,
    options: &ExecutorOptions,
    sink: &mut dyn ResultSink,
) -> Result<ExecutorStats> {
    executor::run_into(&TwinDevice, family, options, sink)
}
