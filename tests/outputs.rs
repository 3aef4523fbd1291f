//! Output handling through the binary: `--out` is checked before any work, replacement is
//! all-or-nothing and only of harbor's own outputs, interrupted runs leave nothing behind
//! (and stale staging directories of killed runs are removed by the next run), and a closed
//! stdout neither panics nor loses results.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn harbor() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harbor"))
}

fn simulate(config: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    harbor()
        .args([
            "simulate",
            common::example_path(config).to_str().unwrap(),
            "--out",
        ])
        .arg(out)
        .args(["--backend", "cpu"])
        .args(extra)
        .output()
        .unwrap()
}

/// Names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Waits until a staging directory appears in `dir` (the run has started writing).
fn wait_for_staging(dir: &Path) {
    let started = Instant::now();
    while !entries(dir)
        .iter()
        .any(|n| n.starts_with(".harbor-staging-"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no staging directory appeared in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A long CPU run (about a minute) into `out`, for interrupting.
fn long_run(out: &Path) -> std::process::Child {
    harbor()
        .args([
            "simulate",
            common::example_path("oscillator_ensemble.toml")
                .to_str()
                .unwrap(),
            "--out",
        ])
        .arg(out)
        .args(["--backend", "cpu", "--set", "ensemble.members=200000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_closed_stdout_neither_panics_nor_loses_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = harbor()
        .args([
            "simulate",
            common::example_path("oscillator_pulse.toml")
                .to_str()
                .unwrap(),
            "--out",
        ])
        .arg(&out)
        .args(["--backend", "cpu"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end at once, as `| head -0` would.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.join("summary.json").is_file());
    assert!(out.join("trajectory.npy").is_file());
}

#[test]
fn the_output_location_is_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    let long_name = dir.path().join("a".repeat(300));
    let foreign = dir.path().join("foreign");
    std::fs::create_dir_all(foreign.join("summary.json")).unwrap();
    std::fs::write(foreign.join("thesis.tex"), "mine").unwrap();
    for (out, expected) in [
        (file.clone(), "exists and is not a directory"),
        (file.join("run"), "cannot create the parent directory"),
        (
            long_name,
            "the directory name is 300 bytes long; file systems accept at most 255",
        ),
        (
            foreign.clone(),
            "is not a harbor output directory (it holds summary.json, thesis.tex)",
        ),
    ] {
        let started = Instant::now();
        let output = simulate("oscillator_ensemble.toml", &out, &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        common::assert_mentions(&stderr, &["--out", expected]);
        // The 2²⁰-member ensemble would take minutes: the refusal comes first.
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{out:?} was checked late"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    assert_eq!(entries(&foreign), ["summary.json", "thesis.tex"]);
    assert_eq!(
        entries(dir.path()),
        ["foreign", "notes.txt"],
        "nothing left behind"
    );
}

#[test]
fn an_output_directory_is_replaced_as_a_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    assert!(
        simulate("oscillator_pulse.toml", &out, &[])
            .status
            .success()
    );
    assert!(out.join("energy.npy").is_file());
    // A contact run into the same place leaves none of the linear-PH files behind.
    let output = simulate("contact_damped_oscillator.toml", &out, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        entries(&out),
        [
            ".harbor-output",
            "final_state.npy",
            "hamiltonian.npy",
            "nonfinite_step.npy",
            "summary.json",
            "times.npy",
            "totals.npy",
            "trajectory.npy"
        ]
    );
    assert_eq!(entries(dir.path()), ["run"]);
    // An empty directory is fine too.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(
        simulate("oscillator_pulse.toml", &empty, &[])
            .status
            .success()
    );
    assert!(empty.join("summary.json").is_file());
}

#[cfg(unix)]
fn signal(child: &std::process::Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_nothing_behind() {
    for (name, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let child = long_run(&out);
        wait_for_staging(dir.path());
        signal(&child, name);
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "SIG{name}: {stderr}");
        assert!(
            stderr.contains("interrupted: no output was written"),
            "{stderr}"
        );
        assert!(
            entries(dir.path()).is_empty(),
            "SIG{name}: {:?}",
            entries(dir.path())
        );
    }
}

#[cfg(unix)]
#[test]
fn the_next_run_removes_what_a_killed_run_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = long_run(&out);
    wait_for_staging(dir.path());
    signal(&child, "KILL");
    child.wait().unwrap();
    let stale: Vec<String> = entries(dir.path());
    assert_eq!(stale.len(), 1, "{stale:?}");
    let output = simulate("oscillator_pulse.toml", &out, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    common::assert_mentions(&stderr, &[&stale[0], "left by an interrupted harbor run"]);
    assert_eq!(entries(dir.path()), ["run"]);
}

/// A run that fails after its output location was prepared removes the parent directories
/// it created for it, and leaves the ones that were there.
#[test]
fn a_failed_run_removes_the_parents_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a").join("b").join("run");
    let output = simulate(
        "oscillator_pulse.toml",
        &out,
        &["--set", "input.0.amplitude=1.7976931348623157e308"],
    );
    assert!(!output.status.success());
    assert_eq!(entries(dir.path()), Vec::<String>::new());
    std::fs::create_dir(dir.path().join("a")).unwrap();
    let output = simulate(
        "oscillator_pulse.toml",
        &out,
        &["--set", "input.0.amplitude=1.7976931348623157e308"],
    );
    assert!(!output.status.success());
    assert_eq!(entries(dir.path()), ["a"]);
    assert_eq!(entries(&dir.path().join("a")), Vec::<String>::new());
    // A parent that cannot be created (a 300-byte name) leaves none of those before it.
    let long = dir.path().join("new").join("x".repeat(300)).join("run");
    let output = simulate("oscillator_pulse.toml", &long, &[]);
    assert!(!output.status.success());
    assert_eq!(entries(dir.path()), ["a"]);
}
