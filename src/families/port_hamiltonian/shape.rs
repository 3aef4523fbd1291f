//! The port-Hamiltonian kernel's variants: `shaders/port_hamiltonian/step.wgsl`, one
//! invocation per member with its Newton solve in registers, specialised by
//! [`PortHamiltonianShape`] (sizes, Newton cap, what is recorded) and assembled with the
//! model's expressions as the generated module `port_hamiltonian_model`: the stage tape as
//! `ph_stage` and the energy tape as `ph_energy`, straight-line WGSL with the shared
//! subexpressions computed once ([`crate::expr::wgsl`]).
//!
//! Layouts: parameters θ per member (`PARAM`, structure-of-arrays); state x, its Kahan
//! carry, H(x), the energy sums ([`energy_state_fields`]) and the status (`STATE`); per
//! record x, the outputs y (s × m) and the window's energies, each as recorded (`RECORD`);
//! run constants h, the Butcher matrix A (s × s), the weights b, the Newton tolerance and two
//! NaNs (`CONST`).

use std::borrow::Cow;

use super::plan::PortHamiltonianPlan;
use crate::error::{Error, Result};
use crate::expr::{Instr, Tape};
use crate::kernels::energy_sums::energy_state_fields;
use crate::kernels::family::KernelSource;
use crate::kernels::layout::Layout;
use crate::kernels::wgsl::WORKGROUP_SIZE;
use crate::plan::Recording;

/// The kernel.
pub const PORT_HAMILTONIAN_STEP: &str = include_str!("../../../shaders/port_hamiltonian/step.wgsl");

/// Largest s·n of the kernel: the Newton matrix is a private array of (s·n)² reals, and
/// the kernel's `#for` loops are all unrolled (llvmpipe truncates an invocation's loops
/// after 65535 passes, and a looped factorisation takes about (s·n)³/3 of them per Newton
/// iteration), so the factorisation is about (s·n)³/3 statements: at s·n = 32 naga alone
/// takes about 45 s to validate and translate the kernel on a 2-core machine.
pub const MAX_UNKNOWNS: usize = 24;

/// Newton iterations per step counted in [`PortHamiltonianShape::flops_per_step`]: a
/// typical count at the default tolerance from a zero initial guess.
const COUNTED_NEWTON_ITERATIONS: usize = 4;

/// Floating-point operations counted per transcendental function call (as the other
/// kernels count them).
const FLOPS_PER_CALL: usize = 30;

/// What a port-Hamiltonian kernel variant is specialised for.
#[derive(Debug, Clone, PartialEq)]
pub struct PortHamiltonianShape {
    /// n, s, m and the number of parameters.
    pub states: usize,
    pub stages: usize,
    pub inputs: usize,
    pub parameters: usize,
    pub max_iterations: usize,
    pub recording: Recording,
    /// Arithmetic and `expr_powi` loop passes of one evaluation of each tape.
    stage_flops: usize,
    energy_flops: usize,
    stage_loop_passes: usize,
    energy_loop_passes: usize,
    /// The generated module.
    model_module: String,
}

/// Arithmetic operations of one evaluation of `tape`, a function call counted as
/// [`FLOPS_PER_CALL`].
fn tape_flops(tape: &Tape) -> usize {
    tape.instructions()
        .iter()
        .map(|instr| match instr {
            Instr::Call(..) => FLOPS_PER_CALL,
            Instr::Pow(..) => 2 * FLOPS_PER_CALL + 1,
            other => other.flops(),
        })
        .sum()
}

/// The loop passes of one evaluation of `tape` in WGSL: `expr_powi(x, n)` loops once per
/// bit of |n| (at least once); nothing else in a tape loops.
fn tape_loop_passes(tape: &Tape) -> usize {
    tape.instructions()
        .iter()
        .map(|instr| match *instr {
            Instr::Powi(_, n) => (32 - n.unsigned_abs().leading_zeros()).max(1) as usize,
            _ => 0,
        })
        .sum()
}

impl PortHamiltonianShape {
    /// The shape of `plan`, or an error naming `--backend` when the Newton system is too
    /// large for a kernel's registers.
    pub fn of(plan: &PortHamiltonianPlan) -> Result<Self> {
        if !plan.method.is_gauss() {
            return Err(Error::invalid(
                "--backend",
                format!(
                    "the GPU kernel runs scheme.family = \"gauss\"; {} runs on the CPU: use --backend cpu or reference",
                    plan.method.label(&plan.scheme)
                ),
            ));
        }
        let model = &plan.model;
        let (n, s) = (model.n(), plan.scheme.stages);
        if s * n > MAX_UNKNOWNS {
            return Err(Error::invalid(
                "--backend",
                format!(
                    "the GPU kernel solves for s·n ≤ {MAX_UNKNOWNS} stage unknowns in registers; this run has s·n = {s}·{n} = {}; use --backend cpu, or fewer stages",
                    s * n
                ),
            ));
        }
        let mut model_module = String::from("#import math\n");
        model_module.push_str(&crate::expr::wgsl::helpers());
        model_module.push_str(&crate::expr::wgsl::function(&model.stage, "ph_stage"));
        model_module.push_str(&crate::expr::wgsl::function(&model.energy, "ph_energy"));
        Ok(PortHamiltonianShape {
            states: n,
            stages: s,
            inputs: model.inputs,
            parameters: model.parameters.len(),
            max_iterations: plan.newton.max_iterations,
            recording: plan.recording,
            stage_flops: tape_flops(&model.stage),
            energy_flops: tape_flops(&model.energy),
            stage_loop_passes: tape_loop_passes(&model.stage),
            energy_loop_passes: tape_loop_passes(&model.energy),
            model_module,
        })
    }

    /// s·n, the Newton unknowns.
    pub fn unknowns(&self) -> usize {
        self.stages * self.states
    }

    /// Outputs of the stage tape: f (n), ∂f/∂x (n²), eᵀRe, Gᵀe (m).
    pub fn stage_outputs(&self) -> usize {
        let n = self.states;
        n + n * n + 1 + self.inputs
    }

    /// θ; at least one entry, so that the buffer is never empty.
    pub fn param_layout(&self) -> Layout {
        Layout::new("PARAM").field("theta", self.parameters.max(1))
    }

    pub fn state_layout(&self) -> Layout {
        let fields = Layout::new("STATE")
            .field("x", self.states)
            .field("carry", self.states)
            .field("energy", 1);
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

    pub fn constants_layout(&self) -> Layout {
        Layout::new("CONST")
            .field("h", 1)
            .field("a", self.stages * self.stages)
            .field("b", self.stages)
            .field("tolerance", 1)
            .field("nan", 2)
    }

    /// Floating-point operations per member-step, counted from the kernel with
    /// `COUNTED_NEWTON_ITERATIONS` Newton iterations (a function call counted as 30):
    /// per iteration s stage tapes, the residual (2s²n + 2sn), the matrix (2s²n²), the
    /// factorisation (⅔(sn)³) and the solve (2(sn)²), the update (3sn); then the final
    /// stage tapes, the outputs and dissipation (2s + 3sm), the update of x (2sn + 5n), H
    /// and the 8 Neumaier adds (4 each).
    pub fn flops_per_step(&self) -> usize {
        let (n, s, m) = (self.states, self.stages, self.inputs);
        let ns = self.unknowns();
        let iteration = s * self.stage_flops
            + 2 * s * s * n
            + 2 * s * n
            + 2 * s * s * n * n
            + 2 * ns * ns * ns / 3
            + 2 * ns * ns
            + 3 * ns;
        COUNTED_NEWTON_ITERATIONS * iteration
            + s * self.stage_flops
            + 2 * s
            + 3 * s * m
            + 2 * s * n
            + 5 * n
            + self.energy_flops
            + 32
    }

    /// Loop passes per step, an upper bound counted from the kernel: its `#for` loops are
    /// unrolled, so what loops is the step loop (one pass), the Newton loop (at most
    /// MAX_ITERATIONS passes and its exit) and `expr_powi` in the tapes: s stage tapes per
    /// Newton iteration and once more at the solution, and H once.
    pub fn loop_iterations_per_step(&self) -> usize {
        let evaluate = self.stages * self.stage_loop_passes;
        1 + (self.max_iterations + 1)
            + self.max_iterations * evaluate
            + evaluate
            + self.energy_loop_passes
    }

    /// The kernel variant of this shape.
    pub fn kernel(&self) -> KernelSource {
        let (n, s, m) = (self.states, self.stages, self.inputs);
        let flag = |on: bool| u32::from(on);
        KernelSource {
            name: "port_hamiltonian_step",
            body: PORT_HAMILTONIAN_STEP,
            modules: vec![
                (
                    "port_hamiltonian_model",
                    Cow::Owned(self.model_module.clone()),
                ),
                (
                    "port_hamiltonian_solver",
                    Cow::Owned(crate::kernels::dense_lu::wgsl_module(self.unknowns())),
                ),
            ],
            constants: vec![
                ("N", n as u32),
                ("S", s as u32),
                ("M", m as u32),
                ("NP", self.parameters as u32),
                ("NP_ARRAY", self.parameters.max(1) as u32),
                ("SM", (s * m) as u32),
                ("SM_ARRAY", (s * m).max(1) as u32),
                ("NS", self.unknowns() as u32),
                ("NV", (n + self.parameters + m) as u32),
                ("NVE", (n + self.parameters) as u32),
                ("STAGE_OUT", self.stage_outputs() as u32),
                (
                    "MAX_ITERATIONS",
                    self.max_iterations.min(u32::MAX as usize) as u32,
                ),
                ("TRAJECTORY", flag(self.recording.trajectory)),
                ("OUTPUTS", flag(self.recording.outputs)),
                ("ENERGY", flag(self.recording.energy)),
                ("UNROLL", 1),
            ],
            state: self.state_layout(),
            record: self.record_layout(),
            constants_layout: self.constants_layout(),
            params: self.param_layout(),
            members_per_workgroup: WORKGROUP_SIZE,
            loop_iterations_per_step: self.loop_iterations_per_step(),
            flops_per_step: self.flops_per_step(),
            // The stream's s·m inputs per step, in f64; θ is copied once per dispatch.
            bytes_per_step: 8 * s * m,
            step_multiple: 1,
            scratch: 0,
        }
    }
}
