//! The recording loop of the fast engine, the reference's (`super::super::reference`) on a
//! block of lanes: at step k the time functions at t_j = (k + offset_j) h once for the
//! block, the method's base steps in order, the first step after which a lane's
//! y = [x; p; z] is not finite, and at record points y and H(k h, y) per member; H at the
//! start and at the last record point as totals.

use std::cell::Cell;
use std::ops::Range;

use super::lane_flows::{FlowScratch, GroupStates, constant_decay, hamiltonian, herglotz, strang};
use super::lane_system::{LaneSystem, dim};
use super::lane_vec::LaneVec;
use super::schedule::{BaseStep, Schedule};
use super::time_values::{DampingTime, TimeValues};
use crate::kernels::lanes::{LANES, Lanes, Simd};
use crate::plan::{ResultBlock, StepGrid};

/// Bytes of a chunk's working set (its groups' states and work buffers) that the chunk
/// sizing aims to keep in a core's L1 data cache.
const CHUNK_BYTES: usize = 32 << 10;

/// Steps a chunk of groups runs before the next chunk takes them: the time functions of a
/// tile's steps are computed once for the block.
const TILE_STEPS: usize = 64;

/// A thread's work buffers for blocks of `groups` groups of n-vectors, kept between the
/// blocks it integrates (all of a plan's blocks but a last, smaller one have the same
/// shape): every value in them is written before it is read.
struct Workspace {
    n: usize,
    groups: usize,
    work: FlowScratch,
    /// φ_C(τ/2) factors per base step and group (constant damping).
    decays: Vec<LaneVec>,
    /// The time functions at a tile's time points, step by step.
    table: Vec<TimeValues>,
    /// Whether a tile's step is a record point, and the time functions there.
    recording: Vec<bool>,
    at_record: Vec<TimeValues>,
    /// H per group at a record point.
    energy: LaneVec,
}

impl Workspace {
    fn new(n: usize, groups: usize) -> Self {
        Workspace {
            n,
            groups,
            work: FlowScratch::new(n, groups),
            decays: Vec::new(),
            table: Vec::new(),
            recording: Vec::new(),
            at_record: Vec::new(),
            energy: LaneVec::filled([0.0; LANES], groups),
        }
    }
}

thread_local! {
    /// The workspace of this thread's last block.
    static WORKSPACE: Cell<Option<Box<Workspace>>> = const { Cell::new(None) };
}

/// Members laid out in groups of lanes, with their results' first state (y0 of each, its
/// other values 0 until integrated).
#[derive(Debug, Clone)]
pub struct LaneBlock {
    /// The plan's index of the first member where the members were drawn straight from
    /// the plan, for the error of a member whose H(0) is not finite (`None` for members
    /// handed over built, which the error then names by their place in the block).
    pub first: Option<usize>,
    /// Members; lanes past them repeat the first member and are dropped.
    pub members: usize,
    pub system: LaneSystem,
    pub states: GroupStates,
    pub results: ResultBlock,
}

/// Groups per chunk for n-vectors: as many of the block's `groups` as keep a chunk's
/// states and work buffers (about 6 n + 8 values of [`LANES`] lanes per group) within
/// `CHUNK_BYTES`, at least one.
fn chunk_groups(n: usize, groups: usize) -> usize {
    let per_group = (6 * n + 8) * size_of::<Lanes>();
    (CHUNK_BYTES / per_group).clamp(1, groups.max(1))
}

/// A member of a block whose H(0, x0, p0, z0) = `energy` is not finite.
#[derive(Debug, Clone, Copy)]
pub struct NonfiniteStart {
    /// Its place in the block.
    pub member: usize,
    pub energy: f64,
}

/// Integrates `block` through `grid` by `schedule` and returns its members' results: H at
/// t = 0 (row 0 of the `hamiltonian` channel), the state and H at each record point (row r
/// of the trajectory and of the `hamiltonian` channel), the final state, H at the start and
/// at the last record point as totals, and the non-finite step; or the first member whose
/// H at t = 0 is not finite, before any step.
///
/// Steps go in tiles of `TILE_STEPS`: the time functions of a tile's steps (and of its
/// record points) once for the block, then each chunk of groups through the tile's steps,
/// the flows over the chunk's groups side by side (`lane_flows.rs`).
#[inline(always)]
pub fn integrate<S: Simd, const N: usize>(
    simd: S,
    block: LaneBlock,
    schedule: &Schedule,
    grid: &StepGrid,
) -> Result<ResultBlock, NonfiniteStart> {
    let LaneBlock {
        first: _,
        members,
        system,
        mut states,
        mut results,
    } = block;
    let (n, groups) = (dim::<N>(system.n), system.groups);
    let h = grid.h;
    let points = schedule.offsets.len();
    let tile_steps = TILE_STEPS.min(grid.steps).max(1);
    let mut space = WORKSPACE
        .take()
        .filter(|space| space.n == n && space.groups == groups)
        .unwrap_or_else(|| Box::new(Workspace::new(n, groups)));
    let Workspace {
        work,
        decays,
        table,
        recording,
        at_record,
        energy,
        ..
    } = &mut *space;
    // φ_C(τ/2) factors per base step and group when C is constant (the same every step).
    decays.resize_with(schedule.steps.len(), LaneVec::default);
    let constant = matches!(system.time.damping(), DampingTime::Constant);
    for (step, decay) in schedule.steps.iter().zip(decays.iter_mut()) {
        if let (BaseStep::Strang { gamma, .. }, true) = (step, constant) {
            *decay = (0..groups)
                .map(|g| constant_decay(&system, g, 0.5 * (gamma * h)))
                .collect();
        }
    }
    let decays: Vec<Option<&[Lanes]>> = schedule
        .steps
        .iter()
        .zip(decays.iter())
        .map(|(step, decay)| {
            (constant && matches!(step, BaseStep::Strang { .. })).then_some(&decay[..])
        })
        .collect();
    table.resize(tile_steps * points, TimeValues::default());
    recording.resize(tile_steps, false);
    at_record.resize(tile_steps, TimeValues::default());
    let width = 2 * n + 1;
    // H(0, y0), the `hamiltonian` channel's first value: the last of `ContactPlan::member`'s
    // checks, that it be finite, made here over the lanes. The potential held is another
    // block's (the workspace is this thread's last block's): forgotten first.
    let mut start = TimeValues::default();
    system.time.at(0.0, &mut start);
    work.forget_potential();
    hamiltonian::<S, N>(simd, &system, 0..groups, &start, &states, work, energy);
    let mut last: Vec<f64> = (0..members).map(|m| energy[m / LANES][m % LANES]).collect();
    if let Some(member) = last.iter().position(|e| !e.is_finite()) {
        let energy = last[member];
        WORKSPACE.set(Some(space));
        return Err(NonfiniteStart { member, energy });
    }
    for (m, &energy) in last.iter().enumerate() {
        results.channel_mut(0, m)[0] = energy;
    }
    let mut record_points = grid.record_points().into_iter().peekable();
    // Row of each of a tile's steps that records (1 for the first record point).
    let mut rows = vec![0; tile_steps];
    let mut recorded = 0;
    let chunk = chunk_groups(n, groups);
    let mut tile = 0..0;
    while tile.end < grid.steps {
        tile = tile.end..(tile.end + tile_steps).min(grid.steps);
        for k in tile.clone() {
            let i = k - tile.start;
            let at = &mut table[i * points..(i + 1) * points];
            for (values, &offset) in at.iter_mut().zip(&schedule.offsets) {
                system.time.at((k as f64 + offset) * h, values);
            }
            recording[i] = record_points.peek() == Some(&(k + 1));
            if recording[i] {
                record_points.next();
                recorded += 1;
                rows[i] = recorded;
                system.time.at((k + 1) as f64 * h, &mut at_record[i]);
            }
        }
        for first in (0..groups).step_by(chunk) {
            let chunk = first..(first + chunk).min(groups);
            // The potential held is the last chunk's; this chunk's own values from its
            // last tile are still in their slots, but a chunk starts from nothing held, so
            // what is reused never depends on the order chunks and blocks run in.
            work.forget_potential();
            for k in tile.clone() {
                let i = k - tile.start;
                let at = &table[i * points..(i + 1) * points];
                for (step, decay) in schedule.steps.iter().zip(&decays) {
                    match *step {
                        BaseStep::Strang { gamma, points } => {
                            let at = [&at[points[0]], &at[points[1]]];
                            let (tau, decay) = (gamma * h, *decay);
                            let y = &mut states;
                            strang::<S, N>(simd, &system, chunk.clone(), at, tau, decay, y, work);
                        }
                        BaseStep::Herglotz { gamma, points } => {
                            let at = [&at[points[0]], &at[points[1]], &at[points[2]]];
                            let y = &mut states;
                            herglotz::<S, N>(simd, &system, chunk.clone(), at, gamma * h, y, work);
                        }
                    }
                }
                let nonfinite = &mut results.nonfinite_step;
                flag_nonfinite::<S, N>(simd, &states, chunk.clone(), k, members, nonfinite);
                if recording[i] {
                    let (at, row) = (&at_record[i], rows[i]);
                    hamiltonian::<S, N>(simd, &system, chunk.clone(), at, &states, work, energy);
                    for g in chunk.clone() {
                        let lanes = (g * LANES).min(members)..((g + 1) * LANES).min(members);
                        for (l, m) in lanes.clone().enumerate() {
                            let sample = &mut results.trajectory_mut(m)[row * width..];
                            states.write_lane(g, l, &mut sample[..width]);
                            results.channel_mut(0, m)[row] = energy[g][l];
                        }
                        last[lanes.clone()].copy_from_slice(&energy[g][..lanes.len()]);
                    }
                }
            }
        }
    }
    for (m, last) in last.into_iter().enumerate() {
        states.write_lane(m / LANES, m % LANES, results.final_state_mut(m));
        let start = results.channel(0, m)[0];
        results.totals_mut(m).copy_from_slice(&[start, last]);
    }
    WORKSPACE.set(Some(space));
    Ok(results)
}

/// Flags step k + 1 in `nonfinite` (one entry per member) for the members of `groups` (of
/// the block's `members`) where y stopped being finite: v − v is NaN exactly where v is not
/// finite, and a sum of them is NaN where any is, first over the whole chunk, then (only
/// when that is NaN) group by group.
#[inline(always)]
fn flag_nonfinite<S: Simd, const N: usize>(
    simd: S,
    y: &GroupStates,
    groups: Range<usize>,
    k: usize,
    members: usize,
    nonfinite: &mut [Option<u64>],
) {
    let n = dim::<N>(y.n);
    let vectors = groups.start * n..groups.end * n;
    let mut sums = [simd.zero(); 4];
    for values in [&y.x[vectors.clone()], &y.p[vectors], &y.z[groups.clone()]] {
        let mut quads = values.chunks_exact(4);
        for quad in &mut quads {
            for (sum, v) in sums.iter_mut().zip(quad) {
                let v = simd.load(v);
                *sum = simd.add(*sum, simd.sub(v, v));
            }
        }
        for (sum, v) in sums.iter_mut().zip(quads.remainder()) {
            let v = simd.load(v);
            *sum = simd.add(*sum, simd.sub(v, v));
        }
    }
    let sum = simd.add(simd.add(sums[0], sums[1]), simd.add(sums[2], sums[3]));
    let mut lanes = [0.0; LANES];
    simd.store(&mut lanes, sum);
    if !lanes.iter().any(|s| s.is_nan()) {
        return;
    }
    for g in groups {
        let mut sum = simd.zero();
        let values = y.x[g * n..(g + 1) * n]
            .iter()
            .chain(&y.p[g * n..(g + 1) * n])
            .chain(std::iter::once(&y.z[g]));
        for v in values {
            let v = simd.load(v);
            sum = simd.add(sum, simd.sub(v, v));
        }
        simd.store(&mut lanes, sum);
        let group = (g * LANES).min(members)..((g + 1) * LANES).min(members);
        for (step, s) in nonfinite[group].iter_mut().zip(lanes) {
            if step.is_none() && s.is_nan() {
                *step = Some(k as u64 + 1);
            }
        }
    }
}
