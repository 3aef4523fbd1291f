//! Contact Hamiltonian systems H(t, x, p, z) = A(p) + B(t, x) + C(t) z with x, p ∈ Rⁿ and
//! z ∈ R (Vermeeren, Bravetti & Seri 2019; Bravetti, Seri, Vermeeren & Zadra 2020):
//!
//! ```text
//!   ẋ = ∂H/∂p,   ṗ = −∂H/∂x − p ∂H/∂z,   ż = p·∂H/∂p − H
//! ```
//!
//! - A(p) = ½ pᵀ P p with P symmetric positive definite (`kinetic`);
//! - B(t, x) is a sum of [`Potential`] terms: harmonic ½ xᵀ K x, quartic (β/4) Σ x_i⁴
//!   (Duffing), pendulum −ω² Σ cos x_i, forcing −s(t) aᵀ x, Kepler −γ/|x|, the
//!   spin–orbit gravity-gradient torque −(ε/2)(a/r)³ Σ cos(2x_i − 2f(t)),
//!   and an expression in x and t ([`PotentialExpression`]: its gradient derived
//!   symbolically);
//! - C(t) = α c(t) ([`Damping`]): constant α, α times a signal, the tidal (MacDonald)
//!   torque of the spin–orbit problem, C = η (a/r)⁶, which also adds the forcing
//!   −η (a/r)⁶ ḟ Σ x_i to B, so that ẍ = −ε (a/r)³ sin(2x − 2f) − η (a/r)⁶ (ẋ − ḟ), or an
//!   expression in t ([`DampingExpression`], α = 1).
//!
//! (a/r)(t), f(t) and ḟ(t) are those of a Keplerian orbit with mean motion 1
//! ([`KeplerOrbit`]). Every term's time dependence goes through a few scalar functions of
//! t shared by all members ([`ContactSystem::time_functions`]; for a potential expression,
//! t itself), so the planner can sample them once per sub-step for a whole ensemble.

use std::sync::Arc;

use super::time::time_functions;
pub use super::time::{TimeChannels, TimeTerms};
use nalgebra::{DMatrix, DVector};

pub use super::expression::{DampingExpression, PotentialExpression};
pub use super::member::ContactMember;

use super::orbit::KeplerOrbit;
use crate::error::{Error, Num, Result};
use crate::model::input::Signal;
use crate::model::validate::{check_pd, check_symmetric};

/// One term of B(t, x).
#[derive(Debug, Clone)]
pub enum Potential {
    /// ½ xᵀ K x, K symmetric.
    Harmonic { k: DMatrix<f64> },
    /// (β/4) Σ x_i⁴.
    Quartic { beta: f64 },
    /// −ω² Σ cos x_i.
    Pendulum { omega: f64 },
    /// −s(t) aᵀ x: a force s(t) a.
    Forcing {
        amplitude: DVector<f64>,
        signal: Signal,
    },
    /// −γ/|x|, γ > 0; undefined at x = 0.
    Kepler { gamma: f64 },
    /// −(ε/2)(a/r)³ Σ cos(2x_i − 2f(t)).
    SpinOrbit { epsilon: f64, orbit: KeplerOrbit },
    /// B(t, x) written as an expression, ∇ₓB derived symbolically (shared by the members
    /// it is cloned into).
    Expression(Arc<PotentialExpression>),
}

impl Potential {
    /// The term's scalar coefficient (β, ω, γ or ε), for ensemble draws.
    pub fn coefficient_mut(&mut self) -> Option<&mut f64> {
        match self {
            Potential::Quartic { beta } => Some(beta),
            Potential::Pendulum { omega } => Some(omega),
            Potential::Kepler { gamma } => Some(gamma),
            Potential::SpinOrbit { epsilon, .. } => Some(epsilon),
            Potential::Harmonic { .. } | Potential::Forcing { .. } | Potential::Expression(_) => {
                None
            }
        }
    }

    /// β, ω, γ or ε of the term (`None` for the others).
    pub fn coefficient(&self) -> Option<f64> {
        match *self {
            Potential::Quartic { beta: c }
            | Potential::Pendulum { omega: c }
            | Potential::Kepler { gamma: c }
            | Potential::SpinOrbit { epsilon: c, .. } => Some(c),
            _ => None,
        }
    }

    /// The term's `kind` in configs.
    pub fn kind(&self) -> &'static str {
        match self {
            Potential::Harmonic { .. } => "harmonic",
            Potential::Quartic { .. } => "quartic",
            Potential::Pendulum { .. } => "pendulum",
            Potential::Forcing { .. } => "forcing",
            Potential::Kepler { .. } => "kepler",
            Potential::SpinOrbit { .. } => "spin-orbit",
            Potential::Expression(_) => "expression",
        }
    }
}

/// C(t) of the damping term C(t) z.
#[derive(Debug, Clone)]
pub enum Damping {
    /// C = 0.
    None,
    /// C = α.
    Constant { alpha: f64 },
    /// C = α s(t).
    Signal { alpha: f64, signal: Signal },
    /// C = η (a/r)⁶ with the tidal forcing −η (a/r)⁶ ḟ Σ x_i in B.
    Tidal { eta: f64, orbit: KeplerOrbit },
    /// C(t) written as an expression in t (c(t) = C(t), α = 1, not drawn).
    Expression(Arc<DampingExpression>),
}

impl Damping {
    /// The coefficient of C(t) = α c(t) (α, or η for tidal damping), for ensemble draws;
    /// none for an expression, whose numbers are written in its text.
    pub fn coefficient_mut(&mut self) -> Option<&mut f64> {
        match self {
            Damping::None | Damping::Expression(_) => None,
            Damping::Constant { alpha } | Damping::Signal { alpha, .. } => Some(alpha),
            Damping::Tidal { eta, .. } => Some(eta),
        }
    }
}

/// A validated contact Hamiltonian system.
#[derive(Debug, Clone)]
pub struct ContactSystem {
    /// P of A(p) = ½ pᵀ P p, symmetric positive definite.
    pub kinetic: DMatrix<f64>,
    pub potential: Vec<Potential>,
    pub damping: Damping,
}

/// A potential term's coefficients finite (γ > 0); `field(name)` names one in errors.
fn check_term_coefficients(term: &Potential, field: &dyn Fn(&str) -> String) -> Result<()> {
    let finite = |name: &str, value: f64| {
        if value.is_finite() {
            Ok(())
        } else {
            finite(&field(name), value)
        }
    };
    match term {
        Potential::Quartic { beta } => finite("beta", *beta),
        Potential::Pendulum { omega } => finite("omega", *omega),
        Potential::Forcing { amplitude, .. } => {
            amplitude.iter().try_for_each(|&a| finite("amplitude", a))
        }
        Potential::Kepler { gamma } if !(gamma.is_finite() && *gamma > 0.0) => Err(Error::invalid(
            field("gamma"),
            format!("must be a finite number > 0, got {}", Num(*gamma)),
        )),
        Potential::SpinOrbit { epsilon, .. } => finite("epsilon", *epsilon),
        _ => Ok(()),
    }
}

/// The damping's coefficient (α or η) finite; `prefix` names the system in errors.
fn check_damping_coefficient(damping: &Damping, prefix: &str) -> Result<()> {
    let (name, value) = match damping {
        Damping::None | Damping::Expression(_) => return Ok(()),
        Damping::Constant { alpha } | Damping::Signal { alpha, .. } => ("alpha", *alpha),
        Damping::Tidal { eta, .. } => ("eta", *eta),
    };
    if value.is_finite() {
        return Ok(());
    }
    finite(&format!("{prefix}.damping.{name}"), value)
}

/// `value` finite, else the error naming `field`.
pub(super) fn finite(field: &str, value: f64) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!("must be a finite number, got {}", Num(value)),
        ))
    }
}

impl ContactSystem {
    /// Validates the terms; `prefix` names the system in errors (`system.kinetic`,
    /// `system.potential[1].beta`, …).
    pub fn new(
        prefix: &str,
        kinetic: DMatrix<f64>,
        potential: Vec<Potential>,
        damping: Damping,
    ) -> Result<Self> {
        let n = kinetic.nrows();
        check_pd(&format!("{prefix}.kinetic"), &kinetic)?;
        for kind in [
            "harmonic",
            "quartic",
            "pendulum",
            "kepler",
            "spin-orbit",
            "expression",
        ] {
            let count = potential.iter().filter(|t| t.kind() == kind).count();
            if count > 1 {
                let how = if kind == "expression" {
                    "write their sum as one expression"
                } else {
                    "add their coefficients"
                };
                return Err(Error::invalid(
                    format!("{prefix}.potential"),
                    format!("at most one {kind} term ({how}), found {count}"),
                ));
            }
        }
        for (index, term) in potential.iter().enumerate() {
            let field = |name: &str| format!("{prefix}.potential[{index}].{name}");
            match term {
                Potential::Harmonic { k } => {
                    if k.nrows() != n || k.ncols() != n {
                        return Err(Error::invalid(
                            field("K"),
                            format!(
                                "wrong shape: expected {n}×{n}, found {}×{}",
                                k.nrows(),
                                k.ncols()
                            ),
                        ));
                    }
                    check_symmetric(&field("K"), k)?;
                }
                Potential::Forcing { amplitude, .. } if amplitude.len() != n => {
                    return Err(Error::invalid(
                        field("amplitude"),
                        format!("has length {}, the system has n = {n}", amplitude.len()),
                    ));
                }
                Potential::Expression(e) if e.dof() != n => {
                    return Err(Error::invalid(
                        field("B"),
                        format!(
                            "was compiled for n = {} positions, the system has n = {n}",
                            e.dof()
                        ),
                    ));
                }
                _ => {}
            }
            check_term_coefficients(term, &field)?;
        }
        let spin_orbit = potential.iter().find_map(|t| match t {
            Potential::SpinOrbit { orbit, .. } => Some(orbit.eccentricity()),
            _ => None,
        });
        if let (Some(e), Damping::Tidal { orbit, .. }) = (spin_orbit, &damping)
            && orbit.eccentricity() != e
        {
            return Err(Error::invalid(
                format!("{prefix}.damping.eccentricity"),
                format!(
                    "the tidal torque and the spin-orbit term share one orbit: must equal the spin-orbit eccentricity {}, got {}",
                    Num(e),
                    Num(orbit.eccentricity())
                ),
            ));
        }
        check_damping_coefficient(&damping, prefix)?;
        Ok(ContactSystem {
            kinetic,
            potential,
            damping,
        })
    }

    /// Checks what an ensemble's draw changes in a system that [`ContactSystem::new`]
    /// accepted (its coefficients: β, ω, the forcing amplitudes, γ, ε, α or η), with the
    /// error `new` would give; the structure (M positive definite, K symmetric, shapes)
    /// is the accepted system's and is not checked again.
    pub fn check_drawn(&self, prefix: &str) -> Result<()> {
        for (index, term) in self.potential.iter().enumerate() {
            check_term_coefficients(term, &|name| format!("{prefix}.potential[{index}].{name}"))?;
        }
        check_damping_coefficient(&self.damping, prefix)
    }

    /// Checks that every signal (forcing, damping) is defined on [0, t_end]. (Compositions
    /// with negative coefficients also evaluate them up to a step outside; signals that
    /// hold or zero outside their samples define those values.)
    pub fn check_signals_cover(&self, prefix: &str, t_end: f64) -> Result<()> {
        for (index, term) in self.potential.iter().enumerate() {
            if let Potential::Forcing { signal, .. } = term {
                signal.check_covers(&format!("{prefix}.potential[{index}].signal"), t_end)?;
            }
        }
        if let Damping::Signal { signal, .. } = &self.damping {
            signal.check_covers(&format!("{prefix}.damping.signal"), t_end)?;
        }
        Ok(())
    }

    /// Degrees of freedom n.
    pub fn dof(&self) -> usize {
        self.kinetic.nrows()
    }

    /// The scalar functions of t this system needs.
    pub fn time_channels(&self) -> TimeChannels {
        TimeChannels::of(&self.potential, &self.damping)
    }

    /// The time functions at t, in the order of [`TimeChannels`]: the forcing signals s_j(t)
    /// (the tidal (a/r)⁶ ḟ last), c(t), then (a/r)³ cos 2f and (a/r)³ sin 2f, and t itself
    /// when a potential expression uses it.
    /// `out` has exactly [`TimeChannels::count`] entries.
    pub fn time_functions(&self, t: f64, out: &mut [f64]) {
        time_functions(&self.potential, &self.damping, t, out);
    }

    /// What each time channel holds, in stream order: (the config field under `prefix` it
    /// comes from, what it is), for errors about sampled values.
    pub fn time_channel_names(&self, prefix: &str) -> Vec<(String, String)> {
        super::time::channel_names(&self.potential, &self.damping, prefix)
    }

    /// The terms that depend on time (forcing, spin–orbit, damping), owned: what a shared
    /// stream needs to sample [`ContactSystem::time_functions`] without the system's
    /// matrices.
    pub fn time_terms(&self) -> TimeTerms {
        TimeTerms::of(&self.potential, &self.damping)
    }

    /// The per-member coefficient of C(t) = α c(t) (α, or η for tidal damping; 1 for an
    /// expression, whose c(t) is C(t); 0 if none).
    pub fn damping_coefficient(&self) -> f64 {
        match self.damping {
            Damping::None => 0.0,
            Damping::Expression(_) => 1.0,
            Damping::Constant { alpha } | Damping::Signal { alpha, .. } => alpha,
            Damping::Tidal { eta, .. } => eta,
        }
    }

    /// A(p) = ½ pᵀ P p.
    pub fn kinetic_energy(&self, p: &[f64]) -> f64 {
        let n = p.len();
        let mut sum = 0.0;
        for r in 0..n {
            let row: f64 = (0..n).map(|c| self.kinetic[(r, c)] * p[c]).sum();
            sum += p[r] * row;
        }
        0.5 * sum
    }

    /// B(t, x) and ∇ₓB(t, x) (into `gradient`), with std's transcendental functions.
    pub fn potential(&self, t: f64, x: &[f64], gradient: &mut [f64]) -> f64 {
        let n = x.len();
        gradient.iter_mut().for_each(|g| *g = 0.0);
        let mut value = 0.0;
        for term in &self.potential {
            match term {
                Potential::Harmonic { k } => {
                    for r in 0..n {
                        let kx: f64 = (0..n).map(|c| k[(r, c)] * x[c]).sum();
                        gradient[r] += kx;
                        value += 0.5 * x[r] * kx;
                    }
                }
                Potential::Quartic { beta } => {
                    for r in 0..n {
                        let cube = x[r] * x[r] * x[r];
                        gradient[r] += beta * cube;
                        value += 0.25 * beta * cube * x[r];
                    }
                }
                Potential::Pendulum { omega } => {
                    let w2 = omega * omega;
                    for r in 0..n {
                        gradient[r] += w2 * x[r].sin();
                        value -= w2 * x[r].cos();
                    }
                }
                Potential::Forcing { amplitude, signal } => {
                    let s = signal.value(t);
                    for r in 0..n {
                        gradient[r] -= s * amplitude[r];
                        value -= s * amplitude[r] * x[r];
                    }
                }
                Potential::Kepler { gamma } => {
                    let squared = x.iter().map(|v| v * v).sum::<f64>();
                    let radius = squared.sqrt();
                    let cube = squared * radius;
                    for r in 0..n {
                        gradient[r] += gamma * x[r] / cube;
                    }
                    value -= gamma / radius;
                }
                Potential::SpinOrbit { epsilon, orbit } => {
                    let cube = orbit.radius(t).recip().powi(3);
                    let two_f = 2.0 * orbit.true_anomaly(t);
                    for r in 0..n {
                        let angle = 2.0 * x[r] - two_f;
                        gradient[r] += epsilon * cube * angle.sin();
                        value -= 0.5 * epsilon * cube * angle.cos();
                    }
                }
                Potential::Expression(e) => value += e.add_to(t, x, gradient),
            }
        }
        if let Damping::Tidal { eta, orbit } = &self.damping {
            let g = orbit.radius(t).recip().powi(6) * orbit.true_anomaly_rate(t);
            for r in 0..n {
                gradient[r] -= eta * g;
                value -= eta * g * x[r];
            }
        }
        value
    }

    /// C(t).
    pub fn damping_rate(&self, t: f64) -> f64 {
        match &self.damping {
            Damping::None => 0.0,
            Damping::Constant { alpha } => *alpha,
            Damping::Signal { alpha, signal } => alpha * signal.value(t),
            Damping::Tidal { eta, orbit } => eta * orbit.radius(t).recip().powi(6),
            Damping::Expression(e) => e.rate(t),
        }
    }

    /// H(t, x, p, z).
    pub fn hamiltonian(&self, t: f64, x: &[f64], p: &[f64], z: f64) -> f64 {
        // ∇B's buffer on the stack for n ≤ 8.
        let mut stack = [0.0; 8];
        let mut heap = Vec::new();
        let gradient = if x.len() <= stack.len() {
            &mut stack[..x.len()]
        } else {
            heap.resize(x.len(), 0.0);
            &mut heap[..]
        };
        self.kinetic_energy(p) + self.potential(t, x, gradient) + self.damping_rate(t) * z
    }

    /// The contact vector field (ẋ, ṗ, ż) at (t, y) with y = [x; p; z].
    pub fn vector_field(&self, t: f64, y: &[f64], dy: &mut [f64]) {
        let n = self.dof();
        let (x, rest) = y.split_at(n);
        let (p, z) = rest.split_at(n);
        let z = z[0];
        let mut gradient = vec![0.0; n];
        let b = self.potential(t, x, &mut gradient);
        let c = self.damping_rate(t);
        let a = self.kinetic_energy(p);
        for r in 0..n {
            let pp: f64 = (0..n).map(|k| self.kinetic[(r, k)] * p[k]).sum();
            dy[r] = pp;
            dy[n + r] = -gradient[r] - p[r] * c;
        }
        // p·∂H/∂p − H = pᵀ P p − (A + B + C z) = 2A − A − B − C z.
        dy[2 * n] = a - b - c * z;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Signal;

    fn parts() -> (DMatrix<f64>, Vec<Potential>, Damping) {
        let potential = vec![
            Potential::Harmonic {
                k: DMatrix::identity(2, 2),
            },
            Potential::Quartic { beta: 0.5 },
            Potential::Forcing {
                amplitude: DVector::from_vec(vec![0.1, 0.2]),
                signal: Signal::Harmonic {
                    amplitude: 1.0,
                    omega: 1.0,
                    phase: 0.0,
                    offset: 0.0,
                },
            },
            Potential::Kepler { gamma: 1.0 },
        ];
        (
            DMatrix::identity(2, 2),
            potential,
            Damping::Constant { alpha: 0.1 },
        )
    }

    /// A drawn coefficient that `new` refuses is refused by `check_drawn` with the same
    /// error; an accepted system passes.
    #[test]
    fn drawn_coefficients_are_refused_as_new_refuses_them() {
        let (kinetic, potential, damping) = parts();
        let accepted = ContactSystem::new("s", kinetic, potential, damping).unwrap();
        accepted.check_drawn("s").unwrap();
        let breaks: [fn(&mut ContactSystem); 4] = [
            |s| {
                s.potential[1] = Potential::Quartic {
                    beta: f64::INFINITY,
                }
            },
            |s| {
                if let Potential::Forcing { amplitude, .. } = &mut s.potential[2] {
                    amplitude[1] = f64::NAN;
                }
            },
            |s| s.potential[3] = Potential::Kepler { gamma: -1.0 },
            |s| s.damping = Damping::Constant { alpha: f64::NAN },
        ];
        for (case, break_it) in breaks.iter().enumerate() {
            let mut drawn = accepted.clone();
            break_it(&mut drawn);
            let from_new = ContactSystem::new(
                "s",
                drawn.kinetic.clone(),
                drawn.potential.clone(),
                drawn.damping.clone(),
            )
            .unwrap_err()
            .to_string();
            let from_drawn = drawn.check_drawn("s").unwrap_err().to_string();
            assert_eq!(from_drawn, from_new, "case {case}");
        }
    }
}
