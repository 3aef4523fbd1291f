//! A block's members laid out for the fast engine: their systems' coefficients and initial
//! states lane by lane ([`LaneSystem`], [`GroupStates`]) and their results' first state
//! y0 = [x0; p0; z0], written in place in the block's results (H(0, y0), the first value
//! of the `hamiltonian` channel, is the engine's first evaluation over the lanes).
//!
//! From members already built ([`ContactPlan::fast_block`]), or straight from the plan
//! ([`ContactPlan::fast_block_range`]): each member drawn from its stream (the block's
//! streams computed side by side, [`MemberStreams`]) into one member reused for the whole
//! block, checked as [`ContactPlan::member`] checks it but for a finite H(0, y0) (which the
//! engine checks), and written to its lane, with nothing allocated per member. Both give
//! the same block, bit for bit.

use std::ops::Range;

use super::ContactBlock;
use super::integrate::LaneBlock;
use super::lane_flows::GroupStates;
use super::lane_system::LaneSystem;
use crate::contact::model::ContactMember;
use crate::contact::plan::ContactPlan;
use crate::error::Result;
use crate::kernels::lanes::LANES;
use crate::model::member_streams::{MemberStreams, REJECTION_WORDS};
use crate::plan::ResultBlock;

/// Most groups of [`LANES`] lanes per block.
const MAX_GROUPS: usize = 16;

/// Bytes of a block's state the block sizing aims to keep in a core's L2 cache.
const STATE_BYTES: usize = 128 << 10;

impl ContactPlan {
    /// Members per fast-engine block: [`LANES`] times as many groups as keep the block's
    /// state and per-lane coefficients within `STATE_BYTES`, at most `MAX_GROUPS`.
    pub fn fast_block_members(&self) -> usize {
        let n = self.dof();
        let forcing = self.nominal.system.time_channels().forcings * n;
        let per_group = (2 * n + 1 + forcing + 4) * LANES * 8;
        LANES * (STATE_BYTES / per_group).clamp(1, MAX_GROUPS)
    }

    /// Lays out `members` (any number) in groups of lanes and writes their initial states as
    /// their results' first, or keeps them for the reference when they do not share a
    /// block's common parts.
    pub fn fast_block(&self, members: Vec<ContactMember>) -> ContactBlock {
        let groups = members.len().div_ceil(LANES);
        let Some(system) = LaneSystem::new(&members, groups) else {
            return ContactBlock::Reference(members);
        };
        let mut states = GroupStates::zeroed(self.dof(), groups);
        let mut results = self.start_results(members.len());
        for g in 0..groups {
            for l in 0..LANES {
                let i = g * LANES + l;
                let member = &members[if i < members.len() { i } else { 0 }];
                states.set_lane(g, l, member.x0.as_slice(), member.p0.as_slice(), member.z0);
                if i < members.len() {
                    self.write_start(&mut results, i, member);
                }
            }
        }
        ContactBlock::Lanes(Box::new(LaneBlock {
            first: None,
            members: members.len(),
            system,
            states,
            results,
        }))
    }

    /// The block of the plan's members `members` (consecutive), drawn and checked as
    /// [`ContactPlan::member`] draws and checks them (a finite H(0) aside: the engine checks
    /// it), without building each one: the block [`ContactPlan::fast_block`] lays out from
    /// those members, bit for bit, or the first member's error.
    pub fn fast_block_range(&self, members: Range<usize>) -> Result<ContactBlock> {
        let count = members.len();
        let groups = count.div_ceil(LANES);
        let mut system = LaneSystem::template(&self.nominal.system, groups);
        let mut states = GroupStates::zeroed(self.dof(), groups);
        let mut results = self.start_results(count);
        let streams = self.ensemble.as_ref().map(|spec| {
            let words = self.words_per_member() + REJECTION_WORDS;
            MemberStreams::new(spec.seed, members.clone(), words)
        });
        // No ensemble: the one member is the nominal.
        let mut member = self.nominal.clone();
        let mut first_member = None;
        for (i, index) in members.clone().enumerate() {
            if let Some(streams) = &streams
                && let Err(error) = self.draw_into(index, &mut streams.stream(index), &mut member)
            {
                // An earlier member whose H(0) is not finite (not yet checked) fails first.
                let earlier = (members.start..index).find_map(|j| self.member(j).err());
                return Err(earlier.unwrap_or(error));
            }
            let (g, l) = (i / LANES, i % LANES);
            system.set_lane(g, l, &member.system);
            states.set_lane(g, l, member.x0.as_slice(), member.p0.as_slice(), member.z0);
            self.write_start(&mut results, i, &member);
            if i == 0 && !count.is_multiple_of(LANES) {
                first_member = Some(member.clone());
            }
        }
        // Lanes past the members repeat the first.
        if let Some(first) = first_member {
            for l in count % LANES..LANES {
                system.set_lane(groups - 1, l, &first.system);
                states.set_lane(
                    groups - 1,
                    l,
                    first.x0.as_slice(),
                    first.p0.as_slice(),
                    first.z0,
                );
            }
        }
        Ok(ContactBlock::Lanes(Box::new(LaneBlock {
            first: Some(members.start),
            members: count,
            system,
            states,
            results,
        })))
    }

    /// Results of `count` members, every value 0.
    fn start_results(&self, count: usize) -> ResultBlock {
        ResultBlock::zeroed(self.record_spec(), self.grid().records(), count)
    }

    /// Member i's first sample in `results`: y0 = [x0; p0; z0] as its trajectory's first row
    /// (its H(0, y0) is the engine's first value, see [`super::integrate`]).
    fn write_start(&self, results: &mut ResultBlock, i: usize, member: &ContactMember) {
        let n = self.dof();
        let sample = &mut results.trajectory_mut(i)[..2 * n + 1];
        sample[..n].copy_from_slice(member.x0.as_slice());
        sample[n..2 * n].copy_from_slice(member.p0.as_slice());
        sample[2 * n] = member.z0;
    }
}
