//! What a run will need before it starts: host memory for results in flight, device memory
//! for a chunk's buffers, and whether one member's records fit the budget at all. Backends
//! stream members in chunks, so these do not grow with the ensemble; they grow with what one
//! member records (the number of record points times the recorded values).

use super::Backend;
use super::cpu;
use super::executor::device::ChunkDevice;
use super::executor::{ExecutorOptions, chunk_device_bytes, plan_chunks};
use super::twin::TwinDevice;
use crate::error::{Error, Result};
use crate::kernels::{CpuPath, Family};
use crate::plan::{MemoryBudget, format_bytes};

/// The resources a run is planned to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    pub members: usize,
    pub steps: usize,
    pub record_every: usize,
    pub members_per_chunk: usize,
    /// Host bytes of one member's results (trajectory, channels, totals).
    pub member_bytes: usize,
    /// Host bytes the backend plans for: a chunk's results and the sink's copy of them,
    /// the cached shared stream, and on a GPU the chunk's staged parameters and read-back.
    pub host_bytes: u64,
    /// Device bytes of one chunk's buffers (GPU runs).
    pub device_bytes: Option<u64>,
}

impl Footprint {
    /// Member-steps of the run.
    pub fn member_steps(&self) -> u128 {
        self.members as u128 * self.steps as u128
    }

    /// Refuses a run whose results are all held at once (collected rather than streamed)
    /// when they exceed `budget`'s results share.
    pub fn check_collected(&self, budget: &MemoryBudget) -> Result<()> {
        let held = self.member_bytes as u64 * self.members as u64;
        if held <= budget.results() as u64 {
            return Ok(());
        }
        Err(Error::invalid(
            "ensemble.members",
            format!(
                "all members' records are held at once: {} members × {} = {}, more than the {} the memory budget of {} allows; run fewer members, record less often (output.every) or raise --memory-budget",
                self.members,
                format_bytes(self.member_bytes as u64),
                format_bytes(held),
                format_bytes(budget.results() as u64),
                format_bytes(budget.bytes())
            ),
        ))
    }
}

/// Refuses a run in which one member's records alone exceed the result share of the
/// budget: such a member cannot be streamed, since members are the unit of a chunk.
fn check_member_fits<F: Family>(family: &F, budget: &MemoryBudget) -> Result<usize> {
    let grid = family.grid();
    let spec = family.record_spec();
    let records = grid.records();
    let member_bytes = spec.member_bytes(records);
    let allowed = budget.results();
    if member_bytes <= allowed {
        return Ok(member_bytes);
    }
    // Bytes per record point, and the cadence whose records fit.
    let per_record = spec.member_bytes(records + 1) - member_bytes;
    let fixed = spec.member_bytes(0);
    let fitting_records = allowed.saturating_sub(fixed) / per_record.max(1);
    let every = if fitting_records == 0 {
        None
    } else {
        Some(
            grid.steps
                .div_ceil(fitting_records)
                .max(grid.record_every + 1),
        )
    };
    let advice = match every {
        Some(every) => format!("record less often (output.every ≥ {every}) or raise"),
        None => "raise".into(),
    };
    Err(Error::invalid(
        "output.every",
        format!(
            "one member records {records} point(s) of {} each ({} per member), more than the {} of results the memory budget of {} allows in flight; {advice} --memory-budget (or HARBOR_MEMORY_BUDGET)",
            format_bytes(per_record as u64),
            format_bytes(member_bytes as u64),
            format_bytes(allowed as u64),
            format_bytes(budget.bytes()),
        ),
    ))
}

/// Members per chunk, host staging bytes and device bytes of a run through the executor on
/// `device`.
fn executor_footprint<D: ChunkDevice, F: Family>(
    device: &D,
    family: &F,
    options: &ExecutorOptions,
    budget: &MemoryBudget,
) -> Result<(usize, u64, u64)> {
    let (bound, plan) = plan_chunks(device, family, &options.within(budget))?;
    let per_member_values = bound.params.entries() + bound.state.entries();
    let records = plan.records_per_dispatch * bound.record.entries();
    // f64 values and their conversion to the device's precision, for the chunk on the
    // device and the next one, prepared meanwhile.
    let staging = 16
        * (plan.members_per_chunk * (2 * per_member_values + records)
            + plan.steps_per_dispatch * family.shared_stream().width()) as u64;
    let device_bytes = chunk_device_bytes(family, &bound, &plan, device.precision());
    Ok((plan.members_per_chunk, staging, device_bytes))
}

impl Backend {
    /// What running `family` within `budget` will need; an error when one member's records
    /// do not fit the budget, or when the GPU cannot run the plan at all.
    pub fn footprint<F: Family>(&self, family: &F, budget: &MemoryBudget) -> Result<Footprint> {
        let member_bytes = check_member_fits(family, budget)?;
        let grid = family.grid();
        let stream = family.shared_stream();
        let stream_bytes = stream.cached_bytes() as u64;
        let (members_per_chunk, staging, device_bytes) = match self {
            Backend::Cpu(CpuPath::Twin) => {
                // The twin's "device" buffers are host memory.
                let (members, staging, device) =
                    executor_footprint(&TwinDevice, family, &ExecutorOptions::default(), budget)?;
                (members, staging + device, None)
            }
            Backend::Cpu(_) => (cpu::chunk_members(family, budget.results()), 0, None),
            Backend::Gpu(ctx, options) => {
                let (members, staging, device) =
                    executor_footprint(ctx.as_ref(), family, options, budget)?;
                (members, staging, Some(device))
            }
        };
        let results = 2 * (members_per_chunk.min(family.member_count()) * member_bytes) as u64;
        Ok(Footprint {
            members: family.member_count(),
            steps: grid.steps,
            record_every: grid.record_every,
            members_per_chunk,
            member_bytes,
            host_bytes: results + stream_bytes + staging,
            device_bytes,
        })
    }
}
