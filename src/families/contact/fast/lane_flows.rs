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
//!
//! B is a function of (t, x) alone, so (B, ∇B) at the end of one base step are the next
//! one's at its start whenever both sample the same time and nothing moved x in between
//! (φ_C and φ_B leave x alone): at the endpoints sampling, a Strang step's closing half and
//! the next step's opening half, the ends of consecutive Herglotz steps, and H at a record
//! point. The scratch remembers the time at which it holds them for the chunk's current x
//! and evaluates B only when that is not the time asked for, so a step of S(τ) evaluates
//! it once instead of twice; the values reused are the values that would have been
//! computed, bit for bit.
//!
//! Each flow runs on a range of the block's groups (a chunk), one operation after the other
//! over every group of the chunk: the groups' dependency chains are independent, so the
//! out-of-order core overlaps them, and what a flow decides once (the terms' kinds, the
//! time values) is decided once per chunk instead of once per group. A lane's own
//! arithmetic is the same whatever the chunk.

use std::ops::Range;

use super::lane_system::{LaneSystem, PotentialScratch, dim, product};
use super::lane_vec::LaneVec;
use super::time_values::TimeValues;
use crate::kernels::lanes::{LANES, Lanes, Simd};

/// The states of a block's groups of [`LANES`] members: x and p (n values per group,
/// group g's at `g · n .. (g + 1) · n`) and z (one value per group).
#[derive(Debug, Clone)]
pub struct GroupStates {
    pub n: usize,
    pub x: LaneVec,
    pub p: LaneVec,
    pub z: LaneVec,
}

impl GroupStates {
    /// `groups` groups of n-vectors, every value 0.
    pub fn zeroed(n: usize, groups: usize) -> Self {
        GroupStates {
            n,
            x: LaneVec::filled([0.0; LANES], groups * n),
            p: LaneVec::filled([0.0; LANES], groups * n),
            z: LaneVec::filled([0.0; LANES], groups),
        }
    }

    /// Sets lane l of group g to [x; p; z].
    pub fn set_lane(&mut self, g: usize, l: usize, x: &[f64], p: &[f64], z: f64) {
        let n = self.n;
        for (lanes, &value) in self.x[g * n..(g + 1) * n].iter_mut().zip(x) {
            lanes[l] = value;
        }
        for (lanes, &value) in self.p[g * n..(g + 1) * n].iter_mut().zip(p) {
            lanes[l] = value;
        }
        self.z[g][l] = z;
    }

    /// Writes lane l of group g's [x; p; z] to `out` (2 n + 1 values).
    pub fn write_lane(&self, g: usize, l: usize, out: &mut [f64]) {
        let n = self.n;
        let (x, rest) = out.split_at_mut(n);
        let (p, z) = rest.split_at_mut(n);
        for (out, lanes) in x.iter_mut().zip(&self.x[g * n..(g + 1) * n]) {
            *out = lanes[l];
        }
        for (out, lanes) in p.iter_mut().zip(&self.p[g * n..(g + 1) * n]) {
            *out = lanes[l];
        }
        z[0] = self.z[g][l];
    }
}

/// Work buffers of the flows, sized for a whole block (n values per group, or one).
#[derive(Debug, Clone, Default)]
pub struct FlowScratch {
    gradient: LaneVec,
    /// P p, or P w of the Herglotz step.
    row: LaneVec,
    /// w of the Herglotz step.
    w: LaneVec,
    /// B(t, x) per group.
    value: LaneVec,
    /// B(t_k, x) of the Herglotz step, kept while `value` takes B(t_{k+1}, x).
    value_start: LaneVec,
    /// 1 − c, 1 + c and wᵀ P w of the Herglotz step per group.
    keep: LaneVec,
    scale: LaneVec,
    wpw: LaneVec,
    potential: PotentialScratch,
    /// The bits of the time t at which `gradient` and `value` hold ∇B(t, x) and B(t, x) of
    /// the chunk's current x; `None` once x has moved, another chunk is stepped or another
    /// block starts.
    potential_time: Option<u64>,
}

impl FlowScratch {
    /// Buffers for `groups` groups of n-vectors.
    pub fn new(n: usize, groups: usize) -> Self {
        let vector = LaneVec::filled([0.0; LANES], n * groups);
        let scalar = LaneVec::filled([0.0; LANES], groups);
        FlowScratch {
            gradient: vector.clone(),
            row: vector.clone(),
            w: vector,
            value: scalar.clone(),
            value_start: scalar.clone(),
            keep: scalar.clone(),
            scale: scalar.clone(),
            wpw: scalar,
            potential: PotentialScratch::new(n, groups),
            potential_time: None,
        }
    }

    /// Forgets the potential held: the next evaluation asked for is computed (a chunk of
    /// other groups is about to be stepped, or another block).
    pub fn forget_potential(&mut self) {
        self.potential_time = None;
    }
}

/// ∇B(t, x) and B(t, x) of `groups` at the time of `at` into `work`'s gradient and value,
/// unless they hold them already for this x (`FlowScratch::potential_time`).
#[inline(always)]
fn evaluate_potential<S: Simd, const N: usize>(
    simd: S,
    system: &LaneSystem,
    groups: Range<usize>,
    at: &TimeValues,
    x: &[Lanes],
    work: &mut FlowScratch,
) {
    let time = at.t.to_bits();
    if work.potential_time == Some(time) {
        return;
    }
    system.potential::<S, N>(
        simd,
        groups,
        at,
        x,
        &mut work.gradient,
        &mut work.value,
        &mut work.potential,
    );
    work.potential_time = Some(time);
}

/// The n values of group `g`.
#[inline(always)]
fn span(n: usize, g: usize) -> Range<usize> {
    g * n..(g + 1) * n
}

/// φ_A(τ) of `groups`: x ← x + τ P p, z ← z + τ ½ pᵀ P p.
#[inline(always)]
pub fn flow_a<S: Simd, const N: usize>(
    simd: S,
    system: &LaneSystem,
    groups: Range<usize>,
    tau: f64,
    y: &mut GroupStates,
    work: &mut FlowScratch,
) {
    let n = dim::<N>(system.n);
    let t = simd.splat(tau);
    // x moves: the potential held is no longer this x's.
    work.potential_time = None;
    for g in groups {
        let (x, p, row) = (
            &mut y.x[span(n, g)],
            &y.p[span(n, g)],
            &mut work.row[span(n, g)],
        );
        product(simd, &system.kinetic, n, p, row);
        let mut sum = simd.zero();
        for ((x, p), pp) in x.iter_mut().zip(p).zip(row.iter()) {
            let pp = simd.load(pp);
            sum = simd.add(sum, simd.mul(simd.load(p), pp));
            simd.store(x, simd.add(simd.load(x), simd.mul(t, pp)));
        }
        let a = simd.mul(simd.splat(0.5), sum);
        let z = simd.add(simd.load(&y.z[g]), simd.mul(t, a));
        simd.store(&mut y.z[g], z);
    }
}

/// φ_B(τ) of `groups` at the time of `at`: p ← p − τ ∇B(t, x), z ← z − τ B(t, x).
#[inline(always)]
pub fn flow_b<S: Simd, const N: usize>(
    simd: S,
    system: &LaneSystem,
    groups: Range<usize>,
    at: &TimeValues,
    tau: f64,
    y: &mut GroupStates,
    work: &mut FlowScratch,
) {
    let n = dim::<N>(system.n);
    evaluate_potential::<S, N>(simd, system, groups.clone(), at, &y.x, work);
    let t = simd.splat(tau);
    for g in groups {
        for (p, grad) in y.p[span(n, g)].iter_mut().zip(&work.gradient[span(n, g)]) {
            simd.store(p, simd.sub(simd.load(p), simd.mul(t, simd.load(grad))));
        }
        let z = simd.sub(simd.load(&y.z[g]), simd.mul(t, simd.load(&work.value[g])));
        simd.store(&mut y.z[g], z);
    }
}

/// φ_C(τ) of `groups` at the time of `at`: (p, z) ← e^{−C(t) τ} (p, z), with the factors
/// `decay` (one per group of the block) when given (C constant: the same every step).
/// Nothing without damping (the factor is 1).
#[inline(always)]
pub fn flow_c<S: Simd, const N: usize>(
    simd: S,
    system: &LaneSystem,
    groups: Range<usize>,
    at: &TimeValues,
    tau: f64,
    decay: Option<&[Lanes]>,
    y: &mut GroupStates,
) {
    if !system.damped() {
        return;
    }
    let n = dim::<N>(system.n);
    for g in groups {
        let decay = match decay {
            Some(decay) => decay[g],
            None => system.damping_rate(g, at).map(|rate| (-rate * tau).exp()),
        };
        let d = simd.load(&decay);
        for p in y.p[span(n, g)].iter_mut() {
            simd.store(p, simd.mul(simd.load(p), d));
        }
        let z = simd.mul(simd.load(&y.z[g]), d);
        simd.store(&mut y.z[g], z);
    }
}

/// e^{−α τ} of group `g` for constant damping C = α.
pub fn constant_decay(system: &LaneSystem, g: usize, tau: f64) -> Lanes {
    system
        .damping_coefficients(g)
        .map(|alpha| (-alpha * tau).exp())
}

/// The Strang step S(τ) of `groups`, its opening half at `at[0]`, its closing half at
/// `at[1]`; `decay` the φ_C(τ/2) factors (one per group of the block) when C is constant.
#[inline(always)]
#[expect(clippy::too_many_arguments, reason = "the step's inputs, all used")]
pub fn strang<S: Simd, const N: usize>(
    simd: S,
    system: &LaneSystem,
    groups: Range<usize>,
    at: [&TimeValues; 2],
    tau: f64,
    decay: Option<&[Lanes]>,
    y: &mut GroupStates,
    work: &mut FlowScratch,
) {
    let half = 0.5 * tau;
    flow_c::<S, N>(simd, system, groups.clone(), at[0], half, decay, y);
    flow_b::<S, N>(simd, system, groups.clone(), at[0], half, y, work);
    flow_a::<S, N>(simd, system, groups.clone(), tau, y, work);
    flow_b::<S, N>(simd, system, groups.clone(), at[1], half, y, work);
    flow_c::<S, N>(simd, system, groups, at[1], half, decay, y);
}

/// The Herglotz step of size τ of `groups` at the times of `at` = [t_k, t_{k+½}, t_{k+1}].
#[inline(always)]
pub fn herglotz<S: Simd, const N: usize>(
    simd: S,
    system: &LaneSystem,
    groups: Range<usize>,
    at: [&TimeValues; 3],
    tau: f64,
    y: &mut GroupStates,
    work: &mut FlowScratch,
) {
    let n = dim::<N>(system.n);
    for g in groups.clone() {
        let c = system.damping_rate(g, at[1]).map(|rate| 0.5 * tau * rate);
        work.keep[g] = c.map(|c| 1.0 - c);
        work.scale[g] = c.map(|c| 1.0 + c);
    }
    let (half_tau, t) = (simd.splat(0.5 * tau), simd.splat(tau));
    evaluate_potential::<S, N>(simd, system, groups.clone(), at[0], &y.x, work);
    // x moves below: the potential held is no longer this x's.
    work.potential_time = None;
    for g in groups.clone() {
        work.value_start[g] = work.value[g];
        let keep = simd.load(&work.keep[g]);
        let (w, p, gradient) = (
            &mut work.w[span(n, g)],
            &y.p[span(n, g)],
            &work.gradient[span(n, g)],
        );
        for ((w, p), grad) in w.iter_mut().zip(p).zip(gradient) {
            let kick = simd.mul(half_tau, simd.load(grad));
            simd.store(w, simd.sub(simd.mul(keep, simd.load(p)), kick));
        }
        // x ← x + τ P w, wᵀ P w.
        let (x, w, row) = (
            &mut y.x[span(n, g)],
            &work.w[span(n, g)],
            &mut work.row[span(n, g)],
        );
        product(simd, &system.kinetic, n, w, row);
        let mut wpw = simd.zero();
        for ((x, w), pw) in x.iter_mut().zip(w).zip(row.iter()) {
            let pw = simd.load(pw);
            simd.store(x, simd.add(simd.load(x), simd.mul(t, pw)));
            wpw = simd.add(wpw, simd.mul(simd.load(w), pw));
        }
        simd.store(&mut work.wpw[g], wpw);
    }
    evaluate_potential::<S, N>(simd, system, groups.clone(), at[2], &y.x, work);
    for g in groups {
        let one_plus_c = &work.scale[g];
        let (p, w, gradient) = (
            &mut y.p[span(n, g)],
            &work.w[span(n, g)],
            &work.gradient[span(n, g)],
        );
        for ((p, w), grad) in p.iter_mut().zip(w).zip(gradient) {
            let mut numerator = [0.0; LANES];
            let kick = simd.mul(half_tau, simd.load(grad));
            simd.store(&mut numerator, simd.sub(simd.load(w), kick));
            *p = std::array::from_fn(|l| numerator[l] / one_plus_c[l]);
        }
        let (one_minus_c, wpw, b0, b1) = (
            &work.keep[g],
            &work.wpw[g],
            &work.value_start[g],
            &work.value[g],
        );
        let z = &y.z[g];
        y.z[g] = std::array::from_fn(|l| {
            let action = 0.5 * wpw[l] - 0.5 * (b0[l] + b1[l]);
            (one_minus_c[l] * z[l] + tau * action) / one_plus_c[l]
        });
    }
}

/// H(t, x, p, z) = (A(p) + B(t, x)) + C(t) z of `groups` at the time of `at`, into
/// `energy` (one value per group of the block).
#[inline(always)]
pub fn hamiltonian<S: Simd, const N: usize>(
    simd: S,
    system: &LaneSystem,
    groups: Range<usize>,
    at: &TimeValues,
    y: &GroupStates,
    work: &mut FlowScratch,
    energy: &mut [Lanes],
) {
    let n = dim::<N>(system.n);
    evaluate_potential::<S, N>(simd, system, groups.clone(), at, &y.x, work);
    for g in groups {
        let (p, row) = (&y.p[span(n, g)], &mut work.row[span(n, g)]);
        product(simd, &system.kinetic, n, p, row);
        let mut sum = [0.0; LANES];
        for (p, pp) in p.iter().zip(row.iter()) {
            for l in 0..LANES {
                sum[l] += p[l] * pp[l];
            }
        }
        let (b, c, z) = (&work.value[g], system.damping_rate(g, at), &y.z[g]);
        energy[g] = std::array::from_fn(|l| 0.5 * sum[l] + b[l] + c[l] * z[l]);
    }
}
