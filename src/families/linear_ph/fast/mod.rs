//! The fast CPU engine of the linear-PH family: the step of the GPU kernel and its twin
//! (`linear_ph_step`), applied to blocks of members side by side.
//!
//! ```text
//!   δ = Δ v,  x_{k+1} = x_k + δ                       (Kahan-compensated)
//!   y = Y v,  port = h yᵀ U_k,  dissipated = h ‖W v‖²
//!   stored = δᵀ Q (x_k + δ/2),  supplied = port − dissipated
//! ```
//!
//! A block holds [`LANES`]·G members structure-of-arrays: every operator entry, state
//! component and energy sum is a [`Lanes`] value (one SIMD register with AVX-512), so each
//! operation advances [`LANES`] members. A block runs its steps window by window, its G
//! groups two or four at a time with their steps interleaved — independent work that hides
//! the latency of one member's chain of dependent operations — while its operators stay in
//! L1/L2 (G is chosen from the operator size). Only what the recording switches on is
//! computed: a final-state-only run applies Δ and nothing else; y is formed at record points
//! unless the energy balance needs it every step. A window's record points go to each
//! group's record rows, in registers' layout, and are written to the members' results at
//! the window's end (a window ends early where the rows are full), so that recording
//! every step costs the recorded values' stores, not a window per record point.
//!
//! The non-finite status (the first step after which x or a step energy was not finite)
//! costs nothing while members stay finite: non-finite values are absorbing in x and in
//! the energy totals, so each window of at most [`CHECK_WINDOW`] steps is checked once at
//! its end, from a snapshot taken at its start; a group with a member that went bad is
//! rewound and replays the window checking every step. A member whose sums overflowed
//! while every step stayed finite keeps its group checking every step from then on.
//!
//! With FMA ([`SimdLevel::Avx512`], [`SimdLevel::Avx2`]) multiply-adds are rounded once;
//! the portable level rounds them like the twin, whose results it reproduces bit for bit.

mod block_operators;
mod chunk_operators;
mod group;
mod group_draw;
mod lane_square;
mod records;
mod setup;
mod snapshots;
mod stage_lu;
mod step;

use std::ops::Range;
use std::sync::Arc;

use crate::error::Result;
use crate::kernels::lanes::{LANES, Lanes, SimdLevel, ZERO};
use crate::linear_ph::{LinearPhMember, LinearPhPlan};
use crate::plan::{Recording, ResultBlock, ResultWriter};
use block_operators::BlockOperators;
pub use block_operators::SharedOperators;
pub use chunk_operators::ChunkOperators;
use group::{Group, GroupOps, Sums};
use setup::EntryLayout;
use snapshots::Snapshots;
use step::{Window, advance};

/// Steps between the finiteness checks of a block (see the module documentation).
pub const CHECK_WINDOW: usize = 64;

/// Bytes of one group's operators the block sizing aims to keep in L1.
const OPERATOR_CACHE_BYTES: usize = 32 << 10;

/// Most groups per block.
const MAX_GROUPS: usize = 32;

/// The sizes of a block's step: what is applied under the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StepShape {
    /// n.
    states: usize,
    /// s·m stage inputs.
    inputs: usize,
    /// Rows of Y applied (s·m, or 0 when neither outputs nor energies are recorded).
    y_rows: usize,
    /// Rows of W (s·rank with energies, else 0).
    w_rows: usize,
    recording: Recording,
}

impl StepShape {
    /// The step of n states, s stages and m inputs with W of s·`rank` rows, as far as
    /// `recording` needs it.
    fn new(n: usize, stages: usize, m: usize, rank: usize, recording: Recording) -> Self {
        let sm = stages * m;
        StepShape {
            states: n,
            inputs: sm,
            y_rows: if recording.energy || recording.outputs {
                sm
            } else {
                0
            },
            w_rows: if recording.energy { stages * rank } else { 0 },
            recording,
        }
    }

    /// p = n + s·m.
    fn width(&self) -> usize {
        self.states + self.inputs
    }

    /// Entries per member: Δ, Y, W (p each row), Q (n² with energies).
    fn entries(&self) -> usize {
        let q = if self.recording.energy {
            self.states * self.states
        } else {
            0
        };
        (self.states + self.y_rows + self.w_rows) * self.width() + q
    }

    /// Groups per block: as many as keep the block's operators within
    /// [`OPERATOR_CACHE_BYTES`], at least 1, at most [`MAX_GROUPS`].
    fn groups(&self) -> usize {
        (OPERATOR_CACHE_BYTES / (self.entries() * std::mem::size_of::<Lanes>()).max(1))
            .clamp(1, MAX_GROUPS)
    }
}

/// Members of the fast engine's blocks for `plan`.
pub fn block_members(plan: &LinearPhPlan) -> usize {
    // rank ≤ n bounds the block's operator size.
    let (n, stages) = (plan.states(), plan.scheme.stages);
    let shape = StepShape::new(n, stages, plan.inputs_count(), n, plan.recording());
    LANES * shape.groups()
}

/// The one-step operators Δ (n × p, row-major) of `members` under `plan` (recording the
/// final state only), built side by side on the stack, [`LANES`] to a group (lanes past
/// the last member copy the first): `StepOperators::recording_in`'s Δ bit for bit, and its
/// error for the first member without one. `None` where the stack set-up does not build
/// `plan`'s members, or where it would zero the columns of silent inputs (which the
/// general path keeps). The adjoint's fast engine lays out its candidates with it.
pub(in crate::families::linear_ph) fn stack_deltas(
    plan: &LinearPhPlan,
    members: &[LinearPhMember],
) -> Option<Result<Vec<Lanes>>> {
    if !setup::fits(plan)
        || plan.recording() != Recording::FINAL_STATE
        || plan.silent_inputs().iter().any(|&silent| silent)
        || members.is_empty()
    {
        return None;
    }
    Some(BlockOperators::of_members(plan, members).map(|mut block| block.take_entries()))
}

/// A block of members prepared for the fast engine.
#[derive(Debug, Clone)]
pub struct FastBlock {
    shape: StepShape,
    /// Members (the last group may be padded with copies of the block's first member).
    members: usize,
    /// Record points written so far.
    recorded: usize,
    groups: Vec<Group>,
    /// The members' results, written in place at the record points and the end.
    results: ResultWriter,
}

impl FastBlock {
    /// Builds the step operators of `members` (at least one, at most [`block_members`])
    /// under `plan` and lays them out lane by lane.
    pub fn new(plan: &LinearPhPlan, members: &[LinearPhMember]) -> Result<FastBlock> {
        assert!(!members.is_empty(), "a block has at least one member");
        let operators = BlockOperators::of_members(plan, members)?;
        Ok(FastBlock::from_operators(plan, operators))
    }

    /// The block of `plan`'s members `members` (at least one, at most [`block_members`]),
    /// drawn and set up without a heap allocation per member where the members are small
    /// (n ≤ 5 drawn on the stack, n ≤ 8 built on it; members that differ in x0 alone take
    /// the nominal's operators, from `shared` where the run built them once); the block
    /// [`FastBlock::new`] builds from them.
    pub fn of_range(
        plan: &LinearPhPlan,
        shared: &SharedOperators,
        members: Range<usize>,
    ) -> Result<FastBlock> {
        assert!(!members.is_empty(), "a block has at least one member");
        let operators = BlockOperators::of_range(plan, shared, members)?;
        Ok(FastBlock::from_operators(plan, operators))
    }

    /// Lays out the members' operators and initial states lane by lane.
    fn from_operators(plan: &LinearPhPlan, mut operators: BlockOperators) -> FastBlock {
        let recording = plan.recording();
        let n = operators.layout.states;
        let (stages, m) = (operators.layout.stages, operators.layout.inputs);
        let count = operators.count();
        let groups = count.div_ceil(LANES);
        let (shape, sources) = step_sources(recording, &operators);
        // The groups' step entries: the nominal's for every group, else the block's own,
        // taken as they are where the step reads every entry of the layout (`sources` is
        // then the identity: it lists entries of the layout in increasing order).
        let (buffer, stride) = if let Some(nominal) = &operators.step_entries {
            (nominal.clone(), 0)
        } else if sources.len() == operators.layout.len() {
            (Arc::new(operators.take_entries()), sources.len())
        } else {
            let entries = step_entries(&operators, &sources, 0..groups);
            (Arc::new(entries), sources.len())
        };
        let operators = &operators;
        let mut results = ResultWriter::new(plan.record_spec(), plan.grid.records(), count);
        if recording.trajectory {
            for i in 0..count {
                results.trajectory(i, operators.x0(i).iter().copied());
            }
        }
        let sm = stages * m;
        let mut block_groups = group::take_spare_groups();
        block_groups.truncate(groups);
        for g in 0..groups {
            let ops = GroupOps {
                buffer: buffer.clone(),
                at: g * stride,
                len: sources.len(),
            };
            if g < block_groups.len() {
                block_groups[g].restart(ops, n, sm, recording.energy);
            } else {
                block_groups.push(Group::new(ops, n, sm, recording.energy));
            }
            // Lane l of group g is member g·LANES + l, or a copy of the block's first.
            let x = &mut block_groups[g].x;
            for l in 0..LANES {
                let i = g * LANES + l;
                let x0 = operators.x0(if i < count { i } else { 0 });
                for (entry, &value) in x.iter_mut().zip(x0) {
                    entry[l] = value;
                }
            }
        }
        FastBlock {
            shape,
            members: count,
            recorded: 0,
            groups: block_groups,
            results,
        }
    }

    /// Integrates the block through `plan`'s grid with the instruction set `level` and
    /// returns its members' results.
    pub fn run(mut self, plan: &LinearPhPlan, level: SimdLevel) -> ResultBlock {
        let grid = &plan.grid;
        let energy = self.shape.recording.energy;
        let window_records = self.shape.window_records();
        records::lend_buffers(&mut self.groups, window_records * self.shape.record_width());
        // Each window's start, for groups that may have to replay it (buffers reused).
        let mut snapshots = Snapshots::new(self.groups.len(), self.shape.states, energy);
        let mut k = 0;
        while k < grid.steps {
            // At most CHECK_WINDOW steps, ending at the latest at the record point that
            // fills the groups' record rows.
            let last_record = (self.recorded + window_records).saturating_mul(grid.record_every);
            let end = (k + CHECK_WINDOW).min(last_record).min(grid.steps);
            let inputs = plan.inputs.window(k, end - k);
            for (g, group) in self.groups.iter().enumerate() {
                if !group.checking {
                    snapshots.take(g, group, energy);
                }
            }
            let window = Window {
                shape: self.shape,
                grid,
                first_step: k,
                steps: end - k,
                inputs: &inputs,
            };
            for checking in [false, true] {
                let mut selected: Vec<&mut Group> = self
                    .groups
                    .iter_mut()
                    .filter(|g| g.checking == checking)
                    .collect();
                if !selected.is_empty() {
                    advance(level, &window, &mut selected, checking);
                }
            }
            // A member that went bad in a window that did not check: rewind and replay.
            for (g, group) in self.groups.iter_mut().enumerate() {
                if group.checking {
                    continue;
                }
                let suspect = suspects(group, self.shape.recording);
                if suspect.iter().any(|&s| s) {
                    snapshots.restore(g, group, energy);
                    advance(level, &window, &mut [&mut *group], true);
                    // Sums that overflowed while every step stayed finite.
                    if (0..LANES).any(|l| suspect[l] && group.status[l] == 0) {
                        group.checking = true;
                    }
                }
            }
            let records = grid.records_through(end) - self.recorded;
            self.write_records(records);
            k = end;
        }
        records::return_buffers(&mut self.groups);
        self.finish()
    }

    /// The members' final states, totals and status.
    fn finish(mut self) -> ResultBlock {
        let energy = self.shape.recording.energy;
        let results = &mut self.results;
        for i in 0..self.members {
            let (group, l) = (&self.groups[i / LANES], i % LANES);
            results.final_state(i, group.x.iter().map(|x| x[l]));
            if energy {
                let sums = group.sums();
                let totals = (0..4).map(|c| sums.totals[c][l] + sums.totals_comp[c][l]);
                results.totals(i, totals.chain([sums.max_residual[l]]));
            }
            results.nonfinite_step[i] = (group.status[l] != 0).then_some(group.status[l]);
        }
        debug_assert_eq!(self.results.len(), self.members);
        group::keep_spare_groups(std::mem::take(&mut self.groups));
        self.results.finish()
    }
}

/// The step's shape for `operators` under `recording`, and the entry of a member's
/// operators behind each of a group's step entries: Δ, Y, W up to the block's rank (rows
/// beyond a member's rank are zero), Q.
fn step_sources(recording: Recording, operators: &BlockOperators) -> (StepShape, Vec<usize>) {
    let rank = operators.ranks.iter().copied().max().unwrap_or(0);
    step_sources_of_rank(recording, operators.layout, rank)
}

/// [`step_sources`] for members of `layout` whose largest rank is `rank`.
fn step_sources_of_rank(
    recording: Recording,
    layout: EntryLayout,
    rank: usize,
) -> (StepShape, Vec<usize>) {
    let (n, stages, m) = (layout.states, layout.stages, layout.inputs);
    let shape = StepShape::new(n, stages, m, rank, recording);
    let p = shape.width();
    let mut sources: Vec<usize> = (0..(n + shape.y_rows) * p).collect();
    if shape.w_rows > 0 {
        for stage in 0..stages {
            for k in 0..rank {
                let row = layout.dissipation_at() + (stage * n + k) * p;
                sources.extend(row..row + p);
            }
        }
    }
    if recording.energy {
        sources.extend(layout.q_at()..layout.q_at() + n * n);
    }
    debug_assert_eq!(sources.len(), shape.entries());
    (shape, sources)
}

/// The entries of `operators`' groups `groups` as the step reads them (`sources` from
/// [`step_sources`]), group after group.
fn step_entries(operators: &BlockOperators, sources: &[usize], groups: Range<usize>) -> Vec<Lanes> {
    let mut out = Vec::with_capacity(groups.len() * sources.len());
    for g in groups {
        let entries = operators.group_entries(g);
        out.extend(sources.iter().map(|&e| entries[e]));
    }
    out
}

/// Lanes still marked finite whose state or energy sums are not: they went bad in the
/// window (or their sums overflowed).
fn suspects(group: &Group, recording: Recording) -> [bool; LANES] {
    let sum_values = || {
        let sums = group.sums();
        sums.totals
            .iter()
            .chain(&sums.totals_comp)
            .chain(std::iter::once(&sums.max_residual))
    };
    // The usual case, checked for all lanes at once: every member finite, and still so.
    let state = group.x.iter().chain(&group.carry);
    let finite = if recording.energy {
        all_finite(state.chain(sum_values()))
    } else {
        all_finite(state)
    };
    if finite && group.status == [0; LANES] {
        return [false; LANES];
    }
    std::array::from_fn(|l| {
        if group.status[l] != 0 {
            return false;
        }
        let state = group.x.iter().chain(&group.carry).all(|v| v[l].is_finite());
        let sums = !recording.energy || sum_values().all(|v| v[l].is_finite());
        !(state && sums)
    })
}

/// Whether every lane of every value is finite: 0·v is ±0 for a finite v and NaN for ±inf
/// or NaN, so one sum of these products per lane tells, in vector instructions.
fn all_finite<'a>(values: impl Iterator<Item = &'a Lanes>) -> bool {
    let mut products = ZERO;
    for v in values {
        for l in 0..LANES {
            products[l] += 0.0 * v[l];
        }
    }
    products.iter().all(|&p| p == 0.0)
}
