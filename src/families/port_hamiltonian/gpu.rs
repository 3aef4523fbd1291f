//! The port-Hamiltonian family's GPU kernel as the executor runs it ([`GpuKernel`]): the
//! variant of the run's [`PortHamiltonianShape`], the chunk's packing (θ per member; the
//! state x0 with H(x0) evaluated on the host by the energy tape, zero carry, sums and
//! status), the decoding of records and final states, and the CPU twin
//! ([`port_hamiltonian_step_twin`]).

use super::plan::{PortHamiltonianMember, PortHamiltonianPlan};
use super::shape::PortHamiltonianShape;
use super::twin::port_hamiltonian_step_twin;
use crate::error::Result;
use crate::kernels::energy_sums::decode_energy_totals;
use crate::kernels::family::{GpuKernel, KernelChunk, KernelSource};
use crate::kernels::layout::MemberView;
use crate::kernels::twin::TwinBindings;
use crate::plan::MemberResult;

impl PortHamiltonianPlan {
    /// H(x0) of `member`, by the energy tape (the value the reference starts from).
    fn initial_energy(&self, member: &PortHamiltonianMember) -> f64 {
        let vars: Vec<f64> = member
            .x0
            .iter()
            .chain(&member.parameters)
            .copied()
            .collect();
        let mut out = [0.0];
        self.model.energy.eval(&vars, &mut out, &mut Vec::new());
        out[0]
    }
}

impl GpuKernel for PortHamiltonianPlan {
    type Member = PortHamiltonianMember;

    fn kernel_bound(&self) -> Result<KernelSource> {
        Ok(PortHamiltonianShape::of(self)?.kernel())
    }

    fn kernel_chunk(&self, members: &[PortHamiltonianMember]) -> Result<KernelChunk> {
        let kernel = PortHamiltonianShape::of(self)?.kernel();
        let params = kernel.params.pack(members.len(), |i, field, out| {
            if field == "theta" {
                out[..members[i].parameters.len()].copy_from_slice(&members[i].parameters);
            }
        });
        let state = kernel
            .state
            .pack(members.len(), |i, field, out| match field {
                "x" => out.copy_from_slice(&members[i].x0),
                "energy" => out[0] = self.initial_energy(&members[i]),
                // carry, energy sums and status: 0.
                _ => {}
            });
        Ok(KernelChunk {
            kernel,
            params,
            state,
        })
    }

    /// h, A (row-major), b, the Newton tolerance, two NaNs.
    fn constants(&self) -> Vec<f64> {
        let mut values = vec![self.grid.h];
        values.extend(self.scheme.a_row_major());
        values.extend_from_slice(&self.scheme.b);
        values.push(self.newton.tolerance);
        values.extend([f64::NAN; 2]);
        values
    }

    fn decode_record(&self, record: &MemberView, out: &mut MemberResult) {
        record.extend_into("x", &mut out.trajectory);
        if self.recording.energy {
            record.extend_into("energy", &mut out.channels[0]);
        }
        if self.recording.outputs {
            let channel = usize::from(self.recording.energy);
            record.extend_into("y", &mut out.channels[channel]);
        }
    }

    /// x, and the totals: the energy balance's, then the step whose solve failed (the
    /// status).
    fn decode_final(&self, state: &MemberView, out: &mut MemberResult) {
        out.final_state.clear();
        state.extend_into("x", &mut out.final_state);
        out.totals = decode_energy_totals(state);
        out.totals.push(state.get("status", 0));
    }

    fn twin(&self, kernel: &KernelSource, bindings: &TwinBindings, member: usize) {
        let shape = PortHamiltonianShape::of(self)
            .expect("the executor runs a twin only after kernel_bound accepted the plan");
        port_hamiltonian_step_twin(
            &shape,
            &self.model.stage,
            &self.model.energy,
            kernel,
            bindings,
            member,
        );
    }
}
