//! A config fuzzer of `harbor simulate`: every case runs the real binary as its own process
//! on a config derived from one of `examples/*.toml` (malformed, extreme, oversized, with
//! odd `--set` overrides, CSV inputs and output locations; see `fuzz/cases.rs`), and must
//! not panic, abort, hang past its limit, or exit 0 with a non-finite result; a failure
//! must say `error: …` and leave the output location as it was (see `fuzz/run.rs`).
//!
//! ```text
//! cargo test --release --test fuzz_configs -- --nocapture                  # 1000 cases
//! HARBOR_FUZZ_CASES=100000 cargo test --release --test fuzz_configs -- --nocapture
//! ```
//!
//! Environment: `HARBOR_FUZZ_CASES` (default 1000), `HARBOR_FUZZ_SEED` (else
//! `HARBOR_TEST_SEED`, else a fresh seed, printed), `HARBOR_FUZZ_JOBS` (default: all
//! cores), `HARBOR_FUZZ_GPU_CASES` (default 8; they run `--backend gpu` and, like the other
//! GPU tests, fail rather than skip without an adapter), `HARBOR_FUZZ_ONLY` (case indices to
//! replay), `HARBOR_FUZZ_BINARY` (run a copy of the binary, so that a rebuild during a long
//! campaign does not swap it), `HARBOR_FUZZ_TIMEOUT_S` (default 20), `HARBOR_FUZZ_SIZE_TIMEOUT_S` (default 5).
//! The counts per outcome, class, mutation kind and example are printed and written to
//! `target/tmp/fuzz_configs_report.txt`.

mod fuzz;

#[test]
fn simulate_survives_fuzzed_configs() {
    fuzz::fuzz(&fuzz::Settings::from_env());
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
    let status = status_dir.path().join("nonfinite_step.npy");
    let mut stream = harbor::io::npy_stream::NpyStream::create_of(
        &status,
        &[1],
        harbor::io::npy_stream::Element::I64,
    )
    .unwrap();
    stream.write_rows_i64(0, &[0]).unwrap();
    stream.finish().unwrap();
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
