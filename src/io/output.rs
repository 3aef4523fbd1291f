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

use super::npy_stream::{Element, NpyStream, npy_file_bytes, read_row_batches};
use super::run_arrays::run_arrays;
use super::statistics::MAX_COLUMN_BYTES;
use super::summary::{RunLabels, RunSummary, SummaryRows, statistics_columns};
use crate::error::{Error, Result};
use crate::kernels::Family;
use crate::plan::{RecordSpec, ResultBlock, ResultSink};

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

pub use super::summary::{
    NONFINITE_LISTED, REPORTED_MEMBERS, STATISTICS_STATE_COMPONENTS, SUMMARY_MEMBER_LIMIT,
};

/// Bytes of summary.json per column of statistics (12 pretty-printed numbers with keys).
const SUMMARY_BYTES_PER_STATISTIC: u64 = 640;

/// Write buffer of each array file.
const NPY_BUFFER_BYTES: u64 = 1 << 20;

/// Bytes of rows the statistics' later passes read back at a time (whole rows, at least
/// one): enough that a batch's columns are fed side by side, few enough that the buffer's
/// fresh pages cost little.
const REPLAY_BATCH_BYTES: usize = 256 << 10;

/// Rows of `width` values in a replay batch of about [`REPLAY_BATCH_BYTES`].
fn replay_rows(width: usize) -> usize {
    (REPLAY_BATCH_BYTES / (8 * width.max(1))).max(1)
}

/// Most bytes of the members' totals and final states a writer keeps in memory: within
/// it the summary's statistics complete from memory, beyond it by reading the files back.
/// Kept rows take fresh pages while the members run, replays read the files after them;
/// here the kept rows cost less up to a few MiB (2¹⁸ members of n = 2 were even, 2²⁰
/// slower by 4 %). The statistics copy the finite values they select among: as much again.
const KEPT_ROWS_BYTES: usize = 4 << 20;

/// The summary's size beyond its per-member lists (description, statistics, file notes).
const SUMMARY_BASE_BYTES: u64 = 64 << 10;

/// Bytes of summary.json per listed value (a full-precision number, separators, indent).
const SUMMARY_BYTES_PER_VALUE: u64 = 32;

/// Streams a simulation into its files: the NPY arrays slab by slab as member chunks
/// arrive, statistics of the totals and final states as they pass, and the first members'
/// values for the summary's lists and the printed report. Host memory does not grow with the
/// ensemble beyond [`SUMMARY_MEMBER_LIMIT`] members and the rows kept for the statistics
/// (at most 4 MiB).
pub struct SimulationWriter {
    dir: PathBuf,
    spec: RecordSpec,
    /// `None` when the run records no trajectory (`output.trajectory = false`).
    trajectory: Option<NpyStream>,
    channels: Vec<NpyStream>,
    totals_file: NpyStream,
    final_state_file: NpyStream,
    status_file: NpyStream,
    summary: RunSummary,
    /// Told the member-steps done after every chunk (the CLI draws a bar).
    progress: Option<Box<dyn FnMut(u64) + Send>>,
}

/// The array files of a run: file name and shape.
fn array_shapes<F: Family>(family: &F) -> Vec<(String, Vec<usize>)> {
    run_arrays(family)
        .into_iter()
        .map(|array| (format!("{}.npy", array.name), array.shape))
        .collect()
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
    /// bins, the files' write buffers, and the kept rows with the statistics' copy of their
    /// finite values.
    pub fn host_bytes<F: Family>(family: &F) -> u64 {
        let spec = family.record_spec();
        let members = family.member_count();
        let listed = members.min(SUMMARY_MEMBER_LIMIT) as u64;
        let row_bytes = 8 * (spec.totals.len() + spec.state_width);
        let per_listed = row_bytes as u64 + 2 * 48;
        let statistics = (statistics_columns(spec) * MAX_COLUMN_BYTES) as u64;
        let files = array_shapes(family).len() as u64;
        let kept = members.saturating_mul(row_bytes).min(KEPT_ROWS_BYTES) as u64;
        listed * per_listed + statistics + files * NPY_BUFFER_BYTES + 2 * kept
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
        Ok(SimulationWriter {
            dir: dir.to_path_buf(),
            trajectory,
            channels,
            totals_file,
            final_state_file,
            status_file,
            summary: RunSummary::new(&spec, members).keeping_rows(KEPT_ROWS_BYTES),
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
        self.summary.members_received()
    }

    /// How many members did not stay finite, and the first of them as (member, step).
    pub fn nonfinite(&self) -> (usize, Option<(usize, u64)>) {
        self.summary.nonfinite()
    }

    /// What happened when members did not stay finite
    /// ([`RunSummary::nonfinite_description`]); `None` when all did.
    pub fn nonfinite_description(&self) -> Option<String> {
        self.summary.nonfinite_description()
    }

    /// The totals of the first members (at most [`REPORTED_MEMBERS`]), for the report.
    pub fn first_totals(&self) -> &[Vec<f64>] {
        self.summary.first_totals()
    }

    /// Closes the arrays, completes the statistics from the per-member files, and writes
    /// `summary.json` (the [`RunSummary`] and the list of files; `labels.engine`: what
    /// integrated the members, see [`crate::backend::Backend::engine`]); returns the
    /// summary's path.
    pub fn finish<F: Family>(self, labels: &RunLabels, family: &F) -> Result<PathBuf> {
        let SimulationWriter {
            dir,
            spec,
            trajectory,
            channels,
            totals_file,
            final_state_file,
            status_file,
            summary,
            progress: _,
        } = self;
        let streams = (trajectory.into_iter())
            .chain(channels)
            .chain([totals_file, final_state_file, status_file])
            .collect();
        // The statistics complete (from the kept rows, or by replaying the flushed files)
        // while the files go to disk.
        let (totals, state) = (spec.totals.len(), spec.state_width);
        let mut summary = NpyStream::finish_all(streams, || {
            summary.finish(family, labels, |rows, row| match rows {
                SummaryRows::Totals => {
                    read_row_batches(&dir.join("totals.npy"), totals, replay_rows(totals), row)
                }
                SummaryRows::FinalStates => {
                    let rows = replay_rows(state);
                    read_row_batches(&dir.join("final_state.npy"), state, rows, row)
                }
            })
        })?;
        let mut files = Map::new();
        files.insert(
            "times.npy".into(),
            json!("sample times (samples), t = 0 first"),
        );
        if spec.trajectory {
            files.insert(
                "trajectory.npy".into(),
                json!(format!(
                    "states at the sample times (members × samples × {})",
                    spec.state_width
                )),
            );
        }
        for c in &spec.channels {
            files.insert(format!("{}.npy", c.name), json!(c.description));
        }
        files.insert(
            "totals.npy".into(),
            json!(format!(
                "per-member totals (members × {}: {})",
                spec.totals.len(),
                spec.totals.join(", ")
            )),
        );
        files.insert(
            "final_state.npy".into(),
            json!(format!(
                "per-member final states (members × {})",
                spec.state_width
            )),
        );
        files.insert(
            "nonfinite_step.npy".into(),
            json!("per member (int64): 0 while finite, else the first step after which it was not"),
        );
        summary.insert("files".into(), Value::Object(files));
        let path = dir.join("summary.json");
        write_json(&path, &Value::Object(summary))?;
        Ok(path)
    }
}

impl ResultSink for SimulationWriter {
    /// Writes the members' rows to the arrays while the summary observes them, side by side
    /// on two cores.
    fn accept(&mut self, first: usize, members: ResultBlock) -> Result<()> {
        debug_assert_eq!(first, self.summary.members_received());
        let SimulationWriter {
            trajectory,
            channels,
            totals_file,
            final_state_file,
            status_file,
            summary,
            ..
        } = self;
        let write = || -> Result<()> {
            if let Some(trajectory) = trajectory {
                trajectory.write_rows(first, &members.trajectory)?;
            }
            for (stream, values) in channels.iter_mut().zip(&members.channels) {
                stream.write_rows(first, values)?;
            }
            totals_file.write_rows(first, &members.totals)?;
            final_state_file.write_rows(first, &members.final_state)?;
            let status: Vec<i64> = members
                .nonfinite_step
                .iter()
                .map(|&step| nonfinite_step_entry(step))
                .collect();
            status_file.write_rows_i64(first, &status)
        };
        let (written, ()) = rayon::join(write, || summary.observe(first, &members));
        summary.keep(members);
        written
    }

    fn progress(&mut self, member_steps_done: u64) -> Result<()> {
        if let Some(observer) = &mut self.progress {
            observer(member_steps_done);
        }
        Ok(())
    }

    fn as_send(&mut self) -> Option<&mut (dyn ResultSink + Send)> {
        Some(self)
    }
}

/// A member's entry of `nonfinite_step.npy` from its status: 0 while finite, else the
/// first step after which it was not.
pub fn nonfinite_step_entry(nonfinite_step: Option<u64>) -> i64 {
    nonfinite_step.map_or(0, |step| i64::try_from(step).unwrap_or(i64::MAX))
}
