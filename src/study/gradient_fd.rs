//! `harbor study gradient-fd`: the seed's gradient check (Günther, Jacob & Totzeck 2023,
//! §5.1; PHScalibration, test_manifold_gradient_check.py) beside harbor's exact one.
//!
//! For the candidate w of a `harbor gradient` config and one direction h_K per part K
//! (J skew, S and Q's ξ symmetric, B and x0 free; entries uniform in \[−1, 1\] from a
//! ChaCha8 stream, scaled to Frobenius norm 1), with the seed's retraction (additive, and
//! R_Q(tξ) = Q + tξ + ½ t² ξ Q⁻¹ ξ for Q) except on R, which moves along
//! R(t) = (I + tS) R (I + tS), velocity h_R = S R + R S at t = 0, so that it stays
//! positive semidefinite at every t (the seed's additive step leaves the cone once t
//! exceeds R's smallest eigenvalue):
//!
//! ```text
//!   D_K = ⟨∇𝒥(w), h_K⟩                                   (harbor's exact discrete gradient)
//!   FD_K(t) = (𝒥(R_w(t h_K)) − 𝒥(w)) / t                 (the seed's forward difference)
//!   sum:   |Σ_K D_K − Σ_K FD_K(t)| / |Σ_K FD_K(t)|       (seed: 0.0104 at t = 1e-3)
//!   all:   |Σ_K D_K − FD_all(t)| / |FD_all(t)|,  FD_all(t) = (𝒥(R_w(t Σ_K h_K)) − 𝒥(w)) / t
//!                                                        (seed: 0.00484 at t = 1e-3)
//! ```
//!
//! and the central difference (𝒥(R_w(t h)) − 𝒥(R_w(−t h))) / 2t of all parts at once. The
//! seed's continuous adjoint, discretised separately, agrees with its differences to about
//! 1e-2 at any t; harbor's gradient is that of the discrete cost, so the forward
//! differences approach it as O(t) and the central ones as O(t²), down to rounding.

use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::backend::Backend;
use crate::error::Result;
use crate::identify::evaluate;
use crate::linear_ph::{GradientPlan, LinearPh, LinearPhMember, Parameters};
use crate::plan::MemoryBudget;

/// The seed's step t of its finite differences.
pub const SEED_STEP: f64 = 1e-3;
/// The seed's relative differences at t = 1e-3: (sum of the parts', all at once).
pub const SEED_RELATIVE: (f64, f64) = (0.0104, 0.00484);

/// The parts, in the order of the table.
pub const PARTS: [&str; 5] = ["J", "R", "Q", "B", "x0"];

/// One step t of the check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FdRow {
    pub t: f64,
    /// |Σ D_K − Σ FD_K(t)| / |Σ FD_K(t)|.
    pub relative_sum: f64,
    /// |Σ D_K − FD_all(t)| / |FD_all(t)|.
    pub relative_all: f64,
    /// |Σ D_K − central(t)| / |central(t)|.
    pub relative_central: f64,
    /// FD_K(t) per part.
    pub parts: [f64; 5],
}

/// The whole check.
#[derive(Debug, Clone, PartialEq)]
pub struct FdStudy {
    pub cost: f64,
    /// D_K per part.
    pub derivatives: [f64; 5],
    pub rows: Vec<FdRow>,
}

/// Random unit directions tangent to each part's structure (module docs).
pub fn directions(w: &LinearPhMember, seed: u64) -> [Parameters; 5] {
    let (n, m) = (w.system.states(), w.system.inputs());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut uniform =
        |r: usize, c: usize| DMatrix::from_fn(r, c, |_, _| rng.random_range(-1.0..1.0));
    let unit = |a: DMatrix<f64>| {
        let norm = a.norm();
        a / norm
    };
    let a = uniform(n, n);
    let j = unit(&a - a.transpose());
    let a = uniform(n, n);
    let r = unit(&a + a.transpose());
    let a = uniform(n, n);
    let q = unit(&a + a.transpose());
    let b = unit(uniform(n, m));
    let x0 = unit(uniform(n, 1)).column(0).into_owned();
    let zero = Parameters::zeros(n, m);
    [
        Parameters { j, ..zero.clone() },
        Parameters { r, ..zero.clone() },
        Parameters { q, ..zero.clone() },
        Parameters { b, ..zero.clone() },
        Parameters { x0, ..zero },
    ]
}

/// R_w(t d): additive on J, B, x0; (I + tS) R (I + tS) on R (S = `d.r`);
/// Q + tξ + ½ t² ξ Q⁻¹ ξ on Q. Fails where the moved Q leaves its cone (a step t too large
/// for the candidate).
pub fn retract(w: &LinearPhMember, d: &Parameters, t: f64) -> Result<LinearPhMember> {
    let s = &w.system;
    let n = s.states();
    let q_inverse = s.q.clone().try_inverse().unwrap_or_else(|| s.q.clone());
    let q = &s.q + &d.q * t + &d.q * &q_inverse * &d.q * (0.5 * t * t);
    let q = (&q + q.transpose()) * 0.5;
    let grow = DMatrix::identity(n, n) + &d.r * t;
    let r = &grow * &s.r * &grow;
    let r = (&r + r.transpose()) * 0.5;
    Ok(LinearPhMember {
        system: LinearPh::new("gradient-fd", &s.j + &d.j * t, r, q, &s.b + &d.b * t)?,
        x0: &w.x0 + &d.x0 * t,
    })
}

fn sum(parts: &[Parameters]) -> Parameters {
    let mut total = parts[0].clone();
    for p in &parts[1..] {
        total.j += &p.j;
        total.r += &p.r;
        total.q += &p.q;
        total.b += &p.b;
        total.x0 += &p.x0;
    }
    total
}

/// ⟨g, velocity of R_w(t d) at t = 0⟩: d on J, Q, B, x0, S R + R S on R.
fn dot(g: &Parameters, d: &Parameters, r: &DMatrix<f64>) -> f64 {
    let r_velocity = &d.r * r + r * &d.r;
    g.j.dot(&d.j) + g.r.dot(&r_velocity) + g.q.dot(&d.q) + g.b.dot(&d.b) + g.x0.dot(&d.x0)
}

/// Runs the check of `plan`'s first candidate at the steps `steps`, every evaluation in one
/// batch on `backend`; `seed` draws the directions.
pub fn run(
    backend: &Backend,
    budget: &MemoryBudget,
    plan: &GradientPlan,
    steps: &[f64],
    seed: u64,
) -> Result<FdStudy> {
    let w = plan.model.ensemble.member(0)?;
    let parts = directions(&w, seed);
    let all = sum(&parts);
    let mut members = vec![w.clone()];
    for &t in steps {
        for d in &parts {
            members.push(retract(&w, d, t)?);
        }
        members.push(retract(&w, &all, t)?);
        members.push(retract(&w, &all, -t)?);
    }
    let evaluations = evaluate(backend, &plan.with_candidates(members)?, budget)?;
    let base = &evaluations[0];
    let derivatives: [f64; 5] =
        std::array::from_fn(|k| dot(&base.gradient, &parts[k], &w.system.r));
    let exact: f64 = derivatives.iter().sum();
    let rows = steps
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let at = |k: usize| evaluations[1 + i * 7 + k].cost;
            let parts: [f64; 5] = std::array::from_fn(|k| (at(k) - base.cost) / t);
            let fd_sum: f64 = parts.iter().sum();
            let fd_all = (at(5) - base.cost) / t;
            let central = (at(5) - at(6)) / (2.0 * t);
            FdRow {
                t,
                relative_sum: (exact - fd_sum).abs() / fd_sum.abs(),
                relative_all: (exact - fd_all).abs() / fd_all.abs(),
                relative_central: (exact - central).abs() / central.abs(),
                parts,
            }
        })
        .collect();
    Ok(FdStudy {
        cost: base.cost,
        derivatives,
        rows,
    })
}

impl FdStudy {
    /// The printed table: per t the three relative differences, the seed's beside t = 1e-3.
    pub fn table(&self) -> String {
        let mut text = format!(
            "cost 𝒥(w) = {:.6e}; ⟨∇𝒥, h_K⟩ for K = {}: {}\n",
            self.cost,
            PARTS.join(", "),
            self.derivatives
                .iter()
                .map(|d| format!("{d:.6e}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        text.push_str(&format!(
            "{:>8} {:>14} {:>14} {:>14} {:>14} {:>14}\n",
            "t", "sum of parts", "seed", "all at once", "seed", "central"
        ));
        for row in &self.rows {
            let seed = |v: f64| {
                if row.t == SEED_STEP {
                    format!("{v:.3e}")
                } else {
                    "".into()
                }
            };
            text.push_str(&format!(
                "{:>8.0e} {:>14.3e} {:>14} {:>14.3e} {:>14} {:>14.3e}\n",
                row.t,
                row.relative_sum,
                seed(SEED_RELATIVE.0),
                row.relative_all,
                seed(SEED_RELATIVE.1),
                row.relative_central
            ));
        }
        text
    }

    /// `t,relative_sum,relative_all,relative_central,fd_J,fd_R,fd_Q,fd_B,fd_x0`.
    pub fn csv(&self) -> String {
        let mut text = String::from("t,relative_sum,relative_all,relative_central");
        for part in PARTS {
            text.push_str(&format!(",fd_{part}"));
        }
        text.push('\n');
        for row in &self.rows {
            text.push_str(&format!(
                "{:e},{:e},{:e},{:e}",
                row.t, row.relative_sum, row.relative_all, row.relative_central
            ));
            for v in row.parts {
                text.push_str(&format!(",{v:e}"));
            }
            text.push('\n');
        }
        text
    }
}
