//! The recording loop of the fast engine, the reference's (`super::super::reference`) on a
//! block of lanes: at step k the time functions at t_j = (k + offset_j) h once for the
//! block, the method's base steps in order, the first step after which a lane's
//! y = [x; p; z] is not finite, and at record points y and H(k h, y) per member; H at the
//! start and at the last record point as totals.

use super::lane_flows::{FlowScratch, Group, constant_decay, hamiltonian, herglotz, strang};
use super::lane_system::LaneSystem;
use super::schedule::{BaseStep, Schedule};
use super::time_values::{DampingTime, TimeValues};
use crate::kernels::lanes::{LANES, Lanes, Simd};
use crate::plan::{MemberResult, StepGrid};

/// Members laid out in groups of lanes, with their results' first sample.
#[derive(Debug, Clone)]
pub struct LaneBlock {
    /// Members; lanes past them repeat the first member and are dropped.
    pub members: usize,
    pub system: LaneSystem,
    pub groups: Vec<Group>,
    pub results: Vec<MemberResult>,
}

/// Integrates `block` through `grid` by `schedule` and returns its members' results.
#[inline(always)]
pub fn integrate<S: Simd>(
    simd: S,
    block: LaneBlock,
    schedule: &Schedule,
    grid: &StepGrid,
) -> Vec<MemberResult> {
    let LaneBlock {
        members,
        system,
        mut groups,
        mut results,
    } = block;
    let h = grid.h;
    let mut work = FlowScratch::new(system.n);
    // φ_C(τ/2) factors per base step and group when C is constant (the same every step).
    let decays: Vec<Option<Vec<Lanes>>> = schedule
        .steps
        .iter()
        .map(|step| match (step, system.time.damping()) {
            (BaseStep::Strang { gamma, .. }, DampingTime::Constant) => Some(
                (0..groups.len())
                    .map(|g| constant_decay(&system, g, 0.5 * (gamma * h)))
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    let mut at = vec![TimeValues::default(); schedule.offsets.len()];
    let mut at_record = TimeValues::default();
    let mut last: Vec<f64> = results.iter().map(|r| r.channels[0][0]).collect();
    let mut record_points = grid.record_points().into_iter().peekable();
    for k in 0..grid.steps {
        for (values, &offset) in at.iter_mut().zip(&schedule.offsets) {
            system.time.at((k as f64 + offset) * h, values);
        }
        let record = record_points.peek() == Some(&(k + 1));
        if record {
            record_points.next();
            system.time.at((k + 1) as f64 * h, &mut at_record);
        }
        for (g, y) in groups.iter_mut().enumerate() {
            for (step, decay) in schedule.steps.iter().zip(&decays) {
                match *step {
                    BaseStep::Strang { gamma, points } => {
                        let at = [&at[points[0]], &at[points[1]]];
                        let decay = decay.as_ref().map(|d| &d[g]);
                        strang(simd, &system, g, at, gamma * h, decay, y, &mut work);
                    }
                    BaseStep::Herglotz { gamma, points } => {
                        let at = [&at[points[0]], &at[points[1]], &at[points[2]]];
                        herglotz(simd, &system, g, at, gamma * h, y, &mut work);
                    }
                }
            }
            let lanes = &mut results[(g * LANES).min(members)..((g + 1) * LANES).min(members)];
            flag_nonfinite(simd, y, k, lanes);
            if record {
                let energy = hamiltonian(simd, &system, g, &at_record, y, &mut work);
                for (l, result) in lanes.iter_mut().enumerate() {
                    push_state(y, l, &mut result.trajectory);
                    result.channels[0].push(energy[l]);
                    last[g * LANES + l] = energy[l];
                }
            }
        }
    }
    for (i, result) in results.iter_mut().enumerate() {
        result.final_state.clear();
        push_state(&groups[i / LANES], i % LANES, &mut result.final_state);
        result.totals = vec![result.channels[0][0], last[i]];
    }
    results
}

/// Flags step k + 1 in the results of `lanes` (the group's members) where y stopped being
/// finite: v − v is NaN exactly where v is not finite, and their sum over y is NaN where
/// any is.
#[inline(always)]
fn flag_nonfinite<S: Simd>(simd: S, y: &Group, k: usize, lanes: &mut [MemberResult]) {
    let mut sum = simd.zero();
    for v in y.x.iter().chain(&y.p).chain(std::iter::once(&y.z)) {
        let v = simd.load(v);
        sum = simd.add(sum, simd.sub(v, v));
    }
    let mut sums = [0.0; LANES];
    simd.store(&mut sums, sum);
    if !sums.iter().any(|s| s.is_nan()) {
        return;
    }
    for (result, s) in lanes.iter_mut().zip(sums) {
        if result.nonfinite_step.is_none() && s.is_nan() {
            result.nonfinite_step = Some(k as u64 + 1);
        }
    }
}

/// Appends lane l's [x; p; z] to `out`.
fn push_state(y: &Group, l: usize, out: &mut Vec<f64>) {
    out.extend(y.x.iter().map(|x| x[l]));
    out.extend(y.p.iter().map(|p| p[l]));
    out.push(y.z[l]);
}
