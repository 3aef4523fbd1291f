//! `harbor study contact-spin-orbit`: capture into spin–orbit resonance, the time-dependent
//! example of Vermeeren, Bravetti & Seri's 2019 slides ("Variational integrators for
//! contact Hamiltonian systems", after Bravetti, Seri, Vermeeren & Zadra, arXiv:1909.02613).
//!
//! A satellite of spin angle θ = x and moment of inertia C(t) about its spin axis on a
//! fixed Keplerian orbit (a = n = 1, pericentre at t = 0 mod 2π): d(C θ̇)/dt = N_z, i.e.
//!
//! ```text
//!   θ̈ + (Ċ/C) θ̇ − N_z(θ, t)/C = 0,   N_z/C = −ε (a/r)³ sin(2θ − 2f(t)),
//!   H = p²/2 + V(θ, t) + (Ċ/C) z,      V = −(ε/2)(a/r)³ cos(2θ − 2f),  −∂V/∂θ = N_z/C,
//! ```
//!
//! the contact Hamiltonian of the slides (which write N_z/C for the potential V whose
//! negative gradient it is): the `spin-orbit` potential term and the damping C(t) of
//! [`super::model::Damping`] set to Ċ/C (an expression in t in the example config).
//!
//! The study records the state once per orbit, at pericentre (the config must make
//! h · `output.every` = 2π), and reports per member
//! - the spin rate averaged over each orbit, (θ(t_{k+1}) − θ(t_k)) / 2π ("angular velocity
//!   decreasing" on the slides);
//! - the Poincaré section (θ mod π, θ̇) at every pericentre passage ("angle and angular
//!   velocity at fixed point in the orbit");
//! - the spin rate averaged over the last quarter of the orbits, ω̄ = Δθ / Δt, and the
//!   resonance j:2 it is captured into: |ω̄ − j/2| ≤ [`CAPTURE_TOLERANCE`] (j = 1 … 8,
//!   written in lowest terms, 1:1, 3:2, 2:1, 5:2 …), or none.
//!
//! Beside the fraction captured into 3:2 it prints the probability of capture of an
//! adiabatic separatrix crossing (Goldreich & Peale 1966), derived here for this torque.
//! Averaged over the orbit near 3:2, γ = θ − 3t/2 obeys γ̈ = −ε H sin 2γ − λ (3/2 + γ̇),
//! λ = Ċ/C, with H = H(3/2, e) = 7e/2 − 123e³/16 the coefficient of cos(2θ − 3M) in
//! (a/r)³ cos(2θ − 2f). Its energy E = γ̇²/2 − (εH/2) cos 2γ changes along the separatrix
//! γ̇ = ±√(2εH) cos γ by −(B + A) on the branch a decreasing spin arrives on and by B − A
//! on the other, with B = (3/2) λ π (the constant part of the torque over Δγ = π) and
//! A = λ ∫ |γ̇| dγ = 2 λ √(2εH) (the part proportional to γ̇), so a member crossing at a
//! uniformly distributed phase is captured with probability
//!
//! ```text
//!   P = 2A / (A + B) = 4 √(2εH) / (2 √(2εH) + 3π/2)
//! ```
//!
//! (λ cancels: valid while λ changes slowly over a libration period, as here).

use super::model::Potential;
use super::orbit::KeplerOrbit;
use super::plan::ContactPlan;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::io::plot::{Marker, Panel, Series};
use crate::plan::MemoryBudget;

/// |ω̄ − j/2| at or below which a member counts as captured into the j:2 resonance.
pub const CAPTURE_TOLERANCE: f64 = 0.01;

/// Members whose per-orbit spin rate is drawn (the first ones).
const DRAWN: usize = 12;

/// One member's spin history.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberSpin {
    /// θ(0) and θ̇(0).
    pub theta0: f64,
    pub rate0: f64,
    /// Per orbit k, the mean spin rate (θ(t_{k+1}) − θ(t_k)) / 2π.
    pub orbit_rates: Vec<f64>,
    /// (θ mod π in [0, π), θ̇) at every pericentre passage t_k = 2πk, k = 0 … K.
    pub section: Vec<(f64, f64)>,
    /// ω̄: the spin rate averaged over the last quarter of the orbits.
    pub final_rate: f64,
    /// j of the j:2 resonance ω̄ is captured into, if any.
    pub resonance: Option<u32>,
}

/// The study's results.
#[derive(Debug, Clone, PartialEq)]
pub struct SpinOrbitStudy {
    /// Pericentre passages t_k = 2πk, k = 0 … K.
    pub times: Vec<f64>,
    pub members: Vec<MemberSpin>,
    /// Goldreich & Peale's probability of capture into 3:2 for the nominal ε and e
    /// ([`capture_probability_3_2`]).
    pub expected_3_2: f64,
}

/// P = 4 √(2εH) / (2 √(2εH) + 3π/2), H = 7e/2 − 123e³/16: the probability of capture into
/// the 3:2 resonance of a spin slowed by the torque −(Ċ/C) θ̇ (module docs).
pub fn capture_probability_3_2(epsilon: f64, eccentricity: f64) -> f64 {
    let e = eccentricity;
    let width = (2.0 * epsilon * (3.5 * e - 123.0 / 16.0 * e * e * e)).sqrt();
    4.0 * width / (2.0 * width + 1.5 * std::f64::consts::PI)
}

/// The j of the j:2 resonance within [`CAPTURE_TOLERANCE`] of `rate`, j = 1 … 8.
pub fn resonance_of(rate: f64) -> Option<u32> {
    let j = (2.0 * rate).round();
    ((1.0..=8.0).contains(&j) && (rate - 0.5 * j).abs() <= CAPTURE_TOLERANCE).then_some(j as u32)
}

/// j:2 in lowest terms ("3:2", "1:1", "2:1").
pub fn resonance_name(j: u32) -> String {
    if j.is_multiple_of(2) {
        format!("{}:1", j / 2)
    } else {
        format!("{j}:2")
    }
}

/// Refuses a plan the study cannot read: one degree of freedom with P = 1, a spin–orbit
/// term, and samples exactly at pericentre, h · every = 2π with every dividing the steps.
fn check(plan: &ContactPlan) -> Result<()> {
    let system = &plan.nominal.system;
    let needs = |field: &str, what: String| {
        Error::invalid(field, format!("the contact-spin-orbit study needs {what}"))
    };
    if system.dof() != 1 || system.kinetic[(0, 0)] != 1.0 {
        return Err(needs(
            "system",
            format!(
                "one degree of freedom with kinetic = [[1.0]], found n = {}",
                system.dof()
            ),
        ));
    }
    if !system
        .potential
        .iter()
        .any(|t| matches!(t, Potential::SpinOrbit { .. }))
    {
        return Err(needs(
            "system.potential",
            "a spin-orbit term (the gravity-gradient torque N_z/C)".into(),
        ));
    }
    let grid = plan.grid();
    let period = grid.h * grid.record_every as f64;
    let tau = std::f64::consts::TAU;
    if (period - tau).abs() > 1e-9 * tau || !grid.steps.is_multiple_of(grid.record_every) {
        return Err(needs(
            "output.every",
            format!(
                "one sample per orbit at pericentre: h · every = 2π with every dividing the {} steps, found h · every = {period} ({} steps, every = {})",
                grid.steps, grid.steps, grid.record_every
            ),
        ));
    }
    if grid.steps / grid.record_every < 4 {
        return Err(needs("scheme.t_end", "at least 4 orbits".into()));
    }
    Ok(())
}

/// Runs the plan on `backend` (all members' records held at once, within `budget`) and
/// reads every member's spin history.
pub fn run(plan: &ContactPlan, backend: &Backend, budget: &MemoryBudget) -> Result<SpinOrbitStudy> {
    check(plan)?;
    let results = backend.run_within(plan, budget)?;
    let times = results.sample_times.clone();
    let tau = std::f64::consts::TAU;
    let members = results
        .members
        .iter()
        .enumerate()
        .map(|(index, result)| {
            // Samples are [θ, θ̇, z].
            let theta: Vec<f64> = result.trajectory.chunks(3).map(|s| s[0]).collect();
            let rate: Vec<f64> = result.trajectory.chunks(3).map(|s| s[1]).collect();
            let orbit_rates: Vec<f64> = theta.windows(2).map(|w| (w[1] - w[0]) / tau).collect();
            let section = theta
                .iter()
                .zip(&rate)
                .map(|(&a, &r)| (a.rem_euclid(std::f64::consts::PI), r))
                .collect();
            let k = theta.len() - 1;
            let window = (k / 4).max(1);
            let final_rate = (theta[k] - theta[k - window]) / (window as f64 * tau);
            let member = plan.member(index)?;
            Ok(MemberSpin {
                theta0: member.x0[0],
                rate0: member.p0[0],
                orbit_rates,
                section,
                final_rate,
                resonance: resonance_of(final_rate),
            })
        })
        .collect::<Result<_>>()?;
    let (epsilon, orbit): (f64, KeplerOrbit) = plan
        .nominal
        .system
        .potential
        .iter()
        .find_map(|t| match t {
            Potential::SpinOrbit { epsilon, orbit } => Some((*epsilon, *orbit)),
            _ => None,
        })
        .expect("checked above");
    Ok(SpinOrbitStudy {
        times,
        members,
        expected_3_2: capture_probability_3_2(epsilon, orbit.eccentricity()),
    })
}

impl SpinOrbitStudy {
    /// Per member: θ(0), θ̇(0), ω̄ and the resonance.
    pub fn csv(&self) -> String {
        let mut out = String::from("theta0,rate0,final_mean_rate,resonance\n");
        for m in &self.members {
            out.push_str(&format!(
                "{:e},{:e},{:e},{}\n",
                m.theta0,
                m.rate0,
                m.final_rate,
                m.resonance.map_or("none".into(), resonance_name)
            ));
        }
        out
    }

    /// The Poincaré section of every member: member, k, t_k, θ mod π, θ̇.
    pub fn section_csv(&self) -> String {
        let mut out = String::from("member,orbit,t,theta_mod_pi,rate\n");
        for (i, m) in self.members.iter().enumerate() {
            for (k, ((a, r), t)) in m.section.iter().zip(&self.times).enumerate() {
                out.push_str(&format!("{i},{k},{t:e},{a:e},{r:e}\n"));
            }
        }
        out
    }

    /// Members captured into each resonance (and none), beside what the seed shows.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "seed 001 (Vermeeren, Bravetti & Seri, slides 2019; the example of Bravetti, Seri, \
             Vermeeren & Zadra 2019): figures only, no numbers — the spin rate decreases and \
             is captured into a resonance; Poincaré section at a fixed point of the orbit.\n",
        );
        out.push_str(&format!(
            "harbor: {} member(s), {} orbits; ω̄ = spin rate over the last quarter, captured \
             when |ω̄ − j/2| ≤ {CAPTURE_TOLERANCE}\n",
            self.members.len(),
            self.times.len() - 1
        ));
        out.push_str(&format!(
            "{:>12} {:>8} {:>9} {:>14} {:>14}\n",
            "resonance", "members", "fraction", "ω̄ min", "ω̄ max"
        ));
        let mut keys: Vec<Option<u32>> = self.members.iter().map(|m| m.resonance).collect();
        keys.sort_by_key(|k| k.map_or(u32::MAX, |j| j));
        keys.dedup();
        for key in keys {
            let rates: Vec<f64> = self
                .members
                .iter()
                .filter(|m| m.resonance == key)
                .map(|m| m.final_rate)
                .collect();
            let (low, high) = rates
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &r| {
                    (l.min(r), h.max(r))
                });
            out.push_str(&format!(
                "{:>12} {:>8} {:>8.1}% {:>14.6} {:>14.6}\n",
                key.map_or("none".into(), resonance_name),
                rates.len(),
                100.0 * rates.len() as f64 / self.members.len() as f64,
                low,
                high
            ));
        }
        let captured = self
            .members
            .iter()
            .filter(|m| m.resonance == Some(3))
            .count() as f64;
        let n = self.members.len() as f64;
        out.push_str(&format!(
            "3:2 captures: harbor {:.1}% ± {:.1}% (binomial σ), Goldreich & Peale's separatrix \
             crossing estimate for the torque −(Ċ/C) θ̇: {:.1}%\n",
            100.0 * captured / n,
            100.0 * (self.expected_3_2 * (1.0 - self.expected_3_2) / n).sqrt(),
            100.0 * self.expected_3_2
        ));
        if self.members.len() <= 16 {
            out.push_str(&format!(
                "\n{:>8} {:>10} {:>10} {:>14} {:>10}\n",
                "member", "θ(0)", "θ̇(0)", "ω̄", "resonance"
            ));
            for (i, m) in self.members.iter().enumerate() {
                out.push_str(&format!(
                    "{i:>8} {:>10.4} {:>10.4} {:>14.6} {:>10}\n",
                    m.theta0,
                    m.rate0,
                    m.final_rate,
                    m.resonance.map_or("none".into(), resonance_name)
                ));
            }
        }
        out
    }

    /// The per-orbit spin rate against time (the first captured members and the first
    /// others, 12 in all) and the Poincaré section (every member, one colour per
    /// resonance).
    pub fn panels(&self) -> Vec<Panel> {
        let captured = self.members.iter().filter(|m| m.resonance.is_some());
        let free = self.members.iter().filter(|m| m.resonance.is_none());
        let rates = captured
            .take(DRAWN / 2)
            .chain(free.take(DRAWN / 2))
            .enumerate()
            .map(|(i, m)| Series {
                label: format!(
                    "θ(0) = {:.2}: {}",
                    m.theta0,
                    m.resonance.map_or("not captured".into(), resonance_name)
                ),
                points: self
                    .times
                    .iter()
                    .zip(&m.orbit_rates)
                    .map(|(&t, &r)| (t, r))
                    .collect(),
                color: i,
                width: 1,
                marker: Marker::None,
            })
            .collect();
        let mut keys: Vec<Option<u32>> = self.members.iter().map(|m| m.resonance).collect();
        keys.sort_by_key(|k| k.map_or(u32::MAX, |j| j));
        keys.dedup();
        let section = keys
            .iter()
            .enumerate()
            .map(|(color, &key)| Series {
                label: key.map_or("not captured".into(), |j| {
                    format!("captured, {}", resonance_name(j))
                }),
                points: self
                    .members
                    .iter()
                    .filter(|m| m.resonance == key)
                    .flat_map(|m| m.section.iter().copied())
                    .collect(),
                color,
                width: 0,
                marker: Marker::Circle,
            })
            .collect();
        vec![
            Panel {
                title: "spin rate averaged over each orbit".into(),
                x_label: "t".into(),
                y_label: "(θ(t + 2π) − θ(t)) / 2π".into(),
                log_x: false,
                log_y: false,
                series: rates,
            },
            Panel {
                title: "Poincaré section at pericentre".into(),
                x_label: "θ mod π".into(),
                y_label: "θ̇".into(),
                log_x: false,
                log_y: false,
                series: section,
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resonances_are_named_in_lowest_terms_and_need_the_tolerance() {
        assert_eq!(resonance_of(1.5004), Some(3));
        assert_eq!(resonance_of(0.995), Some(2));
        assert_eq!(resonance_of(1.52), None);
        assert_eq!(resonance_of(0.2), None);
        assert_eq!(resonance_name(3), "3:2");
        assert_eq!(resonance_name(2), "1:1");
        assert_eq!(resonance_name(4), "2:1");
    }

    /// e = 0: H(3/2, 0) = 0, no resonance to be captured into; and the probability grows
    /// with ε towards 4w/(2w + 3π/2) < 1.
    #[test]
    fn the_capture_probability_vanishes_without_eccentricity() {
        assert_eq!(capture_probability_3_2(0.01, 0.0), 0.0);
        let w = (2.0_f64 * 0.01 * (0.7 - 123.0 / 16.0 * 0.008)).sqrt();
        let p = capture_probability_3_2(0.01, 0.2);
        assert!((p - 4.0 * w / (2.0 * w + 1.5 * std::f64::consts::PI)).abs() < 1e-15);
        assert!(p > 0.09 && p < 0.093, "{p}");
        assert!(capture_probability_3_2(0.05, 0.2) > p);
    }
}
