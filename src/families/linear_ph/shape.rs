//! The GPU kernel variants of the linear port-Hamiltonian family: the sizes and recording
//! a variant is specialised for ([`LinearPhShape`]), its layouts, specialisation constants,
//! loop and operation counts, and the packing of a chunk's step operators
//! ([`pack_operators`]). Kernels: `shaders/linear_ph/step.wgsl` (one invocation per member,
//! n ≤ 32) and `shaders/linear_ph/step_cooperative.wgsl` (one workgroup per member, n ≤ 128).

use crate::kernels::Precision;
use crate::kernels::energy_sums::energy_state_fields;
use crate::kernels::family::KernelSource;
use crate::kernels::layout::Layout;
use crate::kernels::wgsl::WORKGROUP_SIZE;
use crate::linear_ph::StepOperators;
use crate::plan::Recording;

/// The per-invocation kernel.
pub const LINEAR_PH_STEP: &str = include_str!("../../../shaders/linear_ph/step.wgsl");

/// The kernel where a workgroup cooperates on one member.
pub const LINEAR_PH_STEP_COOPERATIVE: &str =
    include_str!("../../../shaders/linear_ph/step_cooperative.wgsl");

/// Largest state size of the per-invocation kernel (private arrays of n reals).
pub const MAX_STATES_PER_INVOCATION: usize = 32;

/// Largest state size of the workgroup-cooperative kernel.
pub const MAX_STATES_COOPERATIVE: usize = 128;

/// Most operator entries the per-invocation kernel keeps in private memory and unrolls
/// over (see [`LinearPhShape::private_operators`]): n = 32 with s·m ≤ 2 and every recording
/// (3268 entries at rank 32), 32 KiB per invocation in f64.
pub const PRIVATE_OPERATOR_ENTRIES: usize = 4096;

/// Sizes a kernel variant is specialised for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinearPhShape {
    pub states: usize,
    pub stages: usize,
    pub inputs: usize,
    /// Rows of W per stage (the largest dissipation rank in the chunk; 0 without energy).
    pub rank: usize,
    pub cooperative: bool,
    /// What the kernel records; it computes only what that needs.
    pub recording: Recording,
}

impl LinearPhShape {
    /// p = n + s m.
    pub fn width(&self) -> usize {
        self.states + self.stages * self.inputs
    }

    /// Rows of Y the kernel applies: s·m when the outputs are recorded or the port energy
    /// is needed, else 0.
    pub fn output_rows(&self) -> usize {
        if self.recording.energy || self.recording.outputs {
            self.stages * self.inputs
        } else {
            0
        }
    }

    /// Rows of W: s·rank with the energy balance, else 0.
    pub fn dissipation_rows(&self) -> usize {
        if self.recording.energy {
            self.stages * self.rank
        } else {
            0
        }
    }

    /// Entries of Q: n² with the energy balance, else 0.
    pub fn q_entries(&self) -> usize {
        if self.recording.energy {
            self.states * self.states
        } else {
            0
        }
    }

    /// Δ (n·p) + Y + W + Q, as far as the recording needs them.
    pub fn operator_entries(&self) -> usize {
        (self.states + self.output_rows() + self.dissipation_rows()) * self.width()
            + self.q_entries()
    }

    /// Δ (n·p), Y, W (p columns each), Q (n·n), the last three as far as the recording needs
    /// them; the per-invocation kernel reads them structure-of-arrays, the cooperative
    /// kernel member-major (see [`pack_operators`]).
    pub fn param_layout(&self) -> Layout {
        let p = self.width();
        Layout::new("PARAM")
            .field("delta", self.states * p)
            .field("output", self.output_rows() * p)
            .field("dissipation", self.dissipation_rows() * p)
            .field("q", self.q_entries())
    }

    /// x, carry, 4 totals + 4 compensations, 4 window sums + 4 compensations, max residual,
    /// and the non-finite status.
    pub fn state_layout(&self) -> Layout {
        let fields = Layout::new("STATE")
            .field("x", self.states)
            .field("carry", self.states);
        energy_state_fields(fields).field("status", 1)
    }

    /// x, y (s·m), the window's 4 energies; a field that is not recorded has width 0.
    pub fn record_layout(&self) -> Layout {
        let width = |on: bool, width: usize| if on { width } else { 0 };
        Layout::new("RECORD")
            .field("x", width(self.recording.trajectory, self.states))
            .field(
                "y",
                width(self.recording.outputs, self.stages * self.inputs),
            )
            .field("energy", width(self.recording.energy, 4))
    }

    /// Floating-point operations per member-step, counted from the kernels (both do the
    /// same arithmetic): 2 per multiply-add of δ = Δv and 4 per Kahan update; with the energy
    /// balance also y = Yv and yᵀU (2 per multiply-add), ‖Wv‖² (2 per multiply-add, 2 per
    /// square added), δᵀQ(x + δ/2) (4 per entry of Q, 2 per row), h·port and h·dissipated
    /// (2), supplied and the residual's difference (2), and 8 Neumaier adds of 4. Without
    /// energies but with outputs, the per-invocation kernel computes y = Yv at record points
    /// only (not counted per step), the cooperative kernel with yᵀU at every step.
    /// Comparisons (finiteness, Neumaier's branch) are not counted.
    pub fn flops_per_step(&self) -> usize {
        let (n, p, sm) = (self.states, self.width(), self.stages * self.inputs);
        let update = 2 * n * p + 4 * n;
        if !self.recording.energy {
            if self.cooperative && self.output_rows() > 0 {
                return update + 2 * sm * p + 2 * sm;
            }
            return update;
        }
        let w = self.dissipation_rows();
        update + (2 * sm * p + 2 * sm) + (2 * w * p + 2 * w) + (4 * n * n + 2 * n) + 2 + 2 + 8 * 4
    }

    /// Global-memory bytes one member moves per step in `precision`, counted from the kernel
    /// in steady state: the step's stage inputs U_k (s·m reals each invocation reads, from
    /// cache after the first), and the operators where the kernel reads them at every use
    /// (the per-invocation kernel without a private copy reads each entry once per step;
    /// the cooperative kernel's threads read their rows' entries once per step too).
    /// Traffic once per dispatch ([`Self::bytes_per_dispatch`]) or per record point is not
    /// included.
    pub fn bytes_per_step(&self, precision: Precision) -> usize {
        let sm = self.stages * self.inputs;
        let operators = if self.private_operators() {
            0
        } else {
            self.operator_entries()
        };
        (sm + operators) * precision.size()
    }

    /// Global-memory bytes one member moves once per dispatch: the private copy of its
    /// operators (where the kernel keeps one), its state read and written back.
    pub fn bytes_per_dispatch(&self, precision: Precision) -> usize {
        let operators = if self.private_operators() {
            self.operator_entries()
        } else {
            0
        };
        (operators + 2 * self.state_layout().entries()) * precision.size()
    }

    /// Loop iterations one invocation executes per step, counted from the kernels' loops:
    /// an upper bound, as llvmpipe counts them (every pass of a loop, the last one that
    /// leaves it included, and loops inside branches not taken, which it runs masked; record
    /// points counted at every step). The unrolled per-invocation kernel keeps only its step
    /// loops: a pass of the inner loop per step, and per segment (at most one per step) the
    /// inner loop's last pass and a pass of the outer loop. Otherwise a loop of k iterations
    /// counts k + 1. In the cooperative kernel a thread owns ⌈rows / WG⌉ rows.
    pub fn loop_iterations_per_step(&self) -> usize {
        let (n, p, sm) = (self.states, self.width(), self.output_rows());
        let sr = self.dissipation_rows();
        if self.cooperative {
            let workgroup = WORKGROUP_SIZE as usize;
            let rows = n + sm + sr;
            let own = |count: usize| count.div_ceil(workgroup);
            return own(rows) * (p + 1)
                + own(n) * (n + 4)
                + own(sm) * 2
                + workgroup
                + 8
                + 1
                + n
                + 1;
        }
        let steps = 3;
        if self.private_operators() {
            return steps;
        }
        let passes = |iterations: usize| iterations + 1;
        let inputs = self.stages * self.inputs;
        // One row of [Δ; Y; W] applied to v.
        let row = passes(n) + passes(inputs);
        let recording = self.recording;
        let mut count = steps
            + passes(inputs)
            + passes(n)
            + n * row
            + passes(sm)
            + sm * row
            + passes(n)
            + passes(n);
        if recording.energy {
            count += passes(sr) + sr * row + passes(n) + n * passes(n) + passes(4) + passes(4);
        }
        if recording.trajectory {
            count += passes(n);
        }
        if recording.outputs {
            count += passes(inputs);
        }
        count
    }

    /// Loop iterations of the per-invocation kernel once per dispatch (the operators' copy,
    /// state and energy sums in and out, the outer step loop's last pass), on top of
    /// [`Self::loop_iterations_per_step`] per step: chunking cuts dispatches at
    /// `LOOP_ITERATIONS_PER_DISPATCH`, below llvmpipe's limit by more than this.
    pub fn loop_iterations_per_dispatch(&self) -> usize {
        let passes = |iterations: usize| iterations + 1;
        if self.cooperative {
            // Each thread's ⌈n / WG⌉ rows of the state, thread 0's energy sums.
            let own = self.states.div_ceil(WORKGROUP_SIZE as usize);
            return 1 + 2 * passes(own) + 2 * passes(4);
        }
        if self.private_operators() {
            return 1;
        }
        1 + passes(0) + 2 * passes(self.states) + 2 * passes(4)
    }

    /// Whether the per-invocation kernel keeps the member's operators in private memory for
    /// the whole dispatch (loaded once per dispatch, `OPS_PRIVATE`) and is unrolled
    /// (`UNROLL`: every loop over n, s·m or the operator rows is expanded, so the private
    /// arrays are indexed by constants and only the step loops are left): when the operators
    /// take at most [`PRIVATE_OPERATOR_ENTRIES`] entries. Otherwise the kernel reads them from
    /// `params` at every use, in loops. On llvmpipe every divergent `params` read is a loop
    /// over the SIMD lanes, so the private copy wins at every size measured (n = 2 to 32,
    /// 3× to 15×); the bound keeps the unrolled code and the copy (a GPU spills what its
    /// registers do not hold to per-invocation memory) within reason.
    pub fn private_operators(&self) -> bool {
        !self.cooperative && self.operator_entries() <= PRIVATE_OPERATOR_ENTRIES
    }

    /// The kernel variant of this shape.
    pub fn kernel(&self) -> KernelSource {
        let sm = self.stages * self.inputs;
        let private_entries = if self.private_operators() {
            self.operator_entries()
        } else {
            0
        };
        KernelSource {
            name: if self.cooperative {
                "linear_ph_step_cooperative"
            } else {
                "linear_ph_step"
            },
            body: if self.cooperative {
                LINEAR_PH_STEP_COOPERATIVE
            } else {
                LINEAR_PH_STEP
            },
            modules: vec![],
            constants: vec![
                ("N", self.states as u32),
                ("S", self.stages as u32),
                ("M", self.inputs as u32),
                ("SM", sm as u32),
                ("SM_ARRAY", sm.max(1) as u32),
                ("Y_ROWS", self.output_rows() as u32),
                ("W_ROWS", self.dissipation_rows() as u32),
                ("P", self.width() as u32),
                ("TRAJECTORY", u32::from(self.recording.trajectory)),
                ("OUTPUTS", u32::from(self.recording.outputs)),
                ("ENERGY", u32::from(self.recording.energy)),
                ("OPS_PRIVATE", u32::from(self.private_operators())),
                ("OPS_ENTRIES", private_entries as u32),
                ("OPS_ARRAY", private_entries.max(1) as u32),
                ("UNROLL", u32::from(self.private_operators())),
            ],
            state: self.state_layout(),
            record: self.record_layout(),
            constants_layout: Layout::new("CONST").field("h", 1),
            params: self.param_layout(),
            members_per_workgroup: if self.cooperative { 1 } else { WORKGROUP_SIZE },
            loop_iterations_per_step: self.loop_iterations_per_step(),
            flops_per_step: self.flops_per_step(),
            // In f64; every buffer holds reals, so f32 moves half.
            bytes_per_step: self.bytes_per_step(Precision::F64),
            step_multiple: 1,
            scratch: 0,
        }
    }
}

/// The rows of one member's [Δ; Y; W] as `shape` applies them: Y when it has output rows,
/// W padded to s·`shape.rank` rows (zero rows change nothing) when it has dissipation rows;
/// each of width p.
fn stacked_rows(op: &StepOperators, shape: &LinearPhShape) -> Vec<f64> {
    let p = op.width();
    let mut rows =
        Vec::with_capacity((shape.states + shape.output_rows() + shape.dissipation_rows()) * p);
    rows.extend_from_slice(&op.delta);
    if shape.output_rows() > 0 {
        rows.extend_from_slice(&op.output);
    }
    if shape.dissipation_rows() > 0 {
        for stage in 0..op.stages {
            for k in 0..shape.rank {
                if k < op.rank {
                    let start = (stage * op.rank + k) * p;
                    rows.extend_from_slice(&op.dissipation[start..start + p]);
                } else {
                    rows.extend(std::iter::repeat_n(0.0, p));
                }
            }
        }
    }
    rows
}

/// Packs a chunk's operators for `shape`'s kernel: per-invocation kernels read them
/// structure-of-arrays (entry e of member i at e·count + i, entries [Δ; Y; W] row-major then
/// Q); the cooperative kernel reads them member-major and column-major (member i at
/// i·entries: [Δ; Y; W] entry (row, c) at c·rows + row, then Q at rows·p + c·n + r).
pub fn pack_operators(operators: &[StepOperators], shape: &LinearPhShape) -> Vec<f64> {
    let count = operators.len();
    let (n, p) = (shape.states, shape.width());
    let rows = n + shape.output_rows() + shape.dissipation_rows();
    let q_entries = shape.q_entries();
    let entries = rows * p + q_entries;
    let mut packed = vec![0.0; entries * count];
    for (i, op) in operators.iter().enumerate() {
        let stacked = stacked_rows(op, shape);
        for row in 0..rows {
            for c in 0..p {
                let value = stacked[row * p + c];
                if shape.cooperative {
                    packed[i * entries + c * rows + row] = value;
                } else {
                    packed[(row * p + c) * count + i] = value;
                }
            }
        }
        if q_entries == 0 {
            continue;
        }
        for r in 0..n {
            for c in 0..n {
                let value = op.q[r * n + c];
                if shape.cooperative {
                    packed[i * entries + rows * p + c * n + r] = value;
                } else {
                    packed[(rows * p + r * n + c) * count + i] = value;
                }
            }
        }
    }
    packed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Precision;
    use crate::kernels::wgsl::{assemble, translate, validate};

    /// Every kernel variant harbor can generate passes naga and translates to SPIR-V (the
    /// Vulkan backend's path, where a naga backend bug would otherwise surface only on an
    /// adapter): both precisions, both kernels, every supported stage count, state sizes up
    /// to each kernel's limit, with and without inputs and dissipation.
    #[test]
    fn every_variant_validates() {
        let mut checked = 0;
        let sizes = [
            (1, false),
            (2, false),
            (3, false),
            (8, false),
            (17, false),
            (32, false),
            (2, true),
            (33, true),
            (100, true),
            (128, true),
        ];
        for precision in [Precision::F32, Precision::F64] {
            for (states, cooperative) in sizes {
                for stages in 1..=4 {
                    for inputs in [0, 1, 3] {
                        for rank in [0, 1, states] {
                            for recording in [Recording::default(), Recording::FINAL_STATE] {
                                let shape = LinearPhShape {
                                    states,
                                    stages,
                                    inputs,
                                    rank,
                                    cooperative,
                                    recording,
                                };
                                if let Err(e) = translate(&shape.kernel(), precision) {
                                    panic!("{shape:?}: {e}");
                                }
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 2 * 10 * 4 * 3 * 3 * 2);
    }

    /// The loop counts chunking relies on: the unrolled per-invocation kernel keeps only its
    /// two step loops, and no variant's once-per-dispatch loops exceed the room chunking
    /// leaves below llvmpipe's limit.
    #[test]
    fn loop_counts_match_the_kernels() {
        use crate::backend::executor::chunking::{
            LLVMPIPE_LOOP_LIMIT, LOOP_ITERATIONS_PER_DISPATCH,
        };
        for (states, cooperative) in [
            (1, false),
            (2, false),
            (8, false),
            (32, false),
            (33, true),
            (128, true),
        ] {
            for (stages, inputs) in [(1, 0), (2, 1), (4, 3)] {
                for recording in [Recording::default(), Recording::FINAL_STATE] {
                    let shape = LinearPhShape {
                        states,
                        stages,
                        inputs,
                        rank: if recording.energy { states } else { 0 },
                        cooperative,
                        recording,
                    };
                    assert!(
                        shape.loop_iterations_per_dispatch() + LOOP_ITERATIONS_PER_DISPATCH
                            <= LLVMPIPE_LOOP_LIMIT,
                        "{shape:?}"
                    );
                    if shape.private_operators() {
                        let source = assemble(&shape.kernel(), Precision::F64).unwrap();
                        let kernel = &source[source.find("// ---- kernel").unwrap()..];
                        assert_eq!(kernel.matches("for (").count(), 1, "{shape:?}");
                        assert_eq!(kernel.matches("loop {").count(), 1, "{shape:?}");
                        assert!(!source.contains("for (var"), "{shape:?}");
                        assert_eq!(shape.loop_iterations_per_step(), 3);
                        assert_eq!(shape.bytes_per_step(Precision::F64), 8 * stages * inputs);
                    }
                }
            }
        }
        // The rule keeps every n ≤ 8 shape with s·m ≤ 2 private, whatever it records.
        let shape = LinearPhShape {
            states: 8,
            stages: 2,
            inputs: 1,
            rank: 8,
            cooperative: false,
            recording: Recording::default(),
        };
        assert!(shape.private_operators());
    }

    /// The f64 variant needs the FLOAT64 capability: without it naga rejects it, so the
    /// validation above is not vacuous.
    #[test]
    fn f64_without_the_capability_is_rejected() {
        for cooperative in [false, true] {
            let shape = LinearPhShape {
                states: 2,
                stages: 2,
                inputs: 1,
                rank: 1,
                cooperative,
                recording: Recording::default(),
            };
            let source = assemble(&shape.kernel(), Precision::F64).unwrap();
            assert!(validate(&source, Precision::F32).is_err());
            assert!(validate(&source, Precision::F64).is_ok());
        }
    }
}
