//! A GPU chunk's operators built by the fast engine's set-up: its members drawn and set up
//! in blocks side by side on all cores ([`BlockOperators`]), then packed as the
//! per-invocation kernel reads them (`shape::pack_operators`' layout: entry e of member i
//! at e·count + i). The operators are those of `LinearPhPlan::kernel_operators_in`, bit for
//! bit, so the chunk is the one the general path packs from drawn members.

use std::ops::Range;

use rayon::prelude::*;

use super::block_operators::{BlockOperators, SharedOperators};
use super::setup;
use super::step_sources_of_rank;
use crate::error::Result;
use crate::kernels::lanes::LANES;
use crate::linear_ph::{LinearPhMember, LinearPhPlan};

/// Members one thread sets up together: a multiple of [`LANES`], large enough that a
/// block's bookkeeping is negligible, small enough that a chunk spreads over the cores.
const SETUP_BLOCK_MEMBERS: usize = 128 * LANES;

/// The operators and initial states of a chunk's members, block after block.
pub struct ChunkOperators {
    /// Blocks of [`SETUP_BLOCK_MEMBERS`] members, the last one possibly shorter.
    blocks: Vec<BlockOperators>,
}

impl ChunkOperators {
    /// Whether the stack set-up builds `plan`'s operators (n ≤ 8, few stages and inputs).
    pub fn fits(plan: &LinearPhPlan) -> bool {
        setup::fits(plan)
    }

    /// The operators of `plan`'s members `members`, drawn on the stack where the ensemble
    /// allows it (`BlockOperators::of_range`); the first error in block order.
    pub fn of_range(plan: &LinearPhPlan, members: Range<usize>) -> Result<Self> {
        let shared = SharedOperators::of(plan);
        let starts: Vec<usize> = members.clone().step_by(SETUP_BLOCK_MEMBERS).collect();
        let blocks: Vec<Result<BlockOperators>> = starts
            .into_par_iter()
            .map(|start| {
                let end = (start + SETUP_BLOCK_MEMBERS).min(members.end);
                BlockOperators::of_range(plan, &shared, start..end)
            })
            .collect();
        Ok(ChunkOperators {
            blocks: blocks.into_iter().collect::<Result<_>>()?,
        })
    }

    /// The operators of drawn `members` (`BlockOperators::of_members`); the first error
    /// in block order.
    pub fn of_members(plan: &LinearPhPlan, members: &[LinearPhMember]) -> Result<Self> {
        let blocks: Vec<Result<BlockOperators>> = members
            .par_chunks(SETUP_BLOCK_MEMBERS)
            .map(|block| BlockOperators::of_members(plan, block))
            .collect();
        Ok(ChunkOperators {
            blocks: blocks.into_iter().collect::<Result<_>>()?,
        })
    }

    /// Members held.
    pub fn count(&self) -> usize {
        self.blocks.iter().map(BlockOperators::count).sum()
    }

    /// The largest rank of the members' dissipation factors.
    pub fn rank(&self) -> usize {
        let ranks = self.blocks.iter().flat_map(|block| &block.ranks);
        ranks.copied().max().unwrap_or(0)
    }

    /// Member i's x0.
    pub fn x0(&self, i: usize) -> &[f64] {
        self.blocks[i / SETUP_BLOCK_MEMBERS].x0(i % SETUP_BLOCK_MEMBERS)
    }

    /// The operators as the per-invocation kernel of rank [`ChunkOperators::rank`] reads
    /// them under `plan`'s recording: Δ, Y, W up to the rank, Q, entry e of member i at
    /// e·count + i.
    pub fn pack(&self, plan: &LinearPhPlan) -> Vec<f64> {
        let count = self.count();
        let Some(first) = self.blocks.first() else {
            return Vec::new();
        };
        let (_, sources) = step_sources_of_rank(plan.recording(), first.layout, self.rank());
        let mut packed = vec![0.0; sources.len() * count];
        packed
            .par_chunks_mut(count)
            .zip(sources.par_iter().enumerate())
            .for_each(|(row, (e, &source))| {
                let mut rows = row;
                for block in &self.blocks {
                    let (out, rest) = rows.split_at_mut(block.count());
                    rows = rest;
                    match &block.step_entries {
                        // Every member has the nominal's operators, already in step order.
                        Some(entries) => out.fill(entries[e][0]),
                        None => {
                            let (groups, rest) = out.as_chunks_mut::<LANES>();
                            for (g, lanes) in groups.iter_mut().enumerate() {
                                *lanes = block.group_entries(g)[source];
                            }
                            if !rest.is_empty() {
                                let entry = &block.group_entries(groups.len())[source];
                                rest.copy_from_slice(&entry[..rest.len()]);
                            }
                        }
                    }
                }
            });
        packed
    }
}
