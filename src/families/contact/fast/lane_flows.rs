//! The exact flows of the split parts, the Strang step and the Herglotz step of
//! [`super::super::flows`] on all lanes of a block at once, each lane with the reference's
//! operations in the reference's order:
//!
//! ```text
//!   φ_A(τ):  (Pp)_r = Σ_c P_rc p_c,  A = ½ Σ_r p_r (Pp)_r,  x_r += τ (Pp)_r,  z += τ A
//!   φ_B(τ):  p −= τ ∇B(t, x),  z −= τ B(t, x)
//!   φ_C(τ):  d = exp(−C(t) τ),  p ← d p,  z ← d z
//!   S(τ)  = φ_C(τ/2) φ_B(τ/2) φ_A(τ) φ_B(τ/2) φ_C(τ/2)
//!   Herglotz(τ), c = ½ τ C(t_{k+½}):
//!     w = (1 − c) p − ½ τ ∇B(t_k, x),  x += τ P w,
//!     p = (w − ½ τ ∇B(t_{k+1}, x)) / (1 + c),
//!     z = ((1 − c) z + τ (½ wᵀ P w − ½ (B(t_k, ·) + B(t_{k+1}, ·)))) / (1 + c)
//!   H(t, x, p, z) = (A(p) + B(t, x)) + C(t) z
//! ```

use super::lane_system::{LaneSystem, PotentialScratch, product};
use super::time_values::TimeValues;
use crate::kernels::lanes::{LANES, Lanes, Simd};

/// The state of a group of [`LANES`] members: x and p (n values) and z.
#[derive(Debug, Clone)]
pub struct Group {
    pub x: Vec<Lanes>,
    pub p: Vec<Lanes>,
    pub z: Lanes,
}

/// Work buffers of the flows (n values each).
#[derive(Debug, Clone, Default)]
pub struct FlowScratch {
    gradient: Vec<Lanes>,
    /// P p, or P w of the Herglotz step.
    row: Vec<Lanes>,
    /// w of the Herglotz step.
    w: Vec<Lanes>,
    potential: PotentialScratch,
}

impl FlowScratch {
    pub fn new(n: usize) -> Self {
        FlowScratch {
            gradient: vec![[0.0; LANES]; n],
            row: vec![[0.0; LANES]; n],
            w: vec![[0.0; LANES]; n],
            potential: PotentialScratch::default(),
        }
    }
}

/// φ_A(τ): x ← x + τ P p, z ← z + τ ½ pᵀ P p.
#[inline(always)]
pub fn flow_a<S: Simd>(
    simd: S,
    system: &LaneSystem,
    tau: f64,
    y: &mut Group,
    work: &mut FlowScratch,
) {
    product(simd, &system.kinetic, system.n, &y.p, &mut work.row);
    let t = simd.splat(tau);
    let mut sum = simd.zero();
    for ((x, p), pp) in y.x.iter_mut().zip(&y.p).zip(&work.row) {
        let pp = simd.load(pp);
        sum = simd.add(sum, simd.mul(simd.load(p), pp));
        simd.store(x, simd.add(simd.load(x), simd.mul(t, pp)));
    }
    let a = simd.mul(simd.splat(0.5), sum);
    let z = simd.add(simd.load(&y.z), simd.mul(t, a));
    simd.store(&mut y.z, z);
}

/// φ_B(τ) of group `g` at the time of `at`: p ← p − τ ∇B(t, x), z ← z − τ B(t, x).
#[inline(always)]
pub fn flow_b<S: Simd>(
    simd: S,
    system: &LaneSystem,
    g: usize,
    at: &TimeValues,
    tau: f64,
    y: &mut Group,
    work: &mut FlowScratch,
) {
    let b = system.potential(simd, g, at, &y.x, &mut work.gradient, &mut work.potential);
    let t = simd.splat(tau);
    for (p, grad) in y.p.iter_mut().zip(&work.gradient) {
        simd.store(p, simd.sub(simd.load(p), simd.mul(t, simd.load(grad))));
    }
    let z = simd.sub(simd.load(&y.z), simd.mul(t, simd.load(&b)));
    simd.store(&mut y.z, z);
}

/// φ_C(τ) of group `g` at the time of `at`: (p, z) ← e^{−C(t) τ} (p, z), with the factors
/// `decay` when given (C constant: the same every step). Nothing without damping (the
/// factor is 1).
#[inline(always)]
pub fn flow_c<S: Simd>(
    simd: S,
    system: &LaneSystem,
    g: usize,
    at: &TimeValues,
    tau: f64,
    decay: Option<&Lanes>,
    y: &mut Group,
) {
    if !system.damped() {
        return;
    }
    let decay = match decay {
        Some(decay) => *decay,
        None => system.damping_rate(g, at).map(|rate| (-rate * tau).exp()),
    };
    let d = simd.load(&decay);
    for p in y.p.iter_mut().chain(std::iter::once(&mut y.z)) {
        simd.store(p, simd.mul(simd.load(p), d));
    }
}

/// e^{−α τ} of group `g` for constant damping C = α.
pub fn constant_decay(system: &LaneSystem, g: usize, tau: f64) -> Lanes {
    system
        .damping_coefficients(g)
        .map(|alpha| (-alpha * tau).exp())
}

/// The Strang step S(τ) of group `g`, its opening half at `at[0]`, its closing half at
/// `at[1]`; `decay` the φ_C(τ/2) factors when C is constant.
#[inline(always)]
#[expect(clippy::too_many_arguments, reason = "the step's inputs, all used")]
pub fn strang<S: Simd>(
    simd: S,
    system: &LaneSystem,
    g: usize,
    at: [&TimeValues; 2],
    tau: f64,
    decay: Option<&Lanes>,
    y: &mut Group,
    work: &mut FlowScratch,
) {
    let half = 0.5 * tau;
    flow_c(simd, system, g, at[0], half, decay, y);
    flow_b(simd, system, g, at[0], half, y, work);
    flow_a(simd, system, tau, y, work);
    flow_b(simd, system, g, at[1], half, y, work);
    flow_c(simd, system, g, at[1], half, decay, y);
}

/// The Herglotz step of size τ of group `g` at the times of `at` = [t_k, t_{k+½}, t_{k+1}].
#[inline(always)]
pub fn herglotz<S: Simd>(
    simd: S,
    system: &LaneSystem,
    g: usize,
    at: [&TimeValues; 3],
    tau: f64,
    y: &mut Group,
    work: &mut FlowScratch,
) {
    let c = system.damping_rate(g, at[1]).map(|rate| 0.5 * tau * rate);
    let (one_minus_c, one_plus_c) = (c.map(|c| 1.0 - c), c.map(|c| 1.0 + c));
    let (half_tau, t) = (simd.splat(0.5 * tau), simd.splat(tau));
    let b0 = system.potential(
        simd,
        g,
        at[0],
        &y.x,
        &mut work.gradient,
        &mut work.potential,
    );
    let keep = simd.load(&one_minus_c);
    for ((w, p), grad) in work.w.iter_mut().zip(&y.p).zip(&work.gradient) {
        let kick = simd.mul(half_tau, simd.load(grad));
        simd.store(w, simd.sub(simd.mul(keep, simd.load(p)), kick));
    }
    // x ← x + τ P w, wᵀ P w.
    product(simd, &system.kinetic, system.n, &work.w, &mut work.row);
    let mut wpw = simd.zero();
    for ((x, w), pw) in y.x.iter_mut().zip(&work.w).zip(&work.row) {
        let pw = simd.load(pw);
        simd.store(x, simd.add(simd.load(x), simd.mul(t, pw)));
        wpw = simd.add(wpw, simd.mul(simd.load(w), pw));
    }
    let mut wpw_lanes = [0.0; LANES];
    simd.store(&mut wpw_lanes, wpw);
    let b1 = system.potential(
        simd,
        g,
        at[2],
        &y.x,
        &mut work.gradient,
        &mut work.potential,
    );
    for ((p, w), grad) in y.p.iter_mut().zip(&work.w).zip(&work.gradient) {
        let mut numerator = [0.0; LANES];
        let kick = simd.mul(half_tau, simd.load(grad));
        simd.store(&mut numerator, simd.sub(simd.load(w), kick));
        *p = std::array::from_fn(|l| numerator[l] / one_plus_c[l]);
    }
    y.z = std::array::from_fn(|l| {
        let action = 0.5 * wpw_lanes[l] - 0.5 * (b0[l] + b1[l]);
        (one_minus_c[l] * y.z[l] + tau * action) / one_plus_c[l]
    });
}

/// H(t, x, p, z) = (A(p) + B(t, x)) + C(t) z of group `g` at the time of `at`.
#[inline(always)]
pub fn hamiltonian<S: Simd>(
    simd: S,
    system: &LaneSystem,
    g: usize,
    at: &TimeValues,
    y: &Group,
    work: &mut FlowScratch,
) -> Lanes {
    product(simd, &system.kinetic, system.n, &y.p, &mut work.row);
    let mut sum = [0.0; LANES];
    for (p, pp) in y.p.iter().zip(&work.row) {
        for l in 0..LANES {
            sum[l] += p[l] * pp[l];
        }
    }
    let b = system.potential(simd, g, at, &y.x, &mut work.gradient, &mut work.potential);
    let c = system.damping_rate(g, at);
    std::array::from_fn(|l| 0.5 * sum[l] + b[l] + c[l] * y.z[l])
}
