//! The linear port-Hamiltonian family: collocation (Gauss, Lobatto IIIA, the IIIA/IIIB pair)
//! applied through the planner's per-member step operators (`method::step_operators`).
//!
//! One step of Definition 1 (Kotyczka & Lefèvre 2019) is linear in v = [x_k; U_k]:
//!
//! ```text
//!   δ = Δ v,  x_{k+1} = x_k + δ                  (Kahan-compensated)
//!   y = Y v,  port = h yᵀ U_k,  dissipated = h ‖W v‖²
//!   stored = δᵀ Q (x_k + δ/2),  supplied = port − dissipated
//! ```
//!
//! Kernels: their variants in `families::linear_ph::shape`; their CPU twin is
//! `linear_ph_step_twin` in `families::linear_ph::twin`; the reference integrator, which
//! solves the stage equations at every step, is `families::linear_ph::reference`; the fast
//! CPU engine is `families::linear_ph::fast`.

use std::ops::Range;

use rayon::prelude::*;

use super::fast::{self as linear_ph_fast, ChunkOperators, FastBlock, SharedOperators};
use super::reference::{ReferenceStepper, record_member};
use super::shape::{
    LinearPhShape, MAX_STATES_COOPERATIVE, MAX_STATES_PER_INVOCATION, pack_operators,
};
use super::twin::linear_ph_step_twin;
use crate::error::{Error, Result};
use crate::kernels::energy_sums::decode_energy_totals;
use crate::kernels::family::{
    Family, FastEngine, GpuKernel, KernelChunk, KernelSource, RangeChunk,
};
use crate::kernels::lanes::SimdLevel;
use crate::kernels::layout::{Layout, MemberView};
use crate::kernels::twin::TwinBindings;
use crate::linear_ph::{LinearPhMember, LinearPhPlan};
use crate::linear_ph::{OperatorWorkspace, StepOperators};
use crate::plan::{MemberResult, RecordSpec, Recording, ResultBlock, SharedStream, StepGrid};

impl LinearPhPlan {
    /// Whether the GPU runs the cooperative kernel, checking the state size against the
    /// kernels' limits.
    fn use_cooperative(&self) -> Result<bool> {
        let n = self.states();
        if n > MAX_STATES_COOPERATIVE {
            return Err(Error::invalid(
                "system",
                format!(
                    "state size n = {n} exceeds the GPU kernels' limit of {MAX_STATES_COOPERATIVE}; use --backend cpu"
                ),
            ));
        }
        let cooperative = self.cooperative.unwrap_or(n > MAX_STATES_PER_INVOCATION);
        if !cooperative && n > MAX_STATES_PER_INVOCATION {
            return Err(Error::invalid(
                "system",
                format!(
                    "state size n = {n} exceeds the per-invocation kernel's limit of {MAX_STATES_PER_INVOCATION}"
                ),
            ));
        }
        Ok(cooperative)
    }

    /// The step operators the kernels, their twin and the fast engine apply to `member`
    /// ([`StepOperators::recording`]), with the columns of silent inputs
    /// ([`LinearPhPlan::silent_inputs`]) set to 0. Those columns only ever multiply u = 0,
    /// so the products are 0 either way; but a column may not be representable (Y's input
    /// block is of the order h Bᵀ Q B, +∞ for |B| ≈ 1e308), and ∞ · 0 would be NaN where
    /// the reference integrator, which forms B u, gets 0.
    pub fn kernel_operators(
        &self,
        member: &LinearPhMember,
        recording: Recording,
    ) -> Result<StepOperators> {
        self.kernel_operators_in(member, recording, &mut OperatorWorkspace::default())
    }

    /// [`LinearPhPlan::kernel_operators`] in the buffers of `work`
    /// ([`StepOperators::recording_in`]).
    pub fn kernel_operators_in(
        &self,
        member: &LinearPhMember,
        recording: Recording,
        work: &mut OperatorWorkspace,
    ) -> Result<StepOperators> {
        let mut ops = StepOperators::recording_in(self, member, recording, work)?;
        let (n, m, p) = (ops.states, ops.inputs, ops.width());
        for (channel, _) in self
            .silent_inputs()
            .iter()
            .enumerate()
            .filter(|(_, silent)| **silent)
        {
            for stage in 0..ops.stages {
                let column = n + stage * m + channel;
                for operator in [&mut ops.delta, &mut ops.output, &mut ops.dissipation] {
                    for row in operator.chunks_exact_mut(p) {
                        row[column] = 0.0;
                    }
                }
            }
        }
        Ok(ops)
    }

    fn shape(&self, rank: usize, cooperative: bool) -> LinearPhShape {
        let recording = self.recording();
        LinearPhShape {
            states: self.states(),
            stages: self.scheme.stages,
            inputs: self.inputs_count(),
            rank: if recording.energy { rank } else { 0 },
            cooperative,
            recording,
        }
    }
}

impl LinearPhPlan {
    /// The record at t = 0 of a member starting at `x0`: x0 itself where the trajectory is
    /// recorded.
    fn record_initial_state(&self, x0: &[f64], out: &mut MemberResult) {
        if self.recording().trajectory {
            out.trajectory.extend_from_slice(x0);
        }
    }

    /// A chunk's operators from the fast engine's set-up ([`ChunkOperators`]) where it
    /// builds them for the per-invocation kernel and they build; `None` otherwise, where
    /// the general path builds them (or reports the error as it does).
    fn stack_operators(
        &self,
        build: impl FnOnce() -> Result<ChunkOperators>,
    ) -> Option<ChunkOperators> {
        let per_invocation = !self.use_cooperative().ok()?;
        (per_invocation && ChunkOperators::fits(self))
            .then(build)?
            .ok()
    }

    /// The kernel variant, parameters and initial states of `operators`' members.
    fn stack_chunk(&self, operators: &ChunkOperators) -> KernelChunk {
        let kernel = self.shape(operators.rank(), false).kernel();
        let params = operators.pack(self);
        // The state at t = 0: x0 in the field x, every other entry 0 (as
        // `initial_states` packs it), written row by row on all cores.
        let count = operators.count();
        let x = kernel.state.offset("x")..kernel.state.offset("x") + self.states();
        let mut state = vec![0.0; kernel.state.entries() * count];
        state
            .par_chunks_mut(count.max(1))
            .enumerate()
            .filter(|(entry, _)| x.contains(entry))
            .for_each(|(entry, row)| {
                for (i, value) in row.iter_mut().enumerate() {
                    *value = operators.x0(i)[entry - x.start];
                }
            });
        KernelChunk {
            kernel,
            params,
            state,
        }
    }
}

/// The `state` buffer of a chunk at t = 0: each member's x0 in the field `x`, every other
/// field 0 (carries, sums, status).
pub(super) fn initial_states(layout: &Layout, members: &[LinearPhMember]) -> Vec<f64> {
    layout.pack(members.len(), |i, field, out| {
        if field == "x" {
            out.copy_from_slice(members[i].x0.as_slice());
        }
    })
}

impl LinearPhPlan {
    /// Integrates `member` with the reference `stepper`, recording what the plan records.
    fn record_with(&self, member: &LinearPhMember, stepper: &mut ReferenceStepper) -> MemberResult {
        let recording = self.recording();
        let x0 = member.x0.as_slice();
        record_member(
            &self.grid,
            &self.inputs,
            self.record_spec(),
            recording,
            x0,
            stepper,
        )
    }
}

impl Family for LinearPhPlan {
    type Member = LinearPhMember;
    type Kernel = Self;
    type Fast = Self;

    fn name(&self) -> &'static str {
        "linear-ph"
    }

    fn method_label(&self) -> String {
        self.scheme.label()
    }

    fn grid(&self) -> &StepGrid {
        &self.grid
    }

    fn member_count(&self) -> usize {
        self.ensemble.len()
    }

    fn states(&self) -> usize {
        LinearPhPlan::states(self)
    }

    fn with_member_count(&self, count: usize) -> Result<Self> {
        self.clone().with_members(count)
    }

    fn member(&self, index: usize) -> Result<LinearPhMember> {
        self.ensemble.member(index)
    }

    fn record_spec(&self) -> &RecordSpec {
        self.record_spec()
    }

    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        let serde_json::Value::Object(map) = serde_json::json!({
            "scheme": {
                "label": self.scheme.label(),
                "family": self.scheme.family.name(),
                "stages": self.scheme.stages,
                "order": self.scheme.order,
            },
            "states": self.states(),
            "inputs": self.inputs_count(),
        }) else {
            unreachable!("a JSON object literal")
        };
        map
    }

    fn record_start(&self, member: &LinearPhMember, out: &mut MemberResult) {
        self.record_initial_state(member.x0.as_slice(), out);
    }

    fn reference(&self, member: &LinearPhMember) -> Result<MemberResult> {
        let mut stepper = ReferenceStepper::new(self, member)?;
        Ok(self.record_with(member, &mut stepper))
    }

    fn check_stream(&self) -> Result<()> {
        self.check_inputs()
    }

    fn shared_stream(&self) -> &SharedStream {
        &self.inputs
    }

    fn gpu_kernel(&self) -> Option<&Self> {
        Some(self)
    }

    fn fast_engine(&self) -> Option<&Self> {
        Some(self)
    }
}

impl FastEngine for LinearPhPlan {
    type Member = LinearPhMember;
    type Block = FastBlock;
    type Shared = SharedOperators;

    fn prepare_shared(&self) -> Result<SharedOperators> {
        Ok(SharedOperators::of(self))
    }

    fn block_members(&self) -> usize {
        linear_ph_fast::block_members(self)
    }

    fn prepare(&self, members: Vec<LinearPhMember>) -> Result<FastBlock> {
        FastBlock::new(self, &members)
    }

    fn prepare_range(
        &self,
        shared: &SharedOperators,
        members: std::ops::Range<usize>,
    ) -> Option<Result<FastBlock>> {
        Some(FastBlock::of_range(self, shared, members))
    }

    fn run(&self, block: FastBlock) -> Result<ResultBlock> {
        Ok(block.run(self, SimdLevel::get()))
    }
}

impl GpuKernel for LinearPhPlan {
    type Member = LinearPhMember;

    fn kernel_bound(&self) -> Result<KernelSource> {
        // rank ≤ n bounds every chunk's variant.
        Ok(self.shape(self.states(), self.use_cooperative()?).kernel())
    }

    fn kernel_chunk(&self, members: &[LinearPhMember]) -> Result<KernelChunk> {
        if let Some(operators) = self.stack_operators(|| ChunkOperators::of_members(self, members))
        {
            return Ok(self.stack_chunk(&operators));
        }
        let cooperative = self.use_cooperative()?;
        // The first error in member order, whatever the thread count.
        let operators: Vec<Result<StepOperators>> = members
            .par_iter()
            .map_init(OperatorWorkspace::default, |work, member| {
                self.kernel_operators_in(member, self.recording(), work)
            })
            .collect();
        let operators = operators.into_iter().collect::<Result<Vec<_>>>()?;
        let rank = operators.iter().map(|o| o.rank).max().unwrap_or(0);
        let shape = self.shape(rank, cooperative);
        let kernel = shape.kernel();
        let params = pack_operators(&operators, &shape);
        let state = initial_states(&kernel.state, members);
        Ok(KernelChunk {
            kernel,
            params,
            state,
        })
    }

    fn kernel_chunk_range(&self, members: Range<usize>, spec: &RecordSpec) -> Option<RangeChunk> {
        let operators = self.stack_operators(|| ChunkOperators::of_range(self, members))?;
        let starts = (0..operators.count())
            .into_par_iter()
            .map(|i| {
                let mut result = MemberResult::with_capacity(spec, 0);
                self.record_initial_state(operators.x0(i), &mut result);
                result
            })
            .collect();
        Some(RangeChunk {
            chunk: self.stack_chunk(&operators),
            starts,
        })
    }

    fn constants(&self) -> Vec<f64> {
        vec![self.grid.h]
    }

    fn decode_record(&self, record: &MemberView, out: &mut MemberResult) {
        // Fields that are not recorded have width 0 in the record layout.
        record.extend_into("x", &mut out.trajectory);
        let recording = self.recording();
        if recording.energy {
            record.extend_into("energy", &mut out.channels[0]);
        }
        if recording.outputs {
            record.extend_into("y", &mut out.channels[usize::from(recording.energy)]);
        }
    }

    fn decode_final(&self, state: &MemberView, out: &mut MemberResult) {
        out.final_state.clear();
        state.extend_into("x", &mut out.final_state);
        if self.recording().energy {
            out.totals = decode_energy_totals(state);
        }
    }

    fn twin(&self, kernel: &KernelSource, bindings: &TwinBindings, member: usize) {
        linear_ph_step_twin(kernel, bindings, member);
    }
}

#[cfg(test)]
#[path = "kernel_tests.rs"]
mod tests;
