//! The variational kernel for boundary-value problems: `shaders/variational/boundary.wgsl`,
//! one invocation per member solving the member's whole discrete path as the reference
//! does ([`super::bvp::BoundarySolver::solve`]): the same guess, the same assembly of the
//! banded Newton system, the same banded LU with partial pivoting ([`super::banded`]), the
//! same stopping rule and cap; then the action, the energies and the values the records
//! read. The banded matrix and the vectors of a member live in its region of the engine's
//! per-member scratch buffer ([`KernelSource::scratch`]).
//!
//! [`BoundaryShape`] holds what the kernel is specialised for: the sizes, the run-wide
//! layout of the unknowns (the knots sit at the same grid points in every member), the band
//! and the generated module `variational_boundary_model` — the model's tapes as
//! straight-line WGSL (the generalised forces' [f, ∂f/∂z] as `vl_forces` where the model
//! has them) and the rule's jets and chain rule for a window of r + 1 points, written in
//! the order of [`super::discrete::Scratch::window`].
//!
//! Layouts: θ, the prescribed points (start, the knots in grid order, end) and for order 2
//! the clamped velocities per member (`PARAM`); the status code, the Newton iterations,
//! the residuals, the action, the energy's drift, the last point, the first row of the
//! path, of the multipliers and (order 2) of the observables, and the engine's `status`
//! (`STATE`); per record the path, the multipliers, the energy and the observables
//! (`RECORD`); h, the Newton tolerance, two NaNs, 2⁻¹⁰⁰, the unknowns' offsets per slot,
//! the prescribed index of each grid point and the grid index of each prescribed point
//! (`CONST`). Scratch per member: x, the residual, the row magnitudes, the right-hand side
//! (the update) and the band (n (2 kl + ku + 1)).

use std::borrow::Cow;
use std::fmt::Write;

use super::bvp::BoundaryData;
use super::plan::{MemberProblem, VariationalPlan};
use super::rule::{DiscreteRule, Evaluation};
use super::shape::{block_sum, tape_flops, tape_loop_passes};
use super::solve::PROJECTION_STEPS;
use crate::error::{Error, Result};
use crate::kernels::dense_lu;
use crate::kernels::family::KernelSource;
use crate::kernels::layout::Layout;
use crate::kernels::wgsl::WORKGROUP_SIZE;

/// The kernel.
pub const VARIATIONAL_BOUNDARY: &str = include_str!("../../../shaders/variational/boundary.wgsl");

/// Largest window unknowns (r + 1) d and holonomic constraints of the kernel: its window
/// terms are private arrays of (r + 1)² d² entries.
pub const MAX_WINDOW_UNKNOWNS: usize = 12;

/// Newton iterations counted in the floating-point estimate.
const COUNTED_NEWTON_ITERATIONS: usize = 4;

/// What a boundary-value kernel variant is specialised for.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryShape {
    pub d: usize,
    pub cw: usize,
    pub ch: usize,
    pub parameters: usize,
    /// r: the order of the Lagrangian; a window holds r + 1 points.
    pub order: usize,
    /// N.
    pub steps: usize,
    /// Observables per window; whether the energy of every step is recorded (order 1: E at
    /// the step's midpoint jet; order 2: the Ostrogradsky energy of the windows centred at
    /// its ends); whether the model names a symmetry (the momentum map of every step).
    pub observables: usize,
    pub energy: bool,
    pub symmetry: bool,
    pub max_iterations: usize,
    pub rule: DiscreteRule,
    /// Offsets of each slot's unknowns (slots + 1 entries); the slot of grid point k is
    /// k + r − 1.
    pub offsets: Vec<usize>,
    /// Per grid point 0 … N: its index among the prescribed points, or `prescribed` when
    /// it is free.
    pub fixed: Vec<usize>,
    /// Per prescribed point (start, knots, end): its grid index.
    pub anchors: Vec<usize>,
    pub kl: usize,
    pub ku: usize,
    /// Whether the model has generalised forces (`window_terms` adds (h/2) f and its
    /// Jacobian).
    pub forces: bool,
    /// Arithmetic operations and `expr_powi` loop passes of one evaluation of the forces'
    /// tape (0 without forces).
    forces_flops: usize,
    forces_passes: usize,
    /// Arithmetic operations and `expr_powi` loop passes of one evaluation of the
    /// Lagrangian's, the window constraints' (0 without), the energy's (order 1) and the
    /// symmetry's tape (0 without).
    lagrangian_cost: (usize, usize),
    window_cost: (usize, usize),
    energy_cost: (usize, usize),
    symmetry_cost: (usize, usize),
    model_module: String,
}

impl BoundaryShape {
    /// The shape of a boundary-value `plan`; an error naming `--backend` when its windows
    /// are too large for the kernel's private arrays.
    pub fn of(plan: &VariationalPlan) -> Result<Self> {
        let MemberProblem::BoundaryValue(data) = &plan.nominal.problem else {
            return Err(Error::invalid(
                "--backend",
                "the boundary-value kernel solves boundary-value problems",
            ));
        };
        let model = &plan.model;
        let (d, cw, ch) = (model.d(), model.window_count(), model.holonomic_count());
        let order = model.order;
        if (order + 1) * d > MAX_WINDOW_UNKNOWNS || ch > MAX_WINDOW_UNKNOWNS {
            return Err(Error::invalid(
                "--backend",
                format!(
                    "the variational boundary-value GPU kernel holds a window's (r + 1) d ≤ {MAX_WINDOW_UNKNOWNS} unknowns in registers; this run has {} (r = {order}, d = {d}); use --backend cpu",
                    (order + 1) * d
                ),
            ));
        }
        let n = plan.grid.steps;
        let slots = n + 1 + 2 * (order - 1);
        let first = order - 1;
        let mut anchors = vec![0];
        anchors.extend(data.knots.iter().map(|(k, _)| *k));
        anchors.push(n);
        let prescribed = anchors.len();
        let mut fixed = vec![prescribed; n + 1];
        for (p, &k) in anchors.iter().enumerate() {
            fixed[k] = p;
        }
        let windows = if order == 1 { n } else { n + 1 };
        let mut offsets = Vec::with_capacity(slots + 1);
        let mut at = 0;
        for s in 0..slots {
            offsets.push(at);
            let point = s.checked_sub(first).filter(|&k| k <= n);
            let has_mu = ch > 0 && point.is_some_and(|k| fixed[k] == prescribed);
            let has_lambda = cw > 0 && s.checked_sub(first).is_some_and(|j| j < windows);
            at += d + if has_mu { ch } else { 0 } + if has_lambda { cw } else { 0 };
        }
        offsets.push(at);
        // The band, as the reference sizes it.
        let (mut kl, mut ku) = (0, 0);
        for s in 0..slots {
            let (row_start, row_end) = (offsets[s], offsets[s + 1]);
            let col_start = offsets[s.saturating_sub(order + 1)];
            let col_end = offsets[(s + order + 2).min(slots)];
            kl = kl.max(row_end - 1 - col_start.min(row_end - 1));
            ku = ku.max(col_end - 1 - row_start);
        }
        let observables = model.observables.n_outputs();
        let energy = model.energy.is_some() || order == 2;
        let symmetry = model.symmetry.is_some();
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
        if cw > 0 {
            module.push_str(&crate::expr::wgsl::function(&model.window, "vl_window"));
        }
        if let Some(tape) = &model.energy {
            module.push_str(&crate::expr::wgsl::function(tape, "vl_energy"));
        }
        if observables > 0 {
            module.push_str(&crate::expr::wgsl::function(
                &model.observables,
                "vl_observables",
            ));
        }
        if let Some(forces) = &model.forces {
            module.push_str(&crate::expr::wgsl::function(forces, "vl_forces"));
        }
        if let Some(tape) = &model.symmetry {
            module.push_str(&crate::expr::wgsl::function(tape, "vl_symmetry"));
        }
        let forces = model.forces.is_some();
        let cost = |tape: Option<&crate::expr::Tape>| {
            tape.map_or((0, 0), |tape| (tape_flops(tape), tape_loop_passes(tape)))
        };
        let (forces_flops, forces_passes) = cost(model.forces.as_ref());
        module.push_str(&window_module(
            &rule,
            d,
            cw,
            model.jet(),
            observables,
            model.energy.is_some(),
            forces,
        ));
        if ch > 0 {
            module.push_str(
                &dense_lu::wgsl_module(ch)
                    .replace("fn factorise", "fn gram_factorise")
                    .replace("fn solve", "fn gram_solve")
                    .replace("matrix[", "gram[")
                    .replace("rhs[", "gram_rhs[")
                    .replace("pivot[", "gram_pivot["),
            );
        }
        Ok(BoundaryShape {
            d,
            cw,
            ch,
            parameters: model.parameters.len(),
            order,
            steps: n,
            observables,
            energy,
            symmetry,
            max_iterations: plan.newton.max_iterations,
            rule,
            offsets,
            fixed,
            anchors,
            kl,
            ku,
            forces,
            forces_flops,
            forces_passes,
            lagrangian_cost: cost(Some(&model.lagrangian)),
            window_cost: cost((cw > 0).then_some(&model.window)),
            energy_cost: cost(model.energy.as_ref()),
            symmetry_cost: cost(model.symmetry.as_ref()),
            model_module: module,
        })
    }

    /// Point slots, ghosts included.
    pub fn slots(&self) -> usize {
        self.offsets.len() - 1
    }

    /// n, the unknowns.
    pub fn unknowns(&self) -> usize {
        self.offsets[self.slots()]
    }

    /// 2 kl + ku + 1, the entries of a row of the band.
    pub fn width(&self) -> usize {
        2 * self.kl + self.ku + 1
    }

    /// Windows of the path: N (order 1) or N + 1 (order 2, centred at every point).
    pub fn windows(&self) -> usize {
        if self.order == 1 {
            self.steps
        } else {
            self.steps + 1
        }
    }

    /// c_w + c_h.
    pub fn multipliers(&self) -> usize {
        self.cw + self.ch
    }

    /// Start, knots, end.
    pub fn prescribed(&self) -> usize {
        self.anchors.len()
    }

    /// Offsets of x, the residual, the magnitudes, the right-hand side and the band in a
    /// member's scratch, and its size.
    pub fn scratch_offsets(&self) -> [usize; 6] {
        let n = self.unknowns();
        [0, n, 2 * n, 3 * n, 4 * n, 4 * n + n * self.width()]
    }

    pub fn param_layout(&self) -> Layout {
        Layout::new("PARAM")
            .field("theta", self.parameters.max(1))
            .field("prescribed", self.prescribed() * self.d)
            .field("velocities", if self.order == 2 { 2 * self.d } else { 0 })
    }

    pub fn state_layout(&self) -> Layout {
        Layout::new("STATE")
            .field("code", 1)
            .field("iterations", 1)
            .field("constraint_residual", 1)
            .field("equation_residual", 1)
            .field("action", 1)
            .field("energy_drift", if self.energy { 3 } else { 0 })
            .field("momentum_drift", if self.symmetry { 3 } else { 0 })
            .field("q", self.d)
            .field("start_path", self.d)
            .field("start_multipliers", self.multipliers())
            .field(
                "start_observables",
                if self.order == 2 { self.observables } else { 0 },
            )
            .field("status", 1)
    }

    pub fn record_layout(&self) -> Layout {
        Layout::new("RECORD")
            .field("path", self.d)
            .field("multipliers", self.multipliers())
            .field("energy", usize::from(self.energy))
            .field("momentum", usize::from(self.symmetry))
            .field("observables", self.observables)
    }

    pub fn constants_layout(&self) -> Layout {
        Layout::new("CONST")
            .field("h", 1)
            .field("tolerance", 1)
            .field("nan", 2)
            .field("tiny", 1)
            .field("offsets", self.slots() + 1)
            .field("fixed", self.steps + 1)
            .field("anchors", self.prescribed())
    }

    /// The constants buffer of this shape at step h.
    pub fn constants(&self, h: f64, tolerance: f64) -> Vec<f64> {
        let mut values = vec![h, tolerance, f64::NAN, f64::NAN, super::gpu::TINY_FACTOR];
        values.extend(self.offsets.iter().map(|&v| v as f64));
        values.extend(self.fixed.iter().map(|&v| v as f64));
        values.extend(self.anchors.iter().map(|&v| v as f64));
        values
    }

    /// A member's parameters as the kernel reads them.
    pub fn pack(&self, parameters: &[f64], data: &BoundaryData, field: &str, out: &mut [f64]) {
        let d = self.d;
        match field {
            "theta" => out[..parameters.len()].copy_from_slice(parameters),
            "prescribed" => {
                out[..d].copy_from_slice(&data.start_q);
                for (p, (_, q)) in data.knots.iter().enumerate() {
                    out[(p + 1) * d..(p + 2) * d].copy_from_slice(q);
                }
                out[(self.prescribed() - 1) * d..].copy_from_slice(&data.end_q);
            }
            "velocities" if self.order == 2 => {
                out[..d].copy_from_slice(&data.start_qd);
                out[d..].copy_from_slice(&data.end_qd);
            }
            _ => {}
        }
    }

    /// Loop passes of one Newton iteration: zeroing the band and the vectors (n), the
    /// windows of the assembly (each with the `expr_powi` passes of its forces' tape) and
    /// its points, the finite check and copy of the residual (n), the factorisation and the
    /// back substitution (2n), the two update loops over the slots, the iteration itself.
    fn iteration_passes(&self) -> usize {
        let n = self.unknowns();
        4 * n + self.windows() * (1 + self.forces_passes) + self.steps + 1 + 2 * self.slots() + 3
    }

    /// The `expr_powi` loop passes and the floating-point operations of one step's
    /// outputs, which the drifts and the records each evaluate once: the energy (order 1,
    /// its tape; order 2, the Lagrangian at the constraint jets of two windows and the
    /// Ostrogradsky sum, about 12 d; (0, 0) without) and the momentum map (r windows'
    /// terms, each the Lagrangian per evaluation with its chain rule, about
    /// 4 ((r + 1) d)², the window constraints' and the forces' tapes, and r generators
    /// ξ with their dot products, 2d; (0, 0) without a symmetry).
    fn step_output_costs(&self) -> [(usize, usize); 2] {
        let (d, r) = (self.d, self.order);
        let wd = (r + 1) * d;
        let evaluations = self.rule.evaluations.len();
        let (lagrangian_flops, lagrangian_passes) = self.lagrangian_cost;
        let energy = match (self.energy, r) {
            (false, _) => (0, 0),
            (true, 2) => (2 * lagrangian_passes, 2 * lagrangian_flops + 12 * d),
            (true, _) => (self.energy_cost.1, self.energy_cost.0),
        };
        let momentum = if self.symmetry {
            let forces = if self.forces {
                self.forces_flops + 2 * wd + 2 * wd * wd
            } else {
                0
            };
            (
                r * (evaluations * lagrangian_passes
                    + self.window_cost.1
                    + self.forces_passes
                    + self.symmetry_cost.1),
                r * (evaluations * (lagrangian_flops + 4 * wd * wd)
                    + self.window_cost.0
                    + forces
                    + self.symmetry_cost.0
                    + 2 * d),
            )
        } else {
            (0, 0)
        };
        [energy, momentum]
    }

    /// Loop passes of the whole solve and its outputs, an upper bound counted from the
    /// kernel: zeroing x, the guess (each free point projected in at most
    /// PROJECTION_STEPS + 1 passes), MAX_ITERATIONS iterations, the final assembly (its
    /// windows with their forces' passes) and its maxima, the energies' and the momentum
    /// maps' drifts, the action and one record per step (each with its step's outputs,
    /// `step_output_costs`).
    pub fn loop_passes(&self) -> usize {
        let n = self.unknowns();
        let points = self.steps + 1;
        let [energy, momentum] = self.step_output_costs();
        let drift = |present: bool, passes: usize| usize::from(present) * (1 + passes);
        n + points * (PROJECTION_STEPS + 2)
            + self.max_iterations * self.iteration_passes()
            + 2 * n
            + self.windows() * (1 + self.forces_passes)
            + points
            + self.steps * drift(self.energy, energy.0)
            + self.steps * drift(self.symmetry, momentum.0)
            + self.windows()
            + self.steps * (1 + energy.0 + momentum.0)
            + 16
    }

    /// Floating-point operations of the whole solve (COUNTED_NEWTON_ITERATIONS
    /// iterations): per iteration the band's factorisation n kl (kl + ku) · 2 and the
    /// window terms (about 4 ((r + 1) d)² per window and evaluation; with forces, per
    /// window their tape and their chain rule, 2 (r + 1) d + 2 ((r + 1) d)²); then each
    /// step's outputs twice (the drifts and the records, `step_output_costs`).
    fn flops(&self) -> usize {
        let n = self.unknowns();
        let wd = (self.order + 1) * self.d;
        let forces = if self.forces {
            self.forces_flops + 2 * wd + 2 * wd * wd
        } else {
            0
        };
        let iteration = 2 * n * self.kl * (self.kl + self.ku)
            + 2 * n * (2 * self.kl + self.ku)
            + self.windows() * (4 * wd * wd * self.rule.evaluations.len() + forces);
        let [energy, momentum] = self.step_output_costs();
        COUNTED_NEWTON_ITERATIONS * iteration + 2 * self.steps * (energy.1 + momentum.1)
    }

    /// The kernel variant of this shape. The whole solve runs in the dispatch that starts
    /// at step 0, so dispatch windows are whole paths (`step_multiple` = N) where the
    /// record slots allow, and the loop passes and flops of the solve are spread over its
    /// N steps.
    pub fn kernel(&self) -> KernelSource {
        let (d, cw, ch) = (self.d, self.cw, self.ch);
        let w = self.order + 1;
        let m = w * d;
        let vars = m + 1 + self.parameters;
        let arr = |v: usize| v.max(1) as u32;
        let scratch = self.scratch_offsets();
        let steps = self.steps.max(1);
        KernelSource {
            name: "variational_boundary",
            body: VARIATIONAL_BOUNDARY,
            modules: vec![(
                "variational_boundary_model",
                Cow::Owned(self.model_module.clone()),
            )],
            constants: vec![
                ("D", d as u32),
                ("CW", cw as u32),
                ("CH", ch as u32),
                ("CW_ARRAY", arr(cw)),
                ("CH_ARRAY", arr(ch)),
                ("C", (cw + ch) as u32),
                ("NP", self.parameters as u32),
                ("NP_ARRAY", arr(self.parameters)),
                ("M", m as u32),
                ("NV", vars as u32),
                ("W", w as u32),
                ("WD", (w * d) as u32),
                ("WD2", (w * d * w * d) as u32),
                ("CJ_ARRAY", arr(cw * w * d)),
                ("ORDER", self.order as u32),
                ("FIRST", (self.order - 1) as u32),
                ("STEPS", self.steps as u32),
                ("SLOTS", self.slots() as u32),
                ("WINDOWS", self.windows() as u32),
                ("PRESCRIBED", self.prescribed() as u32),
                ("UNKNOWNS", self.unknowns() as u32),
                ("KL", self.kl as u32),
                ("KU", self.ku as u32),
                ("KLKU", (self.kl + self.ku) as u32),
                ("KLKU1", (self.kl + self.ku + 1) as u32),
                ("DD", (d * d) as u32),
                ("WIDTH", self.width() as u32),
                ("HOLONOMIC", u32::from(ch > 0)),
                ("HOLONOMIC_OUT", arr(ch + ch * d + ch * d * d)),
                ("CH_D", (ch * d) as u32),
                ("CH_CH", (ch * ch) as u32),
                ("CH_SQUARED", arr(ch * ch)),
                ("OBS", self.observables as u32),
                ("OBS_ARRAY", arr(self.observables)),
                ("ENERGY", u32::from(self.energy)),
                ("FIRST_ORDER", u32::from(self.order == 1)),
                ("SECOND_ORDER", u32::from(self.order == 2)),
                ("PARTS", (1 + 3 * d) as u32),
                ("SYMMETRY", u32::from(self.symmetry)),
                ("PROJECTION_STEPS", PROJECTION_STEPS as u32),
                (
                    "MAX_ITERATIONS",
                    self.max_iterations.min(u32::MAX as usize - 1) as u32,
                ),
                ("S_X", scratch[0] as u32),
                ("S_R", scratch[1] as u32),
                ("S_M", scratch[2] as u32),
                ("S_B", scratch[3] as u32),
                ("S_BAND", scratch[4] as u32),
                ("UNROLL", 1),
            ],
            state: self.state_layout(),
            record: self.record_layout(),
            constants_layout: self.constants_layout(),
            params: self.param_layout(),
            members_per_workgroup: WORKGROUP_SIZE,
            loop_iterations_per_step: self.loop_passes().div_ceil(steps),
            flops_per_step: self.flops().div_ceil(steps).max(1),
            bytes_per_step: 0,
            step_multiple: steps,
            scratch: scratch[5],
        }
    }
}

/// A real literal of WGSL that reads back as `value` exactly in f64 (the shortest decimal).
fn literal(value: f64) -> String {
    format!("real({value:e})")
}

/// The window code of the rule over windows of w = r + 1 points of d coordinates, with
/// c_w window constraints and jet size m, in the order of
/// [`super::discrete::Scratch::window`] (its jets as [`DiscreteRule::jet`] forms them, its
/// chain rule as `chain_gradient` and `chain_hessian` accumulate, and with `forces` the
/// Lagrange–d'Alembert terms after the evaluations: g_(i,c) += (h/2) f_c for every point
/// i, H_(i,c),(j,c') += ((h/2) a) ∂f_c/∂z_(b,c') over the blocks b of point j with
/// a = a\[j\]\[b\] ≠ 0, f at the constraint jet): `bjet_<e>` and `bjet_c` over the
/// private `base` and `offs`; `window_terms(t, h)` (g, hs, con, cj from `lam`);
/// `window_lagrangian(t, h)` (L_d); `window_observables(t, h)`; `window_energy(t, h)` (E
/// from `vl_energy` with `energy`, else 0);
/// for order 2 `window_parts(t, h)`, the Ostrogradsky parts \[L, ∂L/∂q̇, ∂L/∂q̈, q̈\] at the
/// constraint jet (as [`super::discrete::Scratch::ostrogradsky_parts`] reads them).
pub(super) fn window_module(
    rule: &DiscreteRule,
    d: usize,
    cw: usize,
    m: usize,
    observables: usize,
    energy: bool,
    forces: bool,
) -> String {
    let w = rule.constraint_point.coefficients.len();
    let n = w * d;
    let mut out = String::from("// ---- the rule (src/families/variational/boundary.rs)\n");
    let jet = |out: &mut String, name: &str, evaluation: &Evaluation| {
        writeln!(
            out,
            "fn {name}(t: real, h: real) -> array<real, NV> {{\n    var v: array<real, NV>;"
        )
        .unwrap();
        let blocks = evaluation.coefficients[0].len();
        for b in 0..blocks {
            let sum = literal(block_sum(evaluation, b));
            for c in 0..d {
                writeln!(out, "    v[{}] = {sum} * base[{c}];", b * d + c).unwrap();
            }
        }
        for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
            for (b, &a) in coefficients.iter().enumerate() {
                if a == 0.0 {
                    continue;
                }
                for c in 0..d {
                    let e = b * d + c;
                    writeln!(
                        out,
                        "    v[{e}] = v[{e}] + {} * offs[{}];",
                        literal(a),
                        i * d + c
                    )
                    .unwrap();
                }
            }
        }
        writeln!(out, "    v[{m}] = t + {} * h;", literal(evaluation.time)).unwrap();
        writeln!(
            out,
            "    #for p in NP\n        v[{} + p] = theta[p];\n    #end\n    return v;\n}}",
            m + 1
        )
        .unwrap();
    };
    for (e, evaluation) in rule.evaluations.iter().enumerate() {
        jet(&mut out, &format!("bjet_{e}"), evaluation);
    }
    jet(&mut out, "bjet_c", &rule.constraint_point);
    // chain_gradient into `target` with factor `scale` (an expression).
    let gradient =
        |out: &mut String, evaluation: &Evaluation, scale: &str, target: &str, grad: usize| {
            for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
                for (b, &a) in coefficients.iter().enumerate() {
                    if a == 0.0 {
                        continue;
                    }
                    for c in 0..d {
                        let g = i * d + c;
                        writeln!(
                            out,
                            "    {target}[{g}] = {target}[{g}] + ({scale} * {}) * out[{}];",
                            literal(a),
                            grad + b * d + c
                        )
                        .unwrap();
                    }
                }
            }
        };
    let hessian = |out: &mut String, evaluation: &Evaluation, scale: &str, base: usize| {
        for i in 0..w {
            for j in 0..w {
                for (b, &a) in evaluation.coefficients[i].iter().enumerate() {
                    if a == 0.0 {
                        continue;
                    }
                    for (b2, &a2) in evaluation.coefficients[j].iter().enumerate() {
                        if a2 == 0.0 {
                            continue;
                        }
                        writeln!(
                            out,
                            "    {{\n    let f = ({scale} * {}) * {};",
                            literal(a),
                            literal(a2)
                        )
                        .unwrap();
                        for c in 0..d {
                            for c2 in 0..d {
                                let k = (i * d + c) * n + j * d + c2;
                                writeln!(
                                    out,
                                    "    hs[{k}] = hs[{k}] + f * out[{}];",
                                    base + (b * d + c) * m + b2 * d + c2
                                )
                                .unwrap();
                            }
                        }
                        out.push_str("    }\n");
                    }
                }
            }
        }
    };
    out.push_str("fn window_terms(t: real, h: real) {\n");
    writeln!(out, "    #for k in WD\n        g[k] = real(0.0);\n    #end").unwrap();
    writeln!(
        out,
        "    #for k in WD2\n        hs[k] = real(0.0);\n    #end"
    )
    .unwrap();
    for (e, evaluation) in rule.evaluations.iter().enumerate() {
        writeln!(
            out,
            "    {{\n    let out = vl_lagrangian(bjet_{e}(t, h));\n    let scale = h * {};",
            literal(evaluation.weight)
        )
        .unwrap();
        gradient(&mut out, evaluation, "scale", "g", 1);
        hessian(&mut out, evaluation, "scale", 1 + m);
        out.push_str("    }\n");
    }
    if forces {
        let evaluation = &rule.constraint_point;
        out.push_str(
            "    {\n    let out = vl_forces(bjet_c(t, h));\n    let half = real(0.5) * h;\n",
        );
        for i in 0..w {
            for c in 0..d {
                let k = i * d + c;
                writeln!(out, "    g[{k}] = g[{k}] + half * out[{c}];").unwrap();
            }
        }
        for (j, coefficients) in evaluation.coefficients.iter().enumerate() {
            for (b, &a) in coefficients.iter().enumerate() {
                if a == 0.0 {
                    continue;
                }
                writeln!(out, "    {{\n    let f = half * {};", literal(a)).unwrap();
                for i in 0..w {
                    for c in 0..d {
                        for c2 in 0..d {
                            let k = (i * d + c) * n + j * d + c2;
                            writeln!(
                                out,
                                "    hs[{k}] = hs[{k}] + f * out[{}];",
                                d + c * m + b * d + c2
                            )
                            .unwrap();
                        }
                    }
                }
                out.push_str("    }\n");
            }
        }
        out.push_str("    }\n");
    }
    if cw > 0 {
        let evaluation = &rule.constraint_point;
        out.push_str("    {\n    let out = vl_window(bjet_c(t, h));\n");
        for j in 0..cw {
            writeln!(
                out,
                "    con[{j}] = out[{j}];\n    {{\n    var row: array<real, WD>;"
            )
            .unwrap();
            writeln!(
                out,
                "    #for k in WD\n        row[k] = real(0.0);\n    #end"
            )
            .unwrap();
            gradient(&mut out, evaluation, "real(1.0)", "row", cw + j * m);
            writeln!(
                out,
                "    #for k in WD\n        cj[{} + k] = row[k];\n    #end",
                j * n
            )
            .unwrap();
            writeln!(out, "    let weight = h * lam[{j}];").unwrap();
            writeln!(
                out,
                "    #for k in WD\n        g[k] = g[k] + weight * row[k];\n    #end"
            )
            .unwrap();
            out.push_str("    if (weight != real(0.0)) {\n");
            hessian(&mut out, evaluation, "weight", cw + cw * m + j * m * m);
            out.push_str("    }\n    }\n");
        }
        out.push_str("    }\n");
    }
    out.push_str("}\n");
    out.push_str("fn window_lagrangian(t: real, h: real) -> real {\n    var sum = real(0.0);\n");
    for (e, evaluation) in rule.evaluations.iter().enumerate() {
        writeln!(
            out,
            "    sum = sum + {} * vl_lagrangian(bjet_{e}(t, h))[0];",
            literal(evaluation.weight)
        )
        .unwrap();
    }
    out.push_str("    return h * sum;\n}\n");
    out.push_str("fn window_observables(t: real, h: real) -> array<real, OBS_ARRAY> {\n    var values: array<real, OBS_ARRAY>;\n");
    if observables > 0 {
        out.push_str("    let out = vl_observables(bjet_c(t, h));\n    #for k in OBS\n        values[k] = out[k];\n    #end\n");
    }
    out.push_str("    return values;\n}\n");
    out.push_str("fn window_energy(t: real, h: real) -> real {\n");
    if energy {
        out.push_str("    return vl_energy(bjet_c(t, h))[0];\n");
    } else {
        out.push_str("    return real(0.0);\n");
    }
    out.push_str("}\n");
    if w == 3 {
        // Scratch::ostrogradsky_parts: [L, ∂L/∂q̇, ∂L/∂q̈, q̈] at the constraint jet.
        out.push_str(
            "fn window_parts(t: real, h: real) -> array<real, PARTS> {\n    let z = bjet_c(t, h);\n    let out = vl_lagrangian(z);\n    var parts: array<real, PARTS>;\n    parts[0] = out[0];\n",
        );
        for c in 0..d {
            writeln!(
                out,
                "    parts[{}] = out[{}];\n    parts[{}] = out[{}];\n    parts[{}] = z[{}];",
                1 + c,
                1 + d + c,
                1 + d + c,
                1 + 2 * d + c,
                1 + 2 * d + c,
                2 * d + c
            )
            .unwrap();
        }
        out.push_str("    return parts;\n}\n");
    }
    out
}
