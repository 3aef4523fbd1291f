//! `harbor export-members` through the binary: the files hold exactly the plan's members,
//! stage inputs and step operators, and stepping x_{k+1} = x_k + Δ [x_k; U_k] with them
//! reproduces `harbor simulate --backend cpu`; contact configs and oversized exports are
//! refused before anything is written.

mod common;

use harbor::io::Config;
use harbor::linear_ph::LinearPhConfig;
use harbor::linear_ph::StepOperators;
use ndarray::{Array2, Array3};
use ndarray_npy::read_npy;

/// A drawn ensemble of n = 4 members with two inputs that are not zero on the run, every
/// parameter drawn.
const CONFIG: &str = r#"
[system]
kind = "linear-ph"
J = [[0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 1.0, 0.0], [0.0, -1.0, 0.0, 1.0], [0.0, 0.0, -1.0, 0.0]]
R = [[0.1, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.05, 0.0], [0.0, 0.0, 0.0, 0.0]]
Q = [[2.0, 0.5, 0.0, 0.0], [0.5, 1.0, 0.0, 0.0], [0.0, 0.0, 1.5, 0.0], [0.0, 0.0, 0.0, 1.0]]
B = [[0.0, 1.0], [1.0, 0.0], [0.0, 0.5], [0.3, 0.0]]
x0 = [0.5, -1.0, 0.25, 0.0]

[[input]]
kind = "sine"
frequency = 0.7

[[input]]
kind = "square"
frequency = 1.3

[scheme]
family = "gauss"
stages = 3
h = 0.02
t_end = 2.0

[output]
every = 100

[ensemble]
members = 37
seed = 7
J = { kind = "perturb", sigma = 0.1 }
R = { kind = "random", scale = 0.05 }
Q = { kind = "perturb", sigma = 0.1 }
B = { kind = "perturb", sigma = 0.1 }
x0 = { kind = "random", scale = 1.0 }
"#;

fn run(args: &[&str]) -> std::process::Output {
    let output = common::run_harbor(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    output
}

fn rows(array: &[f64], row: usize) -> Vec<&[f64]> {
    array.chunks_exact(row).collect()
}

#[test]
fn the_export_holds_the_plan_and_steps_to_the_cpu_final_state() {
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("ensemble.toml");
    std::fs::write(&config_path, CONFIG).unwrap();
    let (config, export, sim) = (
        config_path.to_str().unwrap(),
        dir.path().join("export"),
        dir.path().join("sim"),
    );
    let output = run(&["export-members", config, "--out", export.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    let output = run(&[
        "simulate",
        config,
        "--out",
        sim.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(output.status.success(), "{output:?}");

    let plan = Config::load(&config_path, &[]).unwrap().plan().unwrap();
    let (members, n, m, s, steps) = (37, 4, 2, 3, 100);
    let p = n + s * m;
    let scheme: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(export.join("scheme.json")).unwrap())
            .unwrap();
    assert_eq!(scheme["family"], "gauss");
    assert_eq!(scheme["stages"], s);
    assert_eq!(scheme["order"], 6);
    assert_eq!(scheme["h"], 0.02);
    assert_eq!(scheme["steps"], steps);
    assert_eq!(scheme["members"], members);
    assert_eq!(scheme["states"], n);
    assert_eq!(scheme["inputs"], m);
    assert_eq!(scheme["c"], serde_json::json!(plan.scheme.c));
    assert_eq!(scheme["b"], serde_json::json!(plan.scheme.b));
    assert_eq!(scheme["a"][1][2], plan.scheme.a_positions[(1, 2)]);

    let read3 = |name: &str| -> Array3<f64> { read_npy(export.join(name)).unwrap() };
    let (j, r, q, b, delta, inputs) = (
        read3("J.npy"),
        read3("R.npy"),
        read3("Q.npy"),
        read3("B.npy"),
        read3("delta.npy"),
        read3("inputs.npy"),
    );
    let x0: Array2<f64> = read_npy(export.join("x0.npy")).unwrap();
    assert_eq!(j.shape(), [members, n, n]);
    assert_eq!(b.shape(), [members, n, m]);
    assert_eq!(delta.shape(), [members, n, p]);
    assert_eq!(inputs.shape(), [steps, s, m]);
    assert_eq!(x0.shape(), [members, n]);
    for i in 0..members {
        let member = plan.ensemble.member(i).unwrap();
        let system = &member.system;
        for row in 0..n {
            for col in 0..n {
                assert_eq!(j[[i, row, col]], system.j[(row, col)], "J of member {i}");
                assert_eq!(r[[i, row, col]], system.r[(row, col)], "R of member {i}");
                assert_eq!(q[[i, row, col]], system.q[(row, col)], "Q of member {i}");
            }
            for col in 0..m {
                assert_eq!(b[[i, row, col]], system.b[(row, col)], "B of member {i}");
            }
            assert_eq!(x0[[i, row]], member.x0[row], "x0 of member {i}");
        }
        let ops = StepOperators::new(&plan, &member).unwrap();
        let exported: Vec<f64> = delta
            .slice(ndarray::s![i, .., ..])
            .iter()
            .copied()
            .collect();
        assert_eq!(exported, ops.delta, "Δ of member {i}");
    }
    let mut scratch = Vec::new();
    let flat_inputs: Vec<f64> = inputs.iter().copied().collect();
    let input_rows = rows(&flat_inputs, s * m);
    for (k, row) in input_rows.iter().enumerate() {
        assert_eq!(*row, plan.inputs.step(k, &mut scratch), "U_{k}");
    }
    assert!(
        flat_inputs.iter().any(|&u| u != 0.0),
        "the inputs act on the run"
    );

    let harbor_final: Array2<f64> = read_npy(sim.join("final_state.npy")).unwrap();
    let scale = harbor_final.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for i in 0..members {
        let mut x: Vec<f64> = x0.row(i).to_vec();
        for u in &input_rows {
            let v: Vec<f64> = x.iter().chain(u.iter()).copied().collect();
            let step: Vec<f64> = (0..n)
                .map(|row| (0..p).map(|col| delta[[i, row, col]] * v[col]).sum())
                .collect();
            x.iter_mut().zip(&step).for_each(|(x, d)| *x += d);
        }
        for row in 0..n {
            let difference = (x[row] - harbor_final[[i, row]]).abs() / scale;
            assert!(
                difference <= 1e-12,
                "member {i}, x[{row}]: stepped with the export {} vs harbor {} (relative {difference:e})",
                x[row],
                harbor_final[[i, row]]
            );
        }
    }
}

#[test]
fn contact_configs_and_oversized_exports_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("export");
    let contact = common::example_path("contact_damped_oscillator.toml");
    let output = run(&[
        "export-members",
        contact.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    common::assert_mentions(&String::from_utf8_lossy(&output.stderr), &["system.kind"]);
    assert!(!out.exists());

    let ensemble = common::example_path("oscillator_ensemble.toml");
    let output = run(&[
        "export-members",
        ensemble.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "ensemble.members=100000000",
    ]);
    assert!(!output.status.success());
    common::assert_mentions(
        &String::from_utf8_lossy(&output.stderr),
        &["--out", "ensemble.members = 100000000", "bytes", "8 GiB"],
    );
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_export_exists_only_once_complete() {
    // A member whose draw fails partway (x0 overflows for some member) leaves no files.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("export");
    let ensemble = common::example_path("oscillator_ensemble.toml");
    let output = run(&[
        "export-members",
        ensemble.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "ensemble.members=64",
        "--set",
        "ensemble.x0={ kind = \"random\", scale = 1e308 }",
    ]);
    assert!(!output.status.success(), "{output:?}");
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
