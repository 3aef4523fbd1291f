//! The GPU kernel against the CPU paths on a real adapter (lavapipe in CI). A missing
//! adapter fails these tests: they never skip.

mod common;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, run};
use harbor::backend::gpu::{GpuContext, Precision};
use harbor::kernels::CpuPath;
use harbor::linear_ph::LinearPhConfig;
use harbor::linear_ph::mechanical_system;
use harbor::linear_ph::{EnergyTotals, LinearPhMember, LinearPhPlan};
use harbor::model::Signal;
use harbor::results::Results;
use harbor::tableau::{Scheme, SchemeFamily};
use nalgebra::{DMatrix, DVector};
use rand::Rng;

fn context(precision: Precision) -> &'static GpuContext {
    common::gpu_context(precision)
}

fn gpu(plan: &LinearPhPlan, precision: Precision) -> Results {
    run(context(precision), plan, &ExecutorOptions::default()).unwrap()
}

/// |a − b| ≤ tol · max(|a|, |b|, floor).
fn close(a: f64, b: f64, tol: f64, floor: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(floor)
}

/// Member-by-member agreement of states, totals, windows and outputs.
fn assert_agree(cpu: &Results, gpu: &Results, tol: f64) {
    assert_eq!(cpu.members.len(), gpu.members.len());
    assert_eq!(cpu.sample_times, gpu.sample_times);
    for (i, (c, g)) in cpu.members.iter().zip(&gpu.members).enumerate() {
        let scale = c.final_state.iter().fold(1e-3_f64, |m, v| m.max(v.abs()));
        assert_eq!(c.trajectory.len(), g.trajectory.len(), "member {i} samples");
        assert_eq!(c.channels.len(), g.channels.len(), "member {i} channels");
        for (channel, (a, b)) in c.channels.iter().zip(&g.channels).enumerate() {
            assert_eq!(a.len(), b.len(), "member {i} channel {channel} rows");
        }
        assert_eq!(c.totals.len(), g.totals.len(), "member {i} totals");
        for (k, (a, b)) in c.trajectory.iter().zip(&g.trajectory).enumerate() {
            assert!(
                close(*a, *b, tol, scale),
                "member {i} trajectory entry {k}: cpu {a:e}, gpu {b:e}"
            );
        }
        let energy_scale = EnergyTotals::of(c)
            .stored
            .abs()
            .max(EnergyTotals::of(c).port.abs())
            .max(EnergyTotals::of(c).dissipated.abs())
            .max(1e-3);
        for (what, a, b) in [
            (
                "stored",
                EnergyTotals::of(c).stored,
                EnergyTotals::of(g).stored,
            ),
            (
                "supplied",
                EnergyTotals::of(c).supplied,
                EnergyTotals::of(g).supplied,
            ),
            ("port", EnergyTotals::of(c).port, EnergyTotals::of(g).port),
            (
                "dissipated",
                EnergyTotals::of(c).dissipated,
                EnergyTotals::of(g).dissipated,
            ),
        ] {
            assert!(
                close(a, b, tol, energy_scale),
                "member {i} {what}: cpu {a:.17e}, gpu {b:.17e}"
            );
        }
        for (w, (a, b)) in c.channels[0]
            .chunks(4)
            .zip(g.channels[0].chunks(4))
            .enumerate()
        {
            for e in 0..4 {
                assert!(
                    close(a[e], b[e], tol, energy_scale),
                    "member {i} window {w} energy {e}: {:e} vs {:e}",
                    a[e],
                    b[e]
                );
            }
        }
        for (k, (a, b)) in c.channels[1].iter().zip(&g.channels[1]).enumerate() {
            assert!(
                close(*a, *b, tol, 1.0),
                "member {i} output {k}: {a:e} vs {b:e}"
            );
        }
    }
}

/// The criterion: `simulate examples/oscillator_pulse.toml --backend gpu` gives the
/// CPU path's energy totals to ≤ 1e-12 relative in f64, for Gauss s = 1…4 and the pair.
#[test]
fn pulse_example_energy_totals_match_in_f64() {
    let schemes = [
        ("gauss", 1),
        ("gauss", 2),
        ("gauss", 3),
        ("gauss", 4),
        ("lobatto-pair", 2),
        ("lobatto-pair", 3),
        ("lobatto-pair", 4),
    ];
    for (family, stages) in schemes {
        let cfg = common::example(
            "oscillator_pulse.toml",
            &[
                &format!("scheme.family={family}"),
                &format!("scheme.stages={stages}"),
            ],
        );
        let plan = cfg.plan().unwrap();
        let reference = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap();
        let device = gpu(&plan, Precision::F64);
        let (c, g) = (
            EnergyTotals::of(&reference.members[0]),
            EnergyTotals::of(&device.members[0]),
        );
        for (what, a, b) in [
            ("stored", c.stored, g.stored),
            ("supplied", c.supplied, g.supplied),
            ("port", c.port, g.port),
        ] {
            assert!(
                close(a, b, 1e-12, 1e-300),
                "{family}-{stages} {what}: cpu {a:.17e}, gpu {b:.17e}"
            );
        }
        assert_agree(&reference, &device, 1e-12);
    }
}

fn random_gauss_plan(
    rng: &mut impl Rng,
    stages: usize,
    states: usize,
    members: usize,
    record_every: usize,
) -> LinearPhPlan {
    let inputs = rng.random_range(0..=2);
    let members: Vec<LinearPhMember> = (0..members)
        .map(|_| {
            let (system, x0) = common::random_linear_ph(
                &mut rand_chacha::ChaCha8Rng::from_rng(&mut *rng),
                states,
                inputs,
                0.3,
            );
            LinearPhMember { system, x0 }
        })
        .collect();
    let signals: Vec<Signal> = (0..inputs)
        .map(|c| {
            if c == 0 {
                Signal::Pulse {
                    start: 0.2,
                    end: 1.1,
                    amplitude: 1.5,
                }
            } else {
                Signal::Harmonic {
                    amplitude: 0.7,
                    omega: 2.0,
                    phase: 0.3,
                    offset: 0.1,
                }
            }
        })
        .collect();
    LinearPhPlan::new(
        Scheme::new(SchemeFamily::Gauss, stages).unwrap(),
        0.02,
        2.0,
        members,
        &signals,
        record_every,
    )
    .unwrap()
}

use rand::SeedableRng;

/// Random ensembles with fresh seeds: f64 GPU and the reference CPU path agree member by
/// member to 1e-12.
#[test]
fn random_gauss_ensembles_match_in_f64() {
    let mut rng = common::fresh_rng("random_gauss_ensembles_match_in_f64");
    for stages in 1..=4 {
        for states in [1, 2, 5, 9] {
            let plan = random_gauss_plan(&mut rng, stages, states, 37, 9);
            assert_agree(
                &Backend::Cpu(CpuPath::Reference).run(&plan).unwrap(),
                &gpu(&plan, Precision::F64),
                1e-12,
            );
        }
    }
}

#[test]
fn random_lobatto_pair_ensembles_match_in_f64() {
    let mut rng = common::fresh_rng("random_lobatto_pair_ensembles_match_in_f64");
    for stages in 2..=4 {
        for half in [1, 3] {
            let members: Vec<LinearPhMember> = (0..29)
                .map(|_| {
                    let k = DMatrix::from_fn(half, half, |_, _| rng.random_range(-1.0..1.0));
                    let k = k.transpose() * &k / half as f64 + DMatrix::identity(half, half);
                    let d = DMatrix::from_fn(half, half, |_, _| rng.random_range(-1.0..1.0));
                    let d = d.transpose() * &d * (0.1 / half as f64);
                    let g = DMatrix::from_fn(half, 1, |_, _| rng.random_range(-1.0..1.0));
                    let system =
                        mechanical_system("m", k, DMatrix::identity(half, half) * 0.8, d, g)
                            .unwrap();
                    LinearPhMember {
                        system,
                        x0: DVector::from_fn(2 * half, |_, _| rng.random_range(-1.0..1.0)),
                    }
                })
                .collect();
            let signals = [Signal::Square {
                amplitude: 1.0,
                omega: 3.0,
                duty: 0.4,
                phase: 0.0,
            }];
            let plan = LinearPhPlan::new(
                Scheme::new(SchemeFamily::LobattoPair, stages).unwrap(),
                0.05,
                3.0,
                members,
                &signals,
                7,
            )
            .unwrap();
            assert_agree(
                &Backend::Cpu(CpuPath::Reference).run(&plan).unwrap(),
                &gpu(&plan, Precision::F64),
                1e-12,
            );
        }
    }
}

/// Chunking is transparent: an artificially small member limit and dispatch length give
/// bit-identical results to a single chunk.
#[test]
fn chunked_runs_are_identical() {
    let mut rng = common::fresh_rng("chunked_runs_are_identical");
    let plan = random_gauss_plan(&mut rng, 2, 3, 50, 4);
    let whole = gpu(&plan, Precision::F64);
    let options = ExecutorOptions {
        max_chunk_members: Some(7),
        max_steps_per_dispatch: Some(5),
        ..Default::default()
    };
    let chunked = run(context(Precision::F64), &plan, &options).unwrap();
    assert_eq!(whole, chunked);
    let options = ExecutorOptions {
        max_chunk_members: Some(13),
        max_steps_per_dispatch: Some(9),
        ..Default::default()
    };
    assert_eq!(
        whole,
        run(context(Precision::F64), &plan, &options).unwrap()
    );
}

/// f32 with compensated sums stays within the documented bound of the f64 reference:
/// relative 1e-5 in states and energies over these 100-step runs (see the README's f32
/// drift table for long runs).
#[test]
fn f32_stays_within_its_documented_bound() {
    let mut rng = common::fresh_rng("f32_stays_within_its_documented_bound");
    for stages in 1..=4 {
        let plan = random_gauss_plan(&mut rng, stages, 4, 16, 10);
        assert_agree(
            &Backend::Cpu(CpuPath::Reference).run(&plan).unwrap(),
            &gpu(&plan, Precision::F32),
            1e-5,
        );
    }
}

#[test]
fn too_large_state_size_is_a_clear_error() {
    let mut rng = common::fresh_rng("too_large_state_size_is_a_clear_error");
    let single = |system, x0| {
        LinearPhPlan::new(
            Scheme::new(SchemeFamily::Gauss, 1).unwrap(),
            0.1,
            1.0,
            vec![LinearPhMember { system, x0 }],
            &[Signal::Zero],
            1,
        )
        .unwrap()
    };
    let (system, x0) = common::random_linear_ph(&mut rng, 129, 1, 0.1);
    let e = run(
        context(Precision::F64),
        &single(system, x0),
        &ExecutorOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("system") && e.contains("state size n = 129") && e.contains("limit of 128"),
        "{e}"
    );
    let (system, x0) = common::random_linear_ph(&mut rng, 40, 1, 0.1);
    let mut forced = single(system, x0);
    forced.cooperative = Some(false);
    let e = run(
        context(Precision::F64),
        &forced,
        &ExecutorOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("state size n = 40") && e.contains("per-invocation kernel's limit of 32"),
        "{e}"
    );
}

/// The workgroup-cooperative kernel: the 100-state mass–spring–damper chain (the
/// identification benchmark) under Gauss and the Lobatto pair, and small random members
/// forced onto it, against the CPU reference in f64.
#[test]
fn cooperative_kernel_matches_in_f64() {
    use harbor::linear_ph::chain::{chain_initial_state, mass_spring_damper_chain};
    for (family, stages) in [(SchemeFamily::Gauss, 2), (SchemeFamily::LobattoPair, 3)] {
        let members: Vec<LinearPhMember> = (0..3)
            .map(|k| LinearPhMember {
                system: mass_spring_damper_chain(50, 1.0 + 0.1 * k as f64, 0.05).unwrap(),
                x0: chain_initial_state(50),
            })
            .collect();
        let signals = [Signal::Pulse {
            start: 0.1,
            end: 0.6,
            amplitude: 1.0,
        }];
        let plan = LinearPhPlan::new(
            Scheme::new(family, stages).unwrap(),
            0.01,
            1.0,
            members,
            &signals,
            25,
        )
        .unwrap();
        assert_agree(
            &Backend::Cpu(CpuPath::Reference).run(&plan).unwrap(),
            &gpu(&plan, Precision::F64),
            1e-12,
        );
    }
    let mut rng = common::fresh_rng("cooperative_kernel_matches_in_f64");
    let mut plan = random_gauss_plan(&mut rng, 3, 5, 21, 6);
    plan.cooperative = Some(true);
    assert_agree(
        &Backend::Cpu(CpuPath::Reference).run(&plan).unwrap(),
        &run(context(Precision::F64), &plan, &ExecutorOptions::default()).unwrap(),
        1e-12,
    );
    let (system, x0) = common::random_linear_ph(&mut rng, 33, 2, 0.2);
    let signals = [Signal::Zero, Signal::Constant(0.5)];
    let plan = LinearPhPlan::new(
        Scheme::new(SchemeFamily::Gauss, 3).unwrap(),
        0.05,
        1.0,
        vec![LinearPhMember { system, x0 }],
        &signals,
        5,
    )
    .unwrap();
    assert_agree(
        &Backend::Cpu(CpuPath::Reference).run(&plan).unwrap(),
        &gpu(&plan, Precision::F64),
        1e-12,
    );
}

/// Long runs: dispatches must stay below llvmpipe's per-invocation loop limit (65535
/// iterations), beyond which it silently leaves loops; 100 000 steps of one member and 400
/// steps of the 100-state chain on the cooperative kernel, against the CPU reference.
#[test]
fn long_runs_are_not_truncated() {
    use harbor::linear_ph::chain::{chain_initial_state, mass_spring_damper_chain};
    let cfg = common::example(
        "oscillator_damped.toml",
        &["scheme.t_end=1000.0", "output.every=10000"],
    );
    let plan = cfg.plan().unwrap();
    assert_eq!(plan.grid.steps, 100_000);
    assert_agree(
        &Backend::Cpu(CpuPath::Reference).run(&plan).unwrap(),
        &gpu(&plan, Precision::F64),
        1e-11,
    );
    let members = vec![LinearPhMember {
        system: mass_spring_damper_chain(50, 1.0, 0.05).unwrap(),
        x0: chain_initial_state(50),
    }];
    let plan = LinearPhPlan::new(
        Scheme::new(SchemeFamily::Gauss, 2).unwrap(),
        0.01,
        4.0,
        members,
        &[Signal::Zero],
        50,
    )
    .unwrap();
    assert_agree(
        &Backend::Cpu(CpuPath::Reference).run(&plan).unwrap(),
        &gpu(&plan, Precision::F64),
        1e-12,
    );
}
