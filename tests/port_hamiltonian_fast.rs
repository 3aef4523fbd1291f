//! The port-Hamiltonian fast engine (members side by side in SIMD blocks) against the
//! reference integrator member by member, bit for bit: every recorded value (trajectory,
//! energy windows, outputs), the final state, the totals and the non-finite step, at every
//! instruction set this CPU has, for blocks that are not full; members whose stage solve
//! fails are flagged as the reference flags them and leave the other lanes of their block
//! undisturbed; `harbor simulate --backend cpu` runs the engine (summary.json's `engine`)
//! and writes the reference's numbers; the bench's hand-written chain solves the same
//! problem.

mod common;

use harbor::backend::Backend;
use harbor::io::Config;
use harbor::kernels::lanes::SimdLevel;
use harbor::kernels::{CpuPath, Family, FastEngine};
use harbor::plan::MemberResult;
use harbor::port_hamiltonian::fast::FastBlock;
use harbor::port_hamiltonian::{PortHamiltonianConfig, PortHamiltonianPlan};

/// Two coupled, driven pendulums with a state-dependent damping, two inputs and Gauss
/// s = 3; masses, couplings and damping drawn per member, x0 perturbed; the last record
/// window is partial (250 steps recorded every 7).
const COUPLED: &str = r#"
[system]
kind = "port-hamiltonian"
states = ["q1", "q2", "p1", "p2"]
parameters = { m = 1.0, k = 0.7, c = 0.2, a = 0.3 }
H = "p1^2/(2*m) + p2^2/2 + (1 - cos(q1)) + (1 - cos(q2)) + k/2*(q2 - q1)^2 + a*q2^4/4"
J = [[0, 0, 1, 0], [0, 0, 0, 1], [-1, 0, 0, 0], [0, -1, 0, 0]]
R = [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, "c*exp(-q1^2)", 0], [0, 0, 0, "c/2"]]
G = [[0, 0], [0, 0], [1, 0], [0, "1 + q2^2/10"]]
x0 = [0.8, -0.4, 0.1, 0.3]

[[input]]
kind = "sine"
amplitude = 0.6
frequency = 0.35

[[input]]
kind = "sine"
amplitude = 0.2
frequency = 0.9

[scheme]
family = "gauss"
stages = 3
h = 0.02
t_end = 5.0

[output]
every = 7

[ensemble]
members = 37
seed = 11
x0 = { kind = "perturb", sigma = 0.3 }
parameters.m = { kind = "uniform", low = 0.5, high = 2.0 }
parameters.k = { kind = "lognormal", mu = -0.5, sigma = 0.5 }
parameters.c = { kind = "uniform", low = 0.0, high = 0.5 }
"#;

/// The forced damped pendulum with stiff members: g drawn over decades (h·√g up to about
/// 5) and a cap of 4 Newton iterations, so that the stiffest members' stage solves fail,
/// at different steps, while the others converge throughout (11 of the 29 fail, at steps
/// 1, 2 and 10).
const STIFF: &str = r#"
[system]
kind = "port-hamiltonian"
states = ["q", "p"]
parameters = { g = 9.81, c = 0.1 }
H = "p^2/2 + g*(1 - cos(q))"
J = [[0, 1], [-1, 0]]
R = [[0, 0], [0, "c"]]
G = [[0], [1]]
x0 = [1.0, 0.0]
newton = { tolerance = 1e-14, max_iterations = 4 }

[[input]]
kind = "sine"
amplitude = 0.5
frequency = 0.3

[scheme]
family = "gauss"
stages = 2
h = 0.1
t_end = 3.0

[output]
every = 4

[ensemble]
members = 29
seed = 5
x0 = { kind = "perturb", sigma = 0.5 }
parameters.g = { kind = "lognormal", mu = 4.0, sigma = 2.0 }
"#;

fn plan(text: &str, overrides: &[&str]) -> PortHamiltonianPlan {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::from_str_with(text, &overrides, "test")
        .unwrap()
        .port_hamiltonian_plan()
        .unwrap()
}

fn reference(plan: &PortHamiltonianPlan) -> Vec<MemberResult> {
    (0..plan.member_count())
        .map(|i| plan.reference(&plan.member(i).unwrap()).unwrap())
        .collect()
}

/// `plan`'s members through the fast engine at `level`, in blocks of `block` members.
fn fast(plan: &PortHamiltonianPlan, level: SimdLevel, block: usize) -> Vec<MemberResult> {
    let members: Vec<_> = (0..plan.member_count())
        .map(|i| plan.member(i).unwrap())
        .collect();
    members
        .chunks(block)
        .flat_map(|chunk| FastBlock::new(plan, chunk).run(plan, level))
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Asserts that `what`'s values are the same bits (any NaN equals any NaN).
fn assert_same(what: &str, fast: &[f64], reference: &[f64]) {
    assert_eq!(fast.len(), reference.len(), "{what}: lengths");
    for (i, (a, b)) in fast.iter().zip(reference).enumerate() {
        assert!(
            same(*a, *b),
            "{what}[{i}]: fast {a:e} vs reference {b:e} (|Δ| = {:e})",
            (a - b).abs()
        );
    }
}

/// Every member's results equal the reference's to the last bit.
fn assert_members_same(what: &str, fast: &[MemberResult], reference: &[MemberResult]) {
    assert_eq!(fast.len(), reference.len(), "{what}: members");
    for (i, (a, b)) in fast.iter().zip(reference).enumerate() {
        let at = |field: &str| format!("{what}: member {i} {field}");
        assert_same(&at("trajectory"), &a.trajectory, &b.trajectory);
        assert_eq!(a.channels.len(), b.channels.len(), "{}", at("channels"));
        for (c, (x, y)) in a.channels.iter().zip(&b.channels).enumerate() {
            assert_same(&at(&format!("channel {c}")), x, y);
        }
        assert_same(&at("final state"), &a.final_state, &b.final_state);
        assert_same(&at("totals"), &a.totals, &b.totals);
        assert_eq!(
            a.nonfinite_step,
            b.nonfinite_step,
            "{}",
            at("non-finite step")
        );
    }
}

/// A drawn ensemble with everything recorded, at every level, in one block, in full blocks
/// of 8, in blocks of 5 (3 padding lanes) and of 13: the reference's bits, member by member.
#[test]
fn the_fast_engine_reproduces_the_reference_bit_for_bit() {
    let plan = plan(COUPLED, &[]);
    assert!(plan.recording.trajectory && plan.recording.energy && plan.recording.outputs);
    let expected = reference(&plan);
    assert!(
        expected.iter().all(|r| r.nonfinite_step.is_none()),
        "every member converges: the comparison is of numbers, not of NaNs"
    );
    // Members differ: the draws reached the integration.
    assert_ne!(expected[0].final_state, expected[1].final_state);
    for level in common::simd_levels() {
        for block in [37, 8, 5, 13] {
            let what = format!("{} in blocks of {block}", level.name());
            assert_members_same(&what, &fast(&plan, level, block), &expected);
        }
    }
}

/// The engine as the CPU backend runs it (its own blocks, the last one not full, on all
/// cores) against `--backend reference`: the same results, member by member.
#[test]
fn the_cpu_backend_runs_the_fast_engine() {
    // Two full blocks and a part of one.
    let block = plan(COUPLED, &[]).block_members();
    let members = format!("ensemble.members={}", 2 * block + block / 2 + 1);
    let plan = plan(COUPLED, &[&members, "output.trajectory=false"]);
    assert!(
        plan.fast_engine().is_some(),
        "gauss plans have a fast engine"
    );
    let fast = Backend::Cpu(CpuPath::Fast).run(&plan).unwrap();
    let reference = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap();
    assert_eq!(fast.backend, "cpu");
    assert_eq!(
        Backend::Cpu(CpuPath::Fast).engine(&plan),
        "fast",
        "--backend cpu runs the fast engine"
    );
    assert_eq!(Backend::Cpu(CpuPath::Reference).engine(&plan), "reference");
    assert_members_same("backend cpu", &fast.members, &reference.members);
}

/// Stiff members whose Newton iteration hits the cap fail at their own step, flagged as
/// the reference flags them (`newton_failed_step`, the non-finite step, NaN from then on),
/// and the members beside them in the same block run on to the reference's bits.
#[test]
fn a_failed_stage_solve_stays_in_its_lane() {
    let plan = plan(STIFF, &[]);
    let expected = reference(&plan);
    let failed: Vec<usize> = (0..expected.len())
        .filter(|&i| expected[i].nonfinite_step.is_some())
        .collect();
    assert!(
        !failed.is_empty() && failed.len() < expected.len(),
        "some members fail and some do not: failed {failed:?} of {}",
        expected.len()
    );
    for &i in &failed {
        let step = expected[i].nonfinite_step.unwrap();
        assert_eq!(
            expected[i].totals[5], step as f64,
            "member {i}: newton_failed_step"
        );
        assert!(expected[i].final_state.iter().all(|v| v.is_nan()));
    }
    // Failures at different steps: the lanes of a block fail apart.
    let steps: std::collections::BTreeSet<u64> = failed
        .iter()
        .map(|&i| expected[i].nonfinite_step.unwrap())
        .collect();
    assert!(steps.len() > 1, "failures at one step only: {steps:?}");
    for level in common::simd_levels() {
        for block in [29, 8] {
            let what = format!("{} in blocks of {block}", level.name());
            assert_members_same(&what, &fast(&plan, level, block), &expected);
        }
    }
}

/// `harbor simulate --backend cpu` runs the fast engine (summary.json: `"engine": "fast"`)
/// and writes the same arrays, byte for byte, as `--backend reference`.
#[test]
fn simulate_with_backend_cpu_uses_the_fast_engine() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("pendulum_damped_forced.toml");
    let run = |backend: &str| {
        let out = dir.path().join(backend);
        let output = common::run_harbor(&[
            "simulate",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            backend,
            "--set",
            "ensemble.members=21",
            "--set",
            "scheme.t_end=1.0",
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        out
    };
    let (fast, reference) = (run("cpu"), run("reference"));
    let summary = |out: &std::path::Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
    };
    assert_eq!(summary(&fast)["backend"], "cpu");
    assert_eq!(summary(&fast)["engine"], "fast");
    assert_eq!(summary(&reference)["backend"], "cpu-reference");
    assert_eq!(summary(&reference)["engine"], "reference");
    for file in [
        "final_state.npy",
        "totals.npy",
        "trajectory.npy",
        "energy.npy",
    ] {
        assert_eq!(
            std::fs::read(fast.join(file)).unwrap(),
            std::fs::read(reference.join(file)).unwrap(),
            "{file}"
        );
    }
}

/// The bench's baseline, the pendulum chain written by hand with std's sin and cos, solves
/// the problem the expressions state: its final states and energy totals agree with the
/// reference's to rounding (1e-12) for chains of 1 and 3 pendulums.
#[test]
fn the_hand_written_chain_is_the_same_problem() {
    use harbor::families::{BenchWorkload, WorkloadOptions};
    use harbor::plan::Recording;
    use harbor::port_hamiltonian::hand_written;
    use harbor::port_hamiltonian::workloads::PendulumChainWorkload;
    let workload = PendulumChainWorkload::new(&WorkloadOptions::default()).unwrap();
    for dof in [1, 3] {
        let plan = workload.plan(6, dof, 300, Recording::FINAL_STATE).unwrap();
        for i in 0..plan.member_count() {
            let member = plan.member(i).unwrap();
            let expected = plan.reference(&member).unwrap();
            let hand = hand_written::integrate(&plan, dof, &member).unwrap();
            assert_eq!(hand.failed_step, 0);
            for (r, (a, b)) in hand
                .final_state
                .iter()
                .zip(&expected.final_state)
                .enumerate()
            {
                assert!(
                    (a - b).abs() <= 1e-12,
                    "dof {dof} member {i} x[{r}]: hand {a:e} vs reference {b:e}"
                );
            }
            for c in 0..4 {
                let (a, b) = (hand.energies[c], expected.totals[c]);
                assert!(
                    (a - b).abs() <= 1e-12,
                    "dof {dof} member {i} energy total {c}: hand {a:e} vs reference {b:e}"
                );
            }
        }
    }
}
