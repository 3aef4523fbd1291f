//! The port-Hamiltonian kernel (`shaders/port_hamiltonian/step.wgsl`, the model's
//! expressions generated into it) against its CPU twin and the CPU reference integrator:
//! the twin gives the reference's bits whatever the chunks and dispatch windows, and the
//! GPU (lavapipe in CI; a missing adapter fails, never skips) matches the reference member
//! by member to ≤ 1e-12 in f64 on a parameter ensemble of 4096 members, failures flagged at
//! the same step. Run with `--nocapture` to see the measured gaps.

mod common;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, Precision, run};
use harbor::backend::twin;
use harbor::io::Config;
use harbor::kernels::{CpuPath, Family, GpuKernel};
use harbor::plan::MemberResult;
use harbor::port_hamiltonian::{PortHamiltonianConfig, PortHamiltonianPlan};

fn plan(text: &str, overrides: &[&str]) -> PortHamiltonianPlan {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::from_str_with(text, &overrides, "test")
        .and_then(|c| c.port_hamiltonian_plan())
        .unwrap_or_else(|e| panic!("bad test config: {e}"))
}

fn reference(plan: &PortHamiltonianPlan) -> Vec<MemberResult> {
    Backend::Cpu(CpuPath::Reference).run(plan).unwrap().members
}

fn twin_run(plan: &PortHamiltonianPlan, caps: (Option<usize>, Option<usize>)) -> Vec<MemberResult> {
    let options = ExecutorOptions {
        max_chunk_members: caps.0,
        max_steps_per_dispatch: caps.1,
        ..ExecutorOptions::default()
    };
    twin::run(plan, &options).unwrap().members
}

fn gpu_run(plan: &PortHamiltonianPlan, precision: Precision) -> Vec<MemberResult> {
    run(
        common::gpu_context(precision),
        plan,
        &ExecutorOptions::default(),
    )
    .unwrap_or_else(|e| panic!("GPU run failed: {e}"))
    .members
}

/// A forced, damped pendulum ensemble: every parameter drawn, x0 perturbed.
const PENDULUM_ENSEMBLE: &str = r#"
[system]
kind = "port-hamiltonian"
states = ["q", "p"]
parameters = { m = 1.0, l = 1.0, g = 9.81, c = 0.1 }
H = "p^2 / (2*m*l^2) + m*g*l*(1 - cos(q))"
J = [[0, 1], [-1, 0]]
R = [[0, 0], [0, "c"]]
G = [[0], [1]]
x0 = [1.0, 0.0]

[ensemble]
members = 4096
seed = 7
x0 = { kind = "perturb", sigma = 0.5 }
parameters.m = { kind = "lognormal", mu = 0.0, sigma = 0.2 }
parameters.l = { kind = "uniform", low = 0.5, high = 1.5 }
parameters.g = { kind = "normal", mean = 9.81, std = 0.1 }
parameters.c = { kind = "uniform", low = 0.05, high = 0.2 }

[[input]]
kind = "sine"
amplitude = 0.5
frequency = 0.3

[scheme]
family = "gauss"
stages = 2
h = 0.02
t_end = 2.0

[output]
every = 7
"#;

/// A Lotka–Volterra-type system with a state-dependent J, a state-dependent R, G(x), a
/// non-quadratic H with integer powers and a logarithm, and two inputs.
const STRUCTURED: &str = r#"
[system]
kind = "port-hamiltonian"
states = ["a", "b", "w"]
parameters = { k = 0.7, r = 0.05 }
H = "a - log(a) + b - log(b) + w^4/4 + k*w^2/2"
J = [[0, "a*b", 0], ["-a*b", 0, "0.1*a"], [0, "-0.1*a", 0]]
R = [[0, 0, 0], [0, 0, 0], [0, 0, "r*(1 + w^2)"]]
G = [[0, 0], ["0.1*b", 0], [0, 1]]
x0 = [1.3, 0.8, 0.2]

[ensemble]
members = 64
seed = 3
x0 = { kind = "perturb", sigma = 0.05 }
parameters.k = { kind = "uniform", low = 0.5, high = 1.0 }

[[input]]
kind = "sine"
amplitude = 0.2
frequency = 0.5

[[input]]
kind = "constant"
value = 0.1

[scheme]
family = "gauss"
stages = 3
h = 0.05
t_end = 3.0

[output]
every = 4
"#;

/// The largest gap |a − b| / max(1, |b|) over every value of every member; flags and
/// non-finite values must agree exactly.
fn largest_gap(a: &[MemberResult], b: &[MemberResult]) -> f64 {
    assert_eq!(a.len(), b.len());
    let mut worst = 0.0_f64;
    let mut compare = |x: &[f64], y: &[f64], what: &str, i: usize| {
        assert_eq!(x.len(), y.len(), "member {i} {what}");
        for (u, v) in x.iter().zip(y) {
            if u.is_finite() || v.is_finite() {
                assert!(
                    u.is_finite() && v.is_finite(),
                    "member {i} {what}: {u} vs {v}"
                );
                worst = worst.max((u - v).abs() / v.abs().max(1.0));
            }
        }
    };
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x.nonfinite_step, y.nonfinite_step, "member {i} flag");
        compare(&x.trajectory, &y.trajectory, "trajectory", i);
        for (u, v) in x.channels.iter().zip(&y.channels) {
            compare(u, v, "channel", i);
        }
        compare(&x.totals, &y.totals, "totals", i);
        compare(&x.final_state, &y.final_state, "final state", i);
    }
    worst
}

/// The twin is the reference to the last bit, however members and steps are cut, with
/// every recording switch on and off, from s·n = 4 to 15.
#[test]
fn the_twin_gives_the_reference_bits() {
    let cases: [(&str, &[&str]); 5] = [
        (PENDULUM_ENSEMBLE, &["ensemble.members=37"]),
        (STRUCTURED, &[]),
        (STRUCTURED, &["output.trajectory=false", "output.every=1"]),
        (STRUCTURED, &["output.energy=false", "output.outputs=false"]),
        (STRUCTURED, &["scheme.stages=5", "ensemble.members=9"]),
    ];
    for (text, overrides) in cases {
        let plan = plan(text, overrides);
        let expected = reference(&plan);
        for caps in [(None, None), (Some(5), Some(3)), (Some(1), Some(1))] {
            common::assert_same_bits(
                &twin_run(&plan, caps),
                &expected,
                &format!("{overrides:?} {caps:?}"),
            );
        }
    }
}

/// Members whose stage solve fails are flagged at the same step by the twin and the
/// reference, and the other members are undisturbed.
#[test]
fn failures_are_flagged_alike() {
    // Three Newton iterations suffice for small swings only.
    let plan = plan(
        PENDULUM_ENSEMBLE,
        &[
            "ensemble.members=40",
            "ensemble.x0.sigma=2.0",
            "system.newton.max_iterations=3",
            "system.newton.tolerance=1e-9",
            "scheme.h=0.1",
        ],
    );
    let expected = reference(&plan);
    let failed = expected
        .iter()
        .filter(|m| m.nonfinite_step.is_some())
        .count();
    assert!(
        failed > 0 && failed < expected.len(),
        "{failed} of {} failed",
        expected.len()
    );
    common::assert_same_bits(&twin_run(&plan, (Some(16), Some(7))), &expected, "failures");
    let gpu = gpu_run(&plan, Precision::F64);
    let gap = largest_gap(&gpu, &expected);
    eprintln!("failures: {failed} of 40 members flagged; GPU gap {gap:.2e}");
    assert!(gap <= 1e-12, "GPU vs reference {gap:e}");
}

/// The GPU in f64 against the reference, member by member, on 4096 drawn pendulums and on
/// the structured model (s·n = 9 and 15).
#[test]
fn the_gpu_matches_the_reference_to_1e_12() {
    let cases: [(&str, &[&str]); 3] = [
        (PENDULUM_ENSEMBLE, &[]),
        (STRUCTURED, &[]),
        (STRUCTURED, &["scheme.stages=5", "ensemble.members=9"]),
    ];
    for (text, overrides) in cases {
        let plan = plan(text, overrides);
        let expected = reference(&plan);
        let gpu = gpu_run(&plan, Precision::F64);
        let gap = largest_gap(&gpu, &expected);
        eprintln!(
            "{} members, s = {}: largest GPU − reference gap {gap:.2e}",
            plan.member_count(),
            plan.scheme.stages
        );
        assert!(gap <= 1e-12, "{overrides:?}: GPU vs reference {gap:e}");
    }
}

/// In f32 the kernel runs with Newton's tolerance floored at 4 ε_f32 and follows the f64
/// reference to f32's accuracy.
#[test]
fn f32_runs_follow_the_reference() {
    let plan = plan(PENDULUM_ENSEMBLE, &["ensemble.members=256"]);
    let expected = reference(&plan);
    let gpu = gpu_run(&plan, Precision::F32);
    let mut worst = 0.0_f64;
    for (x, y) in gpu.iter().zip(&expected) {
        assert_eq!(x.nonfinite_step, None);
        for (u, v) in x.final_state.iter().zip(&y.final_state) {
            worst = worst.max((u - v).abs() / v.abs().max(1.0));
        }
    }
    eprintln!("f32 final states: largest gap {worst:.2e}");
    assert!(worst <= 1e-4, "f32 vs f64 reference {worst:e}");
}

/// Every variant the family can generate validates with naga and translates to SPIR-V in
/// both precisions, and a Newton system too large for registers is refused naming
/// `--backend`.
#[test]
fn every_variant_validates_and_large_systems_are_refused() {
    use harbor::kernels::wgsl::translate;
    for (text, overrides) in [
        (PENDULUM_ENSEMBLE, vec!["scheme.stages=1"]),
        (PENDULUM_ENSEMBLE, vec!["scheme.stages=6"]),
        (STRUCTURED, vec![]),
        (
            STRUCTURED,
            vec!["output.trajectory=false", "output.energy=false"],
        ),
    ] {
        let plan = plan(text, &overrides);
        let kernel = plan.kernel_bound().unwrap();
        for precision in [Precision::F64, Precision::F32] {
            translate(&kernel, precision).unwrap_or_else(|e| panic!("{overrides:?}: {e}"));
        }
    }
    // s·n = 24, the largest.
    let largest = plan_with_states(3, 8).kernel_bound().unwrap();
    let started = std::time::Instant::now();
    translate(&largest, Precision::F64).unwrap();
    eprintln!(
        "s·n = 32: assembled and translated in {:.2?}",
        started.elapsed()
    );
    let big = plan_with_states(11, 3);
    let e = big.kernel_bound().unwrap_err().to_string();
    assert!(e.contains("--backend") && e.contains("s·n"), "{e}");
    assert_eq!(big.name(), "port-hamiltonian");
}

/// Uncoupled oscillators with `n` states under Gauss with `s` stages.
fn plan_with_states(n: usize, s: usize) -> PortHamiltonianPlan {
    let states: Vec<String> = (0..n).map(|i| format!("\"x{i}\"")).collect();
    let h: Vec<String> = (0..n).map(|i| format!("x{i}^2/2")).collect();
    let j: Vec<String> = (0..n)
        .map(|r| {
            let row: Vec<String> = (0..n)
                .map(|c| match (r % 2, c) {
                    (0, c) if c == r + 1 => "1".into(),
                    (1, c) if c + 1 == r => "-1".into(),
                    _ => "0".into(),
                })
                .collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    let text = format!(
        r#"
[system]
kind = "port-hamiltonian"
states = [{}]
H = "{}"
J = [{}]
x0 = [{}]

[scheme]
family = "gauss"
stages = {s}
h = 0.1
t_end = 1.0
"#,
        states.join(", "),
        h.join(" + "),
        j.join(", "),
        vec!["0.5"; n].join(", ")
    );
    plan(&text, &[])
}

/// The energy-preserving scheme has no kernel and no fast engine: the GPU and the twin
/// refuse it naming `--backend`, and the CPU path runs the reference.
#[test]
fn energy_preserving_runs_on_the_cpu_only() {
    let plan = plan(
        PENDULUM_ENSEMBLE,
        &["ensemble.members=3", "scheme.family=energy-preserving"],
    );
    let e = plan.kernel_bound().unwrap_err().to_string();
    assert!(
        e.contains("--backend") && e.contains("energy-preserving"),
        "{e}"
    );
    let e = twin::run(&plan, &ExecutorOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("--backend"), "{e}");
    assert!(
        plan.fast_engine().is_none(),
        "the fast engine runs Gauss only"
    );
    let cpu = Backend::Cpu(CpuPath::Fast).run(&plan).unwrap().members;
    common::assert_same_bits(
        &cpu,
        &reference(&plan),
        "energy-preserving on --backend cpu",
    );
}

/// `examples/lotka_volterra_ph.toml` (state-dependent J, R and G): the GPU and the twin
/// against the reference on 64 of its members, and H conserved by the lossless, unforced
/// cycle up to Gauss's error.
#[test]
fn the_lotka_volterra_example_runs_on_both_backends() {
    let config = common::example("lotka_volterra_ph.toml", &["ensemble.members=64"]);
    let plan = config.port_hamiltonian_plan().unwrap();
    let expected = reference(&plan);
    common::assert_same_bits(
        &twin_run(&plan, (None, None)),
        &expected,
        "lotka-volterra twin",
    );
    let gap = largest_gap(&gpu_run(&plan, Precision::F64), &expected);
    eprintln!("lotka-volterra, 64 members: GPU − reference gap {gap:.2e}");
    assert!(gap <= 1e-12, "{gap:e}");
    let lossless = common::example(
        "lotka_volterra_ph.toml",
        &[
            "ensemble.members=4",
            "ensemble.parameters.r.high=1e-300",
            "input.0.amplitude=0.0",
        ],
    )
    .port_hamiltonian_plan()
    .unwrap();
    for member in reference(&lossless) {
        // stored_total: the change of H over the run.
        assert!(member.totals[0].abs() <= 1e-6, "{:e}", member.totals[0]);
    }
}
