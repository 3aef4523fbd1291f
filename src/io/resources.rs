//! A run's needs against the machine: before any work, the host memory and device memory
//! the backend plans for ([`Footprint`]) and the bytes the output files will take are
//! compared with the memory available and the free space where the files go. A run that
//! cannot fit is refused with what it needs, what is there, and which setting to change.

use std::path::Path;

use super::output::SimulationWriter;
use crate::backend::Footprint;
use crate::error::{Error, Result};
use crate::kernels::Family;
use crate::plan::{MemoryBudget, format_bytes};

/// Runs at least this large (output bytes or planned host memory) print their estimate.
const REPORTED_BYTES: u64 = 1 << 30;

/// Runs of at least this many member-steps print their estimate.
const REPORTED_MEMBER_STEPS: u128 = 10_000_000_000;

/// The smallest margin of free space kept on the output's filesystem beyond the files.
pub const DISK_MARGIN_FLOOR: u64 = 1 << 20;

/// The margin as a fraction of the output: 1/20 (5 %).
pub const DISK_MARGIN_DIVISOR: u64 = 20;

/// Free space kept beyond an output of `output_bytes` (metadata, block rounding, whatever
/// else writes there meanwhile): 5 % of it, at least [`DISK_MARGIN_FLOOR`] (1 MiB).
pub fn disk_margin(output_bytes: u64) -> u64 {
    (output_bytes / DISK_MARGIN_DIVISOR).max(DISK_MARGIN_FLOOR)
}

/// The largest output that fits `free` bytes with its margin: o + margin(o) ≤ free.
fn largest_output_within(free: u64) -> u64 {
    let proportional = free / (DISK_MARGIN_DIVISOR + 1) * DISK_MARGIN_DIVISOR;
    if disk_margin(proportional) == proportional / DISK_MARGIN_DIVISOR {
        proportional
    } else {
        free.saturating_sub(DISK_MARGIN_FLOOR)
    }
}

/// Bytes of memory the system can give a new process without swapping (`MemAvailable` of
/// /proc/meminfo), or `None` where that is not known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes free to unprivileged users on the filesystem holding `path`.
pub fn free_disk(path: &Path) -> Option<u64> {
    fs4::available_space(path).ok()
}

/// What a run needs and what the machine has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunEstimate {
    pub footprint: Footprint,
    /// Host bytes the result sink (the files' writer) holds besides the backend's.
    pub sink_bytes: u64,
    pub budget: MemoryBudget,
    pub output_bytes: u64,
    /// Output bytes each record point adds over all members (trajectory samples, outputs,
    /// windowed energies); 0 when nothing is recorded per step.
    pub record_point_bytes: u64,
    pub available_memory: Option<u64>,
    pub free_disk: Option<u64>,
}

impl RunEstimate {
    /// The estimate of `family`'s run (planned by the backend as `footprint`) writing its
    /// files into `output_dir`, with the machine's available memory and free disk measured
    /// now.
    pub fn measure<F: Family>(
        footprint: Footprint,
        family: &F,
        budget: MemoryBudget,
        output_dir: &Path,
    ) -> Self {
        let spec = family.record_spec();
        let records = family.grid().records();
        let per_member = spec
            .member_bytes(records.saturating_add(1))
            .saturating_sub(spec.member_bytes(records));
        RunEstimate {
            footprint,
            sink_bytes: SimulationWriter::host_bytes(family),
            budget,
            output_bytes: SimulationWriter::planned_bytes(family),
            record_point_bytes: (per_member as u64).saturating_mul(family.member_count() as u64),
            available_memory: available_memory(),
            free_disk: free_disk(output_dir),
        }
    }

    /// Host bytes of the whole run: the backend's and the sink's.
    pub fn host_bytes(&self) -> u64 {
        self.footprint.host_bytes.saturating_add(self.sink_bytes)
    }

    /// Refuses a run whose output does not fit the free disk space, or whose planned host
    /// memory exceeds the memory available.
    pub fn check(&self) -> Result<()> {
        self.check_disk()?;
        self.check_memory()
    }

    /// Refuses a run whose output and its margin ([`disk_margin`]) exceed the free disk
    /// space, saying what is needed, what is free, and only the changes that would help.
    pub fn check_disk(&self) -> Result<()> {
        let Some(free) = self.free_disk else {
            return Ok(());
        };
        let margin = disk_margin(self.output_bytes);
        let needed = self.output_bytes.saturating_add(margin);
        if needed <= free {
            return Ok(());
        }
        let footprint = &self.footprint;
        let records = footprint.steps.div_ceil(footprint.record_every.max(1)) as u64;
        let mut advice = Vec::new();
        if self.record_point_bytes > 0 && records > 1 {
            let fixed = self
                .output_bytes
                .saturating_sub(records.saturating_mul(self.record_point_bytes));
            let fitting =
                largest_output_within(free).saturating_sub(fixed) / self.record_point_bytes;
            if fitting >= 1 {
                let every = (footprint.steps as u64)
                    .div_ceil(fitting)
                    .max(footprint.record_every as u64 + 1);
                advice.push(format!("record less often (output.every ≥ {every})"));
            }
        }
        if footprint.members > 1 {
            advice.push("run fewer members (ensemble.members)".to_string());
        }
        advice.push("free space there or write to another filesystem (--out)".to_string());
        let recorded = if self.record_point_bytes > 0 {
            format!(
                "{} member(s), {records} record point(s) of {} step(s) each",
                footprint.members, footprint.record_every
            )
        } else {
            format!("{} member(s), nothing recorded per step", footprint.members)
        };
        Err(Error::invalid(
            "--out",
            format!(
                "the run writes {} ({recorded}) and keeps a margin of {} free (5 % of the output, at least {}): {} needed, but only {} is free there; {}",
                format_bytes(self.output_bytes),
                format_bytes(margin),
                format_bytes(DISK_MARGIN_FLOOR),
                format_bytes(needed),
                format_bytes(free),
                join_alternatives(&advice)
            ),
        ))
    }

    /// Refuses a run whose planned host memory exceeds the memory available.
    pub fn check_memory(&self) -> Result<()> {
        if let Some(available) = self.available_memory
            && self.host_bytes() > available
        {
            return Err(Error::invalid(
                "--memory-budget",
                format!(
                    "the run plans {} of host memory within a budget of {} but only {} is available; lower --memory-budget (or HARBOR_MEMORY_BUDGET)",
                    format_bytes(self.host_bytes()),
                    format_bytes(self.budget.bytes()),
                    format_bytes(available)
                ),
            ));
        }
        Ok(())
    }

    /// Whether the run is large enough to print its estimate before it starts.
    pub fn is_large(&self) -> bool {
        self.output_bytes >= REPORTED_BYTES
            || self.host_bytes() >= REPORTED_BYTES
            || self.footprint.member_steps() >= REPORTED_MEMBER_STEPS
    }

    /// One line: work, memory, output.
    pub fn describe(&self) -> String {
        let device = self.footprint.device_bytes.map_or_else(String::new, |d| {
            format!(", {} of device memory per chunk", format_bytes(d))
        });
        let disk = self
            .free_disk
            .map_or_else(String::new, |f| format!(" ({} free)", format_bytes(f)));
        format!(
            "{:.3e} member-steps in chunks of {} member(s): {} of host memory (budget {}){device}; writes {}{disk}",
            self.footprint.member_steps() as f64,
            self.footprint.members_per_chunk,
            format_bytes(self.host_bytes()),
            format_bytes(self.budget.bytes()),
            format_bytes(self.output_bytes),
        )
    }
}

/// "a", "a or b", "a, b or c".
fn join_alternatives(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}
