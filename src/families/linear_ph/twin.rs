//! The CPU paths of the linear-PH family: the twin of its kernels ([`linear_ph_step`], the
//! same step from the same step operators, in f64, with the same loop shape), the reference
//! stepper that solves the stage equations at every step, and the recording loop both share.

use crate::compensated::{CompensatedSum, kahan_add};
use crate::error::Result;
use crate::kernels::family::running_max;
use crate::linear_ph::{CollocationStepper, StepOperators, StepScratch};
use crate::linear_ph::{LinearPhMember, LinearPhPlan, StepEnergy};
use crate::plan::{MemberResult, RecordSpec, Recording, SharedStream, StepGrid};

/// The CPU twin of the kernels: one step x ← x + Δv with v = [x; u]; y ← Y v; energies as in
/// the kernel: stored = δᵀ Q (x + δ/2), port = h yᵀ u, dissipated = h ‖W v‖².
pub fn linear_ph_step(
    ops: &StepOperators,
    h: f64,
    x: &mut [f64],
    carry: &mut [f64],
    u: &[f64],
    y: &mut [f64],
    delta: &mut [f64],
) -> StepEnergy {
    let (n, p) = (ops.states, ops.width());
    let v = |c: usize| if c < n { x[c] } else { u[c - n] };
    for (r, d) in delta.iter_mut().enumerate() {
        *d = (0..p).map(|c| ops.delta[r * p + c] * v(c)).sum();
    }
    let mut port = 0.0;
    for (row, y_row) in y.iter_mut().enumerate() {
        *y_row = (0..p).map(|c| ops.output[row * p + c] * v(c)).sum();
        port += *y_row * u[row];
    }
    let mut dissipated = 0.0;
    for row in 0..ops.stages * ops.rank {
        let w: f64 = (0..p).map(|c| ops.dissipation[row * p + c] * v(c)).sum();
        dissipated += w * w;
    }
    let mut stored = 0.0;
    for r in 0..n {
        let q_mid: f64 = (0..n)
            .map(|c| ops.q[r * n + c] * (x[c] + 0.5 * delta[c]))
            .sum();
        stored += delta[r] * q_mid;
    }
    for ((x_r, carry_r), &d) in x.iter_mut().zip(carry.iter_mut()).zip(delta.iter()) {
        kahan_add(x_r, carry_r, d);
    }
    let (port, dissipated) = (h * port, h * dissipated);
    StepEnergy {
        stored,
        supplied: port - dissipated,
        port,
        dissipated,
    }
}

/// Something that advances one linear-PH member by one step.
pub trait MemberStepper {
    /// x ← x_{k+1} (Kahan-compensated through `carry`), y ← y^k; returns the step energies.
    fn step(&mut self, x: &mut [f64], carry: &mut [f64], u: &[f64], y: &mut [f64]) -> StepEnergy;
}

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

impl MemberStepper for ReferenceStepper {
    fn step(&mut self, x: &mut [f64], carry: &mut [f64], u: &[f64], y: &mut [f64]) -> StepEnergy {
        self.stepper.step(x, carry, u, y, &mut self.scratch)
    }
}

/// The twin of the GPU kernel: applies the step operators with [`linear_ph_step`].
pub struct OperatorStepper {
    ops: StepOperators,
    h: f64,
    delta: Vec<f64>,
}

impl OperatorStepper {
    pub fn new(plan: &LinearPhPlan, member: &LinearPhMember) -> Result<Self> {
        let ops = plan.kernel_operators(member, Recording::default())?;
        let delta = vec![0.0; ops.states];
        Ok(OperatorStepper {
            ops,
            h: plan.grid.h,
            delta,
        })
    }
}

impl MemberStepper for OperatorStepper {
    fn step(&mut self, x: &mut [f64], carry: &mut [f64], u: &[f64], y: &mut [f64]) -> StepEnergy {
        linear_ph_step(&self.ops, self.h, x, carry, u, y, &mut self.delta)
    }
}

/// Integrates one member from x0 through the whole grid with `stepper`, recording at the
/// grid's cadence what `recording` switches on: trajectory samples, the `energy` channel
/// (window sums, Neumaier) with the compensated totals and the worst per-step residual, the
/// `outputs` channel. (The stepper computes every step quantity either way; the fast engine,
/// `families::linear_ph::fast`, skips what is not recorded.)
pub fn record_member(
    grid: &StepGrid,
    inputs: &SharedStream,
    spec: &RecordSpec,
    recording: Recording,
    x0: &[f64],
    stepper: &mut impl MemberStepper,
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
    let mut totals = [CompensatedSum::default(); 4];
    let mut window = [CompensatedSum::default(); 4];
    let mut max_abs_residual = 0.0_f64;
    let mut next_record = record_points.iter().copied().peekable();
    for k in 0..grid.steps {
        let energy = stepper.step(&mut x, &mut carry, inputs.step(k, &mut scratch), &mut y);
        let parts = energy.parts();
        for (sum, value) in totals
            .iter_mut()
            .chain(window.iter_mut())
            .zip(parts.iter().cycle())
        {
            sum.add(*value);
        }
        max_abs_residual = running_max(max_abs_residual, energy.residual().abs());
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
            if recording.energy {
                result.channels[0].extend(window.iter().map(|w| w.value()));
            }
            if recording.outputs {
                result.channels[outputs_channel].extend_from_slice(&y);
            }
            window = [CompensatedSum::default(); 4];
        }
    }
    result.final_state = x;
    if recording.energy {
        result.totals = totals.iter().map(|t| t.value()).collect();
        result.totals.push(max_abs_residual);
    }
    result
}
