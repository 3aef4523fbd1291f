//! The reference integrator of the linear-PH family: the stage equations of Definition 1
//! solved at every step ([`ReferenceStepper`]) and its recording loop ([`record_member`]).

use crate::error::Result;
use crate::linear_ph::{CollocationStepper, StepScratch};
use crate::linear_ph::{LinearPhMember, LinearPhPlan, StepEnergy};
use crate::plan::{EnergyBalance, MemberResult, RecordSpec, Recording, SharedStream, StepGrid};

/// The reference stepper (stage solve at every step) with its work buffers.
pub struct ReferenceStepper {
    stepper: CollocationStepper,
    scratch: StepScratch,
}

impl ReferenceStepper {
    pub fn new(plan: &LinearPhPlan, member: &LinearPhMember) -> Result<Self> {
        let stepper = CollocationStepper::new(plan, member)?;
        let scratch = stepper.scratch();
        Ok(ReferenceStepper { stepper, scratch })
    }
}

impl ReferenceStepper {
    /// x ← x_{k+1} (Kahan-compensated through `carry`), y ← y^k; returns the step energies.
    fn step(&mut self, x: &mut [f64], carry: &mut [f64], u: &[f64], y: &mut [f64]) -> StepEnergy {
        self.stepper.step(x, carry, u, y, &mut self.scratch)
    }
}

/// Integrates one member from x0 through the whole grid with the reference `stepper`,
/// recording at the grid's cadence what `recording` switches on: trajectory samples, the
/// `energy` channel (window sums, Neumaier) with the compensated totals and the worst
/// per-step residual, the `outputs` channel. (The stepper computes every step quantity
/// either way; the kernels and the fast engine skip what is not recorded.)
pub fn record_member(
    grid: &StepGrid,
    inputs: &SharedStream,
    spec: &RecordSpec,
    recording: Recording,
    x0: &[f64],
    stepper: &mut ReferenceStepper,
) -> MemberResult {
    let n = x0.len();
    let mut x = x0.to_vec();
    let mut carry = vec![0.0; n];
    let mut y = vec![0.0; inputs.width()];
    let mut scratch = Vec::new();
    let record_points = grid.record_points();
    let mut result = MemberResult::with_capacity(spec, record_points.len());
    if recording.trajectory {
        result.trajectory.extend_from_slice(&x);
    }
    let outputs_channel = usize::from(recording.energy);
    let mut balance = EnergyBalance::default();
    let mut next_record = record_points.iter().copied().peekable();
    for k in 0..grid.steps {
        let energy = stepper.step(&mut x, &mut carry, inputs.step(k, &mut scratch), &mut y);
        balance.add(energy.parts());
        let energy_finite =
            energy.stored.is_finite() && energy.port.is_finite() && energy.dissipated.is_finite();
        let finite = (energy_finite || !recording.energy) && x.iter().all(|v| v.is_finite());
        if result.nonfinite_step.is_none() && !finite {
            result.nonfinite_step = Some(k as u64 + 1);
        }
        if next_record.peek() == Some(&(k + 1)) {
            next_record.next();
            if recording.trajectory {
                result.trajectory.extend_from_slice(&x);
            }
            let window = balance.take_window();
            if recording.energy {
                result.channels[0].extend(window);
            }
            if recording.outputs {
                result.channels[outputs_channel].extend_from_slice(&y);
            }
        }
    }
    result.final_state = x;
    if recording.energy {
        result.totals = balance.totals();
    }
    result
}
