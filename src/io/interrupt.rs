//! What SIGINT, SIGTERM and SIGHUP leave behind: nothing half-done.
//!
//! The process keeps one record of what an interrupt must undo — the staging directories of
//! runs in progress, the parent directories created for them, the private temporary
//! directories of the process — and of the outputs it has already committed. The record sits
//! behind one lock, which [`OutputTarget`](super::output_target::OutputTarget) also holds
//! for the whole commit of an output, so a signal that arrives during a commit is handled
//! only once the commit has finished: `--out` is never left between its old and its new
//! contents.
//!
//! On a signal the handler (the CLI's, a thread of its own) calls [`undo_for_interrupt`],
//! which removes what is registered and returns one line — `interrupted: no output was
//! written`, or `interrupted after the output was written to <out>` when the run had
//! already committed — and exits with 128 + the signal number (130 for SIGINT, 143 for
//! SIGTERM, 129 for SIGHUP).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// What an interrupt must remove, and what the process has already committed.
#[derive(Default)]
pub(crate) struct InterruptRecord {
    /// Directories removed whole: staging directories and private temporary directories.
    pub(crate) staging: Vec<PathBuf>,
    /// Directories created on the way to an output location, deepest first; removed only
    /// when empty, after the staging directories.
    pub(crate) parents: Vec<PathBuf>,
    /// Output locations this process has committed.
    pub(crate) committed: Vec<PathBuf>,
}

static RECORD: Mutex<InterruptRecord> = Mutex::new(InterruptRecord {
    staging: Vec::new(),
    parents: Vec::new(),
    committed: Vec::new(),
});

/// The record, locked: while the guard lives, an interrupt waits.
pub(crate) fn record() -> MutexGuard<'static, InterruptRecord> {
    RECORD
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Adds `dir` (a private temporary directory of this process) to what an interrupt removes.
pub fn remove_on_interrupt(dir: &Path) {
    record().staging.push(dir.to_path_buf());
}

/// Removes `dir` and everything in it, retrying a few times when a thread of the run was
/// still creating files in it.
pub(crate) fn remove_tree(dir: &Path) -> std::io::Result<()> {
    let mut last = Ok(());
    for _ in 0..5 {
        last = match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            other => other,
        };
        if last.is_ok() {
            return last;
        }
    }
    last
}

/// Undoes what `record` lists and returns the line to print.
fn clean_up(record: &mut InterruptRecord) -> String {
    for dir in record.staging.drain(..) {
        let _ = remove_tree(&dir);
    }
    for dir in record.parents.drain(..) {
        let _ = std::fs::remove_dir(&dir);
    }
    match record.committed.as_slice() {
        [] => "interrupted: no output was written".to_string(),
        outputs => format!(
            "interrupted after the output was written to {}",
            outputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Undoes what the record lists and returns the line to print (`interrupted: no output was
/// written`, or `interrupted after the output was written to <out>`), for the handler of a
/// signal that ends the process. It waits for a commit in progress and then keeps the
/// record's lock for good, so nothing new is registered or committed after this point and
/// [`exit_unless_interrupted`] leaves the exit to the handler.
pub fn undo_for_interrupt() -> String {
    let mut record = record();
    let line = clean_up(&mut record);
    std::mem::forget(record);
    line
}

/// Ends the process with `code` — unless an interrupt is being handled, whose handler then
/// ends it with 128 + the signal: the exit takes the record's lock, which the handler holds
/// for good, so the two never race (a run interrupted right after its commit would otherwise
/// print `interrupted after …` and exit 0).
pub fn exit_unless_interrupted(code: i32) -> ! {
    let _record = record();
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_up_removes_what_is_registered_and_says_what_was_committed() {
        let dir = tempfile::tempdir().unwrap();
        let staging = dir.path().join("parent/.harbor-staging-1-x");
        std::fs::create_dir_all(staging.join("inner")).unwrap();
        std::fs::write(staging.join("inner/file"), "x").unwrap();
        let mut record = InterruptRecord {
            staging: vec![staging.clone()],
            parents: vec![dir.path().join("parent")],
            committed: vec![],
        };
        assert_eq!(clean_up(&mut record), "interrupted: no output was written");
        assert!(!dir.path().join("parent").exists());

        record.committed.push(PathBuf::from("results"));
        assert_eq!(
            clean_up(&mut record),
            "interrupted after the output was written to results"
        );
    }
}
