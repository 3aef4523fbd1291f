//! The CPU reference backend: every member integrated in f64, members spread over all cores
//! with rayon. Members are independent, so the results do not depend on the thread count.

use rayon::prelude::*;

use super::collocation_step::CollocationStepper;
use crate::compensated::CompensatedSum;
use crate::error::Result;
use crate::plan::{Member, Plan};
use crate::results::{EnergyTotals, MemberResult, Results};

/// Integrates one member through the whole plan, recording at the plan's cadence.
pub fn integrate_member(plan: &Plan, member: &Member) -> Result<MemberResult> {
    let stepper = CollocationStepper::new(plan, member)?;
    let mut scratch = stepper.scratch();
    let (n, s, m) = (
        member.system.states(),
        plan.scheme.stages,
        member.system.inputs(),
    );
    let mut x: Vec<f64> = member.x0.iter().copied().collect();
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
        let energy = stepper.step(
            &mut x,
            &mut carry,
            plan.inputs.step(k),
            &mut y,
            &mut scratch,
        );
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
    Ok(result)
}

/// Runs every member of the plan on all cores; member order is preserved.
pub fn run(plan: &Plan) -> Result<Results> {
    let members = plan
        .members
        .par_iter()
        .map(|member| integrate_member(plan, member))
        .collect::<Result<Vec<_>>>()?;
    let first = &plan.members[0].system;
    Ok(Results {
        backend: "cpu".into(),
        precision: "f64".into(),
        scheme: plan.scheme.label(),
        h: plan.h,
        steps: plan.steps,
        states: first.states(),
        stages: plan.scheme.stages,
        inputs: first.inputs(),
        sample_times: plan.sample_times(),
        members,
    })
}
