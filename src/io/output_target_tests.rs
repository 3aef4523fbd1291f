//! Tests of [`super`]: what appears at `--out` during a run, concurrent commits, failed
//! runs and symbolic links.

use super::*;

/// Names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Prepares `out` and writes `content` into the staging directory's result file.
fn staged(out: &Path, content: &str) -> OutputTarget {
    let target = OutputTarget::prepare(out).unwrap();
    std::fs::write(target.dir().join("summary.json"), content).unwrap();
    target
}

#[test]
fn a_directory_that_appears_during_the_run_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let target = staged(&out, "new");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let error = target.commit().unwrap_err().to_string();
    assert!(
        error.starts_with("--out: a directory appeared at") && error.contains("left it as it is"),
        "{error}"
    );
    assert_eq!(entries(dir.path()), ["run"]);
    assert_eq!(entries(&out), ["notes.txt"]);

    // An empty directory too: it was not there when the run started.
    let empty = dir.path().join("empty");
    let target = staged(&empty, "new");
    std::fs::create_dir(&empty).unwrap();
    assert!(target.commit().is_err());
    assert_eq!(entries(&empty), Vec::<String>::new());
    assert_eq!(entries(dir.path()), ["empty", "run"]);
}

#[test]
fn a_file_that_appears_during_the_run_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let target = staged(&out, "new");
    std::fs::write(&out, "mine").unwrap();
    let error = target.commit().unwrap_err().to_string();
    assert!(error.starts_with("--out: a file appeared at"), "{error}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
    assert_eq!(entries(dir.path()), ["run"]);
}

#[test]
fn a_directory_swapped_in_for_the_old_output_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    staged(&out, "first").commit().unwrap();
    let target = staged(&out, "second");
    // Someone moves the old output away and puts an empty directory of theirs there.
    std::fs::rename(&out, dir.path().join("moved")).unwrap();
    std::fs::create_dir(&out).unwrap();
    assert!(target.commit().is_err());
    assert_eq!(entries(&out), Vec::<String>::new());
    assert_eq!(entries(dir.path()), ["moved", "run"]);

    // A foreign file added to the old output makes it not harbor's alone any more.
    let out = dir.path().join("moved");
    let target = staged(&out, "third");
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::remove_file(out.join(OUTPUT_MARKER)).unwrap();
    assert!(target.commit().is_err());
    assert_eq!(entries(&out), ["notes.txt", "summary.json"]);
}

#[test]
fn what_was_there_at_the_start_is_replaced_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    std::fs::create_dir(&out).unwrap();
    staged(&out, "first").commit().unwrap();
    assert_eq!(entries(&out), [OUTPUT_MARKER, "summary.json"]);
    staged(&out, "second").commit().unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("summary.json")).unwrap(),
        "second"
    );
    assert_eq!(entries(dir.path()), ["run"]);
}

#[test]
fn concurrent_runs_into_one_place_leave_one_whole_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let first = staged(&out, "first");
    let second = staged(&out, "second");
    first.commit().unwrap();
    // The second run finds the first one's output, harbor's own, and replaces it.
    second.commit().unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("summary.json")).unwrap(),
        "second"
    );
    assert_eq!(entries(dir.path()), ["run"]);
}

#[test]
fn a_failed_run_removes_its_staging_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub").join("run");
    let result = write_atomically(&out, |_| Err(Error::invalid("test", "fails")));
    assert!(result.is_err());
    assert_eq!(entries(dir.path()), Vec::<String>::new());
    // Other tests run beside this one: only this run's entries must be gone.
    let record = record();
    assert!(
        !record
            .staging
            .iter()
            .chain(&record.parents)
            .any(|p| p.starts_with(dir.path()))
    );
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    let error = OutputTarget::prepare(&dangling).err().unwrap().to_string();
    assert!(
        error.starts_with("--out: ") && error.contains("symbolic link that points nowhere"),
        "{error}"
    );
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let error = OutputTarget::prepare(&link).err().unwrap().to_string();
    assert!(error.contains("is a symbolic link (to "), "{error}");
    assert_eq!(entries(dir.path()), ["dangling", "link", "real"]);
}
