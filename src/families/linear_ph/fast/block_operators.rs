//! The step operators and initial states of a fast block's members, group by group: each
//! operator entry of a group of [`LANES`] members is one [`Lanes`] value, lane l member
//! g·[`LANES`] + l of group g, as the step reads it.

use std::ops::Range;
use std::sync::Arc;

use super::group_draw::{GroupDraw, MAX_GROUP_DRAW_STATES};
use super::setup::{self, EntryLayout, MemberParts, SetupScratch};
use crate::error::Result;
use crate::kernels::lanes::{LANES, Lanes, ZERO};
use crate::linear_ph::ensemble::MAX_STACK_INPUTS;
use crate::linear_ph::{DrawnLinearPhEnsemble, LinearPhEnsemble, OperatorWorkspace, StepOperators};
use crate::linear_ph::{LinearPhMember, LinearPhPlan};

/// The operators and initial states of a block's members in the [`EntryLayout`] of the
/// stack set-up, group by group.
pub(super) struct BlockOperators {
    pub layout: EntryLayout,
    /// Each group's [`EntryLayout::len`] entries; lanes past the block's last member hold
    /// copies of its first. Empty where every member has the nominal's operators
    /// (`step_entries`).
    entries: Vec<Lanes>,
    /// Each member's rank of its dissipation factor.
    pub ranks: Vec<usize>,
    /// Each member's x0 (n entries).
    initial: Vec<f64>,
    /// Where every member has the nominal's operators (members that differ in x0 alone):
    /// its group's entries as the step reads them, every lane the same, read by every
    /// group; `ranks` then holds the nominal's rank.
    pub step_entries: Option<Arc<Vec<Lanes>>>,
}

/// What the blocks of a run share: the nominal's operators (one group, every lane the
/// same) where the members differ in x0 alone and the nominal's operators build. Where
/// they do not build, each block builds them itself and reports the error in member order.
#[derive(Default)]
pub struct SharedOperators(Option<BlockOperators>);

impl SharedOperators {
    /// The nominal's operators of `plan` where its members differ in x0 alone.
    pub fn of(plan: &LinearPhPlan) -> Self {
        SharedOperators(match &plan.ensemble {
            LinearPhEnsemble::Drawn(drawn) if drawn.only_x0_drawn() => {
                BlockOperators::of_nominal(plan, drawn).ok()
            }
            _ => None,
        })
    }
}

impl BlockOperators {
    /// Room for `count` members of `layout`.
    fn with_capacity(layout: EntryLayout, count: usize) -> Self {
        BlockOperators {
            layout,
            entries: Vec::with_capacity(count.div_ceil(LANES) * layout.len()),
            ranks: Vec::with_capacity(count),
            initial: Vec::with_capacity(count * layout.states),
            step_entries: None,
        }
    }

    /// Members held.
    pub fn count(&self) -> usize {
        self.initial.len() / self.layout.states
    }

    /// Group g's [`EntryLayout::len`] entries.
    pub fn group_entries(&self, g: usize) -> &[Lanes] {
        let len = self.layout.len();
        &self.entries[g * len..(g + 1) * len]
    }

    /// The groups' entries, taken out (the block keeps none).
    pub fn take_entries(&mut self) -> Vec<Lanes> {
        std::mem::take(&mut self.entries)
    }

    /// Member i's x0.
    pub fn x0(&self, i: usize) -> &[f64] {
        let n = self.layout.states;
        &self.initial[i * n..(i + 1) * n]
    }

    /// The operators of `members`: built on the stack where they are small
    /// ([`setup::fits`]), else by [`LinearPhPlan::kernel_operators_in`].
    pub fn of_members(plan: &LinearPhPlan, members: &[LinearPhMember]) -> Result<Self> {
        let recording = plan.recording();
        let layout = EntryLayout::new(plan, recording);
        let mut block = BlockOperators::with_capacity(layout, members.len());
        for member in members {
            block.initial.extend_from_slice(member.x0.as_slice());
        }
        if setup::fits(plan) {
            let mut scratch = SetupScratch::new(plan, recording)?;
            for group in members.chunks(LANES) {
                let parts = std::array::from_fn(|lane| {
                    MemberParts::of(group.get(lane).unwrap_or(&group[0]))
                });
                block.push_group(group.len(), |out| scratch.build(&parts, out))?;
            }
        } else {
            let mut work = OperatorWorkspace::default();
            for (i, member) in members.iter().enumerate() {
                let operators = plan.kernel_operators_in(member, recording, &mut work)?;
                block.set_general(i, &operators);
            }
        }
        block.pad_last_group();
        Ok(block)
    }

    /// The operators of `plan`'s members `range`, given what the run's blocks `shared`:
    /// drawn group by group in lanes and built there for a drawn ensemble of n ≤ 5 (and m ≤
    /// [`MAX_STACK_INPUTS`]), else from the members ([`BlockOperators::of_members`]). A
    /// group that fails to build stops the building but not the drawing, so that the error
    /// reported is the general path's: the first draw error in member order, else the
    /// first build error.
    pub fn of_range(
        plan: &LinearPhPlan,
        shared: &SharedOperators,
        range: Range<usize>,
    ) -> Result<Self> {
        if let LinearPhEnsemble::Drawn(drawn) = &plan.ensemble
            && drawn.only_x0_drawn()
        {
            return Self::sharing_nominal(plan, drawn, shared, range);
        }
        let drawn = match &plan.ensemble {
            LinearPhEnsemble::Drawn(drawn)
                if setup::fits(plan)
                    && plan.states() <= MAX_GROUP_DRAW_STATES
                    && plan.inputs_count() <= MAX_STACK_INPUTS =>
            {
                drawn
            }
            _ => return Self::of_members(plan, &plan.ensemble.members_in_order(range)?),
        };
        let recording = plan.recording();
        let layout = EntryLayout::new(plan, recording);
        let mut block = BlockOperators::with_capacity(layout, range.len());
        let mut scratch = SetupScratch::new(plan, recording)?;
        let mut draw = GroupDraw::new(drawn);
        let streams = drawn.streams(range.clone());
        // Each group is built as soon as it is drawn; after a build error the rest are
        // only drawn, so that a draw error of a later member still comes first.
        let mut build_error = None;
        macro_rules! stack {
            ($($n:literal),*) => {
                match layout.states {
                    $($n => {
                        for first in range.clone().step_by(LANES) {
                            let members = (range.end - first).min(LANES);
                            draw.draw::<$n, { $n * $n }>(
                                drawn,
                                &streams,
                                first,
                                members,
                                scratch.matrices_mut(),
                            )?;
                            for lane in 0..members {
                                block.initial.extend_from_slice(&draw.x0::<$n>(lane));
                            }
                            if build_error.is_some() {
                                continue;
                            }
                            let built = block.push_group(members, |out| {
                                scratch.build_in_place(out)
                            });
                            if let Err(error) = built {
                                build_error = Some(error);
                            }
                        }
                    })*
                    n => unreachable!("group draws are of n ≤ 5, not {n}"),
                }
            };
        }
        stack!(1, 2, 3, 4, 5);
        match build_error {
            Some(error) => Err(error),
            None => {
                block.pad_last_group();
                Ok(block)
            }
        }
    }

    /// The nominal's operators ([`BlockOperators::step_entries`]), shared by every member
    /// that differs from it in x0 alone: the operators depend on J, R, Q, B and the scheme
    /// alone.
    fn of_nominal(plan: &LinearPhPlan, drawn: &DrawnLinearPhEnsemble) -> Result<Self> {
        let nominal = Self::of_members(plan, std::slice::from_ref(&drawn.nominal))?;
        let (_, sources) = super::step_sources(plan.recording(), &nominal);
        Ok(BlockOperators {
            step_entries: Some(Arc::new(super::step_entries(&nominal, &sources, 0..1))),
            entries: Vec::new(),
            initial: Vec::new(),
            ..nominal
        })
    }

    /// The block of members that differ in x0 alone: the nominal's operators, from the
    /// run's `shared` (built here where the run has none), and each member's drawn x0.
    /// Every x0 is drawn before the operators are built, as the general path reports a
    /// draw error before a build error.
    fn sharing_nominal(
        plan: &LinearPhPlan,
        drawn: &DrawnLinearPhEnsemble,
        shared: &SharedOperators,
        range: Range<usize>,
    ) -> Result<Self> {
        let n = plan.states();
        let streams = drawn.streams(range.clone());
        let mut initial = vec![0.0; range.len() * n];
        for (i, x0) in range.clone().zip(initial.chunks_exact_mut(n)) {
            drawn.draw_initial_state(&mut streams.stream(i), i, x0)?;
        }
        let nominal = match &shared.0 {
            Some(nominal) => BlockOperators {
                layout: nominal.layout,
                entries: Vec::new(),
                ranks: nominal.ranks.clone(),
                initial: Vec::new(),
                step_entries: nominal.step_entries.clone(),
            },
            None => Self::of_nominal(plan, drawn)?,
        };
        Ok(BlockOperators { initial, ..nominal })
    }

    /// Appends a group built on the stack by `build` (which writes its entries and returns
    /// the ranks), of which the first `members` lanes are members of the block.
    fn push_group(
        &mut self,
        members: usize,
        build: impl FnOnce(&mut [Lanes]) -> Result<[usize; LANES]>,
    ) -> Result<()> {
        let start = self.entries.len();
        self.entries.resize(start + self.layout.len(), ZERO);
        let ranks = build(&mut self.entries[start..])?;
        self.ranks.extend_from_slice(&ranks[..members]);
        Ok(())
    }

    /// Sets member i's operators from the general path (members in order), W's rows moved
    /// to the layout's (stage i's factor column k at row i·n + k).
    fn set_general(&mut self, i: usize, operators: &StepOperators) {
        let layout = self.layout;
        let (n, p, len) = (layout.states, layout.width(), layout.len());
        let (g, lane) = (i / LANES, i % LANES);
        if lane == 0 {
            self.entries.resize((g + 1) * len, ZERO);
        }
        let group = &mut self.entries[g * len..(g + 1) * len];
        let mut set = |at: usize, values: &[f64]| {
            for (entry, &value) in group[at..at + values.len()].iter_mut().zip(values) {
                entry[lane] = value;
            }
        };
        set(0, &operators.delta);
        set(layout.output_at(), &operators.output);
        let rank = operators.rank;
        for stage in 0..layout.stages {
            for k in 0..rank {
                let from = (stage * rank + k) * p;
                set(
                    layout.dissipation_at() + (stage * n + k) * p,
                    &operators.dissipation[from..from + p],
                );
            }
        }
        set(layout.q_at(), &operators.q);
        self.ranks.push(rank);
    }

    /// Copies the block's first member into the lanes of its last group past its last
    /// member.
    fn pad_last_group(&mut self) {
        let (count, len) = (self.count(), self.layout.len());
        let used = count - (count - 1) / LANES * LANES;
        let last = (count - 1) / LANES * len;
        for e in 0..len {
            let first = self.entries[e][0];
            self.entries[last + e][used..].fill(first);
        }
    }
}
