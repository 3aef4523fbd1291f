//! The fast CPU engine (SIMD blocks of members) against the reference integrator member by
//! member, at every instruction set this CPU has: ≤ 1e-13 relative in f64 for the states,
//! outputs and energies; the portable level reproduces the kernel's CPU twin bit for bit;
//! results do not depend on how members are blocked or chunked; the non-finite status is
//! the twin's step.

mod common;

use harbor::backend::{Backend, cpu};
use harbor::kernels::CpuPath;
use harbor::kernels::lanes::SimdLevel;
use harbor::linear_ph::fast::FastBlock;
use harbor::linear_ph::{LinearPhMember, LinearPhPlan};
use harbor::model::Signal;
use harbor::plan::{MemberResult, Recording};
use harbor::tableau::{Scheme, SchemeFamily};

/// `plan`'s members integrated by the fast engine at `level`, in blocks of `block`.
fn fast(plan: &LinearPhPlan, level: SimdLevel, block: usize) -> Vec<MemberResult> {
    let members: Vec<LinearPhMember> = (0..plan.ensemble.len())
        .map(|i| plan.ensemble.member(i).unwrap())
        .collect();
    members
        .chunks(block)
        .flat_map(|chunk| {
            FastBlock::new(plan, chunk)
                .unwrap()
                .run(plan, level)
                .into_members()
        })
        .collect()
}

/// |a − b| ≤ tolerance · max(|a|) over a record (norm-wise relative), channel by channel.
fn assert_close(what: &str, a: &[f64], b: &[f64], width: usize, tolerance: f64) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (row, (ra, rb)) in a
        .chunks(width.max(1))
        .zip(b.chunks(width.max(1)))
        .enumerate()
    {
        let scale = ra.iter().fold(1e-300_f64, |m, v| m.max(v.abs()));
        for (c, (x, y)) in ra.iter().zip(rb).enumerate() {
            assert!(
                (x - y).abs() <= tolerance * scale,
                "{what} row {row} [{c}]: {x:e} vs {y:e} (scale {scale:e})"
            );
        }
    }
}

fn compare(plan: &LinearPhPlan, reference: &[MemberResult], fast: &[MemberResult], what: &str) {
    let spec = plan.record_spec();
    assert_eq!(reference.len(), fast.len());
    for (i, (a, b)) in reference.iter().zip(fast).enumerate() {
        let name = |part: &str| format!("{what}: member {i} {part}");
        assert_eq!(a.nonfinite_step, b.nonfinite_step, "{}", name("status"));
        assert_close(
            &name("final state"),
            &a.final_state,
            &b.final_state,
            spec.state_width,
            1e-13,
        );
        assert_close(
            &name("trajectory"),
            &a.trajectory,
            &b.trajectory,
            spec.state_width,
            1e-13,
        );
        for (channel, (ca, cb)) in spec.channels.iter().zip(a.channels.iter().zip(&b.channels)) {
            // Window energies are sums of increments of either sign: relative to the
            // window's largest increment.
            assert_close(&name(channel.name), ca, cb, channel.width(), 1e-12);
        }
        if !a.totals.is_empty() {
            // stored, supplied, port, dissipated against the largest of them; the residual
            // is a rounding error itself.
            assert_close(&name("totals"), &a.totals[..4], &b.totals[..4], 4, 1e-12);
            assert!(
                b.totals[4] < 1e-12,
                "{}: {:e}",
                name("residual"),
                b.totals[4]
            );
        }
    }
}

/// A drawn ensemble around a random member (J, R, Q, B and x0 all varied) under Gauss
/// s = 2 with one or two inputs, recording every `every` steps.
fn plan(n: usize, inputs: usize, every: usize, recording: Recording) -> LinearPhPlan {
    let mut rng = common::fresh_rng("fast_engine::plan");
    let (system, x0) = common::random_linear_ph(&mut rng, n, inputs, 0.3);
    let nominal = LinearPhMember { system, x0 };
    let spec = harbor::linear_ph::LinearPhEnsembleSpec {
        members: 37,
        seed: 5,
        j: harbor::linear_ph::ensemble::Draw::Perturb { sigma: 0.05 },
        r: harbor::linear_ph::ensemble::Draw::Random { scale: 0.05 },
        q: harbor::linear_ph::ensemble::Draw::Perturb { sigma: 0.05 },
        b: harbor::linear_ph::ensemble::Draw::Perturb { sigma: 0.05 },
        x0: harbor::linear_ph::ensemble::Draw::Perturb { sigma: 0.05 },
    };
    let ensemble = harbor::linear_ph::DrawnLinearPhEnsemble::new(nominal, spec, None).unwrap();
    let signals: Vec<Signal> = (0..inputs)
        .map(|k| Signal::Harmonic {
            amplitude: 1.0,
            omega: 1.0 + k as f64,
            phase: 0.3,
            offset: 0.1,
        })
        .collect();
    LinearPhPlan::new(
        Scheme::new(SchemeFamily::Gauss, 2).unwrap(),
        0.01,
        3.0,
        ensemble,
        &signals,
        every,
    )
    .unwrap()
    .with_recording(recording)
}

#[test]
fn fast_engine_matches_the_reference_member_by_member() {
    let some = Recording {
        trajectory: false,
        energy: false,
        outputs: true,
    };
    // n ≤ 8 runs the unrolled sizes, n = 11 the general one; every = 7 and 300 put record
    // points inside and at the end of the check windows.
    for (n, inputs) in [(2, 1), (3, 2), (8, 1), (11, 0)] {
        for (every, recording) in [
            (7, Recording::default()),
            (300, Recording::FINAL_STATE),
            (64, some),
        ] {
            let plan = plan(n, inputs, every, recording);
            let reference = Backend::Cpu(CpuPath::Twin).run(&plan).unwrap().members;
            for level in common::simd_levels() {
                let what =
                    format!("n = {n}, m = {inputs}, every {every}, {recording:?}, {level:?}");
                compare(&plan, &reference, &fast(&plan, level, 16), &what);
            }
        }
    }
}

#[test]
fn the_portable_level_reproduces_the_twin_bit_for_bit() {
    // Every 11 steps a check window holds several record points; every step, the groups'
    // record rows end the windows before the check window does.
    for (n, inputs) in [(2, 1), (5, 2), (10, 1)] {
        for every in [11, 1] {
            let plan = plan(n, inputs, every, Recording::default());
            let twin = Backend::Cpu(CpuPath::Twin).run(&plan).unwrap().members;
            let fast = fast(&plan, SimdLevel::Portable, 24);
            assert_eq!(twin, fast, "n = {n}, every {every}");
        }
    }
}

#[test]
fn results_do_not_depend_on_blocks_or_chunks() {
    for recording in [Recording::default(), Recording::FINAL_STATE] {
        let plan = plan(4, 1, 50, recording);
        let level = SimdLevel::get();
        let whole = fast(&plan, level, plan.ensemble.len());
        for block in [1, 3, 8, 20] {
            assert_eq!(whole, fast(&plan, level, block), "blocks of {block}");
        }
        // The backend's chunks (a results budget of a few members) and its blocks.
        let mut chunked = Vec::new();
        let budget = 3 * plan.record_spec().member_bytes(plan.grid.records());
        cpu::run_into_within(&plan, CpuPath::Fast, budget, &mut chunked).unwrap();
        assert_eq!(whole, chunked);
    }
}

/// The step operators (twin and fast engine) and the stage solve (reference) overflow in
/// different places near f64::MAX, so the status is compared with the twin's, which sums
/// the same products in the same order.
#[test]
fn the_first_nonfinite_step_is_the_twins() {
    // Members whose state grows until it overflows: a passive system grows only under its
    // input, here one near f64::MAX from the start of a pulse.
    for (recording, every) in [
        (Recording::default(), 10),
        (Recording::default(), 1),
        (Recording::FINAL_STATE, 1000),
    ] {
        let mut rng = common::fresh_rng("fast_engine::nonfinite");
        let mut blown_up = 0;
        let members: Vec<LinearPhMember> = (0..30)
            .map(|k| {
                let (system, x0) = common::random_linear_ph(&mut rng, 2 + k % 3, 1, 0.1);
                LinearPhMember { system, x0 }
            })
            .collect();
        let signals = [Signal::Pulse {
            start: 0.5 + 0.013,
            end: 9.0,
            amplitude: f64::MAX / 2.0,
        }];
        // Members of different sizes cannot share a plan: one plan per size.
        for n in 2..=4 {
            let same: Vec<LinearPhMember> = members
                .iter()
                .filter(|m| m.system.states() == n)
                .cloned()
                .collect();
            let plan = LinearPhPlan::new(
                Scheme::new(SchemeFamily::Gauss, 2).unwrap(),
                0.01,
                20.0,
                same,
                &signals,
                every,
            )
            .unwrap()
            .with_recording(recording);
            let reference = Backend::Cpu(CpuPath::Twin).run(&plan).unwrap().members;
            blown_up += reference
                .iter()
                .filter(|r| r.nonfinite_step.is_some())
                .count();
            for level in common::simd_levels() {
                let fast = fast(&plan, level, 8);
                for (a, b) in reference.iter().zip(&fast) {
                    assert_eq!(
                        a.nonfinite_step, b.nonfinite_step,
                        "n = {n}, {level:?}, {recording:?}: final {:?} vs {:?}, totals {:?} vs {:?}",
                        a.final_state, b.final_state, a.totals, b.totals
                    );
                }
            }
        }
        assert!(blown_up > 0, "{recording:?}: no member overflowed");
    }
}
