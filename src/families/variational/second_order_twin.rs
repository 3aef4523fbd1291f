//! The CPU twin of `shaders/variational/second_order.wgsl`: what the kernel's `main` does
//! for one member of a dispatch, on the chunk's buffers, with the same operations in the
//! same order, in f64. The window terms, the Ostrogradsky parts and step energy, the
//! holonomic terms and the symmetry's generator are the reference's
//! ([`Scratch::window`], [`Scratch::ostrogradsky_parts`],
//! [`OstrogradskyParts::step_energy`], [`Scratch::point`], [`Scratch::generator`]), which
//! the kernel's generated module transcribes; the Newton matrices are factorised and
//! solved by [`dense_lu`] in nalgebra's order; the start, the march's Newton loop, the
//! shift and the records are the kernel's, statement for statement, and each is the
//! reference's ([`super::start::second_order_start`], [`super::ivp::Marcher::step`],
//! [`super::march`]) operation for operation, so the twin gives the reference's bits.

use super::discrete::{OstrogradskyParts, PointTerms, Scratch, WindowTerms};
use super::model::LagrangianModel;
use super::second_order::SecondOrderShape;
use crate::compensated::kahan_add;
use crate::kernels::dense_lu;
use crate::kernels::{KernelSource, Strided, TwinBindings};

const OK: u32 = 0;
const NO_CONVERGENCE: u32 = 1;
const SINGULAR: u32 = 2;
const NOT_FINITE: u32 = 3;

/// max(a, b) as Rust's f64::max for an `a` that is not NaN (`larger`).
fn larger(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// `drift_add`.
fn drift_add(drift: [f64; 3], value: f64) -> [f64; 3] {
    let first = if drift[0].is_nan() { value } else { drift[0] };
    [first, value, larger(drift[2], (value - first).abs())]
}

/// `dot_d`: a · b from the first product.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut total = a[0] * b[0];
    for c in 1..a.len() {
        total += a[c] * b[c];
    }
    total
}

/// `scale_of`: max(1, ‖q + Δ‖_∞).
fn scale_of(q: &[f64], dq: &[f64]) -> f64 {
    let mut s = 1.0;
    for c in 0..q.len() {
        s = larger(s, (q[c] + dq[c]).abs());
    }
    s
}

/// One invocation's private memory.
struct Invocation<'a> {
    shape: &'a SecondOrderShape,
    model: &'a LagrangianModel,
    theta: Vec<f64>,
    /// q̇, q̈, q⃛ at t = 0.
    data: Vec<f64>,
    tools: Scratch,
    window: WindowTerms,
    point: PointTerms,
    matrix: Vec<f64>,
    rhs: Vec<f64>,
    pivot: Vec<usize>,
    here: Vec<f64>,
    here_carry: Vec<f64>,
    ahead: Vec<f64>,
    ahead_carry: Vec<f64>,
    increment: Vec<f64>,
    earlier: Vec<f64>,
    p: Vec<f64>,
    pending: Vec<f64>,
    parts: OstrogradskyParts,
    multipliers: Vec<f64>,
    delta: Vec<f64>,
    mu: Vec<f64>,
    out_near: Vec<f64>,
    out_far: Vec<f64>,
    step_iterations: u32,
    step_constraint: f64,
    step_equation: f64,
    step_energy: f64,
    code: f64,
    iterations: f64,
    constraint_residual: f64,
    equation_residual: f64,
    energy_drift: [f64; 3],
    momentum_drift: [f64; 3],
    start_momentum: f64,
    status: f64,
}

impl Invocation<'_> {
    /// `load_window` and `window_terms`: the terms of the window base + offsets at t.
    fn window_terms(&mut self, t: f64, base: &[f64], offsets: [&[f64]; 3]) {
        self.tools.window(
            self.model,
            &self.shape.rule,
            &self.theta,
            t,
            base,
            &offsets,
            &[],
            &mut self.window,
        );
    }

    /// `load_window` and `window_parts`.
    fn window_parts(&mut self, t: f64, base: &[f64], offsets: [&[f64]; 3]) -> OstrogradskyParts {
        self.tools
            .ostrogradsky_parts(self.model, &self.shape.rule, &self.theta, t, base, &offsets)
    }

    /// `holonomic_terms` (with Σ_j weights_j ∇²φ_hj) into `point`.
    fn holonomic_terms(&mut self, x: &[f64], t: f64, weights: &[f64]) {
        self.tools
            .point(self.model, &self.theta, t, x, weights, &mut self.point);
    }

    /// `generator`: ξ(q).
    fn generator(&mut self, q: &[f64]) -> Vec<f64> {
        let mut xi = Vec::new();
        self.tools.generator(self.model, &self.theta, q, &mut xi);
        xi
    }

    /// `momentum_map`.
    fn momentum_map(&mut self) -> f64 {
        let (here, ahead) = (self.here.clone(), self.ahead.clone());
        let xi = self.generator(&here);
        let near = dot(&self.p, &xi);
        let xi = self.generator(&ahead);
        near + dot(&self.pending, &xi)
    }

    fn rhs_finite(&self) -> bool {
        self.rhs.iter().all(|v| v.is_finite())
    }

    /// `factorise` and `solve`: the update in `rhs`; false at a zero diagonal of U.
    fn solve(&mut self) -> bool {
        dense_lu::factorise(&mut self.matrix, &mut self.pivot);
        dense_lu::solve(&self.matrix, &self.pivot, &mut self.rhs)
    }

    /// `start`.
    #[expect(
        clippy::needless_range_loop,
        reason = "indexed as the kernel's unrolled loops index its private arrays"
    )]
    fn start(&mut self, h: f64, tolerance: f64, tiny: f64) -> u32 {
        let sh = self.shape;
        let (d, ch, ns) = (sh.d, sh.ch, sh.unknowns());
        let max_iterations = sh.max_iterations.min(u32::MAX as usize - 1) as u32;
        let q0 = self.here.clone();
        let (qd, qdd, qddd) = (
            self.data[..d].to_vec(),
            self.data[d..2 * d].to_vec(),
            self.data[2 * d..].to_vec(),
        );
        let taylor: Vec<f64> = (0..d).map(|c| h * qd[c] + 0.5 * h * h * qdd[c]).collect();
        let mut first = taylor.clone();
        let mut projection_iterations = 0;
        if ch > 0 {
            let mut nu = vec![0.0; ch];
            let mut converged = false;
            let mut q1 = vec![0.0; d];
            for iteration in 1..=max_iterations + 1 {
                for c in 0..d {
                    q1[c] = q0[c] + first[c];
                }
                self.holonomic_terms(&q1, h, &nu);
                let out = &self.point;
                for c in 0..d {
                    let mut normal = out.jacobian[c] * nu[0];
                    for j in 1..ch {
                        normal += out.jacobian[j * d + c] * nu[j];
                    }
                    self.rhs[c] = first[c] - taylor[c] - normal;
                }
                for j in 0..ch {
                    self.rhs[d + j] = out.constraints[j];
                }
                if !self.rhs_finite() {
                    return NOT_FINITE;
                }
                if converged {
                    projection_iterations = iteration - 1;
                    break;
                }
                if iteration > max_iterations {
                    return NO_CONVERGENCE;
                }
                self.matrix.fill(0.0);
                for c in 0..d {
                    self.matrix[c * ns + c] = 1.0;
                    for c2 in 0..d {
                        self.matrix[c * ns + c2] -= out.hessian[c * d + c2];
                    }
                    for j in 0..ch {
                        self.matrix[c * ns + d + j] = -out.jacobian[j * d + c];
                        self.matrix[(d + j) * ns + c] = out.jacobian[j * d + c];
                    }
                }
                if !self.solve() {
                    return SINGULAR;
                }
                let mut change = 0.0;
                for c in 0..d {
                    first[c] -= self.rhs[c];
                    change = larger(change, self.rhs[c].abs());
                }
                for j in 0..ch {
                    nu[j] -= self.rhs[d + j];
                }
                converged = change <= tolerance * scale_of(&q0, &first);
            }
        }
        let back: Vec<f64> = (0..d).map(|c| first[c] - h * h * qdd[c]).collect();
        let minus_back: Vec<f64> = back.iter().map(|v| -v).collect();
        let zeros = vec![0.0; d];
        self.window_terms(-h, &q0, [&minus_back, &zeros, &first]);
        let w0_near = self.window.gradient[d..2 * d].to_vec();
        let w0_far = self.window.gradient[2 * d..3 * d].to_vec();
        let parts0 = self.window_parts(-h, &q0, [&minus_back, &zeros, &first]);
        let mut second: Vec<f64> = (0..d)
            .map(|c| h * qd[c] + 1.5 * h * h * qdd[c] + 7.0 / 6.0 * h * h * h * qddd[c])
            .collect();
        self.mu.fill(0.0);
        let n = 3 * d;
        let mut converged = false;
        for iteration in 1..=max_iterations + 1 {
            let mut far = vec![0.0; d];
            let mut reach = vec![0.0; d];
            for c in 0..d {
                let back_two = 2.0 * h * h * h * qddd[c] - second[c] + first[c] + back[c];
                far[c] = -back[c] - back_two;
                reach[c] = first[c] + second[c];
            }
            self.window_terms(-2.0 * h, &q0, [&far, &minus_back, &zeros]);
            let before_far = self.window.gradient[2 * d..3 * d].to_vec();
            let mut before_block = vec![0.0; d * d];
            for c in 0..d {
                for c2 in 0..d {
                    before_block[c * d + c2] = self.window.hessian[(2 * d + c) * n + c2];
                }
            }
            self.window_terms(0.0, &q0, [&zeros, &first, &reach]);
            let zero_mu = vec![0.0; ch];
            self.holonomic_terms(&q0, 0.0, &zero_mu);
            let at_zero = self.point.jacobian.clone();
            let q2: Vec<f64> = (0..d).map(|c| q0[c] + reach[c]).collect();
            self.holonomic_terms(&q2, 2.0 * h, &zero_mu);
            let there = self.point.clone();
            let mut magnitude = vec![0.0; d];
            for c in 0..d {
                let (t0, t1, t2) = (before_far[c], w0_near[c], self.window.gradient[c]);
                let mut sum = t0 + t1 + t2;
                magnitude[c] = t0.abs() + t1.abs() + t2.abs();
                for j in 0..ch {
                    let term = h * at_zero[j * d + c] * self.mu[j];
                    sum += term;
                    magnitude[c] += term.abs();
                }
                self.rhs[c] = sum;
            }
            for j in 0..ch {
                self.rhs[d + j] = there.constraints[j];
            }
            if !self.rhs_finite() {
                return NOT_FINITE;
            }
            if converged {
                let (mut largest, mut size) = (0.0, 0.0);
                for c in 0..d {
                    largest = larger(largest, self.rhs[c].abs());
                }
                for c in 0..d {
                    size = larger(size, magnitude[c].abs());
                }
                self.step_equation = largest / larger(size, tiny);
                let q1: Vec<f64> = (0..d).map(|c| q0[c] + first[c]).collect();
                self.holonomic_terms(&q1, h, &zero_mu);
                let mut constraint = 0.0;
                for j in 0..ch {
                    constraint = larger(constraint, self.point.constraints[j].abs());
                }
                for j in 0..ch {
                    constraint = larger(constraint, there.constraints[j].abs());
                }
                self.step_constraint = constraint;
                let parts1 = self.window_parts(0.0, &q0, [&zeros, &first, &reach]);
                let gradient = &self.window.gradient;
                let mut start_p = vec![0.0; d];
                let mut finite = true;
                for c in 0..d {
                    self.p[c] = w0_far[c] + gradient[d + c];
                    self.pending[c] = gradient[2 * d + c];
                    start_p[c] = before_far[c] + w0_near[c];
                    finite = finite && self.p[c].is_finite();
                }
                if !finite {
                    return NOT_FINITE;
                }
                self.step_iterations = projection_iterations + iteration - 1;
                for c in 0..d {
                    let (mut x, mut carry) = (q0[c], 0.0);
                    kahan_add(&mut x, &mut carry, first[c]);
                    self.ahead[c] = x;
                    self.ahead_carry[c] = carry;
                }
                if sh.symmetry {
                    let ahead = self.ahead.clone();
                    let near = dot(&start_p, &self.generator(&q0));
                    self.start_momentum = near + dot(&w0_far, &self.generator(&ahead));
                    self.momentum_drift = drift_add(self.momentum_drift, self.start_momentum);
                }
                self.step_energy = parts0.step_energy(&parts1, &first, h);
                for c in 0..d {
                    self.here[c] = self.ahead[c];
                    self.here_carry[c] = self.ahead_carry[c];
                    kahan_add(&mut self.ahead[c], &mut self.ahead_carry[c], second[c]);
                    self.earlier[c] = first[c];
                    self.increment[c] = second[c];
                }
                self.parts = parts1;
                return OK;
            }
            if iteration > max_iterations {
                break;
            }
            self.matrix.fill(0.0);
            for c in 0..d {
                for c2 in 0..d {
                    self.matrix[c * ns + c2] =
                        self.window.hessian[c * n + 2 * d + c2] + before_block[c * d + c2];
                }
                for j in 0..ch {
                    self.matrix[c * ns + d + j] = h * at_zero[j * d + c];
                }
            }
            for j in 0..ch {
                for c2 in 0..d {
                    self.matrix[(d + j) * ns + c2] = there.jacobian[j * d + c2];
                }
            }
            if !self.matrix.iter().all(|v| v.is_finite()) {
                return NOT_FINITE;
            }
            if !self.solve() {
                return SINGULAR;
            }
            let mut change = 0.0;
            for c in 0..d {
                second[c] -= self.rhs[c];
                change = larger(change, self.rhs[c].abs());
            }
            for j in 0..ch {
                self.mu[j] -= self.rhs[d + j];
            }
            let reach: Vec<f64> = (0..d).map(|c| first[c] + second[c]).collect();
            converged = change <= tolerance * scale_of(&q0, &reach);
        }
        NO_CONVERGENCE
    }

    /// `march`.
    fn march(&mut self, t_k: f64, h: f64, tolerance: f64, tiny: f64) -> u32 {
        let sh = self.shape;
        let (d, ch, ns) = (sh.d, sh.ch, sh.unknowns());
        let n = 3 * d;
        let max_iterations = sh.max_iterations.min(u32::MAX as usize - 1) as u32;
        let minus_previous: Vec<f64> = self.increment.iter().map(|v| -v).collect();
        let zeros = vec![0.0; d];
        for c in 0..d {
            self.delta[c] = 2.0 * self.increment[c] - self.earlier[c];
        }
        self.mu.fill(0.0);
        let zero_mu = vec![0.0; ch];
        let mut converged = false;
        let mut magnitude = vec![0.0; d];
        for iteration in 1..=max_iterations + 1 {
            let next: Vec<f64> = (0..d).map(|c| self.ahead[c] + self.delta[c]).collect();
            let (ahead, delta) = (self.ahead.clone(), self.delta.clone());
            self.window_terms(t_k, &ahead, [&minus_previous, &zeros, &delta]);
            let here = self.here.clone();
            self.holonomic_terms(&here, t_k, &zero_mu);
            let at_here = self.point.jacobian.clone();
            self.holonomic_terms(&next, t_k + 2.0 * h, &zero_mu);
            let there = self.point.clone();
            let g = &self.window.gradient;
            for c in 0..d {
                let mut r = self.p[c] + g[c];
                magnitude[c] = self.p[c].abs() + g[c].abs();
                for j in 0..ch {
                    let term = h * at_here[j * d + c] * self.mu[j];
                    r += term;
                    magnitude[c] += term.abs();
                }
                self.rhs[c] = r;
            }
            for j in 0..ch {
                self.rhs[d + j] = there.constraints[j];
            }
            if !self.rhs_finite() {
                return NOT_FINITE;
            }
            if converged {
                let mut constraint = 0.0;
                for j in 0..ch {
                    constraint = larger(constraint, there.constraints[j].abs());
                }
                let (mut largest, mut size) = (0.0, 0.0);
                for c in 0..d {
                    largest = larger(largest, self.rhs[c].abs());
                }
                for value in &magnitude {
                    size = larger(size, value.abs());
                }
                self.step_equation = largest / larger(size, tiny);
                self.step_constraint = constraint;
                let g = &self.window.gradient;
                self.out_near.copy_from_slice(&g[d..2 * d]);
                self.out_far.copy_from_slice(&g[2 * d..3 * d]);
                let finite = self
                    .out_near
                    .iter()
                    .chain(&self.out_far)
                    .all(|v| v.is_finite());
                if !finite {
                    return NOT_FINITE;
                }
                self.step_iterations = iteration - 1;
                return OK;
            }
            if iteration > max_iterations {
                break;
            }
            self.matrix.fill(0.0);
            for c in 0..d {
                for c2 in 0..d {
                    self.matrix[c * ns + c2] = self.window.hessian[c * n + 2 * d + c2];
                }
                for j in 0..ch {
                    self.matrix[c * ns + d + j] = h * at_here[j * d + c];
                }
            }
            for j in 0..ch {
                for c2 in 0..d {
                    self.matrix[(d + j) * ns + c2] = there.jacobian[j * d + c2];
                }
            }
            if !self.matrix.iter().all(|v| v.is_finite()) {
                return NOT_FINITE;
            }
            if !self.solve() {
                return SINGULAR;
            }
            let mut change = 0.0;
            for c in 0..d {
                self.delta[c] -= self.rhs[c];
                change = larger(change, self.rhs[c].abs());
            }
            for j in 0..ch {
                self.mu[j] -= self.rhs[d + j];
            }
            converged = change <= tolerance * scale_of(&self.ahead, &self.delta);
        }
        NO_CONVERGENCE
    }

    /// `shift`.
    fn shift(&mut self, t_k: f64, h: f64) {
        let d = self.shape.d;
        let minus_increment: Vec<f64> = self.increment.iter().map(|v| -v).collect();
        let zeros = vec![0.0; d];
        let (ahead, delta) = (self.ahead.clone(), self.delta.clone());
        let next_parts = self.window_parts(t_k, &ahead, [&minus_increment, &zeros, &delta]);
        self.step_energy = self.parts.step_energy(&next_parts, &self.increment, h);
        for c in 0..d {
            self.p[c] = self.pending[c] + self.out_near[c];
            self.pending[c] = self.out_far[c];
            self.here[c] = self.ahead[c];
            self.here_carry[c] = self.ahead_carry[c];
            kahan_add(&mut self.ahead[c], &mut self.ahead_carry[c], self.delta[c]);
            self.earlier[c] = self.increment[c];
            self.increment[c] = self.delta[c];
        }
        self.parts = next_parts;
    }

    /// `advance`.
    fn advance(&mut self, done: u32, h: f64, tolerance: f64, tiny: f64, nan: f64) {
        if self.status != 0.0 {
            return;
        }
        let t_k = f64::from(done - 1) * h;
        let outcome = if done == 1 {
            self.start(h, tolerance, tiny)
        } else {
            let outcome = self.march(t_k, h, tolerance, tiny);
            if outcome == OK {
                self.shift(t_k, h);
            }
            outcome
        };
        if outcome == OK {
            self.iterations += f64::from(self.step_iterations);
            self.constraint_residual = larger(self.constraint_residual, self.step_constraint);
            self.equation_residual = larger(self.equation_residual, self.step_equation);
            self.energy_drift = drift_add(self.energy_drift, self.step_energy);
            self.multipliers.copy_from_slice(&self.mu);
            if self.shape.symmetry {
                let value = self.momentum_map();
                self.momentum_drift = drift_add(self.momentum_drift, value);
            }
            return;
        }
        self.code = f64::from(outcome);
        self.status = f64::from(done);
        self.here.fill(nan);
        self.multipliers.fill(nan);
        self.step_energy = nan;
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

/// The parts as the kernel's array \[L, a, b, q̈\].
fn parts_array(parts: &OstrogradskyParts) -> Vec<f64> {
    let mut values = vec![parts.lagrangian];
    values.extend_from_slice(&parts.velocity_gradient);
    values.extend_from_slice(&parts.acceleration_gradient);
    values.extend_from_slice(&parts.acceleration);
    values
}

/// The twin of `main` in the second-order marching kernel for member `member`.
pub fn variational_second_order_twin(
    shape: &SecondOrderShape,
    model: &LagrangianModel,
    kernel: &KernelSource,
    bindings: &TwinBindings,
    member: usize,
) {
    let (d, ch, ns) = (shape.d, shape.ch, shape.unknowns());
    let constant = |name: &str| bindings.constants[kernel.constants_layout.offset(name)];
    let h = constant("h");
    let tolerance = constant("tolerance");
    let tiny = {
        let t = constant("tiny");
        let t2 = t * t;
        let t4 = t2 * t2;
        let t8 = t4 * t4;
        t8 * t2 * 2.384185791015625e-7
    };
    let nan = constant("nan");
    let params = |name: &str| {
        let (offset, len) = (kernel.params.offset(name), kernel.params.len_of(name));
        let members = bindings.members();
        (offset..offset + len)
            .map(|e| bindings.params[e * members + member])
            .collect::<Vec<f64>>()
    };
    let state = bindings.state_of(member);
    let get = |name: &str| state.get(kernel.state.offset(name));
    let vector = |name: &str, len: usize| load(kernel, &state, name, len);
    let stored = vector("parts", 1 + 3 * d);
    let drift = |name: &str| -> [f64; 3] {
        let values = vector(name, kernel.state.len_of(name));
        std::array::from_fn(|e| values.get(e).copied().unwrap_or(0.0))
    };
    let mut me = Invocation {
        shape,
        model,
        theta: params("theta")[..shape.parameters].to_vec(),
        data: params("data"),
        tools: Scratch::default(),
        window: WindowTerms::default(),
        point: PointTerms::default(),
        matrix: vec![0.0; ns * ns],
        rhs: vec![0.0; ns],
        pivot: vec![0; ns],
        here: vector("q", d),
        here_carry: vector("carry", d),
        ahead: vector("ahead", d),
        ahead_carry: vector("ahead_carry", d),
        increment: vector("increment", d),
        earlier: vector("earlier", d),
        p: vector("p", d),
        pending: vector("pending", d),
        parts: OstrogradskyParts {
            lagrangian: stored[0],
            velocity_gradient: stored[1..1 + d].to_vec(),
            acceleration_gradient: stored[1 + d..1 + 2 * d].to_vec(),
            acceleration: stored[1 + 2 * d..].to_vec(),
        },
        multipliers: vector("multipliers", ch),
        delta: vec![0.0; d],
        mu: vec![0.0; ch],
        out_near: vec![0.0; d],
        out_far: vec![0.0; d],
        step_iterations: 0,
        step_constraint: 0.0,
        step_equation: 0.0,
        step_energy: get("step_energy"),
        code: get("code"),
        iterations: get("iterations"),
        constraint_residual: get("constraint_residual"),
        equation_residual: get("equation_residual"),
        energy_drift: drift("energy_drift"),
        momentum_drift: drift("momentum_drift"),
        start_momentum: if shape.symmetry {
            get("start_momentum")
        } else {
            0.0
        },
        status: get("status"),
    };
    let records = bindings.records_of(member);
    let record_entries = kernel.record.entries();
    let field = |name: &str| kernel.record.offset(name);
    let mut slot = 0;
    for k in 0..bindings.dispatch.step_count {
        let done = bindings.dispatch.step_begin + k + 1;
        me.advance(done, h, tolerance, tiny, nan);
        if bindings.records_step(done) {
            let base = slot * record_entries;
            for (c, &value) in me.here.iter().enumerate() {
                records.set(base + field("path") + c, value);
            }
            for (j, &value) in me.multipliers.iter().enumerate() {
                records.set(base + field("multipliers") + j, value);
            }
            records.set(base + field("energy"), me.step_energy);
            if shape.symmetry {
                let value = if me.status == 0.0 {
                    me.momentum_drift[1]
                } else {
                    nan
                };
                records.set(base + field("momentum"), value);
            }
            slot += 1;
        }
    }
    store(kernel, &state, "q", &me.here);
    store(kernel, &state, "carry", &me.here_carry);
    store(kernel, &state, "ahead", &me.ahead);
    store(kernel, &state, "ahead_carry", &me.ahead_carry);
    store(kernel, &state, "increment", &me.increment);
    store(kernel, &state, "earlier", &me.earlier);
    store(kernel, &state, "p", &me.p);
    store(kernel, &state, "pending", &me.pending);
    store(kernel, &state, "parts", &parts_array(&me.parts));
    store(kernel, &state, "multipliers", &me.multipliers);
    let set = |name: &str, value: f64| state.set(kernel.state.offset(name), value);
    set("step_energy", me.step_energy);
    set("code", me.code);
    set("iterations", me.iterations);
    set("constraint_residual", me.constraint_residual);
    set("equation_residual", me.equation_residual);
    store(kernel, &state, "energy_drift", &me.energy_drift);
    if shape.symmetry {
        store(kernel, &state, "momentum_drift", &me.momentum_drift);
        set("start_momentum", me.start_momentum);
    }
    set("status", me.status);
}
