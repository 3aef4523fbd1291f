//! A fast block's groups: [`LANES`] members side by side, with their state, step entries,
//! energy sums and work buffers, and the spare groups a thread keeps from one block to its
//! next (a block's groups are reset in place rather than built and moved anew).

use std::cell::Cell;
use std::sync::Arc;

use smallvec::{SmallVec, smallvec};

use crate::kernels::lanes::{LANES, Lanes, ZERO};

thread_local! {
    /// The groups of this thread's last finished block, for its next (their record rows
    /// go back to `records.rs`'s own per-thread buffers at the end of each block).
    static SPARE_GROUPS: Cell<Vec<Group>> = const { Cell::new(Vec::new()) };
}

/// This thread's spare groups, taken (empty where it has none), to reset with
/// [`Group::restart`].
pub(super) fn take_spare_groups() -> Vec<Group> {
    SPARE_GROUPS.take()
}

/// Largest operator buffer that spare groups keep until their next block replaces it. Up
/// to this size, letting go of it only then measured about 6 % faster on the 2¹⁶-member
/// n = 2 run; a larger one is let go of at once, so that a thread never holds two blocks'
/// large operators, nor any after a run.
const KEPT_ENTRIES_BYTES: usize = 1 << 20;

/// Keeps `groups` as this thread's spare groups for its next block, in place of any it
/// held; they let go of their block's operators first where these are larger than
/// [`KEPT_ENTRIES_BYTES`].
pub(super) fn keep_spare_groups(mut groups: Vec<Group>) {
    let large =
        |group: &Group| std::mem::size_of_val(group.ops.buffer.as_slice()) > KEPT_ENTRIES_BYTES;
    if groups.first().is_some_and(large) {
        let none = Arc::new(Vec::new());
        for group in &mut groups {
            group.ops = GroupOps {
                buffer: none.clone(),
                at: 0,
                len: 0,
            };
        }
    }
    SPARE_GROUPS.set(groups);
}

/// The compensated energy sums of one group (Neumaier), as the kernel keeps them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sums {
    pub(super) totals: [Lanes; 4],
    pub(super) totals_comp: [Lanes; 4],
    pub(super) window: [Lanes; 4],
    pub(super) window_comp: [Lanes; 4],
    pub(super) max_residual: Lanes,
}

impl Default for Sums {
    fn default() -> Self {
        Sums {
            totals: [ZERO; 4],
            totals_comp: [ZERO; 4],
            window: [ZERO; 4],
            window_comp: [ZERO; 4],
            max_residual: ZERO,
        }
    }
}

/// A group's step entries: Δ | Y | W | Q, row-major, one [`Lanes`] per entry, the `len`
/// entries from `at` of a buffer that the block's groups share (that every block's groups
/// share, where the members share the nominal's operators).
#[derive(Debug, Clone)]
pub(super) struct GroupOps {
    pub(super) buffer: Arc<Vec<Lanes>>,
    pub(super) at: usize,
    pub(super) len: usize,
}

impl GroupOps {
    /// The group's entries.
    pub(super) fn entries(&self) -> &[Lanes] {
        &self.buffer[self.at..self.at + self.len]
    }
}

/// A group's per-lane vector (x, its compensation, y): held in the group itself up to
/// [`INLINE_LANES`] entries, so that a small member's group allocates nothing (a spare
/// group that held a larger member's keeps its allocation).
pub(super) type GroupVector = SmallVec<[Lanes; INLINE_LANES]>;

/// Entries of a [`GroupVector`] held without an allocation (n, and s·m, up to 4).
const INLINE_LANES: usize = 4;

/// One group's state and work buffers.
#[derive(Debug, Clone)]
pub(super) struct Group {
    pub(super) ops: GroupOps,
    pub(super) x: GroupVector,
    pub(super) carry: GroupVector,
    /// The energy sums, held only by the groups of a block that records energies (a
    /// kilobyte that a final-state block neither fills nor moves).
    pub(super) sums: Option<Box<Sums>>,
    /// y of the last step that formed it.
    pub(super) y: GroupVector,
    /// The record points of the window that runs ([`super::StepShape::record_width`] values each),
    /// written out to the block's results at its end (`records.rs`); a buffer this thread
    /// reuses from block to block while the block runs.
    pub(super) records: Vec<Lanes>,
    /// 0 while finite, else the first step after which the member was not.
    pub(super) status: [u64; LANES],
    /// Checks every step (a member's sums overflowed while its steps stayed finite).
    pub(super) checking: bool,
}

impl Group {
    /// A group reading `ops`, with n states, s·m stage inputs, and energy sums where
    /// `energy`; every value zero, every member finite.
    pub(super) fn new(ops: GroupOps, n: usize, sm: usize, energy: bool) -> Self {
        Group {
            ops,
            x: smallvec![ZERO; n],
            carry: smallvec![ZERO; n],
            sums: energy.then(Box::default),
            y: smallvec![ZERO; sm],
            records: Vec::new(),
            status: [0; LANES],
            checking: false,
        }
    }

    /// Resets this group in place to what [`Group::new`] gives, keeping the vectors'
    /// room: its sums zeroed where `energy` (made where it had none), dropped otherwise.
    /// Its record rows are left as they are: `records.rs` lends each block's.
    pub(super) fn restart(&mut self, ops: GroupOps, n: usize, sm: usize, energy: bool) {
        self.ops = ops;
        for (vector, len) in [(&mut self.x, n), (&mut self.carry, n), (&mut self.y, sm)] {
            vector.clear();
            vector.resize(len, ZERO);
        }
        match (&mut self.sums, energy) {
            (Some(sums), true) => **sums = Sums::default(),
            (sums, _) => *sums = energy.then(Box::default),
        }
        self.status = [0; LANES];
        self.checking = false;
    }

    /// The energy sums of a group of a block that records energies.
    pub(super) fn sums(&self) -> &Sums {
        self.sums
            .as_deref()
            .expect("the groups of a block recording energies hold sums")
    }

    /// [`Group::sums`], to update.
    pub(super) fn sums_mut(&mut self) -> &mut Sums {
        self.sums
            .as_deref_mut()
            .expect("the groups of a block recording energies hold sums")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(len: usize) -> GroupOps {
        GroupOps {
            buffer: Arc::new(vec![[0.5; LANES]; len]),
            at: 0,
            len,
        }
    }

    /// A restarted group is a new group of its new shape, whatever it held before and
    /// whichever shape it had (inline or spilled vectors, with or without sums).
    #[test]
    fn a_restarted_group_is_a_new_group() {
        let shapes = [(1, 1, false), (2, 4, true), (5, 0, true), (3, 6, false)];
        for &(n0, sm0, energy0) in &shapes {
            for &(n, sm, energy) in &shapes {
                let mut group = Group::new(ops(3), n0, sm0, energy0);
                let vectors = group
                    .x
                    .iter_mut()
                    .chain(&mut group.carry)
                    .chain(&mut group.y);
                for value in vectors {
                    *value = [1.5; LANES];
                }
                if let Some(sums) = &mut group.sums {
                    sums.totals[1] = [2.0; LANES];
                    sums.window_comp[3] = [-1.0; LANES];
                    sums.max_residual = [3.0; LANES];
                }
                group.status = [7; LANES];
                group.checking = true;
                group.restart(ops(5), n, sm, energy);
                let fresh = Group::new(ops(5), n, sm, energy);
                let shapes = format!("({n0}, {sm0}, {energy0}) → ({n}, {sm}, {energy})");
                assert_eq!(format!("{group:?}"), format!("{fresh:?}"), "{shapes}");
            }
        }
    }

    /// Kept spare groups let go of a block's large operators, keep small ones, and are
    /// taken once.
    #[test]
    fn spare_groups_keep_no_large_operators() {
        let lanes = KEPT_ENTRIES_BYTES / std::mem::size_of::<Lanes>();
        for (len, kept) in [(8, true), (lanes, true), (lanes + 1, false)] {
            let entries = Arc::new(vec![ZERO; len]);
            let ops = GroupOps {
                buffer: entries.clone(),
                at: 0,
                len,
            };
            keep_spare_groups(vec![
                Group::new(ops.clone(), 2, 1, true),
                Group::new(ops, 2, 1, false),
            ]);
            let holders = if kept { 3 } else { 1 };
            assert_eq!(Arc::strong_count(&entries), holders, "{len} entries");
            assert_eq!(take_spare_groups().len(), 2);
            assert!(take_spare_groups().is_empty());
            assert_eq!(Arc::strong_count(&entries), 1, "{len} entries");
        }
    }
}
