//! The CPU twin of `shaders/variational/step.wgsl`: what the kernel's `main` does for one
//! member of a dispatch, on the chunk's buffers, with the same operations in the same
//! order, in f64. The tapes are evaluated by [`Tape::eval`], whose instructions the
//! kernel's generated `vl_*` functions execute as written; the rule's jets and chain rule
//! walk [`VariationalShape::rule`] as the generated `jet_<e>` and `window_terms` were
//! written from it; the Newton matrix is factorised and solved in nalgebra's order. Each
//! of these is the reference marcher's ([`super::ivp::Marcher::step`]) operation for
//! operation, restricted to the entries the step reads (the gradient of L_d and the block
//! ∂²L_d/∂q_k∂q_{k+1} of its Hessian, with the generalised forces' (h/2) f and Jacobian
//! where the model has them), so the twin's results are the reference's to the last bit.

use super::model::LagrangianModel;
use super::rule::Evaluation;
use super::shape::{VariationalShape, block_sum};
use crate::compensated::kahan_add;
use crate::expr::Tape;
use crate::kernels::dense_lu;
use crate::kernels::{KernelSource, Strided, TwinBindings};

/// Status codes of `march` (and of `totals.status`).
const OK: u32 = 0;
const NO_CONVERGENCE: u32 = 1;
const SINGULAR: u32 = 2;
const NOT_FINITE: u32 = 3;

/// max(a, b) as Rust's f64::max for an `a` that is not NaN (`larger`).
fn larger(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// `drift_add`: (first, last, largest |value − first|), the first value kept once it is
/// not NaN.
fn drift_add(drift: [f64; 3], value: f64) -> [f64; 3] {
    let first = if drift[0].is_nan() { value } else { drift[0] };
    [first, value, larger(drift[2], (value - first).abs())]
}

/// One invocation's private memory (the kernel's `var<private>` arrays).
struct Invocation<'a> {
    model: &'a LagrangianModel,
    shape: &'a VariationalShape,
    d: usize,
    cw: usize,
    ch: usize,
    theta: Vec<f64>,
    q: Vec<f64>,
    carry: Vec<f64>,
    p: Vec<f64>,
    delta: Vec<f64>,
    lambda: Vec<f64>,
    mu: Vec<f64>,
    multipliers: Vec<f64>,
    gw: Vec<f64>,
    hw: Vec<f64>,
    phiw: Vec<f64>,
    jw: Vec<f64>,
    jhere: Vec<f64>,
    matrix: Vec<f64>,
    rhs: Vec<f64>,
    pivot: Vec<usize>,
    momentum_next: Vec<f64>,
    step_iterations: u32,
    step_constraint: f64,
    step_equation: f64,
    /// [z, t, θ] of one tape evaluation, its outputs and the tape's registers.
    vars: Vec<f64>,
    out: Vec<f64>,
    scratch: Vec<f64>,
}

impl Invocation<'_> {
    /// `jet_<e>`: the variables [z, t_k + τ h, θ] of `evaluation` over (q, q + Δ).
    fn jet(&mut self, evaluation: &Evaluation, t_k: f64, h: f64) {
        let (d, m) = (self.d, 2 * self.d);
        let blocks = evaluation.coefficients[0].len();
        for b in 0..blocks {
            let sum = block_sum(evaluation, b);
            for c in 0..d {
                self.vars[b * d + c] = sum * self.q[c];
            }
        }
        for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
            for (b, &a) in coefficients.iter().enumerate() {
                if a == 0.0 {
                    continue;
                }
                for c in 0..d {
                    let offset = if i == 0 { 0.0 } else { self.delta[c] };
                    self.vars[b * d + c] += a * offset;
                }
            }
        }
        self.vars[m] = t_k + evaluation.time * h;
        self.vars[m + 1..].copy_from_slice(&self.theta);
    }

    /// Evaluates `tape` at `vars` into `out`.
    fn evaluate(&mut self, tape: &Tape) {
        self.out.resize(tape.n_outputs(), 0.0);
        tape.eval(&self.vars, &mut self.out, &mut self.scratch);
    }

    /// `hessian_block`: hw_(c, c') += (s a a') out[base + (b d + c) m + b' d + c'].
    fn hessian_block(&mut self, evaluation: &Evaluation, scale: f64, base: usize) {
        let (d, m) = (self.d, 2 * self.d);
        for (b, &a) in evaluation.coefficients[0].iter().enumerate() {
            if a == 0.0 {
                continue;
            }
            for (b2, &a2) in evaluation.coefficients[1].iter().enumerate() {
                if a2 == 0.0 {
                    continue;
                }
                let f = scale * a * a2;
                for c in 0..d {
                    for c2 in 0..d {
                        self.hw[c * d + c2] += f * self.out[base + (b * d + c) * m + b2 * d + c2];
                    }
                }
            }
        }
    }

    /// `window_terms`.
    #[expect(
        clippy::needless_range_loop,
        reason = "indexed as the kernel's unrolled loops index its private arrays"
    )]
    fn window_terms(&mut self, t_k: f64, h: f64) {
        let (d, cw, m) = (self.d, self.cw, 2 * self.d);
        let n = m;
        let shape = self.shape;
        self.gw.iter_mut().for_each(|v| *v = 0.0);
        self.hw.iter_mut().for_each(|v| *v = 0.0);
        let model = self.model;
        for evaluation in &shape.rule.evaluations {
            self.jet(evaluation, t_k, h);
            self.evaluate(&model.lagrangian);
            let scale = h * evaluation.weight;
            for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
                for (b, &a) in coefficients.iter().enumerate() {
                    if a == 0.0 {
                        continue;
                    }
                    let f = scale * a;
                    for c in 0..d {
                        self.gw[i * d + c] += f * self.out[1 + b * d + c];
                    }
                }
            }
            self.hessian_block(evaluation, scale, 1 + m);
        }
        if let Some(forces) = &model.forces {
            // Lagrange–d'Alembert: (h/2) f at the constraint jet on both points, and the
            // block (0, 1) of its Jacobian, ((h/2) a) ∂f_c/∂z_(b,c') over point 1's blocks.
            let evaluation = &shape.rule.constraint_point;
            self.jet(evaluation, t_k, h);
            self.evaluate(forces);
            let half = 0.5 * h;
            for i in 0..2 {
                for c in 0..d {
                    self.gw[i * d + c] += half * self.out[c];
                }
            }
            for (b, &a) in evaluation.coefficients[1].iter().enumerate() {
                if a == 0.0 {
                    continue;
                }
                let f = half * a;
                for c in 0..d {
                    for c2 in 0..d {
                        self.hw[c * d + c2] += f * self.out[d + c * m + b * d + c2];
                    }
                }
            }
        }
        if cw == 0 {
            return;
        }
        let evaluation = &shape.rule.constraint_point;
        self.jet(evaluation, t_k, h);
        self.evaluate(&model.window);
        let mut row = vec![0.0; n];
        for j in 0..cw {
            self.phiw[j] = self.out[j];
            row.iter_mut().for_each(|v| *v = 0.0);
            for (i, coefficients) in evaluation.coefficients.iter().enumerate() {
                for (b, &a) in coefficients.iter().enumerate() {
                    if a == 0.0 {
                        continue;
                    }
                    for c in 0..d {
                        row[i * d + c] += a * self.out[cw + j * m + b * d + c];
                    }
                }
            }
            self.jw[j * n..(j + 1) * n].copy_from_slice(&row);
            let weight = h * self.lambda[j];
            for k in 0..n {
                self.gw[k] += weight * row[k];
            }
            if weight != 0.0 {
                self.hessian_block(evaluation, weight, cw + cw * m + j * m * m);
            }
        }
    }

    /// `holonomic_terms`: [φ_h, ∂φ_h/∂q, ∂²φ_h/∂q²] at `x` (velocities 0) and t, in `out`.
    fn holonomic_terms(&mut self, x: &[f64], t: f64) {
        let (d, m) = (self.d, 2 * self.d);
        self.vars[..d].copy_from_slice(x);
        self.vars[d..m].iter_mut().for_each(|v| *v = 0.0);
        self.vars[m] = t;
        self.vars[m + 1..].copy_from_slice(&self.theta);
        let model = self.model;
        self.evaluate(&model.holonomic);
    }

    /// `momentum_map`: p · ξ(q), ξ at t = 0, summed from the first product.
    fn momentum_map(&mut self) -> f64 {
        let (d, m) = (self.d, 2 * self.d);
        let model = self.model;
        let Some(symmetry) = &model.symmetry else {
            return 0.0;
        };
        self.vars[..d].copy_from_slice(&self.q);
        self.vars[d..m].iter_mut().for_each(|v| *v = 0.0);
        self.vars[m] = 0.0;
        self.vars[m + 1..].copy_from_slice(&self.theta);
        self.evaluate(symmetry);
        let mut total = self.p[0] * self.out[0];
        for c in 1..d {
            total += self.p[c] * self.out[c];
        }
        total
    }

    /// `step_energy`: E at the constraint jet of the step.
    fn step_energy(&mut self, t_k: f64, h: f64) -> f64 {
        let (shape, model) = (self.shape, self.model);
        self.jet(&shape.rule.constraint_point, t_k, h);
        let energy = model
            .energy
            .as_ref()
            .expect("the shape of a first-order Lagrangian");
        self.evaluate(energy);
        self.out[0]
    }

    /// `factorise`: [`dense_lu::factorise`] of the Newton matrix.
    fn factorise(&mut self) {
        dense_lu::factorise(&mut self.matrix, &mut self.pivot);
    }

    /// `solve`: [`dense_lu::solve`], the update in place in `rhs`; false at a zero
    /// diagonal of U.
    fn solve(&mut self) -> bool {
        dense_lu::solve(&self.matrix, &self.pivot, &mut self.rhs)
    }

    /// `march`: Newton for the step from q_k at t_k from the guess in `delta`.
    #[expect(
        clippy::needless_range_loop,
        reason = "indexed as the kernel's unrolled loops index its private arrays"
    )]
    fn march(&mut self, t_k: f64, h: f64, tolerance: f64, tiny: f64, max_iterations: u32) -> u32 {
        let (d, cw, ch) = (self.d, self.cw, self.ch);
        let ns = d + cw + ch;
        let m = 2 * d;
        self.lambda.iter_mut().for_each(|v| *v = 0.0);
        self.mu.iter_mut().for_each(|v| *v = 0.0);
        if ch > 0 {
            let q = self.q.clone();
            self.holonomic_terms(&q, t_k);
            self.jhere.copy_from_slice(&self.out[ch..ch + ch * d]);
        }
        let mut converged = false;
        let mut magnitude = vec![0.0; d];
        let mut next = vec![0.0; d];
        let mut there = Vec::new();
        for iteration in 1..=max_iterations + 1 {
            for c in 0..d {
                next[c] = self.q[c] + self.delta[c];
            }
            self.window_terms(t_k, h);
            there.clear();
            if ch > 0 {
                self.holonomic_terms(&next, t_k + h);
                there.extend_from_slice(&self.out);
            }
            for c in 0..d {
                let mut r = self.p[c] + self.gw[c];
                magnitude[c] = self.p[c].abs() + self.gw[c].abs();
                for j in 0..ch {
                    let term = h * self.jhere[j * d + c] * self.mu[j];
                    r += term;
                    magnitude[c] += term.abs();
                }
                self.rhs[c] = r;
            }
            for j in 0..cw {
                self.rhs[d + j] = self.phiw[j];
            }
            for j in 0..ch {
                self.rhs[d + cw + j] = there[j];
            }
            if !self.rhs.iter().all(|v| v.is_finite()) {
                return NOT_FINITE;
            }
            if converged {
                let mut constraint = 0.0;
                for j in 0..cw {
                    constraint = larger(constraint, self.phiw[j].abs());
                }
                for j in 0..ch {
                    constraint = larger(constraint, there[j].abs());
                }
                let (mut largest, mut scale) = (0.0, 0.0);
                for c in 0..d {
                    largest = larger(largest, self.rhs[c].abs());
                }
                for value in &magnitude {
                    scale = larger(scale, value.abs());
                }
                self.step_equation = largest / larger(scale, tiny);
                self.step_constraint = constraint;
                self.momentum_next.copy_from_slice(&self.gw[d..m]);
                if !self.momentum_next.iter().all(|v| v.is_finite()) {
                    return NOT_FINITE;
                }
                self.step_iterations = iteration - 1;
                return OK;
            }
            if iteration > max_iterations {
                break;
            }
            self.matrix.iter_mut().for_each(|v| *v = 0.0);
            for c in 0..d {
                for c2 in 0..d {
                    self.matrix[c * ns + c2] = self.hw[c * d + c2];
                }
                for j in 0..cw {
                    self.matrix[c * ns + d + j] = h * self.jw[j * m + c];
                }
                for j in 0..ch {
                    self.matrix[c * ns + d + cw + j] = h * self.jhere[j * d + c];
                }
            }
            for j in 0..cw {
                for c2 in 0..d {
                    self.matrix[(d + j) * ns + c2] = self.jw[j * m + d + c2];
                }
            }
            for j in 0..ch {
                for c2 in 0..d {
                    self.matrix[(d + cw + j) * ns + c2] = there[ch + j * d + c2];
                }
            }
            if !self.matrix.iter().all(|v| v.is_finite()) {
                return NOT_FINITE;
            }
            self.factorise();
            if !self.solve() {
                return SINGULAR;
            }
            let mut change = 0.0;
            for c in 0..d {
                self.delta[c] -= self.rhs[c];
                change = larger(change, self.rhs[c].abs());
            }
            for j in 0..cw {
                self.lambda[j] -= self.rhs[d + j];
            }
            for j in 0..ch {
                self.mu[j] -= self.rhs[d + cw + j];
            }
            let mut scale = 1.0;
            for c in 0..d {
                scale = larger(scale, (self.q[c] + self.delta[c]).abs());
            }
            converged = change <= tolerance * scale;
        }
        NO_CONVERGENCE
    }
}

/// Reads `len` entries of field `name` of a member's state.
fn load(kernel: &KernelSource, state: &Strided, name: &str, len: usize) -> Vec<f64> {
    let offset = kernel.state.offset(name);
    (0..len).map(|e| state.get(offset + e)).collect()
}

/// Writes `values` into field `name` of a member's state.
fn store(kernel: &KernelSource, state: &Strided, name: &str, values: &[f64]) {
    let offset = kernel.state.offset(name);
    for (e, &value) in values.iter().enumerate() {
        state.set(offset + e, value);
    }
}

/// The twin of `main` in the variational step kernel for member `member`.
pub fn variational_step_twin(
    shape: &VariationalShape,
    model: &LagrangianModel,
    kernel: &KernelSource,
    bindings: &TwinBindings,
    member: usize,
) {
    let (d, cw, ch) = (
        shape.coordinates,
        shape.window_constraints,
        shape.holonomic_constraints,
    );
    let (ns, c) = (shape.unknowns(), shape.multipliers());
    let constant = |name: &str| bindings.constants[kernel.constants_layout.offset(name)];
    let h = constant("h");
    // In f32 only, the kernel floors the tolerance at 4 ε and takes f32's smallest normal
    // for `tiny`.
    let tolerance = constant("tolerance");
    let tiny = {
        let t = constant("tiny");
        let t2 = t * t;
        let t4 = t2 * t2;
        let t8 = t4 * t4;
        t8 * t2 * 2.384185791015625e-7
    };
    let nan = constant("nan");
    let max_iterations = shape.max_iterations.min(u32::MAX as usize - 1) as u32;
    let state = bindings.state_of(member);
    let records = bindings.records_of(member);
    let mut me = Invocation {
        model,
        shape,
        d,
        cw,
        ch,
        theta: bindings.params_of(member, shape.parameters),
        q: load(kernel, &state, "q", d),
        carry: load(kernel, &state, "carry", d),
        p: load(kernel, &state, "p", d),
        delta: load(kernel, &state, "guess", d),
        lambda: vec![0.0; cw],
        mu: vec![0.0; ch],
        multipliers: load(kernel, &state, "multipliers", c),
        gw: vec![0.0; 2 * d],
        hw: vec![0.0; d * d],
        phiw: vec![0.0; cw],
        jw: vec![0.0; cw * 2 * d],
        jhere: vec![0.0; ch * d],
        matrix: vec![0.0; ns * ns],
        rhs: vec![0.0; ns],
        pivot: vec![0; ns],
        momentum_next: vec![0.0; d],
        step_iterations: 0,
        step_constraint: 0.0,
        step_equation: 0.0,
        vars: vec![0.0; 2 * d + 1 + shape.parameters],
        out: Vec::new(),
        scratch: Vec::new(),
    };
    let get = |name: &str| state.get(kernel.state.offset(name));
    let mut step_energy = get("step_energy");
    let mut code = get("code");
    let mut iterations = get("iterations");
    let mut constraint_residual = get("constraint_residual");
    let mut equation_residual = get("equation_residual");
    let drift = |name: &str| -> [f64; 3] {
        let values = load(kernel, &state, name, kernel.state.len_of(name));
        std::array::from_fn(|e| values.get(e).copied().unwrap_or(0.0))
    };
    let mut energy_drift = drift("energy_drift");
    let mut momentum_drift = drift("momentum_drift");
    let mut status = get("status");
    let record_entries = kernel.record.entries();
    let field = |name: &str| kernel.record.offset(name);
    let mut slot = 0;
    for k in 0..bindings.dispatch.step_count {
        let done = bindings.dispatch.step_begin + k + 1;
        if status == 0.0 {
            let t_k = f64::from(done - 1) * h;
            let outcome = me.march(t_k, h, tolerance, tiny, max_iterations);
            if outcome == OK {
                iterations += f64::from(me.step_iterations);
                constraint_residual = larger(constraint_residual, me.step_constraint);
                equation_residual = larger(equation_residual, me.step_equation);
                step_energy = me.step_energy(t_k, h);
                energy_drift = drift_add(energy_drift, step_energy);
                for c in 0..d {
                    kahan_add(&mut me.q[c], &mut me.carry[c], me.delta[c]);
                    me.p[c] = me.momentum_next[c];
                }
                me.multipliers[..cw].copy_from_slice(&me.lambda);
                me.multipliers[cw..].copy_from_slice(&me.mu);
                if shape.symmetry {
                    let value = me.momentum_map();
                    momentum_drift = drift_add(momentum_drift, value);
                }
            } else {
                code = f64::from(outcome);
                status = f64::from(done);
                me.q.iter_mut().for_each(|v| *v = nan);
                me.multipliers.iter_mut().for_each(|v| *v = nan);
                step_energy = nan;
            }
        }
        if bindings.records_step(done) {
            let base = slot * record_entries;
            for (c, &value) in me.q.iter().enumerate() {
                records.set(base + field("path") + c, value);
            }
            for (j, &value) in me.multipliers.iter().enumerate() {
                records.set(base + field("multipliers") + j, value);
            }
            records.set(base + field("energy"), step_energy);
            if shape.symmetry {
                let value = if status == 0.0 {
                    momentum_drift[1]
                } else {
                    nan
                };
                records.set(base + field("momentum"), value);
            }
            slot += 1;
        }
    }
    store(kernel, &state, "q", &me.q);
    store(kernel, &state, "carry", &me.carry);
    store(kernel, &state, "p", &me.p);
    store(kernel, &state, "guess", &me.delta);
    store(kernel, &state, "multipliers", &me.multipliers);
    let set = |name: &str, value: f64| state.set(kernel.state.offset(name), value);
    set("step_energy", step_energy);
    set("code", code);
    set("iterations", iterations);
    set("constraint_residual", constraint_residual);
    set("equation_residual", equation_residual);
    store(kernel, &state, "energy_drift", &energy_drift);
    if shape.symmetry {
        store(kernel, &state, "momentum_drift", &momentum_drift);
    }
    set("status", status);
}
