//! `harbor study contact-energy`: how well the mechanical energy E = p²/2 + k x²/2 of the
//! damped oscillator ẍ + α ẋ + k x = 0 is reproduced by the contact integrator of the
//! config (H = p²/2 + k x²/2 + α z) and by a symplectic integrator that treats the damping
//! as a force — as in Vermeeren, Bravetti & Seri, "Contact variational integrators"
//! (J. Phys. A 52, 2019) and its slides, but over a whole
//! ensemble of damping coefficients and initial conditions run on any backend.
//!
//! The comparison method is Störmer–Verlet with the force −k x − α p evaluated at the
//! momentum at hand (symplectic when α = 0):
//!
//! ```text
//!   p_½ = p_n + (h/2)(−k x_n − α p_n),  x_{n+1} = x_n + h p_½,
//!   p_{n+1} = p_½ + (h/2)(−k x_{n+1} − α p_½)
//! ```
//!
//! Errors are relative to the exact energy at the same time, max_t |E(t) − E_exact(t)| /
//! E_exact(t), so they measure the decay rate over the whole run. The exact solution
//! (0 < α < 2√k) is x(t) = e^{−αt/2}(x₀ cos ωt + (p₀ + α x₀/2)/ω sin ωt)
//! with ω = √(k − α²/4), p = ẋ.

use super::model::{Damping, Potential};
use super::plan::ContactPlan;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::io::plot::{Marker, Panel, Series};
use crate::plan::MemoryBudget;

/// One member's comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberEnergy {
    pub alpha: f64,
    pub x0: f64,
    pub p0: f64,
    /// max_t |E_contact(t) − E(t)| / E(t).
    pub contact_error: f64,
    /// max_t |E_verlet(t) − E(t)| / E(t).
    pub verlet_error: f64,
}

/// The study's results.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactEnergyStudy {
    pub times: Vec<f64>,
    pub members: Vec<MemberEnergy>,
    /// Energy curves (exact, contact, Verlet) of the members with the smallest and the
    /// largest α.
    pub curves: Vec<(f64, [Vec<f64>; 3])>,
}

/// x(t), p(t) of the damped oscillator.
pub fn exact(k: f64, alpha: f64, x0: f64, p0: f64, t: f64) -> (f64, f64) {
    let omega = (k - 0.25 * alpha * alpha).sqrt();
    let (a, b) = (x0, (p0 + 0.5 * alpha * x0) / omega);
    let decay = (-0.5 * alpha * t).exp();
    let (s, c) = (omega * t).sin_cos();
    let x = decay * (a * c + b * s);
    let p = decay * (-0.5 * alpha * (a * c + b * s) + omega * (-a * s + b * c));
    (x, p)
}

/// The damped oscillator's stiffness k and the member's α, or an error naming what does
/// not fit (one degree of freedom, identity kinetic term, one harmonic term, constant
/// damping with 0 < α < 2√k).
fn oscillator(plan: &ContactPlan, index: usize) -> Result<(f64, f64, f64, f64)> {
    let member = plan.member(index)?;
    let system = &member.system;
    let needs = |field: &str, what: &str, found: String| {
        Error::invalid(
            field,
            format!("the contact-energy study needs the damped oscillator: {what}, found {found}"),
        )
    };
    if system.dof() != 1 {
        return Err(needs(
            "system.x0",
            "one degree of freedom",
            format!("n = {}", system.dof()),
        ));
    }
    if system.kinetic[(0, 0)] != 1.0 {
        return Err(needs(
            "system.kinetic",
            "kinetic = [[1.0]]",
            format!("[[{}]]", system.kinetic[(0, 0)]),
        ));
    }
    let kinds: Vec<&str> = system.potential.iter().map(|t| t.kind()).collect();
    let (&[Potential::Harmonic { ref k }], Damping::Constant { alpha }) =
        (system.potential.as_slice(), &system.damping)
    else {
        return Err(if kinds != ["harmonic"] {
            needs(
                "system.potential",
                "exactly one harmonic term",
                format!("{kinds:?}"),
            )
        } else {
            needs(
                "system.damping",
                "constant damping",
                match &system.damping {
                    Damping::None => "none".into(),
                    Damping::Signal { .. } => "a signal".into(),
                    Damping::Tidal { .. } => "tidal".into(),
                    Damping::Expression(e) => format!("the expression C(t) = {}", e.text()),
                    Damping::Constant { .. } => unreachable!("matched above"),
                },
            )
        });
    };
    let k = k[(0, 0)];
    if !(k > 0.0 && *alpha > 0.0 && *alpha < 2.0 * k.sqrt()) {
        return Err(Error::invalid(
            format!("member {index}: system.damping.alpha"),
            format!(
                "must lie in (0, 2√k) = (0, {}) for the underdamped closed form, got {alpha}",
                2.0 * k.sqrt()
            ),
        ));
    }
    Ok((k, *alpha, member.x0[0], member.p0[0]))
}

/// Runs the plan on `backend` and compares every member's energy; all members' records are
/// held at once, so they must fit `budget`.
pub fn run(
    plan: &ContactPlan,
    backend: &Backend,
    budget: &MemoryBudget,
) -> Result<ContactEnergyStudy> {
    let params: Vec<_> = (0..plan.len())
        .map(|i| oscillator(plan, i))
        .collect::<Result<_>>()?;
    let results = backend.run_within(plan, budget)?;
    let times = results.sample_times.clone();
    let (h, every) = (plan.grid().h, plan.grid().record_every);
    let energy = |k: f64, x: f64, p: f64| 0.5 * p * p + 0.5 * k * x * x;
    let mut members = Vec::with_capacity(params.len());
    let mut all_curves = Vec::with_capacity(params.len());
    for (result, &(k, alpha, x0, p0)) in results.members.iter().zip(&params) {
        let e0 = energy(k, x0, p0);
        let exact_curve: Vec<f64> = times
            .iter()
            .map(|&t| {
                let (x, p) = exact(k, alpha, x0, p0, t);
                energy(k, x, p)
            })
            .collect();
        // Trajectory samples are [x, p, z].
        let contact_curve: Vec<f64> = result
            .trajectory
            .chunks(3)
            .map(|s| energy(k, s[0], s[1]))
            .collect();
        let (mut x, mut p) = (x0, p0);
        let mut verlet_curve = vec![e0];
        for step in 1..=plan.grid().steps {
            let half = p + 0.5 * h * (-k * x - alpha * p);
            x += h * half;
            p = half + 0.5 * h * (-k * x - alpha * half);
            if step % every == 0 || step == plan.grid().steps {
                verlet_curve.push(energy(k, x, p));
            }
        }
        let worst = |curve: &[f64]| {
            curve
                .iter()
                .zip(&exact_curve)
                .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs() / b))
        };
        members.push(MemberEnergy {
            alpha,
            x0,
            p0,
            contact_error: worst(&contact_curve),
            verlet_error: worst(&verlet_curve),
        });
        all_curves.push((alpha, [exact_curve, contact_curve, verlet_curve]));
    }
    let lowest = (0..members.len()).min_by(|&a, &b| members[a].alpha.total_cmp(&members[b].alpha));
    let highest = (0..members.len()).max_by(|&a, &b| members[a].alpha.total_cmp(&members[b].alpha));
    let mut curves = Vec::new();
    for index in [lowest, highest].into_iter().flatten() {
        if curves.len() == 1 && members.len() == 1 {
            break;
        }
        curves.push(all_curves[index].clone());
    }
    Ok(ContactEnergyStudy {
        times,
        members,
        curves,
    })
}

impl ContactEnergyStudy {
    /// Per member: alpha, x0, p0, contact and Verlet max relative energy errors.
    pub fn csv(&self) -> String {
        let mut out =
            String::from("alpha,x0,p0,contact_max_rel_energy_error,verlet_max_rel_energy_error\n");
        for m in &self.members {
            out.push_str(&format!(
                "{:e},{:e},{:e},{:e},{:e}\n",
                m.alpha, m.x0, m.p0, m.contact_error, m.verlet_error
            ));
        }
        out
    }

    /// A table over α bins: members, median errors, and how often contact wins, after what
    /// the seed's slides show for their two damping coefficients (figures only, no
    /// numbers).
    pub fn table(&self) -> String {
        let mut sorted = self.members.clone();
        sorted.sort_by(|a, b| a.alpha.total_cmp(&b.alpha));
        let bins = 6.min(sorted.len().max(1));
        let mut out = String::from(
            "seed 001 (Vermeeren, Bravetti & Seri, slides 2019), h = 0.25, (x, p)(0) = (0.5, 0.5), \
             figures only, no numbers: α = 0.01 \"contact integrators comparable to symplectic \
             integrators\", α = 0.1 \"contact integrators better than symplectic integrators\"\n\
             harbor (max relative energy error over the run; contact wins when its error is smaller):\n",
        );
        out += &format!(
            "{:>22} {:>8} {:>16} {:>16} {:>14}\n",
            "alpha", "members", "median contact", "median verlet", "contact wins"
        );
        for chunk in sorted.chunks(sorted.len().div_ceil(bins)) {
            let median = |f: fn(&MemberEnergy) -> f64| {
                let mut v: Vec<f64> = chunk.iter().map(f).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let wins = chunk
                .iter()
                .filter(|m| m.contact_error < m.verlet_error)
                .count();
            out.push_str(&format!(
                "{:>22} {:>8} {:>16.3e} {:>16.3e} {:>13.0}%\n",
                format!(
                    "[{:.3}, {:.3}]",
                    chunk[0].alpha,
                    chunk[chunk.len() - 1].alpha
                ),
                chunk.len(),
                median(|m| m.contact_error),
                median(|m| m.verlet_error),
                100.0 * wins as f64 / chunk.len() as f64
            ));
        }
        if sorted.len() <= 4 {
            for m in &sorted {
                out.push_str(&format!(
                    "α = {}, (x, p)(0) = ({}, {}): contact {:.3e}, Verlet {:.3e}, Verlet / contact = {:.2}\n",
                    m.alpha,
                    m.x0,
                    m.p0,
                    m.contact_error,
                    m.verlet_error,
                    m.verlet_error / m.contact_error
                ));
            }
        }
        out
    }

    /// Energy and its relative error against time for the smallest and largest α, and the
    /// errors against α.
    pub fn panels(&self) -> Vec<Panel> {
        let mut panels: Vec<Panel> = self
            .curves
            .iter()
            .map(|(alpha, [exact, contact, verlet])| {
                let series = |label: &str, values: &[f64], color, width, marker| Series {
                    label: label.into(),
                    points: self
                        .times
                        .iter()
                        .copied()
                        .zip(values.iter().copied())
                        .collect(),
                    color,
                    width,
                    marker,
                };
                Panel {
                    title: format!("energy p²/2 + kx²/2, α = {alpha}"),
                    x_label: "t".into(),
                    y_label: "E".into(),
                    log_x: false,
                    log_y: true,
                    series: vec![
                        series("exact", exact, 0, 3, Marker::None),
                        series("contact", contact, 1, 1, Marker::None),
                        series("Verlet, damping as force", verlet, 2, 1, Marker::None),
                    ],
                }
            })
            .collect();
        // The energy errors of the same members against time, as on the slides.
        for (alpha, [exact, contact, verlet]) in &self.curves {
            let series = |label: &str, values: &[f64], color, marker| Series {
                label: label.into(),
                points: self
                    .times
                    .iter()
                    .zip(values.iter().zip(exact))
                    .map(|(&t, (v, e))| (t, (v - e).abs() / e))
                    .collect(),
                color,
                width: 1,
                marker,
            };
            panels.push(Panel {
                title: format!("energy error, α = {alpha}"),
                x_label: "t".into(),
                y_label: "|E − E_exact| / E_exact".into(),
                log_x: false,
                log_y: true,
                series: vec![
                    series("contact", contact, 1, Marker::None),
                    series("Verlet, damping as force", verlet, 2, Marker::None),
                ],
            });
        }
        let errors = |f: fn(&MemberEnergy) -> f64| -> Vec<(f64, f64)> {
            self.members.iter().map(|m| (m.alpha, f(m))).collect()
        };
        panels.push(Panel {
            title: "max relative energy error over the run".into(),
            x_label: "damping α".into(),
            y_label: "max |E − E_exact| / E_exact".into(),
            log_x: false,
            log_y: true,
            series: vec![
                Series {
                    label: "contact".into(),
                    points: errors(|m| m.contact_error),
                    color: 1,
                    width: 0,
                    marker: Marker::Circle,
                },
                Series {
                    label: "Verlet, damping as force".into(),
                    points: errors(|m| m.verlet_error),
                    color: 2,
                    width: 0,
                    marker: Marker::Cross,
                },
            ],
        });
        panels
    }
}
