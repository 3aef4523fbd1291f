//! A group's matrices, what the set-up builds the step operators from: J, R, Q and B of
//! [`LANES`] members side by side, read from members' own matrices ([`MemberParts`]) or
//! written in place by the group draw.

use super::entry_layout::EntryLayout;
use crate::kernels::lanes::{LANES, Lanes, ZERO};
use crate::linear_ph::LinearPhMember;

/// A member's matrices as the set-up reads them, column-major.
#[derive(Debug, Clone, Copy)]
pub(super) struct MemberParts<'a> {
    pub j: &'a [f64],
    pub r: &'a [f64],
    pub q: &'a [f64],
    /// n × m.
    pub b: &'a [f64],
}

impl MemberParts<'_> {
    /// The matrices of `member`.
    pub fn of(member: &LinearPhMember) -> MemberParts<'_> {
        let system = &member.system;
        MemberParts {
            j: system.j.as_slice(),
            r: system.r.as_slice(),
            q: system.q.as_slice(),
            b: system.b.as_slice(),
        }
    }

    /// Whether `other` reads the same matrices (a group padded with copies of its first
    /// member: their per-member work, done once, is copied).
    pub(super) fn is(&self, other: &MemberParts) -> bool {
        let same = |a: &[f64], b: &[f64]| std::ptr::eq(a, b);
        same(self.j, other.j)
            && same(self.r, other.r)
            && same(self.q, other.q)
            && same(self.b, other.b)
    }
}

/// A group's matrices side by side, lane l member l's, column-major: J, R, Q (n × n) and
/// B (n × m), what the set-up builds from. The fast engine's group draw writes them in
/// place; [`SetupScratch::build`] copies members' in.
pub(super) struct GroupMatrices {
    pub j: Vec<Lanes>,
    pub r: Vec<Lanes>,
    pub q: Vec<Lanes>,
    pub b: Vec<Lanes>,
    /// The lanes that hold a copy of lane 0's member (a group padded past its last member,
    /// or one member in every lane): their per-member work is lane 0's, copied.
    pub copies: [bool; LANES],
}

impl GroupMatrices {
    /// Room for members of `layout`.
    pub(super) fn new(layout: EntryLayout) -> Self {
        let n = layout.states;
        GroupMatrices {
            j: vec![ZERO; n * n],
            r: vec![ZERO; n * n],
            q: vec![ZERO; n * n],
            b: vec![ZERO; n * layout.inputs],
            copies: [false; LANES],
        }
    }

    /// The members of `parts` in their lanes.
    pub(super) fn load(&mut self, parts: &[MemberParts; LANES]) {
        for (lane, part) in parts.iter().enumerate() {
            let matrices = [
                (&mut self.j, part.j),
                (&mut self.r, part.r),
                (&mut self.q, part.q),
                (&mut self.b, part.b),
            ];
            for (lanes, values) in matrices {
                for (entry, &value) in lanes.iter_mut().zip(values) {
                    entry[lane] = value;
                }
            }
            self.copies[lane] = lane > 0 && part.is(&parts[0]);
        }
    }

    /// Lane `lane` of the n × n matrix `lanes` into `values` (column-major).
    pub(super) fn lane_of(lanes: &[Lanes], lane: usize, values: &mut [f64]) {
        for (value, entry) in values.iter_mut().zip(lanes) {
            *value = entry[lane];
        }
    }
}
