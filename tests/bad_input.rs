//! Every bad input gets a clear error naming the field, the violated property and the
//! measured value; the command exits non-zero and writes nothing.

mod common;

use std::path::Path;
use std::process::Command;

/// Runs `harbor simulate` on the pulse example with overrides; returns stderr after
/// asserting failure and that the output directory was not created.
use common::{assert_mentions, simulate_fails_with};

fn simulate_fails(overrides: &[&str]) -> String {
    simulate_fails_with(&common::example_path("oscillator_pulse.toml"), overrides)
}

#[test]
fn non_skew_j() {
    let e = simulate_fails(&["system.J=[[0.0, 1.0], [1.0, 0.0]]"]);
    assert_mentions(
        &e,
        &["system.J", "not skew-symmetric", "max |J + Jᵀ| = 2.000e0"],
    );
}

#[test]
fn indefinite_r() {
    let e = simulate_fails(&["system.R=[[0.0, 0.0], [0.0, -0.1]]"]);
    assert_mentions(
        &e,
        &[
            "system.R",
            "not positive semidefinite",
            "smallest eigenvalue -1.000e-1",
        ],
    );
}

#[test]
fn asymmetric_r() {
    let e = simulate_fails(&["system.R=[[0.0, 0.5], [0.0, 0.1]]"]);
    assert_mentions(&e, &["system.R", "not symmetric", "5.000e-1"]);
}

#[test]
fn q_not_positive_definite() {
    let e = simulate_fails(&["system.Q=[[1.0, 0.0], [0.0, -2.0]]"]);
    assert_mentions(
        &e,
        &[
            "system.Q",
            "not positive definite",
            "smallest eigenvalue -2.000e0",
        ],
    );
    let e = simulate_fails(&["system.Q=[[1.0, 0.0], [0.0, 0.0]]"]);
    assert_mentions(
        &e,
        &[
            "system.Q",
            "not positive definite",
            "smallest eigenvalue 0.000e0",
        ],
    );
}

#[test]
fn wrong_shapes() {
    let e = simulate_fails(&["system.Q=[[1.0, 0.0]]"]);
    assert_mentions(
        &e,
        &[
            "system.Q",
            "wrong shape",
            "expected 2×2",
            "n = 2 from system.x0",
            "found 1 rows",
        ],
    );
    let e = simulate_fails(&["system.J=[[0.0, 1.0], [-1.0]]"]);
    assert_mentions(&e, &["system.J", "row 1 has 1 entries"]);
    let e = simulate_fails(&["system.B=[[0.0, 1.0], [1.0, 0.0]]"]);
    assert_mentions(
        &e,
        &["input", "system.B has 2 column(s) but 1 input signal(s)"],
    );
    let e = simulate_fails(&["system.x0=[]"]);
    assert_mentions(&e, &["system.x0", "at least one entry"]);
}

#[test]
fn nan_entries() {
    let e = simulate_fails(&["system.Q=[[1.0, nan], [nan, 1.0]]"]);
    assert_mentions(&e, &["system.Q[0][1]", "not finite", "NaN"]);
    let e = simulate_fails(&["system.x0=[0.0, inf]"]);
    assert_mentions(&e, &["system.x0[1]", "not finite", "inf"]);
}

#[test]
fn unknown_config_keys() {
    let e = simulate_fails(&["scheme.step=0.1"]);
    assert_mentions(&e, &["scheme", "unknown field `step`"]);
    let e = simulate_fails(&["simulation.h=0.1"]);
    assert_mentions(&e, &["unknown field `simulation`"]);
    let e = simulate_fails(&["input.0.frequency=2.0"]);
    assert_mentions(&e, &["input[0]", "unknown field `frequency`"]);
    let e = simulate_fails(&["system.kind=\"electrical\""]);
    assert_mentions(
        &e,
        &[
            "system.kind",
            "unknown kind \"electrical\"",
            "expected linear-ph, mechanical, contact, port-hamiltonian or variational",
        ],
    );
}

#[test]
fn non_positive_step() {
    let e = simulate_fails(&["scheme.h=0.0"]);
    assert_mentions(&e, &["scheme.h", "must be a finite number > 0", "got 0"]);
    let e = simulate_fails(&["scheme.h=-0.01"]);
    assert_mentions(&e, &["scheme.h", "got -0.01"]);
    let e = simulate_fails(&["scheme.h=0.07"]);
    assert_mentions(&e, &["scheme.h", "whole number of steps", "18 / 0.07"]);
    let e = simulate_fails(&["scheme.t_end=nan"]);
    assert_mentions(&e, &["scheme.t_end", "got NaN"]);
}

#[test]
fn stages_out_of_range() {
    let e = simulate_fails(&["scheme.stages=9"]);
    assert_mentions(&e, &["scheme.stages", "gauss supports 1..=8 stages, got 9"]);
    let e = simulate_fails(&["scheme.family=lobatto-pair", "scheme.stages=1"]);
    assert_mentions(
        &e,
        &["scheme.stages", "lobatto-pair supports 2..=6 stages, got 1"],
    );
    let e = simulate_fails(&["scheme.stages=-1"]);
    assert_mentions(
        &e,
        &["scheme.stages", "expected a whole number ≥ 0, got -1"],
    );
}

#[test]
fn missing_input_file() {
    let e = simulate_fails(&["input.0={kind = \"csv\", path = \"no_such_samples.csv\"}"]);
    assert_mentions(
        &e,
        &[
            "input[0].path",
            "cannot open",
            "no_such_samples.csv",
            "No such file",
        ],
    );
}

#[test]
fn bad_csv_contents() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("u.csv");
    std::fs::write(&csv, "t,u\n0.0,1.0\n1.0,2.0\n0.5,3.0\n").unwrap();
    let set = format!("input.0={{kind = \"csv\", path = \"{}\"}}", csv.display());
    let e = simulate_fails(&[&set]);
    assert_mentions(
        &e,
        &[
            "input[0].path",
            "line 4",
            "times must increase strictly: 0.5 follows 1",
        ],
    );
    std::fs::write(&csv, "t,u\n0.0,1.0\n1.0,abc\n").unwrap();
    let e = simulate_fails(&[&set]);
    assert_mentions(&e, &["line 3", "\"abc\" is not a number"]);
    std::fs::write(&csv, "0.0,1.0\n20.0,2.0\n").unwrap();
    let e = simulate_fails(&[&set, "scheme.t_end=30.0"]);
    assert_mentions(&e, &["input[0]", "cover [0, 20]", "needs [0, 30]"]);
}

/// Only the first row of a CSV input may be a header: a second non-numeric row is an error
/// naming the file, its line (counted with the header, comments and blank lines) and the
/// value, not a row skipped in silence.
#[test]
fn csv_rows_after_the_header_must_be_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("u.csv");
    let path = csv.display().to_string();
    std::fs::write(&csv, "t,u\nunits,V\n0.0,1.0\n20.0,2.0\n").unwrap();
    for column in ["1", "\"u\""] {
        let set = format!("input.0={{kind = \"csv\", path = \"{path}\", column = {column}}}");
        let e = simulate_fails(&[&set]);
        assert_mentions(
            &e,
            &[
                "input[0].path",
                &path,
                "line 2",
                "\"units\" is not a number",
            ],
        );
    }
    std::fs::write(&csv, "# samples\nt,u\n\n0.0,1.0\n1.0,abc\n").unwrap();
    let set = format!("input.0={{kind = \"csv\", path = \"{path}\"}}");
    let e = simulate_fails(&[&set]);
    assert_mentions(&e, &[&path, "line 5", "\"abc\" is not a number"]);
}

/// A `--set` value that starts like TOML but does not parse is an error naming its key and
/// showing it (not a string handed on), and an integer beyond TOML's 64 bits says so.
#[test]
fn malformed_set_values_name_their_key() {
    let e = simulate_fails(&["system.x0=[0.5,"]);
    assert_mentions(&e, &["system.x0:", "\"[0.5,\"", "is not valid TOML"]);
    assert!(!e.contains("invalid type"), "{e}");
    let e = simulate_fails(&["scheme.h=0.01.5"]);
    assert_mentions(&e, &["scheme.h:", "\"0.01.5\"", "is not valid TOML"]);
    let e = simulate_fails(&["ensemble.members=18446744073709551615"]);
    assert_mentions(
        &e,
        &[
            "ensemble.members:",
            "18446744073709551615 is out of range for an integer",
            "9223372036854775807",
        ],
    );
    let e = simulate_fails(&["system.x0=0.5"]);
    assert_mentions(&e, &["system.x0:", "expected a list [ … ], got 0.5"]);
}

/// `[study]` entries are checked where they are read and blamed on themselves, not on the
/// `[scheme]` values they stand in for.
#[test]
fn study_values_are_named_as_study_values() {
    let e = simulate_fails(&["study.h=[0.1,-0.05]"]);
    assert_mentions(
        &e,
        &["study.h[1]", "must be a finite number > 0, got -0.05"],
    );
    assert!(!e.contains("scheme.h"), "{e}");
    let e = simulate_fails(&["study.schemes=[{family = 'gauss', stages = 9}]"]);
    assert_mentions(&e, &["study.schemes[0].stages", "1..=8", "got 9"]);
    let e = simulate_fails(&["study.fit_decades=0.0"]);
    assert_mentions(&e, &["study.fit_decades", "got 0"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(["study", "energy-order"])
        .arg(common::example_path("oscillator_pulse.toml"))
        .arg("--out")
        .arg(&out)
        .args(["--set", "study.h=[0.1,-0.05]"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_mentions(
        &String::from_utf8_lossy(&output.stderr),
        &["study.h[1]", "got -0.05"],
    );
    assert!(!out.exists());
    // A study step that does not divide t_end is blamed on it by study_plan.
    use harbor::linear_ph::LinearPhConfig;
    let config = common::example("oscillator_pulse.toml", &["study.h=[0.1, 0.07]"]);
    let choice = harbor::io::config::SchemeChoice {
        family: harbor::io::config::MethodFamily::Gauss,
        stages: 2,
    };
    assert!(config.study_plan(choice, 0).is_ok());
    let e = config.study_plan(choice, 1).unwrap_err().to_string();
    assert_mentions(&e, &["study.h[1]", "whole number"]);
}

/// Numbers in messages are short: 1e300 is written as such, not as 301 digits.
#[test]
fn huge_values_are_shown_in_exponent_form() {
    let e = simulate_fails(&["input.0={kind = \"square\", frequency = 1.0, duty = 1e300}"]);
    assert_mentions(&e, &["input[0].duty", "got 1e300"]);
    assert!(e.len() < 200, "{e}");
}

#[test]
fn bad_signal_parameters() {
    let e = simulate_fails(&["input.0={kind = \"square\", frequency = 1.0, duty = 1.5}"]);
    assert_mentions(&e, &["input[0].duty", "must lie in [0, 1], got 1.5"]);
    let e = simulate_fails(&["input.0={kind = \"pulse\", start = 10.0, end = 8.0}"]);
    assert_mentions(&e, &["input[0].end", "greater than start = 10, got 8"]);
}

#[test]
fn lobatto_pair_needs_canonical_form() {
    let e = simulate_fails(&[
        "scheme.family=lobatto-pair",
        "scheme.stages=3",
        "system.J=[[0.0, 2.0], [-2.0, 0.0]]",
    ]);
    assert_mentions(&e, &["system.J", "canonical J", "max deviation 1.000e0"]);
    let e = simulate_fails(&[
        "scheme.family=lobatto-pair",
        "scheme.stages=3",
        "system.Q=[[2.0, 0.5], [0.5, 1.0]]",
    ]);
    assert_mentions(&e, &["system.Q", "block-diagonal", "5.000e-1"]);
}

#[test]
fn malformed_overrides_and_files() {
    let e = simulate_fails(&["scheme.h"]);
    assert_mentions(&e, &["--set", "expected key=value"]);
    let e = simulate_fails(&["input.3.amplitude=1.0"]);
    assert_mentions(&e, &["--set", "index 3 is out of range", "1 element(s)"]);
    let e = simulate_fails_with(Path::new("/nonexistent/harbor.toml"), &[]);
    assert_mentions(&e, &["/nonexistent/harbor.toml", "No such file"]);
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "[scheme\nfamily = 'gauss'\n").unwrap();
    let e = simulate_fails_with(&broken, &[]);
    assert_mentions(&e, &["broken.toml", "line 1"]);
}

#[test]
fn tableau_command_rejects_bad_arguments() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_harbor"))
            .arg("tableau")
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert_mentions(
        &run(&["radau", "3"]),
        &["family", "unknown family \"radau\""],
    );
    assert_mentions(
        &run(&["lobatto-iiib", "7"]),
        &["stages", "lobatto-iiib supports 2..=6 stages, got 7"],
    );
}

/// A CSV column must be an index ≥ 0 or a header name; the message says which it got.
#[test]
fn csv_columns_are_indices_or_names() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("u.csv");
    std::fs::write(&csv, "t,u\n0.0,1.0\n20.0,2.0\n").unwrap();
    let path = csv.display().to_string();
    let set =
        |column: &str| format!("input.0={{kind = \"csv\", path = \"{path}\", column = {column}}}");
    let e = simulate_fails(&[&set("-1")]);
    assert_mentions(&e, &["input[0]", "column index -1 is negative"]);
    let e = simulate_fails(&[&set("1.0")]);
    assert_mentions(&e, &["input[0]", "got 1.0", "zero-based column index"]);
}

/// A drawn initial state that overflows is blamed on ensemble.x0, not on Q.
#[test]
fn an_overflowing_initial_state_draw_names_ensemble_x0() {
    let e = simulate_fails_with(
        &common::example_path("oscillator_ensemble.toml"),
        &[
            "ensemble.x0={kind=\"perturb\",sigma=1.79e308}",
            "ensemble.members=4",
        ],
    );
    assert_mentions(&e, &["ensemble.x0:", "overflows the initial state"]);
}
