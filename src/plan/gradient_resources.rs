//! The resources of a gradient or identification problem, estimated from its sizes alone,
//! before any model, stream or data is built: host memory against the memory budget and
//! the memory available, and work (floating-point operations) against a work limit. A
//! problem that does not fit is refused naming the setting to change, with the estimate
//! and the limit. The estimate is computed in f64, so no size overflows it.
//!
//! With n states of the candidates, n_ref of the data's reference model, m inputs,
//! s stages, N steps, p = n + s m and checkpoints every c = ⌈√N⌉ steps (bytes of f64):
//!
//! ```text
//!   a model at work       8 (3 n² + 2 (s n)² + 2 n p + 2 m n)   J, R, Q; the stage matrix and
//!                                                               its factors; Δ, Ḡ_Δ; C, Ḡ_C
//!   its checkpoints       8 n (N / c + c)
//!   an evaluation         8 (3 n² + n m + n + 1)                 cost and gradient
//!   the shared stream     8 N (2 s m + m + 1)                    inputs at the stage times,
//!                                                               data, weights
//!   the data              16 (N + 1) m                           as read and as planned
//! ```
//!
//! and the work of one evaluation
//!
//! ```text
//!   N (6 n p + 2 n² + 4 m n) + 4 (s n)³ + 4 (s n)² p
//! ```
//!
//! (the forward sweep and its recomputation from the checkpoints, the adjoint sweep and the
//! accumulated cotangents; the stage factorisation and the pull-back to (J, R, Q, B)), at
//! least [`EVALUATION_SETUP_WORK`]. Data simulated from a reference model of n_ref states
//! add, once,
//!
//! ```text
//!   N (2 (1 + 2 s) n_ref² + 2 (s n_ref)²) + 4 (s n_ref)³ + 4 (s n_ref)² n_ref + 20 n_ref³
//! ```
//!
//! (per step L x₀, L xᵢ and Q xᵢ, and the solve with the stage factors; the stage matrix and
//! its factorisation; the structure checks' symmetric eigendecompositions of R and Q), and
//! the candidate model built once from the config its structure checks, 20 n³. On this
//! project's 2-core CPU the dense f64 paths run at 1–3 × 10⁹ such operations per second:
//! a 1022-state reference (9 × 10¹⁰) takes ~40 s, one evaluation of a 1000-state candidate
//! (5.6 × 10¹⁰) ~45 s.

use super::budget::{MemoryBudget, format_bytes};
use crate::error::{Error, Result};

/// The default limit on a problem's work: 10¹⁴ floating-point operations, about half an
/// hour on a GPU that evaluates the README's identifications in seconds, and hours on a
/// CPU. `HARBOR_WORK_LIMIT` sets another.
pub const DEFAULT_WORK_LIMIT: f64 = 1e14;

/// The least work one evaluation counts for, in operations: its set-up (drawing the
/// candidate, building its operators, allocating) takes about 10 µs per member on a CPU core
/// (a profile of one-step runs), some 10⁵ operations' time, however small the model.
pub const EVALUATION_SETUP_WORK: f64 = 1e5;

/// Work above which a problem prints its plan before it starts (some seconds of work).
pub const PLAN_WORK: f64 = 1e10;

/// Host memory above which a problem prints its plan before it starts.
pub const PLAN_BYTES: f64 = (1u64 << 30) as f64;

/// One evaluation (cost and gradient) this large (n ≈ 600) makes the state count, not the
/// number of candidates held, the setting to lower.
const LARGE_EVALUATION_BYTES: f64 = 8.0 * 1024.0 * 1024.0;

/// A size as the user set it: the setting's name and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub field: String,
    pub value: usize,
}

impl Setting {
    pub fn new(field: impl Into<String>, value: usize) -> Self {
        Setting {
            field: field.into(),
            value,
        }
    }
}

/// The optimiser's share of an identification: keep starts, each making up to
/// `max_iterations` iterations of `trials` (+ 1 refinement) evaluations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DescentSizes {
    pub keep: usize,
    pub max_iterations: usize,
    /// Evaluations per start and iteration: the trials and the refinement.
    pub evaluations_per_iteration: usize,
    /// Successive halving every this many iterations (0: never).
    pub prune_every: usize,
    /// The total evaluations allowed, Monte-Carlo included.
    pub evaluation_budget: Option<usize>,
}

impl DescentSizes {
    /// Iterations summed over the starts: M I without pruning; with halving every k
    /// iterations at most M k (1 + ½ + ¼ + …) + I ≤ 2 M k + I.
    fn start_iterations(&self) -> f64 {
        let (keep, iterations) = (self.keep as f64, self.max_iterations as f64);
        let unpruned = keep * iterations;
        if self.prune_every == 0 {
            unpruned
        } else {
            unpruned.min(2.0 * keep * self.prune_every as f64 + iterations)
        }
    }
}

/// The sizes a gradient or identification problem is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProblemSizes {
    /// n of the candidates (`candidate.states`, `model.order`, …).
    pub states: Setting,
    /// n_ref of the model the data are simulated from (`data.reference.states`, …).
    pub reference_states: Option<Setting>,
    /// m.
    pub inputs: usize,
    /// s.
    pub stages: usize,
    /// N = t_end / h.
    pub steps: usize,
    /// The candidates evaluated (`candidates.members`, `monte_carlo.candidates`).
    pub candidates: Setting,
    /// Candidates evaluated in one batch at most (their evaluations are held together).
    pub batch: usize,
    /// The descent of an identification.
    pub descent: Option<DescentSizes>,
    /// Grids of N steps planned: 1, or 2 with cross-validation.
    pub grids: usize,
    /// Threads evaluating candidates side by side.
    pub workers: usize,
}

/// One part of an estimate, and the setting that scales it.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub field: String,
    pub what: String,
    pub amount: f64,
}

/// What a problem needs: host memory (bytes) and work (floating-point operations).
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemEstimate {
    pub memory: Vec<Term>,
    /// Evaluations of the problem.
    pub evaluations: f64,
    /// Floating-point operations of one evaluation.
    pub evaluation_work: f64,
    /// Operations done once: simulating the data from the reference model and checking the
    /// structure of the models built from the config.
    pub once_work: f64,
    /// What the work done once is for.
    pub once_what: String,
    /// Total operations.
    pub work: f64,
    /// The setting that most lifts the work above its usual size.
    pub work_field: String,
}

/// Of settings with the ratio of their value to its usual size (the README's runs: 10⁴
/// candidates, 16 starts, 100 iterations, 4 trials, N = 10³, n = 10; squared where the
/// term grows with n²), the one furthest above it: the setting a refusal names.
fn blame(factors: &[(&str, f64)]) -> String {
    factors
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or_else(String::new, |(field, _)| field.to_string())
}

/// Bytes of one model at work: 8 (3 n² + 2 (s n)² + 2 n p + 2 m n).
fn model_bytes(n: f64, m: f64, s: f64) -> f64 {
    let p = n + s * m;
    8.0 * (3.0 * n * n + 2.0 * (s * n).powi(2) + 2.0 * n * p + 2.0 * m * n)
}

/// Operations of the structure checks of a model built from the config: the symmetric
/// eigendecompositions of R and Q, 20 n³.
fn structure_check_work(n: f64) -> f64 {
    20.0 * n.powi(3)
}

/// Operations of simulating N steps of data from a reference model of n states:
/// N (2 (1 + 2 s) n² + 2 (s n)²) + 4 (s n)³ + 4 (s n)² n + 20 n³.
fn reference_work(n: f64, s: f64, steps: f64) -> f64 {
    steps * (2.0 * (1.0 + 2.0 * s) * n * n + 2.0 * (s * n).powi(2))
        + 4.0 * (s * n).powi(3)
        + 4.0 * (s * n).powi(2) * n
        + structure_check_work(n)
}

/// Bytes of one evaluation: 8 (3 n² + n m + n + 1).
fn evaluation_bytes(n: f64, m: f64) -> f64 {
    8.0 * (3.0 * n * n + n * m + n + 1.0)
}

/// `bytes` as messages show it; beyond 2⁶⁴ in powers of ten.
pub fn format_estimate(bytes: f64) -> String {
    if bytes < u64::MAX as f64 {
        format_bytes(bytes as u64)
    } else {
        format!("{bytes:.2e} B")
    }
}

impl ProblemSizes {
    /// The estimate of the module docs.
    pub fn estimate(&self) -> ProblemEstimate {
        let n = self.states.value as f64;
        let (m, s, steps) = (self.inputs as f64, self.stages as f64, self.steps as f64);
        let p = n + s * m;
        let workers = self.workers.clamp(1, self.batch.max(1)) as f64;
        let checkpoint = steps.sqrt().ceil().max(1.0);
        // Evaluations held together are blamed on their count, unless one alone is large.
        let large_evaluation = evaluation_bytes(n, m) > LARGE_EVALUATION_BYTES;
        let mut memory = vec![
            Term {
                field: self.states.field.clone(),
                what: format!(
                    "{workers} candidate model(s) at work with n = {} states, their checkpoints",
                    self.states.value
                ),
                amount: workers
                    * (model_bytes(n, m, s) + 8.0 * n * (steps / checkpoint + checkpoint)),
            },
            Term {
                field: "scheme.t_end".into(),
                what: format!(
                    "the inputs, data and weights of N = {} step(s) (scheme.t_end / scheme.h)",
                    self.steps
                ),
                amount: self.grids as f64
                    * (8.0 * steps * (2.0 * s * m + m + 1.0) + 16.0 * (steps + 1.0) * m),
            },
            Term {
                field: if large_evaluation {
                    self.states.field.clone()
                } else {
                    self.candidates.field.clone()
                },
                what: format!(
                    "the costs and gradients of {} candidate(s) (n = {}, m = {}) held at once",
                    self.batch, self.states.value, self.inputs
                ),
                amount: self.batch as f64 * evaluation_bytes(n, m),
            },
        ];
        if let Some(reference) = &self.reference_states {
            let n_ref = reference.value as f64;
            memory.push(Term {
                field: reference.field.clone(),
                what: format!(
                    "the reference model with n = {} states that makes the data",
                    reference.value
                ),
                amount: model_bytes(n_ref, m, s),
            });
        }
        if let Some(descent) = &self.descent {
            let trials = descent.keep as f64 * descent.evaluations_per_iteration as f64;
            memory.push(Term {
                field: if large_evaluation {
                    self.states.field.clone()
                } else {
                    blame(&[
                        ("monte_carlo.keep", descent.keep as f64 / 16.0),
                        (
                            "optimizer.trials",
                            descent.evaluations_per_iteration as f64 / 5.0,
                        ),
                    ])
                },
                what: format!(
                    "the trial points of {} start(s) (monte_carlo.keep) × {} evaluation(s) per iteration (optimizer.trials + refinement)",
                    descent.keep, descent.evaluations_per_iteration
                ),
                amount: trials * (evaluation_bytes(n, m) + model_bytes(n, m, 0.0)),
            });
        }
        let mut once_work = structure_check_work(n);
        let mut once_what = format!(
            "the checks of the candidate model (n = {})",
            self.states.value
        );
        let mut reference_field = None;
        if let Some(reference) = &self.reference_states {
            let n_ref = reference.value as f64;
            once_work += reference_work(n_ref, s, steps);
            once_what = format!(
                "the data simulated from the reference model (n = {}) and the model checks",
                reference.value
            );
            reference_field = Some((reference.field.clone(), (n_ref / 10.0).powi(2)));
        }
        let evaluation_work = (steps * (6.0 * n * p + 2.0 * n * n + 4.0 * m * n)
            + 4.0 * (s * n).powi(3)
            + 4.0 * (s * n).powi(2) * p)
            .max(EVALUATION_SETUP_WORK);
        let mut evaluations = self.candidates.value as f64;
        // How far each setting lifts the work above its usual size ([`blame`]).
        let mut factors = vec![
            (self.candidates.field.clone(), evaluations / 1e4),
            ("scheme.t_end".to_string(), steps / 1e3),
            (self.states.field.clone(), (n / 10.0).powi(2)),
        ];
        if let Some(descent) = &self.descent {
            let mut descent_evaluations =
                descent.start_iterations() * descent.evaluations_per_iteration as f64;
            if let Some(total) = descent.evaluation_budget {
                descent_evaluations = descent_evaluations.min(total as f64 - evaluations);
            }
            evaluations += descent_evaluations.max(0.0);
            factors.extend([
                ("monte_carlo.keep".to_string(), descent.keep as f64 / 16.0),
                (
                    "optimizer.max_iterations".to_string(),
                    descent.max_iterations as f64 / 100.0,
                ),
                (
                    "optimizer.trials".to_string(),
                    descent.evaluations_per_iteration as f64 / 5.0,
                ),
            ]);
        }
        let evaluations_work = evaluations * evaluation_work;
        // The data's reference model is blamed when its simulation is most of the work.
        let work_field = match reference_field {
            Some((field, _)) if once_work > evaluations_work => field,
            _ => {
                let factors: Vec<(&str, f64)> =
                    factors.iter().map(|(f, r)| (f.as_str(), *r)).collect();
                blame(&factors)
            }
        };
        ProblemEstimate {
            memory,
            evaluations,
            evaluation_work,
            once_work,
            once_what,
            work: evaluations_work + once_work,
            work_field,
        }
    }
}

impl ProblemEstimate {
    /// Host bytes of the whole problem.
    pub fn bytes(&self) -> f64 {
        self.memory.iter().map(|t| t.amount).sum()
    }

    /// The largest memory term.
    fn largest(&self) -> &Term {
        self.memory
            .iter()
            .max_by(|a, b| a.amount.total_cmp(&b.amount))
            .expect("an estimate has terms")
    }

    /// Refuses a problem whose memory exceeds `budget` or the `available` memory, or whose
    /// work exceeds `work_limit` operations.
    pub fn check(
        &self,
        budget: &MemoryBudget,
        available: Option<u64>,
        work_limit: f64,
    ) -> Result<()> {
        let bytes = self.bytes();
        let largest = self.largest();
        let limits = [
            Some((
                budget.bytes(),
                "the memory budget",
                "raise --memory-budget (or HARBOR_MEMORY_BUDGET)",
            )),
            available.map(|a| (a, "the memory available", "free memory")),
        ];
        for (limit, name, raise) in limits.into_iter().flatten() {
            if bytes > limit as f64 {
                return Err(Error::invalid(
                    largest.field.clone(),
                    format!(
                        "the problem needs about {} of host memory, more than {name} of {}; most of it ({}) for {}: lower {} or {raise}",
                        format_estimate(bytes),
                        format_bytes(limit),
                        format_estimate(largest.amount),
                        largest.what,
                        largest.field
                    ),
                ));
            }
        }
        if self.work > work_limit {
            return Err(Error::invalid(
                self.work_field.clone(),
                format!(
                    "the problem needs about {:.2e} floating-point operations ({}), more than the work limit of {work_limit:.0e} (HARBOR_WORK_LIMIT); lower {}",
                    self.work,
                    self.work_parts(),
                    self.work_field
                ),
            ));
        }
        Ok(())
    }

    /// Where the work goes: the evaluations, and what is done once.
    fn work_parts(&self) -> String {
        let evaluations = if self.evaluations < 1e9 {
            format!("{:.0}", self.evaluations)
        } else {
            format!("{:.3e}", self.evaluations)
        };
        format!(
            "{evaluations} evaluation(s) of {:.2e} each, and {:.2e} once for {}",
            self.evaluation_work, self.once_work, self.once_what
        )
    }

    /// Whether the problem is big enough to print its plan before it starts: more than
    /// [`PLAN_WORK`] operations or [`PLAN_BYTES`] of host memory.
    pub fn is_large(&self) -> bool {
        self.work > PLAN_WORK || self.bytes() > PLAN_BYTES
    }

    /// The plan as one line: the work, where it goes, and the host memory.
    pub fn describe(&self) -> String {
        format!(
            "about {:.2e} floating-point operations ({}), {} of host memory",
            self.work,
            self.work_parts(),
            format_estimate(self.bytes())
        )
    }
}

/// `limit` as a work limit: a finite number of floating-point operations > 0; `field`
/// names the setting in errors.
pub fn check_work_limit(field: &str, limit: f64) -> Result<f64> {
    if limit.is_finite() && limit > 0.0 {
        return Ok(limit);
    }
    Err(work_limit_error(field, limit))
}

/// A work limit written as text (`1e15`), checked as [`check_work_limit`] does.
pub fn parse_work_limit(field: &str, text: &str) -> Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(limit) => check_work_limit(field, limit),
        Err(_) => Err(work_limit_error(field, format!("{text:?}"))),
    }
}

fn work_limit_error(field: &str, got: impl std::fmt::Display) -> Error {
    Error::invalid(
        field,
        format!("must be a finite number of operations > 0 (e.g. 1e15), got {got}"),
    )
}

#[cfg(test)]
#[path = "gradient_resources_tests.rs"]
mod tests;
