//! The variational kernel's variants: `shaders/variational/step.wgsl`, one invocation per
//! member marching an initial-value problem with its Newton solve in registers, specialised
//! by [`VariationalShape`] (d, c_w, c_h, the parameters, the Newton cap, the symmetry,
//! the forces) and assembled with two generated modules:
//!
//! - `variational_model`: the model's tapes as straight-line WGSL ([`crate::expr::wgsl`]) —
//!   `vl_lagrangian` [L, ∇_z L, ∇²_z L], `vl_holonomic` [φ_h, ∂φ_h/∂q, ∂²φ_h/∂q²],
//!   `vl_window` [φ_w, ∂φ_w/∂z, ∂²φ_w/∂z²], `vl_forces` [f, ∂f/∂z] (generalised forces),
//!   `vl_energy` (E), `vl_symmetry` (ξ(q)) — and the rule's chain rule written out for the
//!   run's discrete Lagrangian ([`super::rule`]): `jet_<e>` (the jet of evaluation e over
//!   the window (q_k, q_k + Δ), as [`DiscreteRule::jet`] forms it), `window_terms` (the
//!   gradient of the augmented L_d with the Lagrange–d'Alembert forces (h/2) f at the
//!   constraint jet on both points, the block ∂²/∂q_k∂q_{k+1} of its Hessian, φ_w and its
//!   Jacobian, as [`super::discrete::Scratch::window`] accumulates them) and
//!   `step_energy`;
//! - `variational_solver`: the dense LU of the Newton matrix ([`crate::kernels::dense_lu`]), in
//!   nalgebra's order.
//!
//! Layouts: θ per member (`PARAM`); the state q, its Kahan carry, the momentum p, the guess
//! Δ of the next increment, the last multipliers, the last step's energy, the status code,
//! the Newton iterations, the residual maxima, the energy's and the momentum map's drift
//! (first, last, largest change) and the engine's `status` (the failed step) (`STATE`); per
//! record the path, the multipliers, the energy and the momentum map (`RECORD`); run
//! constants h, the Newton tolerance, two NaNs and 2⁻¹⁰⁰, from which the kernel builds the
//! smallest positive normal f64 (`CONST`).

use std::borrow::Cow;
use std::fmt::Write;

use super::plan::VariationalPlan;
use super::rule::{DiscreteRule, Evaluation};
use crate::error::{Error, Result};
use crate::expr::{Instr, Tape};
use crate::kernels::family::KernelSource;
use crate::kernels::layout::Layout;
use crate::kernels::wgsl::WORKGROUP_SIZE;

/// The kernel.
pub const VARIATIONAL_STEP: &str = include_str!("../../../shaders/variational/step.wgsl");

/// Largest d + c_w + c_h of the kernel: the Newton matrix is a private array of that size
/// squared, factorised by unrolled straight-line code (as the port-Hamiltonian kernel's,
/// whose limit and reasons it shares).
pub const MAX_UNKNOWNS: usize = 24;

/// Newton iterations per step counted in [`VariationalShape::flops_per_step`]: a typical
/// count at the default tolerance from the previous increment as the guess.
const COUNTED_NEWTON_ITERATIONS: usize = 3;

/// Floating-point operations counted per transcendental function call.
const FLOPS_PER_CALL: usize = 30;

/// What a variational kernel variant is specialised for.
#[derive(Debug, Clone, PartialEq)]
pub struct VariationalShape {
    /// d, c_w, c_h and the number of parameters.
    pub coordinates: usize,
    pub window_constraints: usize,
    pub holonomic_constraints: usize,
    pub parameters: usize,
    pub max_iterations: usize,
    /// Whether the model names a symmetry (the momentum map is recorded).
    pub symmetry: bool,
    /// Whether the model has generalised forces (`window_terms` adds (h/2) f and its
    /// Jacobian).
    pub forces: bool,
    /// The rule at the run's step: what `window_terms` is generated from, and what the twin
    /// walks.
    pub rule: DiscreteRule,
    /// Arithmetic and `expr_powi` loop passes of one Newton iteration's and one step's
    /// tape evaluations.
    iteration_flops: usize,
    step_flops: usize,
    iteration_loop_passes: usize,
    step_loop_passes: usize,
    /// The generated module `variational_model`.
    model_module: String,
}

/// Arithmetic operations of one evaluation of `tape`, a function call counted as
/// [`FLOPS_PER_CALL`].
pub(super) fn tape_flops(tape: &Tape) -> usize {
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
pub(super) fn tape_loop_passes(tape: &Tape) -> usize {
    tape.instructions()
        .iter()
        .map(|instr| match *instr {
            Instr::Powi(_, n) => (32 - n.unsigned_abs().leading_zeros()).max(1) as usize,
            _ => 0,
        })
        .sum()
}

/// A real literal of WGSL that reads back as `value` exactly in f64 (the shortest decimal).
fn literal(value: f64) -> String {
    format!("real({value:e})")
}

impl VariationalShape {
    /// The shape of `plan`, or an error naming `--backend` for a boundary-value problem (the
    /// banded solve of the whole path runs on the CPU) or a Newton system too large for a
    /// kernel's registers.
    pub fn of(plan: &VariationalPlan) -> Result<Self> {
        if plan.is_boundary_value() {
            return Err(Error::invalid(
                "--backend",
                "the marching kernel runs initial-value problems; boundary-value problems run on the boundary-value kernel (super::boundary)",
            ));
        }
        let model = &plan.model;
        let (d, cw, ch) = (model.d(), model.window_count(), model.holonomic_count());
        let unknowns = d + cw + ch;
        if unknowns > MAX_UNKNOWNS {
            return Err(Error::invalid(
                "--backend",
                format!(
                    "the variational GPU kernel solves for d + c_w + c_h ≤ {MAX_UNKNOWNS} unknowns in registers; this run has {d} + {cw} + {ch} = {unknowns}; use --backend cpu"
                ),
            ));
        }
        let energy = model
            .energy
            .as_ref()
            .expect("initial-value problems march first-order Lagrangians, which have an energy");
        let rule = plan.rule.clone();
        let mut model_module = String::from("#import math\n");
        model_module.push_str(&crate::expr::wgsl::helpers());
        model_module.push_str(&crate::expr::wgsl::function(
            &model.lagrangian,
            "vl_lagrangian",
        ));
        if ch > 0 {
            model_module.push_str(&crate::expr::wgsl::function(
                &model.holonomic,
                "vl_holonomic",
            ));
        }
        if cw > 0 {
            model_module.push_str(&crate::expr::wgsl::function(&model.window, "vl_window"));
        }
        model_module.push_str(&crate::expr::wgsl::function(energy, "vl_energy"));
        if let Some(symmetry) = &model.symmetry {
            model_module.push_str(&crate::expr::wgsl::function(symmetry, "vl_symmetry"));
        }
        if let Some(forces) = &model.forces {
            model_module.push_str(&crate::expr::wgsl::function(forces, "vl_forces"));
        }
        let forces = model.forces.is_some();
        model_module.push_str(&rule_module(&rule, d, cw, model.jet(), forces));
        let evaluations = rule.evaluations.len();
        let window_flops = if cw > 0 { tape_flops(&model.window) } else { 0 };
        let window_passes = if cw > 0 {
            tape_loop_passes(&model.window)
        } else {
            0
        };
        let (holonomic_flops, holonomic_passes) = if ch > 0 {
            (
                tape_flops(&model.holonomic),
                tape_loop_passes(&model.holonomic),
            )
        } else {
            (0, 0)
        };
        let (symmetry_flops, symmetry_passes) = model
            .symmetry
            .as_ref()
            .map_or((0, 0), |tape| (tape_flops(tape), tape_loop_passes(tape)));
        let (forces_flops, forces_passes) = model
            .forces
            .as_ref()
            .map_or((0, 0), |tape| (tape_flops(tape), tape_loop_passes(tape)));
        Ok(VariationalShape {
            coordinates: d,
            window_constraints: cw,
            holonomic_constraints: ch,
            parameters: model.parameters.len(),
            max_iterations: plan.newton.max_iterations,
            symmetry: model.symmetry.is_some(),
            forces,
            rule,
            iteration_flops: evaluations * tape_flops(&model.lagrangian)
                + window_flops
                + holonomic_flops
                + forces_flops,
            step_flops: holonomic_flops + tape_flops(energy) + symmetry_flops,
            iteration_loop_passes: evaluations * tape_loop_passes(&model.lagrangian)
                + window_passes
                + holonomic_passes
                + forces_passes,
            step_loop_passes: holonomic_passes + tape_loop_passes(energy) + symmetry_passes,
            model_module,
        })
    }

    /// d + c_w + c_h, the Newton unknowns (Δ, λ, μ).
    pub fn unknowns(&self) -> usize {
        self.coordinates + self.window_constraints + self.holonomic_constraints
    }

    /// c_w + c_h, the multipliers a step records.
    pub fn multipliers(&self) -> usize {
        self.window_constraints + self.holonomic_constraints
    }

    /// θ; at least one entry, so that the buffer is never empty.
    pub fn param_layout(&self) -> Layout {
        Layout::new("PARAM").field("theta", self.parameters.max(1))
    }

    pub fn state_layout(&self) -> Layout {
        let d = self.coordinates;
        Layout::new("STATE")
            .field("q", d)
            .field("carry", d)
            .field("p", d)
            .field("guess", d)
            .field("multipliers", self.multipliers())
            .field("step_energy", 1)
            .field("code", 1)
            .field("iterations", 1)
            .field("constraint_residual", 1)
            .field("equation_residual", 1)
            .field("energy_drift", 3)
            .field("momentum_drift", if self.symmetry { 3 } else { 0 })
            .field("status", 1)
    }

    /// path (d), multipliers (c_w + c_h), the energy, the momentum map (with a symmetry).
    pub fn record_layout(&self) -> Layout {
        Layout::new("RECORD")
            .field("path", self.coordinates)
            .field("multipliers", self.multipliers())
            .field("energy", 1)
            .field("momentum", usize::from(self.symmetry))
    }

    pub fn constants_layout(&self) -> Layout {
        constants_layout()
    }

    /// Floating-point operations per member-step, counted from the kernel with
    /// `COUNTED_NEWTON_ITERATIONS` Newton iterations plus the final evaluation (a function
    /// call counted as 30): per iteration the tapes (the forces' included), the chain rule
    /// (about 6d² per evaluation, 8 d c_w + 6 d² c_w for the window constraints and
    /// 4d + 4d² for the forces), the residual (4d + 4 d c_h), the matrix (d (c_w + c_h)),
    /// the factorisation (⅔ n³) and the solve (2n²), the update (4n); per step the tapes
    /// at q_k, E, ξ and the Kahan update (4d).
    pub fn flops_per_step(&self) -> usize {
        let (d, cw, ch) = (
            self.coordinates,
            self.window_constraints,
            self.holonomic_constraints,
        );
        let n = self.unknowns();
        let evaluations = self.rule.evaluations.len();
        let forces = if self.forces { 4 * d + 4 * d * d } else { 0 };
        let iteration = self.iteration_flops
            + forces
            + evaluations * 6 * d * d
            + 8 * d * cw
            + 6 * d * d * cw
            + 4 * d
            + 4 * d * ch
            + d * (cw + ch)
            + 2 * n * n * n / 3
            + 2 * n * n
            + 4 * n;
        (COUNTED_NEWTON_ITERATIONS + 1) * iteration + self.step_flops + 4 * d + 2 * d
    }

    /// Loop passes per step, an upper bound counted from the kernel: its `#for` loops are
    /// unrolled, so what loops is the step loop (one pass), the Newton loop (at most
    /// MAX_ITERATIONS + 1 passes and its exit) and `expr_powi` in the tapes.
    pub fn loop_iterations_per_step(&self) -> usize {
        1 + (self.max_iterations + 2)
            + (self.max_iterations + 1) * self.iteration_loop_passes
            + self.step_loop_passes
    }

    /// The kernel variant of this shape.
    pub fn kernel(&self) -> KernelSource {
        let (d, cw, ch) = (
            self.coordinates,
            self.window_constraints,
            self.holonomic_constraints,
        );
        let jet = 2 * d;
        let vars = jet + 1 + self.parameters;
        let outputs = |count: usize| count.max(1) as u32;
        KernelSource {
            name: "variational_step",
            body: VARIATIONAL_STEP,
            modules: vec![
                ("variational_model", Cow::Owned(self.model_module.clone())),
                (
                    "variational_solver",
                    Cow::Owned(crate::kernels::dense_lu::wgsl_module(self.unknowns())),
                ),
            ],
            constants: vec![
                ("D", d as u32),
                ("CW", cw as u32),
                ("CH", ch as u32),
                ("CW_ARRAY", cw.max(1) as u32),
                ("CH_ARRAY", ch.max(1) as u32),
                ("C", (cw + ch) as u32),
                ("C_ARRAY", (cw + ch).max(1) as u32),
                ("NP", self.parameters as u32),
                ("NP_ARRAY", self.parameters.max(1) as u32),
                ("M", jet as u32),
                ("NV", vars as u32),
                ("NS", self.unknowns() as u32),
                ("NS_SQUARED", (self.unknowns() * self.unknowns()) as u32),
                ("CH_D", (ch * d) as u32),
                ("HOLONOMIC", u32::from(ch > 0)),
                ("HOLONOMIC_OUT", outputs(ch + ch * d + ch * d * d)),
                (
                    "MAX_ITERATIONS",
                    self.max_iterations.min(u32::MAX as usize - 1) as u32,
                ),
                ("SYMMETRY", u32::from(self.symmetry)),
                ("UNROLL", 1),
            ],
            state: self.state_layout(),
            record: self.record_layout(),
            constants_layout: self.constants_layout(),
            params: self.param_layout(),
            members_per_workgroup: WORKGROUP_SIZE,
            loop_iterations_per_step: self.loop_iterations_per_step(),
            flops_per_step: self.flops_per_step(),
            // Nothing is streamed per step: θ and the state are read once per dispatch.
            bytes_per_step: 0,
            step_multiple: 1,
            scratch: 0,
        }
    }
}

/// The run constants of the marching kernels: h, the Newton tolerance, two NaNs and
/// 2⁻¹⁰⁰.
pub(super) fn constants_layout() -> Layout {
    Layout::new("CONST")
        .field("h", 1)
        .field("tolerance", 1)
        .field("nan", 2)
        .field("tiny", 1)
}

/// Σ_i a\[i\]\[b\], the weight of q_k in jet block b of `evaluation` (as [`DiscreteRule::jet`]
/// sums it).
pub fn block_sum(evaluation: &Evaluation, b: usize) -> f64 {
    evaluation.coefficients.iter().map(|a| a[b]).sum()
}

/// The generated rule code of a first-order rule over d coordinates with c_w window
/// constraints and jet size m = 2d: one `jet_<e>` per evaluation and `jet_c` for the
/// constraint point, `window_terms` and `step_energy`. Every accumulation runs in the order
/// of [`super::discrete::Scratch::window`]: per evaluation, for each point i and jet block b
/// with a\[i\]\[b\] ≠ 0, g_(i,c) += (h w a) ∇_b L_c; for the block (0, 1) of the Hessian,
/// H_(0,c),(1,c') += (h w a a') ∇²L; then, with `forces`, f and ∂f/∂z at the constraint
/// jet: g_(i,c) += (h/2) f_c for both points and H_(0,c),(1,c') += ((h/2) a) ∂f_c/∂z_(b,c')
/// over the blocks b of point 1 with a = a\[1\]\[b\] ≠ 0; then per window constraint j its
/// Jacobian row (0 + a ∇φ_j), g += (h λ_j) row, and, when h λ_j ≠ 0, its Hessian block.
fn rule_module(rule: &DiscreteRule, d: usize, cw: usize, m: usize, forces: bool) -> String {
    let n = 2 * d;
    let mut out = String::from("// ---- the rule (src/families/variational/shape.rs)\n");
    let jet = |out: &mut String, name: &str, evaluation: &Evaluation| {
        writeln!(
            out,
            "fn {name}(t_k: real, h: real) -> array<real, NV> {{\n    var v: array<real, NV>;"
        )
        .unwrap();
        let blocks = evaluation.coefficients[0].len();
        for b in 0..blocks {
            let sum = literal(block_sum(evaluation, b));
            for c in 0..d {
                writeln!(out, "    v[{}] = {sum} * q[{c}];", b * d + c).unwrap();
            }
        }
        for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
            for (b, &a) in coefficients.iter().enumerate() {
                if a == 0.0 {
                    continue;
                }
                for c in 0..d {
                    let offset = if i == 0 {
                        "real(0.0)".to_string()
                    } else {
                        format!("delta[{c}]")
                    };
                    let e = b * d + c;
                    writeln!(out, "    v[{e}] = v[{e}] + {} * {offset};", literal(a)).unwrap();
                }
            }
        }
        writeln!(out, "    v[{m}] = t_k + {} * h;", literal(evaluation.time)).unwrap();
        writeln!(
            out,
            "    #for p in NP\n        v[{} + p] = theta[p];\n    #end\n    return v;\n}}",
            m + 1
        )
        .unwrap();
    };
    for (e, evaluation) in rule.evaluations.iter().enumerate() {
        jet(&mut out, &format!("jet_{e}"), evaluation);
    }
    jet(&mut out, "jet_c", &rule.constraint_point);
    out.push_str("fn window_terms(t_k: real, h: real) {\n");
    for k in 0..n {
        writeln!(out, "    gw[{k}] = real(0.0);").unwrap();
    }
    for k in 0..d * d {
        writeln!(out, "    hw[{k}] = real(0.0);").unwrap();
    }
    for (e, evaluation) in rule.evaluations.iter().enumerate() {
        writeln!(
            out,
            "    {{\n    let out = vl_lagrangian(jet_{e}(t_k, h));\n    let scale = h * {};",
            literal(evaluation.weight)
        )
        .unwrap();
        for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
            for (b, &a) in coefficients.iter().enumerate() {
                if a == 0.0 {
                    continue;
                }
                writeln!(out, "    {{\n    let f = scale * {};", literal(a)).unwrap();
                for c in 0..d {
                    let g = i * d + c;
                    writeln!(out, "    gw[{g}] = gw[{g}] + f * out[{}];", 1 + b * d + c).unwrap();
                }
                out.push_str("    }\n");
            }
        }
        hessian_block(&mut out, evaluation, d, m, "scale", 1 + m);
        out.push_str("    }\n");
    }
    if forces {
        // Lagrange–d'Alembert: (h/2) f at the constraint jet on both points, and its
        // Jacobian's block (0, 1).
        out.push_str(
            "    {\n    let out = vl_forces(jet_c(t_k, h));\n    let half = real(0.5) * h;\n",
        );
        for i in 0..2 {
            for c in 0..d {
                let g = i * d + c;
                writeln!(out, "    gw[{g}] = gw[{g}] + half * out[{c}];").unwrap();
            }
        }
        for (b, &a) in rule.constraint_point.coefficients[1].iter().enumerate() {
            if a == 0.0 {
                continue;
            }
            writeln!(out, "    {{\n    let f = half * {};", literal(a)).unwrap();
            for c in 0..d {
                for c2 in 0..d {
                    let k = c * d + c2;
                    writeln!(
                        out,
                        "    hw[{k}] = hw[{k}] + f * out[{}];",
                        d + c * m + b * d + c2
                    )
                    .unwrap();
                }
            }
            out.push_str("    }\n");
        }
        out.push_str("    }\n");
    }
    if cw > 0 {
        out.push_str("    {\n    let out = vl_window(jet_c(t_k, h));\n");
        let evaluation = &rule.constraint_point;
        for j in 0..cw {
            writeln!(
                out,
                "    {{\n    phiw[{j}] = out[{j}];\n    var row: array<real, {n}>;"
            )
            .unwrap();
            for k in 0..n {
                writeln!(out, "    row[{k}] = real(0.0);").unwrap();
            }
            for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
                for (b, &a) in coefficients.iter().enumerate() {
                    if a == 0.0 {
                        continue;
                    }
                    for c in 0..d {
                        let k = i * d + c;
                        writeln!(
                            out,
                            "    row[{k}] = row[{k}] + {} * out[{}];",
                            literal(a),
                            cw + j * m + b * d + c
                        )
                        .unwrap();
                    }
                }
            }
            for k in 0..n {
                writeln!(out, "    jw[{}] = row[{k}];", j * n + k).unwrap();
            }
            writeln!(out, "    let weight = h * lambda[{j}];").unwrap();
            for k in 0..n {
                writeln!(out, "    gw[{k}] = gw[{k}] + weight * row[{k}];").unwrap();
            }
            out.push_str("    if (weight != real(0.0)) {\n");
            hessian_block(
                &mut out,
                evaluation,
                d,
                m,
                "weight",
                cw + cw * m + j * m * m,
            );
            out.push_str("    }\n    }\n");
        }
        out.push_str("    }\n");
    }
    out.push_str("}\n");
    out.push_str("fn step_energy(t_k: real, h: real) -> real {\n    return vl_energy(jet_c(t_k, h))[0];\n}\n");
    out
}

/// hw_(c, c') += (s a a') out[base + (b d + c) m + b' d + c'] over the blocks b of point 0
/// and b' of point 1 with nonzero coefficients (the block (0, 1) of `chain_hessian`).
fn hessian_block(
    out: &mut String,
    evaluation: &Evaluation,
    d: usize,
    m: usize,
    scale: &str,
    base: usize,
) {
    for (b, &a) in evaluation.coefficients[0].iter().enumerate() {
        if a == 0.0 {
            continue;
        }
        for (b2, &a2) in evaluation.coefficients[1].iter().enumerate() {
            if a2 == 0.0 {
                continue;
            }
            writeln!(
                out,
                "    {{\n    let f = {scale} * {} * {};",
                literal(a),
                literal(a2)
            )
            .unwrap();
            for c in 0..d {
                for c2 in 0..d {
                    let k = c * d + c2;
                    writeln!(
                        out,
                        "    hw[{k}] = hw[{k}] + f * out[{}];",
                        base + (b * d + c) * m + b2 * d + c2
                    )
                    .unwrap();
                }
            }
            out.push_str("    }\n");
        }
    }
}
