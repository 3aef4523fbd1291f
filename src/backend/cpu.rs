//! The CPU backend: every member integrated in f64, members spread over all cores with
//! rayon, by the family's reference integrator or by the twin of its GPU kernel. Members are
//! independent, so results do not depend on the thread count.

use rayon::prelude::*;

use crate::error::Result;
use crate::kernels::{CpuPath, Family};
use crate::plan::ResultSink;
use crate::plan::record::{HOST_RESULT_BUDGET, members_within};

/// Streams the run into `sink` in chunks of members whose results fit the host budget.
pub fn run_into<F: Family>(family: &F, path: CpuPath, sink: &mut dyn ResultSink) -> Result<()> {
    let grid = family.grid();
    let per_member = family.record_spec().member_bytes(grid.records());
    let chunk = members_within(HOST_RESULT_BUDGET, per_member).clamp(1, 1 << 16);
    let total = family.member_count();
    for first in (0..total).step_by(chunk) {
        let results = (first..(first + chunk).min(total))
            .into_par_iter()
            .map(|i| {
                let member = family.member(i)?;
                family.integrate(&member, path)
            })
            .collect::<Result<Vec<_>>>()?;
        let done = first + results.len();
        sink.accept(first, results)?;
        sink.progress((done * grid.steps) as u64);
    }
    Ok(())
}
