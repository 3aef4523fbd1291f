//! The results of consecutive members, quantity by quantity: every member's final state in
//! one flat array, every member's trajectory in another, and so on for each channel, the
//! totals and the status. Every member of a run records the same number of values of each
//! quantity ([`RecordSpec`] over the grid's record points), so member i's values are the
//! i-th slice of that width: a block of members costs a handful of allocations instead of
//! several per member, and a sink writes each array as it comes.

use super::{MemberResult, RecordSpec, StepGrid};

/// Values per member of each recorded quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Widths {
    pub final_state: usize,
    /// 0 when the trajectory is not recorded.
    pub trajectory: usize,
    pub channels: Vec<usize>,
    pub totals: usize,
}

impl Widths {
    /// The widths `spec` gives over `records` record points.
    pub(super) fn of(spec: &RecordSpec, records: usize) -> Self {
        Widths {
            final_state: spec.state_width,
            trajectory: if spec.trajectory {
                (records + 1) * spec.state_width
            } else {
                0
            },
            channels: spec
                .channels
                .iter()
                .map(|c| c.rows(records) * c.width())
                .collect(),
            totals: spec.totals.len(),
        }
    }
}

/// The results of consecutive members, each quantity of every member in one flat array,
/// member after member (members × values per member).
#[derive(Debug, Clone, PartialEq)]
pub struct ResultBlock {
    widths: Widths,
    members: usize,
    pub final_state: Vec<f64>,
    /// States at the sample times, t = 0 first (empty without a trajectory).
    pub trajectory: Vec<f64>,
    /// Per declared channel, every member's rows.
    pub channels: Vec<Vec<f64>>,
    pub totals: Vec<f64>,
    /// Per member, the first step (1-based) after which its values were not finite.
    pub nonfinite_step: Vec<Option<u64>>,
}

impl ResultBlock {
    /// No members yet, with room for `members` of `spec` over `records` record points.
    pub fn with_capacity(spec: &RecordSpec, records: usize, members: usize) -> Self {
        let widths = Widths::of(spec, records);
        ResultBlock {
            final_state: Vec::with_capacity(members * widths.final_state),
            trajectory: Vec::with_capacity(members * widths.trajectory),
            channels: widths
                .channels
                .iter()
                .map(|w| Vec::with_capacity(members * w))
                .collect(),
            totals: Vec::with_capacity(members * widths.totals),
            nonfinite_step: Vec::with_capacity(members),
            members: 0,
            widths,
        }
    }

    /// `members` members of `spec` over `records` record points, every value 0 and every
    /// member finite: for an engine that writes its members' values in place.
    pub fn zeroed(spec: &RecordSpec, records: usize, members: usize) -> Self {
        let widths = Widths::of(spec, records);
        ResultBlock {
            final_state: vec![0.0; members * widths.final_state],
            trajectory: vec![0.0; members * widths.trajectory],
            channels: widths
                .channels
                .iter()
                .map(|w| vec![0.0; members * w])
                .collect(),
            totals: vec![0.0; members * widths.totals],
            nonfinite_step: vec![None; members],
            members,
            widths,
        }
    }

    /// The block of `members` members whose quantities are `final_state`, … (each
    /// members × its width of `widths`), as [`super::ResultWriter`] hands them over.
    pub(super) fn from_parts(
        widths: Widths,
        members: usize,
        final_state: Vec<f64>,
        trajectory: Vec<f64>,
        channels: Vec<Vec<f64>>,
        totals: Vec<f64>,
        nonfinite_step: Vec<Option<u64>>,
    ) -> Self {
        ResultBlock {
            widths,
            members,
            final_state,
            trajectory,
            channels,
            totals,
            nonfinite_step,
        }
    }

    /// The block of `members`, which record `spec` over `records` record points.
    pub fn from_members(spec: &RecordSpec, records: usize, members: Vec<MemberResult>) -> Self {
        let mut block = ResultBlock::with_capacity(spec, records, members.len());
        for member in members {
            block.push(member);
        }
        block
    }

    /// Appends one member's results.
    ///
    /// # Panics
    /// When `member` holds a different number of values of a quantity than the block's
    /// record spec gives: the family that built it broke its own record spec.
    pub fn push(&mut self, member: MemberResult) {
        let w = &self.widths;
        let fits = member.final_state.len() == w.final_state
            && member.trajectory.len() == w.trajectory
            && member.totals.len() == w.totals
            && member.channels.len() == w.channels.len()
            && member
                .channels
                .iter()
                .zip(&w.channels)
                .all(|(c, &w)| c.len() == w);
        assert!(
            fits,
            "a member's results do not match its record spec: {member:?} against {w:?}"
        );
        self.final_state.extend_from_slice(&member.final_state);
        self.trajectory.extend_from_slice(&member.trajectory);
        for (values, recorded) in self.channels.iter_mut().zip(&member.channels) {
            values.extend_from_slice(recorded);
        }
        self.totals.extend_from_slice(&member.totals);
        self.nonfinite_step.push(member.nonfinite_step);
        self.members += 1;
    }

    /// Appends the members of `other` (a block of the same record spec and grid).
    pub fn append(&mut self, other: ResultBlock) {
        assert_eq!(self.widths, other.widths, "blocks of one run");
        self.final_state.extend_from_slice(&other.final_state);
        self.trajectory.extend_from_slice(&other.trajectory);
        for (values, more) in self.channels.iter_mut().zip(&other.channels) {
            values.extend_from_slice(more);
        }
        self.totals.extend_from_slice(&other.totals);
        self.nonfinite_step.extend_from_slice(&other.nonfinite_step);
        self.members += other.members;
    }

    /// Members held.
    pub fn len(&self) -> usize {
        self.members
    }

    /// Whether the block holds no member.
    pub fn is_empty(&self) -> bool {
        self.members == 0
    }

    /// Member i's final state.
    pub fn final_state(&self, i: usize) -> &[f64] {
        member_slice(&self.final_state, self.widths.final_state, i)
    }

    /// Member i's final state, to write in place.
    pub fn final_state_mut(&mut self, i: usize) -> &mut [f64] {
        member_slice_mut(&mut self.final_state, self.widths.final_state, i)
    }

    /// Member i's trajectory (empty when it is not recorded).
    pub fn trajectory(&self, i: usize) -> &[f64] {
        member_slice(&self.trajectory, self.widths.trajectory, i)
    }

    /// Member i's trajectory, to write in place.
    pub fn trajectory_mut(&mut self, i: usize) -> &mut [f64] {
        member_slice_mut(&mut self.trajectory, self.widths.trajectory, i)
    }

    /// Member i's rows of channel c.
    pub fn channel(&self, c: usize, i: usize) -> &[f64] {
        member_slice(&self.channels[c], self.widths.channels[c], i)
    }

    /// Member i's rows of channel c, to write in place.
    pub fn channel_mut(&mut self, c: usize, i: usize) -> &mut [f64] {
        member_slice_mut(&mut self.channels[c], self.widths.channels[c], i)
    }

    /// Member i's totals.
    pub fn totals(&self, i: usize) -> &[f64] {
        member_slice(&self.totals, self.widths.totals, i)
    }

    /// Member i's totals, to write in place.
    pub fn totals_mut(&mut self, i: usize) -> &mut [f64] {
        member_slice_mut(&mut self.totals, self.widths.totals, i)
    }

    /// Member i's results as one [`MemberResult`] (a copy).
    pub fn member(&self, i: usize) -> MemberResult {
        MemberResult {
            final_state: self.final_state(i).to_vec(),
            trajectory: self.trajectory(i).to_vec(),
            channels: (0..self.channels.len())
                .map(|c| self.channel(c, i).to_vec())
                .collect(),
            totals: self.totals(i).to_vec(),
            nonfinite_step: self.nonfinite_step[i],
        }
    }

    /// Every member's results, one [`MemberResult`] each.
    pub fn into_members(self) -> Vec<MemberResult> {
        (0..self.members).map(|i| self.member(i)).collect()
    }

    /// Completes every member's status with what is observed only at record points
    /// ([`MemberResult::complete_status`]). Where every recorded value of the block is
    /// finite, no member's status changes, and one pass over the arrays tells so.
    pub fn complete_status(&mut self, grid: &StepGrid, spec: &RecordSpec) {
        let recorded = [&self.final_state, &self.trajectory, &self.totals];
        if recorded
            .into_iter()
            .chain(&self.channels)
            .all(|values| super::record::all_finite(values))
        {
            return;
        }
        for i in 0..self.members {
            if self.nonfinite_step[i].is_some() {
                continue;
            }
            let channels = (0..self.channels.len()).map(|c| self.channel(c, i));
            self.nonfinite_step[i] = super::record::first_nonfinite_record(
                grid,
                spec,
                self.trajectory(i),
                channels,
                self.totals(i),
                self.final_state(i),
            );
        }
    }
}

/// Member i's `width` values of `values` (empty for width 0).
fn member_slice(values: &[f64], width: usize, i: usize) -> &[f64] {
    &values[i * width..(i + 1) * width]
}

/// [`member_slice`], to write.
fn member_slice_mut(values: &mut [f64], width: usize, i: usize) -> &mut [f64] {
    &mut values[i * width..(i + 1) * width]
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::plan::Channel;

    /// A record spec of width 2 with a trajectory, an energy-like channel of 3 values per
    /// record and one sampled at t = 0 as well, and two totals.
    pub(in crate::plan) fn spec() -> RecordSpec {
        RecordSpec {
            state_width: 2,
            trajectory: true,
            channels: vec![
                Channel {
                    name: "energy",
                    shape: vec![3],
                    at_start: false,
                    description: String::new(),
                },
                Channel {
                    name: "hamiltonian",
                    shape: vec![],
                    at_start: true,
                    description: String::new(),
                },
            ],
            totals: vec!["a", "b"],
            totals_group: "energy",
        }
    }

    /// Member `i` of `spec()` over `records` record points, every value distinct.
    pub(in crate::plan) fn member(i: usize, records: usize) -> MemberResult {
        let value = |k: usize| (1000 * i + k) as f64;
        MemberResult {
            final_state: (0..2).map(value).collect(),
            trajectory: (10..10 + 2 * (records + 1)).map(value).collect(),
            channels: vec![
                (100..100 + 3 * records).map(value).collect(),
                (200..200 + records + 1).map(value).collect(),
            ],
            totals: (300..302).map(value).collect(),
            nonfinite_step: (i % 3 == 1).then_some(i as u64),
        }
    }

    #[test]
    fn members_go_in_and_come_out_as_they_were() {
        let (spec, records) = (spec(), 4);
        let members: Vec<MemberResult> = (0..5).map(|i| member(i, records)).collect();
        let block = ResultBlock::from_members(&spec, records, members.clone());
        assert_eq!(block.len(), 5);
        assert_eq!(block.channel(1, 3), &members[3].channels[1][..]);
        assert_eq!(block.trajectory(4), &members[4].trajectory[..]);
        assert_eq!(block.clone().into_members(), members);
        // Appending blocks is pushing their members in order.
        let mut joined = ResultBlock::from_members(&spec, records, members[..2].to_vec());
        joined.append(ResultBlock::from_members(
            &spec,
            records,
            members[2..].to_vec(),
        ));
        assert_eq!(joined, block);
        let mut empty = ResultBlock::with_capacity(&spec, records, 0);
        empty.append(block.clone());
        assert_eq!(empty, block);
    }

    #[test]
    fn values_written_in_place_are_the_members() {
        let (spec, records) = (spec(), 3);
        let members: Vec<MemberResult> = (0..4).map(|i| member(i, records)).collect();
        let mut block = ResultBlock::zeroed(&spec, records, members.len());
        for (i, m) in members.iter().enumerate() {
            block.final_state_mut(i).copy_from_slice(&m.final_state);
            block.trajectory_mut(i).copy_from_slice(&m.trajectory);
            for (c, values) in m.channels.iter().enumerate() {
                block.channel_mut(c, i).copy_from_slice(values);
            }
            block.totals_mut(i).copy_from_slice(&m.totals);
            block.nonfinite_step[i] = m.nonfinite_step;
        }
        assert_eq!(block.into_members(), members);
    }

    #[test]
    fn the_status_is_completed_as_member_by_member() {
        let (spec, records) = (spec(), 5);
        let grid = StepGrid::new(0.1, 2.0, 4).unwrap();
        assert_eq!(grid.records(), records);
        let mut members: Vec<MemberResult> = (0..6).map(|i| member(i, records)).collect();
        for m in &mut members {
            m.nonfinite_step = None;
        }
        members[0].trajectory[0] = f64::NAN; // t = 0
        members[1].channels[0][7] = f64::INFINITY; // record row 2
        members[2].channels[1][3] = f64::NAN; // at-start channel, row 3
        members[3].totals[1] = f64::NAN; // the end
        members[4].final_state[0] = f64::NEG_INFINITY;
        let mut block = ResultBlock::from_members(&spec, records, members.clone());
        block.complete_status(&grid, &spec);
        for m in &mut members {
            m.complete_status(&grid, &spec);
        }
        let statuses: Vec<Option<u64>> = members.iter().map(|m| m.nonfinite_step).collect();
        assert_eq!(block.nonfinite_step, statuses);
        assert_eq!(
            statuses,
            [Some(1), Some(12), Some(12), Some(20), Some(20), None]
        );
    }

    #[test]
    #[should_panic(expected = "do not match its record spec")]
    fn a_member_of_another_shape_is_a_bug() {
        let mut block = ResultBlock::with_capacity(&spec(), 4, 1);
        block.push(member(0, 3));
    }
}
