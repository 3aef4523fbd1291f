//! Where a member's step operators lie among its group's entries, for the recording a run
//! asks for.

use crate::linear_ph::LinearPhPlan;
use crate::plan::Recording;

/// Where a member's operators lie in a group's entries: Δ (n × p), then Y (s·m × p) with
/// outputs or energies, then W (s·n × p, row (i·n + k) the stage i's k-th factor column,
/// zero beyond the member's rank) and Q (n × n) with energies; all row-major.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EntryLayout {
    pub states: usize,
    pub stages: usize,
    pub inputs: usize,
    pub outputs: bool,
    pub energy: bool,
}

impl EntryLayout {
    pub fn new(plan: &LinearPhPlan, recording: Recording) -> Self {
        EntryLayout {
            states: plan.states(),
            stages: plan.scheme.stages,
            inputs: plan.inputs_count(),
            outputs: recording.outputs || recording.energy,
            energy: recording.energy,
        }
    }

    /// p = n + s·m.
    pub fn width(&self) -> usize {
        self.states + self.stages * self.inputs
    }

    pub fn output_at(&self) -> usize {
        self.states * self.width()
    }

    pub fn dissipation_at(&self) -> usize {
        self.output_at() + usize::from(self.outputs) * self.stages * self.inputs * self.width()
    }

    pub fn q_at(&self) -> usize {
        self.dissipation_at() + usize::from(self.energy) * self.stages * self.states * self.width()
    }

    /// Entries per member.
    pub fn len(&self) -> usize {
        self.q_at() + usize::from(self.energy) * self.states * self.states
    }
}
