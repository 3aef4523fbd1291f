//! The summary of a simulation, whatever holds its arrays (the files of `harbor simulate`,
//! [`super::output::SimulationWriter`], or memory, [`super::simulation_arrays`]): the run's
//! description, exact statistics (count, non-finite count, min, max, mean, quantiles) of
//! every total and of the first final-state components, the per-member totals and final
//! states of ensembles of at most [`SUMMARY_MEMBER_LIMIT`] members, and the members that
//! became non-finite. It is summary.json without its list of files.
//!
//! Members are observed as they arrive. The statistics then complete from the totals and
//! final states in memory where a summary keeps them, within a bound set by its maker
//! ([`RunSummary::keeping_rows`]), or where the caller holds them all
//! ([`RunSummary::finish_in_memory`]); otherwise their later passes replay the rows from
//! wherever they were stored. So memory does not grow with the ensemble beyond
//! [`SUMMARY_MEMBER_LIMIT`] members and the kept rows' bound.

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

/// Most bytes of the statistics' copy of their columns' values (the finite values they
/// select among) when a run's rows are all in memory: beyond it, the statistics replay the
/// rows pass by pass instead, with no copy.
const IN_MEMORY_STATISTICS_BYTES: usize = 64 << 20;

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
    /// The members' rows, where the summary keeps them.
    kept: Option<KeptRows>,
}

/// The totals and final states of the members received, kept in the buffers they arrived
/// in (moved, not copied) while those take at most `limit` bytes.
#[derive(Debug)]
struct KeptRows {
    totals: Vec<Vec<f64>>,
    final_states: Vec<Vec<f64>>,
    members: usize,
    bytes: usize,
    limit: usize,
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
            kept: None,
        }
    }

    /// This summary, keeping the members' totals and final states handed to
    /// [`RunSummary::keep`] while they take at most `limit` bytes, for its statistics to
    /// complete from memory rather than by replaying the stored rows.
    pub fn keeping_rows(mut self, limit: usize) -> Self {
        self.kept = Some(KeptRows {
            totals: Vec::new(),
            final_states: Vec::new(),
            members: 0,
            bytes: 0,
            limit,
        });
        self
    }

    /// Keeps `members`' totals and final states, the members observed last, while the kept
    /// rows stay within the limit of [`RunSummary::keeping_rows`]; past it, lets go of every
    /// kept row, and the statistics replay the stored rows instead.
    pub fn keep(&mut self, members: ResultBlock) {
        let Some(kept) = &mut self.kept else {
            return;
        };
        debug_assert_eq!(kept.members + members.len(), self.received);
        let bytes = 8 * (members.totals.capacity() + members.final_state.capacity());
        if kept.bytes + bytes > kept.limit {
            self.kept = None;
            return;
        }
        kept.members += members.len();
        kept.bytes += bytes;
        kept.totals.push(members.totals);
        kept.final_states.push(members.final_state);
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

    /// The summary of `family`'s run as a JSON object: the statistics are completed from
    /// the kept rows where the summary kept every member's, else by replaying the stored
    /// rows (`replay(rows, batch)` calls `batch` with consecutive members' totals or final
    /// states, whole rows one after the other, every member once in member order).
    pub fn finish<F: Family>(
        mut self,
        family: &F,
        labels: &RunLabels,
        replay: impl FnMut(SummaryRows, &mut dyn FnMut(&[f64])) -> Result<()>,
    ) -> Result<Map<String, Value>> {
        self.complete_statistics(replay)?;
        Ok(self.into_json(family, labels))
    }

    /// Completes the statistics from the kept rows where the summary kept every member's,
    /// else by replaying the stored rows ([`RunSummary::finish`]'s `replay`).
    fn complete_statistics(
        &mut self,
        mut replay: impl FnMut(SummaryRows, &mut dyn FnMut(&[f64])) -> Result<()>,
    ) -> Result<()> {
        let kept = self.kept.take();
        match kept.filter(|kept| kept.members == self.received) {
            Some(kept) => self.complete(&slices(&kept.totals), &slices(&kept.final_states)),
            None => {
                let (totals, state) = (self.spec.totals.len(), self.spec.state_width);
                for (statistics, rows, width) in [
                    (&mut self.totals_statistics, SummaryRows::Totals, totals),
                    (&mut self.state_statistics, SummaryRows::FinalStates, state),
                ] {
                    while width > 0 && statistics.end_pass() {
                        replay(rows, &mut |batch| statistics.observe_rows(batch, width))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// [`RunSummary::finish`] of a run whose members' totals and final states are all in
    /// memory: `totals` and `final_states` hold every member's row, in member order. The
    /// statistics complete at once where copying their columns' values takes at most
    /// 64 MiB, else pass by pass over the rows.
    pub fn finish_in_memory<F: Family>(
        mut self,
        family: &F,
        labels: &RunLabels,
        totals: &[f64],
        final_states: &[f64],
    ) -> Result<Map<String, Value>> {
        self.complete_from_rows(totals, final_states, IN_MEMORY_STATISTICS_BYTES)?;
        Ok(self.into_json(family, labels))
    }

    /// Completes the statistics from every member's rows in memory: at once where the
    /// copy of the statistics' columns takes at most `copy_limit` bytes, else pass by pass.
    fn complete_from_rows(
        &mut self,
        totals: &[f64],
        final_states: &[f64],
        copy_limit: usize,
    ) -> Result<()> {
        let columns = statistics_columns(&self.spec);
        if self.received.saturating_mul(8 * columns) <= copy_limit {
            self.complete(&[totals], &[final_states]);
            return Ok(());
        }
        self.complete_statistics(|rows, batch| {
            batch(match rows {
                SummaryRows::Totals => totals,
                SummaryRows::FinalStates => final_states,
            });
            Ok(())
        })
    }

    /// Completes the statistics from every member's totals and final states in memory
    /// (batches of whole rows, in member order).
    fn complete(&mut self, totals: &[&[f64]], final_states: &[&[f64]]) {
        let (totals_width, state_width) = (self.spec.totals.len(), self.spec.state_width);
        let (totals_statistics, state_statistics) =
            (&mut self.totals_statistics, &mut self.state_statistics);
        rayon::join(
            || totals_statistics.complete(totals, totals_width),
            || state_statistics.complete(final_states, state_width),
        );
    }

    /// The summary as a JSON object, its statistics complete.
    fn into_json<F: Family>(self, family: &F, labels: &RunLabels) -> Map<String, Value> {
        let columns = self.spec.state_width.min(STATISTICS_STATE_COMPONENTS);
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
        summary
    }
}

/// The buffers as slices.
fn slices(buffers: &[Vec<f64>]) -> Vec<&[f64]> {
    buffers.iter().map(Vec::as_slice).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{MemberResult, RecordSpec};

    /// Two totals and a final state of three values per member: spread values, a NaN and
    /// an infinity now and then, and zeros of both signs.
    fn members(count: usize) -> Vec<MemberResult> {
        let value = |i: usize, k: usize| match (i * 7 + k) % 97 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => -0.0,
            3 => 0.0,
            r => ((i * 31 + k * 17) % 1009) as f64 * 1e-3 - 0.4 + r as f64 * 1e-9,
        };
        (0..count)
            .map(|i| MemberResult {
                final_state: (0..3).map(|k| value(i, k)).collect(),
                trajectory: Vec::new(),
                channels: Vec::new(),
                totals: (3..5).map(|k| value(i, k)).collect(),
                nonfinite_step: None,
            })
            .collect()
    }

    fn spec() -> RecordSpec {
        RecordSpec {
            state_width: 3,
            trajectory: false,
            channels: Vec::new(),
            totals: vec!["a", "b"],
            totals_group: "energy",
        }
    }

    /// Every statistic of `summary`, numbers as their bits (so that −0 and +0 differ).
    fn statistics_bits(summary: &RunSummary) -> Vec<String> {
        let columns = [
            (&summary.totals_statistics, 2),
            (&summary.state_statistics, 3),
        ];
        let mut bits = Vec::new();
        for (statistics, count) in columns {
            for c in 0..count {
                let mut values = vec![statistics.summary(c)];
                while let Some(value) = values.pop() {
                    match value {
                        Value::Object(map) => values.extend(map.into_iter().map(|(_, v)| v)),
                        Value::Number(n) => {
                            bits.push(format!("{:x}", n.as_f64().unwrap().to_bits()))
                        }
                        other => bits.push(other.to_string()),
                    }
                }
            }
        }
        bits
    }

    /// A summary that keeps every member's rows completes its statistics without replaying
    /// them, to the bits the replays give; one whose rows outgrow its limit replays them,
    /// to the same bits.
    #[test]
    fn kept_rows_give_the_statistics_of_the_replays() {
        let (spec, total) = (spec(), 5000);
        let blocks: Vec<ResultBlock> = members(total)
            .chunks(700)
            .map(|members| ResultBlock::from_members(&spec, 0, members.to_vec()))
            .collect();
        let rows = |blocks: &[ResultBlock], which: SummaryRows| -> Vec<f64> {
            blocks
                .iter()
                .flat_map(|block| match which {
                    SummaryRows::Totals => block.totals.clone(),
                    SummaryRows::FinalStates => block.final_state.clone(),
                })
                .collect()
        };
        let replayed = |summary: &mut RunSummary| {
            let mut replays = 0;
            summary
                .complete_statistics(|which, batch| {
                    replays += 1;
                    batch(&rows(&blocks, which));
                    Ok(())
                })
                .unwrap();
            replays
        };
        let mut replaying = RunSummary::new(&spec, total);
        let mut keeping = RunSummary::new(&spec, total).keeping_rows(usize::MAX);
        let mut outgrown = RunSummary::new(&spec, total).keeping_rows(100 << 10);
        let mut first = 0;
        for block in &blocks {
            for summary in [&mut replaying, &mut keeping, &mut outgrown] {
                summary.observe(first, block);
                summary.keep(block.clone());
            }
            first += block.len();
        }
        assert!(replayed(&mut replaying) > 0);
        assert_eq!(replayed(&mut keeping), 0, "kept rows are not replayed");
        assert!(replayed(&mut outgrown) > 0, "outgrown rows are replayed");
        let want = statistics_bits(&replaying);
        assert_eq!(statistics_bits(&keeping), want);
        assert_eq!(statistics_bits(&outgrown), want);
        // Rows all in memory (Python's arrays): at once, or pass by pass past the limit.
        let (totals, final_states) = (
            rows(&blocks, SummaryRows::Totals),
            rows(&blocks, SummaryRows::FinalStates),
        );
        for copy_limit in [usize::MAX, 0] {
            let mut in_memory = RunSummary::new(&spec, total);
            let mut first = 0;
            for block in &blocks {
                in_memory.observe(first, block);
                first += block.len();
            }
            in_memory
                .complete_from_rows(&totals, &final_states, copy_limit)
                .unwrap();
            assert_eq!(statistics_bits(&in_memory), want, "copy limit {copy_limit}");
        }
    }
}
