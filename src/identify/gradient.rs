//! Cost and gradient of every candidate of a [`GradientPlan`] on a backend: the kernels'
//! raw sweeps, pulled back to (J, R, Q, B, x0) on the host as each chunk arrives, with the
//! regularisation added.

use nalgebra::DVector;
use rayon::prelude::*;

use super::regularization::regularize;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::kernels::Family;
use crate::linear_ph::pullback_workspace::PullbackWorkspace;
use crate::linear_ph::{GradientPlan, LinearPhMember, Parameters};
use crate::plan::{MemoryBudget, ResultBlock, ResultSink};
use crate::shard::MemberRange;

/// The cost of one candidate and its gradient, each part in its structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub cost: f64,
    pub gradient: Parameters,
}

impl Evaluation {
    /// A rejected trial point of an optimiser: cost +∞ and a zero gradient.
    fn rejected(plan: &GradientPlan) -> Self {
        Evaluation {
            cost: f64::INFINITY,
            gradient: Parameters::zeros(plan.model.states(), plan.model.inputs_count()),
        }
    }
}

/// The parameters w of a member.
pub fn parameters(member: &LinearPhMember) -> Parameters {
    Parameters {
        j: member.system.j.clone(),
        r: member.system.r.clone(),
        q: member.system.q.clone(),
        b: member.system.b.clone(),
        x0: member.x0.clone(),
    }
}

/// Cost and gradient of a candidate from its raw sweep result
/// ([cost, λ_0, Ḡ_Δ, Ḡ_C], `linear_ph::gradient_plan::raw_width`).
pub fn finish(plan: &GradientPlan, member: &LinearPhMember, raw: &[f64]) -> Result<Evaluation> {
    finish_in(&mut PullbackWorkspace::default(), plan, member, raw)
}

/// As [`finish`], pulling back in `workspace`'s buffers (reused from candidate to candidate).
pub fn finish_in(
    workspace: &mut PullbackWorkspace,
    plan: &GradientPlan,
    member: &LinearPhMember,
    raw: &[f64],
) -> Result<Evaluation> {
    let (n, m, s) = (
        plan.model.states(),
        plan.model.inputs_count(),
        plan.model.scheme.stages,
    );
    let p = n + s * m;
    let (cost, rest) = raw
        .split_first()
        .expect("a raw result starts with the cost");
    let (lambda0, rest) = rest.split_at(n);
    let (g_delta, g_output) = rest.split_at(n * p);
    assert_eq!(g_output.len(), m * n, "a raw result ends with Ḡ_C (m × n)");
    let system = workspace.system_gradient(
        &plan.model.scheme,
        None,
        plan.grid().h,
        &member.system,
        g_delta,
        g_output,
    )?;
    let mut evaluation = Evaluation {
        cost: *cost,
        gradient: Parameters {
            j: system.j,
            r: system.r,
            q: system.q,
            b: system.b,
            x0: DVector::from_column_slice(lambda0),
        },
    };
    regularize(&plan.regularization, member, &mut evaluation);
    Ok(evaluation)
}

/// Refuses an evaluation whose data term is finite but whose cost or gradient is not once
/// the regularisation (λ/2) ‖w − w_ref‖² is added: λ (`cost.regularization`) times the
/// squared distance overflows f64, and the cost would be written as null.
fn refuse_overflowing_regularization(
    plan: &GradientPlan,
    data_cost: f64,
    evaluation: &Evaluation,
) -> Result<()> {
    let gradient = &evaluation.gradient;
    let finite = evaluation.cost.is_finite()
        && [&gradient.j, &gradient.r, &gradient.q, &gradient.b]
            .iter()
            .all(|m| m.iter().all(|v| v.is_finite()))
        && gradient.x0.iter().all(|v| v.is_finite());
    if finite || !data_cost.is_finite() {
        return Ok(());
    }
    Err(Error::invalid(
        "cost.regularization",
        format!(
            "λ = {:e} makes the cost or its gradient overflow (cost {:e}; the data term alone is {data_cost:e}): the penalty (λ/2) ‖w − w_ref‖² exceeds the largest f64; lower cost.regularization",
            plan.regularization.weight, evaluation.cost
        ),
    ))
}

/// Collects evaluations chunk by chunk, pulling each chunk back in parallel.
struct Collector<'a> {
    plan: &'a GradientPlan,
    /// The plan's index of the first candidate run.
    first: usize,
    evaluations: Vec<Evaluation>,
    /// Whether a candidate whose trajectory overflows gets cost +∞ (an optimiser's trial)
    /// rather than failing the batch.
    overflow_is_infinite: bool,
    /// Told the member-steps done (of candidates × steps); its error stops the run.
    progress: &'a mut dyn FnMut(u64) -> Result<()>,
}

impl ResultSink for Collector<'_> {
    fn accept(&mut self, first: usize, members: ResultBlock) -> Result<()> {
        let plan = self.plan;
        let finished: Vec<Result<Evaluation>> = (0..members.len())
            .into_par_iter()
            .map_init(PullbackWorkspace::default, |workspace, offset| {
                let index = self.first + first + offset;
                let nonfinite_step = members.nonfinite_step[offset];
                if nonfinite_step.is_some() && self.overflow_is_infinite {
                    return Ok(Evaluation::rejected(plan));
                }
                if let Some(step) = nonfinite_step {
                    return Err(Error::Numerical {
                        context: format!("candidate {index}"),
                        problem: format!(
                            "its state, cost or adjoint is not finite from step {step} on (of {})",
                            plan.grid().steps
                        ),
                    });
                }
                let final_state = members.final_state(offset);
                let member = plan.model.ensemble.member_borrowed(index)?;
                let evaluation = finish_in(workspace, plan, &member, final_state)?;
                let data_cost = final_state[0];
                match refuse_overflowing_regularization(plan, data_cost, &evaluation) {
                    // A trial whose penalty overflows is rejected like one whose
                    // trajectory does.
                    Err(_) if self.overflow_is_infinite => Ok(Evaluation::rejected(plan)),
                    refusal => refusal.map(|()| evaluation),
                }
            })
            .collect();
        for evaluation in finished {
            self.evaluations.push(evaluation?);
        }
        Ok(())
    }

    fn progress(&mut self, member_steps_done: u64) -> Result<()> {
        (self.progress)(member_steps_done)
    }
}

/// Cost and gradient of every candidate of `plan` on `backend`, in candidate order; a
/// candidate whose trajectory overflows fails the call.
pub fn evaluate(
    backend: &Backend,
    plan: &GradientPlan,
    budget: &MemoryBudget,
) -> Result<Vec<Evaluation>> {
    collect(backend, plan, budget, false, &mut |_| Ok(()))
}

/// As [`evaluate`], for the candidates `range` of `plan` only (a shard of its batch), in
/// candidate order: each the same evaluation as in the whole batch.
pub fn evaluate_range(
    backend: &Backend,
    plan: &GradientPlan,
    budget: &MemoryBudget,
    range: std::ops::Range<usize>,
) -> Result<Vec<Evaluation>> {
    collect_range(backend, plan, budget, false, &mut |_| Ok(()), range)
}

/// As [`evaluate`], telling `progress` the member-steps done as the backend reports them
/// (of candidates × steps, the forward and backward sweeps counted as halves); an error it
/// returns stops the run (a caller's interrupt) and is returned.
pub fn evaluate_reporting(
    backend: &Backend,
    plan: &GradientPlan,
    budget: &MemoryBudget,
    progress: &mut dyn FnMut(u64) -> Result<()>,
) -> Result<Vec<Evaluation>> {
    collect(backend, plan, budget, false, progress)
}

/// As [`evaluate`], but a candidate whose trajectory overflows gets cost +∞ and a zero
/// gradient: trial points of an optimiser, which rejects them.
pub fn evaluate_trials(
    backend: &Backend,
    plan: &GradientPlan,
    budget: &MemoryBudget,
) -> Result<Vec<Evaluation>> {
    collect(backend, plan, budget, true, &mut |_| Ok(()))
}

fn collect(
    backend: &Backend,
    plan: &GradientPlan,
    budget: &MemoryBudget,
    overflow_is_infinite: bool,
    progress: &mut dyn FnMut(u64) -> Result<()>,
) -> Result<Vec<Evaluation>> {
    let all = 0..plan.member_count();
    collect_range(backend, plan, budget, overflow_is_infinite, progress, all)
}

fn collect_range(
    backend: &Backend,
    plan: &GradientPlan,
    budget: &MemoryBudget,
    overflow_is_infinite: bool,
    progress: &mut dyn FnMut(u64) -> Result<()>,
    range: std::ops::Range<usize>,
) -> Result<Vec<Evaluation>> {
    // The gradients are collected in memory: refuse a batch whose gradients alone exceed
    // the budget before any work.
    let (n, m) = (plan.model.states(), plan.model.inputs_count());
    let per_candidate = 8 * (3 * n as u128 * n as u128 + (n * m + n + 1) as u128) + 5 * 48;
    let candidates = MemberRange::new(plan, range)?;
    let needed =
        u64::try_from(candidates.member_count() as u128 * per_candidate).unwrap_or(u64::MAX);
    if needed > budget.bytes() {
        return Err(Error::invalid(
            "candidates.members",
            format!(
                "the gradients of {} candidate(s) (n = {n}, m = {m}) take {}, more than the memory budget of {} (--memory-budget); evaluate fewer candidates per run",
                candidates.member_count(),
                crate::plan::format_bytes(needed),
                crate::plan::format_bytes(budget.bytes())
            ),
        ));
    }
    let mut collector = Collector {
        plan,
        first: candidates.first(),
        evaluations: Vec::with_capacity(candidates.member_count()),
        overflow_is_infinite,
        progress,
    };
    backend.run_into_within(&candidates, budget, &mut collector)?;
    Ok(collector.evaluations)
}
