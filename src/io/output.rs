//! Result files. Everything is written into a staging directory beside the target and moved
//! into place only when every file is complete, so a failed run leaves no half-written
//! output.
//!
//! Files of `harbor simulate` (the arrays are streamed chunk by chunk, see
//! [`SimulationWriter`]):
//! - `summary.json`: run description, per-member energy totals and final states;
//! - `times.npy` (samples): sample times, t = 0 first;
//! - `trajectory.npy` (members × samples × n): states at the sample times;
//! - `energy.npy` (members × windows × 4): stored, supplied, port and dissipated energy
//!   summed over each recording window (window w ends at `times[w + 1]`);
//! - `outputs.npy` (members × records × s × m): discrete outputs y^k of the recorded steps.

use std::path::{Path, PathBuf};

use std::io::Write;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ndarray::Array1;
use ndarray_npy::write_npy;
use serde::Serialize;
use serde_json::json;

use super::npy_stream::NpyStream;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::results::{EnergyTotals, MemberResult, ResultSink};

/// Runs `write` on a fresh staging directory next to `out`, then moves every file it wrote
/// into `out` (created if missing). On error the staging directory is removed and `out` is
/// untouched.
pub fn write_atomically(out: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    if out.exists() && !out.is_dir() {
        return Err(Error::invalid(
            "--out",
            format!("{} exists and is not a directory", out.display()),
        ));
    }
    let staging = tempfile::Builder::new()
        .prefix(".harbor-staging-")
        .tempdir_in(&parent)
        .map_err(|e| Error::io(&parent, e))?;
    write(staging.path())?;
    if !out.exists() {
        let staged = staging.keep();
        return std::fs::rename(&staged, out).map_err(|e| Error::io(out, e));
    }
    let entries = std::fs::read_dir(staging.path()).map_err(|e| Error::io(staging.path(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(staging.path(), e))?;
        let target = out.join(entry.file_name());
        std::fs::rename(entry.path(), &target).map_err(|e| Error::io(&target, e))?;
    }
    Ok(())
}

fn npy<A: ndarray_npy::WritableElement, D: ndarray::Dimension>(
    dir: &Path,
    name: &str,
    array: &ndarray::Array<A, D>,
) -> Result<()> {
    let path = dir.join(name);
    write_npy(&path, array).map_err(|e| Error::io(&path, std::io::Error::other(e.to_string())))
}

/// `summary.json`.
#[derive(Debug, Serialize)]
struct Summary<'a> {
    harbor_version: &'static str,
    backend: &'a str,
    precision: &'a str,
    scheme: SchemeSummary,
    members: usize,
    steps: usize,
    h: f64,
    t_end: f64,
    states: usize,
    inputs: usize,
    record_every: usize,
    seconds: f64,
    member_steps_per_second: f64,
    energy: EnergySummary<'a>,
    final_state: &'a [Vec<f64>],
    files: serde_json::Value,
}

#[derive(Debug, Serialize)]
struct SchemeSummary {
    label: String,
    family: &'static str,
    stages: usize,
    order: usize,
}

#[derive(Debug, Serialize)]
struct EnergySummary<'a> {
    stored_total: &'a [f64],
    supplied_total: &'a [f64],
    port_total: &'a [f64],
    dissipated_total: &'a [f64],
    max_abs_residual: &'a [f64],
}

/// Streams a simulation into its files: the NPY arrays slab by slab as member chunks
/// arrive, the per-member totals and final states kept for `summary.json`.
pub struct SimulationWriter {
    dir: PathBuf,
    trajectory: NpyStream,
    energy: NpyStream,
    outputs: NpyStream,
    states: usize,
    row_outputs: usize,
    /// Per member: stored, supplied, port, dissipated, max residual.
    pub totals: Vec<EnergyTotals>,
    pub final_states: Vec<Vec<f64>>,
    progress: ProgressBar,
    started: Instant,
    shown: bool,
}

impl SimulationWriter {
    /// Creates the array files for `plan` in `dir`.
    pub fn create(dir: &Path, plan: &Plan) -> Result<Self> {
        let members = plan.ensemble.len();
        let prototype = &plan.ensemble.prototype().system;
        let (n, m, s) = (prototype.states(), prototype.inputs(), plan.scheme.stages);
        let times = plan.sample_times();
        let windows = times.len() - 1;
        npy(dir, "times.npy", &Array1::from_vec(times.clone()))?;
        let progress = ProgressBar::with_draw_target(
            Some((members * plan.steps) as u64),
            ProgressDrawTarget::hidden(),
        );
        progress.set_style(
            ProgressStyle::with_template(
                "{bar:40} {percent:>3}% {human_pos}/{human_len} member-steps, {per_sec}, eta {eta}",
            )
            .expect("the template is valid"),
        );
        Ok(SimulationWriter {
            dir: dir.to_path_buf(),
            trajectory: NpyStream::create(&dir.join("trajectory.npy"), &[members, times.len(), n])?,
            energy: NpyStream::create(&dir.join("energy.npy"), &[members, windows, 4])?,
            outputs: NpyStream::create(&dir.join("outputs.npy"), &[members, windows, s, m])?,
            states: n,
            row_outputs: windows * s * m,
            totals: Vec::with_capacity(members),
            final_states: Vec::with_capacity(members),
            progress,
            started: Instant::now(),
            shown: false,
        })
    }

    /// Writes `summary.json` and closes the arrays; returns the summary's path.
    pub fn finish(
        self,
        backend: &str,
        precision: &str,
        plan: &Plan,
        seconds: f64,
    ) -> Result<PathBuf> {
        self.progress.finish_and_clear();
        self.trajectory.finish()?;
        self.energy.finish()?;
        self.outputs.finish()?;
        let column =
            |f: fn(&EnergyTotals) -> f64| -> Vec<f64> { self.totals.iter().map(f).collect() };
        let (stored, supplied, port, dissipated, residual) = (
            column(|t| t.stored),
            column(|t| t.supplied),
            column(|t| t.port),
            column(|t| t.dissipated),
            column(|t| t.max_abs_residual),
        );
        let members = self.totals.len();
        let summary = Summary {
            harbor_version: env!("CARGO_PKG_VERSION"),
            backend,
            precision,
            scheme: SchemeSummary {
                label: plan.scheme.label(),
                family: plan.scheme.family.name(),
                stages: plan.scheme.stages,
                order: plan.scheme.order,
            },
            members,
            steps: plan.steps,
            h: plan.h,
            t_end: plan.h * plan.steps as f64,
            states: self.states,
            inputs: plan.ensemble.prototype().system.inputs(),
            record_every: plan.record_every,
            seconds,
            member_steps_per_second: (members * plan.steps) as f64 / seconds.max(1e-9),
            energy: EnergySummary {
                stored_total: &stored,
                supplied_total: &supplied,
                port_total: &port,
                dissipated_total: &dissipated,
                max_abs_residual: &residual,
            },
            final_state: &self.final_states,
            files: json!({
                "times.npy": "sample times (samples), t = 0 first",
                "trajectory.npy": "states at the sample times (members × samples × n)",
                "energy.npy": "energy per recording window (members × windows × [stored, supplied, port, dissipated]); window w ends at times[w + 1]",
                "outputs.npy": "discrete outputs y^k of the recorded steps (members × records × s × m)",
            }),
        };
        let path = self.dir.join("summary.json");
        let file = std::fs::File::create(&path).map_err(|e| Error::io(&path, e))?;
        let mut writer = std::io::BufWriter::new(file);
        serde_json::to_writer_pretty(&mut writer, &summary)
            .map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
        writer.write_all(b"\n").map_err(|e| Error::io(&path, e))?;
        writer.flush().map_err(|e| Error::io(&path, e))?;
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
        let energy: Vec<f64> = members
            .iter()
            .flat_map(|m| m.window_energy.iter().flatten().copied())
            .collect();
        self.energy.write_rows(first, &energy)?;
        let outputs: Vec<f64> = members
            .iter()
            .flat_map(|m| m.outputs.iter().copied())
            .collect();
        debug_assert_eq!(outputs.len(), members.len() * self.row_outputs);
        self.outputs.write_rows(first, &outputs)?;
        for member in members {
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
