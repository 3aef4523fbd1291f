//! The CPU twin of `shaders/contact/step.wgsl`: the same operations in the same order on
//! one member's parameters (in the `PARAM` layout order) and the step's shared stream values,
//! with the same f64 transcendental functions ([`crate::kernels::math`]); and the kernel's
//! `main` for one member of a dispatch ([`contact_step_twin`]).

use super::shape::ContactShape;
use crate::kernels::layout::Layout;
use crate::kernels::math::{math_cos, math_exp, math_sin};
use crate::kernels::{KernelSource, TwinBindings};

/// One member's parameters split by the fields of the `PARAM` layout (empty slices for
/// absent terms), located once rather than at every access.
pub struct TwinParams<'a> {
    kinetic: &'a [f64],
    harmonic: &'a [f64],
    quartic: &'a [f64],
    pendulum: &'a [f64],
    kepler: &'a [f64],
    spin_orbit: &'a [f64],
    forcing: &'a [f64],
    damping: &'a [f64],
}

impl<'a> TwinParams<'a> {
    /// Splits `params` (one member's, in the order of `layout`).
    pub fn new(layout: &Layout, params: &'a [f64]) -> Self {
        let field = |name: &str| {
            let offset = layout.offset(name);
            &params[offset..offset + layout.len_of(name)]
        };
        TwinParams {
            kinetic: field("kinetic"),
            harmonic: field("harmonic"),
            quartic: field("quartic"),
            pendulum: field("pendulum"),
            kepler: field("kepler"),
            spin_orbit: field("spin_orbit"),
            forcing: field("forcing"),
            damping: field("damping"),
        }
    }
}

/// The twin's view of one member: its kernel shape, parameters and the method's constants.
pub struct Twin<'a> {
    pub shape: &'a ContactShape,
    pub params: TwinParams<'a>,
    pub gamma: &'a [f64],
    /// Per stage, the stream point of its closing half (the `closing` constants).
    pub closing: &'a [f64],
    pub h: f64,
}

/// Work buffers of [`contact_step`], reused across steps.
pub struct TwinScratch {
    gradient: Vec<f64>,
    product: Vec<f64>,
    w: Vec<f64>,
    expression: ExpressionScratch,
}

/// The potential expression's variables [x, t], outputs [B, ∇ₓB] and tape registers.
#[derive(Default)]
pub struct ExpressionScratch {
    vars: Vec<f64>,
    out: Vec<f64>,
    registers: Vec<f64>,
}

impl TwinScratch {
    pub fn new(dof: usize) -> Self {
        TwinScratch {
            gradient: vec![0.0; dof],
            product: vec![0.0; dof],
            w: vec![0.0; dof],
            expression: ExpressionScratch {
                vars: vec![0.0; dof + 1],
                out: vec![0.0; dof + 1],
                registers: Vec::new(),
            },
        }
    }
}

// The twin keeps the kernel's indexed loops, so that both evaluate in the same order.
#[expect(
    clippy::needless_range_loop,
    reason = "same loop shape as contact_step.wgsl"
)]
impl Twin<'_> {
    /// B and ∇B at stream point `point` of step values `stream`, as in `potential` of the
    /// kernel.
    fn potential(
        &self,
        stream: &[f64],
        point: usize,
        x: &[f64],
        g: &mut [f64],
        scratch: &mut ExpressionScratch,
    ) -> f64 {
        let (n, shape) = (self.shape.dof, self.shape);
        let channels = shape.time.count();
        let time_fn = |c: usize| stream[point * channels + c];
        let mut value = 0.0;
        g.iter_mut().for_each(|v| *v = 0.0);
        if shape.harmonic {
            for r in 0..n {
                let mut kx = 0.0;
                for c in 0..n {
                    kx += self.params.harmonic[r * n + c] * x[c];
                }
                g[r] += kx;
                value += 0.5 * x[r] * kx;
            }
        }
        if shape.quartic {
            let beta = self.params.quartic[0];
            for r in 0..n {
                let cube = x[r] * x[r] * x[r];
                g[r] += beta * cube;
                value += 0.25 * beta * cube * x[r];
            }
        }
        if shape.pendulum {
            let omega = self.params.pendulum[0];
            let w2 = omega * omega;
            for r in 0..n {
                g[r] += w2 * math_sin(x[r]);
                value -= w2 * math_cos(x[r]);
            }
        }
        for j in 0..shape.time.forcings {
            let s = time_fn(j);
            for r in 0..n {
                let a = self.params.forcing[j * n + r];
                g[r] -= s * a;
                value -= s * a * x[r];
            }
        }
        if shape.kepler {
            let gamma = self.params.kepler[0];
            let mut squared = 0.0;
            for v in x.iter().take(n) {
                squared += v * v;
            }
            let radius = squared.sqrt();
            let cube = squared * radius;
            for r in 0..n {
                g[r] += gamma * x[r] / cube;
            }
            value -= gamma / radius;
        }
        if shape.time.spin_orbit {
            let epsilon = self.params.spin_orbit[0];
            let spin = shape.time.spin_orbit_channel();
            let (ac, as_) = (time_fn(spin), time_fn(spin + 1));
            for r in 0..n {
                let (s2, c2) = (math_sin(2.0 * x[r]), math_cos(2.0 * x[r]));
                g[r] += epsilon * (s2 * ac - c2 * as_);
                value -= 0.5 * epsilon * (c2 * ac + s2 * as_);
            }
        }
        if let Some(expression) = &shape.expression {
            // [B, ∇ₓB] at [x, t] by the tape the kernel's potential_expression was written
            // from.
            let ExpressionScratch {
                vars,
                out,
                registers,
            } = scratch;
            vars[..n].copy_from_slice(&x[..n]);
            vars[n] = if shape.time.time {
                time_fn(shape.time.time_channel())
            } else {
                0.0
            };
            expression.tape().eval(vars, out, registers);
            for r in 0..n {
                g[r] += out[r + 1];
            }
            value += out[0];
        }
        value
    }

    /// C(t) at a stream point.
    fn damping_rate(&self, stream: &[f64], point: usize) -> f64 {
        if !self.shape.time.damping {
            return 0.0;
        }
        let channels = self.shape.time.count();
        self.params.damping[0] * stream[point * channels + self.shape.time.damping_channel()]
    }

    /// ½ pᵀ P p and P p.
    fn kinetic(&self, p: &[f64], pp: &mut [f64]) -> f64 {
        let n = self.shape.dof;
        let mut sum = 0.0;
        for r in 0..n {
            let mut acc = 0.0;
            for c in 0..n {
                acc += self.params.kinetic[r * n + c] * p[c];
            }
            pp[r] = acc;
            sum += p[r] * acc;
        }
        0.5 * sum
    }

    /// H at a stream point (allocates: used at record points only).
    pub fn hamiltonian(&self, stream: &[f64], point: usize, y: &[f64]) -> f64 {
        let n = self.shape.dof;
        let (mut g, mut pp) = (vec![0.0; n], vec![0.0; n]);
        let a = self.kinetic(&y[n..2 * n], &mut pp);
        let mut scratch = TwinScratch::new(n).expression;
        let b = self.potential(stream, point, &y[..n], &mut g, &mut scratch);
        a + b + self.damping_rate(stream, point) * y[2 * n]
    }
}

/// The CPU twin of the kernel: one step of the plan's method on y = [x; p; z], from the
/// step's stream values.
pub fn contact_step(twin: &Twin, stream: &[f64], y: &mut [f64], scratch: &mut TwinScratch) {
    let n = twin.shape.dof;
    let TwinScratch {
        gradient: g,
        product: pp,
        w,
        expression: e,
    } = scratch;
    let h = twin.h;
    if twin.shape.herglotz {
        // G(τ) per stage, from stream point 2·stage (B there and two on, C between).
        for stage in 0..twin.shape.stages {
            let (start, tau) = (2 * stage, h * twin.gamma[stage]);
            let cm = 0.5 * tau * twin.damping_rate(stream, start + 1);
            let b0 = twin.potential(stream, start, &y[..n], g, e);
            for r in 0..n {
                w[r] = (1.0 - cm) * y[n + r] - 0.5 * tau * g[r];
            }
            let wpw = twin.kinetic(w, pp) * 2.0;
            for r in 0..n {
                y[r] += tau * pp[r];
            }
            let b1 = twin.potential(stream, start + 2, &y[..n], g, e);
            for r in 0..n {
                y[n + r] = (w[r] - 0.5 * tau * g[r]) / (1.0 + cm);
            }
            y[2 * n] = ((1.0 - cm) * y[2 * n] + tau * (0.5 * wpw - 0.5 * (b0 + b1))) / (1.0 + cm);
        }
        return;
    }
    for stage in 0..twin.shape.stages {
        let tau = h * twin.gamma[stage];
        let closing = twin.closing[stage] as usize;
        for (point, half) in [(stage, true), (closing, false)] {
            if half {
                // φ_C(τ/2) then φ_B(τ/2) at the stage's start.
                let decay = math_exp(-twin.damping_rate(stream, point) * (0.5 * tau));
                for v in &mut y[n..] {
                    *v *= decay;
                }
                let b = twin.potential(stream, point, &y[..n], g, e);
                for r in 0..n {
                    y[n + r] -= 0.5 * tau * g[r];
                }
                y[2 * n] -= 0.5 * tau * b;
                // φ_A(τ).
                let a = twin.kinetic(&y[n..2 * n], pp);
                for r in 0..n {
                    y[r] += tau * pp[r];
                }
                y[2 * n] += tau * a;
            } else {
                // φ_B(τ/2) then φ_C(τ/2) at the closing point (the stage's end, or its
                // midpoint again).
                let b = twin.potential(stream, point, &y[..n], g, e);
                for r in 0..n {
                    y[n + r] -= 0.5 * tau * g[r];
                }
                y[2 * n] -= 0.5 * tau * b;
                let decay = math_exp(-twin.damping_rate(stream, point) * (0.5 * tau));
                for v in &mut y[n..] {
                    *v *= decay;
                }
            }
        }
    }
}

/// The twin of `main` in `shaders/contact/step.wgsl` for member `i` of the dispatch: its
/// y = [x; p; z] advanced through the dispatch's steps, the first non-finite step noted in
/// `status`, and at record points y with H at the step's end written to the record slot.
pub fn contact_step_twin(shape: &ContactShape, kernel: &KernelSource, b: &TwinBindings, i: usize) {
    let n = shape.dof;
    let params = b.params_of(i, kernel.params.entries());
    let constants = &kernel.constants_layout;
    let field = |name: &str| {
        let at = constants.offset(name);
        &b.constants[at..at + constants.len_of(name)]
    };
    let twin = Twin {
        shape,
        params: TwinParams::new(&kernel.params, &params),
        gamma: field("gamma"),
        closing: field("closing"),
        h: field("h")[0],
    };
    let mut scratch = TwinScratch::new(n);
    let (state, records) = (b.state_of(i), b.records_of(i));
    let field = |name: &str| kernel.state.offset(name);
    let (x_at, p_at, z_at, status_at) = (field("x"), field("p"), field("z"), field("status"));
    let mut y: Vec<f64> = (0..n)
        .map(|r| state.get(x_at + r))
        .chain((0..n).map(|r| state.get(p_at + r)))
        .chain([state.get(z_at)])
        .collect();
    let mut status = state.get(status_at);
    let width = shape.points() * shape.time.count();
    let record = |name: &str| kernel.record.offset(name);
    let (rx, rp, rz, rh) = (record("x"), record("p"), record("z"), record("hamiltonian"));
    let mut slot = 0;
    for k in 0..b.dispatch.step_count as usize {
        let values = &b.stream[k * width..(k + 1) * width];
        contact_step(&twin, values, &mut y, &mut scratch);
        let done = b.dispatch.step_begin + k as u32 + 1;
        if status == 0.0 && !y.iter().all(|v| v.is_finite()) {
            status = done as f64;
        }
        if b.records_step(done) {
            let base = slot * kernel.record.entries();
            for r in 0..n {
                records.set(base + rx + r, y[r]);
                records.set(base + rp + r, y[n + r]);
            }
            records.set(base + rz, y[2 * n]);
            records.set(base + rh, twin.hamiltonian(values, shape.points() - 1, &y));
            slot += 1;
        }
    }
    for r in 0..n {
        state.set(x_at + r, y[r]);
        state.set(p_at + r, y[n + r]);
    }
    state.set(z_at, y[2 * n]);
    state.set(status_at, status);
}
