//! What a member records, declared by its family: the state sampled along the trajectory,
//! named channels (per record point, optionally also at t = 0), and scalar totals at the
//! end. Both backends fill the same [`MemberResult`], so tests compare them member by
//! member, and sinks write any family's records without knowing the family.

use super::{ResultBlock, StepGrid};
use crate::error::Result;

/// A quantity recorded per member at every record point.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// File stem and key (`energy` → `energy.npy`).
    pub name: &'static str,
    /// Shape of one record (`[4]`, `[s, m]`; `[]` for a scalar).
    pub shape: Vec<usize>,
    /// Whether the channel is also sampled at t = 0 (then it has samples = records + 1 rows).
    pub at_start: bool,
    /// What the array holds, for summary.json.
    pub description: String,
}

impl Channel {
    /// Values per record.
    pub fn width(&self) -> usize {
        self.shape.iter().product()
    }

    /// Rows over a run with `records` record points.
    pub fn rows(&self, records: usize) -> usize {
        records + usize::from(self.at_start)
    }
}

/// What a run records, from `[output]`: every switch is on unless the user turns it off,
/// and a run pays only for what is on (a final-state-only run skips the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Recording {
    /// States at the record points (`trajectory.npy`).
    pub trajectory: bool,
    /// The energy balance: per-window energies and the compensated totals.
    pub energy: bool,
    /// The discrete outputs y^k at the record points.
    pub outputs: bool,
}

impl Default for Recording {
    fn default() -> Self {
        Recording {
            trajectory: true,
            energy: true,
            outputs: true,
        }
    }
}

impl Recording {
    /// Only the final state.
    pub const FINAL_STATE: Recording = Recording {
        trajectory: false,
        energy: false,
        outputs: false,
    };
}

/// Everything a family records per member.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordSpec {
    /// Width of a trajectory sample and of the final state (the state, as the user sees
    /// it).
    pub state_width: usize,
    /// Whether the state is sampled along the trajectory (else only the final state is
    /// kept).
    pub trajectory: bool,
    pub channels: Vec<Channel>,
    /// Names of the per-member scalars at the end of the run.
    pub totals: Vec<&'static str>,
    /// The summary.json key the totals are grouped under (`energy`).
    pub totals_group: &'static str,
}

impl RecordSpec {
    /// Bytes of host memory one member's results take over `records` record points.
    pub fn member_bytes(&self, records: usize) -> usize {
        let channel_values: usize = self
            .channels
            .iter()
            .map(|c| c.rows(records) * c.width())
            .sum();
        let samples = if self.trajectory { records + 1 } else { 0 };
        8 * ((samples + 1) * self.state_width + channel_values + self.totals.len())
            + 48 * (self.channels.len() + 3)
    }
}

/// Everything recorded for one member.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemberResult {
    pub final_state: Vec<f64>,
    /// States at the sample times: t = 0 first, then every record point; samples × width.
    pub trajectory: Vec<f64>,
    /// Per declared channel, its rows one after the other.
    pub channels: Vec<Vec<f64>>,
    /// Per declared total.
    pub totals: Vec<f64>,
    /// The first step (1-based) after which the member's state or step quantities were not
    /// finite; `None` when they stayed finite. (Reported exactly up to 2²⁴ steps in f32.)
    pub nonfinite_step: Option<u64>,
}

impl MemberResult {
    /// An empty result with room for `records` record points of `spec`.
    pub fn with_capacity(spec: &RecordSpec, records: usize) -> Self {
        MemberResult {
            final_state: Vec::with_capacity(spec.state_width),
            trajectory: Vec::with_capacity(
                usize::from(spec.trajectory) * (records + 1) * spec.state_width,
            ),
            channels: spec
                .channels
                .iter()
                .map(|c| Vec::with_capacity(c.rows(records) * c.width()))
                .collect(),
            totals: Vec::with_capacity(spec.totals.len()),
            nonfinite_step: None,
        }
    }
}

impl MemberResult {
    /// Makes room for `records` record points of `spec` on top of what is held.
    pub fn reserve_records(&mut self, spec: &RecordSpec, records: usize) {
        if spec.trajectory {
            self.trajectory.reserve(records * spec.state_width);
        }
        for (values, channel) in self.channels.iter_mut().zip(&spec.channels) {
            values.reserve(records * channel.width());
        }
        self.final_state.reserve(spec.state_width);
        self.totals.reserve(spec.totals.len());
    }

    /// Completes the status with what is observed only at record points: when the state
    /// and the step quantities stayed finite but a recorded value (a trajectory sample, a
    /// channel row) or a total is not — an energy sum that overflowed, H of a finite state
    /// that overflows — the member is marked non-finite from the record step where that
    /// value first appears (the last step for totals and the final state; step 1 for a
    /// value at t = 0).
    pub fn complete_status(&mut self, grid: &StepGrid, spec: &RecordSpec) {
        if self.nonfinite_step.is_some() {
            return;
        }
        self.nonfinite_step = first_nonfinite_record(
            grid,
            spec,
            &self.trajectory,
            self.channels.iter().map(Vec::as_slice),
            &self.totals,
            &self.final_state,
        );
    }
}

/// The step of the first record point at which one of a member's recorded values is not
/// finite ([`MemberResult::complete_status`]), at least 1; `None` when all are finite.
pub(super) fn first_nonfinite_record<'a>(
    grid: &StepGrid,
    spec: &RecordSpec,
    trajectory: &[f64],
    channels: impl Iterator<Item = &'a [f64]>,
    totals: &[f64],
    final_state: &[f64],
) -> Option<u64> {
    let record_step = |row: usize| ((row + 1) * grid.record_every).min(grid.steps);
    let first_bad_row = |values: &[f64], width: usize| {
        if all_finite(values) {
            return None;
        }
        values
            .chunks(width.max(1))
            .position(|row| row.iter().any(|v| !v.is_finite()))
    };
    let step_of = |row: usize, at_start: bool| match (at_start, row) {
        (true, 0) => 1,
        (true, row) => record_step(row - 1),
        (false, row) => record_step(row),
    };
    let mut first: Option<usize> = None;
    let mut note = |step: usize| first = Some(first.map_or(step, |f| f.min(step)));
    if let Some(row) = first_bad_row(trajectory, spec.state_width) {
        note(step_of(row, true));
    }
    for (channel, values) in spec.channels.iter().zip(channels) {
        if let Some(row) = first_bad_row(values, channel.width()) {
            note(step_of(row, channel.at_start));
        }
    }
    if totals.iter().chain(final_state).any(|v| !v.is_finite()) {
        note(grid.steps);
    }
    first.map(|step| step.max(1) as u64)
}

/// Whether every value is finite, in vector instructions and without a branch per value:
/// 0·v is ±0 for a finite v and NaN for ±∞ or NaN, and eight independent sums of these
/// products stay 0 exactly when every value is finite.
pub fn all_finite(values: &[f64]) -> bool {
    let chunks = values.chunks_exact(8);
    let rest = chunks.remainder();
    let mut sums = [0.0; 8];
    for chunk in chunks {
        for (sum, v) in sums.iter_mut().zip(chunk) {
            *sum += 0.0 * v;
        }
    }
    sums.iter().all(|&s| s == 0.0) && rest.iter().all(|v| v.is_finite())
}

/// Decodes a kernel's `status` state entry: 0 while finite, else the first non-finite step.
pub fn nonfinite_step(status: f64) -> Option<u64> {
    (status != 0.0).then_some(status as u64)
}

/// Receives the results of consecutive member chunks, in member order, as a backend
/// produces them; lets a run stream to disk with bounded memory.
pub trait ResultSink {
    /// Members `first .. first + members.len()`, quantity by quantity.
    fn accept(&mut self, first: usize, members: ResultBlock) -> Result<()>;

    /// Progress in member-steps completed so far (of members × steps), reported between
    /// blocks of members (CPU) and dispatch windows (the executor). An error stops the run
    /// there and is returned by it: the way a caller interrupts a run (Ctrl-C in Python).
    fn progress(&mut self, _member_steps_done: u64) -> Result<()> {
        Ok(())
    }

    /// This sink as one that may be used from another thread, where it is one. The CPU
    /// path then takes the results on a thread of the pool rather than the caller's: no
    /// thread beside the pool's wakes to take them, and none takes a core from a block.
    /// `None`, the default, keeps every call on the caller's thread — needed where progress
    /// must be reported there (Python runs its signal handlers, Ctrl-C's included, only
    /// on its main thread).
    fn as_send(&mut self) -> Option<&mut (dyn ResultSink + Send)> {
        None
    }
}

impl ResultSink for Vec<MemberResult> {
    fn accept(&mut self, first: usize, members: ResultBlock) -> Result<()> {
        debug_assert_eq!(first, self.len());
        self.extend(members.into_members());
        Ok(())
    }

    fn as_send(&mut self) -> Option<&mut (dyn ResultSink + Send)> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::all_finite;

    /// One non-finite value anywhere (in the vector part or the remainder) is found; the
    /// largest and smallest finite values are finite.
    #[test]
    fn all_finite_finds_any_nonfinite_value() {
        for len in 0..20 {
            let values: Vec<f64> = (0..len)
                .map(|i| match i % 4 {
                    0 => f64::MAX,
                    1 => -f64::MAX,
                    2 => f64::MIN_POSITIVE / 2.0,
                    _ => -0.0,
                })
                .collect();
            assert!(all_finite(&values), "len {len}");
            for at in 0..len {
                for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
                    let mut values = values.clone();
                    values[at] = bad;
                    assert!(!all_finite(&values), "len {len}, {bad} at {at}");
                }
            }
        }
    }
}
