//! Throughput of the fast CPU engine in member-steps per second (blocks prepared outside
//! the timed closure: the integration alone), final state only and with everything
//! recorded, for mass–spring–damper chains (n = 2, 8, 32) under Gauss s = 2.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use harbor::kernels::{Family, FastEngine};
use harbor::linear_ph::workloads::chain_plan;
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

criterion_group!(benches, bench);
criterion_main!(benches);
