//! The variational family as the engine runs it: members, records and the reference solves
//! (marching for initial values, [`super::march`]; one banded Newton solve for boundary
//! values, [`super::bvp`]), member by member on all cores; its GPU kernels
//! ([`super::gpu`]) march initial-value problems of both orders and solve boundary-value
//! problems.

use super::bvp::{BoundarySolver, SolveFailure};
use super::plan::{MemberProblem, VariationalMember, VariationalPlan};
use crate::error::Result;
use crate::kernels::family::{Absent, Family};
use crate::plan::{MemberResult, RecordSpec, SharedStream, StepGrid};

/// Status codes in `totals.status`.
pub mod status {
    pub const OK: f64 = 0.0;
    pub const NO_CONVERGENCE: f64 = 1.0;
    pub const SINGULAR: f64 = 2.0;
    pub const NOT_FINITE: f64 = 3.0;
}

/// Running first, last and largest change of a conserved quantity.
#[derive(Debug, Clone, Copy)]
pub(super) struct Drift {
    pub(super) first: f64,
    pub(super) last: f64,
    max_change: f64,
}

impl Drift {
    pub(super) fn new() -> Self {
        Drift {
            first: f64::NAN,
            last: f64::NAN,
            max_change: 0.0,
        }
    }

    pub(super) fn add(&mut self, value: f64) {
        if self.first.is_nan() {
            self.first = value;
        }
        self.last = value;
        self.max_change = self.max_change.max((value - self.first).abs());
    }

    pub(super) fn totals(&self) -> [f64; 3] {
        [self.first, self.last, self.max_change]
    }
}

impl VariationalPlan {
    /// Index of a channel by name.
    pub(super) fn channel(&self, name: &str) -> Option<usize> {
        self.record_spec()
            .channels
            .iter()
            .position(|c| c.name == name)
    }

    fn boundary_value(
        &self,
        member: &VariationalMember,
        data: &super::bvp::BoundaryData,
    ) -> MemberResult {
        let model = &self.model;
        let d = model.d();
        let solver = BoundarySolver {
            model,
            rule: &self.rule,
            steps: self.grid.steps,
            newton: self.newton,
        };
        let records = self.grid.record_points();
        let mut result = MemberResult::with_capacity(self.record_spec(), records.len());
        let (path, multipliers, energy_channel, observables_channel, momentum_channel) = (
            self.channel("path"),
            self.channel("multipliers"),
            self.channel("energy"),
            self.channel("observables"),
            self.channel("momentum"),
        );
        let c = model.window_count() + model.holonomic_count();
        let observables_width = model.observables.n_outputs();
        let mut totals = vec![status::OK, 0.0, 0.0, 0.0, 0.0, 0.0];
        let mut energy = Drift::new();
        let mut momentum = Drift::new();
        match solver.solve(data, &member.parameters) {
            Ok(solution) => {
                totals[2] = solution.iterations as f64;
                totals[3] = solution.constraint_residual;
                totals[4] = solution.equation_residual;
                let quantities = self.path_quantities(
                    member,
                    &solution.path,
                    &solution.multipliers,
                    energy_channel.is_some(),
                    momentum_channel.is_some(),
                );
                totals[5] = quantities.action;
                let (energies, momenta, observables) = (
                    &quantities.energies,
                    &quantities.momenta,
                    &quantities.observables,
                );
                energies.iter().for_each(|&e| energy.add(e));
                momenta.iter().for_each(|&j| momentum.add(j));
                let push = |k: usize, result: &mut MemberResult| {
                    if let Some(ch) = path {
                        result.channels[ch].extend_from_slice(&solution.path[k]);
                    }
                    if let Some(ch) = multipliers {
                        result.channels[ch].extend_from_slice(&solution.multipliers[k]);
                    }
                    if k > 0
                        && let Some(ch) = energy_channel
                    {
                        result.channels[ch].push(energies[k - 1]);
                    }
                    if k > 0
                        && let Some(ch) = momentum_channel
                    {
                        result.channels[ch].push(momenta[k - 1]);
                    }
                    if let Some(ch) = observables_channel {
                        // Order 2: the window centred at k (from k = 0); order 1: the step
                        // ending at k.
                        let window = if model.order == 2 {
                            Some(k)
                        } else {
                            k.checked_sub(1)
                        };
                        if let Some(j) = window {
                            result.channels[ch].extend_from_slice(&observables[j]);
                        }
                    }
                };
                push(0, &mut result);
                for &k in &records {
                    push(k, &mut result);
                }
                result.final_state = solution.path[self.grid.steps].clone();
            }
            Err(failure) => {
                let (code, iterations) = match failure {
                    SolveFailure::NoConvergence { iterations, .. } => {
                        (status::NO_CONVERGENCE, iterations)
                    }
                    SolveFailure::Singular { iteration } => (status::SINGULAR, iteration),
                    SolveFailure::NotFinite { iteration } => (status::NOT_FINITE, iteration),
                };
                totals[0] = code;
                totals[1] = 1.0;
                totals[2] = iterations as f64;
                totals[3] = f64::NAN;
                totals[4] = f64::NAN;
                totals[5] = f64::NAN;
                result.nonfinite_step = Some(1);
                let nan = vec![f64::NAN; d];
                for _ in 0..=records.len() {
                    if let Some(ch) = path {
                        result.channels[ch].extend_from_slice(&nan);
                    }
                    if let Some(ch) = multipliers {
                        result.channels[ch].extend(std::iter::repeat_n(f64::NAN, c));
                    }
                }
                for ch in [energy_channel, momentum_channel].into_iter().flatten() {
                    result.channels[ch].extend(std::iter::repeat_n(f64::NAN, records.len()));
                }
                if let Some(ch) = observables_channel {
                    let rows = records.len() + usize::from(model.order == 2);
                    result.channels[ch]
                        .extend(std::iter::repeat_n(f64::NAN, rows * observables_width));
                }
                result.final_state = nan;
            }
        }
        result.totals = totals;
        if energy_channel.is_some() {
            result.totals.extend(energy.totals());
        }
        if momentum_channel.is_some() {
            result.totals.extend(momentum.totals());
        }
        result
    }
}

impl Family for VariationalPlan {
    type Member = VariationalMember;
    type Kernel = VariationalPlan;
    type Fast = Absent<VariationalMember>;

    fn name(&self) -> &'static str {
        "variational"
    }

    fn method_label(&self) -> String {
        format!(
            "{} ({})",
            self.rule.name.name(),
            if self.is_boundary_value() {
                "boundary-value"
            } else {
                "initial-value"
            }
        )
    }

    fn grid(&self) -> &StepGrid {
        &self.grid
    }

    fn member_count(&self) -> usize {
        VariationalPlan::member_count(self)
    }

    fn states(&self) -> usize {
        self.model.d()
    }

    fn with_member_count(&self, count: usize) -> Result<Self> {
        let mut plan = self.clone();
        if let Some(spec) = &mut plan.ensemble {
            spec.members = count;
        }
        Ok(plan)
    }

    fn member(&self, index: usize) -> Result<VariationalMember> {
        VariationalPlan::member(self, index)
    }

    fn record_spec(&self) -> &RecordSpec {
        VariationalPlan::record_spec(self)
    }

    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        let model = &self.model;
        let serde_json::Value::Object(map) = serde_json::json!({
            "scheme": {
                "label": self.method_label(),
                "family": "variational",
                "rule": self.rule.name.name(),
                "problem": if self.is_boundary_value() { "boundary-value" } else { "initial-value" },
                "newton": {
                    "tolerance": self.newton.tolerance,
                    "max_iterations": self.newton.max_iterations,
                },
            },
            "order": model.order,
            "coordinates": model.coordinates,
            "parameters": model.parameters.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            "constraints": {
                "holonomic": model.holonomic_indices.iter().map(|&i| &model.constraints[i]).collect::<Vec<_>>(),
                "higher_order": model.window_indices.iter().map(|&i| &model.constraints[i]).collect::<Vec<_>>(),
            },
            "status_codes": { "0": "ok", "1": "Newton did not converge", "2": "singular Newton matrix (the problem is not regular there)", "3": "not finite" },
        }) else {
            unreachable!("a JSON object literal")
        };
        map
    }

    /// The path's first row (q_0 is known for both kinds of problem; a boundary-value
    /// kernel overwrites it with NaN where its solve fails) and, for initial values with a
    /// symmetry, the momentum map's J_0 (order 2: a NaN place, which the kernel's start
    /// fills); for boundary values, NaN places for the first rows of the multipliers and
    /// (order 2) the observables, which the kernel's solve fills.
    fn record_start(&self, member: &VariationalMember, out: &mut MemberResult) {
        let q0 = match &member.problem {
            MemberProblem::InitialValue(data) => &data.q0,
            MemberProblem::BoundaryValue(data) => &data.start_q,
        };
        if let Some(c) = self.channel("path") {
            out.channels[c].extend_from_slice(q0);
        }
        if matches!(member.problem, MemberProblem::BoundaryValue(_)) {
            // Places for the first rows the solve gives (the GPU kernel's decode_final).
            if let Some(c) = self.channel("multipliers") {
                let width = self.model.window_count() + self.model.holonomic_count();
                out.channels[c].extend(std::iter::repeat_n(f64::NAN, width));
            }
            if self.model.order == 2
                && let Some(c) = self.channel("observables")
            {
                let width = self.model.observables.n_outputs();
                out.channels[c].extend(std::iter::repeat_n(f64::NAN, width));
            }
        }
        if let Some(c) = self.channel("momentum")
            && let MemberProblem::InitialValue(_) = &member.problem
        {
            if self.model.order == 2 {
                // The place of J_0, which the kernel's start gives (its decode_final).
                out.channels[c].push(f64::NAN);
            } else if let Some(j0) = self.start(member).and_then(|start| start.momentum_map) {
                out.channels[c].push(j0);
            }
        }
    }

    fn reference(&self, member: &VariationalMember) -> Result<MemberResult> {
        Ok(match &member.problem {
            MemberProblem::InitialValue(data) => self.initial_value(member, data),
            MemberProblem::BoundaryValue(data) => self.boundary_value(member, data),
        })
    }

    fn shared_stream(&self) -> &SharedStream {
        self.stream()
    }

    /// The kernel: initial-value problems of first-order Lagrangians marched
    /// ([`super::shape`]), of second-order Lagrangians started and marched
    /// ([`super::second_order`]), boundary-value problems solved whole
    /// ([`super::boundary`]), generalised forces evaluated in the first-order ones (their
    /// tape generated into the kernel, (h/2) f and its Jacobian added to the window terms as
    /// the reference adds them).
    fn gpu_kernel(&self) -> Option<&VariationalPlan> {
        Some(self)
    }

    fn fast_engine(&self) -> Option<&Absent<VariationalMember>> {
        None
    }
}
