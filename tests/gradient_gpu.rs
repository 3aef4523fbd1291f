//! The adjoint sweep kernel against its CPU twin, and checkpointed against fully stored
//! sweeps: batches of random candidates (drawn like an ensemble, fresh seeds) against one
//! data set, in f64 on the GPU (lavapipe in CI), with chunking and several dispatches per
//! pass forced.

mod common;

use common::gradient_batch::plan;
use harbor::backend::gpu::{ExecutorOptions, Precision, run_into};
use harbor::identify::Evaluation;
use harbor::identify::gradient::finish;
use harbor::kernels::Family;
use harbor::linear_ph::GradientPlan;
use harbor::plan::MemberResult;
use rand::Rng;

fn cpu(plan: &GradientPlan) -> Vec<MemberResult> {
    (0..plan.member_count())
        .map(|i| plan.reference(&plan.member(i).unwrap()).unwrap())
        .collect()
}

fn gpu(plan: &GradientPlan, options: &ExecutorOptions) -> Vec<MemberResult> {
    let ctx = common::gpu_context(Precision::F64);
    let mut results = Vec::new();
    run_into(ctx, plan, options, &mut results).unwrap();
    results
}

fn evaluations(plan: &GradientPlan, results: &[MemberResult]) -> Vec<Evaluation> {
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            assert_eq!(r.nonfinite_step, None, "candidate {i}");
            finish(plan, &plan.member(i).unwrap(), &r.final_state).unwrap()
        })
        .collect()
}

/// max over candidates and over cost, J, R, Q, B, x0 of ‖a − b‖_max / ‖b‖_max.
fn worst_difference(a: &[Evaluation], b: &[Evaluation]) -> f64 {
    assert_eq!(a.len(), b.len());
    let mut worst: f64 = 0.0;
    for (x, y) in a.iter().zip(b) {
        worst = worst.max((x.cost - y.cost).abs() / y.cost.abs());
        for ((_, gx), (_, gy)) in x.gradient.parts().iter().zip(y.gradient.parts().iter()) {
            worst = worst.max((gx - gy).amax() / gy.amax());
        }
    }
    worst
}

#[test]
fn gpu_and_cpu_gradients_agree_in_f64() {
    let mut rng = common::fresh_rng("gradient gpu vs cpu");
    // Checkpointed (S = 16, S = 8) and, by default for so few states, fully stored.
    for (n, m, stages, steps, members, every) in [
        (5, 2, 2, 240, 150, Some(16)),
        (3, 1, 4, 90, 70, None),
        (8, 2, 1, 64, 40, Some(8)),
    ] {
        let plan = plan(&mut rng, n, m, stages, steps, members, every);
        let options = ExecutorOptions {
            max_chunk_members: Some(members / 2 + 1),
            max_steps_per_dispatch: Some(2 * plan.segment()),
            ..Default::default()
        };
        let on_cpu = evaluations(&plan, &cpu(&plan));
        let on_gpu = evaluations(&plan, &gpu(&plan, &options));
        let worst = worst_difference(&on_gpu, &on_cpu);
        eprintln!(
            "n = {n}, m = {m}, s = {stages}, N = {steps}, K = {members}, S = {}: GPU vs CPU {worst:.1e}",
            plan.segment()
        );
        assert!(worst <= 1e-10, "GPU and CPU differ by {worst:e}");
    }
}

#[test]
fn checkpointed_and_stored_sweeps_give_the_same_gradient() {
    let mut rng = common::fresh_rng("gradient checkpoints");
    let (n, m, stages, steps, members) = (4, 2, 2, 150, 24);
    // The same candidates and data (same seed), three checkpoint spacings.
    let seed: u64 = rng.random();
    let with = |every: Option<usize>| {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        plan(&mut rng, n, m, stages, steps, members, every)
    };
    let stored = with(Some(1));
    let stored_cpu = evaluations(&stored, &cpu(&stored));
    for every in [None, Some(7), Some(steps)] {
        let checkpointed = with(every);
        let on_cpu = evaluations(&checkpointed, &cpu(&checkpointed));
        let cpu_worst = worst_difference(&on_cpu, &stored_cpu);
        let options = ExecutorOptions {
            max_steps_per_dispatch: Some(1),
            ..Default::default()
        };
        let on_gpu = evaluations(&checkpointed, &gpu(&checkpointed, &options));
        let stored_gpu = evaluations(&stored, &gpu(&stored, &options));
        let gpu_worst = worst_difference(&on_gpu, &stored_gpu);
        eprintln!(
            "S = {}: checkpointed vs stored, CPU {cpu_worst:.1e}, GPU {gpu_worst:.1e}",
            checkpointed.segment()
        );
        assert!(cpu_worst <= 1e-13 && gpu_worst <= 1e-13);
    }
}
