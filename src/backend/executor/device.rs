//! Where a chunk runs. The executor plans, prepares, dispatches and reads back the same way
//! for every device; a [`ChunkDevice`] only holds a chunk's buffers and runs a dispatch
//! window over them: a GPU adapter ([`crate::backend::gpu::GpuContext`], the family's WGSL
//! kernel) or the CPU ([`crate::backend::twin::TwinDevice`], the kernel's CPU twin).

use super::chunk_stage::PreparedChunk;
use crate::error::Result;
use crate::kernels::abi::DispatchParams;
use crate::kernels::{GpuKernel, KernelSource, Precision};

/// A window submitted to a device: where its records are copied for reading back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordCopy {
    /// Record slots the window wrote.
    pub slots: usize,
    /// Which of the chunk's two read-back buffers holds them.
    pub buffer: usize,
    /// Reals copied: slots × record entries × members.
    pub values: usize,
}

/// One dispatch window as the executor submits it.
pub struct Window<'a> {
    /// The dispatch's step range, strides and pass.
    pub params: DispatchParams,
    /// The shared stream's values for the window's steps.
    pub stream: &'a [f64],
    /// Where its records are copied, when it records.
    pub records: Option<RecordCopy>,
}

/// A place where a chunk's buffers live and its dispatch windows run.
pub trait ChunkDevice: Sync {
    /// The buffers every chunk of a run binds (dispatch parameters, the stream window, the
    /// constants), and whatever the device keeps for the run.
    type Run;
    /// A chunk's buffers on the device.
    type Chunk;
    /// A submitted window, to wait for.
    type Ticket;

    /// The precision the device computes in.
    fn precision(&self) -> Precision;
    /// The label written with results (`gpu: <adapter>`, `cpu-twin`).
    fn label(&self) -> String;
    /// Bytes of one buffer binding.
    fn binding_bytes(&self) -> u64;
    /// Loop iterations one invocation may run per dispatch, where the device silently
    /// truncates longer loops (llvmpipe).
    fn loop_budget(&self) -> Option<usize>;
    /// Members per row of a dispatch of `members` members, `per_workgroup` to a workgroup
    /// (the `row_width` of [`DispatchParams`]).
    fn row_width(&self, members: usize, per_workgroup: usize) -> usize;

    /// The run's shared buffers: `constants` in the device's precision, room for a stream
    /// window of `stream_values` reals.
    fn begin_run(&self, constants: &[f64], stream_values: usize) -> Result<Self::Run>;
    /// Uploads `prepared` (its kernel variant, parameters and initial state in the device's
    /// precision) with room for `records_per_dispatch` record slots per member.
    fn upload(
        &self,
        run: &mut Self::Run,
        prepared: &PreparedChunk,
        records_per_dispatch: usize,
    ) -> Result<Self::Chunk>;
    /// Runs (or queues) `window` of `kernel` (variant `source`) over `chunk`, copying its
    /// record slots into a read-back buffer.
    fn submit<K: GpuKernel>(
        &self,
        kernel: &K,
        source: &KernelSource,
        run: &Self::Run,
        chunk: &Self::Chunk,
        window: &Window,
    ) -> Result<Self::Ticket>;
    /// Waits for a submitted window; its records' values (slot-major, structure-of-arrays
    /// within a slot) when it copied some.
    fn complete(
        &self,
        chunk: &Self::Chunk,
        ticket: Self::Ticket,
        records: Option<RecordCopy>,
    ) -> Result<Option<Vec<f64>>>;
    /// The chunk's state buffer once every window has run.
    fn read_state(&self, chunk: &Self::Chunk) -> Result<Vec<f64>>;
}
