//! The summary of a simulation, whatever holds its arrays (the files of `harbor simulate`,
//! [`super::output::SimulationWriter`], or memory, [`super::simulation_arrays`]): the run's
//! description, exact statistics (count, non-finite count, min, max, mean, quantiles) of
//! every total and of the first final-state components, the per-member totals and final
//! states of ensembles of at most [`SUMMARY_MEMBER_LIMIT`] members, and the members that
//! became non-finite. It is summary.json without its list of files.
//!
//! Members are observed as they arrive; the statistics' later passes replay the totals and
//! final states from wherever they were stored, so memory does not grow with the ensemble
//! beyond [`SUMMARY_MEMBER_LIMIT`] members.

use serde_json::{Map, Value, json};

use super::statistics::ColumnStatistics;
use crate::error::Result;
use crate::kernels::Family;
use crate::plan::{RecordSpec, ResultBlock};

/// Ensembles up to this many members list their totals and final states in the summary;
/// larger ones give aggregate statistics there and the per-member values in arrays only.
pub const SUMMARY_MEMBER_LIMIT: usize = 4096;

/// Final-state components with statistics in the summary (the first ones; all of them are
/// in the final-state array).
pub const STATISTICS_STATE_COMPONENTS: usize = 64;

/// Members listed under `nonfinite.first`.
pub const NONFINITE_LISTED: usize = 1000;

/// Members whose totals a report prints.
pub const REPORTED_MEMBERS: usize = 8;

/// Columns with statistics: every total and the first state components.
pub fn statistics_columns(spec: &RecordSpec) -> usize {
    spec.totals.len() + spec.state_width.min(STATISTICS_STATE_COMPONENTS)
}

/// The per-member rows that the statistics' later passes replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryRows {
    /// One row of totals per member (`RecordSpec::totals`).
    Totals,
    /// One final state per member (`RecordSpec::state_width` values).
    FinalStates,
}

/// What ran, for the summary: the backend's label (`cpu`, `gpu: <adapter>`), the engine
/// that integrated the members (`fast`, `reference`, `twin`, `kernel`), the precision and
/// the wall time.
#[derive(Debug, Clone, Copy)]
pub struct RunLabels<'a> {
    pub backend: &'a str,
    pub engine: &'a str,
    pub precision: &'a str,
    pub seconds: f64,
}

/// A simulation's summary, built as members arrive.
#[derive(Debug)]
pub struct RunSummary {
    spec: RecordSpec,
    members: usize,
    totals_statistics: ColumnStatistics,
    state_statistics: ColumnStatistics,
    /// Totals and final states of the first members: every member up to
    /// [`SUMMARY_MEMBER_LIMIT`], else the first [`REPORTED_MEMBERS`].
    listed_totals: Vec<Vec<f64>>,
    listed_final_states: Vec<Vec<f64>>,
    /// Members that did not stay finite, and the first [`NONFINITE_LISTED`] of them as
    /// (member, first non-finite step).
    nonfinite_count: usize,
    nonfinite_first: Vec<(usize, u64)>,
    received: usize,
}

impl RunSummary {
    /// An empty summary of a run of `members` members recording `spec`.
    pub fn new(spec: &RecordSpec, members: usize) -> Self {
        let listed = members.min(SUMMARY_MEMBER_LIMIT);
        RunSummary {
            spec: spec.clone(),
            members,
            totals_statistics: ColumnStatistics::new(spec.totals.len()),
            state_statistics: ColumnStatistics::new(
                spec.state_width.min(STATISTICS_STATE_COMPONENTS),
            ),
            listed_totals: Vec::with_capacity(listed),
            listed_final_states: Vec::with_capacity(listed),
            nonfinite_count: 0,
            nonfinite_first: Vec::new(),
            received: 0,
        }
    }

    /// Observes members `first .. first + members.len()`, which arrive in member order.
    pub fn observe(&mut self, first: usize, members: &ResultBlock) {
        debug_assert_eq!(first, self.received);
        let keep = if self.members <= SUMMARY_MEMBER_LIMIT {
            SUMMARY_MEMBER_LIMIT
        } else {
            REPORTED_MEMBERS
        };
        for (offset, status) in members.nonfinite_step.iter().enumerate() {
            if let Some(step) = *status {
                self.nonfinite_count += 1;
                if self.nonfinite_first.len() < NONFINITE_LISTED {
                    self.nonfinite_first.push((first + offset, step));
                }
            }
        }
        let (totals, state) = (self.spec.totals.len(), self.spec.state_width);
        self.totals_statistics.observe_rows(&members.totals, totals);
        self.state_statistics
            .observe_rows(&members.final_state, state);
        for offset in 0..members
            .len()
            .min(keep.saturating_sub(self.listed_totals.len()))
        {
            self.listed_totals.push(members.totals(offset).to_vec());
            self.listed_final_states
                .push(members.final_state(offset).to_vec());
        }
        self.received = first + members.len();
    }

    /// Members observed so far.
    pub fn members_received(&self) -> usize {
        self.received
    }

    /// How many members did not stay finite, and the first of them as (member, step).
    pub fn nonfinite(&self) -> (usize, Option<(usize, u64)>) {
        (self.nonfinite_count, self.nonfinite_first.first().copied())
    }

    /// `None` when every member stayed finite, else what happened, for the refusal or the
    /// warning a front end builds on it: "3 of 512 member(s) became non-finite (NaN or
    /// ±inf; first: member 7 after step 120)".
    pub fn nonfinite_description(&self) -> Option<String> {
        let (count, first) = self.nonfinite();
        let (member, step) = first?;
        Some(format!(
            "{count} of {} member(s) became non-finite (NaN or ±inf; first: member {member} after step {step})",
            self.received
        ))
    }

    /// The totals of the first members (at most [`REPORTED_MEMBERS`]), for a report.
    pub fn first_totals(&self) -> &[Vec<f64>] {
        &self.listed_totals[..self.listed_totals.len().min(REPORTED_MEMBERS)]
    }

    /// The summary of `family`'s run as a JSON object: the statistics are completed by
    /// replaying the stored rows (`replay(rows, batch)` calls `batch` with consecutive
    /// members' totals or final states, whole rows one after the other, every member once
    /// in member order).
    pub fn finish<F: Family>(
        mut self,
        family: &F,
        labels: &RunLabels,
        mut replay: impl FnMut(SummaryRows, &mut dyn FnMut(&[f64])) -> Result<()>,
    ) -> Result<Map<String, Value>> {
        let (totals, state) = (self.spec.totals.len(), self.spec.state_width);
        let columns = state.min(STATISTICS_STATE_COMPONENTS);
        for (statistics, rows, width) in [
            (&mut self.totals_statistics, SummaryRows::Totals, totals),
            (&mut self.state_statistics, SummaryRows::FinalStates, state),
        ] {
            while width > 0 && statistics.end_pass() {
                replay(rows, &mut |batch| statistics.observe_rows(batch, width))?;
            }
        }
        let grid = family.grid();
        let members = self.received;
        let mut summary = Map::new();
        summary.insert("harbor_version".into(), json!(env!("CARGO_PKG_VERSION")));
        summary.insert("backend".into(), json!(labels.backend));
        summary.insert("engine".into(), json!(labels.engine));
        summary.insert("precision".into(), json!(labels.precision));
        summary.insert("model".into(), json!(family.name()));
        let mut description = family.describe();
        if let Some(scheme) = description.remove("scheme") {
            summary.insert("scheme".into(), scheme);
        }
        summary.insert("members".into(), json!(members));
        summary.insert("steps".into(), json!(grid.steps));
        summary.insert("h".into(), json!(grid.h));
        summary.insert("t_end".into(), json!(grid.t_end()));
        summary.extend(description);
        summary.insert("record_every".into(), json!(grid.record_every));
        summary.insert("seconds".into(), json!(labels.seconds));
        summary.insert(
            "member_steps_per_second".into(),
            json!((members * grid.steps) as f64 / labels.seconds.max(1e-9)),
        );
        let group = self.spec.totals_group;
        if members <= SUMMARY_MEMBER_LIMIT {
            let mut totals = Map::new();
            for (index, name) in self.spec.totals.iter().enumerate() {
                let column: Vec<f64> = self.listed_totals.iter().map(|t| t[index]).collect();
                totals.insert((*name).into(), json!(column));
            }
            summary.insert(group.into(), Value::Object(totals));
            summary.insert("final_state".into(), json!(self.listed_final_states));
        }
        let mut totals_statistics = Map::new();
        for (index, name) in self.spec.totals.iter().enumerate() {
            totals_statistics.insert((*name).into(), self.totals_statistics.summary(index));
        }
        let state_statistics: Vec<Value> = (0..columns)
            .map(|index| self.state_statistics.summary(index))
            .collect();
        summary.insert(
            "statistics".into(),
            json!({
                "listed_members_up_to": SUMMARY_MEMBER_LIMIT,
                "final_state_components": columns,
                group: totals_statistics,
                "final_state": state_statistics,
            }),
        );
        // Members that stopped being finite, with the first step after which they were not.
        let listed: Vec<Value> = self
            .nonfinite_first
            .iter()
            .map(|&(member, step)| json!({"member": member, "step": step}))
            .collect();
        summary.insert(
            "nonfinite".into(),
            json!({"members": self.nonfinite_count, "first": listed}),
        );
        Ok(summary)
    }
}
