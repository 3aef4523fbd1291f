//! gradient and identify estimate their memory and work from the configured sizes before
//! anything is built: a size far beyond the machine (2³¹, 2³², 10⁵ states, 2⁶³ − 1) is
//! refused with one error line naming the setting, the estimate and the limit, instead of
//! a crash, an allocation abort or a run without end.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::example_path;

/// The sizes every dimension is tried at: 2³¹, 2³², 10⁵ and 2⁶³ − 1.
const DIMENSIONS: [&str; 4] = ["2147483648", "4294967296", "100000", "9223372036854775807"];

/// The sizes every count is tried at (10⁵ candidates or iterations is a fair run).
const COUNTS: [&str; 3] = ["2147483648", "4294967296", "9223372036854775807"];

/// Runs `harbor <command> <config> --backend cpu` with `overrides`; a guard kills it after
/// two minutes (a refusal takes milliseconds; the guard only keeps a regression from
/// hanging the suite). Returns the exit code and stderr.
fn run(command: &str, config: &Path, overrides: &[String]) -> (Option<i32>, String) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harbor"));
    cmd.arg(command)
        .arg(config)
        .arg("--out")
        .arg(out.path().join("run"))
        .args(["--backend", "cpu"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for o in overrides {
        cmd.args(["--set", o]);
    }
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{command} {overrides:?} was still running after two minutes");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        !out.path().join("run").exists(),
        "{overrides:?}: a refused run writes nothing"
    );
    (status.code(), stderr)
}

/// Every `(setting, value)` in `cases` must be refused by `command` on `example` with exit
/// code 1 and one `error: <field>: …` line that states an estimate and a limit.
fn assert_refused(command: &str, example: &str, cases: &[(&str, &str, &[&str])]) {
    let config = example_path(example);
    for (setting, value, extra) in cases {
        let mut overrides: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        overrides.push(format!("{setting}={value}"));
        let (code, stderr) = run(command, &config, &overrides);
        assert_eq!(code, Some(1), "{overrides:?}: {stderr}");
        let line = stderr.trim();
        // Set by --set, the error names the argument as typed before the setting.
        assert!(
            line.starts_with(&format!("error: --set {setting}={value}: {setting}: "))
                && !line.contains('\n'),
            "{overrides:?}: expected one error line naming {setting}, got {stderr:?}"
        );
        assert!(
            line.contains("needs about") && line.contains("more than"),
            "{overrides:?}: the error states the need and the limit: {line}"
        );
    }
}

fn cases<'a>(
    settings: &[&'a str],
    values: &[&'a str],
    extra: &'a [&'a str],
) -> Vec<(&'a str, &'a str, &'a [&'a str])> {
    settings
        .iter()
        .flat_map(|s| values.iter().map(move |v| (*s, *v, extra)))
        .collect()
}

#[test]
fn gradient_model_dimensions_beyond_the_machine_are_refused_naming_the_setting() {
    assert_refused(
        "gradient",
        "gradient_check.toml",
        &cases(
            &["candidate.states", "data.reference.states"],
            &DIMENSIONS,
            &[],
        ),
    );
}

#[test]
fn gradient_candidate_counts_and_steps_beyond_the_machine_are_refused() {
    let mut all = cases(&["candidates.members"], &COUNTS, &[]);
    // N = 4.29e9 steps of h = 1e-3: the tabulated inputs and data alone take 300 GiB.
    all.push(("scheme.t_end", "4294967", &[]));
    assert_refused("gradient", "gradient_check.toml", &all);
}

#[test]
fn identify_model_dimensions_beyond_the_machine_are_refused_naming_the_setting() {
    assert_refused(
        "identify",
        "identify_msd_chain.toml",
        &cases(&["model.order", "data.reference.cells"], &DIMENSIONS, &[]),
    );
}

#[test]
fn identify_counts_beyond_the_machine_are_refused_naming_the_setting() {
    let mut all = cases(
        &[
            "monte_carlo.candidates",
            "optimizer.max_iterations",
            "optimizer.trials",
        ],
        &COUNTS,
        &[],
    );
    // keep ≤ candidates: as many kept starts as candidates.
    for value in COUNTS {
        all.push((
            "monte_carlo.keep",
            value,
            match value {
                "2147483648" => &["monte_carlo.candidates=2147483648"],
                "4294967296" => &["monte_carlo.candidates=4294967296"],
                _ => &["monte_carlo.candidates=9223372036854775807"],
            },
        ));
    }
    assert_refused("identify", "identify_synthetic.toml", &all);
}

/// The work limit is a setting: a tiny one refuses the example, naming the limit.
#[test]
fn the_work_limit_is_read_from_the_environment() {
    let config = example_path("gradient_check.toml");
    for (limit, expected) in [
        ("1e3", "more than the work limit of 1e3 (HARBOR_WORK_LIMIT)"),
        ("lots", "HARBOR_WORK_LIMIT: must be a finite number"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
            .args(["gradient", config.to_str().unwrap(), "--backend", "cpu"])
            .args(["--out", "/nonexistent/never-written"])
            .env("HARBOR_WORK_LIMIT", limit)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(expected), "{limit}: {stderr}");
    }
}

/// Simulating the data from a large reference model is work the estimate counts: the
/// 1022-state mass–spring–damper chain (9 × 10¹⁰ operations, ~40 s on two cores) is refused
/// under a limit of 5 × 10¹⁰ naming `data.reference.cells`, although the identification of
/// its 20-state model is small.
#[test]
fn the_reference_models_simulation_counts_against_the_work_limit() {
    let config = example_path("identify_msd_chain.toml");
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(["identify", config.to_str().unwrap(), "--backend", "cpu"])
        .args(["--out", "/nonexistent/never-written"])
        .args(["--set", "data.reference.cells=511"])
        .args([
            "--set",
            "monte_carlo.candidates=1",
            "--set",
            "monte_carlo.keep=1",
        ])
        .args(["--set", "optimizer.max_iterations=1"])
        .env("HARBOR_WORK_LIMIT", "5e10")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for expected in [
        "data.reference.cells: the problem needs about 9.1",
        "once for the data simulated from the reference model (n = 1022)",
        "lower data.reference.cells",
    ] {
        assert!(stderr.contains(expected), "{expected:?} in {stderr}");
    }
}

/// A problem of more than 10¹⁰ operations prints its plan on stderr before the data are
/// read or simulated: here one evaluation of a 600-state candidate, whose data setting is
/// then refused.
#[test]
fn a_large_problem_prints_its_plan_before_the_data() {
    let config = example_path("gradient_check.toml");
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(["gradient", config.to_str().unwrap(), "--backend", "cpu"])
        .args(["--out", "/nonexistent/never-written"])
        .args([
            "--set",
            "candidate.states=600",
            "--set",
            "data.file=\"missing.csv\"",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].starts_with(
            "plan: about 1.76e10 floating-point operations (1 evaluation(s) of 1.33e10 each"
        ),
        "{stderr}"
    );
    assert!(lines[1].starts_with("error: "), "{stderr}");
    // The example's own size prints no plan.
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(["gradient", config.to_str().unwrap(), "--backend", "cpu"])
        .args(["--out", "/nonexistent/never-written"])
        .args(["--set", "data.file=\"missing.csv\""])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
}
