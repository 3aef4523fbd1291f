//! The host stage of a chunk: its members drawn and packed by the family (or built straight
//! from their indices, [`GpuKernel::kernel_chunk_range`]), then converted to the run's
//! precision ([`PreparedChunk`], which runs ahead on a thread of its own while the previous
//! chunk is on the device); a [`super::device::ChunkDevice`] then uploads it.

use std::ops::Range;
use std::time::Instant;

use rayon::prelude::*;

use super::conversion::{Contents, to_bytes};
use crate::error::Result;
use crate::kernels::{Family, GpuKernel, KernelSource, Precision, RangeChunk};
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
    /// Builds the chunk of `members` with `kernel` (from their indices where it can, else
    /// from the drawn members) and converts the buffers.
    pub fn prepare<F: Family>(
        family: &F,
        kernel: &F::Kernel,
        members: Range<usize>,
        precision: Precision,
    ) -> Result<Self> {
        let started = Instant::now();
        let spec = family.record_spec();
        // The kernel belongs to the whole plan: a shard's members are offset in it.
        let first = family.engine_index(members.start);
        let in_plan = first..first + members.len();
        let RangeChunk { chunk, starts } = match kernel.kernel_chunk_range(in_plan, spec) {
            Some(built) => built,
            None => Self::drawn(family, kernel, members.clone())?,
        };
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

    /// The chunk of `members` packed from the drawn members.
    fn drawn<F: Family>(
        family: &F,
        kernel: &F::Kernel,
        members: Range<usize>,
    ) -> Result<RangeChunk> {
        // The first error in member order, whatever the thread count.
        let drawn: Vec<Result<F::Member>> =
            members.into_par_iter().map(|i| family.member(i)).collect();
        let drawn = drawn.into_iter().collect::<Result<Vec<_>>>()?;
        let chunk = kernel.kernel_chunk(&drawn)?;
        let spec = family.record_spec();
        let starts = drawn
            .par_iter()
            .map(|member| {
                let mut result = MemberResult::with_capacity(spec, 0);
                family.record_start(member, &mut result);
                result
            })
            .collect();
        Ok(RangeChunk { chunk, starts })
    }

    pub fn count(&self) -> usize {
        self.members.len()
    }
}
