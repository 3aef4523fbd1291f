//! `harbor gradient` refuses bad problems with an error that names the field, the violated
//! property and the value, and leaves no output behind: a data grid that does not match h,
//! the wrong number of output channels or samples, NaN in the data, candidates that violate
//! the structure, and misconfigured data, cost and checkpoint settings.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_mentions, command_outcome, example_path};

fn fails(problem: &Path, overrides: &[&str]) -> String {
    match command_outcome("gradient", problem, overrides) {
        Ok(stdout) => panic!("expected failure with {overrides:?}, stdout: {stdout}"),
        Err(stderr) => stderr,
    }
}

/// The example with `[data]` read from a CSV file written by `rows`: t_k = k h for
/// k = 0…N (N = 100, h = 0.01) unless `rows` says otherwise.
fn with_data(dir: &Path, csv: &str) -> PathBuf {
    let data = dir.join("data.csv");
    std::fs::write(&data, csv).unwrap();
    let text = std::fs::read_to_string(example_path("gradient_check.toml")).unwrap();
    let text = text
        .replace("[data.reference]", "[data.unused]")
        .replace("[data]", "[data]\nfile = \"data.csv\"")
        .replace("h = 1e-3", "h = 0.01");
    let text = text.replace(
        "[data.unused]\nkind = \"random\"           # J = (A − Aᵀ)/√(2n), R = C Cᵀ/n, Q = I + D Dᵀ/n, B, x0 ~ N(0, 1)\nstates = 5\nseed = 1\n",
        "",
    );
    let problem = dir.join("problem.toml");
    std::fs::write(&problem, text).unwrap();
    problem
}

fn csv(rows: usize, h: f64, columns: usize, bad: Option<(usize, &str)>) -> String {
    let mut text = String::from("t,y1,y2\n");
    for k in 0..rows {
        let mut row: Vec<String> = vec![format!("{}", k as f64 * h)];
        row.extend((1..columns).map(|c| format!("{}", 0.1 * c as f64)));
        if let Some((at, value)) = bad
            && at == k
        {
            row[1] = value.to_string();
        }
        text.push_str(&row.join(","));
        text.push('\n');
    }
    text
}

#[test]
fn good_csv_data_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let problem = with_data(dir.path(), &csv(101, 0.01, 3, None));
    let stdout = command_outcome("gradient", &problem, &["gradient.checkpoint_every=10"]).unwrap();
    assert!(stdout.contains("cost"), "{stdout}");
}

#[test]
fn a_data_grid_that_does_not_match_h_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let problem = with_data(dir.path(), &csv(101, 0.02, 3, None));
    let e = fails(&problem, &[]);
    assert_mentions(
        &e,
        &[
            "data.file",
            "row 1 has t = 0.02",
            "t_k = k h = 0.01",
            "does not match h",
        ],
    );
}

#[test]
fn the_wrong_number_of_channels_or_samples_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let problem = with_data(dir.path(), &csv(101, 0.01, 2, None));
    let e = fails(&problem, &[]);
    assert_mentions(
        &e,
        &["data.file", "row 0 has 2 column(s)", "expected 1 + m = 3"],
    );
    let problem = with_data(dir.path(), &csv(100, 0.01, 3, None));
    let e = fails(&problem, &[]);
    assert_mentions(&e, &["data.file", "has 100 row(s)", "N + 1 = 101"]);
}

#[test]
fn nan_in_the_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let problem = with_data(dir.path(), &csv(101, 0.01, 3, Some((7, "NaN"))));
    let e = fails(&problem, &[]);
    assert_mentions(&e, &["data.file", "row 7, column 1 is NaN", "finite"]);
    let problem = with_data(dir.path(), &csv(101, 0.01, 3, Some((3, "abc"))));
    let e = fails(&problem, &[]);
    assert_mentions(
        &e,
        &["data.file", "line 5, column 1", "\"abc\" is not a number"],
    );
}

#[test]
fn candidates_violating_the_structure_are_refused() {
    // The example with an explicit 2-state candidate in place of the random one.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(example_path("gradient_check.toml"))
        .unwrap()
        .replace(
            "[candidate]\nkind = \"random\"\nstates = 5\nseed = 2\n",
            "[candidate]\nJ = [[0.0, 1.0], [-1.0, 0.0]]\nQ = [[1.0, 0.0], [0.0, 1.0]]\nB = [[1.0, 0.0], [0.0, 1.0]]\nx0 = [0.0, 0.0]\n",
        );
    let problem = dir.path().join("problem.toml");
    std::fs::write(&problem, text).unwrap();
    command_outcome("gradient", &problem, &[]).unwrap();
    let cases: [(&str, &[&str]); 5] = [
        (
            "candidate.J=[[0.0, 1.0], [1.0, 0.0]]",
            &["candidate.J", "skew"],
        ),
        (
            "candidate.R=[[1.0, 0.0], [0.0, -0.5]]",
            &["candidate.R", "positive semidefinite", "-5"],
        ),
        (
            "candidate.Q=[[1.0, 2.0], [2.0, 1.0]]",
            &["candidate.Q", "positive definite"],
        ),
        (
            "candidate.B=[[1.0], [0.0]]",
            &["candidate.B", "1 column(s) but 2 input signal(s)"],
        ),
        (
            "candidate.states=3",
            &["candidate", "unknown field `states`"],
        ),
    ];
    for (set, expected) in cases {
        let e = fails(&problem, &[set]);
        assert_mentions(&e, expected);
    }
}

#[test]
fn misconfigured_problems_are_refused() {
    let example = example_path("gradient_check.toml");
    let cases: [(&[&str], &[&str]); 11] = [
        // λ = 10³⁰⁸ times ‖w − w_ref‖² overflows: the cost was written as null (exit 0).
        (
            &["cost.regularization=1e308"],
            &[
                "cost.regularization",
                "1e308",
                "overflow",
                "lower cost.regularization",
            ],
        ),
        (
            &["gradient.checkpoint_every=0"],
            &["gradient.checkpoint_every", "≥ 1", "got 0"],
        ),
        (
            &["cost.regularization=-1.0"],
            &["cost.regularization", "≥ 0", "-1"],
        ),
        (&["data.noise=-0.1"], &["data.noise", "≥ 0", "-0.1"]),
        (
            &["data.file=\"y.csv\""],
            &["data", "exactly one of data.file", "[data.reference]"],
        ),
        (
            &["scheme.family=\"lobatto-pair\""],
            &["scheme.family", "lobatto-pair"],
        ),
        (
            &["cost.quadrature=\"simpson\""],
            &["cost.quadrature", "unknown variant `simpson`"],
        ),
        (
            &["cost.q_distance=\"geodesic\""],
            &["cost.q_distance", "unknown variant `geodesic`", "log"],
        ),
        (
            &[
                "cost.regularization=0.1",
                "cost.q_distance=\"log\"",
                "cost.reference.Q=[[1.0,0.0,0.0,0.0,0.0],[0.0,1.0,0.0,0.0,0.0],[0.0,0.0,1.0,0.0,0.0],[0.0,0.0,0.0,1.0,0.0],[0.0,0.0,0.0,0.0,-0.5]]",
            ],
            &[
                "cost.reference.Q",
                "positive definite",
                "q_distance",
                "-5.000e-1",
            ],
        ),
        (
            &[
                "cost.q_distance=\"log\"",
                "cost.reference.Q=[[1.0,0.0,0.0,0.0,0.0],[0.0,1.0,0.0,0.0,0.0],[0.0,0.0,1.0,0.0,0.0],[0.0,0.0,0.0,1.0,0.0],[0.0,0.0,0.0,0.0,1e-300]]",
            ],
            &["cost.reference.Q", "positive definite", "1.000e-300"],
        ),
        (
            &["cost.q_distance=\"log\"", "cost.regularized=[\"J\",\"R\"]"],
            &[
                "cost.q_distance",
                "Q is not among the penalised parts",
                "cost.regularized",
            ],
        ),
    ];
    for (overrides, expected) in cases {
        let e = fails(&example, overrides);
        assert_mentions(&e, expected);
    }
}

#[test]
fn a_batch_whose_gradients_exceed_the_memory_budget_is_refused() {
    let example = example_path("gradient_check.toml");
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("run");
    let output = common::run_harbor(&[
        "gradient",
        example.to_str().unwrap(),
        "--out",
        target.to_str().unwrap(),
        "--backend",
        "cpu",
        "--memory-budget",
        "16MiB",
        "--set",
        "candidate.states=30",
        "--set",
        "candidates.members=1000",
    ]);
    assert!(!output.status.success());
    let e = String::from_utf8_lossy(&output.stderr);
    assert_mentions(
        &e,
        &[
            "candidates.members",
            "1000 candidate(s) (n = 30, m = 2)",
            "memory budget of 16",
        ],
    );
    assert!(!target.exists());
}
