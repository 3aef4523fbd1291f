//! The record rows of a fast block: each group keeps the record points of the window that
//! runs in rows of [`Lanes`] values (the step writes them in registers' layout), and the
//! block writes them to its members' results at the window's end. A row holds, in order,
//!
//! ```text
//!   x (n, with trajectories) | the window's four energies (with energies) | y (s·m, with outputs)
//! ```
//!
//! A window ends early where its groups' rows are full ([`RECORD_ROWS_BYTES`]), and a
//! thread reuses its groups' row buffers from block to block.

use std::cell::RefCell;

use super::{FastBlock, Group, StepShape};
use crate::kernels::lanes::{LANES, Lanes, ZERO};

/// Bytes of one group's record rows a window fills at most: a window ends at the record
/// point that fills them, so that they stay in L1 until they are written out.
const RECORD_ROWS_BYTES: usize = 8 << 10;

thread_local! {
    /// The record-row buffers of this thread's last block, one per group, reused by its
    /// next (zeroing a block's worth for every block cost as much as a few of its steps).
    static RECORD_BUFFERS: RefCell<Vec<Vec<Lanes>>> = const { RefCell::new(Vec::new()) };
}

impl StepShape {
    /// Values a record point keeps per member (one row).
    pub(super) fn record_width(&self) -> usize {
        self.record_outputs_at() + usize::from(self.recording.outputs) * self.inputs
    }

    /// Where a row's four energies start.
    pub(super) fn record_energies_at(&self) -> usize {
        usize::from(self.recording.trajectory) * self.states
    }

    /// Where a row's y starts.
    pub(super) fn record_outputs_at(&self) -> usize {
        self.record_energies_at() + usize::from(self.recording.energy) * 4
    }

    /// Most record points of a window: as many as keep a group's record rows within
    /// [`RECORD_ROWS_BYTES`], at least 1.
    pub(super) fn window_records(&self) -> usize {
        let row = self.record_width() * std::mem::size_of::<Lanes>();
        (RECORD_ROWS_BYTES / row.max(1)).max(1)
    }
}

/// Gives each of `groups` a row buffer of at least `values` values from this thread's.
pub(super) fn lend_buffers(groups: &mut [Group], values: usize) {
    RECORD_BUFFERS.with_borrow_mut(|buffers| {
        for group in groups {
            group.records = buffers.pop().unwrap_or_default();
            // Every row a window reads it has written: only new room is zeroed.
            if group.records.len() < values {
                group.records.resize(values, ZERO);
            }
        }
    });
}

/// Takes `groups`' row buffers back into this thread's.
pub(super) fn return_buffers(groups: &mut [Group]) {
    RECORD_BUFFERS.with_borrow_mut(|buffers| {
        buffers.extend(
            groups
                .iter_mut()
                .map(|group| std::mem::take(&mut group.records)),
        );
    });
}

impl FastBlock {
    /// Writes the `count` record points of the window that ran (the groups' record rows)
    /// to every member's results.
    pub(super) fn write_records(&mut self, count: usize) {
        let recording = self.shape.recording;
        let (n, width) = (self.shape.states, self.shape.record_width());
        self.recorded += count;
        if count == 0 || width == 0 {
            return;
        }
        let (energies_at, outputs_at) = (
            self.shape.record_energies_at(),
            self.shape.record_outputs_at(),
        );
        let outputs_channel = usize::from(recording.energy);
        let results = &mut self.results;
        for (g, group) in self.groups.iter().enumerate() {
            let rows = &group.records;
            let members = g * LANES..((g + 1) * LANES).min(self.members);
            for (l, i) in members.enumerate() {
                // Lane l of value `at + c` of row r.
                let lane = |at: usize| move |r: usize, c: usize| rows[r * width + at + c][l];
                if recording.trajectory {
                    // Sample 0 (x0) is already written.
                    results.trajectory_rows(i, count, n, lane(0));
                }
                if recording.energy {
                    results.channel_rows(0, i, count, 4, lane(energies_at));
                }
                if recording.outputs {
                    let w = self.shape.inputs;
                    results.channel_rows(outputs_channel, i, count, w, lane(outputs_at));
                }
            }
        }
    }
}
