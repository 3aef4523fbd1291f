//! The CPU twin of `shaders/variational/boundary.wgsl`: what the kernel's `main` does for
//! one member of a dispatch, on the chunk's buffers (the member's scratch region copied in
//! and out), with the same operations in the same order, in f64. The window terms (the
//! generalised forces' included) and point terms, energies (order 2: the Ostrogradsky
//! parts and step energy), discrete Lagrangians, observables and the symmetry's generator
//! are the reference's ([`Scratch::window`], [`Scratch::point`], [`Scratch::energy`],
//! [`Scratch::ostrogradsky_parts`], [`OstrogradskyParts::step_energy`],
//! [`Scratch::lagrangian_and_observables`], [`Scratch::generator`]), which the kernel's
//! generated module transcribes; the assembly, the banded LU, the guess, the projection
//! and the Newton loop are the kernel's, statement for statement, and each is the
//! reference's ([`super::bvp::BoundarySolver`], [`super::banded::Banded::solve`],
//! [`super::solve::project`]) operation for operation, so the twin gives the reference's
//! bits.

use super::boundary::BoundaryShape;
use super::discrete::{OstrogradskyParts, PointTerms, Scratch, WindowTerms};
use super::model::LagrangianModel;
use super::solve::project;
use crate::compensated::CompensatedSum;
use crate::kernels::{KernelSource, TwinBindings};

const OK: u32 = 0;
const NO_CONVERGENCE: u32 = 1;
const SINGULAR: u32 = 2;
const NOT_FINITE: u32 = 3;

fn larger(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// `dot_d`: a · b from the first product (Rust's sum, which starts from −0).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut total = a[0] * b[0];
    for c in 1..a.len() {
        total += a[c] * b[c];
    }
    total
}

/// `drift_add`: (first, last, largest |value − first|).
fn drift_add(drift: [f64; 3], value: f64) -> [f64; 3] {
    let first = if drift[0].is_nan() { value } else { drift[0] };
    [first, value, larger(drift[2], (value - first).abs())]
}

/// One invocation: the member's data and its scratch region.
struct Invocation<'a> {
    shape: &'a BoundaryShape,
    model: &'a LagrangianModel,
    theta: Vec<f64>,
    /// Prescribed points, p · d + c; clamped velocities, side · d + c.
    prescribed: Vec<f64>,
    velocities: Vec<f64>,
    s: Vec<f64>,
    h: f64,
    tools: Scratch,
    window: WindowTerms,
    point: PointTerms,
}

impl Invocation<'_> {
    fn offset(&self, slot: usize) -> usize {
        self.shape.offsets[slot]
    }

    fn first(&self) -> usize {
        self.shape.order - 1
    }

    fn free_slot(&self, s: usize) -> bool {
        let first = self.first();
        s >= first
            && s - first <= self.shape.steps
            && self.shape.fixed[s - first] == self.shape.prescribed()
    }

    fn has_mu(&self, s: usize) -> bool {
        self.shape.ch > 0 && self.free_slot(s)
    }

    fn has_lambda(&self, s: usize) -> bool {
        self.shape.cw > 0 && s >= self.first() && s - self.first() < self.shape.windows()
    }

    fn lambda_at(&self, s: usize) -> usize {
        self.offset(s) + self.shape.d + if self.has_mu(s) { self.shape.ch } else { 0 }
    }

    fn band(&self, i: usize, j: usize) -> usize {
        let sh = self.shape;
        sh.scratch_offsets()[4] + i * sh.width() + j + sh.kl - i
    }

    fn point_of(&self, s: usize) -> Vec<f64> {
        let o = self.offset(s);
        self.s[o..o + self.shape.d].to_vec()
    }

    /// `assemble`.
    #[expect(
        clippy::needless_range_loop,
        reason = "indexed as the kernel's unrolled loops index its private arrays"
    )]
    fn assemble(&mut self, jacobian: bool) -> f64 {
        let sh = self.shape;
        let (d, cw, ch) = (sh.d, sh.cw, sh.ch);
        let w = sh.order + 1;
        let wd = w * d;
        let [_, sr, sm, ..] = sh.scratch_offsets();
        let h = self.h;
        let first = self.first();
        let mut constraint = 0.0_f64;
        for j in 0..sh.windows() {
            let base = self.point_of(j);
            let offsets: Vec<Vec<f64>> = (0..w)
                .map(|i| {
                    self.point_of(j + i)
                        .iter()
                        .zip(&base)
                        .map(|(a, b)| a - b)
                        .collect()
                })
                .collect();
            let slices: Vec<&[f64]> = offsets.iter().map(Vec::as_slice).collect();
            let s = j + first;
            let lambda_at = self.lambda_at(s);
            let lambda: Vec<f64> = if self.has_lambda(s) {
                self.s[lambda_at..lambda_at + cw].to_vec()
            } else {
                Vec::new()
            };
            let t = (j as isize - first as isize) as f64 * h;
            self.tools.window(
                self.model,
                &sh.rule,
                &self.theta,
                t,
                &base,
                &slices,
                &lambda,
                &mut self.window,
            );
            let terms = &self.window;
            for i in 0..w {
                if !self.free_slot(j + i) {
                    continue;
                }
                let row = self.offset(j + i);
                for c in 0..d {
                    let gv = terms.gradient[i * d + c];
                    self.s[sr + row + c] += gv;
                    self.s[sm + row + c] += gv.abs();
                    if jacobian {
                        for i2 in 0..w {
                            let col = self.offset(j + i2);
                            for c2 in 0..d {
                                let at = self.band(row + c, col + c2);
                                self.s[at] += terms.hessian[(i * d + c) * wd + i2 * d + c2];
                            }
                        }
                        for k in 0..cw {
                            let at = self.band(row + c, lambda_at + k);
                            self.s[at] += h * terms.constraint_jacobian[k * wd + i * d + c];
                        }
                    }
                }
            }
            for k in 0..cw {
                let row = lambda_at + k;
                let value = terms.constraints[k];
                self.s[sr + row] = value;
                self.s[sm + row] = value.abs();
                constraint = larger(constraint, value.abs());
                if jacobian {
                    for i2 in 0..w {
                        let col = self.offset(j + i2);
                        for c2 in 0..d {
                            let at = self.band(row, col + c2);
                            self.s[at] += terms.constraint_jacobian[k * wd + i2 * d + c2];
                        }
                    }
                }
            }
        }
        for k in 0..=sh.steps {
            let s = k + first;
            let o = self.offset(s);
            let q = self.point_of(s);
            let t = k as f64 * h;
            if self.has_mu(s) {
                let at = o + d;
                let mu = self.s[at..at + ch].to_vec();
                self.tools
                    .point(self.model, &self.theta, t, &q, &mu, &mut self.point);
                let terms = &self.point;
                for c in 0..d {
                    for (jj, &m) in mu.iter().enumerate() {
                        let term = h * terms.jacobian[jj * d + c] * m;
                        self.s[sr + o + c] += term;
                        self.s[sm + o + c] += term.abs();
                        if jacobian {
                            let e = self.band(o + c, at + jj);
                            self.s[e] += h * terms.jacobian[jj * d + c];
                        }
                    }
                    if jacobian {
                        for c2 in 0..d {
                            let e = self.band(o + c, o + c2);
                            self.s[e] += h * terms.hessian[c * d + c2];
                        }
                    }
                }
                for jj in 0..ch {
                    let value = terms.constraints[jj];
                    self.s[sr + at + jj] = value;
                    self.s[sm + at + jj] = value.abs();
                    constraint = larger(constraint, value.abs());
                    if jacobian {
                        for c2 in 0..d {
                            let e = self.band(at + jj, o + c2);
                            self.s[e] += terms.jacobian[jj * d + c2];
                        }
                    }
                }
            } else if ch > 0 {
                let zeros = vec![0.0; ch];
                self.tools
                    .point(self.model, &self.theta, t, &q, &zeros, &mut self.point);
                for jj in 0..ch {
                    constraint = larger(constraint, self.point.constraints[jj].abs());
                }
            }
            let p = sh.fixed[k];
            if p != sh.prescribed() {
                let row = if sh.order == 2 && k == 0 {
                    self.offset(0)
                } else {
                    o
                };
                for c in 0..d {
                    let value = self.prescribed[p * d + c];
                    self.s[sr + row + c] = q[c] - value;
                    self.s[sm + row + c] = q[c].abs() + value.abs();
                    if jacobian {
                        let e = self.band(row + c, o + c);
                        self.s[e] += 1.0;
                    }
                }
            }
        }
        if sh.order == 2 {
            let n = sh.steps;
            for side in 0..2 {
                let (row, plus, minus) = if side == 1 {
                    (n + 2, n + 2, n)
                } else {
                    (1, 2, 0)
                };
                let (row, plus, minus) = (self.offset(row), self.offset(plus), self.offset(minus));
                for c in 0..d {
                    let (xp, xm) = (self.s[plus + c], self.s[minus + c]);
                    let v = self.velocities[side * d + c];
                    self.s[sr + row + c] = (xp - xm) / (2.0 * h) - v;
                    self.s[sm + row + c] = (xp.abs() + xm.abs()) / (2.0 * h) + v.abs();
                    if jacobian {
                        let e = self.band(row + c, plus + c);
                        self.s[e] += 0.5 / h;
                        let e = self.band(row + c, minus + c);
                        self.s[e] += -0.5 / h;
                    }
                }
            }
        }
        constraint
    }

    /// `clear`.
    fn clear(&mut self, jacobian: bool) {
        let sh = self.shape;
        let n = sh.unknowns();
        let [_, sr, sm, _, sband, _] = sh.scratch_offsets();
        self.s[sr..sr + n].fill(0.0);
        self.s[sm..sm + n].fill(0.0);
        if jacobian {
            self.s[sband..sband + n * sh.width()].fill(0.0);
        }
    }

    /// `banded_solve`.
    fn banded_solve(&mut self) -> bool {
        let sh = self.shape;
        let n = sh.unknowns();
        let (kl, klku) = (sh.kl, sh.kl + sh.ku);
        let sb = sh.scratch_offsets()[3];
        for k in 0..n {
            let last = (k + kl).min(n - 1);
            let mut pivot = k;
            let mut best = self.s[self.band(k, k)].abs();
            for r in k + 1..=last {
                let v = self.s[self.band(r, k)].abs();
                if v > best {
                    best = v;
                    pivot = r;
                }
            }
            if !(best > 0.0 && best.is_finite()) {
                return false;
            }
            let end = (k + klku).min(n - 1);
            if pivot != k {
                for j in k..=end {
                    let (a, b) = (self.band(k, j), self.band(pivot, j));
                    self.s.swap(a, b);
                }
                self.s.swap(sb + k, sb + pivot);
            }
            let diagonal = self.s[self.band(k, k)];
            let bk = self.s[sb + k];
            for r in k + 1..=last {
                let factor = self.s[self.band(r, k)] / diagonal;
                if factor == 0.0 {
                    continue;
                }
                let at = self.band(r, k);
                self.s[at] = 0.0;
                for j in k + 1..=end {
                    let v = self.s[self.band(k, j)];
                    if v != 0.0 {
                        let at = self.band(r, j);
                        self.s[at] -= factor * v;
                    }
                }
                self.s[sb + r] -= factor * bk;
            }
        }
        let mut finite = true;
        for k in (0..n).rev() {
            let end = (k + klku).min(n - 1);
            let mut sum = self.s[sb + k];
            for j in k + 1..=end {
                sum -= self.s[self.band(k, j)] * self.s[sb + j];
            }
            let value = sum / self.s[self.band(k, k)];
            self.s[sb + k] = value;
            finite = finite && value.is_finite();
        }
        finite
    }

    /// `guess`.
    fn guess(&mut self) {
        let sh = self.shape;
        let d = sh.d;
        let h = self.h;
        self.s[..sh.unknowns()].fill(0.0);
        let mut previous = 0;
        for k in 0..=sh.steps {
            let p = sh.fixed[k];
            let q: Vec<f64> = if p != sh.prescribed() {
                previous = p;
                self.prescribed[p * d..(p + 1) * d].to_vec()
            } else {
                let (a, b) = (sh.anchors[previous], sh.anchors[previous + 1]);
                let s = (k - a) as f64 / (b - a) as f64;
                let mut q: Vec<f64> = (0..d)
                    .map(|c| {
                        let u = self.prescribed[previous * d + c];
                        let v = self.prescribed[(previous + 1) * d + c];
                        u + s * (v - u)
                    })
                    .collect();
                if sh.ch > 0 {
                    project(
                        &mut self.tools,
                        self.model,
                        &self.theta,
                        k as f64 * h,
                        &mut q,
                    );
                }
                q
            };
            let o = self.offset(k + self.first());
            self.s[o..o + d].copy_from_slice(&q);
        }
        if sh.order == 2 {
            let n = sh.steps;
            let (o0, om, on, op) = (
                self.offset(1),
                self.offset(0),
                self.offset(n + 1),
                self.offset(n + 2),
            );
            for c in 0..d {
                self.s[om + c] = self.s[o0 + c] - h * self.velocities[c];
                self.s[op + c] = self.s[on + c] + h * self.velocities[d + c];
            }
        }
    }

    /// `newton`: (outcome, iterations, constraint residual, equation residual).
    fn newton(&mut self, tolerance: f64, tiny: f64) -> (u32, usize, f64, f64) {
        let sh = self.shape;
        let d = sh.d;
        let n = sh.unknowns();
        let [_, sr, sm, sb, ..] = sh.scratch_offsets();
        self.guess();
        for iteration in 1..=sh.max_iterations {
            self.clear(true);
            self.assemble(true);
            let mut finite = true;
            for i in 0..n {
                let r = self.s[sr + i];
                finite = finite && r.is_finite();
                self.s[sb + i] = r;
            }
            if !finite {
                return (NOT_FINITE, iteration, 0.0, 0.0);
            }
            if !self.banded_solve() {
                return (SINGULAR, iteration, 0.0, 0.0);
            }
            let (mut change, mut scale) = (0.0_f64, 1.0_f64);
            for s in 0..sh.slots() {
                let o = self.offset(s);
                for c in 0..d {
                    let delta = self.s[sb + o + c];
                    let x = self.s[o + c] - delta;
                    self.s[o + c] = x;
                    change = larger(change, delta.abs());
                    scale = larger(scale, x.abs());
                }
            }
            for s in 0..sh.slots() {
                let o = self.offset(s);
                for e in o + d..self.offset(s + 1) {
                    self.s[e] -= self.s[sb + e];
                }
                let first = self.first();
                if s >= first && s - first <= sh.steps {
                    let p = sh.fixed[s - first];
                    if p != sh.prescribed() {
                        self.s[o..o + d].copy_from_slice(&self.prescribed[p * d..(p + 1) * d]);
                    }
                }
            }
            if change <= tolerance * scale {
                self.clear(false);
                let constraint = self.assemble(false);
                let (mut largest, mut size) = (0.0_f64, 0.0_f64);
                for i in 0..n {
                    largest = larger(largest, self.s[sr + i].abs());
                    size = larger(size, self.s[sm + i].abs());
                }
                let equation = largest / larger(size, tiny);
                if !equation.is_finite() {
                    return (NOT_FINITE, iteration, 0.0, 0.0);
                }
                return (OK, iteration, constraint, equation);
            }
        }
        (NO_CONVERGENCE, sh.max_iterations, 0.0, 0.0)
    }

    /// `action_point`: q_k through its slot, the ghosts rebuilt from the velocities.
    fn action_point(&self, s: usize) -> Vec<f64> {
        let sh = self.shape;
        let h = self.h;
        let d = sh.d;
        let rebuilt = |from: usize, side: usize, sign: f64| -> Vec<f64> {
            let q = self.point_of(from);
            (0..d)
                .map(|c| q[c] - sign * 2.0 * h * self.velocities[side * d + c])
                .collect()
        };
        if sh.order == 2 && s == 0 {
            rebuilt(2, 0, 1.0)
        } else if sh.order == 2 && s == sh.steps + 2 {
            rebuilt(sh.steps, 1, -1.0)
        } else {
            self.point_of(s)
        }
    }

    /// `load_action_window`: window j of the action (ghosts rebuilt) as its first point,
    /// the offsets of its points from it, and its time t_j.
    fn action_window_points(&self, j: usize) -> (Vec<f64>, Vec<Vec<f64>>, f64) {
        let w = self.shape.order + 1;
        let base = self.action_point(j);
        let offsets: Vec<Vec<f64>> = (0..w)
            .map(|i| {
                self.action_point(j + i)
                    .iter()
                    .zip(&base)
                    .map(|(a, b)| a - b)
                    .collect()
            })
            .collect();
        let t = (j as isize - self.first() as isize) as f64 * self.h;
        (base, offsets, t)
    }

    /// L_d of window j of the action and its observables.
    fn action_window(&mut self, j: usize) -> (f64, Vec<f64>) {
        let (base, offsets, t) = self.action_window_points(j);
        let slices: Vec<&[f64]> = offsets.iter().map(Vec::as_slice).collect();
        let mut values = Vec::new();
        let l_d = self.tools.lagrangian_and_observables(
            self.model,
            &self.shape.rule,
            &self.theta,
            t,
            &base,
            &slices,
            &mut values,
        );
        (l_d, values)
    }

    /// `window_parts` of window j of the action (order 2).
    fn window_parts(&mut self, j: usize) -> OstrogradskyParts {
        let (base, offsets, t) = self.action_window_points(j);
        let slices: Vec<&[f64]> = offsets.iter().map(Vec::as_slice).collect();
        self.tools
            .ostrogradsky_parts(self.model, &self.shape.rule, &self.theta, t, &base, &slices)
    }

    /// `step_energy_at`.
    fn step_energy_at(&mut self, k: usize) -> f64 {
        let first = self.first();
        let q = self.point_of(k + first);
        let next = self.point_of(k + 1 + first);
        let delta: Vec<f64> = next.iter().zip(&q).map(|(a, b)| a - b).collect();
        if self.shape.order == 2 {
            let before = self.window_parts(k);
            let after = self.window_parts(k + 1);
            return before.step_energy(&after, &delta, self.h);
        }
        let zeros = vec![0.0; q.len()];
        self.tools.energy(
            self.model,
            &self.shape.rule,
            &self.theta,
            k as f64 * self.h,
            &q,
            &[&zeros, &delta],
        )
    }

    /// `action_window_terms`: the gradient of window j of the action with its λ.
    fn action_window_gradient(&mut self, j: usize) -> Vec<f64> {
        let (base, offsets, t) = self.action_window_points(j);
        let slices: Vec<&[f64]> = offsets.iter().map(Vec::as_slice).collect();
        let lambda = self.multipliers_of(j)[..self.shape.cw].to_vec();
        self.tools.window(
            self.model,
            &self.shape.rule,
            &self.theta,
            t,
            &base,
            &slices,
            &lambda,
            &mut self.window,
        );
        self.window.gradient.clone()
    }

    /// `generator`: ξ(q).
    fn generator(&mut self, q: &[f64]) -> Vec<f64> {
        let mut xi = Vec::new();
        self.tools.generator(self.model, &self.theta, q, &mut xi);
        xi
    }

    /// `momentum_at`: the momentum map of step k = 1 … N.
    fn momentum_at(&mut self, k: usize) -> f64 {
        let d = self.shape.d;
        if self.shape.order == 1 {
            let gradient = self.action_window_gradient(k - 1);
            let xi = self.generator(&self.action_point(k));
            return dot(&gradient[d..2 * d], &xi);
        }
        let earlier = self.action_window_gradient(k - 1);
        let window = self.action_window_gradient(k);
        let momentum: Vec<f64> = (0..d).map(|c| earlier[2 * d + c] + window[d + c]).collect();
        let near = self.generator(&self.action_point(k + 1));
        let far = self.generator(&self.action_point(k + 2));
        dot(&momentum, &near) + dot(&window[2 * d..3 * d], &far)
    }

    /// `multipliers_of`.
    fn multipliers_of(&self, k: usize) -> Vec<f64> {
        let sh = self.shape;
        let (cw, ch) = (sh.cw, sh.ch);
        let mut values = vec![0.0; cw + ch];
        let s = k + self.first();
        let mut at = self.offset(s) + sh.d;
        if self.has_mu(s) {
            values[cw..].copy_from_slice(&self.s[at..at + ch]);
            at += ch;
        }
        if self.has_lambda(s) {
            values[..cw].copy_from_slice(&self.s[at..at + cw]);
        }
        values
    }
}

/// The twin of `main` in the boundary-value kernel for member `member`.
#[expect(
    clippy::needless_range_loop,
    reason = "indexed as the kernel's unrolled loops index its private arrays"
)]
pub fn variational_boundary_twin(
    shape: &BoundaryShape,
    model: &LagrangianModel,
    kernel: &KernelSource,
    bindings: &TwinBindings,
    member: usize,
) {
    let d = shape.d;
    let constant = |name: &str| bindings.constants[kernel.constants_layout.offset(name)];
    let h = constant("h");
    let nan = constant("nan");
    let tolerance = constant("tolerance");
    let tiny = {
        let t = constant("tiny");
        let t2 = t * t;
        let t4 = t2 * t2;
        let t8 = t4 * t4;
        t8 * t2 * 2.384185791015625e-7
    };
    let params = |name: &str| {
        let (offset, len) = (kernel.params.offset(name), kernel.params.len_of(name));
        let members = bindings.members();
        (offset..offset + len)
            .map(|e| bindings.params[e * members + member])
            .collect::<Vec<f64>>()
    };
    let scratch = bindings.scratch_of(member);
    let size = kernel.scratch;
    let mut me = Invocation {
        shape,
        model,
        theta: params("theta")[..shape.parameters].to_vec(),
        prescribed: params("prescribed"),
        velocities: params("velocities"),
        s: (0..size).map(|e| scratch.get(e)).collect(),
        h,
        tools: Scratch::default(),
        window: WindowTerms::default(),
        point: PointTerms::default(),
    };
    let state = bindings.state_of(member);
    let set = |name: &str, e: usize, value: f64| state.set(kernel.state.offset(name) + e, value);
    if bindings.dispatch.step_begin == 0 {
        let (outcome, iterations, constraint, equation) = me.newton(tolerance, tiny);
        set("iterations", 0, iterations as f64);
        if outcome == OK {
            set("code", 0, 0.0);
            set("status", 0, 0.0);
            set("constraint_residual", 0, constraint);
            set("equation_residual", 0, equation);
            if shape.energy {
                let mut drift = [nan, nan, 0.0];
                for k in 0..shape.steps {
                    drift = drift_add(drift, me.step_energy_at(k));
                }
                for (i, v) in drift.iter().enumerate() {
                    set("energy_drift", i, *v);
                }
            }
            if shape.symmetry {
                let mut drift = [nan, nan, 0.0];
                for k in 1..=shape.steps {
                    drift = drift_add(drift, me.momentum_at(k));
                }
                for (i, v) in drift.iter().enumerate() {
                    set("momentum_drift", i, *v);
                }
            }
            let mut action = CompensatedSum::default();
            for j in 0..shape.windows() {
                let (l_d, values) = me.action_window(j);
                let weight = if shape.order == 2 && (j == 0 || j == shape.steps) {
                    0.5
                } else {
                    1.0
                };
                action.add(weight * l_d);
                if shape.order == 2 && j == 0 {
                    for (e, v) in values.iter().enumerate() {
                        set("start_observables", e, *v);
                    }
                }
            }
            set("action", 0, action.value());
            let last = me.point_of(shape.steps + me.first());
            let first = me.point_of(me.first());
            for c in 0..d {
                set("q", c, last[c]);
                set("start_path", c, first[c]);
            }
            for (e, v) in me.multipliers_of(0).iter().enumerate() {
                set("start_multipliers", e, *v);
            }
        } else {
            set("code", 0, f64::from(outcome));
            set("status", 0, 1.0);
            for name in ["constraint_residual", "equation_residual", "action"] {
                set(name, 0, nan);
            }
            if shape.energy {
                set("energy_drift", 0, nan);
                set("energy_drift", 1, nan);
                set("energy_drift", 2, 0.0);
            }
            if shape.symmetry {
                set("momentum_drift", 0, nan);
                set("momentum_drift", 1, nan);
                set("momentum_drift", 2, 0.0);
            }
            for c in 0..d {
                set("q", c, nan);
                set("start_path", c, nan);
            }
            for e in 0..shape.multipliers() {
                set("start_multipliers", e, nan);
            }
            if shape.order == 2 {
                for e in 0..shape.observables {
                    set("start_observables", e, nan);
                }
            }
        }
        for (e, &v) in me.s.iter().enumerate() {
            scratch.set(e, v);
        }
    }
    let solved = state.get(kernel.state.offset("status")) == 0.0;
    let records = bindings.records_of(member);
    let record_entries = kernel.record.entries();
    let field = |name: &str| kernel.record.offset(name);
    let mut slot = 0;
    for k in 0..bindings.dispatch.step_count {
        let done = bindings.dispatch.step_begin + k + 1;
        if !bindings.records_step(done) {
            continue;
        }
        let base = slot * record_entries;
        let k = done as usize;
        let q = me.point_of(k + me.first());
        let m = me.multipliers_of(k);
        let pick = |v: f64| if solved { v } else { nan };
        for c in 0..d {
            records.set(base + field("path") + c, pick(q[c]));
        }
        for (e, &v) in m.iter().enumerate() {
            records.set(base + field("multipliers") + e, pick(v));
        }
        if shape.energy {
            let e = if solved {
                me.step_energy_at(k - 1)
            } else {
                nan
            };
            records.set(base + field("energy"), e);
        }
        if shape.symmetry {
            let value = if solved { me.momentum_at(k) } else { nan };
            records.set(base + field("momentum"), value);
        }
        if shape.observables > 0 {
            let values = if solved {
                me.action_window(k - (2 - shape.order)).1
            } else {
                vec![nan; shape.observables]
            };
            for (e, v) in values.iter().enumerate() {
                records.set(base + field("observables") + e, *v);
            }
        }
        slot += 1;
    }
}
