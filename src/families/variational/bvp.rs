//! Boundary-value problems: the whole discrete path, multipliers included, from one Newton
//! solve of the banded system of the discrete Euler–Lagrange equations with constraints
//! (the seed's eqs. 1.5 and 3.4; Benito, de León & Martín de Diego 2006 for order 2).
//!
//! The grid is t_k = k h, k = 0 … N. Window j of the rule holds the points
//! (q_j, q_{j+1}) for order 1 (j = 0 … N − 1) and (q_{j−1}, q_j, q_{j+1}) for order 2
//! (j = 0 … N, centred on t_j, with the ghost points q_{−1} and q_{N+1} beyond the ends).
//! The augmented action is
//!
//! ```text
//!   S = Σ_j [L_d(window j) + h λ_jᵀ φ_w(window j)] + Σ_{k free} h μ_kᵀ φ_h(q_k, t_k),
//! ```
//!
//! and the unknowns are every point (ghosts included), λ_j per window and μ_k per free
//! point. The equations, one block per point:
//!
//! - at a free point k: stationarity ∂S/∂q_k = 0 (the discrete Euler–Lagrange equation)
//!   and φ_h(q_k, t_k) = 0;
//! - at a knot: q_k = the knot, replacing the Euler–Lagrange equation (§4.4); the knot
//!   must satisfy the holonomic constraints (checked), which then carry no multiplier;
//! - order 1: q_0 = start.q and q_N = end.q;
//! - order 2: q_0 = start.q, (q_1 − q_{−1})/2h = start.qd, q_N = end.q,
//!   (q_{N+1} − q_{N−1})/2h = end.qd: clamped ends by central differences, consistent with
//!   the central rule at second order (the discrete clamped cubic spline, the clamped
//!   beam);
//! - per window, φ_w(window j) = 0.
//!
//! Each equation couples a point with its r neighbours on either side, so the Newton matrix
//! is banded ([`super::banded`]) and a solve costs O(N) for a fixed model.

use super::banded::Banded;
use super::discrete::{PointTerms, Scratch, WindowTerms};
use super::model::LagrangianModel;
use super::rule::DiscreteRule;
use super::solve::{NewtonSettings, project};

/// A boundary-value problem of one member.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryData {
    pub start_q: Vec<f64>,
    /// Order 2 only.
    pub start_qd: Vec<f64>,
    pub end_q: Vec<f64>,
    pub end_qd: Vec<f64>,
    /// (grid index, q).
    pub knots: Vec<(usize, Vec<f64>)>,
}

/// The solved path.
#[derive(Debug, Clone)]
pub struct Solution {
    /// q_0 … q_N.
    pub path: Vec<Vec<f64>>,
    /// Per point k = 0 … N: λ of the window at k (order 2: centred at k; order 1: starting
    /// at k, none at N), then μ_k (0 where the point is fixed).
    pub multipliers: Vec<Vec<f64>>,
    pub iterations: usize,
    /// max |φ| over the points and windows.
    pub constraint_residual: f64,
    /// ‖F‖_∞ / max_rows Σ |terms of the row| at the returned path: the residual of the
    /// equations relative to the size of their terms, round-off when the system is
    /// solved.
    pub equation_residual: f64,
}

/// Why a solve failed.
#[derive(Debug, Clone, PartialEq)]
pub enum SolveFailure {
    NoConvergence { iterations: usize, change: f64 },
    Singular { iteration: usize },
    NotFinite { iteration: usize },
}

/// The layout of the unknowns: one slot per point (ghosts included), each [q (d), μ (if
/// free and constrained), λ (if a window is attached)].
struct Layout {
    /// First grid index of slot 0 (−1 for order 2).
    first: isize,
    offsets: Vec<usize>,
    has_mu: Vec<bool>,
    has_lambda: Vec<bool>,
    /// Fixed value of the point, where one is prescribed.
    fixed: Vec<Option<Vec<f64>>>,
}

impl Layout {
    fn slot(&self, k: isize) -> usize {
        (k - self.first) as usize
    }
    fn q(&self, k: isize) -> usize {
        self.offsets[self.slot(k)]
    }
}

/// The boundary-value solver of one model and rule over N steps.
pub struct BoundarySolver<'a> {
    pub model: &'a LagrangianModel,
    pub rule: &'a DiscreteRule,
    pub steps: usize,
    pub newton: NewtonSettings,
}

impl BoundarySolver<'_> {
    /// The windows: their first point's grid index (order 1: j; order 2: j − 1).
    fn windows(&self) -> impl Iterator<Item = (isize, isize)> + use<'_> {
        let n = self.steps as isize;
        let order = self.model.order;
        let count = if order == 1 { n } else { n + 1 };
        (0..count).map(move |j| (j, if order == 1 { j } else { j - 1 }))
    }

    fn layout(&self, data: &BoundaryData) -> Layout {
        let model = self.model;
        let (d, ch, cw) = (model.d(), model.holonomic_count(), model.window_count());
        let n = self.steps as isize;
        let first: isize = if model.order == 2 { -1 } else { 0 };
        let last: isize = if model.order == 2 { n + 1 } else { n };
        let slots = (last - first + 1) as usize;
        let mut fixed: Vec<Option<Vec<f64>>> = vec![None; slots];
        let slot = |k: isize| (k - first) as usize;
        fixed[slot(0)] = Some(data.start_q.clone());
        fixed[slot(n)] = Some(data.end_q.clone());
        for (k, q) in &data.knots {
            fixed[slot(*k as isize)] = Some(q.clone());
        }
        let mut has_mu = vec![false; slots];
        let mut has_lambda = vec![false; slots];
        for k in 0..=n {
            has_mu[slot(k)] = ch > 0 && fixed[slot(k)].is_none();
        }
        for (j, _) in self.windows() {
            has_lambda[slot(j)] = cw > 0;
        }
        let mut offsets = Vec::with_capacity(slots + 1);
        let mut at = 0;
        for s in 0..slots {
            offsets.push(at);
            at += d + if has_mu[s] { ch } else { 0 } + if has_lambda[s] { cw } else { 0 };
        }
        offsets.push(at);
        Layout {
            first,
            offsets,
            has_mu,
            has_lambda,
            fixed,
        }
    }

    /// Piecewise-linear through the prescribed points (ghosts by the end velocities),
    /// free points projected onto the holonomic constraints.
    fn guess(
        &self,
        layout: &Layout,
        data: &BoundaryData,
        parameters: &[f64],
        scratch: &mut Scratch,
    ) -> Vec<f64> {
        let model = self.model;
        let d = model.d();
        let n = self.steps as isize;
        let h = self.rule.h;
        let mut x = vec![0.0; *layout.offsets.last().unwrap_or(&0)];
        let anchors: Vec<(isize, &Vec<f64>)> = (0..=n)
            .filter_map(|k| layout.fixed[layout.slot(k)].as_ref().map(|q| (k, q)))
            .collect();
        for k in 0..=n {
            let q = match anchors.binary_search_by_key(&k, |(i, _)| *i) {
                Ok(i) => anchors[i].1.clone(),
                Err(i) => {
                    let (a, qa) = anchors[i - 1];
                    let (b, qb) = anchors[i];
                    let s = (k - a) as f64 / (b - a) as f64;
                    let mut q: Vec<f64> = qa.iter().zip(qb).map(|(u, v)| u + s * (v - u)).collect();
                    project(scratch, model, parameters, k as f64 * h, &mut q);
                    q
                }
            };
            let o = layout.q(k);
            x[o..o + d].copy_from_slice(&q);
        }
        if model.order == 2 {
            for c in 0..d {
                let (o0, om) = (layout.q(0), layout.q(-1));
                x[om + c] = x[o0 + c] - h * data.start_qd[c];
                let (on, op) = (layout.q(n), layout.q(n + 1));
                x[op + c] = x[on + c] + h * data.end_qd[c];
            }
        }
        x
    }

    /// The residual F(x), the magnitudes of each row's terms (Σ |term|) and, with
    /// `jacobian`, its Jacobian; returns max |φ| over points and windows.
    #[expect(clippy::too_many_arguments, reason = "the pieces of one assembly")]
    fn assemble(
        &self,
        layout: &Layout,
        data: &BoundaryData,
        parameters: &[f64],
        x: &[f64],
        scratch: &mut Scratch,
        residual: &mut [f64],
        magnitude: &mut [f64],
        mut jacobian: Option<&mut Banded>,
    ) -> f64 {
        let model = self.model;
        let (d, ch, cw) = (model.d(), model.holonomic_count(), model.window_count());
        let n = self.steps as isize;
        let h = self.rule.h;
        let order = model.order as isize;
        residual.iter_mut().for_each(|v| *v = 0.0);
        magnitude.iter_mut().for_each(|v| *v = 0.0);
        let mut constraint_residual = 0.0_f64;
        let add = |jac: &mut Option<&mut Banded>, i: usize, j: usize, v: f64| {
            if let Some(a) = jac.as_deref_mut() {
                a.add(i, j, v);
            }
        };
        // Rows per slot: q rows at offset, μ rows after, λ rows after those.
        let mu_at = |s: usize| layout.offsets[s] + d;
        let lambda_at = |s: usize| layout.offsets[s] + d + if layout.has_mu[s] { ch } else { 0 };
        let free = |k: isize| (0..=n).contains(&k) && layout.fixed[layout.slot(k)].is_none();
        // Windows: their gradient into the Euler–Lagrange rows of free points, their
        // constraints into their own rows.
        let mut terms = WindowTerms::default();
        // The window's points as differences from its first, one buffer for every window.
        let mut differences = vec![0.0; (model.order + 1) * d];
        for (j, start) in self.windows() {
            let points: Vec<isize> = (0..=order).map(|i| start + i).collect();
            let base = &x[layout.q(start)..layout.q(start) + d];
            for (difference, &k) in differences.chunks_exact_mut(d).zip(&points) {
                let q = &x[layout.q(k)..layout.q(k) + d];
                for ((o, a), b) in difference.iter_mut().zip(q).zip(base) {
                    *o = a - b;
                }
            }
            let slices: Vec<&[f64]> = differences.chunks_exact(d).collect();
            let s = layout.slot(j);
            let lambda: &[f64] = if layout.has_lambda[s] {
                &x[lambda_at(s)..lambda_at(s) + cw]
            } else {
                &[]
            };
            let t_start = start as f64 * h;
            scratch.window(
                model, self.rule, parameters, t_start, base, &slices, lambda, &mut terms,
            );
            let w = points.len() * d;
            for (i, &k) in points.iter().enumerate() {
                if !free(k) {
                    continue;
                }
                let row = layout.q(k);
                for c in 0..d {
                    residual[row + c] += terms.gradient[i * d + c];
                    magnitude[row + c] += terms.gradient[i * d + c].abs();
                    for (i2, &k2) in points.iter().enumerate() {
                        for c2 in 0..d {
                            let v = terms.hessian[(i * d + c) * w + i2 * d + c2];
                            add(&mut jacobian, row + c, layout.q(k2) + c2, v);
                        }
                    }
                    for jj in 0..cw {
                        let v = h * terms.constraint_jacobian[jj * w + i * d + c];
                        add(&mut jacobian, row + c, lambda_at(s) + jj, v);
                    }
                }
            }
            for jj in 0..cw {
                let row = lambda_at(s) + jj;
                residual[row] = terms.constraints[jj];
                magnitude[row] = terms.constraints[jj].abs();
                constraint_residual = constraint_residual.max(terms.constraints[jj].abs());
                for (i2, &k2) in points.iter().enumerate() {
                    for c2 in 0..d {
                        let v = terms.constraint_jacobian[jj * w + i2 * d + c2];
                        add(&mut jacobian, row, layout.q(k2) + c2, v);
                    }
                }
            }
        }
        // Points: holonomic constraints of free points; prescribed values; the ends.
        let mut point = PointTerms::default();
        let no_multipliers = vec![0.0; ch];
        for k in 0..=n {
            let s = layout.slot(k);
            let o = layout.q(k);
            let q = &x[o..o + d];
            if layout.has_mu[s] {
                let mu = &x[mu_at(s)..mu_at(s) + ch];
                scratch.point(model, parameters, k as f64 * h, q, mu, &mut point);
                for c in 0..d {
                    for (jj, &m) in mu.iter().enumerate() {
                        residual[o + c] += h * point.jacobian[jj * d + c] * m;
                        magnitude[o + c] += (h * point.jacobian[jj * d + c] * m).abs();
                        add(
                            &mut jacobian,
                            o + c,
                            mu_at(s) + jj,
                            h * point.jacobian[jj * d + c],
                        );
                    }
                    for c2 in 0..d {
                        add(&mut jacobian, o + c, o + c2, h * point.hessian[c * d + c2]);
                    }
                }
                for jj in 0..ch {
                    residual[mu_at(s) + jj] = point.constraints[jj];
                    magnitude[mu_at(s) + jj] = point.constraints[jj].abs();
                    constraint_residual = constraint_residual.max(point.constraints[jj].abs());
                    for c2 in 0..d {
                        add(
                            &mut jacobian,
                            mu_at(s) + jj,
                            o + c2,
                            point.jacobian[jj * d + c2],
                        );
                    }
                }
            } else if ch > 0 {
                scratch.point(
                    model,
                    parameters,
                    k as f64 * h,
                    q,
                    &no_multipliers,
                    &mut point,
                );
                for v in &point.constraints {
                    constraint_residual = constraint_residual.max(v.abs());
                }
            }
            if let Some(value) = &layout.fixed[s] {
                // q_k − value, in the rows of this slot (order 2 puts the ends' positions in
                // the ghost slots and their velocities in the end slots, below).
                let row = if model.order == 2 && k == 0 {
                    layout.q(-1)
                } else if model.order == 2 && k == n {
                    layout.q(n)
                } else {
                    o
                };
                for c in 0..d {
                    residual[row + c] = q[c] - value[c];
                    magnitude[row + c] = q[c].abs() + value[c].abs();
                    add(&mut jacobian, row + c, o + c, 1.0);
                }
            }
        }
        if model.order == 2 {
            // (q_1 − q_{−1})/2h = start.qd in slot 0's rows; the end's in slot N + 1's.
            for (row_point, plus, minus, velocity) in [
                (0, 1, -1, &data.start_qd),
                (n + 1, n + 1, n - 1, &data.end_qd),
            ] {
                let row = layout.q(row_point);
                for c in 0..d {
                    let (p, m) = (layout.q(plus) + c, layout.q(minus) + c);
                    residual[row + c] = (x[p] - x[m]) / (2.0 * h) - velocity[c];
                    magnitude[row + c] = (x[p].abs() + x[m].abs()) / (2.0 * h) + velocity[c].abs();
                    add(&mut jacobian, row + c, p, 0.5 / h);
                    add(&mut jacobian, row + c, m, -0.5 / h);
                }
            }
        }
        constraint_residual
    }

    /// Solves member's problem; `parameters` in the model's order.
    pub fn solve(&self, data: &BoundaryData, parameters: &[f64]) -> Result<Solution, SolveFailure> {
        let model = self.model;
        let (d, ch, cw) = (model.d(), model.holonomic_count(), model.window_count());
        let layout = self.layout(data);
        let mut scratch = Scratch::default();
        let mut x = self.guess(&layout, data, parameters, &mut scratch);
        let size = x.len();
        let slots = layout.offsets.len() - 1;
        let r = model.order;
        let (mut kl, mut ku) = (0, 0);
        for s in 0..slots {
            let (row_start, row_end) = (layout.offsets[s], layout.offsets[s + 1]);
            let col_start = layout.offsets[s.saturating_sub(r + 1)];
            let col_end = layout.offsets[(s + r + 2).min(slots)];
            kl = kl.max(row_end - 1 - col_start.min(row_end - 1));
            ku = ku.max(col_end - 1 - row_start);
        }
        let mut residual = vec![0.0; size];
        let mut magnitude = vec![0.0; size];
        let mut last_change = f64::INFINITY;
        for iteration in 1..=self.newton.max_iterations {
            let mut jacobian = Banded::zeros(size, kl, ku);
            self.assemble(
                &layout,
                data,
                parameters,
                &x,
                &mut scratch,
                &mut residual,
                &mut magnitude,
                Some(&mut jacobian),
            );
            if residual.iter().any(|v| !v.is_finite()) {
                return Err(SolveFailure::NotFinite { iteration });
            }
            let mut delta = residual.clone();
            if jacobian.solve(&mut delta).is_none() {
                return Err(SolveFailure::Singular { iteration });
            }
            let mut change = 0.0_f64;
            let mut scale = 1.0_f64;
            for s in 0..slots {
                let o = layout.offsets[s];
                for c in 0..d {
                    x[o + c] -= delta[o + c];
                    change = change.max(delta[o + c].abs());
                    scale = scale.max(x[o + c].abs());
                }
            }
            for s in 0..slots {
                let o = layout.offsets[s];
                for i in o + d..layout.offsets[s + 1] {
                    x[i] -= delta[i];
                }
                // Prescribed points satisfy their linear rows up to the solve's round-off:
                // they are set exactly.
                if let Some(value) = &layout.fixed[s] {
                    x[o..o + d].copy_from_slice(value);
                }
            }
            last_change = change;
            if change <= self.newton.tolerance * scale {
                let constraint_residual = self.assemble(
                    &layout,
                    data,
                    parameters,
                    &x,
                    &mut scratch,
                    &mut residual,
                    &mut magnitude,
                    None,
                );
                let largest = |v: &[f64]| v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
                let equation_residual =
                    largest(&residual) / largest(&magnitude).max(f64::MIN_POSITIVE);
                if !equation_residual.is_finite() {
                    return Err(SolveFailure::NotFinite { iteration });
                }
                let n = self.steps as isize;
                let path = (0..=n)
                    .map(|k| x[layout.q(k)..layout.q(k) + d].to_vec())
                    .collect();
                let multipliers = (0..=n)
                    .map(|k| {
                        let s = layout.slot(k);
                        let o = layout.offsets[s] + d;
                        let mut values = vec![0.0; cw + ch];
                        let mut at = o;
                        if layout.has_mu[s] {
                            values[cw..].copy_from_slice(&x[at..at + ch]);
                            at += ch;
                        }
                        if layout.has_lambda[s] {
                            values[..cw].copy_from_slice(&x[at..at + cw]);
                        }
                        values
                    })
                    .collect();
                return Ok(Solution {
                    path,
                    multipliers,
                    iterations: iteration,
                    constraint_residual,
                    equation_residual,
                });
            }
        }
        Err(SolveFailure::NoConvergence {
            iterations: self.newton.max_iterations,
            change: last_change,
        })
    }
}
