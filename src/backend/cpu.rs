//! The CPU backend: every member integrated in f64, members spread over all cores with
//! rayon, by the family's reference integrator or by the twin of its GPU kernel. Members are
//! independent, so results do not depend on the thread count.

use rayon::prelude::*;

use crate::error::Result;
use crate::kernels::{CpuPath, Family};
use crate::plan::MemoryBudget;
use crate::plan::ResultSink;
use crate::plan::budget::members_within;

/// Most members per chunk: enough to keep every core busy, few enough that progress moves.
const MAX_CHUNK_MEMBERS: usize = 1 << 16;

/// Members per chunk of a CPU run whose results may take `result_budget` bytes.
pub fn chunk_members<F: Family>(family: &F, result_budget: usize) -> usize {
    let per_member = family.record_spec().member_bytes(family.grid().records());
    members_within(result_budget, per_member).clamp(1, MAX_CHUNK_MEMBERS)
}

/// Streams the run into `sink` in chunks of members whose results fit the default
/// [`MemoryBudget`]'s share.
pub fn run_into<F: Family>(family: &F, path: CpuPath, sink: &mut dyn ResultSink) -> Result<()> {
    run_into_within(family, path, MemoryBudget::default().results(), sink)
}

/// Streams the run into `sink` in chunks of members whose results fit `result_budget`
/// bytes.
pub fn run_into_within<F: Family>(
    family: &F,
    path: CpuPath,
    result_budget: usize,
    sink: &mut dyn ResultSink,
) -> Result<()> {
    family.check_stream()?;
    let grid = family.grid();
    let chunk = chunk_members(family, result_budget);
    let total = family.member_count();
    for first in (0..total).step_by(chunk) {
        let results = (first..(first + chunk).min(total))
            .into_par_iter()
            .map(|i| {
                let member = family.member(i)?;
                let mut result = family.integrate(&member, path)?;
                result.complete_status(grid, family.record_spec());
                Ok(result)
            })
            .collect::<Result<Vec<_>>>()?;
        let done = first + results.len();
        sink.accept(first, results)?;
        sink.progress((done * grid.steps) as u64);
    }
    Ok(())
}
