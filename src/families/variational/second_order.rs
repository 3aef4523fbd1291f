//! The variational kernel's variant for initial-value problems of second-order Lagrangians:
//! `shaders/variational/second_order.wgsl`, one invocation per member doing what the
//! reference does ([`super::start::second_order_start`], then the march of
//! [`super::march`]): at the first step the start's two Newton solves (q_1 projected onto
//! the holonomic constraints, then (q_2 − q_1, μ_0) from the discrete equation at point 0
//! with its ghost points), then per step the Newton solve of the discrete equation at
//! point k for q_{k+2} ([`super::ivp::Marcher::step`] on windows of three points), the
//! Ostrogradsky energy of the step and, with a symmetry, the momentum map of the path.
//! The plan admits only holonomic constraints and no forces here.
//!
//! [`SecondOrderShape`] holds what a variant is specialised for (d, c_h, the parameters,
//! the Newton cap, the symmetry) and the generated module `variational_second_order_model`:
//! the tapes `vl_lagrangian`, `vl_holonomic`, `vl_symmetry` as straight-line WGSL and the
//! rule's window code of the boundary-value kernel (`window_terms` and `window_parts` over
//! a window of three points, in the order of [`super::discrete::Scratch::window`] and
//! [`super::discrete::Scratch::ostrogradsky_parts`]); the Newton matrix (d + c_h) is
//! factorised and solved by the module `variational_solver` ([`crate::kernels::dense_lu`],
//! nalgebra's order).
//!
//! Layouts: θ and the data q̇, q̈, q⃛ at t = 0 per member (`PARAM`); the state q_k and
//! q_{k+1} with their Kahan carries, Δ_k and Δ_{k−1}, p_k and π_{k+1}, the Ostrogradsky
//! parts of the window centred at t_k, μ of the last step, the last step's energy, the
//! status code, the Newton iterations, the residual maxima, the energy's and the momentum
//! map's drifts, the momentum map J_0 of the start and the engine's `status` (`STATE`);
//! per record the path, μ, the energy and the momentum map (`RECORD`); h, the Newton
//! tolerance, two NaNs and 2⁻¹⁰⁰ (`CONST`, as the first-order kernel's).

use std::borrow::Cow;
use std::fmt::Write;

use super::boundary::{MAX_WINDOW_UNKNOWNS, window_module};
use super::plan::VariationalPlan;
use super::rule::DiscreteRule;
use super::shape::{tape_flops, tape_loop_passes};
use crate::error::{Error, Result};
use crate::kernels::family::KernelSource;
use crate::kernels::layout::Layout;
use crate::kernels::wgsl::WORKGROUP_SIZE;

/// The kernel.
pub const VARIATIONAL_SECOND_ORDER: &str =
    include_str!("../../../shaders/variational/second_order.wgsl");

/// Newton iterations per step counted in the floating-point estimate.
const COUNTED_NEWTON_ITERATIONS: usize = 3;

/// What a second-order initial-value variant is specialised for.
#[derive(Debug, Clone, PartialEq)]
pub struct SecondOrderShape {
    pub d: usize,
    pub ch: usize,
    pub parameters: usize,
    pub max_iterations: usize,
    /// Whether the model names a symmetry (the momentum map is recorded).
    pub symmetry: bool,
    /// The central rule at the run's step.
    pub rule: DiscreteRule,
    /// Arithmetic operations and `expr_powi` loop passes of one evaluation of the
    /// Lagrangian's, the holonomic constraints' (0 without) and the symmetry's (0 without)
    /// tape.
    lagrangian_cost: (usize, usize),
    holonomic_cost: (usize, usize),
    symmetry_cost: (usize, usize),
    model_module: String,
}

impl SecondOrderShape {
    /// The shape of an initial-value `plan` of a second-order Lagrangian; an error naming
    /// `--backend` when its windows or Newton system are too large for the kernel's
    /// private arrays.
    pub fn of(plan: &VariationalPlan) -> Result<Self> {
        let model = &plan.model;
        if plan.is_boundary_value() || model.order != 2 {
            return Err(Error::invalid(
                "--backend",
                "the second-order marching kernel runs initial-value problems of second-order Lagrangians",
            ));
        }
        if model.window_count() > 0 || model.forces.is_some() {
            return Err(Error::invalid(
                "--backend",
                "second-order initial-value problems take holonomic constraints only and no forces",
            ));
        }
        let (d, ch) = (model.d(), model.holonomic_count());
        if 3 * d > MAX_WINDOW_UNKNOWNS || d + ch > super::shape::MAX_UNKNOWNS {
            return Err(Error::invalid(
                "--backend",
                format!(
                    "the variational second-order GPU kernel holds a window's 3d ≤ {MAX_WINDOW_UNKNOWNS} and d + c_h ≤ {} unknowns in registers; this run has d = {d}, c_h = {ch}; use --backend cpu",
                    super::shape::MAX_UNKNOWNS
                ),
            ));
        }
        let rule = plan.rule.clone();
        let mut module = String::from("#import math\n");
        module.push_str(&crate::expr::wgsl::helpers());
        module.push_str(&crate::expr::wgsl::function(
            &model.lagrangian,
            "vl_lagrangian",
        ));
        if ch > 0 {
            module.push_str(&crate::expr::wgsl::function(
                &model.holonomic,
                "vl_holonomic",
            ));
        }
        if let Some(tape) = &model.symmetry {
            module.push_str(&crate::expr::wgsl::function(tape, "vl_symmetry"));
        }
        module.push_str(&window_module(&rule, d, 0, model.jet(), 0, false, false));
        // 7/6 as the reference's f64 division gives it.
        writeln!(
            module,
            "const SEVEN_SIXTHS: real = real({:e});",
            7.0_f64 / 6.0
        )
        .unwrap();
        let cost = |tape: Option<&crate::expr::Tape>| {
            tape.map_or((0, 0), |tape| (tape_flops(tape), tape_loop_passes(tape)))
        };
        Ok(SecondOrderShape {
            d,
            ch,
            parameters: model.parameters.len(),
            max_iterations: plan.newton.max_iterations,
            symmetry: model.symmetry.is_some(),
            rule,
            lagrangian_cost: cost(Some(&model.lagrangian)),
            holonomic_cost: cost((ch > 0).then_some(&model.holonomic)),
            symmetry_cost: cost(model.symmetry.as_ref()),
            model_module: module,
        })
    }

    /// d + c_h, the Newton unknowns (Δ, μ).
    pub fn unknowns(&self) -> usize {
        self.d + self.ch
    }

    /// θ (at least one entry) and q̇, q̈, q⃛ at t = 0.
    pub fn param_layout(&self) -> Layout {
        Layout::new("PARAM")
            .field("theta", self.parameters.max(1))
            .field("data", 3 * self.d)
    }

    pub fn state_layout(&self) -> Layout {
        let d = self.d;
        Layout::new("STATE")
            .field("q", d)
            .field("carry", d)
            .field("ahead", d)
            .field("ahead_carry", d)
            .field("increment", d)
            .field("earlier", d)
            .field("p", d)
            .field("pending", d)
            .field("parts", 1 + 3 * d)
            .field("multipliers", self.ch)
            .field("step_energy", 1)
            .field("code", 1)
            .field("iterations", 1)
            .field("constraint_residual", 1)
            .field("equation_residual", 1)
            .field("energy_drift", 3)
            .field("momentum_drift", if self.symmetry { 3 } else { 0 })
            .field("start_momentum", usize::from(self.symmetry))
            .field("status", 1)
    }

    /// path (d), μ (c_h), the energy, the momentum map (with a symmetry).
    pub fn record_layout(&self) -> Layout {
        Layout::new("RECORD")
            .field("path", self.d)
            .field("multipliers", self.ch)
            .field("energy", 1)
            .field("momentum", usize::from(self.symmetry))
    }

    /// Loop passes of one Newton iteration's tape evaluations: two windows (the start's
    /// second solve; the march evaluates one), each the Lagrangian per evaluation, and
    /// three holonomic evaluations.
    fn iteration_passes(&self) -> usize {
        2 * self.rule.evaluations.len() * self.lagrangian_cost.1 + 3 * self.holonomic_cost.1
    }

    /// Loop passes per step, an upper bound counted from the kernel (its `#for` loops are
    /// unrolled): the step loop, the start's two Newton loops (at most MAX_ITERATIONS + 1
    /// passes and an exit each, the march's one of them), their tapes' `expr_powi` passes,
    /// and per step the Ostrogradsky parts (three windows at the start), the constraint
    /// check and two generators.
    pub fn loop_iterations_per_step(&self) -> usize {
        1 + 2 * (self.max_iterations + 2)
            + 2 * (self.max_iterations + 1) * self.iteration_passes()
            + 3 * (self.rule.evaluations.len() * self.lagrangian_cost.1)
            + self.holonomic_cost.1
            + 4 * self.symmetry_cost.1
    }

    /// Floating-point operations per member-step, counted from the kernel with
    /// COUNTED_NEWTON_ITERATIONS Newton iterations plus the final evaluation: per iteration
    /// the window terms (the Lagrangian per evaluation and its chain rule, about
    /// 4 (3d)²), two holonomic evaluations, the residual (4d + 4 d c_h), the factorisation
    /// (⅔ n³) and the solve (2n²), the update (4n); per step the Ostrogradsky parts and
    /// energy (the Lagrangian, 12d), the Kahan update (4d) and with a symmetry two
    /// generators and their products (2d each).
    pub fn flops_per_step(&self) -> usize {
        let (d, ch) = (self.d, self.ch);
        let n = self.unknowns();
        let wd = 3 * d;
        let evaluations = self.rule.evaluations.len();
        let iteration = evaluations * (self.lagrangian_cost.0 + 4 * wd * wd)
            + 2 * self.holonomic_cost.0
            + 4 * d
            + 4 * d * ch
            + 2 * n * n * n / 3
            + 2 * n * n
            + 4 * n;
        let symmetry = if self.symmetry {
            2 * (self.symmetry_cost.0 + 2 * d)
        } else {
            0
        };
        (COUNTED_NEWTON_ITERATIONS + 1) * iteration
            + self.lagrangian_cost.0
            + 12 * d
            + 4 * d
            + symmetry
    }

    /// The kernel variant of this shape.
    pub fn kernel(&self) -> KernelSource {
        let (d, ch) = (self.d, self.ch);
        let m = 3 * d;
        let vars = m + 1 + self.parameters;
        let arr = |v: usize| v.max(1) as u32;
        let n = self.unknowns();
        KernelSource {
            name: "variational_second_order",
            body: VARIATIONAL_SECOND_ORDER,
            modules: vec![
                (
                    "variational_second_order_model",
                    Cow::Owned(self.model_module.clone()),
                ),
                (
                    "variational_solver",
                    Cow::Owned(crate::kernels::dense_lu::wgsl_module(n)),
                ),
            ],
            constants: vec![
                ("D", d as u32),
                ("CW", 0),
                ("CH", ch as u32),
                ("CW_ARRAY", 1),
                ("CH_ARRAY", arr(ch)),
                ("NP", self.parameters as u32),
                ("NP_ARRAY", arr(self.parameters)),
                ("M", m as u32),
                ("NV", vars as u32),
                ("WD", m as u32),
                ("WD2", (m * m) as u32),
                ("CJ_ARRAY", 1),
                ("DD", (d * d) as u32),
                ("PARTS", (1 + 3 * d) as u32),
                ("OBS", 0),
                ("OBS_ARRAY", 1),
                ("NS", n as u32),
                ("NS_SQUARED", (n * n) as u32),
                ("CH_D", (ch * d) as u32),
                ("HOLONOMIC", u32::from(ch > 0)),
                ("HOLONOMIC_OUT", arr(ch + ch * d + ch * d * d)),
                (
                    "MAX_ITERATIONS",
                    self.max_iterations.min(u32::MAX as usize - 1) as u32,
                ),
                ("SYMMETRY", u32::from(self.symmetry)),
                ("UNROLL", 1),
            ],
            state: self.state_layout(),
            record: self.record_layout(),
            constants_layout: super::shape::constants_layout(),
            params: self.param_layout(),
            members_per_workgroup: WORKGROUP_SIZE,
            loop_iterations_per_step: self.loop_iterations_per_step(),
            flops_per_step: self.flops_per_step(),
            // Nothing is streamed per step: θ, the data and the state are read once per
            // dispatch.
            bytes_per_step: 0,
            step_multiple: 1,
            scratch: 0,
        }
    }
}
