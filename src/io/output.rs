//! Result files. Everything is written into a staging directory beside the target and moved
//! into place only when every file is complete, so a failed run leaves no half-written
//! output.
//!
//! Files of `harbor simulate`:
//! - `summary.json`: run description, per-member energy totals and final states;
//! - `times.npy` (samples): sample times, t = 0 first;
//! - `trajectory.npy` (members × samples × n): states at the sample times;
//! - `energy.npy` (members × windows × 4): stored, supplied, port and dissipated energy
//!   summed over each recording window (window w ends at `times[w + 1]`);
//! - `outputs.npy` (members × records × s × m): discrete outputs y^k of the recorded steps.

use std::path::{Path, PathBuf};

use ndarray::{Array1, Array3, Array4};
use ndarray_npy::write_npy;
use serde_json::json;

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::results::Results;

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

/// Writes a JSON document with a trailing newline.
pub fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).expect("JSON values always serialise");
    text.push('\n');
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

fn npy<A: ndarray_npy::WritableElement, D: ndarray::Dimension>(
    dir: &Path,
    name: &str,
    array: &ndarray::Array<A, D>,
) -> Result<()> {
    let path = dir.join(name);
    write_npy(&path, array).map_err(|e| Error::io(&path, std::io::Error::other(e.to_string())))
}

/// The `summary.json` document of a run.
pub fn summary(results: &Results, plan: &Plan) -> serde_json::Value {
    let per_member = |f: &dyn Fn(&crate::results::MemberResult) -> f64| -> Vec<f64> {
        results.members.iter().map(f).collect()
    };
    json!({
        "harbor_version": env!("CARGO_PKG_VERSION"),
        "backend": results.backend,
        "precision": results.precision,
        "scheme": {
            "label": results.scheme,
            "family": plan.scheme.family.name(),
            "stages": plan.scheme.stages,
            "order": plan.scheme.order,
        },
        "members": results.members.len(),
        "steps": results.steps,
        "h": results.h,
        "t_end": results.h * results.steps as f64,
        "states": results.states,
        "inputs": results.inputs,
        "record_every": plan.record_every,
        "energy": {
            "stored_total": per_member(&|m| m.totals.stored),
            "supplied_total": per_member(&|m| m.totals.supplied),
            "port_total": per_member(&|m| m.totals.port),
            "dissipated_total": per_member(&|m| m.totals.dissipated),
            "max_abs_residual": per_member(&|m| m.totals.max_abs_residual),
        },
        "final_state": results.members.iter().map(|m| m.final_state.clone()).collect::<Vec<_>>(),
        "files": {
            "times.npy": "sample times (samples), t = 0 first",
            "trajectory.npy": "states at the sample times (members × samples × n)",
            "energy.npy": "energy per recording window (members × windows × [stored, supplied, port, dissipated]); window w ends at times[w + 1]",
            "outputs.npy": "discrete outputs y^k of the recorded steps (members × records × s × m)",
        },
    })
}

/// Writes `summary.json` and the NPY arrays of `results` into `out`, atomically.
pub fn write_simulation(out: &Path, results: &Results, plan: &Plan) -> Result<()> {
    let members = results.members.len();
    let samples = results.sample_times.len();
    let windows = samples - 1;
    let (n, s, m) = (results.states, results.stages, results.inputs);
    let trajectory = Array3::from_shape_fn((members, samples, n), |(i, k, r)| {
        results.members[i].trajectory[k * n + r]
    });
    let energy = Array3::from_shape_fn((members, windows, 4), |(i, w, c)| {
        results.members[i].window_energy[w][c]
    });
    let outputs = Array4::from_shape_fn((members, windows, s, m), |(i, w, st, c)| {
        results.members[i].outputs[(w * s + st) * m + c]
    });
    let times = Array1::from_vec(results.sample_times.clone());
    write_atomically(out, |dir| {
        write_json(&dir.join("summary.json"), &summary(results, plan))?;
        npy(dir, "times.npy", &times)?;
        npy(dir, "trajectory.npy", &trajectory)?;
        npy(dir, "energy.npy", &energy)?;
        npy(dir, "outputs.npy", &outputs)
    })
}
