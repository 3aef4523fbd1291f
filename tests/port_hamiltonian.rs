//! Nonlinear port-Hamiltonian models written as expressions: a quadratic H gives the
//! linear-PH family's results, Gauss s = 1, 2, 3 converge with order 2s on a forced damped
//! pendulum against an independent reference of the continuous system, the energy balance
//! is exact for quadratic H, members depend only on (seed, i), and bad models are refused
//! naming the field and the place in the expression.

mod common;

use harbor::backend::Backend;
use harbor::io::Config;
use harbor::kernels::{CpuPath, Family};
use harbor::linear_ph::LinearPhConfig;
use harbor::port_hamiltonian::{PortHamiltonianConfig, PortHamiltonianPlan};

fn config(text: &str, overrides: &[&str]) -> Config {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::from_str_with(text, &overrides, "test").unwrap()
}

fn plan(text: &str, overrides: &[&str]) -> PortHamiltonianPlan {
    config(text, overrides).port_hamiltonian_plan().unwrap()
}

fn plan_error(text: &str, overrides: &[&str]) -> String {
    config(text, overrides)
        .port_hamiltonian_plan()
        .unwrap_err()
        .to_string()
}

const INPUT_AND_SCHEME: &str = r#"
[[input]]
kind = "sine"
amplitude = 0.5
frequency = 0.3

[scheme]
family = "gauss"
stages = 2
h = 0.01
t_end = 2.0

[output]
every = 10
"#;

/// H = ½ xᵀ Q x with constant J, R, B written as expressions, against `kind = "linear-ph"`.
#[test]
fn a_quadratic_hamiltonian_gives_the_linear_family_results() {
    let linear = format!(
        r#"
[system]
kind = "linear-ph"
J = [[0.0, 1.0, 0.0], [-1.0, 0.0, 0.5], [0.0, -0.5, 0.0]]
R = [[0.0, 0.0, 0.0], [0.0, 0.2, 0.05], [0.0, 0.05, 0.1]]
Q = [[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 1.5]]
B = [[0.0], [1.0], [0.2]]
x0 = [1.0, -0.5, 0.25]
{INPUT_AND_SCHEME}"#
    );
    let nonlinear = format!(
        r#"
[system]
kind = "port-hamiltonian"
states = ["a", "b", "c"]
parameters = {{ k = 0.3 }}
H = "0.5*(2*a^2 + 2*k*a*b + b^2 + 0.2*b*c + 1.5*c^2)"
J = [[0, 1, 0], [-1, 0, 0.5], [0, -0.5, 0]]
R = [[0, 0, 0], [0, 0.2, 0.05], [0, 0.05, 0.1]]
G = [[0], [1], [0.2]]
x0 = [1.0, -0.5, 0.25]
{INPUT_AND_SCHEME}"#
    );
    for stages in ["1", "2", "3"] {
        let set = [format!("scheme.stages={stages}")];
        let set: Vec<&str> = set.iter().map(String::as_str).collect();
        let reference = config(&linear, &set).plan().unwrap();
        let expressions = plan(&nonlinear, &set);
        let a = Backend::Cpu(CpuPath::Reference).run(&reference).unwrap();
        let b = Backend::Cpu(CpuPath::Reference).run(&expressions).unwrap();
        let (a, b) = (&a.members[0], &b.members[0]);
        let close = |x: f64, y: f64, scale: f64| (x - y).abs() <= 1e-12 * scale;
        assert_eq!(a.trajectory.len(), b.trajectory.len());
        for (x, y) in a.trajectory.iter().zip(&b.trajectory) {
            assert!(
                close(*x, *y, 1.0),
                "s = {stages}: trajectory {x:e} vs {y:e}"
            );
        }
        for (channel, (u, v)) in a.channels.iter().zip(&b.channels).enumerate() {
            assert_eq!(u.len(), v.len());
            for (x, y) in u.iter().zip(v) {
                assert!(
                    close(*x, *y, 1.0),
                    "s = {stages}: channel {channel}: {x:e} vs {y:e}"
                );
            }
        }
        // stored, supplied, port, dissipated totals.
        for c in 0..4 {
            assert!(
                close(a.totals[c], b.totals[c], 1.0),
                "s = {stages}: total {c}: {:e} vs {:e}",
                a.totals[c],
                b.totals[c]
            );
        }
        // The balance is exact for quadratic H: stored = supplied per step to round-off.
        assert!(
            b.totals[4] <= 1e-13,
            "s = {stages}: residual {:e}",
            b.totals[4]
        );
        assert_eq!(b.totals[5], 0.0, "no failed stage solve");
    }
}

const PENDULUM: &str = r#"
[system]
kind = "port-hamiltonian"
states = ["q", "p"]
parameters = { m = 1.2, l = 0.8, g = 9.81, c = 0.3 }
H = "p^2 / (2*m*l^2) + m*g*l*(1 - cos(q))"
J = [[0, 1], [-1, 0]]
R = [[0, 0], [0, "c"]]
G = [[0], [1]]
x0 = [2.0, 0.0]
newton = { tolerance = 1e-15, max_iterations = 60 }

[[input]]
kind = "sine"
amplitude = 0.7
frequency = 0.4

[scheme]
family = "gauss"
stages = 1
h = 0.1
t_end = 2.0

[output]
every = 1000000
"#;

#[test]
fn gauss_converges_with_order_2s_on_the_forced_pendulum() {
    let exact = common::pendulum_reference(2.0);
    for (stages, steps) in [
        (1, [0.05, 0.025, 0.0125]),
        (2, [0.1, 0.05, 0.025]),
        (3, [0.25, 0.125, 0.0625]),
    ] {
        let errors: Vec<f64> = steps
            .iter()
            .map(|h| {
                let set = [format!("scheme.stages={stages}"), format!("scheme.h={h}")];
                let set: Vec<&str> = set.iter().map(String::as_str).collect();
                let run = Backend::Cpu(CpuPath::Reference)
                    .run(&plan(PENDULUM, &set))
                    .unwrap();
                let x = &run.members[0].final_state;
                (x[0] - exact[0]).abs().max((x[1] - exact[1]).abs())
            })
            .collect();
        let orders: Vec<f64> = errors.windows(2).map(|e| (e[0] / e[1]).log2()).collect();
        eprintln!("s = {stages}: errors {errors:?}, orders {orders:.3?}");
        let expected = 2.0 * stages as f64;
        let last = *orders.last().unwrap();
        assert!(
            (last - expected).abs() <= 0.3,
            "s = {stages}: order {last:.2}, expected {expected}"
        );
    }
}

#[test]
fn members_depend_only_on_seed_and_index() {
    let ensemble = r#"
[ensemble]
members = 64
seed = 5
x0 = { kind = "perturb", sigma = 0.1 }
parameters.c = { kind = "uniform", low = 0.05, high = 0.2 }
parameters.m = { kind = "lognormal", mu = 0.0, sigma = 0.1 }
"#;
    let text = format!("{PENDULUM}{ensemble}");
    let small = plan(&text, &["ensemble.members=8", "scheme.t_end=0.5"]);
    let large = plan(&text, &["scheme.t_end=0.5"]);
    for i in 0..8 {
        assert_eq!(
            small.member(i).unwrap(),
            large.member(i).unwrap(),
            "member {i}"
        );
    }
    let (a, b) = (large.member(3).unwrap(), large.member(4).unwrap());
    assert_ne!(a.x0, b.x0);
    // Parameters in name order: c, g, l, m; g and l stay nominal.
    assert!(
        (0.05..0.2).contains(&a.parameters[0]) && a.parameters[1] == 9.81 && a.parameters[2] == 0.8
    );
    assert!(a.parameters[3] > 0.0 && a.parameters[3] != 1.2);
    let run_on = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| Backend::Cpu(CpuPath::Reference).run(&large).unwrap())
    };
    let (one, two) = (run_on(1), run_on(2));
    assert_eq!(one, two);
    assert_eq!(
        one.members[3],
        large.reference(&large.member(3).unwrap()).unwrap()
    );
}

#[test]
fn bad_models_are_refused_naming_the_field_and_the_place() {
    let cases: [(&str, &str, &[&str]); 7] = [
        (
            r#"H = "p^2 / (2*mm) + q""#,
            "system.H",
            &["unknown name \"mm\" at 9", "the names are q, p, c, g, l, m"],
        ),
        (
            "J = [[0, 1], [1, 0]]",
            "system.J[1][0]",
            &["negation of J[0][1]"],
        ),
        ("J = [[1, 1], [-1, 0]]", "system.J[0][0]", &["must be 0"]),
        (
            r#"R = [[0, "c"], [0, "c"]]"#,
            "system.R[1][0]",
            &["must equal R[0][1]"],
        ),
        (
            r#"R = [[0, 0], [0, "-c"]]"#,
            "system.R",
            &["not positive semidefinite", "-0.3"],
        ),
        (
            r#"J = [[0, "sin(q"], ["-sin(q)", 0]]"#,
            "system.J[0][1]",
            &["at"],
        ),
        (
            "G = [[0, 1], [1, 0]]",
            "input",
            &["2 column(s) but 1 input signal(s)"],
        ),
    ];
    for (line, field, parts) in cases {
        let key = line.split(" = ").next().unwrap();
        let text = PENDULUM
            .lines()
            .map(|l| {
                if l.starts_with(&format!("{key} = ")) {
                    line
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let error = plan_error(&text, &[]);
        assert!(error.starts_with(&format!("{field}: ")), "{line}: {error}");
        common::assert_mentions(&error, parts);
    }
    let unknown =
        format!("{PENDULUM}\n[ensemble]\nmembers = 2\nparameters.k = {{ kind = \"fixed\" }}\n");
    let error = plan_error(&unknown, &[]);
    assert!(error.starts_with("ensemble.parameters.k: "), "{error}");
    common::assert_mentions(&error, &["c, g, l, m"]);
}

/// A stage solve that cannot converge ends its member with a flag at that step, the state
/// NaN from there on; nothing panics and the other members run.
#[test]
fn a_failed_stage_solve_flags_its_member_and_step() {
    let run = Backend::Cpu(CpuPath::Reference)
        .run(&plan(
            PENDULUM,
            &[
                "system.newton.max_iterations=1",
                "system.newton.tolerance=1e-300",
            ],
        ))
        .unwrap();
    let member = &run.members[0];
    assert_eq!(member.nonfinite_step, Some(1));
    assert_eq!(*member.totals.last().unwrap(), 1.0);
    assert!(member.final_state.iter().all(|v| v.is_nan()));
}

/// The CLI runs the starter on the CPU and on the GPU (lavapipe in CI), which agree.
#[test]
fn the_cli_runs_the_starter_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let starter = common::example_path("starters/port-hamiltonian.toml");
    let mut finals = Vec::new();
    for backend in ["cpu", "gpu"] {
        let out = dir.path().join(backend);
        let output = common::run_harbor(&[
            "simulate",
            starter.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            backend,
        ]);
        assert!(
            output.status.success(),
            "{backend}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["final_state"][0].as_array().unwrap().len(), 2);
        for key in ["stored_total", "supplied_total", "dissipated_total"] {
            assert!(summary["energy"][key][0].is_number(), "{key}: {summary}");
        }
        finals.push(summary["final_state"].clone());
    }
    let value = |v: &serde_json::Value| v.as_f64().unwrap();
    for (a, b) in finals[0]
        .as_array()
        .unwrap()
        .iter()
        .zip(finals[1].as_array().unwrap())
    {
        for (x, y) in a.as_array().unwrap().iter().zip(b.as_array().unwrap()) {
            assert!((value(x) - value(y)).abs() <= 1e-12, "{x} vs {y}");
        }
    }
}

/// `harbor bench --family port-hamiltonian` measures the pendulum chains on the CPU paths
/// (the fast engine, the reference, the chain written by hand) and on the GPU in both
/// precisions.
#[test]
fn the_bench_measures_pendulum_chains() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.json");
    let output = common::run_harbor(&[
        "bench",
        "--family",
        "port-hamiltonian",
        "--members",
        "16",
        "--states",
        "1,3",
        "--steps",
        "20",
        "--json",
        path.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in rows {
        let backends: Vec<&str> = row["measurements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["backend"].as_str().unwrap())
            .collect();
        // The chains of 1 and 3 pendulums also run written by hand in Rust (the baseline).
        assert_eq!(
            backends,
            ["cpu", "simulate", "reference", "gpu", "gpu", "hand-rust"],
            "{row}"
        );
    }
}

/// The bench's pendulum chain of one degree of freedom is the starter's pendulum with
/// m = l = g = 1: the same model, the same numbers.
#[test]
fn the_bench_chain_is_the_pendulum() {
    use harbor::port_hamiltonian::ExpressionModel;
    use harbor::port_hamiltonian::workloads::pendulum_chain;
    let model = ExpressionModel::compile("bench", &pendulum_chain(1)).unwrap();
    // Variables [q0, p0, c, k, u]: f = (p, −sin q − c p + u).
    let mut out = vec![0.0; model.stage.n_outputs()];
    model
        .stage
        .eval(&[0.7, -0.4, 0.05, 0.5, 0.3], &mut out, &mut Vec::new());
    assert!((out[0] - -0.4).abs() < 1e-15);
    assert!(
        (out[1] - (-(0.7_f64).sin() + 0.05 * 0.4 + 0.3)).abs() < 1e-15,
        "{out:?}"
    );
}
