//! The CPU backends: every member integrated in f64, members spread over all cores with
//! rayon. Members are independent, so results do not depend on the thread count.
//!
//! Two steppers share one recording loop: the reference stepper solves the stage equations
//! of Definition 1 at every step ([`CollocationStepper`]); the twin of the GPU kernel
//! applies the planner's step operators ([`operator_step`]).

use rayon::prelude::*;

use super::collocation_step::{CollocationStepper, StepScratch};
use super::operator_step::operator_step;
use crate::compensated::CompensatedSum;
use crate::error::Result;
use crate::plan::operators::StepOperators;
use crate::plan::{Member, Plan};
use crate::results::{
    EnergyTotals, HOST_RESULT_BUDGET, MemberResult, ResultSink, Results, StepEnergy,
    member_result_bytes, members_within,
};

/// Something that advances one member by one step.
pub trait MemberStepper {
    /// x ← x_{k+1} (Kahan-compensated through `carry`), y ← y^k; returns the step energies.
    fn step(&mut self, x: &mut [f64], carry: &mut [f64], u: &[f64], y: &mut [f64]) -> StepEnergy;
}

/// The reference stepper with its work buffers.
pub struct ReferenceStepper {
    stepper: CollocationStepper,
    scratch: StepScratch,
}

impl ReferenceStepper {
    pub fn new(plan: &Plan, member: &Member) -> Result<Self> {
        let stepper = CollocationStepper::new(plan, member)?;
        let scratch = stepper.scratch();
        Ok(ReferenceStepper { stepper, scratch })
    }
}

impl MemberStepper for ReferenceStepper {
    fn step(&mut self, x: &mut [f64], carry: &mut [f64], u: &[f64], y: &mut [f64]) -> StepEnergy {
        self.stepper.step(x, carry, u, y, &mut self.scratch)
    }
}

/// The twin of the GPU kernel: applies the step operators.
pub struct OperatorStepper {
    ops: StepOperators,
    h: f64,
    delta: Vec<f64>,
}

impl OperatorStepper {
    pub fn new(plan: &Plan, member: &Member) -> Result<Self> {
        let ops = StepOperators::new(plan, member)?;
        let delta = vec![0.0; ops.states];
        Ok(OperatorStepper {
            ops,
            h: plan.h,
            delta,
        })
    }
}

impl MemberStepper for OperatorStepper {
    fn step(&mut self, x: &mut [f64], carry: &mut [f64], u: &[f64], y: &mut [f64]) -> StepEnergy {
        operator_step(&self.ops, self.h, x, carry, u, y, &mut self.delta)
    }
}

/// Integrates one member from x0 through the whole plan with `stepper`, recording at the
/// plan's cadence.
pub fn record_member(plan: &Plan, x0: &[f64], stepper: &mut impl MemberStepper) -> MemberResult {
    let (n, s, m) = (x0.len(), plan.scheme.stages, plan.inputs.channels);
    let mut x = x0.to_vec();
    let mut carry = vec![0.0; n];
    let mut y = vec![0.0; s * m];
    let record_points = plan.record_points();
    let mut result = MemberResult {
        trajectory: Vec::with_capacity((record_points.len() + 1) * n),
        outputs: Vec::with_capacity(record_points.len() * s * m),
        window_energy: Vec::with_capacity(record_points.len()),
        ..Default::default()
    };
    result.trajectory.extend_from_slice(&x);
    let mut totals = [CompensatedSum::default(); 4];
    let mut window = [CompensatedSum::default(); 4];
    let mut max_abs_residual = 0.0_f64;
    let mut next_record = record_points.iter().copied().peekable();
    for k in 0..plan.steps {
        let energy = stepper.step(&mut x, &mut carry, plan.inputs.step(k), &mut y);
        let parts = [
            energy.stored,
            energy.supplied,
            energy.port,
            energy.dissipated,
        ];
        for (sum, value) in totals
            .iter_mut()
            .chain(window.iter_mut())
            .zip(parts.iter().cycle())
        {
            sum.add(*value);
        }
        max_abs_residual = max_abs_residual.max(energy.residual().abs());
        if next_record.peek() == Some(&(k + 1)) {
            next_record.next();
            result.trajectory.extend_from_slice(&x);
            result.outputs.extend_from_slice(&y);
            result.window_energy.push(window.map(|w| w.value()));
            window = [CompensatedSum::default(); 4];
        }
    }
    result.final_state = x;
    result.totals = EnergyTotals {
        stored: totals[0].value(),
        supplied: totals[1].value(),
        port: totals[2].value(),
        dissipated: totals[3].value(),
        max_abs_residual,
    };
    result
}

/// Integrates one member with the reference stepper.
pub fn integrate_member(plan: &Plan, member: &Member) -> Result<MemberResult> {
    let mut stepper = ReferenceStepper::new(plan, member)?;
    Ok(record_member(plan, member.x0.as_slice(), &mut stepper))
}

/// Integrates one member with the twin of the GPU kernel.
pub fn integrate_member_twin(plan: &Plan, member: &Member) -> Result<MemberResult> {
    let mut stepper = OperatorStepper::new(plan, member)?;
    Ok(record_member(plan, member.x0.as_slice(), &mut stepper))
}

/// Runs every member of the plan on all cores with the reference stepper.
pub fn run(plan: &Plan) -> Result<Results> {
    let mut members = Vec::with_capacity(plan.ensemble.len());
    run_into(plan, integrate_member, &mut members)?;
    Ok(plan.results("cpu", "f64", members))
}

/// Runs every member of the plan on all cores with the twin of the GPU kernel.
pub fn run_twin(plan: &Plan) -> Result<Results> {
    let mut members = Vec::with_capacity(plan.ensemble.len());
    run_into(plan, integrate_member_twin, &mut members)?;
    Ok(plan.results("cpu", "f64", members))
}

/// Streams the run into `sink` in chunks of members whose results fit the host budget.
pub fn run_into(
    plan: &Plan,
    integrate: fn(&Plan, &Member) -> Result<MemberResult>,
    sink: &mut dyn ResultSink,
) -> Result<()> {
    let prototype = &plan.ensemble.prototype().system;
    let per_member = member_result_bytes(
        prototype.states(),
        plan.scheme.stages,
        prototype.inputs(),
        plan.record_points().len(),
    );
    let chunk = members_within(HOST_RESULT_BUDGET, per_member).clamp(64, 1 << 16);
    let total = plan.ensemble.len();
    for first in (0..total).step_by(chunk) {
        let members = plan.ensemble.members(first..(first + chunk).min(total))?;
        let results = members
            .par_iter()
            .map(|member| integrate(plan, member))
            .collect::<Result<Vec<_>>>()?;
        let done = first + results.len();
        sink.accept(first, results)?;
        sink.progress((done * plan.steps) as u64);
    }
    Ok(())
}
