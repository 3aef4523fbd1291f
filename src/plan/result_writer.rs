//! A [`ResultBlock`] that an engine writes in place without zeroing it first: each member's
//! values of each quantity are appended in order (member i's trajectory sample after
//! sample, its channel rows record point after record point), into buffers that are never
//! initialised otherwise. Zeroing results that are then overwritten in full is a second
//! pass over memory as large as the recording (32 MB for the outputs of 10⁴ members over
//! 200 steps), whose lines are evicted again before the engine writes them.
//!
//! Every quantity keeps a count of the values appended to each member;
//! [`ResultWriter::finish`] hands the block over only when every member's count has reached
//! its width, so a value that was never written can never be read.

use std::mem::MaybeUninit;

use super::result_block::Widths;
use super::{RecordSpec, ResultBlock};

/// One quantity of every member (members × `width` values), filled member by member in
/// order.
#[derive(Debug, Clone)]
struct Filling {
    values: Box<[MaybeUninit<f64>]>,
    width: usize,
    /// Values appended to each member so far.
    filled: Vec<usize>,
}

impl Filling {
    fn new(members: usize, width: usize) -> Self {
        Filling {
            values: Box::new_uninit_slice(members * width),
            width,
            filled: vec![0; members],
        }
    }

    /// Appends `values` to member i's (after those appended before).
    ///
    /// # Panics
    /// When member i would hold more than `width` values: the engine broke its record
    /// spec.
    #[inline]
    fn append(&mut self, i: usize, values: impl IntoIterator<Item = f64>) {
        let mut values = values.into_iter();
        let filled = self.filled[i];
        let slots = &mut self.values[i * self.width + filled..(i + 1) * self.width];
        let mut written = 0;
        for (slot, value) in slots.iter_mut().zip(&mut values) {
            slot.write(value);
            written += 1;
        }
        assert!(
            values.next().is_none(),
            "member {i} given more than its {} values",
            self.width
        );
        self.filled[i] = filled + written;
    }

    /// Appends `rows` rows of `w` values to member i's, value(r, c) for row r, column c:
    /// [`Filling::append`] for a row-major grid, in plain loops.
    ///
    /// # Panics
    /// As [`Filling::append`].
    #[inline]
    fn append_rows(
        &mut self,
        i: usize,
        rows: usize,
        w: usize,
        mut value: impl FnMut(usize, usize) -> f64,
    ) {
        let (filled, count) = (self.filled[i], rows * w);
        assert!(
            filled + count <= self.width,
            "member {i} given more than its {} values",
            self.width
        );
        if count == 0 {
            return;
        }
        let start = i * self.width + filled;
        for (r, row) in self.values[start..start + count]
            .chunks_exact_mut(w)
            .enumerate()
        {
            for (c, slot) in row.iter_mut().enumerate() {
                slot.write(value(r, c));
            }
        }
        self.filled[i] = filled + count;
    }

    /// The values, every one of them written.
    ///
    /// # Panics
    /// When a member's values are not all written: the engine broke its record spec.
    fn finish(self, quantity: &str) -> Vec<f64> {
        if let Some(i) = self.filled.iter().position(|&f| f != self.width) {
            panic!(
                "member {i} wrote {} of its {} {quantity} values",
                self.filled[i], self.width
            );
        }
        // SAFETY: every member's `width` slots were written, in order (`append` writes
        // each slot it counts), so every value is initialised.
        unsafe { self.values.assume_init() }.into_vec()
    }
}

/// A block of `members` members of one record spec, written in place: the final state,
/// trajectory, channels and totals appended member by member, the status set directly.
#[derive(Debug, Clone)]
pub struct ResultWriter {
    widths: Widths,
    members: usize,
    final_state: Filling,
    trajectory: Filling,
    channels: Vec<Filling>,
    totals: Filling,
    /// Per member, the first step (1-based) after which its values were not finite.
    pub nonfinite_step: Vec<Option<u64>>,
}

impl ResultWriter {
    /// `members` members of `spec` over `records` record points, nothing written yet and
    /// every member finite.
    pub fn new(spec: &RecordSpec, records: usize, members: usize) -> Self {
        let widths = Widths::of(spec, records);
        ResultWriter {
            final_state: Filling::new(members, widths.final_state),
            trajectory: Filling::new(members, widths.trajectory),
            channels: widths
                .channels
                .iter()
                .map(|&w| Filling::new(members, w))
                .collect(),
            totals: Filling::new(members, widths.totals),
            nonfinite_step: vec![None; members],
            members,
            widths,
        }
    }

    /// Members of the block.
    pub fn len(&self) -> usize {
        self.members
    }

    /// Whether the block has no member.
    pub fn is_empty(&self) -> bool {
        self.members == 0
    }

    /// Appends `values` to member i's final state.
    #[inline]
    pub fn final_state(&mut self, i: usize, values: impl IntoIterator<Item = f64>) {
        self.final_state.append(i, values);
    }

    /// Appends `values` (samples, t = 0 first) to member i's trajectory.
    #[inline]
    pub fn trajectory(&mut self, i: usize, values: impl IntoIterator<Item = f64>) {
        self.trajectory.append(i, values);
    }

    /// Appends `rows` samples of `w` values to member i's trajectory, value(r, c) for
    /// sample r, column c (`w` the state's width).
    #[inline]
    pub fn trajectory_rows(
        &mut self,
        i: usize,
        rows: usize,
        w: usize,
        value: impl FnMut(usize, usize) -> f64,
    ) {
        self.trajectory.append_rows(i, rows, w, value);
    }

    /// Appends `rows` rows of `w` values to member i's channel c, value(r, k) for row r,
    /// column k (`w` the channel's width).
    #[inline]
    pub fn channel_rows(
        &mut self,
        c: usize,
        i: usize,
        rows: usize,
        w: usize,
        value: impl FnMut(usize, usize) -> f64,
    ) {
        self.channels[c].append_rows(i, rows, w, value);
    }

    /// Appends `values` to member i's totals.
    #[inline]
    pub fn totals(&mut self, i: usize, values: impl IntoIterator<Item = f64>) {
        self.totals.append(i, values);
    }

    /// The block, every value written.
    ///
    /// # Panics
    /// When some member's values of some quantity are not all written.
    pub fn finish(self) -> ResultBlock {
        ResultBlock::from_parts(
            self.widths,
            self.members,
            self.final_state.finish("final-state"),
            self.trajectory.finish("trajectory"),
            self.channels
                .into_iter()
                .map(|c| c.finish("channel"))
                .collect(),
            self.totals.finish("totals"),
            self.nonfinite_step,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::MemberResult;
    use crate::plan::result_block::tests::{member, spec};

    #[test]
    fn values_appended_in_pieces_are_the_members() {
        let (spec, records) = (spec(), 3);
        let members: Vec<MemberResult> = (0..4).map(|i| member(i, records)).collect();
        let mut writer = ResultWriter::new(&spec, records, members.len());
        assert_eq!(writer.len(), 4);
        for (i, m) in members.iter().enumerate().rev() {
            writer.final_state(i, m.final_state.iter().copied());
            // A sample, then the rest as rows.
            writer.trajectory(i, m.trajectory[..2].iter().copied());
            let samples = &m.trajectory[2..];
            writer.trajectory_rows(i, records, 2, |r, c| samples[2 * r + c]);
            // Channel 0 a row of 3 at a time, channel 1 in grids of rows.
            for row in m.channels[0].chunks_exact(3) {
                writer.channel_rows(0, i, 1, 3, |_, c| row[c]);
            }
            let hamiltonian = &m.channels[1];
            writer.channel_rows(1, i, 1, 1, |_, _| hamiltonian[0]);
            writer.channel_rows(1, i, 3, 1, |r, _| hamiltonian[1 + r]);
            writer.totals(i, m.totals.iter().copied());
            writer.nonfinite_step[i] = m.nonfinite_step;
        }
        let block = writer.finish();
        assert_eq!(block.clone().into_members(), members);
        assert_eq!(block, ResultBlock::from_members(&spec, records, members));
    }

    #[test]
    #[should_panic(expected = "member 1 wrote 2 of its 8 trajectory values")]
    fn a_block_with_values_missing_is_never_handed_over() {
        let (spec, records) = (spec(), 3);
        let members: Vec<MemberResult> = (0..2).map(|i| member(i, records)).collect();
        let mut writer = ResultWriter::new(&spec, records, members.len());
        for (i, m) in members.iter().enumerate() {
            writer.final_state(i, m.final_state.iter().copied());
            let samples = if i == 1 { 2 } else { m.trajectory.len() };
            writer.trajectory(i, m.trajectory[..samples].iter().copied());
            for (c, values) in m.channels.iter().enumerate() {
                writer.channel_rows(c, i, values.len(), 1, |r, _| values[r]);
            }
            writer.totals(i, m.totals.iter().copied());
        }
        writer.finish();
    }

    #[test]
    #[should_panic(expected = "member 0 given more than its 2 values")]
    fn a_member_cannot_overflow_into_the_next() {
        let mut writer = ResultWriter::new(&spec(), 3, 2);
        writer.final_state(0, [1.0, 2.0, 3.0]);
    }

    #[test]
    #[should_panic(expected = "member 0 given more than its 4 values")]
    fn rows_cannot_overflow_into_the_next_member() {
        let mut writer = ResultWriter::new(&spec(), 3, 2);
        writer.channel_rows(1, 0, 2, 1, |_, _| 1.0);
        writer.channel_rows(1, 0, 3, 1, |_, _| 1.0);
    }
}
