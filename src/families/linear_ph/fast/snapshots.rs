//! The window snapshots of a fast block: where a group replays a window of steps (one of
//! its members went bad in it), it restarts from the values taken at the window's start.

use super::{Group, Sums};
use crate::kernels::lanes::{Lanes, ZERO};

/// What a window restores when a group replays it: each group's x and carry at the
/// window's start (2n values, group g's from 2n·g) and, where the block records energies,
/// its sums, for the whole block in two buffers.
#[derive(Debug, Clone)]
pub(super) struct Snapshots {
    states: Vec<Lanes>,
    sums: Vec<Sums>,
}

impl Snapshots {
    /// Room for `groups` groups of n states, with their sums where `energy`.
    pub(super) fn new(groups: usize, n: usize, energy: bool) -> Self {
        Snapshots {
            states: vec![ZERO; 2 * n * groups],
            sums: vec![Sums::default(); if energy { groups } else { 0 }],
        }
    }

    /// Takes group g's values (its sums too where `energy`).
    pub(super) fn take(&mut self, g: usize, group: &Group, energy: bool) {
        let n = group.x.len();
        let (x, carry) = self.states[2 * n * g..2 * n * (g + 1)].split_at_mut(n);
        x.copy_from_slice(&group.x);
        carry.copy_from_slice(&group.carry);
        if energy {
            self.sums[g] = *group.sums();
        }
    }

    /// Restores group g's values (its sums too where `energy`).
    pub(super) fn restore(&self, g: usize, group: &mut Group, energy: bool) {
        let n = group.x.len();
        let (x, carry) = self.states[2 * n * g..2 * n * (g + 1)].split_at(n);
        group.x.copy_from_slice(x);
        group.carry.copy_from_slice(carry);
        if energy {
            *group.sums_mut() = self.sums[g];
        }
    }
}
