//! The port-Hamiltonian family as the engine runs it: members, records and the reference
//! integrator (Gauss collocation, [`super::gauss_step`], or the energy-preserving
//! collocation, [`super::energy_preserving_step`], with Newton stage solves). Its GPU
//! kernel and twin ([`super::gpu`]) and its fast CPU engine ([`super::fast`], the same steps
//! on blocks of members side by side, what `--backend cpu` runs) run Gauss.

use super::energy_preserving_step::EnergyPreservingStepper;
use super::gauss_step::{GaussStepper, StepEnergies, StepFailure};
use super::method::PortHamiltonianMethod;
use super::plan::{PortHamiltonianMember, PortHamiltonianPlan};
use crate::error::{Error, Result};
use crate::kernels::family::Family;
use crate::plan::{EnergyBalance, MemberResult, RecordSpec, SharedStream, StepGrid};
use crate::tableau::ProjectionRule;

/// The stepper of a plan's method, one member at a time.
enum Stepper<'a> {
    Gauss(GaussStepper<'a>),
    EnergyPreserving(EnergyPreservingStepper<'a>),
}

impl Stepper<'_> {
    /// One step of x (with its Kahan `carry`) under stage inputs `u`, writing the outputs
    /// `y`: the step's [stored, supplied, port, dissipated].
    fn step(
        &mut self,
        x: &mut [f64],
        carry: &mut [f64],
        u: &[f64],
        y: &mut [f64],
    ) -> std::result::Result<StepEnergies, StepFailure> {
        match self {
            Stepper::Gauss(stepper) => stepper.step(x, carry, u, y),
            Stepper::EnergyPreserving(stepper) => stepper.step(x, carry, u, y),
        }
    }
}

impl PortHamiltonianPlan {
    /// The stepper of `member` under the plan's method; an energy-preserving method whose
    /// model was compiled without its projected tapes is an error naming `scheme.family`.
    fn stepper(&self, member: &PortHamiltonianMember) -> Result<Stepper<'_>> {
        Ok(match &self.method {
            PortHamiltonianMethod::Gauss => Stepper::Gauss(GaussStepper::new(
                &self.model,
                &self.scheme,
                self.grid.h,
                &member.parameters,
                self.newton,
            )),
            PortHamiltonianMethod::EnergyPreserving(rule) => {
                let tapes = self.model.projected.as_ref().ok_or_else(|| {
                    Error::invalid(
                        "scheme.family",
                        "energy-preserving needs the model compiled with its projected tapes (ExpressionModel::compile_projected); this plan's model has none",
                    )
                })?;
                Stepper::EnergyPreserving(EnergyPreservingStepper::new(
                    &self.model,
                    tapes,
                    rule,
                    &self.scheme,
                    self.grid.h,
                    &member.parameters,
                    self.newton,
                ))
            }
        })
    }

    /// Integrates `member` through the grid, recording at the grid's cadence what the plan
    /// records: x samples, the `energy` channel (window sums, Neumaier), the `outputs`
    /// channel, and the totals (compensated sums, the worst |stored − supplied|, and the
    /// step whose stage solve failed, 0 when none did). A failed step ends the member: its
    /// state is NaN from that step on and its non-finite step is that step.
    fn integrate(&self, member: &PortHamiltonianMember) -> Result<MemberResult> {
        let (n, m, s) = (self.model.n(), self.model.inputs, self.scheme.stages);
        let recording = self.recording;
        let mut stepper = self.stepper(member)?;
        let mut x = member.x0.clone();
        let mut carry = vec![0.0; n];
        let mut y = vec![0.0; s * m];
        let mut scratch = Vec::new();
        let record_points = self.grid.record_points();
        let mut result = MemberResult::with_capacity(self.record_spec(), record_points.len());
        self.record_start(member, &mut result);
        let outputs_channel = usize::from(recording.energy);
        let mut balance = EnergyBalance::default();
        let mut failed_step = 0;
        let mut next_record = record_points.iter().copied().peekable();
        for k in 0..self.grid.steps {
            let parts = if failed_step == 0 {
                let u = self.inputs.step(k, &mut scratch);
                match stepper.step(&mut x, &mut carry, u, &mut y) {
                    Ok(parts) => parts,
                    Err(StepFailure::NoConvergence(_) | StepFailure::NotFinite) => {
                        failed_step = k + 1;
                        result.nonfinite_step = Some(k as u64 + 1);
                        x.iter_mut().for_each(|v| *v = f64::NAN);
                        y.iter_mut().for_each(|v| *v = f64::NAN);
                        [f64::NAN; 4]
                    }
                }
            } else {
                [f64::NAN; 4]
            };
            balance.add(parts);
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
        result.totals = balance.totals();
        result.totals.push(failed_step as f64);
        Ok(result)
    }
}

impl Family for PortHamiltonianPlan {
    type Member = PortHamiltonianMember;
    type Kernel = Self;
    type Fast = PortHamiltonianPlan;

    fn name(&self) -> &'static str {
        "port-hamiltonian"
    }

    fn method_label(&self) -> String {
        self.method.label(&self.scheme)
    }

    fn grid(&self) -> &StepGrid {
        &self.grid
    }

    fn member_count(&self) -> usize {
        PortHamiltonianPlan::member_count(self)
    }

    fn states(&self) -> usize {
        self.model.n()
    }

    fn with_member_count(&self, count: usize) -> Result<Self> {
        let mut plan = self.clone();
        if let Some(spec) = &mut plan.ensemble {
            spec.members = count;
        }
        Ok(plan)
    }

    fn member(&self, index: usize) -> Result<PortHamiltonianMember> {
        PortHamiltonianPlan::member(self, index)
    }

    fn record_spec(&self) -> &RecordSpec {
        PortHamiltonianPlan::record_spec(self)
    }

    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        let model = &self.model;
        let mut scheme = serde_json::json!({
            "label": self.method.label(&self.scheme),
            "family": self.method.name(),
            "stages": self.scheme.stages,
            "order": self.scheme.order,
            "newton": {
                "tolerance": self.newton.tolerance,
                "max_iterations": self.newton.max_iterations,
            },
        });
        if let PortHamiltonianMethod::EnergyPreserving(rule) = &self.method {
            scheme["quadrature"] = rule.quadrature.into();
            scheme["exact_for_polynomial_H_of_degree"] =
                ProjectionRule::exact_degree(rule.stages, rule.quadrature).into();
        }
        let serde_json::Value::Object(map) = serde_json::json!({
            "scheme": scheme,
            "states": model.n(),
            "state_names": model.states,
            "parameters": model.parameters.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            "inputs": model.inputs,
        }) else {
            unreachable!("a JSON object literal")
        };
        map
    }

    fn record_start(&self, member: &PortHamiltonianMember, out: &mut MemberResult) {
        if self.recording.trajectory {
            out.trajectory.extend_from_slice(&member.x0);
        }
    }

    fn reference(&self, member: &PortHamiltonianMember) -> Result<MemberResult> {
        self.integrate(member)
    }

    fn shared_stream(&self) -> &SharedStream {
        &self.inputs
    }

    /// Refuses an input that is not finite at a stage time (a pass over the stream).
    fn check_stream(&self) -> Result<()> {
        self.inputs.max_abs().map(|_| ()).map_err(|(step, point, channel, value)| {
            Error::invalid(
                format!("input[{channel}]"),
                format!(
                    "is {value} at t = (k + c_i) h with k = {step}, stage {}; inputs must be finite",
                    point + 1
                ),
            )
        })
    }

    fn gpu_kernel(&self) -> Option<&Self> {
        Some(self)
    }

    fn fast_engine(&self) -> Option<&PortHamiltonianPlan> {
        self.fast_engine_runs().then_some(self)
    }
}
