//! Result files. Everything is written into a staging directory beside the target and moved
//! into place only when every file is complete ([`super::output_target`]), so a failed run
//! leaves no half-written output.
//!
//! Files of `harbor simulate` (the arrays are streamed chunk by chunk, see
//! [`SimulationWriter`]), for any family:
//! - `summary.json`: run description; aggregate statistics (count, min, max, mean,
//!   quantiles) of every total and final-state component; for ensembles of at most
//!   [`SUMMARY_MEMBER_LIMIT`] members also the per-member totals (grouped as the family
//!   declares, e.g. `energy.stored_total`) and final states, as lists;
//! - `totals.npy` (members × totals), `final_state.npy` (members × state) and
//!   `nonfinite_step.npy` (members, int64: 0 while finite, else the first step after which
//!   the member was not): the per-member values, always;
//! - `times.npy` (samples): sample times, t = 0 first;
//! - `trajectory.npy` (members × samples × state): states at the sample times, unless
//!   `output.trajectory = false`;
//! - one `<channel>.npy` per declared channel (members × rows × channel shape); for linear
//!   PH `energy.npy` (members × windows × 4) and `outputs.npy` (members × records × s × m).

use std::path::{Path, PathBuf};

pub use super::output_target::write_atomically;

use std::io::Write;

use ndarray::Array1;
use ndarray_npy::write_npy;
use serde_json::{Map, Value, json};

use super::npy_stream::{Element, NpyStream, npy_file_bytes, read_rows};
use super::statistics::{ColumnStatistics, MAX_COLUMN_BYTES};
use crate::error::{Error, Result};
use crate::kernels::Family;
use crate::plan::{MemberResult, RecordSpec, ResultSink};

fn npy<A: ndarray_npy::WritableElement, D: ndarray::Dimension>(
    dir: &Path,
    name: &str,
    array: &ndarray::Array<A, D>,
) -> Result<()> {
    let path = dir.join(name);
    write_npy(&path, array).map_err(|e| Error::io(&path, std::io::Error::other(e.to_string())))
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json(path: &Path, value: &Value) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut writer = std::io::BufWriter::new(file);
    serde_json::to_writer_pretty(&mut writer, value)
        .map_err(|e| Error::io(path, std::io::Error::other(e)))?;
    writer.write_all(b"\n").map_err(|e| Error::io(path, e))?;
    writer.flush().map_err(|e| Error::io(path, e))
}

/// Ensembles up to this many members list their totals and final states in summary.json;
/// larger ones give aggregate statistics there and the per-member values in NPY files only.
pub const SUMMARY_MEMBER_LIMIT: usize = 4096;

/// Final-state components with statistics in summary.json (the first ones; all of them are
/// in final_state.npy).
pub const STATISTICS_STATE_COMPONENTS: usize = 64;

/// Bytes of summary.json per column of statistics (12 pretty-printed numbers with keys).
const SUMMARY_BYTES_PER_STATISTIC: u64 = 640;

/// Write buffer of each array file.
const NPY_BUFFER_BYTES: u64 = 1 << 20;

/// Members listed under `nonfinite.first` in summary.json.
const NONFINITE_LISTED: usize = 1000;

/// Members whose totals the CLI prints.
pub const REPORTED_MEMBERS: usize = 8;

/// The summary's size beyond its per-member lists (description, statistics, file notes).
const SUMMARY_BASE_BYTES: u64 = 64 << 10;

/// Bytes of summary.json per listed value (a full-precision number, separators, indent).
const SUMMARY_BYTES_PER_VALUE: u64 = 32;

/// Streams a simulation into its files: the NPY arrays slab by slab as member chunks
/// arrive, statistics of the totals and final states as they pass, and the first members'
/// values for the summary's lists and the printed report. Host memory does not grow with the
/// ensemble beyond [`SUMMARY_MEMBER_LIMIT`] members.
pub struct SimulationWriter {
    dir: PathBuf,
    spec: RecordSpec,
    members: usize,
    /// `None` when the run records no trajectory (`output.trajectory = false`).
    trajectory: Option<NpyStream>,
    channels: Vec<NpyStream>,
    totals_file: NpyStream,
    final_state_file: NpyStream,
    status_file: NpyStream,
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
    /// Told the member-steps done after every chunk (the CLI draws a bar).
    progress: Option<Box<dyn FnMut(u64) + Send>>,
}

/// Columns with statistics: every total and the first state components.
fn statistics_columns(spec: &RecordSpec) -> usize {
    spec.totals.len() + spec.state_width.min(STATISTICS_STATE_COMPONENTS)
}

/// The array files of a run: name and shape.
fn array_shapes<F: Family>(family: &F) -> Vec<(String, Vec<usize>)> {
    let members = family.member_count();
    let spec = family.record_spec();
    let records = family.grid().records();
    let mut shapes = vec![("times.npy".to_string(), vec![records + 1])];
    if spec.trajectory {
        shapes.push((
            "trajectory.npy".to_string(),
            vec![members, records + 1, spec.state_width],
        ));
    }
    for c in &spec.channels {
        let mut shape = vec![members, c.rows(records)];
        shape.extend(&c.shape);
        shapes.push((format!("{}.npy", c.name), shape));
    }
    shapes.push(("totals.npy".into(), vec![members, spec.totals.len()]));
    shapes.push(("final_state.npy".into(), vec![members, spec.state_width]));
    shapes.push(("nonfinite_step.npy".into(), vec![members]));
    shapes
}

impl SimulationWriter {
    /// Bytes the files of `family`'s run will take: every array exactly, the summary at
    /// most.
    pub fn planned_bytes<F: Family>(family: &F) -> u64 {
        let arrays: u64 = array_shapes(family)
            .iter()
            .map(|(_, shape)| npy_file_bytes(shape))
            .fold(0, u64::saturating_add);
        let members = family.member_count();
        let spec = family.record_spec();
        let listed = if members <= SUMMARY_MEMBER_LIMIT {
            (members * (spec.totals.len() + spec.state_width)) as u64
        } else {
            0
        };
        let nonfinite = (NONFINITE_LISTED.min(members) as u64) * 64;
        let statistics = SUMMARY_BYTES_PER_STATISTIC * statistics_columns(spec) as u64;
        arrays.saturating_add(
            SUMMARY_BASE_BYTES + SUMMARY_BYTES_PER_VALUE * listed + nonfinite + statistics,
        )
    }

    /// Host bytes the writer holds at most: the listed members' values, the statistics'
    /// bins, the files' write buffers.
    pub fn host_bytes<F: Family>(family: &F) -> u64 {
        let spec = family.record_spec();
        let listed = family.member_count().min(SUMMARY_MEMBER_LIMIT) as u64;
        let per_listed = 8 * (spec.totals.len() + spec.state_width) as u64 + 2 * 48;
        let statistics = (statistics_columns(spec) * MAX_COLUMN_BYTES) as u64;
        let files = array_shapes(family).len() as u64;
        listed * per_listed + statistics + files * NPY_BUFFER_BYTES
    }

    /// Creates the array files of `family`'s run in `dir`.
    pub fn create<F: Family>(dir: &Path, family: &F) -> Result<Self> {
        let members = family.member_count();
        let grid = family.grid();
        let spec = family.record_spec().clone();
        let times = grid.sample_times();
        npy(dir, "times.npy", &Array1::from_vec(times))?;
        let mut shapes = array_shapes(family).into_iter().skip(1);
        let mut next = |element| {
            let (name, shape) = shapes.next().expect("every array has a shape");
            NpyStream::create_of(&dir.join(name), &shape, element)
        };
        let trajectory = spec.trajectory.then(|| next(Element::F64)).transpose()?;
        let channels = spec
            .channels
            .iter()
            .map(|_| next(Element::F64))
            .collect::<Result<_>>()?;
        let totals_file = next(Element::F64)?;
        let final_state_file = next(Element::F64)?;
        let status_file = next(Element::I64)?;
        let listed = members.min(SUMMARY_MEMBER_LIMIT);
        Ok(SimulationWriter {
            dir: dir.to_path_buf(),
            members,
            trajectory,
            channels,
            totals_file,
            final_state_file,
            status_file,
            totals_statistics: ColumnStatistics::new(spec.totals.len()),
            state_statistics: ColumnStatistics::new(
                spec.state_width.min(STATISTICS_STATE_COMPONENTS),
            ),
            listed_totals: Vec::with_capacity(listed),
            listed_final_states: Vec::with_capacity(listed),
            nonfinite_count: 0,
            nonfinite_first: Vec::new(),
            received: 0,
            spec,
            progress: None,
        })
    }

    /// Calls `observer` with the member-steps done so far (of members × steps) whenever a
    /// chunk of results arrives.
    pub fn on_progress(&mut self, observer: impl FnMut(u64) + Send + 'static) {
        self.progress = Some(Box::new(observer));
    }

    /// The names of the files this writer produces.
    pub fn file_names(&self) -> Vec<String> {
        let mut names = vec!["summary.json".to_string(), "times.npy".into()];
        if self.spec.trajectory {
            names.push("trajectory.npy".into());
        }
        names.extend(self.spec.channels.iter().map(|c| format!("{}.npy", c.name)));
        names.extend(["totals.npy", "final_state.npy", "nonfinite_step.npy"].map(String::from));
        names
    }

    /// Members received so far.
    pub fn members_received(&self) -> usize {
        self.received
    }

    /// How many members did not stay finite, and the first of them as (member, step).
    pub fn nonfinite(&self) -> (usize, Option<(usize, u64)>) {
        (self.nonfinite_count, self.nonfinite_first.first().copied())
    }

    /// The totals of the first members (at most [`REPORTED_MEMBERS`]), for the report.
    pub fn first_totals(&self) -> &[Vec<f64>] {
        &self.listed_totals[..self.listed_totals.len().min(REPORTED_MEMBERS)]
    }

    /// Closes the arrays, completes the statistics from the per-member files, and writes
    /// `summary.json` (`engine`: what integrated the members on `backend`, see
    /// [`crate::backend::Backend::engine`]); returns the summary's path.
    pub fn finish<F: Family>(
        mut self,
        backend: &str,
        engine: &str,
        precision: &str,
        family: &F,
        seconds: f64,
    ) -> Result<PathBuf> {
        self.progress = None;
        if let Some(trajectory) = self.trajectory {
            trajectory.finish()?;
        }
        for channel in self.channels {
            channel.finish()?;
        }
        self.totals_file.finish()?;
        self.final_state_file.finish()?;
        self.status_file.finish()?;
        let (totals, state) = (self.spec.totals.len(), self.spec.state_width);
        let columns = state.min(STATISTICS_STATE_COMPONENTS);
        for (statistics, file, width, used) in [
            (&mut self.totals_statistics, "totals.npy", totals, totals),
            (
                &mut self.state_statistics,
                "final_state.npy",
                state,
                columns,
            ),
        ] {
            while width > 0 && statistics.end_pass() {
                read_rows(&self.dir.join(file), width, |row| {
                    statistics.observe(&row[..used]);
                })?;
            }
        }
        let grid = family.grid();
        let members = self.received;
        let mut summary = Map::new();
        summary.insert("harbor_version".into(), json!(env!("CARGO_PKG_VERSION")));
        summary.insert("backend".into(), json!(backend));
        summary.insert("engine".into(), json!(engine));
        summary.insert("precision".into(), json!(precision));
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
        summary.insert("seconds".into(), json!(seconds));
        summary.insert(
            "member_steps_per_second".into(),
            json!((members * grid.steps) as f64 / seconds.max(1e-9)),
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
        let mut files = Map::new();
        files.insert(
            "times.npy".into(),
            json!("sample times (samples), t = 0 first"),
        );
        if self.spec.trajectory {
            files.insert(
                "trajectory.npy".into(),
                json!(format!(
                    "states at the sample times (members × samples × {})",
                    self.spec.state_width
                )),
            );
        }
        for c in &self.spec.channels {
            files.insert(format!("{}.npy", c.name), json!(c.description));
        }
        files.insert(
            "totals.npy".into(),
            json!(format!(
                "per-member totals (members × {}: {})",
                self.spec.totals.len(),
                self.spec.totals.join(", ")
            )),
        );
        files.insert(
            "final_state.npy".into(),
            json!(format!(
                "per-member final states (members × {})",
                self.spec.state_width
            )),
        );
        files.insert(
            "nonfinite_step.npy".into(),
            json!("per member (int64): 0 while finite, else the first step after which it was not"),
        );
        summary.insert("files".into(), Value::Object(files));
        let path = self.dir.join("summary.json");
        write_json(&path, &Value::Object(summary))?;
        Ok(path)
    }
}

impl ResultSink for SimulationWriter {
    fn accept(&mut self, first: usize, members: Vec<MemberResult>) -> Result<()> {
        debug_assert_eq!(first, self.received);
        let rows = |select: &dyn Fn(&MemberResult) -> &[f64]| -> Vec<f64> {
            members
                .iter()
                .flat_map(|m| select(m).iter().copied())
                .collect()
        };
        if let Some(trajectory) = &mut self.trajectory {
            trajectory.write_rows(first, &rows(&|m| &m.trajectory))?;
        }
        for (index, stream) in self.channels.iter_mut().enumerate() {
            stream.write_rows(first, &rows(&|m| &m.channels[index]))?;
        }
        self.totals_file.write_rows(first, &rows(&|m| &m.totals))?;
        self.final_state_file
            .write_rows(first, &rows(&|m| &m.final_state))?;
        let status: Vec<i64> = members
            .iter()
            .map(|m| m.nonfinite_step.map_or(0, |s| s as i64))
            .collect();
        self.status_file.write_rows_i64(first, &status)?;
        let keep = if self.members <= SUMMARY_MEMBER_LIMIT {
            SUMMARY_MEMBER_LIMIT
        } else {
            REPORTED_MEMBERS
        };
        for (offset, member) in members.into_iter().enumerate() {
            if let Some(step) = member.nonfinite_step {
                self.nonfinite_count += 1;
                if self.nonfinite_first.len() < NONFINITE_LISTED {
                    self.nonfinite_first.push((first + offset, step));
                }
            }
            self.totals_statistics.observe(&member.totals);
            let columns = member.final_state.len().min(STATISTICS_STATE_COMPONENTS);
            self.state_statistics
                .observe(&member.final_state[..columns]);
            if self.listed_totals.len() < keep {
                self.listed_totals.push(member.totals);
                self.listed_final_states.push(member.final_state);
            }
        }
        self.received = first + status.len();
        Ok(())
    }

    fn progress(&mut self, member_steps_done: u64) {
        if let Some(observer) = &mut self.progress {
            observer(member_steps_done);
        }
    }
}
