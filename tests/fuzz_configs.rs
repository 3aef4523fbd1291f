//! A config fuzzer of `harbor simulate`, `harbor gradient` and `harbor identify`: every
//! case runs the real binary as its own process on a config derived from one of
//! `examples/*.toml` (each example runs its own subcommand: malformed, extreme, oversized,
//! with odd `--set` overrides, CSV inputs and output locations; see `fuzz/cases.rs`), and
//! must not panic, abort, hang past its limit, or exit 0 with a non-finite result; a
//! failure must say `error: …` and leave the output location as it was (see
//! `fuzz/run.rs`). Among the classes:
//!
//! - `narrowing` (`fuzz/narrowing.rs`): `output.every`, the step count and
//!   `ensemble.members` around 2³¹, 2³² and u32::MAX ± 1, on `--backend cpu` and (among the
//!   GPU cases) `gpu`: a run that finishes equals the `--backend reference` run of the same
//!   config, or cannot have finished at all (truncation);
//! - `endless` (`fuzz/endless.rs`): a config, CSV input or data file that is `/dev/zero`,
//!   a FIFO (never written, or held open and never closed) or a 64 GiB sparse file: a clear
//!   error within the time limit and the memory cap;
//! - `dimension` (`fuzz/model_cases.rs`): gradient and identify with `candidate.states`,
//!   `model.order`, `data.reference.cells`, steps and counts set to 10³ … 2⁶³ − 1: a
//!   refusal naming the field, or a run that finishes (then gradient.json /
//!   identification.json present and finite) or runs long; matrices that cannot fit this
//!   machine must be refused.
//!
//! A second test runs the commit window (`fuzz/commit.rs`): SIGINT/SIGTERM at random
//! moments of a run, most around the commit (exit 130 / 143 or 0; the last stderr line says
//! whether the output was written, and `--out` matches it), 2–4 concurrent runs into one
//! `--out` (one complete output, each run 0 or `error: --out: …`), someone else's directory
//! or file appearing at `--out` during the run (refused, left untouched), a symlink as
//! `--out` (refused); never a `.harbor-staging-*` or `.harbor-replaced-*` left.
//!
//! ```text
//! cargo test --release --test fuzz_configs -- --nocapture                  # 1000 cases
//! HARBOR_FUZZ_CASES=100000 HARBOR_FUZZ_BINARY=/tmp/harbor-copy \
//!     cargo test --release --test fuzz_configs -- --nocapture           # 10⁵ cases + 5000 scenarios
//! HARBOR_FUZZ_CASES=0 HARBOR_FUZZ_COMMIT_CASES=2000 \
//!     cargo test --release --test fuzz_configs commit -- --nocapture    # the commit window only
//! ```
//!
//! Environment: `HARBOR_FUZZ_CASES` (default 1000), `HARBOR_FUZZ_COMMIT_CASES` (default a
//! twentieth of the cases), `HARBOR_FUZZ_SEED` (else
//! `HARBOR_TEST_SEED`, else a fresh seed, printed), `HARBOR_FUZZ_JOBS` (default: all
//! cores), `HARBOR_FUZZ_GPU_CASES` (default 8; they run `--backend gpu` and, like the other
//! GPU tests, fail rather than skip without an adapter), `HARBOR_FUZZ_ONLY` (case or
//! scenario indices to replay), `HARBOR_FUZZ_BINARY` (run a copy of the binary, so that a
//! rebuild during a long campaign does not swap it), `HARBOR_FUZZ_TIMEOUT_S` (default 20),
//! `HARBOR_FUZZ_SIZE_TIMEOUT_S` (default 5), `HARBOR_FUZZ_EXAMPLES` (only the examples
//! whose file name contains one of these comma-separated words, for a targeted campaign:
//! `pendulum,lotka,ph_` for the port-Hamiltonian models of `fuzz/port_hamiltonian.rs`).
//! The counts per outcome, command, class, mutation kind and example are printed and
//! written to `target/tmp/fuzz_configs_report.txt` (the commit window's to
//! `target/tmp/fuzz_commit_report.txt`).

mod fuzz;

#[test]
fn harbor_survives_fuzzed_configs() {
    fuzz::fuzz(&fuzz::Settings::from_env());
}

#[test]
fn the_commit_window_survives_signals_and_races() {
    fuzz::commit::fuzz_commit(&fuzz::Settings::from_env());
}

/// A finite member's status file (int64 zero), for stand-ins that write a result.
fn status_file(dir: &std::path::Path) -> std::path::PathBuf {
    let status = dir.join("nonfinite_step.npy");
    let mut stream = harbor::io::npy_stream::NpyStream::create_of(
        &status,
        &[1],
        harbor::io::npy_stream::Element::I64,
    )
    .unwrap();
    stream.write_rows_i64(0, &[0]).unwrap();
    stream.finish().unwrap();
    status
}

/// Shell lines that write a one-member simulate output with this final state into `$4`
/// (the --out of `simulate CONFIG --out OUT …`).
fn fake_output(status: &std::path::Path, final_state: &str) -> String {
    fake_output_in(status, final_state, "$4")
}

/// [`fake_output`] into the directory `dest` (a shell word).
fn fake_output_in(status: &std::path::Path, final_state: &str, dest: &str) -> String {
    format!(
        r#"mkdir -p "{dest}" && cp '{}' "{dest}/" && touch "{dest}/.harbor-output" && printf '%s' '{{"members": 1, "energy": {{"stored_total": [1.5]}}, "final_state": [[{final_state}]], "statistics": {{"energy": {{"stored_total": {{"count": 1, "nonfinite": 0, "min": 1.5}}}}, "final_state": [{{"count": 1, "nonfinite": 0}}]}}, "nonfinite": {{"members": 0, "first": []}}}}' > "{dest}/summary.json""#,
        status.display()
    )
}

/// Writes an executable stand-in for the binary.
fn stand_in(path: &std::path::Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The judges of the new classes: stand-ins that exit 0 where a refusal is due, refuse
/// without naming the field, run long instead of refusing, finish an impossible run, write
/// a non-finite or no gradient/identify output, differ from the reference, or read an
/// endless FIFO are each caught; a clean refusal and a clean gradient pass.
#[test]
fn the_oracle_catches_the_new_kinds_of_failure() {
    use std::time::Duration;

    use fuzz::cases::{Case, Class, ConfigArg, Subcommand};
    use fuzz::run::{Limits, Outcome, run_case};

    let status_dir = tempfile::tempdir().unwrap();
    let status = status_file(status_dir.path());
    let gradient = |cost: &str| {
        format!(
            r#"mkdir "$4" && printf '{{"cost": {cost}, "grad": {{"J": [[0.5]]}}}}' > "$4/gradient.json"; exit 0"#
        )
    };
    let refusal = "echo 'error: candidate.states = 4294967296 needs 128 EiB' >&2; exit 1";
    type Setup = fn(&mut Case);
    fn dimension(c: &mut Case) {
        c.command = Subcommand::Gradient;
        c.class = Class::Dimension;
        c.large = true;
        c.names_field = vec!["candidate.states".into()];
    }
    fn must_refuse(c: &mut Case) {
        dimension(c);
        c.must_refuse = true;
    }
    fn impossible(c: &mut Case) {
        c.large = true;
        c.exit0_impossible = true;
    }
    fn identify(c: &mut Case) {
        c.command = Subcommand::Identify;
    }
    fn reference(c: &mut Case) {
        c.reference_check = true;
    }
    fn endless(c: &mut Case) {
        c.config_arg = ConfigArg::HeldFifo;
        c.must_refuse = true;
    }
    let cases: Vec<(&str, String, Setup, Outcome, &str)> = vec![
        (
            "clean refusal",
            refusal.into(),
            must_refuse,
            Outcome::Refused,
            "",
        ),
        (
            "clean gradient",
            gradient("1.0"),
            dimension,
            Outcome::Finite,
            "",
        ),
        (
            "exit 0 where a refusal is due",
            gradient("1.0"),
            must_refuse,
            Outcome::Failed,
            "must be refused",
        ),
        (
            "refusal naming another field",
            "echo 'error: bad size' >&2; exit 1".into(),
            dimension,
            Outcome::Failed,
            "does not name candidate.states",
        ),
        (
            "running long instead of refusing",
            "sleep 30".into(),
            must_refuse,
            Outcome::Failed,
            "instead of refusing",
        ),
        (
            "non-finite gradient",
            gradient("null"),
            dimension,
            Outcome::Failed,
            "non-finite (null)",
        ),
        (
            "identify without identification.json",
            r#"mkdir "$4"; exit 0"#.into(),
            identify,
            Outcome::Failed,
            "identification.json does not read",
        ),
        (
            "an impossible run finished",
            format!("{}; exit 0", fake_output(&status, "1.0")),
            impossible,
            Outcome::Failed,
            "truncated",
        ),
        (
            "differs from the reference",
            format!(
                r#"if [ "$6" = reference ]; then {}; else {}; fi; exit 0"#,
                fake_output(&status, "1.0"),
                fake_output(&status, "2.0")
            ),
            reference,
            Outcome::Failed,
            "differs from --backend reference",
        ),
        (
            "equals the reference",
            format!("{}; exit 0", fake_output(&status, "1.0")),
            reference,
            Outcome::Finite,
            "",
        ),
        (
            "reads an endless FIFO",
            r#"cat "$2" > /dev/null; exit 0"#.into(),
            endless,
            Outcome::Failed,
            "instead of refusing",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        timeout: Duration::from_millis(800),
        size_timeout: Duration::from_millis(800),
        memory_bytes: 1 << 30,
        file_bytes: 1 << 20,
        machine_bytes: 1 << 30,
    };
    for (i, (name, script, setup, expected, problem)) in cases.into_iter().enumerate() {
        let bin = dir.path().join(format!("fake-{i}"));
        stand_in(&bin, &script);
        let mut case = Case::new(i, "fake", b"".to_vec());
        setup(&mut case);
        let case_dir = dir.path().join(format!("case-{i}"));
        std::fs::create_dir_all(&case_dir).unwrap();
        let verdict = run_case(&bin, &case, &case_dir, &limits);
        assert_eq!(verdict.outcome, expected, "{name}: {verdict:?}");
        if problem.is_empty() {
            assert!(
                verdict.problems.is_empty(),
                "{name}: {:?}",
                verdict.problems
            );
        } else {
            assert!(
                verdict.problems.iter().any(|p| p.contains(problem)),
                "{name}: the problems should mention {problem:?}: {:?}",
                verdict.problems
            );
        }
    }
}

/// The commit window's judges: stand-ins that exit 130 on SIGTERM, leave a staging or
/// replaced directory, say nothing was written after replacing `--out`, replace someone
/// else's directory that appeared during the run, or write through a symlink are each
/// caught; stand-ins that follow the contract pass.
#[test]
fn the_commit_oracle_catches_each_kind_of_failure() {
    use std::time::Duration;

    use fuzz::commit::{LinkTarget, Scenario, Signal, run_scenario};
    use fuzz::run::Limits;

    let dir = tempfile::tempdir().unwrap();
    let status = status_file(dir.path());
    let write = fake_output(&status, "1.0");
    let say_nothing = r#"echo "interrupted: no output was written" >&2"#;
    // Handles both signals as the contract says, works 0.6 s, then commits at once.
    let good = format!(
        r#"trap '{say_nothing}; exit 130' INT; trap '{say_nothing}; exit 143' TERM; sleep 0.6 & wait $!; trap '' INT TERM; {}; rm -rf "$4"; mv "$4.new" "$4"; exit 0"#,
        fake_output_in(&status, "1.0", "$4.new")
    );
    let sigint = |previous| Scenario::Signal {
        signal: Signal::Int,
        delay: 0.3,
        previous,
    };
    let intruder = Scenario::Intruder {
        file: false,
        delay: 0.3,
    };
    let cases: Vec<(&str, String, Scenario, &str)> = vec![
        ("a clean interrupt", good.clone(), sigint(true), ""),
        (
            "SIGTERM exits 130",
            format!(r#"trap '{say_nothing}; exit 130' INT TERM; sleep 0.6 & wait $!; exit 0"#),
            Scenario::Signal {
                signal: Signal::Term,
                delay: 0.3,
                previous: false,
            },
            "expected 143",
        ),
        (
            "a staging directory left after a signal",
            format!(
                r#"trap 'mkdir "$(dirname "$4")/.harbor-staging-9-x"; {say_nothing}; exit 130' INT; sleep 0.6 & wait $!; exit 0"#
            ),
            sigint(false),
            ".harbor-staging-9-x",
        ),
        (
            "'no output was written' after replacing --out",
            format!(
                r#"OUT="$4"; replace() {{ rm -rf "$OUT"; {}; }}; trap 'replace; {say_nothing}; exit 130' INT; sleep 0.6 & wait $!; exit 0"#,
                fake_output_in(&status, "1.0", "$OUT")
            ),
            sigint(true),
            "stderr says no output was written",
        ),
        (
            "someone else's directory replaced",
            format!(r#"sleep 0.6; rm -rf "$4"; {write}; exit 0"#),
            intruder.clone(),
            "did not refuse",
        ),
        (
            "someone else's directory refused",
            format!(
                r#"sleep 0.6; if [ -e "$4" ]; then echo "error: --out: $4 appeared during the run" >&2; exit 1; fi; {write}; exit 0"#
            ),
            intruder,
            "",
        ),
        (
            "a replaced directory left by concurrent runs",
            format!(
                r#"sleep 0.2; mkdir -p "$(dirname "$4")/.harbor-replaced-$$"; rm -rf "$4"; {write}; exit 0"#
            ),
            Scenario::Concurrent {
                starts_ms: vec![5],
                previous: false,
            },
            ".harbor-replaced-",
        ),
        (
            "written through a symlink",
            format!("{write}; exit 0"),
            Scenario::Symlink(LinkTarget::EmptyDirectory),
            "was not refused",
        ),
        (
            "a symlink refused",
            r#"if [ -L "$4" ]; then echo "error: --out: $4 is a symlink" >&2; exit 1; fi; exit 0"#
                .into(),
            Scenario::Symlink(LinkTarget::Nothing),
            "",
        ),
    ];
    let limits = Limits {
        timeout: Duration::from_secs(5),
        size_timeout: Duration::from_secs(5),
        memory_bytes: 1 << 30,
        file_bytes: 1 << 20,
        machine_bytes: 1 << 30,
    };
    for (i, (name, script, scenario, problem)) in cases.into_iter().enumerate() {
        let bin = dir.path().join(format!("fake-{i}"));
        stand_in(&bin, &script);
        let scenario_dir = dir.path().join(format!("scenario-{i}"));
        std::fs::create_dir_all(&scenario_dir).unwrap();
        let judgement = run_scenario(
            &bin,
            &scenario,
            &scenario_dir,
            Duration::from_millis(600),
            &limits,
        );
        if problem.is_empty() {
            assert!(
                judgement.problems.is_empty(),
                "{name}: {:?}\n{}",
                judgement.problems,
                judgement.detail
            );
        } else {
            assert!(
                judgement.problems.iter().any(|p| p.contains(problem)),
                "{name}: the problems should mention {problem:?}: {:?}\n{}",
                judgement.problems,
                judgement.detail
            );
        }
    }
}

/// The oracle itself: stand-ins for the binary that panic, abort, hang, fail silently,
/// exit 0 with a non-finite total or leave a staging directory are each caught; a clean
/// error and a clean result pass, and a size-extreme case that runs long is not a hang.
#[test]
fn the_oracle_catches_each_kind_of_failure() {
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    use fuzz::cases::Case;
    use fuzz::run::{Limits, Outcome, run_case};

    // `$4` is the --out directory (simulate CONFIG --out OUT …). A finite member's status
    // file (int64 zero), copied in by the fake binary.
    let status_dir = tempfile::tempdir().unwrap();
    let status = status_file(status_dir.path());
    let summary = |energy: &str| {
        format!(
            r#"mkdir "$4" && cp '{}' "$4/" && printf '%s' '{{"members": 1, "energy": {{"stored_total": [{energy}]}}, "final_state": [[1.0]], "statistics": {{"energy": {{"stored_total": {{"count": 1, "nonfinite": 0, "min": 1.5}}}}, "final_state": [{{"count": 1, "nonfinite": 0}}]}}, "nonfinite": {{"members": 0, "first": []}}}}' > "$4/summary.json""#,
            status.display()
        )
    };
    let cases: Vec<(&str, String, bool, Outcome, &str)> = vec![
        (
            "clean error",
            "echo 'error: bad value' >&2; exit 1".into(),
            false,
            Outcome::Error,
            "",
        ),
        (
            "clean result",
            format!("{}; exit 0", summary("1.5")),
            false,
            Outcome::Finite,
            "",
        ),
        (
            "panic",
            "echo \"thread 'main' panicked at src/x.rs:1:1\" >&2; exit 101".into(),
            false,
            Outcome::Failed,
            "panic",
        ),
        (
            "abort",
            "kill -ABRT $$".into(),
            false,
            Outcome::Failed,
            "SIGABRT",
        ),
        ("hang", "sleep 30".into(), false, Outcome::Failed, "hang"),
        ("ran long", "sleep 30".into(), true, Outcome::RanLong, ""),
        (
            "silent failure",
            "exit 1".into(),
            false,
            Outcome::Failed,
            "without an `error",
        ),
        (
            "odd exit code",
            "echo 'error: x' >&2; exit 3".into(),
            false,
            Outcome::Failed,
            "exit code 3",
        ),
        (
            "non-finite result",
            format!("{}; exit 0", summary("null")),
            false,
            Outcome::Failed,
            "non-finite (null)",
        ),
        (
            "staging left behind",
            "mkdir \"$(dirname \"$4\")/.harbor-staging-1-x\"; echo 'error: boom' >&2; exit 1"
                .into(),
            false,
            Outcome::Failed,
            ".harbor-staging-1-x",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        timeout: Duration::from_millis(500),
        size_timeout: Duration::from_millis(500),
        memory_bytes: 1 << 30,
        file_bytes: 1 << 20,
        machine_bytes: 1 << 30,
    };
    for (i, (name, script, large, expected, problem)) in cases.into_iter().enumerate() {
        let bin = dir.path().join(format!("fake-{i}"));
        std::fs::write(&bin, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut case = Case::new(i, "fake", b"".to_vec());
        case.large = large;
        let case_dir = dir.path().join(format!("case-{i}"));
        std::fs::create_dir_all(&case_dir).unwrap();
        let verdict = run_case(&bin, &case, &case_dir, &limits);
        assert_eq!(verdict.outcome, expected, "{name}: {verdict:?}");
        if problem.is_empty() {
            assert!(
                verdict.problems.is_empty(),
                "{name}: {:?}",
                verdict.problems
            );
        } else {
            assert!(
                verdict.problems.iter().any(|p| p.contains(problem)),
                "{name}: the problems should mention {problem:?}: {:?}",
                verdict.problems
            );
        }
    }
}
