//! The plan: plain data describing one run — scheme coefficients, step size, the members of
//! the ensemble, the inputs sampled at every stage time, and the recording cadence. Backends
//! execute a plan; nothing here needs an adapter.

use nalgebra::DVector;

pub mod ensemble;
pub mod operators;

pub use ensemble::{DrawnEnsemble, Ensemble, EnsembleSpec};

use crate::error::{Error, Result};
use crate::model::{LinearPh, Signal};
use crate::results::{MemberResult, Results};
use crate::tableau::Scheme;

/// One member of an ensemble: its own system and initial state.
#[derive(Debug, Clone)]
pub struct Member {
    pub system: LinearPh,
    pub x0: DVector<f64>,
}

/// Inputs shared by all members, sampled on the host at the stage times t_k + c_i h.
/// Layout: `values[(k · s + i) · m + channel]`.
#[derive(Debug, Clone)]
pub struct StageInputs {
    pub stages: usize,
    pub channels: usize,
    pub values: Vec<f64>,
}

impl StageInputs {
    /// Samples u_i^k = u((k + c_i) h) for k = 0…steps−1.
    pub fn sample(signals: &[Signal], c: &[f64], h: f64, steps: usize) -> Self {
        let (stages, channels) = (c.len(), signals.len());
        let mut values = Vec::with_capacity(steps * stages * channels);
        for k in 0..steps {
            for &ci in c {
                let t = (k as f64 + ci) * h;
                values.extend(signals.iter().map(|s| s.value(t)));
            }
        }
        StageInputs {
            stages,
            channels,
            values,
        }
    }

    /// The s·m stage inputs of step k, stage-major.
    pub fn step(&self, k: usize) -> &[f64] {
        let width = self.stages * self.channels;
        &self.values[k * width..(k + 1) * width]
    }
}

/// Everything a backend needs to run an ensemble.
#[derive(Debug, Clone)]
pub struct Plan {
    pub scheme: Scheme,
    pub h: f64,
    pub steps: usize,
    /// Size of the position block q for partitioned schemes (x = (q, p)); `None` for
    /// monolithic schemes.
    pub split: Option<usize>,
    pub ensemble: Ensemble,
    pub inputs: StageInputs,
    /// Record a trajectory sample, the discrete output and the summed energies every this
    /// many steps (the final step is always recorded).
    pub record_every: usize,
}

/// Number of steps N = t_end / h, which must be a whole number (to 1e-9 relative).
pub fn step_count(h: f64, t_end: f64) -> Result<usize> {
    if !(h.is_finite() && h > 0.0) {
        return Err(Error::invalid(
            "scheme.h",
            format!("must be a finite number > 0, got {h}"),
        ));
    }
    if !(t_end.is_finite() && t_end > 0.0) {
        return Err(Error::invalid(
            "scheme.t_end",
            format!("must be a finite number > 0, got {t_end}"),
        ));
    }
    let ratio = t_end / h;
    let steps = ratio.round();
    if (ratio - steps).abs() > 1e-9 * ratio.max(1.0) || steps < 1.0 {
        return Err(Error::invalid(
            "scheme.h",
            format!("t_end / h must be a whole number of steps: {t_end} / {h} = {ratio}"),
        ));
    }
    if steps > u32::MAX as f64 {
        return Err(Error::invalid(
            "scheme.h",
            format!("{steps} steps exceed the supported 2³² − 1"),
        ));
    }
    Ok(steps as usize)
}

impl Plan {
    /// Assembles a plan, checking that every member fits the scheme (canonical form for the
    /// Lobatto pair, matching input count) and that the signals cover the run.
    pub fn new(
        scheme: Scheme,
        h: f64,
        t_end: f64,
        members: impl Into<Ensemble>,
        signals: &[Signal],
        record_every: usize,
    ) -> Result<Self> {
        let ensemble = members.into();
        let steps = step_count(h, t_end)?;
        if record_every == 0 {
            return Err(Error::invalid("output.every", "must be ≥ 1, got 0"));
        }
        if ensemble.is_empty() {
            return Err(Error::invalid("ensemble", "has no members"));
        }
        // Drawn ensembles keep the nominal's shapes and structure, so the nominal stands
        // for all of them here; explicit lists are checked member by member.
        let checked: Vec<&Member> = match &ensemble {
            Ensemble::List(members) => members.iter().collect(),
            Ensemble::Drawn(d) => vec![&d.nominal],
        };
        let mut split = None;
        for (index, member) in checked.iter().enumerate() {
            let prefix = if checked.len() == 1 {
                "system".to_string()
            } else {
                format!("member[{index}]")
            };
            if member.system.inputs() != signals.len() {
                return Err(Error::invalid(
                    "input",
                    format!(
                        "{prefix}.B has {} column(s) but {} input signal(s) are given",
                        member.system.inputs(),
                        signals.len()
                    ),
                ));
            }
            if member.x0.len() != member.system.states() {
                return Err(Error::invalid(
                    format!("{prefix}.x0"),
                    format!(
                        "has length {}, the system has n = {}",
                        member.x0.len(),
                        member.system.states()
                    ),
                ));
            }
            if scheme.is_partitioned() {
                let half = member.system.canonical_split(&prefix)?;
                if split.is_some_and(|s| s != half) {
                    return Err(Error::invalid(
                        format!("{prefix}.J"),
                        "members differ in state size",
                    ));
                }
                split = Some(half);
            }
        }
        for (i, s) in signals.iter().enumerate() {
            s.check_covers(&format!("input[{i}]"), t_end)?;
        }
        let inputs = StageInputs::sample(signals, &scheme.c, h, steps);
        Ok(Plan {
            scheme,
            h,
            steps,
            split,
            ensemble,
            inputs,
            record_every,
        })
    }

    /// Step indices (1-based, counting completed steps) at which samples are recorded:
    /// every `record_every` steps and the last step.
    pub fn record_points(&self) -> Vec<usize> {
        let mut points: Vec<usize> = (1..=self.steps)
            .filter(|k| k % self.record_every == 0)
            .collect();
        if points.last() != Some(&self.steps) {
            points.push(self.steps);
        }
        points
    }

    /// Times of the trajectory samples: t = 0 and every recorded step.
    pub fn sample_times(&self) -> Vec<f64> {
        std::iter::once(0.0)
            .chain(self.record_points().into_iter().map(|k| k as f64 * self.h))
            .collect()
    }

    /// Wraps per-member results with the run description.
    pub fn results(&self, backend: &str, precision: &str, members: Vec<MemberResult>) -> Results {
        let first = &self.ensemble.prototype().system;
        Results {
            backend: backend.into(),
            precision: precision.into(),
            scheme: self.scheme.label(),
            h: self.h,
            steps: self.steps,
            states: first.states(),
            stages: self.scheme.stages,
            inputs: first.inputs(),
            sample_times: self.sample_times(),
            members,
        }
    }
}
