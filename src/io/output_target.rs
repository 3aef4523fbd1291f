//! Where a run's files go, handled so that nothing is ever half-written:
//!
//! - [`OutputTarget::prepare`] checks `--out` before any work: it must be a new path, an
//!   empty directory, or a directory of harbor's own outputs (nothing else is ever
//!   replaced), with a name the file system accepts, in a parent harbor can write to — the
//!   staging directory is created right then, which proves it.
//! - The run writes into the staging directory `.harbor-staging-<pid>-…` beside `--out`.
//! - [`OutputTarget::commit`] replaces `--out` all at once: an existing output directory is
//!   first renamed aside, the staging directory renamed into place, and only then the old one
//!   removed; if the final rename fails, the old output is put back and the new results stay
//!   in the staging directory, whose path the error names.
//! - A failed run removes its staging directory; so does SIGINT or SIGTERM once
//!   [`install_interrupt_cleanup`] has run. Staging directories of runs that were killed
//!   outright (their process no longer exists) are removed by the next run into the same
//!   place, which says so on stderr.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Result};

/// Prefix of staging directories; the pid of their process follows.
const STAGING_PREFIX: &str = ".harbor-staging-";

/// Prefix of an output directory renamed aside while being replaced.
const REPLACED_PREFIX: &str = ".harbor-replaced-";

/// Marker file in every output directory harbor writes.
pub const OUTPUT_MARKER: &str = ".harbor-output";

/// The files harbor writes into output directories (simulations and studies), so that an
/// existing directory made only of them — written before the marker existed — may be
/// replaced.
const KNOWN_OUTPUTS: [&str; 13] = [
    OUTPUT_MARKER,
    "summary.json",
    "times.npy",
    "trajectory.npy",
    "energy.npy",
    "outputs.npy",
    "hamiltonian.npy",
    "energy_order.csv",
    "energy_order_slopes.csv",
    "energy_order.svg",
    "precision_drift.csv",
    "contact_energy.csv",
    "contact_energy.svg",
];

/// Staging directories of this process, removed on SIGINT/SIGTERM.
static LIVE_STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live_staging() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE_STAGING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Directories this process created on the way to an output location, deepest first;
/// removed on SIGINT/SIGTERM after the staging directories, if empty.
static LIVE_PARENTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live_parents() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE_PARENTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Adds `dir` (a private temporary directory of this process) to what an interrupt removes.
pub fn remove_on_interrupt(dir: &Path) {
    live_staging().push(dir.to_path_buf());
}

/// Removes this process's staging directories (and the parents it created for them) and
/// exits with 130 on SIGINT or SIGTERM. Call once, early, from a binary.
pub fn install_interrupt_cleanup() {
    let _ = ctrlc::set_handler(|| {
        for dir in live_staging().drain(..) {
            let _ = std::fs::remove_dir_all(&dir);
        }
        for dir in live_parents().drain(..) {
            let _ = std::fs::remove_dir(&dir);
        }
        eprintln!("interrupted: no output was written");
        std::process::exit(130);
    });
}

/// A checked output location with its staging directory.
pub struct OutputTarget {
    out: PathBuf,
    /// `None` once committed. (Fields drop in order: the staging directory goes before
    /// the parents that held it.)
    staging: Option<tempfile::TempDir>,
    created_parents: CreatedParents,
}

/// Ancestors of `--out` this run created, deepest first: removed again (when empty) unless
/// the run commits, so a failed run leaves the file system as it found it.
struct CreatedParents(Vec<PathBuf>);

impl CreatedParents {
    /// Creates `dir` and its missing ancestors, remembering which were missing.
    fn create(dir: &Path) -> std::io::Result<Self> {
        let created = CreatedParents(missing_ancestors(dir));
        live_parents().extend(created.0.iter().cloned());
        std::fs::create_dir_all(dir)?;
        Ok(created)
    }

    /// Keeps the directories (the run committed into them).
    fn keep(mut self) {
        let kept = std::mem::take(&mut self.0);
        live_parents().retain(|p| !kept.contains(p));
    }
}

impl Drop for CreatedParents {
    fn drop(&mut self) {
        live_parents().retain(|p| !self.0.contains(p));
        // remove_dir takes only empty directories; one that never came to be is skipped.
        for dir in &self.0 {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The ancestors of `dir` (itself included) that do not exist yet, deepest first.
fn missing_ancestors(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .take_while(|a| std::fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// Whether process `pid` is alive (Linux: /proc; elsewhere assumed alive, so nothing is
/// removed).
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// Removes staging and replaced directories in `parent` left by processes that no longer
/// exist, saying so on stderr.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix(STAGING_PREFIX)
            .or_else(|| name.strip_prefix(REPLACED_PREFIX))
        else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !process_alive(pid)
            && std::fs::remove_dir_all(entry.path()).is_ok()
        {
            eprintln!(
                "removed {}, left by an interrupted harbor run (process {pid})",
                entry.path().display()
            );
        }
    }
}

/// Whether `dir` may be replaced: empty, marked as harbor's, or holding only files harbor
/// writes.
fn replaceable(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut foreign = Vec::new();
    let mut marked = false;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if name == OUTPUT_MARKER && is_file {
            marked = true;
        } else if !(is_file && KNOWN_OUTPUTS.contains(&name.as_str())) {
            foreign.push(name);
        }
    }
    if marked || foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    foreign.truncate(5);
    Err(Error::invalid(
        "--out",
        format!(
            "{} exists and is not a harbor output directory (it holds {}); harbor replaces only its own outputs: choose a new path or remove it",
            dir.display(),
            foreign.join(", ")
        ),
    ))
}

impl OutputTarget {
    /// Checks `out` and creates the staging directory beside it (see the module docs).
    pub fn prepare(out: &Path) -> Result<Self> {
        let name = out.file_name().ok_or_else(|| {
            Error::invalid(
                "--out",
                format!(
                    "{} names no directory (it ends in `..` or is a root)",
                    out.display()
                ),
            )
        })?;
        if name.len() > 255 {
            return Err(Error::invalid(
                "--out",
                format!(
                    "the directory name is {} bytes long; file systems accept at most 255",
                    name.len()
                ),
            ));
        }
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if out.exists() {
            if !out.is_dir() {
                return Err(Error::invalid(
                    "--out",
                    format!("{} exists and is not a directory", out.display()),
                ));
            }
            replaceable(out)?;
        }
        let created_parents = CreatedParents::create(&parent).map_err(|e| {
            Error::invalid(
                "--out",
                format!(
                    "cannot create the parent directory {}: {e}",
                    parent.display()
                ),
            )
        })?;
        remove_stale(&parent);
        let staging = tempfile::Builder::new()
            .prefix(&format!("{STAGING_PREFIX}{}-", std::process::id()))
            .tempdir_in(&parent)
            .map_err(|e| {
                Error::invalid(
                    "--out",
                    format!("cannot write in {}: {e}", parent.display()),
                )
            })?;
        live_staging().push(staging.path().to_path_buf());
        Ok(OutputTarget {
            out: out.to_path_buf(),
            staging: Some(staging),
            created_parents,
        })
    }

    /// The staging directory the run writes into.
    pub fn dir(&self) -> &Path {
        self.staging
            .as_ref()
            .expect("a target is staged until it is committed")
            .path()
    }

    /// Moves the staging directory into place, replacing an existing output directory all
    /// at once.
    pub fn commit(self) -> Result<()> {
        let OutputTarget {
            out,
            staging,
            created_parents,
        } = self;
        let staging = staging.expect("a target is staged until it is committed");
        let marker = staging.path().join(OUTPUT_MARKER);
        std::fs::write(&marker, "written by harbor\n").map_err(|e| Error::io(&marker, e))?;
        let staged = staging.keep();
        // From here the results are on disk (staged or in place): their parents stay.
        created_parents.keep();
        live_staging().retain(|p| p != &staged);
        let parent = staged
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let aside = if out.exists() {
            let aside = tempfile::Builder::new()
                .prefix(&format!("{REPLACED_PREFIX}{}-", std::process::id()))
                .tempdir_in(&parent)
                .map_err(|e| Error::io(&parent, e))?
                .keep();
            std::fs::remove_dir(&aside).map_err(|e| Error::io(&aside, e))?;
            std::fs::rename(&out, &aside).map_err(|e| {
                Error::io(
                    &out,
                    std::io::Error::other(format!(
                        "{e}; the new results are in {}",
                        staged.display()
                    )),
                )
            })?;
            Some(aside)
        } else {
            None
        };
        if let Err(e) = std::fs::rename(&staged, &out) {
            if let Some(aside) = &aside {
                let _ = std::fs::rename(aside, &out);
            }
            return Err(Error::io(
                &out,
                std::io::Error::other(format!("{e}; the new results are in {}", staged.display())),
            ));
        }
        if let Some(aside) = aside {
            std::fs::remove_dir_all(&aside).map_err(|e| Error::io(&aside, e))?;
        }
        Ok(())
    }
}

impl OutputTarget {
    /// Runs `write` on the staging directory and commits; on error the staging directory is
    /// removed and `--out` is untouched.
    pub fn write(self, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        let staged = self.dir().to_path_buf();
        if let Err(e) = write(&staged) {
            live_staging().retain(|p| p != &staged);
            return Err(e);
        }
        self.commit()
    }
}

/// Checks `out`, runs `write` on the staging directory, and commits; on error the staging
/// directory is removed and `out` is untouched.
pub fn write_atomically(out: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    OutputTarget::prepare(out)?.write(write)
}
