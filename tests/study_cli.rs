//! `harbor study energy-order` end to end: it says it runs on the CPU in f64, and refuses
//! an ensemble config before writing anything.

mod common;

use common::run_harbor as harbor;

#[test]
fn energy_order_says_it_runs_on_the_cpu_in_f64() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let config = common::example_path("oscillator_pulse.toml");
    let output = harbor(&[
        "study",
        "energy-order",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "study.schemes=[{family='gauss', stages=2}]",
        "--set",
        "study.h=[0.1, 0.05]",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("runs on the CPU in f64") && stderr.contains("540 scheme steps"),
        "{stderr}"
    );
    assert!(stdout.starts_with("CPU f64 reference path;"), "{stdout}");
    let svg = std::fs::read_to_string(out.join("energy_order.svg")).unwrap();
    assert!(svg.contains("CPU f64"));
}

#[test]
fn energy_order_refuses_an_ensemble_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let config = common::example_path("oscillator_ensemble.toml");
    let output = harbor(&[
        "study",
        "energy-order",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "accepted an ensemble: {stderr}");
    assert!(
        stderr.contains("ensemble:") && stderr.contains("1048576"),
        "{stderr}"
    );
    assert!(!out.exists(), "{} was written", out.display());
}

/// `study contact-energy` holds every member's records at once: beyond the memory budget it
/// refuses before any work, naming the members, the bytes and the budget.
#[test]
fn contact_energy_refuses_what_it_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let config = common::example_path("contact_energy_sweep.toml");
    let output = harbor(&[
        "study",
        "contact-energy",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
        "--memory-budget",
        "16MiB",
        "--set",
        "ensemble.members=100000",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    common::assert_mentions(
        &stderr,
        &[
            "ensemble.members",
            "100000 members",
            "635.53 MiB",
            "--memory-budget",
        ],
    );
    assert!(!out.exists());
}
