//! The discrete-adjoint family: for every candidate of a [`GradientPlan`], the forward sweep
//! (cost, checkpoints) and the backward sweep (λ_k, the cotangents Ḡ_Δ and Ḡ_C) of
//! `shaders/linear_ph/adjoint_sweep.wgsl`, two passes of the one executor; its CPU twin is
//! `linear_ph::adjoint_twin`, its reference the whole-member sweeps of
//! `linear_ph::adjoint_reference`, its fast CPU engine the same sweeps on SIMD blocks of
//! candidates (`linear_ph::adjoint_fast`). A member's result is raw: [cost, λ_0, Ḡ_Δ, Ḡ_C]
//! (`linear_ph::gradient_plan::raw_width`); `identify` pulls it back to (J, R, Q, B, x0).
//!
//! Memory per member: the state x, λ, Ḡ_Δ (n·p), Ḡ_C (m·n), ⌈N / S⌉ checkpoints and one
//! segment of S states; S = 1 keeps every state (nothing is recomputed), S = ⌈√N⌉ keeps
//! about 2√N states and recomputes each segment once (see [`GradientPlan::segment`]).

use rayon::prelude::*;

use super::adjoint_reference::{SweepOperators, SweepShape, adjoint_sweep};
use super::adjoint_twin::adjoint_sweep_twin;
use super::kernel::initial_states;
use super::shape::{MAX_STATES_PER_INVOCATION, PRIVATE_OPERATOR_ENTRIES};
use crate::error::{Error, Result};
use crate::kernels::family::{Direction, Family, GpuKernel, KernelChunk, KernelSource};
use crate::kernels::layout::{Layout, MemberView};
use crate::kernels::twin::TwinBindings;
use crate::kernels::wgsl::WORKGROUP_SIZE;
use crate::linear_ph::{GradientPlan, LinearPhMember};
use crate::linear_ph::{OperatorWorkspace, StepOperators};
use crate::plan::{MemberResult, RecordSpec, Recording, SharedStream, StepGrid};

/// The kernel.
pub const ADJOINT_SWEEP: &str = include_str!("../../../shaders/linear_ph/adjoint_sweep.wgsl");

/// Bytes of forward states (f64) a run keeps whole rather than checkpointing: small enough
/// that every candidate's states fit one storage binding on every adapter (lavapipe's is
/// 128 MiB), so storing costs no extra chunks.
pub const STORED_STATES_BYTES: usize = 64 << 20;

/// The passes: the forward sweep, then the backward one.
const PASSES: [Direction; 2] = [Direction::Forward, Direction::Backward];

impl GradientPlan {
    /// S, the steps between checkpoints: the plan's; else 1 (every forward state kept) when
    /// the states of all candidates, K · N · n reals, fit [`STORED_STATES_BYTES`], and
    /// ⌈√N⌉ otherwise (about 2√N states per candidate, each segment recomputed once); at
    /// most N.
    pub fn segment(&self) -> usize {
        let steps = self.grid().steps;
        let stored = self.member_count() as u128 * steps as u128 * self.model.states() as u128 * 8;
        self.checkpoint_every
            .unwrap_or_else(|| {
                if stored <= STORED_STATES_BYTES as u128 {
                    1
                } else {
                    (steps as f64).sqrt().ceil() as usize
                }
            })
            .clamp(1, steps.max(1))
    }

    /// The sizes of one candidate's sweeps.
    pub fn sweep_shape(&self) -> SweepShape {
        SweepShape {
            states: self.model.states(),
            inputs: self.model.inputs_count(),
            stages: self.model.scheme.stages,
            steps: self.grid().steps,
            segment: self.segment(),
        }
    }

    /// Δ (n × p) and C = Bᵀ Q (m × n) of a candidate, row-major.
    pub fn operators(&self, member: &LinearPhMember) -> Result<(Vec<f64>, Vec<f64>)> {
        self.operators_in(member, &mut OperatorWorkspace::default())
    }

    /// [`GradientPlan::operators`] in the buffers of `work` ([`StepOperators::recording_in`]).
    pub fn operators_in(
        &self,
        member: &LinearPhMember,
        work: &mut OperatorWorkspace,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let ops = StepOperators::recording_in(&self.model, member, Recording::FINAL_STATE, work)?;
        Ok((ops.delta, self.output_operator(member)))
    }

    /// C = Bᵀ Q (m × n) of a candidate, row-major.
    pub fn output_operator(&self, member: &LinearPhMember) -> Vec<f64> {
        let c = member.system.b.transpose() * &member.system.q;
        let (m, n) = c.shape();
        (0..m * n).map(|e| c[(e / n, e % n)]).collect()
    }

    fn kernel(&self) -> Result<KernelSource> {
        sweep_kernel(&self.sweep_shape())
    }
}

/// The kernel variant for `shape`; an error when its operators do not fit the private
/// memory the kernel keeps them in.
pub fn sweep_kernel(shape: &SweepShape) -> Result<KernelSource> {
    {
        let (n, m, p) = (shape.states, shape.inputs, shape.width());
        let sm = shape.stages * m;
        let ops = n * p + m * n;
        if n > MAX_STATES_PER_INVOCATION || ops > PRIVATE_OPERATOR_ENTRIES {
            return Err(Error::invalid(
                "candidate",
                format!(
                    "the GPU adjoint kernel keeps a candidate's operators in private memory: n = {n} with {ops} operator entries exceeds its limits (n ≤ {MAX_STATES_PER_INVOCATION}, {PRIVATE_OPERATOR_ENTRIES} entries); use --backend cpu"
                ),
            ));
        }
        let state = Layout::new("STATE")
            .field("x", n)
            .field("lambda", n)
            .field("cost", 1)
            .field("g_delta", n * p)
            .field("g_output", m * n)
            .field("status", 1)
            .field("checkpoints", shape.checkpoints() * n)
            .field("segment", shape.segment * n);
        let forward = 2 * n * p + n + 2 * m * n + 2 * m + 3;
        let backward = (2 * n * p + n)
            + (2 * m * n + 2 * m)
            + (2 * n * p + 2 * m * n + m)
            + (2 * n * n + 2 * m * n + 3 * n);
        Ok(KernelSource {
            name: "adjoint_sweep",
            body: ADJOINT_SWEEP,
            modules: vec![],
            constants: vec![
                ("N", n as u32),
                ("M", m as u32),
                ("SM", sm as u32),
                ("SM_ARRAY", sm.max(1) as u32),
                ("P", p as u32),
                ("SEG", shape.segment as u32),
                ("SW", shape.stream_width() as u32),
                ("OPS_ENTRIES", ops as u32),
                ("GD_ENTRIES", (n * p) as u32),
                ("GO_ENTRIES", (m * n) as u32),
                ("UNROLL", 1),
            ],
            state,
            record: Layout::new("RECORD"),
            constants_layout: Layout::new("CONST").field("d_end", m).field("w_end", 1),
            params: Layout::new("PARAM")
                .field("delta", n * p)
                .field("output", m * n),
            members_per_workgroup: WORKGROUP_SIZE,
            // Unrolled bodies: the step loops alone (recomputation and adjoint per step of
            // the backward pass, and per segment the outer loop and both loops' last passes).
            loop_iterations_per_step: 5,
            flops_per_step: forward + backward,
            // Per step of both passes: the stream values (twice), the checkpoint, the
            // segment's state written and read back.
            bytes_per_step: 8 * (2 * shape.stream_width() + 3 * n),
            step_multiple: shape.segment,
            scratch: 0,
        })
    }
}

impl Family for GradientPlan {
    type Member = LinearPhMember;
    type Kernel = Self;
    type Fast = Self;

    fn name(&self) -> &'static str {
        "gradient"
    }

    fn method_label(&self) -> String {
        self.model.scheme.label()
    }

    fn grid(&self) -> &StepGrid {
        self.grid()
    }

    fn member_count(&self) -> usize {
        self.model.ensemble.len()
    }

    fn states(&self) -> usize {
        self.model.states()
    }

    fn with_member_count(&self, count: usize) -> Result<Self> {
        let mut plan = self.clone();
        plan.model = plan.model.with_members(count)?;
        Ok(plan)
    }

    fn member(&self, index: usize) -> Result<LinearPhMember> {
        self.model.ensemble.member(index)
    }

    fn record_spec(&self) -> &RecordSpec {
        self.record_spec()
    }

    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        let serde_json::Value::Object(map) = serde_json::json!({
            "scheme": self.model.scheme.label(),
            "states": self.model.states(),
            "inputs": self.model.inputs_count(),
            "steps": self.grid().steps,
            "checkpoint_every": self.segment(),
        }) else {
            unreachable!("a JSON object literal")
        };
        map
    }

    fn record_start(&self, _member: &LinearPhMember, _out: &mut MemberResult) {}

    /// Both sweeps of one member, forward and backward, whole, in f64.
    fn reference(&self, member: &LinearPhMember) -> Result<MemberResult> {
        let (delta, output) = self.operators(member)?;
        let ops = SweepOperators {
            delta: &delta,
            output: &output,
        };
        let swept = adjoint_sweep(
            &self.sweep_shape(),
            &ops,
            member.x0.as_slice(),
            self.stream(),
            self.terminal(),
        );
        Ok(MemberResult {
            final_state: swept.raw,
            nonfinite_step: swept.nonfinite_step,
            ..MemberResult::default()
        })
    }

    fn shared_stream(&self) -> &SharedStream {
        self.stream()
    }

    fn gpu_kernel(&self) -> Option<&Self> {
        Some(self)
    }

    /// The reference sweeps on SIMD blocks of candidates (`linear_ph::adjoint_fast`), bit
    /// for bit the same.
    fn fast_engine(&self) -> Option<&Self> {
        Some(self)
    }
}

impl GpuKernel for GradientPlan {
    type Member = LinearPhMember;

    fn kernel_bound(&self) -> Result<KernelSource> {
        self.kernel()
    }

    fn kernel_chunk(&self, members: &[LinearPhMember]) -> Result<KernelChunk> {
        let kernel = self.kernel()?;
        // The first error in member order, whatever the thread count.
        let operators: Vec<Result<(Vec<f64>, Vec<f64>)>> = members
            .par_iter()
            .map_init(OperatorWorkspace::default, |work, m| {
                self.operators_in(m, work)
            })
            .collect();
        let operators = operators.into_iter().collect::<Result<Vec<_>>>()?;
        let params = kernel
            .params
            .pack(members.len(), |i, field, out| match field {
                "delta" => out.copy_from_slice(&operators[i].0),
                _ => out.copy_from_slice(&operators[i].1),
            });
        let state = initial_states(&kernel.state, members);
        Ok(KernelChunk {
            kernel,
            params,
            state,
        })
    }

    fn passes(&self) -> &[Direction] {
        &PASSES
    }

    fn constants(&self) -> Vec<f64> {
        let (d_end, w_end) = self.terminal();
        let mut values = d_end.to_vec();
        values.push(w_end);
        values
    }

    fn decode_record(&self, _record: &MemberView, _out: &mut MemberResult) {}

    fn decode_final(&self, state: &MemberView, out: &mut MemberResult) {
        out.final_state.clear();
        state.extend_into("cost", &mut out.final_state);
        state.extend_into("lambda", &mut out.final_state);
        state.extend_into("g_delta", &mut out.final_state);
        state.extend_into("g_output", &mut out.final_state);
    }

    fn twin(&self, kernel: &KernelSource, bindings: &TwinBindings, member: usize) {
        adjoint_sweep_twin(kernel, bindings, member);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Precision;
    use crate::kernels::wgsl::{assemble, validate};

    /// Every variant assembles and validates with naga in both precisions; n = 33 is
    /// refused with a message that names the way out.
    #[test]
    fn every_variant_validates() {
        for precision in [Precision::F32, Precision::F64] {
            for states in [1, 2, 5, 8, 32] {
                for stages in 1..=4 {
                    for inputs in [1, 3] {
                        for segment in [1, 7] {
                            let shape = SweepShape {
                                states,
                                inputs,
                                stages,
                                steps: 20,
                                segment,
                            };
                            let kernel = sweep_kernel(&shape).unwrap();
                            let source = assemble(&kernel, precision).unwrap();
                            if let Err(e) = validate(&source, precision) {
                                panic!("{shape:?} in {precision:?}: {e}");
                            }
                        }
                    }
                }
            }
        }
        let too_big = SweepShape {
            states: 33,
            inputs: 1,
            stages: 1,
            steps: 20,
            segment: 5,
        };
        let e = sweep_kernel(&too_big).unwrap_err().to_string();
        assert!(e.contains("n = 33") && e.contains("--backend cpu"), "{e}");
    }
}
