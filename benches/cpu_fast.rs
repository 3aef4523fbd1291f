//! Throughput of the fast CPU engines in member-steps per second (blocks prepared outside
//! the timed closure: the integration alone): linear PH, final state only and with
//! everything recorded, for mass–spring–damper chains (n = 2, 8, 32) under Gauss s = 2; and
//! the adjoint's sweeps (forward, recomputation and backward per step) of candidate chains
//! (n = 2, 8) against the chain's own outputs, beside the reference sweeps of the same
//! candidates.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use harbor::identify::simulate_outputs;
use harbor::kernels::{Family, FastEngine};
use harbor::linear_ph::workloads::chain_plan;
use harbor::linear_ph::{GradientPlan, Quadrature, Regularization};
use harbor::plan::Recording;
use rayon::prelude::*;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_fast");
    group.sample_size(10);
    let steps = 600;
    for (label, recording) in [
        ("final-state", Recording::FINAL_STATE),
        ("all", Recording::default()),
    ] {
        for (n, members) in [(2usize, 1 << 14), (8, 1 << 12), (32, 1 << 9)] {
            let plan = chain_plan(members, n, steps, recording).unwrap();
            let block = plan.block_members();
            let prepare = || -> Vec<_> {
                (0..members)
                    .step_by(block)
                    .map(|start| {
                        let chunk = (start..(start + block).min(members))
                            .map(|i| plan.member(i).unwrap())
                            .collect();
                        plan.prepare(chunk).unwrap()
                    })
                    .collect()
            };
            group.throughput(Throughput::Elements((members * steps) as u64));
            let id = BenchmarkId::new(label, format!("n={n},N={members}"));
            group.bench_function(id, |b| {
                b.iter_batched(
                    prepare,
                    |blocks| {
                        blocks
                            .into_par_iter()
                            .map(|block| plan.run(block).unwrap().len())
                            .sum::<usize>()
                    },
                    criterion::BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

/// `members` candidate chains of n states (x0 drawn) against the outputs of the first,
/// over `steps` steps, every ⌈√N⌉-th state checkpointed.
fn gradient_plan(n: usize, members: usize, steps: usize) -> GradientPlan {
    let model = chain_plan(members, n, steps, Recording::FINAL_STATE).unwrap();
    let data = simulate_outputs(&model, &model.member(0).unwrap(), None).unwrap();
    let m = model.inputs_count();
    let every = Some((steps as f64).sqrt().ceil() as usize);
    let regularization = Regularization::none(n, m);
    GradientPlan::new(model, data, Quadrature::Trapezoid, every, regularization).unwrap()
}

fn bench_adjoint(c: &mut Criterion) {
    let mut group = c.benchmark_group("adjoint_fast");
    group.sample_size(10);
    let steps = 1000;
    for (n, members) in [(2usize, 1 << 13), (8, 1 << 11)] {
        let plan = gradient_plan(n, members, steps);
        let block = FastEngine::block_members(&plan);
        let candidates: Vec<_> = (0..members).map(|i| plan.member(i).unwrap()).collect();
        let prepare = || -> Vec<_> {
            candidates
                .chunks(block)
                .map(|chunk| plan.prepare(chunk.to_vec()).unwrap())
                .collect()
        };
        group.throughput(Throughput::Elements((members * steps) as u64));
        let id = BenchmarkId::new("fast", format!("n={n},N={members}"));
        group.bench_function(id, |b| {
            b.iter_batched(
                prepare,
                |blocks| {
                    blocks
                        .into_par_iter()
                        .map(|block| plan.run(block).unwrap().len())
                        .sum::<usize>()
                },
                criterion::BatchSize::LargeInput,
            )
        });
        let id = BenchmarkId::new("reference", format!("n={n},N={members}"));
        group.bench_function(id, |b| {
            b.iter(|| {
                candidates
                    .par_iter()
                    .map(|member| plan.reference(member).unwrap().final_state.len())
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_adjoint);
criterion_main!(benches);
