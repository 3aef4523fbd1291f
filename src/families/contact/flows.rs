//! Reference integrators of contact systems H = A(p) + B(t, x) + C(t) z (f64, std's
//! transcendental functions, the model's own term evaluation).
//!
//! The contact vector field is linear in H, so X_H = X_A + X_B + X_{Cz}, and each part is
//! exactly integrable. From ẋ = ∂H/∂p, ṗ = −∂H/∂x − p ∂H/∂z, ż = p·∂H/∂p − H:
//!
//! ```text
//!   X_A:  ẋ = ∇A(p) = P p,  ṗ = 0,       ż = p·∇A − A = ½ pᵀ P p
//!         φ_A(τ): x ← x + τ P p,  z ← z + τ A(p)
//!   X_B:  ẋ = 0,  ṗ = −∇B(t, x),         ż = −B(t, x)
//!         φ_B(τ): p ← p − τ ∇B(t, x),  z ← z − τ B(t, x)
//!   X_Cz: ẋ = 0,  ṗ = −C(t) p,           ż = −C(t) z
//!         φ_C(τ): p ← e^{−C(t) τ} p,  z ← e^{−C(t) τ} z
//! ```
//!
//! (Vermeeren's 2019 Oxford slides on contact variational integrators misprint φ_B — it
//! moves x there — and φ_C, which they write with p − tpC and e^{Ct}.)
//!
//! Time-dependent B and C: with time t a coordinate and E its conjugate, the extended
//! Hamiltonian H̃ = H + E on (x, p, t, E, z) with η = dz − p dx − E dt is autonomous, its
//! field gives ṫ = 1 and the same (ẋ, ṗ, ż), and it splits into the parts A, B, C z and E,
//! each exactly integrable: φ_B and φ_C hold t frozen, and X_E is the time translation
//! φ_T(σ): t ← t + σ (E's own motion feeds back into nothing and is not computed). A Strang
//! step S(τ) from t to t + τ is a symmetric composition of these exact flows in one of two
//! ways (`[system] time_sampling`, [`TimeSampling`]):
//!
//! ```text
//!   endpoints: S(τ) = φ_C(τ/2) φ_B(τ/2) φ_{A+E}(τ) φ_B(τ/2) φ_C(τ/2)
//!              B, C of the opening half at t, of the closing half at t + τ
//!   midpoint:  S(τ) = φ_T(τ/2) φ_C(τ/2) φ_B(τ/2) φ_A(τ) φ_B(τ/2) φ_C(τ/2) φ_T(τ/2)
//!              B, C of both halves at t + τ/2
//! ```
//!
//! Either is symmetric (S(τ) S(−τ) = id), hence of order 2, and a composition
//! S(γ_s h) ∘ … ∘ S(γ_1 h) has the composition's order for time-dependent B and C too.
//! Every flow, and so every step, is a contact transformation.
//!
//! The Herglotz integrator discretises Herglotz's principle ż = L(x, ẋ, z) with
//! L = ½ ẋᵀ P⁻¹ ẋ − B(t, x) − C(t) z, using the discrete Lagrangian symmetric in the
//! step's ends
//!
//! ```text
//!   L_d(x_k, x_{k+1}, z_k, z_{k+1}) = ½ vᵀ P⁻¹ v − ½ (B(t_k, x_k) + B(t_{k+1}, x_{k+1}))
//!                                     − C(t_{k+½}) (z_k + z_{k+1})/2,   v = (x_{k+1} − x_k)/h
//! ```
//!
//! in its position–momentum form p_k = −h D₁L_d / (1 + h D₃L_d),
//! p_{k+1} = h D₂L_d / (1 − h D₄L_d), z_{k+1} = z_k + h L_d, which is explicit here
//! (with c = h C(t_{k+½})/2 and w = P⁻¹ v):
//!
//! ```text
//!   w       = (1 − c) p_k − (h/2) ∇B(t_k, x_k)
//!   x_{k+1} = x_k + h P w
//!   p_{k+1} = (w − (h/2) ∇B(t_{k+1}, x_{k+1})) / (1 + c)
//!   z_{k+1} = ((1 − c) z_k + h (½ wᵀ P w − ½ (B(t_k, x_k) + B(t_{k+1}, x_{k+1})))) / (1 + c)
//! ```
//!
//! The step G(h) is symmetric: G(−h) from t_{k+1} (c ↦ −c, the same midpoint t_{k+½})
//! gives back w = (1 + c) p_{k+1} + (h/2) ∇B(t_{k+1}, x_{k+1}), then x_k, p_k and z_k
//! exactly, so G(−h) G(h) = id (shown to round-off in `tests/contact_structure.rs`).
//! Compositions G(γ_s h) ∘ … ∘ G(γ_1 h) with the registry's symmetric γ therefore have
//! their composition's order (Yoshida's trick on the slides; measured in
//! `tests/contact_orders.rs`), each stage G(γ_i h) sampling B at its ends and C at its
//! midpoint.

use super::model::ContactSystem;
use super::plan::{ContactMethod, TimeSampling};

/// The state y = [x; p; z] split into its parts.
fn parts(y: &mut [f64]) -> (&mut [f64], &mut [f64], &mut f64) {
    let n = (y.len() - 1) / 2;
    let (x, rest) = y.split_at_mut(n);
    let (p, z) = rest.split_at_mut(n);
    (x, p, &mut z[0])
}

/// φ_A(τ): x ← x + τ P p, z ← z + τ ½ pᵀ P p.
pub fn flow_a(system: &ContactSystem, tau: f64, y: &mut [f64]) {
    let a = {
        let n = (y.len() - 1) / 2;
        system.kinetic_energy(&y[n..2 * n])
    };
    let (x, p, z) = parts(y);
    let n = p.len();
    for (r, x_r) in x.iter_mut().enumerate() {
        let pp: f64 = (0..n).map(|c| system.kinetic[(r, c)] * p[c]).sum();
        *x_r += tau * pp;
    }
    *z += tau * a;
}

/// φ_B(τ) at time t: p ← p − τ ∇B(t, x), z ← z − τ B(t, x).
pub fn flow_b(system: &ContactSystem, t: f64, tau: f64, y: &mut [f64], gradient: &mut [f64]) {
    let (x, p, z) = parts(y);
    let b = system.potential(t, x, gradient);
    for (p_r, g) in p.iter_mut().zip(gradient.iter()) {
        *p_r -= tau * g;
    }
    *z -= tau * b;
}

/// φ_C(τ) at time t: (p, z) ← e^{−C(t) τ} (p, z).
pub fn flow_c(system: &ContactSystem, t: f64, tau: f64, y: &mut [f64]) {
    let decay = (-system.damping_rate(t) * tau).exp();
    let (_, p, z) = parts(y);
    for p_r in p.iter_mut() {
        *p_r *= decay;
    }
    *z *= decay;
}

/// The Strang step S(τ) from time t (to t + τ), B and C sampled at its ends.
pub fn strang(system: &ContactSystem, t: f64, tau: f64, y: &mut [f64], gradient: &mut [f64]) {
    strang_between(system, [t, t + tau], tau, y, gradient);
}

/// The Strang step S(τ), B and C of its opening half sampled at `times[0]` and of its
/// closing half at `times[1]` (its start and end, or its midpoint twice).
fn strang_between(
    system: &ContactSystem,
    times: [f64; 2],
    tau: f64,
    y: &mut [f64],
    gradient: &mut [f64],
) {
    flow_c(system, times[0], 0.5 * tau, y);
    flow_b(system, times[0], 0.5 * tau, y, gradient);
    flow_a(system, tau, y);
    flow_b(system, times[1], 0.5 * tau, y, gradient);
    flow_c(system, times[1], 0.5 * tau, y);
}

/// One second-order Herglotz step G(h) from t_k = t.
pub fn herglotz(system: &ContactSystem, t: f64, h: f64, y: &mut [f64], gradient: &mut [f64]) {
    herglotz_at(system, [t, t + 0.5 * h, t + h], h, y, gradient);
}

/// One second-order Herglotz step G(h) of size h (negative h steps backwards) with B
/// sampled at times\[0\] and times\[2\] and C at times\[1\] (t_k, t_{k+½}, t_{k+1}
/// for the discrete Lagrangian above):
/// w = (1 − c) p − (h/2) ∇B(t_k, x), x ← x + h P w, p ← (w − (h/2) ∇B(t_{k+1}, x)) / (1 + c),
/// z ← ((1 − c) z + h (½ wᵀ P w − ½ (B_k + B_{k+1}))) / (1 + c), c = h C(t_{k+½}) / 2.
pub fn herglotz_at(
    system: &ContactSystem,
    times: [f64; 3],
    h: f64,
    y: &mut [f64],
    gradient: &mut [f64],
) {
    let [t, t_half, t_next] = times;
    let c = 0.5 * h * system.damping_rate(t_half);
    let (x, p, z) = parts(y);
    let n = x.len();
    let b0 = system.potential(t, x, gradient);
    let w: Vec<f64> = (0..n)
        .map(|r| (1.0 - c) * p[r] - 0.5 * h * gradient[r])
        .collect();
    let mut wpw = 0.0;
    for r in 0..n {
        let pw: f64 = (0..n).map(|k| system.kinetic[(r, k)] * w[k]).sum();
        x[r] += h * pw;
        wpw += w[r] * pw;
    }
    let b1 = system.potential(t_next, x, gradient);
    for r in 0..n {
        p[r] = (w[r] - 0.5 * h * gradient[r]) / (1.0 + c);
    }
    *z = ((1.0 - c) * *z + h * (0.5 * wpw - 0.5 * (b0 + b1))) / (1.0 + c);
}

/// One step of `method` from t with step h: y ← Ψ(h) y, the sub-steps from the times
/// t_0 = t, t_i = t_{i−1} + γ_i h, B and C sampled at t_{i−1} and t_i (endpoints) or at
/// t_{i−1} + γ_i h/2 (midpoint); Herglotz stage i with B at t_{i−1}, t_i and C at
/// t_{i−1} + γ_i h/2.
pub fn step(
    method: &ContactMethod,
    system: &ContactSystem,
    t: f64,
    h: f64,
    y: &mut [f64],
    gradient: &mut [f64],
) {
    let times: Vec<f64> = match method {
        ContactMethod::Splitting(composition, TimeSampling::Endpoints) => std::iter::once(t)
            .chain(composition.coefficients.iter().scan(t, |time, &g| {
                *time += g * h;
                Some(*time)
            }))
            .collect(),
        ContactMethod::Splitting(composition, TimeSampling::Midpoint) => composition
            .coefficients
            .iter()
            .scan(t, |time, &g| {
                let middle = *time + 0.5 * g * h;
                *time += g * h;
                Some(middle)
            })
            .chain(std::iter::once(t + h))
            .collect(),
        ContactMethod::Herglotz(composition) => {
            let mut times = vec![t];
            let mut time = t;
            for &g in &composition.coefficients {
                times.push(time + 0.5 * g * h);
                time += g * h;
                times.push(time);
            }
            times
        }
    };
    step_at(method, system, &times, h, y, gradient);
}

/// One step of `method` with step h whose time-dependent terms are sampled at `times`
/// (the method's points, [`ContactMethod::offsets`]: times\[i\] ≈ t + offset_i h), stage i
/// at the points [`ContactMethod::stage_points`] names: y ← Ψ(h) y. The time-dependent
/// terms are evaluated exactly there, so a caller that passes the times of the kernels'
/// shared stream evaluates its signals at the same f64 times.
pub fn step_at(
    method: &ContactMethod,
    system: &ContactSystem,
    times: &[f64],
    h: f64,
    y: &mut [f64],
    gradient: &mut [f64],
) {
    match method {
        ContactMethod::Splitting(composition, sampling) => {
            debug_assert_eq!(times.len(), composition.coefficients.len() + 1);
            for (i, &g) in composition.coefficients.iter().enumerate() {
                let closing = match sampling {
                    TimeSampling::Endpoints => i + 1,
                    TimeSampling::Midpoint => i,
                };
                strang_between(system, [times[i], times[closing]], g * h, y, gradient);
            }
        }
        ContactMethod::Herglotz(composition) => {
            debug_assert_eq!(times.len(), 2 * composition.coefficients.len() + 1);
            for (i, &g) in composition.coefficients.iter().enumerate() {
                let at = [times[2 * i], times[2 * i + 1], times[2 * i + 2]];
                herglotz_at(system, at, g * h, y, gradient);
            }
        }
    }
}
