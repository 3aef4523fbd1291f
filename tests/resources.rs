//! Runs are planned before they start: what cannot fit (disk, one member's records within
//! the memory budget) is refused before any work with the setting to change, and what fits
//! streams in bounded memory, with a summary whose size does not grow with the ensemble.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{assert_mentions, example_path, simulate_fails_with, simulate_outcome};
use serde_json::Value;

/// An output far beyond any disk (2³² − 1 members, 100 records each: petabytes) is refused before any work, naming --out,
/// the bytes the run would write and the space that is free.
#[test]
fn output_beyond_the_free_disk_space_is_refused_up_front() {
    let stderr = simulate_fails_with(
        &example_path("oscillator_ensemble.toml"),
        &[
            "ensemble.members=4294967295",
            "scheme.t_end=1",
            "output.every=1",
        ],
    );
    assert_mentions(&stderr, &["--out", "the run writes", "TiB", "free there"]);
}

/// One member whose records exceed the result share of the budget is refused with the
/// cadence that fits; that cadence then runs.
#[test]
fn a_member_beyond_the_memory_budget_is_refused_with_the_cadence_that_fits() {
    let config = example_path("oscillator_pulse.toml");
    let run = |every: &str| {
        let dir = tempfile::tempdir().unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
            .args(["simulate", config.to_str().unwrap(), "--backend", "cpu"])
            .arg("--out")
            .arg(dir.path().join("run"))
            .args(["--memory-budget", "16MiB"])
            .args(["--set", "scheme.h=0.0002", "--set"])
            .arg(format!("output.every={every}"))
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    // 90 000 records of 64 B each against a 4 MiB share of a 16 MiB budget.
    let (ok, stderr) = run("1");
    assert!(!ok);
    assert_mentions(
        &stderr,
        &[
            "output.every",
            "90000 point(s)",
            "4.00 MiB",
            "output.every ≥ 2",
            "--memory-budget",
        ],
    );
    let (ok, stderr) = run("2");
    assert!(ok, "{stderr}");
}

#[test]
fn memory_budgets_are_parsed_and_checked() {
    let config = example_path("oscillator_pulse.toml");
    for (budget, expected) in [
        ("1MiB", "at least"),
        ("lots", "not a size"),
        ("3 parsecs", "unknown unit"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
            .args(["simulate", config.to_str().unwrap(), "--backend", "cpu"])
            .args(["--out", "/nonexistent/never-written"])
            .env("HARBOR_MEMORY_BUDGET", budget)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert_mentions(&stderr, &["HARBOR_MEMORY_BUDGET", expected]);
    }
    assert!(
        simulate_outcome(&config, &[]).is_ok(),
        "the default budget runs the example"
    );
}

/// Peak resident memory (VmHWM) of a child process, sampled until it exits.
fn run_measuring_peak(mut command: Command) -> (bool, String, u64) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_path) {
            let hwm = text
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok());
            peak_kib = peak_kib.max(hwm.unwrap_or(0));
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status.success(), stderr, peak_kib * 1024)
}

fn read_f64s(path: &Path) -> ndarray::ArrayD<f64> {
    ndarray_npy::read_npy(path).unwrap()
}

/// 2²¹ members stream through a 32 MiB budget: the process stays far below what holding
/// every member's totals and final states would take, summary.json stays small and gives
/// statistics equal to those of the per-member NPY files, sorted.
#[test]
fn a_large_ensemble_streams_in_bounded_memory_with_a_small_summary() {
    if !cfg!(target_os = "linux") {
        return; // VmHWM is read from /proc.
    }
    let members = 1usize << 21;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut command = Command::new(env!("CARGO_BIN_EXE_harbor"));
    command
        .args([
            "simulate",
            example_path("oscillator_ensemble.toml").to_str().unwrap(),
        ])
        .arg("--out")
        .arg(&out)
        .args(["--backend", "cpu", "--memory-budget", "32MiB"])
        .args(["--set", &format!("ensemble.members={members}")])
        .args(["--set", "scheme.t_end=0.1", "--set", "output.every=10"]);
    let (ok, stderr, peak) = run_measuring_peak(command);
    assert!(ok, "{stderr}");
    // Holding 2²¹ members' totals and final states as vectors alone takes > 300 MiB.
    assert!(peak < 128 << 20, "peak resident memory {} MiB", peak >> 20);
    let summary_bytes = std::fs::metadata(out.join("summary.json")).unwrap().len();
    assert!(
        summary_bytes < 16 << 10,
        "summary.json is {summary_bytes} bytes"
    );
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["members"], members);
    assert!(summary.get("final_state").is_none(), "no per-member lists");
    let totals = read_f64s(&out.join("totals.npy"));
    assert_eq!(totals.shape(), [members, 5]);
    let mut stored: Vec<f64> = totals
        .index_axis(ndarray::Axis(1), 0)
        .iter()
        .copied()
        .collect();
    stored.sort_by(f64::total_cmp);
    let statistics = &summary["statistics"]["energy"]["stored_total"];
    assert_eq!(statistics["count"], members);
    assert_eq!(statistics["min"].as_f64().unwrap(), stored[0]);
    assert_eq!(statistics["max"].as_f64().unwrap(), stored[members - 1]);
    // q (n − 1) = 0.5 (2²¹ − 1): halfway between ranks 2²⁰ − 1 and 2²⁰.
    let (below, above) = (stored[members / 2 - 1], stored[members / 2]);
    let median = above - (above - below) * 0.5;
    assert_eq!(statistics["quantiles"]["0.5"].as_f64().unwrap(), median);
    let status: ndarray::ArrayD<i64> =
        ndarray_npy::read_npy(out.join("nonfinite_step.npy")).unwrap();
    assert_eq!(status.len(), members);
    assert!(status.iter().all(|&s| s == 0));
    let final_state = read_f64s(&out.join("final_state.npy"));
    let trajectory = read_f64s(&out.join("trajectory.npy"));
    assert_eq!(final_state.shape(), [members, 2]);
    // The last sample of the trajectory is the final state.
    for member in [0, 12345, members - 1] {
        for i in 0..2 {
            assert_eq!(final_state[[member, i]], trajectory[[member, 1, i]]);
        }
    }
}
