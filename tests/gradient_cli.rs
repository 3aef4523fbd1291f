//! `harbor gradient` end to end: gradient.json's shape for one candidate and for a batch,
//! the structure of every gradient, batch members equal to the same candidates evaluated
//! one at a time, and NPY data giving the same result as the CSV of the same values.

mod common;

use common::{example_path, run_harbor};
use serde_json::Value;

fn gradient(problem: &std::path::Path, sets: &[&str]) -> Value {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let mut args = vec![
        "gradient",
        problem.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--backend",
        "cpu",
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let output = run_harbor(&args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("gradient.json")).unwrap()).unwrap()
}

fn matrix(v: &Value) -> Vec<Vec<f64>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

fn assert_structured(evaluation: &Value, n: usize, m: usize) {
    assert!(evaluation["cost"].as_f64().unwrap() > 0.0);
    let g = &evaluation["grad"];
    let (j, r, q, b) = (
        matrix(&g["J"]),
        matrix(&g["R"]),
        matrix(&g["Q"]),
        matrix(&g["B"]),
    );
    assert_eq!((j.len(), j[0].len(), b.len(), b[0].len()), (n, n, n, m));
    assert_eq!(g["x0"].as_array().unwrap().len(), n);
    for i in 0..n {
        for k in 0..n {
            assert_eq!(j[i][k], -j[k][i], "∇J is skew");
            assert_eq!(r[i][k], r[k][i], "∇R is symmetric");
            assert_eq!(q[i][k], q[k][i], "∇Q is symmetric");
        }
    }
}

#[test]
fn one_candidate_and_a_batch_write_their_gradients() {
    let example = example_path("gradient_check.toml");
    let single = gradient(&example, &["scheme.h=0.01"]);
    assert_structured(&single, 5, 2);
    let draws = [
        "scheme.h=0.01",
        "candidates.members=3",
        "candidates.seed=5",
        "candidates.J={ kind = \"perturb\", sigma = 0.2 }",
        "candidates.R={ kind = \"perturb\", sigma = 0.2 }",
        "candidates.x0={ kind = \"perturb\", sigma = 0.2 }",
    ];
    let batch = gradient(&example, &draws);
    let list = batch.as_array().unwrap();
    assert_eq!(list.len(), 3);
    for evaluation in list {
        assert_structured(evaluation, 5, 2);
    }
    assert_ne!(list[0]["cost"], list[1]["cost"]);
    // Candidate i depends on (seed, i) alone: the first of a batch of one is the first of
    // the batch of three, to the bit.
    let first_alone = gradient(&example, &[&draws[..], &["candidates.members=1"]].concat());
    assert_eq!(first_alone.as_array().unwrap()[0], list[0]);
}

#[test]
fn npy_and_csv_data_give_the_same_gradient() {
    let dir = tempfile::tempdir().unwrap();
    let (steps, h) = (50usize, 0.02);
    let rows: Vec<[f64; 3]> = (0..=steps)
        .map(|k| {
            let t = k as f64 * h;
            [t, (3.0 * t).sin(), 0.5 * (7.0 * t).cos()]
        })
        .collect();
    let csv: String = rows
        .iter()
        .map(|r| format!("{:?},{:?},{:?}\n", r[0], r[1], r[2]))
        .collect();
    std::fs::write(dir.path().join("y.csv"), csv).unwrap();
    let array = ndarray::Array2::from_shape_fn((steps + 1, 3), |(k, c)| rows[k][c]);
    ndarray_npy::write_npy(dir.path().join("y.npy"), &array).unwrap();
    let text = std::fs::read_to_string(example_path("gradient_check.toml"))
        .unwrap()
        .replace(
            "[data.reference]\nkind = \"random\"",
            "[data.unused]\nkind = \"random\"",
        )
        .replace("h = 1e-3", "h = 0.02");
    let text = text.replace(
        "[data.unused]\nkind = \"random\"           # J = (A − Aᵀ)/√(2n), R = C Cᵀ/n, Q = I + D Dᵀ/n, B, x0 ~ N(0, 1)\nstates = 5\nseed = 1\n",
        "",
    );
    let problem = dir.path().join("problem.toml");
    std::fs::write(&problem, text).unwrap();
    let from_csv = gradient(
        &problem,
        &["data.file=\"y.csv\"", "gradient.checkpoint_every=5"],
    );
    let from_npy = gradient(
        &problem,
        &["data.file=\"y.npy\"", "gradient.checkpoint_every=5"],
    );
    assert_eq!(from_csv, from_npy);
    assert_structured(&from_csv, 5, 2);
}

/// Without `checkpoint_every`, a run keeps every forward state when all candidates' states
/// fit 64 MiB, and checkpoints every ⌈√N⌉ steps otherwise.
#[test]
fn the_default_checkpoint_spacing_stores_what_fits() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(example_path("gradient_check.toml")).unwrap();
    let start = text.find("[gradient]").unwrap();
    let end = start + text[start..].find("\n\n").unwrap();
    let problem = dir.path().join("problem.toml");
    std::fs::write(&problem, format!("{}{}", &text[..start], &text[end..])).unwrap();
    let spacing = |members: &str| {
        let out = dir.path().join(format!("run-{members}"));
        let output = run_harbor(&[
            "gradient",
            problem.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
            "--set",
            "scheme.h=0.01",
            "--set",
            &format!("candidates.members={members}"),
        ]);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "{stdout}");
        stdout
    };
    // 100 steps, n = 5: 4000 bytes per candidate, 64 MiB hold 16777.
    assert!(spacing("16000").contains("checkpoints every 1 step(s)"));
    assert!(spacing("17000").contains("checkpoints every 10 step(s)"));
}

#[test]
fn the_log_distance_of_q_is_measured_from_the_identity_unless_a_reference_is_given() {
    let example = example_path("gradient_check.toml");
    let identity = "cost.reference.Q=[[1.0,0.0,0.0,0.0,0.0],[0.0,1.0,0.0,0.0,0.0],\
                    [0.0,0.0,1.0,0.0,0.0],[0.0,0.0,0.0,1.0,0.0],[0.0,0.0,0.0,0.0,1.0]]";
    let penalised = [
        "scheme.h=0.01",
        "cost.regularization=0.5",
        "cost.regularized=[\"Q\"]",
        "cost.q_distance=\"log\"",
    ];
    let plain = gradient(&example, &["scheme.h=0.01"]);
    let by_default = gradient(&example, &penalised);
    let explicit = gradient(&example, &[&penalised[..], &[identity]].concat());
    assert_eq!(by_default, explicit);
    assert_structured(&by_default, 5, 2);
    let cost = |v: &Value| v["cost"].as_f64().unwrap();
    assert!(cost(&by_default) > cost(&plain));
    // Only Q is penalised: the other parts' gradients are untouched, Q's moves.
    for part in ["J", "R", "B", "x0"] {
        assert_eq!(by_default["grad"][part], plain["grad"][part], "∇{part}");
    }
    assert_ne!(by_default["grad"]["Q"], plain["grad"]["Q"]);
}
