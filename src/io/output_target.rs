//! Where a run's files go, handled so that nothing is ever half-written and nothing harbor
//! did not write is ever replaced:
//!
//! - [`OutputTarget::prepare`] checks `--out` before any work: it must be a new path, an
//!   empty directory, or a directory of harbor's own outputs (nothing else is ever
//!   replaced; a symbolic link is refused, dangling or not), with a name the file system
//!   accepts, in a parent harbor can write to — the staging directory is created right then,
//!   which proves it. What is at `--out` then (its device and inode) is remembered.
//! - The run writes into the staging directory `.harbor-staging-<pid>-…` beside `--out`.
//! - [`OutputTarget::commit`] looks at `--out` again and puts the results in place in one
//!   atomic step: into a free name with `renameat2(RENAME_NOREPLACE)`, over the directory
//!   that was there at the start (still replaceable) or over another harbor output (a
//!   concurrent run's) with `renameat2(RENAME_EXCHANGE)`, after which the old directory,
//!   now at the staging path, is removed. Anything else found at `--out` — a directory or
//!   file that appeared while the run was in progress — makes the commit refuse: the
//!   foreign entry stays as it is and the results are discarded.
//! - A failed run removes its staging directory; so does SIGINT, SIGTERM or SIGHUP once the
//!   CLI's interrupt handler is installed (see [`super::interrupt`]: a signal during the
//!   commit waits for it). Staging directories of runs that were killed outright (their
//!   process no longer exists) are removed by the next run into the same place, which says
//!   so on stderr.

use std::path::{Path, PathBuf};

use super::atomic_rename::{exchange, rename_noreplace};
use super::interrupt::{InterruptRecord, record, remove_tree};
use crate::error::{Error, Result};

pub use super::interrupt::remove_on_interrupt;

/// Prefix of staging directories; the pid of their process follows.
const STAGING_PREFIX: &str = ".harbor-staging-";

/// Prefix of an output directory renamed aside while being replaced (by earlier versions;
/// such leftovers are still removed).
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

/// Ancestors of `--out` this run created, deepest first: removed again (when empty) unless
/// the run commits, so a failed run leaves the file system as it found it.
struct CreatedParents(Vec<PathBuf>);

impl CreatedParents {
    /// Creates `dir` and its missing ancestors, remembering which were missing (also in
    /// the interrupt record, whose lock the caller holds).
    fn create(dir: &Path, record: &mut InterruptRecord) -> std::io::Result<Self> {
        let missing = missing_ancestors(dir);
        if let Err(e) = std::fs::create_dir_all(dir) {
            // remove_dir takes only empty directories; one that never came to be is skipped.
            for dir in &missing {
                let _ = std::fs::remove_dir(dir);
            }
            return Err(e);
        }
        record.parents.extend(missing.iter().cloned());
        Ok(CreatedParents(missing))
    }

    /// Keeps the directories (the run committed into them).
    fn keep(mut self, record: &mut InterruptRecord) {
        let kept = std::mem::take(&mut self.0);
        record.parents.retain(|p| !kept.contains(p));
    }
}

impl Drop for CreatedParents {
    fn drop(&mut self) {
        // Kept (or none created): nothing to undo, and no lock to take — `keep` runs while
        // the commit holds it.
        if self.0.is_empty() {
            return;
        }
        record().parents.retain(|p| !self.0.contains(p));
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
pub fn process_alive(pid: u32) -> bool {
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
            log::warn!(
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

/// What was at `--out` when the run started: a directory, by device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
}

impl Identity {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Option<Identity> {
        use std::os::unix::fs::MetadataExt;
        Some(Identity {
            device: meta.dev(),
            inode: meta.ino(),
        })
    }

    #[cfg(not(unix))]
    fn of(_meta: &std::fs::Metadata) -> Option<Identity> {
        None
    }
}

/// What the file system has at a path, without following a symbolic link.
fn describe(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_file() {
        "a file"
    } else {
        "a special file"
    }
}

/// Whether `dir` holds harbor's output marker (a concurrent run's committed output).
fn marked_output(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(OUTPUT_MARKER)).is_ok_and(|m| m.is_file())
}

/// A checked output location with its staging directory.
pub struct OutputTarget {
    out: PathBuf,
    /// The directory at `--out` when the run started (`None`: nothing was there).
    found: Option<Identity>,
    /// `None` once committed or discarded.
    staging: Option<PathBuf>,
    created_parents: Option<CreatedParents>,
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
        let found = match std::fs::symlink_metadata(out) {
            Err(_) => None,
            Ok(meta) if meta.file_type().is_symlink() => {
                let points_to = std::fs::read_link(out)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".into());
                let dangling = if out.exists() {
                    ""
                } else {
                    " that points nowhere"
                };
                return Err(Error::invalid(
                    "--out",
                    format!(
                        "{} is a symbolic link{dangling} (to {points_to}); harbor puts a directory at --out and replaces no link: give the real path",
                        out.display()
                    ),
                ));
            }
            Ok(meta) if !meta.is_dir() => {
                return Err(Error::invalid(
                    "--out",
                    format!(
                        "{} exists and is not a directory (it is {})",
                        out.display(),
                        describe(&meta)
                    ),
                ));
            }
            Ok(meta) => {
                replaceable(out)?;
                Identity::of(&meta)
            }
        };
        let mut record = record();
        let created_parents = CreatedParents::create(&parent, &mut record).map_err(|e| {
            Error::invalid(
                "--out",
                format!(
                    "cannot create the parent directory {}: {e}",
                    parent.display()
                ),
            )
        })?;
        remove_stale(&parent);
        let staging = match tempfile::Builder::new()
            .prefix(&format!("{STAGING_PREFIX}{}-", std::process::id()))
            .tempdir_in(&parent)
        {
            Ok(dir) => dir.keep(),
            Err(e) => {
                // The parents' cleanup takes the lock.
                drop(record);
                drop(created_parents);
                return Err(Error::invalid(
                    "--out",
                    format!("cannot write in {}: {e}", parent.display()),
                ));
            }
        };
        record.staging.push(staging.clone());
        Ok(OutputTarget {
            out: out.to_path_buf(),
            found,
            staging: Some(staging),
            created_parents: Some(created_parents),
        })
    }

    /// The staging directory the run writes into.
    pub fn dir(&self) -> &Path {
        self.staging
            .as_deref()
            .expect("a target is staged until it is committed")
    }

    /// Puts the staged results at `--out` in one atomic step (see the module docs), or
    /// refuses, leaving whatever appeared at `--out` as it is.
    pub fn commit(mut self) -> Result<()> {
        let staged = self.dir().to_path_buf();
        let marker = staged.join(OUTPUT_MARKER);
        std::fs::write(&marker, "written by harbor\n").map_err(|e| Error::io(&marker, e))?;
        // An interrupt waits until the commit has finished or failed.
        let mut record = record();
        let replaced = match self.swap_into_place(&staged, &mut record) {
            Ok(replaced) => replaced,
            Err(e) => {
                // The staging directory's cleanup (on drop) takes the lock.
                drop(record);
                return Err(e);
            }
        };
        record.staging.retain(|p| p != &staged);
        record.committed.push(self.out.clone());
        self.staging = None;
        if let Some(parents) = self.created_parents.take() {
            parents.keep(&mut record);
        }
        if replaced && let Err(e) = remove_tree(&staged) {
            log::warn!(
                "warning: the previous output, now at {}, could not be removed: {e}",
                staged.display()
            );
        }
        Ok(())
    }

    /// The atomic step of [`commit`](Self::commit): moves `staged` to `--out`; returns
    /// whether a previous directory was swapped out (it is then at `staged`).
    fn swap_into_place(&mut self, staged: &Path, record: &mut InterruptRecord) -> Result<bool> {
        let out = &self.out.clone();
        let with_results = |e: std::io::Error| Error::io(out, e);
        // A name taken between the look and the rename is looked at again.
        for _ in 0..8 {
            let meta = match std::fs::symlink_metadata(out) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    match rename_noreplace(staged, out) {
                        Ok(()) => return Ok(false),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                        Err(e) => return Err(with_results(e)),
                    }
                }
                Err(e) => return Err(with_results(e)),
                Ok(meta) => meta,
            };
            let id = Identity::of(&meta);
            let is_dir = meta.is_dir() && !meta.file_type().is_symlink();
            let ours = is_dir
                && ((self.found.is_some() && id == self.found && replaceable(out).is_ok())
                    || marked_output(out));
            if !ours {
                return Err(self.appeared(describe(&meta)));
            }
            exchange(staged, out).map_err(with_results)?;
            let swapped = std::fs::symlink_metadata(staged).ok();
            if swapped.as_ref().and_then(Identity::of) != id {
                // Something else took `--out`'s place between the look and the swap: put
                // it back.
                if let Err(e) = exchange(staged, out) {
                    // What is at `staged` now is not harbor's: it must not be removed.
                    record.staging.retain(|p| p != staged);
                    self.staging = None;
                    return Err(Error::invalid(
                        "--out",
                        format!(
                            "an entry appeared at {} during the commit and could not be put back ({e}): it is now at {}, and the new results are at {}",
                            out.display(),
                            staged.display(),
                            out.display()
                        ),
                    ));
                }
                return Err(self.appeared("another entry"));
            }
            return Ok(true);
        }
        Err(self.appeared("an entry, again and again,"))
    }

    /// The refusal when `--out` holds something the run may not replace.
    fn appeared(&self, what: &str) -> Error {
        Error::invalid(
            "--out",
            format!(
                "{what} appeared at {} while the run was in progress; harbor replaces only what was there when the run started or its own outputs, so it left it as it is and discarded the results",
                self.out.display()
            ),
        )
    }

    /// Runs `write` on the staging directory and commits; on error the staging directory is
    /// removed and `--out` is untouched.
    pub fn write(self, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        write(self.dir())?;
        self.commit()
    }
}

impl Drop for OutputTarget {
    /// A target dropped before its commit (a failed run) removes its staging directory;
    /// then its created parents go, when empty.
    fn drop(&mut self) {
        if let Some(staged) = self.staging.take() {
            let _ = remove_tree(&staged);
            record().staging.retain(|p| p != &staged);
        }
    }
}

/// Checks `out`, runs `write` on the staging directory, and commits; on error the staging
/// directory is removed and `out` is untouched.
pub fn write_atomically(out: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    OutputTarget::prepare(out)?.write(write)
}

#[cfg(test)]
#[path = "output_target_tests.rs"]
mod tests;
