//! An initial-value member marched on the CPU: the discrete path from its data, one
//! Newton solve per step ([`super::ivp::Marcher::step`]), with its records and totals.
//!
//! Order 1 starts from the continuous momentum (the discrete Legendre transform, see
//! [`super::ivp`]); step k gives q_{k+1}, the energy of the step at its midpoint jet and the
//! momentum map J_{k+1} = p_{k+1} · ξ(q_{k+1}).
//!
//! Order 2 starts from q_0 … q_2 ([`super::start`]); step k ≥ 1 solves the discrete
//! equation at point k for q_{k+2}, so the march runs one point ahead of the record: step k
//! reports q_{k+1} with the energy of the step (k, k + 1) from the windows centred at t_k
//! and t_{k+1} ([`super::discrete::OstrogradskyParts::step_energy`]) and the momentum map
//! of the path ending at q_{k+2},
//!
//! ```text
//!   J_{k+1} = p_{k+1} · ξ(q_{k+1}) + π_{k+2} · ξ(q_{k+2}),
//!   p_{k+1} = D₃L_d(w_k) + D₂L_d(w_{k+1}),   π_{k+2} = D₃L_d(w_{k+1}),
//! ```
//!
//! which the discrete equation at k + 1 … conserves exactly when L_d and the constraints
//! are invariant (the discrete Noether theorem of Benito, de León & Martín de Diego 2006).
//! The last step solves the equation at N − 1, whose point q_{N+1} lies past t_end: it is
//! not recorded, only the last step's energy needs its window.

use super::discrete::{OstrogradskyParts, Scratch};
use super::ivp::{Marcher, StepFailure};
use super::kernel::{Drift, status};
use super::plan::{InitialData, VariationalMember, VariationalPlan};
use super::start::{SecondOrderData, SecondOrderStart, second_order_start};
use crate::plan::MemberResult;

/// What one step reports for its record point q_{k+1}.
struct Outcome {
    /// q_{k+1} − q_k.
    increment: Vec<f64>,
    /// λ then μ of the step's solve.
    multipliers: Vec<f64>,
    iterations: usize,
    residual: f64,
    equation_residual: f64,
    energy: f64,
    /// J_{k+1} (NaN without a symmetry).
    momentum_map: f64,
}

/// q ← q + Δ with the rounding kept in `carry` (Kahan).
fn compensated_add(q: &mut [f64], carry: &mut [f64], delta: &[f64]) {
    for c in 0..q.len() {
        let y = delta[c] - carry[c];
        let t = q[c] + y;
        carry[c] = (t - q[c]) - y;
        q[c] = t;
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The marching state of a first-order member.
struct FirstOrder<'a> {
    marcher: Marcher<'a>,
    q: Vec<f64>,
    carry: Vec<f64>,
    momentum: Vec<f64>,
    guess: Vec<f64>,
    xi: Vec<f64>,
}

impl FirstOrder<'_> {
    fn advance(&mut self, t_k: f64) -> Result<Outcome, StepFailure> {
        let step = self
            .marcher
            .step(t_k, &self.q, &self.q, &[], &self.momentum, &self.guess)?;
        let energy = self.marcher.energy(t_k, &self.q, &step.next);
        compensated_add(&mut self.q, &mut self.carry, &step.next);
        self.guess.clone_from(&step.next);
        self.momentum = step.outgoing;
        let momentum_map = if self.marcher.generator(&self.q, &mut self.xi) {
            dot(&self.momentum, &self.xi)
        } else {
            f64::NAN
        };
        Ok(Outcome {
            increment: step.next,
            multipliers: step.multipliers,
            iterations: step.iterations,
            residual: step.residual,
            equation_residual: step.equation_residual,
            energy,
            momentum_map,
        })
    }
}

/// The marching state of a second-order member after the equation at point k − 1: q_k and
/// q_{k+1} (compensated), Δ_k = q_{k+1} − q_k and Δ_{k−1}, the momentum p_k arriving at
/// q_k, π_{k+1}, and the Ostrogradsky parts of the window centred at t_k.
struct SecondOrder<'a> {
    marcher: Marcher<'a>,
    scratch: Scratch,
    here: Vec<f64>,
    here_carry: Vec<f64>,
    ahead: Vec<f64>,
    ahead_carry: Vec<f64>,
    increment: Vec<f64>,
    earlier: Vec<f64>,
    momentum: Vec<f64>,
    pending: Vec<f64>,
    parts: OstrogradskyParts,
    xi: Vec<f64>,
}

impl<'a> SecondOrder<'a> {
    /// The state after the start's equation at point 0, and what its first step reports.
    fn new(marcher: Marcher<'a>, q0: &[f64], start: SecondOrderStart) -> (Self, Outcome) {
        let d = q0.len();
        let (parts0, parts1) = start.parts;
        let mut ahead = q0.to_vec();
        let mut ahead_carry = vec![0.0; d];
        compensated_add(&mut ahead, &mut ahead_carry, &start.first);
        let mut state = SecondOrder {
            marcher,
            scratch: Scratch::default(),
            here: q0.to_vec(),
            here_carry: vec![0.0; d],
            ahead,
            ahead_carry,
            increment: start.first.clone(),
            earlier: Vec::new(),
            momentum: Vec::new(),
            pending: Vec::new(),
            parts: parts0,
            xi: Vec::new(),
        };
        let h = state.marcher.rule.h;
        let energy = state.parts.step_energy(&parts1, &start.first, h);
        state.shift(start.second, start.momentum, start.pending, parts1);
        let outcome = Outcome {
            increment: state.earlier.clone(),
            multipliers: start.multipliers,
            iterations: start.iterations,
            residual: start.residual,
            equation_residual: start.equation_residual,
            energy,
            momentum_map: state.momentum_map(),
        };
        (state, outcome)
    }

    /// Moves the state from point k to k + 1, given Δ_{k+1}, p_{k+1}, π_{k+2} and the
    /// window centred at t_{k+1}.
    fn shift(
        &mut self,
        next: Vec<f64>,
        momentum: Vec<f64>,
        pending: Vec<f64>,
        parts: OstrogradskyParts,
    ) {
        self.here.clone_from(&self.ahead);
        self.here_carry.clone_from(&self.ahead_carry);
        compensated_add(&mut self.ahead, &mut self.ahead_carry, &next);
        self.earlier = std::mem::replace(&mut self.increment, next);
        self.momentum = momentum;
        self.pending = pending;
        self.parts = parts;
    }

    /// J = p_k · ξ(q_k) + π_{k+1} · ξ(q_{k+1}) of the current state (NaN without a
    /// symmetry).
    fn momentum_map(&mut self) -> f64 {
        if !self.marcher.generator(&self.here, &mut self.xi) {
            return f64::NAN;
        }
        let near = dot(&self.momentum, &self.xi);
        self.marcher.generator(&self.ahead, &mut self.xi);
        near + dot(&self.pending, &self.xi)
    }

    /// The equation at point k (state at k): q_{k+2}; reports q_{k+1}.
    fn advance(&mut self, t_k: f64) -> Result<Outcome, StepFailure> {
        let d = self.here.len();
        let guess: Vec<f64> = (0..d)
            .map(|c| 2.0 * self.increment[c] - self.earlier[c])
            .collect();
        let step = self.marcher.step(
            t_k,
            &self.here,
            &self.ahead,
            &self.increment,
            &self.momentum,
            &guess,
        )?;
        let minus_increment: Vec<f64> = self.increment.iter().map(|v| -v).collect();
        let zeros = vec![0.0; d];
        let marcher = &self.marcher;
        let parts = self.scratch.ostrogradsky_parts(
            marcher.model,
            marcher.rule,
            marcher.parameters,
            t_k,
            &self.ahead,
            &[&minus_increment, &zeros, &step.next],
        );
        let energy = self
            .parts
            .step_energy(&parts, &self.increment, marcher.rule.h);
        let momentum = (0..d).map(|c| self.pending[c] + step.outgoing[c]).collect();
        let pending = step.outgoing[d..2 * d].to_vec();
        self.shift(step.next, momentum, pending, parts);
        Ok(Outcome {
            increment: self.earlier.clone(),
            multipliers: step.multipliers,
            iterations: step.iterations,
            residual: step.residual,
            equation_residual: step.equation_residual,
            energy,
            momentum_map: self.momentum_map(),
        })
    }
}

/// A member's march of either order.
enum March<'a> {
    First(Box<FirstOrder<'a>>),
    /// Order 2 before its first record: the start's outcome (or failure).
    Starting(Option<Result<Outcome, StepFailure>>),
    Second(Box<SecondOrder<'a>>),
    Failed,
}

impl VariationalPlan {
    /// The reference solve of an initial-value member (module docs).
    pub(super) fn initial_value(
        &self,
        member: &VariationalMember,
        data: &InitialData,
    ) -> MemberResult {
        let model = &self.model;
        let d = model.d();
        let h = self.grid.h;
        let mut marcher = Marcher::new(model, &self.rule, &member.parameters, self.newton);
        let records = self.grid.record_points();
        let mut result = MemberResult::with_capacity(self.record_spec(), records.len());
        let (path, multipliers, energy_channel, momentum_channel) = (
            self.channel("path"),
            self.channel("multipliers"),
            self.channel("energy"),
            self.channel("momentum"),
        );
        let mut q = data.q0.clone();
        let mut carry = vec![0.0; d];
        if let Some(c) = path {
            result.channels[c].extend_from_slice(&q);
        }
        let mut momentum = Drift::new();
        let mut energy = Drift::new();
        let mut constraint_residual = marcher.point_residual(&q, 0.0);
        // Order 2: the march after its start, taken up after the first record.
        let mut started = March::Failed;
        let mut march = if model.order == 1 {
            let p = marcher.initial_momentum(&data.q0, &data.qd0, 0.0);
            let mut xi = Vec::new();
            if marcher.generator(&q, &mut xi) {
                let j0 = dot(&p, &xi);
                momentum.add(j0);
                if let Some(c) = momentum_channel {
                    result.channels[c].push(j0);
                }
            }
            March::First(Box::new(FirstOrder {
                marcher,
                q: q.clone(),
                carry: vec![0.0; d],
                momentum: p,
                guess: data.qd0.iter().map(|v| h * v).collect(),
                xi,
            }))
        } else {
            let start = second_order_start(
                model,
                &self.rule,
                &member.parameters,
                self.newton,
                SecondOrderData {
                    q: &data.q0,
                    qd: &data.qd0,
                    qdd: &data.qdd0,
                    qddd: &data.qddd0,
                },
            );
            match start {
                Ok(start) => {
                    let (p0, pi1) = &start.momentum_at_start;
                    let mut q1 = data.q0.clone();
                    compensated_add(&mut q1, &mut vec![0.0; d], &start.first);
                    let mut xi = Vec::new();
                    if marcher.generator(&data.q0, &mut xi) {
                        let near = dot(p0, &xi);
                        marcher.generator(&q1, &mut xi);
                        let j0 = near + dot(pi1, &xi);
                        momentum.add(j0);
                        if let Some(c) = momentum_channel {
                            result.channels[c].push(j0);
                        }
                    }
                    let (state, outcome) = SecondOrder::new(marcher, &data.q0, start);
                    started = March::Second(Box::new(state));
                    March::Starting(Some(Ok(outcome)))
                }
                Err(failure) => {
                    // The path ending at q_1 does not exist: J_0's place holds NaN.
                    if let Some(c) = momentum_channel {
                        result.channels[c].push(f64::NAN);
                    }
                    March::Starting(Some(Err(failure)))
                }
            }
        };
        let (mut status, mut failed_step, mut iterations) = (status::OK, 0usize, 0usize);
        let mut equation_residual = 0.0_f64;
        let mut next_record = records.iter().copied().peekable();
        let mut last_multipliers = vec![f64::NAN; model.window_count() + model.holonomic_count()];
        let mut step_energy = f64::NAN;
        for k in 0..self.grid.steps {
            let t_k = k as f64 * h;
            if status == status::OK {
                let outcome = match &mut march {
                    March::First(state) => state.advance(t_k),
                    March::Second(state) => state.advance(t_k),
                    March::Starting(first) => first.take().expect("the start reports once"),
                    March::Failed => unreachable!("a failed march stops"),
                };
                if matches!(march, March::Starting(None)) {
                    march = std::mem::replace(&mut started, March::Failed);
                }
                match outcome {
                    Ok(outcome) => {
                        iterations += outcome.iterations;
                        constraint_residual = constraint_residual.max(outcome.residual);
                        equation_residual = equation_residual.max(outcome.equation_residual);
                        step_energy = outcome.energy;
                        energy.add(step_energy);
                        compensated_add(&mut q, &mut carry, &outcome.increment);
                        last_multipliers = outcome.multipliers;
                        if momentum_channel.is_some() {
                            momentum.add(outcome.momentum_map);
                        }
                    }
                    Err(failure) => {
                        status = match failure {
                            StepFailure::NoConvergence => status::NO_CONVERGENCE,
                            StepFailure::Singular => status::SINGULAR,
                            StepFailure::NotFinite => status::NOT_FINITE,
                        };
                        failed_step = k + 1;
                        result.nonfinite_step = Some(k as u64 + 1);
                        q.iter_mut().for_each(|v| *v = f64::NAN);
                        last_multipliers.iter_mut().for_each(|v| *v = f64::NAN);
                        step_energy = f64::NAN;
                    }
                }
            }
            if next_record.peek() == Some(&(k + 1)) {
                next_record.next();
                if let Some(c) = path {
                    result.channels[c].extend_from_slice(&q);
                }
                if let Some(c) = multipliers {
                    result.channels[c].extend_from_slice(&last_multipliers);
                }
                if let Some(c) = energy_channel {
                    result.channels[c].push(step_energy);
                }
                if let Some(c) = momentum_channel {
                    let value = if status == status::OK {
                        momentum.last
                    } else {
                        f64::NAN
                    };
                    result.channels[c].push(value);
                }
            }
        }
        result.final_state = q;
        result.totals = vec![
            status,
            failed_step as f64,
            iterations as f64,
            constraint_residual,
            equation_residual,
        ];
        if energy_channel.is_some() {
            result.totals.extend(energy.totals());
        }
        if momentum_channel.is_some() {
            result.totals.extend(momentum.totals());
        }
        result
    }
}
