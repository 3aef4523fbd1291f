//! What a solved boundary-value path gives besides itself, window by window: the discrete
//! action, the observables, the energy of every step and, with a symmetry ξ, the momentum
//! map of every step.
//!
//! Order-2 windows are centred at j = 0 … N with the ghost points beyond the ends
//! reconstructed from the clamped velocities, q_{−1} = q_1 − 2h q̇(0) and
//! q_{N+1} = q_{N−1} + 2h q̇(T).
//!
//! - Action: Σ_j w_j L_d(window j), w_j = ½ for the two windows centred on the ends of an
//!   order-2 path (so that it approximates ∫ L dt at second order), else 1; compensated.
//! - Energy of step k (ending at q_k, k = 1 … N): order 1, E = q̇ · ∂L/∂q̇ − L at the
//!   rule's midpoint jet; order 2, the Ostrogradsky energy from the windows centred at
//!   t_{k−1} and t_k ([`super::discrete::OstrogradskyParts::step_energy`]).
//! - Momentum map of step k: order 1, J_k = D₂L_d^aug(q_{k−1}, q_k) · ξ(q_k); order 2,
//!   J_k = [D₃L_d^aug(w_{k−1}) + D₂L_d^aug(w_k)] · ξ(q_k) + D₃L_d^aug(w_k) · ξ(q_{k+1}),
//!   the momentum map of the path ending at q_{k+1} as the initial-value march reads it
//!   (L_d^aug includes h λ_jᵀ φ_w of the window). By the discrete Noether theorem it is
//!   the same for every step between two knots when L_d and the constraints are
//!   invariant; a knot, whose interpolation constraint replaces the Euler–Lagrange
//!   equation, changes it by the impulse that constraint exerts.

use super::discrete::{OstrogradskyParts, Scratch, WindowTerms};
use super::plan::{MemberProblem, VariationalMember, VariationalPlan};
use crate::compensated::CompensatedSum;

/// The path's action, observables per window, energies and momenta per step.
#[derive(Debug, Clone)]
pub struct PathQuantities {
    pub action: f64,
    /// Per window (order 2: centred at j = 0 … N; order 1: step j = 0 … N − 1).
    pub observables: Vec<Vec<f64>>,
    /// Per step k = 1 … N (empty without an energy channel).
    pub energies: Vec<f64>,
    /// Per step k = 1 … N (empty without a symmetry).
    pub momenta: Vec<f64>,
}

impl VariationalPlan {
    /// The quantities of a solved path q_0 … q_N with its per-point multipliers (module
    /// docs); `energies` and `momenta` as the record spec asks.
    pub(super) fn path_quantities(
        &self,
        member: &VariationalMember,
        path: &[Vec<f64>],
        multipliers: &[Vec<f64>],
        energies: bool,
        momenta: bool,
    ) -> PathQuantities {
        let model = &self.model;
        let d = model.d();
        let n = self.grid.steps;
        let h = self.grid.h;
        let cw = model.window_count();
        let mut scratch = Scratch::default();
        let mut action = CompensatedSum::default();
        let mut quantities = PathQuantities {
            action: f64::NAN,
            observables: Vec::new(),
            energies: Vec::new(),
            momenta: Vec::new(),
        };
        let MemberProblem::BoundaryValue(data) = &member.problem else {
            return quantities;
        };
        let ghost = |beyond: usize, velocity: &[f64], sign: f64| -> Vec<f64> {
            (0..d)
                .map(|c| path[beyond][c] - sign * 2.0 * h * velocity[c])
                .collect()
        };
        let (before, after) = if model.order == 2 {
            (
                ghost(1, &data.start_qd, 1.0),
                ghost(n - 1, &data.end_qd, -1.0),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let point = |k: isize| -> &[f64] {
            if k < 0 {
                &before
            } else if k as usize > n {
                &after
            } else {
                &path[k as usize]
            }
        };
        // (first point, weight) of every window; window j's λ are those of point j.
        let windows: Vec<(isize, f64)> = if model.order == 2 {
            (0..=n as isize)
                .map(|j| (j - 1, if j == 0 || j == n as isize { 0.5 } else { 1.0 }))
                .collect()
        } else {
            (0..n as isize).map(|j| (j, 1.0)).collect()
        };
        let mut parts: Vec<OstrogradskyParts> = Vec::new();
        let mut gradients: Vec<Vec<f64>> = Vec::new();
        let mut terms = WindowTerms::default();
        let mut generator = Vec::new();
        for (j, &(start, weight)) in windows.iter().enumerate() {
            let base = point(start);
            let offsets: Vec<Vec<f64>> = (0..=model.order as isize)
                .map(|i| {
                    point(start + i)
                        .iter()
                        .zip(base)
                        .map(|(a, b)| a - b)
                        .collect()
                })
                .collect();
            let slices: Vec<&[f64]> = offsets.iter().map(Vec::as_slice).collect();
            let t = start as f64 * h;
            let mut values = Vec::new();
            let l_d = scratch.lagrangian_and_observables(
                model,
                &self.rule,
                &member.parameters,
                t,
                base,
                &slices,
                &mut values,
            );
            action.add(weight * l_d);
            quantities.observables.push(values);
            if energies {
                if model.order == 2 {
                    parts.push(scratch.ostrogradsky_parts(
                        model,
                        &self.rule,
                        &member.parameters,
                        t,
                        base,
                        &slices,
                    ));
                } else {
                    quantities.energies.push(scratch.energy(
                        model,
                        &self.rule,
                        &member.parameters,
                        t,
                        base,
                        &slices,
                    ));
                }
            }
            if momenta {
                let lambda = &multipliers[j][..cw];
                scratch.window(
                    model,
                    &self.rule,
                    &member.parameters,
                    t,
                    base,
                    &slices,
                    lambda,
                    &mut terms,
                );
                gradients.push(terms.gradient.clone());
            }
        }
        quantities.action = action.value();
        let increment = |k: usize| -> Vec<f64> {
            path[k]
                .iter()
                .zip(&path[k - 1])
                .map(|(a, b)| a - b)
                .collect()
        };
        if model.order == 2 {
            quantities.energies = (1..=n)
                .filter(|_| energies)
                .map(|k| parts[k - 1].step_energy(&parts[k], &increment(k), h))
                .collect();
        }
        let mut xi = |q: &[f64]| -> Vec<f64> {
            scratch.generator(model, &member.parameters, q, &mut generator);
            generator.clone()
        };
        // a · b from the first product.
        let dot = |a: &[f64], b: &[f64]| -> f64 {
            (1..a.len()).fold(a[0] * b[0], |total, c| total + a[c] * b[c])
        };
        if momenta {
            for k in 1..=n {
                let value = if model.order == 2 {
                    let (earlier, window) = (&gradients[k - 1], &gradients[k]);
                    let momentum: Vec<f64> =
                        (0..d).map(|c| earlier[2 * d + c] + window[d + c]).collect();
                    dot(&momentum, &xi(point(k as isize)))
                        + dot(&window[2 * d..3 * d], &xi(point(k as isize + 1)))
                } else {
                    dot(&gradients[k - 1][d..2 * d], &xi(point(k as isize)))
                };
                quantities.momenta.push(value);
            }
        }
        quantities
    }
}
