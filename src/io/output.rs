//! Result files. Everything is written into a staging directory beside the target and moved
//! into place only when every file is complete ([`super::output_target`]), so a failed run
//! leaves no half-written output.
//!
//! Files of `harbor simulate` (the arrays are streamed chunk by chunk, see
//! [`SimulationWriter`]), for any family:
//! - `summary.json`: run description, per-member totals (grouped as the family declares,
//!   e.g. `energy.stored_total`) and final states;
//! - `times.npy` (samples): sample times, t = 0 first;
//! - `trajectory.npy` (members × samples × state): states at the sample times;
//! - one `<channel>.npy` per declared channel (members × rows × channel shape); for linear
//!   PH `energy.npy` (members × windows × 4) and `outputs.npy` (members × records × s × m).

use std::path::{Path, PathBuf};

pub use super::output_target::write_atomically;

use std::io::Write;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ndarray::Array1;
use ndarray_npy::write_npy;
use serde_json::{Map, Value, json};

use super::npy_stream::NpyStream;
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

/// Streams a simulation into its files: the NPY arrays slab by slab as member chunks
/// arrive, the per-member totals and final states kept for `summary.json`.
pub struct SimulationWriter {
    dir: PathBuf,
    spec: RecordSpec,
    trajectory: NpyStream,
    channels: Vec<NpyStream>,
    /// Per member, the totals in the order of the spec.
    pub totals: Vec<Vec<f64>>,
    pub final_states: Vec<Vec<f64>>,
    /// (member, first non-finite step) of every member that did not stay finite.
    pub nonfinite: Vec<(usize, u64)>,
    progress: ProgressBar,
    started: Instant,
    shown: bool,
}

impl SimulationWriter {
    /// Creates the array files of `family`'s run in `dir`.
    pub fn create<F: Family>(dir: &Path, family: &F) -> Result<Self> {
        let members = family.member_count();
        let grid = family.grid();
        let spec = family.record_spec().clone();
        let times = grid.sample_times();
        let records = times.len() - 1;
        npy(dir, "times.npy", &Array1::from_vec(times.clone()))?;
        let progress = ProgressBar::with_draw_target(
            Some((members * grid.steps) as u64),
            ProgressDrawTarget::hidden(),
        );
        progress.set_style(
            ProgressStyle::with_template(
                "{bar:40} {percent:>3}% {human_pos}/{human_len} member-steps, {per_sec}, eta {eta}",
            )
            .expect("the template is valid"),
        );
        let trajectory = NpyStream::create(
            &dir.join("trajectory.npy"),
            &[members, times.len(), spec.state_width],
        )?;
        let channels = spec
            .channels
            .iter()
            .map(|c| {
                let mut shape = vec![members, c.rows(records)];
                shape.extend(&c.shape);
                NpyStream::create(&dir.join(format!("{}.npy", c.name)), &shape)
            })
            .collect::<Result<_>>()?;
        Ok(SimulationWriter {
            dir: dir.to_path_buf(),
            spec,
            trajectory,
            channels,
            totals: Vec::with_capacity(members),
            final_states: Vec::with_capacity(members),
            nonfinite: Vec::new(),
            progress,
            started: Instant::now(),
            shown: false,
        })
    }

    /// The names of the files this writer produces.
    pub fn file_names(&self) -> Vec<String> {
        let mut names = vec![
            "summary.json".to_string(),
            "times.npy".into(),
            "trajectory.npy".into(),
        ];
        names.extend(self.spec.channels.iter().map(|c| format!("{}.npy", c.name)));
        names
    }

    /// Writes `summary.json` and closes the arrays; returns the summary's path.
    pub fn finish<F: Family>(
        self,
        backend: &str,
        precision: &str,
        family: &F,
        seconds: f64,
    ) -> Result<PathBuf> {
        self.progress.finish_and_clear();
        self.trajectory.finish()?;
        for channel in self.channels {
            channel.finish()?;
        }
        let grid = family.grid();
        let members = self.totals.len();
        let mut summary = Map::new();
        summary.insert("harbor_version".into(), json!(env!("CARGO_PKG_VERSION")));
        summary.insert("backend".into(), json!(backend));
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
        let mut totals = Map::new();
        for (index, name) in self.spec.totals.iter().enumerate() {
            let column: Vec<f64> = self.totals.iter().map(|t| t[index]).collect();
            totals.insert((*name).into(), json!(column));
        }
        summary.insert(self.spec.totals_group.into(), Value::Object(totals));
        summary.insert("final_state".into(), json!(self.final_states));
        // Members that stopped being finite, with the first step after which they were not
        // (the first 1000 listed).
        let listed: Vec<Value> = self
            .nonfinite
            .iter()
            .take(1000)
            .map(|&(member, step)| json!({"member": member, "step": step}))
            .collect();
        summary.insert(
            "nonfinite".into(),
            json!({"members": self.nonfinite.len(), "first": listed}),
        );
        let mut files = Map::new();
        files.insert(
            "times.npy".into(),
            json!("sample times (samples), t = 0 first"),
        );
        files.insert(
            "trajectory.npy".into(),
            json!(format!(
                "states at the sample times (members × samples × {})",
                self.spec.state_width
            )),
        );
        for c in &self.spec.channels {
            files.insert(format!("{}.npy", c.name), json!(c.description));
        }
        summary.insert("files".into(), Value::Object(files));
        let path = self.dir.join("summary.json");
        write_json(&path, &Value::Object(summary))?;
        Ok(path)
    }
}

impl ResultSink for SimulationWriter {
    fn accept(&mut self, first: usize, members: Vec<MemberResult>) -> Result<()> {
        let trajectory: Vec<f64> = members
            .iter()
            .flat_map(|m| m.trajectory.iter().copied())
            .collect();
        self.trajectory.write_rows(first, &trajectory)?;
        for (index, stream) in self.channels.iter_mut().enumerate() {
            let values: Vec<f64> = members
                .iter()
                .flat_map(|m| m.channels[index].iter().copied())
                .collect();
            stream.write_rows(first, &values)?;
        }
        for (offset, member) in members.into_iter().enumerate() {
            if let Some(step) = member.nonfinite_step {
                self.nonfinite.push((first + offset, step));
            }
            self.totals.push(member.totals);
            self.final_states.push(member.final_state);
        }
        Ok(())
    }

    fn progress(&mut self, member_steps_done: u64) {
        if !self.shown && self.started.elapsed().as_secs_f64() > 1.0 {
            self.progress.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        self.progress.set_position(member_steps_done);
    }
}
