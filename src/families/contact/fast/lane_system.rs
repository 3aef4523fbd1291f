//! A block's contact systems side by side: what its members share (P, K, the terms' kinds,
//! signals, orbits and expressions) once, their own coefficients lane by lane, and B(t, x),
//! ∇ₓB(t, x) and C(t) of every lane with the reference's operations in the reference's
//! order ([`ContactSystem::potential`], [`ContactSystem::damping_rate`]):
//!
//! ```text
//!   B = Σ_terms, each adding to ∇B and B in turn:
//!     harmonic   (Kx)_r = Σ_c K_rc x_c,        ∇_r += (Kx)_r,      B += ½ x_r (Kx)_r
//!     quartic    c_r = x_r x_r x_r,            ∇_r += β c_r,       B += ¼ β c_r x_r
//!     pendulum   w² = ω ω,                     ∇_r += w² sin x_r,  B −= w² cos x_r
//!     forcing    s = s(t),                     ∇_r −= s a_r,       B −= s a_r x_r
//!     Kepler     ρ = √(Σ x_r x_r), q = ρ² ρ,   ∇_r += γ x_r / q,   B −= γ / ρ
//!     spin–orbit θ_r = 2 x_r − 2f,             ∇_r += ε (1/r)³ sin θ_r,  B −= ½ ε (1/r)³ cos θ_r
//!     expression [B_e, ∇B_e] = tape(x, t),     ∇ += ∇B_e,          B += B_e
//!     tidal      g = (1/r)⁶ ḟ,                 ∇_r −= η g,         B −= η g x_r
//!   C = α (constant), α s(t), η (1/r)⁶, C(t) (expression), 0
//! ```
//!
//! Sums over an index are formed as std's `Sum` forms them (from −0.0, left to right), so
//! each lane's values equal the reference's to the last bit.
//!
//! A block's lanes come in groups of [`LANES`] (one AVX-512 register of f64): an n-vector
//! of a group is n [`Lanes`] values, a per-lane coefficient one [`Lanes`] value per group.

use std::ops::Range;
use std::sync::Arc;

use super::super::model::{ContactMember, ContactSystem, Damping, Potential, PotentialExpression};
use super::lane_vec::LaneVec;
use super::time_values::{TimeSource, TimeValues};
use crate::kernels::lanes::{LANES, Lanes, Simd};

/// One term of B with its per-lane coefficients.
#[derive(Debug, Clone)]
enum LaneTerm {
    /// K, shared, row-major.
    Harmonic(Vec<f64>),
    /// β per group.
    Quartic(LaneVec),
    /// ω² = ω ω per group.
    Pendulum(LaneVec),
    /// The forcing's index among the forcing terms, a_r of group g at `g · n + r`.
    Forcing(usize, LaneVec),
    /// γ per group.
    Kepler(LaneVec),
    /// ε per group.
    SpinOrbit(LaneVec),
    Expression(Arc<PotentialExpression>),
}

/// Work buffers of an evaluation of B, sized for a whole block.
#[derive(Debug, Clone, Default)]
pub struct PotentialScratch {
    /// (Kx)_r, n values per group.
    product: LaneVec,
    /// The expression's variables [x, t] and outputs [B, ∇B], lane-major, and its registers.
    vars: Vec<f64>,
    out: Vec<f64>,
    registers: Vec<f64>,
}

impl PotentialScratch {
    /// Buffers for `groups` groups of n-vectors.
    pub fn new(n: usize, groups: usize) -> Self {
        PotentialScratch {
            product: LaneVec::filled([0.0; LANES], n * groups),
            ..PotentialScratch::default()
        }
    }
}

/// The systems of a block's members, group by group.
#[derive(Debug, Clone)]
pub struct LaneSystem {
    pub n: usize,
    /// Groups of [`LANES`] lanes.
    pub groups: usize,
    /// P, shared, row-major.
    pub kinetic: Vec<f64>,
    terms: Vec<LaneTerm>,
    /// The tidal η per group, when the damping is tidal (its forcing term in B).
    tidal: Option<LaneVec>,
    /// α (or η) per group; empty without damping.
    damping: LaneVec,
    pub time: TimeSource,
}

/// Whether `a` and `b` share everything [`LaneSystem`] keeps once per block.
fn shares(a: &ContactSystem, b: &ContactSystem) -> bool {
    let same_term = |s: &Potential, o: &Potential| match (s, o) {
        (Potential::Harmonic { k }, Potential::Harmonic { k: other }) => k == other,
        (Potential::Forcing { signal, .. }, Potential::Forcing { signal: other, .. }) => {
            signal == other
        }
        (Potential::SpinOrbit { orbit, .. }, Potential::SpinOrbit { orbit: other, .. }) => {
            orbit == other
        }
        (Potential::Expression(e), Potential::Expression(other)) => {
            Arc::ptr_eq(e, other) || e == other
        }
        (s, o) => s.kind() == o.kind(),
    };
    a.kinetic == b.kinetic
        && a.potential.len() == b.potential.len()
        && a.potential
            .iter()
            .zip(&b.potential)
            .all(|(s, o)| same_term(s, o))
        && TimeSource::of(a) == TimeSource::of(b)
}

/// n as the code is compiled for: `N` when it is not 0 (the loops over n values then
/// have a constant count, unrolled), else `n`.
#[inline(always)]
pub fn dim<const N: usize>(n: usize) -> usize {
    if N == 0 {
        n
    } else {
        debug_assert_eq!(n, N, "compiled for n = {N}");
        N
    }
}

/// out_r = Σ_c M_rc v_c of one group (M n × n row-major), each sum formed as std's `Sum`
/// forms it: from −0.0, c = 0 … n − 1. Four rows at a time, their sums in registers.
#[inline(always)]
pub fn product<S: Simd>(simd: S, m: &[f64], n: usize, v: &[Lanes], out: &mut [Lanes]) {
    let (m, v, out) = (&m[..n * n], &v[..n], &mut out[..n]);
    let mut blocks = out.chunks_exact_mut(4);
    let mut rows = m.chunks_exact(4 * n);
    for (out, rows) in (&mut blocks).zip(&mut rows) {
        let (m0, rest) = rows.split_at(n);
        let (m1, rest) = rest.split_at(n);
        let (m2, m3) = rest.split_at(n);
        let mut sums = [simd.splat(-0.0); 4];
        for ((((v, &a), &b), &c), &d) in v.iter().zip(m0).zip(m1).zip(m2).zip(m3) {
            let v = simd.load(v);
            sums[0] = simd.add(sums[0], simd.mul(simd.splat(a), v));
            sums[1] = simd.add(sums[1], simd.mul(simd.splat(b), v));
            sums[2] = simd.add(sums[2], simd.mul(simd.splat(c), v));
            sums[3] = simd.add(sums[3], simd.mul(simd.splat(d), v));
        }
        for (out, sum) in out.iter_mut().zip(sums) {
            simd.store(out, sum);
        }
    }
    for (out, row) in blocks
        .into_remainder()
        .iter_mut()
        .zip(rows.remainder().chunks_exact(n))
    {
        let mut sum = simd.splat(-0.0);
        for (v, &a) in v.iter().zip(row) {
            sum = simd.add(sum, simd.mul(simd.splat(a), simd.load(v)));
        }
        simd.store(out, sum);
    }
}

impl LaneSystem {
    /// The systems of `members` in `groups` groups of lanes (lanes past the members
    /// repeat the first); `None` when the members differ in what a block shares (P, K,
    /// signals, orbits, expressions, the terms' kinds), which members of one plan never do.
    pub fn new(members: &[ContactMember], groups: usize) -> Option<Self> {
        let first = &members.first()?.system;
        if !members.iter().all(|m| shares(first, &m.system)) {
            return None;
        }
        let mut lanes = LaneSystem::template(first, groups);
        for g in 0..groups {
            for l in 0..LANES {
                let i = g * LANES + l;
                let member = &members[if i < members.len() { i } else { 0 }];
                lanes.set_lane(g, l, &member.system);
            }
        }
        Some(lanes)
    }

    /// `groups` groups of lanes of systems that share what a block keeps once with
    /// `system`: its P, K, terms, signals and damping, every lane's coefficients 0 until
    /// [`LaneSystem::set_lane`] sets them.
    pub fn template(system: &ContactSystem, groups: usize) -> Self {
        let n = system.dof();
        let per_lane = || LaneVec::filled([0.0; LANES], groups);
        let mut forcings = 0;
        let terms = system
            .potential
            .iter()
            .map(|t| match t {
                Potential::Harmonic { k } => LaneTerm::Harmonic(k.transpose().as_slice().to_vec()),
                Potential::Quartic { .. } => LaneTerm::Quartic(per_lane()),
                Potential::Pendulum { .. } => LaneTerm::Pendulum(per_lane()),
                Potential::Forcing { .. } => {
                    forcings += 1;
                    LaneTerm::Forcing(forcings - 1, LaneVec::filled([0.0; LANES], groups * n))
                }
                Potential::Kepler { .. } => LaneTerm::Kepler(per_lane()),
                Potential::SpinOrbit { .. } => LaneTerm::SpinOrbit(per_lane()),
                Potential::Expression(e) => LaneTerm::Expression(Arc::clone(e)),
            })
            .collect();
        let damping = match system.damping {
            Damping::None => LaneVec::default(),
            _ => per_lane(),
        };
        let tidal = matches!(system.damping, Damping::Tidal { .. }).then(per_lane);
        LaneSystem {
            n,
            groups,
            kinetic: system.kinetic.transpose().as_slice().to_vec(),
            terms,
            tidal,
            damping,
            time: TimeSource::of(system),
        }
    }

    /// Sets lane l of group g to `system`'s coefficients (β, ω² = ω ω, γ, ε, the forcing
    /// amplitudes, α or η): a system that shares the rest with this one's.
    pub fn set_lane(&mut self, g: usize, l: usize, system: &ContactSystem) {
        let n = self.n;
        for (term, own) in self.terms.iter_mut().zip(&system.potential) {
            match (term, own) {
                (LaneTerm::Quartic(c) | LaneTerm::Kepler(c) | LaneTerm::SpinOrbit(c), own) => {
                    c[g][l] = own.coefficient().unwrap_or(0.0);
                }
                (LaneTerm::Pendulum(c), own) => {
                    let omega = own.coefficient().unwrap_or(0.0);
                    c[g][l] = omega * omega;
                }
                (LaneTerm::Forcing(_, a), Potential::Forcing { amplitude, .. }) => {
                    for (r, &value) in amplitude.iter().enumerate() {
                        a[g * n + r][l] = value;
                    }
                }
                (LaneTerm::Forcing(..), _) => unreachable!("members share their terms' kinds"),
                (LaneTerm::Harmonic(_) | LaneTerm::Expression(_), _) => {}
            }
        }
        if !self.damping.is_empty() {
            self.damping[g][l] = system.damping_coefficient();
        }
        if let Some(tidal) = &mut self.tidal {
            tidal[g][l] = system.damping_coefficient();
        }
    }

    /// Whether the system has damping (C ≠ 0).
    pub fn damped(&self) -> bool {
        !self.damping.is_empty()
    }

    /// α (or η) of group `g`: C = α for constant damping.
    pub fn damping_coefficients(&self, g: usize) -> Lanes {
        self.damping[g]
    }

    /// C(t) of group `g`, `at` holding the time functions at t.
    #[inline(always)]
    pub fn damping_rate(&self, g: usize, at: &TimeValues) -> Lanes {
        use super::time_values::DampingTime;
        match self.time.damping() {
            DampingTime::None => [0.0; LANES],
            DampingTime::Constant => self.damping[g],
            DampingTime::Signal(_) | DampingTime::Tidal(_) => {
                self.damping[g].map(|a| a * at.damping)
            }
            DampingTime::Expression(_) => [at.damping; LANES],
        }
    }

    /// B(t, x) of each group g of `groups` into `value[g]` and ∇ₓB(t, x) into its n values
    /// of `gradient` (group g's at `g · n .. (g + 1) · n`, as in `x`), `at` holding the time
    /// functions at t. Term by term, each over every group of `groups`.
    #[inline(always)]
    #[expect(
        clippy::too_many_arguments,
        reason = "the evaluation's inputs and outputs"
    )]
    pub fn potential<S: Simd, const N: usize>(
        &self,
        simd: S,
        groups: Range<usize>,
        at: &TimeValues,
        x: &[Lanes],
        gradient: &mut [Lanes],
        value: &mut [Lanes],
        scratch: &mut PotentialScratch,
    ) {
        let n = dim::<N>(self.n);
        let span = |g: usize| g * n..(g + 1) * n;
        gradient[groups.start * n..groups.end * n].fill([0.0; LANES]);
        value[groups.clone()].fill([0.0; LANES]);
        let half = simd.splat(0.5);
        for term in &self.terms {
            match term {
                LaneTerm::Harmonic(k) => {
                    for g in groups.clone() {
                        let (x, gradient, kx) = (
                            &x[span(g)],
                            &mut gradient[span(g)],
                            &mut scratch.product[span(g)],
                        );
                        product(simd, k, n, x, kx);
                        let mut b = simd.load(&value[g]);
                        for ((grad, x), kx) in gradient.iter_mut().zip(x).zip(kx.iter()) {
                            let kx = simd.load(kx);
                            simd.store(grad, simd.add(simd.load(grad), kx));
                            b = simd.add(b, simd.mul(simd.mul(half, simd.load(x)), kx));
                        }
                        simd.store(&mut value[g], b);
                    }
                }
                LaneTerm::Quartic(beta) => {
                    for g in groups.clone() {
                        let beta = simd.load(&beta[g]);
                        let quarter_beta = simd.mul(simd.splat(0.25), beta);
                        let mut b = simd.load(&value[g]);
                        for (grad, x) in gradient[span(g)].iter_mut().zip(&x[span(g)]) {
                            let x = simd.load(x);
                            let cube = simd.mul(simd.mul(x, x), x);
                            simd.store(grad, simd.add(simd.load(grad), simd.mul(beta, cube)));
                            b = simd.add(b, simd.mul(simd.mul(quarter_beta, cube), x));
                        }
                        simd.store(&mut value[g], b);
                    }
                }
                LaneTerm::Pendulum(w2) => {
                    for g in groups.clone() {
                        let (w2, value) = (&w2[g], &mut value[g]);
                        for (grad, x) in gradient[span(g)].iter_mut().zip(&x[span(g)]) {
                            for l in 0..LANES {
                                grad[l] += w2[l] * x[l].sin();
                                value[l] -= w2[l] * x[l].cos();
                            }
                        }
                    }
                }
                LaneTerm::Forcing(index, amplitude) => {
                    let s = simd.splat(at.forcing[*index]);
                    for g in groups.clone() {
                        let mut b = simd.load(&value[g]);
                        for ((grad, x), a) in gradient[span(g)]
                            .iter_mut()
                            .zip(&x[span(g)])
                            .zip(&amplitude[span(g)])
                        {
                            let sa = simd.mul(s, simd.load(a));
                            simd.store(grad, simd.sub(simd.load(grad), sa));
                            b = simd.sub(b, simd.mul(sa, simd.load(x)));
                        }
                        simd.store(&mut value[g], b);
                    }
                }
                LaneTerm::Kepler(gamma) => {
                    for g in groups.clone() {
                        let (gamma, x, value) = (&gamma[g], &x[span(g)], &mut value[g]);
                        let mut squared = [-0.0; LANES];
                        for x in x {
                            for l in 0..LANES {
                                squared[l] += x[l] * x[l];
                            }
                        }
                        let radius = squared.map(f64::sqrt);
                        for (grad, x) in gradient[span(g)].iter_mut().zip(x) {
                            for l in 0..LANES {
                                grad[l] += gamma[l] * x[l] / (squared[l] * radius[l]);
                            }
                        }
                        for l in 0..LANES {
                            value[l] -= gamma[l] / radius[l];
                        }
                    }
                }
                LaneTerm::SpinOrbit(epsilon) => {
                    let (cube, two_f) = (at.spin_cube, at.spin_two_f);
                    for g in groups.clone() {
                        let (epsilon, value) = (&epsilon[g], &mut value[g]);
                        for (grad, x) in gradient[span(g)].iter_mut().zip(&x[span(g)]) {
                            for l in 0..LANES {
                                let angle = 2.0 * x[l] - two_f;
                                grad[l] += epsilon[l] * cube * angle.sin();
                                value[l] -= 0.5 * epsilon[l] * cube * angle.cos();
                            }
                        }
                    }
                }
                LaneTerm::Expression(e) => {
                    let PotentialScratch {
                        vars,
                        out,
                        registers,
                        ..
                    } = scratch;
                    for g in groups.clone() {
                        vars.clear();
                        vars.extend_from_slice(x[span(g)].as_flattened());
                        vars.extend_from_slice(&[at.t; LANES]);
                        out.resize((n + 1) * LANES, 0.0);
                        e.tape().eval_lanes_inline(vars, LANES, out, registers);
                        for (grad, d) in gradient[span(g)]
                            .iter_mut()
                            .zip(out[LANES..].chunks_exact(LANES))
                        {
                            for l in 0..LANES {
                                grad[l] += d[l];
                            }
                        }
                        let value = &mut value[g];
                        for l in 0..LANES {
                            value[l] += out[l];
                        }
                    }
                }
            }
        }
        if let Some(eta) = &self.tidal {
            let forcing = simd.splat(at.tidal_forcing);
            for g in groups {
                let eta_g = simd.mul(simd.load(&eta[g]), forcing);
                let mut b = simd.load(&value[g]);
                for (grad, x) in gradient[span(g)].iter_mut().zip(&x[span(g)]) {
                    simd.store(grad, simd.sub(simd.load(grad), eta_g));
                    b = simd.sub(b, simd.mul(eta_g, simd.load(x)));
                }
                simd.store(&mut value[g], b);
            }
        }
    }
}
