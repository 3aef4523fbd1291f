//! The fast CPU engine of the discrete adjoint: the reference sweeps of
//! `linear_ph::adjoint_reference` (forward: cost and checkpoints; backward: each segment
//! recomputed from its checkpoint, then λ_k, Ḡ_Δ and Ḡ_C) on blocks of candidates side by
//! side, [`LANES`] to a SIMD group and a few groups stepped together so that their
//! independent sums overlap.
//!
//! Every operation of a lane is the reference's operation on that candidate, in the same
//! order, each product and sum rounded on its own (no multiply-add is fused), so the raw
//! results are the reference's bit for bit at every [`SimdLevel`]. The candidates share
//! the stream (U_k, d_k, ω_k): each step's values are read once per block.
//!
//! Non-finite values are absorbing in x, the cost and λ, so a candidate whose sweeps went
//! bad is known from its raw result alone: a non-finite x_N makes the terminal residual
//! C x_N − d_N, and with it the cost, non-finite (m ≥ 1; ω_N = 0 gives 0 · ∞ = NaN), and a
//! non-finite λ_k leaves λ_0 non-finite. Only such a candidate is swept again by the
//! reference, which names the step where it went bad.

mod sweep;

use super::adjoint_reference::{SweepOperators, SweepShape, adjoint_sweep};
use super::fast::stack_deltas;
use crate::error::Result;
use crate::kernels::lanes::{LANES, Lanes, SimdLevel, ZERO};
use crate::kernels::{Family, FastEngine};
use crate::linear_ph::{GradientPlan, LinearPhEnsemble, LinearPhMember, OperatorWorkspace};
use crate::plan::ResultBlock;
use std::ops::Range;
use sweep::{GroupSweep, Problem, sweep};

/// Bytes of one block's sweep state (operators, cotangents, checkpoints, the segment) the
/// block sizing aims to keep in L2.
pub const BLOCK_STATE_BYTES: usize = 256 << 10;

/// Most groups per block: enough independent sums to cover the add latency.
pub const MAX_GROUPS: usize = 4;

/// Bytes of one group's stored states (checkpoints and the segment, [`LANES`] wide) above
/// which the engine checkpoints every ⌈√N⌉-th state instead of the plan's S.
pub const GROUP_STATES_BYTES: usize = 16 << 20;

/// The sweeps the engine runs: the plan's, but with S = ⌈√N⌉ where the plan's S would keep
/// more than [`GROUP_STATES_BYTES`] of states per group. The plan sizes S (1 keeps every
/// state) for one candidate per member, while a group holds [`LANES`] lanes even for one
/// candidate. Any S gives the same bits: a recomputed state is the forward sweep's own.
pub fn engine_shape(plan: &GradientPlan) -> SweepShape {
    let mut shape = plan.sweep_shape();
    let stored = (shape.checkpoints() + shape.segment) * shape.states * size_of::<Lanes>();
    if stored > GROUP_STATES_BYTES {
        shape.segment = ((shape.steps as f64).sqrt().ceil() as usize).clamp(1, shape.steps.max(1));
    }
    shape
}

/// Candidates of a block of a run of `candidates`: [`LANES`] per group, as many groups (at
/// most [`MAX_GROUPS`]) as keep the block's sweep state within [`BLOCK_STATE_BYTES`]; fewer
/// where that spreads a small batch (an optimiser's trial points) over more cores, since a
/// group takes as long for one candidate as for [`LANES`].
pub fn block_members(shape: &SweepShape, candidates: usize) -> usize {
    let (n, m, p) = (shape.states, shape.inputs, shape.width());
    let lanes = 2 * (n * p + m * n) + (shape.checkpoints() + shape.segment + 5) * n + m + 1;
    let group_bytes = lanes * std::mem::size_of::<Lanes>();
    let groups = (BLOCK_STATE_BYTES / group_bytes.max(1)).clamp(1, MAX_GROUPS);
    let per_thread = candidates.div_ceil(rayon::current_num_threads().max(1));
    per_thread.clamp(1, LANES * groups)
}

/// Up to [`LANES`] candidates' operators and initial states, entry by entry side by side
/// (lanes past the last candidate hold zeros, or in Δ from the stack set-up the first
/// candidate's entries; no result is read from them).
struct CandidateGroup {
    /// Candidates held.
    members: usize,
    /// Δ (n × p), row-major.
    delta: Vec<Lanes>,
    /// C = Bᵀ Q (m × n), row-major.
    output: Vec<Lanes>,
    x0: Vec<Lanes>,
}

impl CandidateGroup {
    /// Lane `lane`'s operators and initial state, as the reference takes them.
    fn lane(&self, lane: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let column = |values: &[Lanes]| values.iter().map(|v| v[lane]).collect();
        (column(&self.delta), column(&self.output), column(&self.x0))
    }
}

/// Consecutive candidates of a [`GradientPlan`] prepared for the fast sweeps.
pub struct SweepBlock {
    members: usize,
    groups: Vec<CandidateGroup>,
}

impl SweepBlock {
    /// The operators Δ and C of `members` ([`GradientPlan::operators_in`], the reference's
    /// own; Δ built on the stack where the linear engine's set-up builds it, the same bits),
    /// laid out side by side; the first candidate's error where one has none.
    pub fn new(plan: &GradientPlan, members: &[LinearPhMember]) -> Result<Self> {
        let shape = plan.sweep_shape();
        let (n, m, p) = (shape.states, shape.inputs, shape.width());
        let stacked = stack_deltas(&plan.model, members).transpose()?;
        let mut work = OperatorWorkspace::default();
        let mut groups = Vec::with_capacity(members.len().div_ceil(LANES));
        for (g, candidates) in members.chunks(LANES).enumerate() {
            let mut group = CandidateGroup {
                members: candidates.len(),
                delta: vec![ZERO; n * p],
                output: vec![ZERO; m * n],
                x0: vec![ZERO; n],
            };
            if let Some(deltas) = &stacked {
                debug_assert_eq!(deltas.len(), members.len().div_ceil(LANES) * n * p);
                group
                    .delta
                    .copy_from_slice(&deltas[g * n * p..(g + 1) * n * p]);
            }
            for (lane, member) in candidates.iter().enumerate() {
                let output = match stacked {
                    Some(_) => plan.output_operator(member),
                    None => {
                        let (delta, output) = plan.operators_in(member, &mut work)?;
                        for (entry, value) in group.delta.iter_mut().zip(&delta) {
                            entry[lane] = *value;
                        }
                        output
                    }
                };
                for (entry, value) in group.output.iter_mut().zip(&output) {
                    entry[lane] = *value;
                }
                for (entry, value) in group.x0.iter_mut().zip(member.x0.iter()) {
                    entry[lane] = *value;
                }
            }
            groups.push(group);
        }
        Ok(SweepBlock {
            members: members.len(),
            groups,
        })
    }

    /// Both sweeps of every candidate of the block with `level`'s instructions: the raw
    /// results ([cost, λ_0, Ḡ_Δ, Ḡ_C]) and, for a candidate that went bad, the step the
    /// reference names.
    pub fn run(self, plan: &GradientPlan, level: SimdLevel) -> ResultBlock {
        let shape = engine_shape(plan);
        let stream = plan.stream().window(0, shape.steps);
        let problem = Problem {
            shape,
            stream: &stream,
            terminal: plan.terminal(),
        };
        let mut sweeps: Vec<GroupSweep> = self
            .groups
            .iter()
            .map(|group| GroupSweep::new(&shape, group))
            .collect();
        sweep(level, &problem, &self.groups, &mut sweeps);
        let mut results =
            ResultBlock::zeroed(plan.record_spec(), plan.grid().records(), self.members);
        for (g, (group, state)) in self.groups.iter().zip(&sweeps).enumerate() {
            for lane in 0..group.members {
                let member = g * LANES + lane;
                let raw = results.final_state_mut(member);
                state.raw_into(lane, raw);
                if raw.iter().all(|v| v.is_finite()) {
                    continue;
                }
                // The reference's raw result is the same; it also finds the step.
                let (delta, output, x0) = group.lane(lane);
                let ops = SweepOperators {
                    delta: &delta,
                    output: &output,
                };
                let (stream, terminal) = (plan.stream(), plan.terminal());
                let swept = adjoint_sweep(&plan.sweep_shape(), &ops, &x0, stream, terminal);
                raw.copy_from_slice(&swept.raw);
                results.nonfinite_step[member] = swept.nonfinite_step;
            }
        }
        results
    }
}

impl FastEngine for GradientPlan {
    type Member = LinearPhMember;
    type Block = SweepBlock;
    type Shared = ();

    fn block_members(&self) -> usize {
        block_members(&engine_shape(self), self.member_count())
    }

    fn prepare(&self, members: Vec<LinearPhMember>) -> Result<SweepBlock> {
        SweepBlock::new(self, &members)
    }

    /// Listed candidates (identification's) are read in place rather than cloned.
    fn prepare_range(&self, _: &(), members: Range<usize>) -> Option<Result<SweepBlock>> {
        match &self.model.ensemble {
            LinearPhEnsemble::List(listed) => Some(SweepBlock::new(self, &listed[members])),
            LinearPhEnsemble::Drawn(_) => None,
        }
    }

    fn run(&self, block: SweepBlock) -> Result<ResultBlock> {
        Ok(block.run(self, SimdLevel::get()))
    }
}
