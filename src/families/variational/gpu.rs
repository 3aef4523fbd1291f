//! The variational family's GPU kernel as the executor runs it ([`GpuKernel`]): the variant
//! of the run's [`VariationalShape`] (initial-value problems of first-order Lagrangians),
//! [`SecondOrderShape`] (of second-order ones, started in the kernel) or [`BoundaryShape`]
//! (boundary-value problems, whole paths per invocation), the chunk's packing (θ per
//! member; for first-order initial values the state q_0, p_0 = ∂L/∂q̇(q_0, q̇_0, 0), the
//! guess h q̇_0, |φ_h(q_0)| and the momentum map J_0 evaluated on the host as the reference
//! starts from them; for second-order ones q_0, the data q̇, q̈, q⃛ and |φ_h(q_0)|), the
//! decoding of records, final states and totals, and the CPU twins
//! ([`variational_step_twin`], [`variational_second_order_twin`],
//! [`variational_boundary_twin`]).

use super::boundary::BoundaryShape;
use super::boundary_twin::variational_boundary_twin;
use super::ivp::Marcher;
use super::plan::{MemberProblem, VariationalMember, VariationalPlan};
use super::second_order::SecondOrderShape;
use super::second_order_twin::variational_second_order_twin;
use super::shape::VariationalShape;
use super::twin::variational_step_twin;
use crate::error::{Error, Result};
use crate::kernels::family::{GpuKernel, KernelChunk, KernelSource};
use crate::kernels::layout::MemberView;
use crate::kernels::twin::TwinBindings;
use crate::plan::MemberResult;

/// Where an initial-value member starts, as the reference marcher starts it.
pub(super) struct Start {
    /// p_0 = ∂L/∂q̇(q_0, q̇_0, 0).
    pub momentum: Vec<f64>,
    /// max |φ_h(q_0, 0)|.
    pub residual: f64,
    /// J_0 = p_0 · ξ(q_0), with a symmetry.
    pub momentum_map: Option<f64>,
}

impl VariationalPlan {
    /// The start of an initial-value member (`None` for a boundary-value one).
    pub(super) fn start(&self, member: &VariationalMember) -> Option<Start> {
        let MemberProblem::InitialValue(data) = &member.problem else {
            return None;
        };
        let (q0, qd0) = (&data.q0, &data.qd0);
        let mut marcher = Marcher::new(&self.model, &self.rule, &member.parameters, self.newton);
        let momentum = marcher.initial_momentum(q0, qd0, 0.0);
        let mut xi = Vec::new();
        let momentum_map = marcher
            .generator(q0, &mut xi)
            .then(|| momentum.iter().zip(&xi).map(|(a, b)| a * b).sum());
        Some(Start {
            residual: marcher.point_residual(q0, 0.0),
            momentum,
            momentum_map,
        })
    }

    /// Index of a channel by name.
    fn channel_index(&self, name: &str) -> Option<usize> {
        self.record_spec()
            .channels
            .iter()
            .position(|c| c.name == name)
    }
}

/// 2⁻¹⁰⁰, the `tiny` constant.
pub(super) const TINY_FACTOR: f64 = 7.888609052210118e-31;

/// Drift::new().add(value): (first, last, largest change) after one value.
fn drift_of(value: f64) -> [f64; 3] {
    let first = value;
    [first, value, 0.0_f64.max((value - first).abs())]
}

impl VariationalPlan {
    /// The final state, the totals in the reference's order (the status code, the failed
    /// step, the Newton iterations, the residuals, the action, the energy's drift, the
    /// momentum map's) and the
    /// first row of the path, multipliers and (order 2) observables, which only the solve
    /// knows ([`Family::record_start`] holds their places).
    ///
    /// [`Family::record_start`]: crate::kernels::Family::record_start
    fn decode_boundary_final(&self, state: &MemberView, out: &mut MemberResult) {
        out.final_state.clear();
        state.extend_into("q", &mut out.final_state);
        out.totals = [
            "code",
            "status",
            "iterations",
            "constraint_residual",
            "equation_residual",
            "action",
        ]
        .iter()
        .map(|name| state.get(name, 0))
        .collect();
        if self.channel_index("energy").is_some() {
            state.extend_into("energy_drift", &mut out.totals);
        }
        if self.channel_index("momentum").is_some() {
            state.extend_into("momentum_drift", &mut out.totals);
        }
        let mut first_row = |channel: &str, field: &str| {
            if let Some(c) = self.channel_index(channel) {
                let mut values = Vec::new();
                state.extend_into(field, &mut values);
                out.channels[c][..values.len()].copy_from_slice(&values);
            }
        };
        first_row("path", "start_path");
        first_row("multipliers", "start_multipliers");
        if self.model.order == 2 {
            first_row("observables", "start_observables");
        }
    }
}

impl VariationalPlan {
    /// The chunk of a second-order initial-value plan: θ and q̇, q̈, q⃛ at t = 0 per member;
    /// the state q_0 with zero carries, max |φ_h(q_0, 0)| (as the reference starts its
    /// maximum), NaN multipliers, energy and J_0, the drifts with no first value yet; the
    /// kernel's start fills the rest.
    fn second_order_chunk(&self, members: &[VariationalMember]) -> Result<KernelChunk> {
        let shape = SecondOrderShape::of(self)?;
        let kernel = shape.kernel();
        let mut data = Vec::with_capacity(members.len());
        for member in members {
            let MemberProblem::InitialValue(initial) = &member.problem else {
                return Err(Error::invalid(
                    "--backend",
                    "the variational GPU kernel marches initial-value members only",
                ));
            };
            let mut marcher =
                Marcher::new(&self.model, &self.rule, &member.parameters, self.newton);
            data.push((initial, marcher.point_residual(&initial.q0, 0.0)));
        }
        let params = kernel
            .params
            .pack(members.len(), |i, field, out| match field {
                "theta" => {
                    out[..members[i].parameters.len()].copy_from_slice(&members[i].parameters)
                }
                "data" => {
                    let (initial, _) = data[i];
                    for (k, values) in [&initial.qd0, &initial.qdd0, &initial.qddd0]
                        .into_iter()
                        .enumerate()
                    {
                        out[k * shape.d..(k + 1) * shape.d].copy_from_slice(values);
                    }
                }
                _ => {}
            });
        let state = kernel.state.pack(members.len(), |i, field, out| {
            let (initial, residual) = data[i];
            match field {
                "q" => out.copy_from_slice(&initial.q0),
                "multipliers" | "step_energy" | "start_momentum" | "parts" => out.fill(f64::NAN),
                "constraint_residual" => out[0] = residual,
                // Drift::new(): no first value yet (no momentum drift without a symmetry).
                "energy_drift" | "momentum_drift" if !out.is_empty() => {
                    out.copy_from_slice(&[f64::NAN, f64::NAN, 0.0]);
                }
                // The carries, the march's state, code, iterations, equation residual,
                // status: 0.
                _ => {}
            }
        });
        Ok(KernelChunk {
            kernel,
            params,
            state,
        })
    }
}

impl GpuKernel for VariationalPlan {
    type Member = VariationalMember;

    fn kernel_bound(&self) -> Result<KernelSource> {
        if self.is_boundary_value() {
            return Ok(BoundaryShape::of(self)?.kernel());
        }
        if self.model.order == 2 {
            return Ok(SecondOrderShape::of(self)?.kernel());
        }
        Ok(VariationalShape::of(self)?.kernel())
    }

    fn kernel_chunk(&self, members: &[VariationalMember]) -> Result<KernelChunk> {
        if self.is_boundary_value() {
            let shape = BoundaryShape::of(self)?;
            let kernel = shape.kernel();
            let mut problems = Vec::with_capacity(members.len());
            for member in members {
                let MemberProblem::BoundaryValue(data) = &member.problem else {
                    return Err(Error::invalid(
                        "--backend",
                        "a boundary-value plan with an initial-value member",
                    ));
                };
                problems.push(data);
            }
            let params = kernel.params.pack(members.len(), |i, field, out| {
                shape.pack(&members[i].parameters, problems[i], field, out);
            });
            // Written by the kernel's solve before anything reads it.
            let state = kernel.state.pack(members.len(), |_, _, _| {});
            return Ok(KernelChunk {
                kernel,
                params,
                state,
            });
        }
        if self.model.order == 2 {
            return self.second_order_chunk(members);
        }
        let shape = VariationalShape::of(self)?;
        let kernel = shape.kernel();
        let h = self.grid.h;
        let mut starts = Vec::with_capacity(members.len());
        for member in members {
            let start = self.start(member).ok_or_else(|| {
                Error::invalid(
                    "--backend",
                    "the variational GPU kernel marches initial-value members only",
                )
            })?;
            starts.push(start);
        }
        let params = kernel.params.pack(members.len(), |i, field, out| {
            if field == "theta" {
                out[..members[i].parameters.len()].copy_from_slice(&members[i].parameters);
            }
        });
        let state = kernel.state.pack(members.len(), |i, field, out| {
            let MemberProblem::InitialValue(data) = &members[i].problem else {
                unreachable!("checked above: initial-value members only");
            };
            let (q0, qd0) = (&data.q0, &data.qd0);
            let start = &starts[i];
            match field {
                "q" => out.copy_from_slice(q0),
                "p" => out.copy_from_slice(&start.momentum),
                "guess" => {
                    for (o, v) in out.iter_mut().zip(qd0) {
                        *o = h * v;
                    }
                }
                "multipliers" | "step_energy" => out.fill(f64::NAN),
                "constraint_residual" => out[0] = start.residual,
                // Drift::new(): no first value yet.
                "energy_drift" => out.copy_from_slice(&[f64::NAN, f64::NAN, 0.0]),
                "momentum_drift" => {
                    if let Some(j0) = start.momentum_map {
                        out.copy_from_slice(&drift_of(j0));
                    }
                }
                // carry, code, iterations, equation residual, status: 0.
                _ => {}
            }
        });
        Ok(KernelChunk {
            kernel,
            params,
            state,
        })
    }

    /// h, the Newton tolerance, two NaNs, and 2⁻¹⁰⁰, from which the kernel builds
    /// f64::MIN_POSITIVE = 2⁻¹⁰²² (the floor of the equation residual's scale) by exact
    /// products: f32 holds 2⁻¹⁰⁰ but not 2⁻¹⁰²².
    fn constants(&self) -> Vec<f64> {
        if self.is_boundary_value() {
            // kernel_bound has accepted the plan before the constants are asked for.
            return BoundaryShape::of(self).map_or_else(
                |_| Vec::new(),
                |shape| shape.constants(self.grid.h, self.newton.tolerance),
            );
        }
        vec![
            self.grid.h,
            self.newton.tolerance,
            f64::NAN,
            f64::NAN,
            TINY_FACTOR,
        ]
    }

    fn decode_record(&self, record: &MemberView, out: &mut MemberResult) {
        for name in ["path", "multipliers", "energy", "momentum", "observables"] {
            if let Some(c) = self.channel_index(name) {
                record.extend_into(name, &mut out.channels[c]);
            }
        }
    }

    /// q, and the totals in the reference's order: the status code, the failed step, the
    /// Newton iterations, the residual maxima, the energy's drift, the momentum map's.
    fn decode_final(&self, state: &MemberView, out: &mut MemberResult) {
        if self.is_boundary_value() {
            self.decode_boundary_final(state, out);
            return;
        }
        out.final_state.clear();
        state.extend_into("q", &mut out.final_state);
        out.totals = [
            "code",
            "status",
            "iterations",
            "constraint_residual",
            "equation_residual",
        ]
        .iter()
        .map(|name| state.get(name, 0))
        .collect();
        if self.channel_index("energy").is_some() {
            state.extend_into("energy_drift", &mut out.totals);
        }
        if let Some(c) = self.channel_index("momentum") {
            state.extend_into("momentum_drift", &mut out.totals);
            if self.model.order == 2 {
                // J_0 comes from the kernel's start (Family::record_start holds its place).
                out.channels[c][0] = state.get("start_momentum", 0);
            }
        }
    }

    fn twin(&self, kernel: &KernelSource, bindings: &TwinBindings, member: usize) {
        if self.is_boundary_value() {
            let shape = BoundaryShape::of(self)
                .expect("the executor runs a twin only after kernel_bound accepted the plan");
            variational_boundary_twin(&shape, &self.model, kernel, bindings, member);
            return;
        }
        if self.model.order == 2 {
            let shape = SecondOrderShape::of(self)
                .expect("the executor runs a twin only after kernel_bound accepted the plan");
            variational_second_order_twin(&shape, &self.model, kernel, bindings, member);
            return;
        }
        let shape = VariationalShape::of(self)
            .expect("the executor runs a twin only after kernel_bound accepted the plan");
        variational_step_twin(&shape, &self.model, kernel, bindings, member);
    }
}
