//! A run's needs against the machine: before any work, the host memory and device memory
//! the backend plans for ([`Footprint`]) and the bytes the output files will take are
//! compared with the memory available and the free space where the files go. A run that
//! cannot fit is refused with what it needs, what is there, and which setting to change.

use std::path::Path;

use crate::backend::Footprint;
use crate::error::{Error, Result};
use crate::plan::{MemoryBudget, format_bytes};

/// Runs at least this large (output bytes or planned host memory) print their estimate.
const REPORTED_BYTES: u64 = 1 << 30;

/// Runs of at least this many member-steps print their estimate.
const REPORTED_MEMBER_STEPS: u128 = 10_000_000_000;

/// Free space kept on the output's filesystem beyond the files themselves.
const DISK_MARGIN_BYTES: u64 = 64 << 20;

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
    pub available_memory: Option<u64>,
    pub free_disk: Option<u64>,
}

impl RunEstimate {
    /// The estimate of a run writing `output_bytes` into `output_dir`, with the machine's
    /// available memory and free disk measured now.
    pub fn measure(
        footprint: Footprint,
        sink_bytes: u64,
        budget: MemoryBudget,
        output_bytes: u64,
        output_dir: &Path,
    ) -> Self {
        RunEstimate {
            footprint,
            sink_bytes,
            budget,
            output_bytes,
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
        if let Some(free) = self.free_disk {
            let needed = self.output_bytes.saturating_add(DISK_MARGIN_BYTES);
            if needed > free {
                return Err(Error::invalid(
                    "--out",
                    format!(
                        "the run writes {} ({} member(s) × {} step(s), recorded every {} step(s)) but only {} is free there; record less often (output.every), run fewer members or steps, or write elsewhere",
                        format_bytes(self.output_bytes),
                        self.footprint.members,
                        self.footprint.steps,
                        self.footprint.record_every,
                        format_bytes(free)
                    ),
                ));
            }
        }
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
