//! Throughput of the GPU ensemble kernel next to the CPU reference, in member-steps per
//! second, on ensembles of mass–spring–damper chains (n = 2, 8, 32; Gauss s = 2). Plans and
//! the device are set up outside the timed closures. Without an adapter only the CPU
//! figures are measured, and the reason is printed.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use harbor::backend::Backend;
use harbor::backend::gpu::context::adapter_selector;
use harbor::backend::gpu::{GpuContext, Precision};
use harbor::backend::gpu::{GpuRunOptions, run};
use harbor::bench::chain_plan;
use harbor::kernels::CpuPath;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("ensemble");
    group.sample_size(10);
    let contexts: Vec<GpuContext> = [Precision::F32, Precision::F64]
        .into_iter()
        .filter_map(
            |p| match GpuContext::open(adapter_selector(None).as_deref(), Some(p)) {
                Ok(ctx) => Some(ctx),
                Err(e) => {
                    eprintln!("GPU {} benchmarks skipped: {e}", p.name());
                    None
                }
            },
        )
        .collect();
    let steps = 100;
    for (states, members) in [(2usize, 1usize << 14), (8, 1 << 12), (32, 1 << 10)] {
        let plan = chain_plan(members, states, steps).expect("benchmark plan");
        group.throughput(Throughput::Elements((members * steps) as u64));
        for ctx in &contexts {
            // Warm-up outside the measurement: pipeline compilation.
            run(ctx, &plan, &GpuRunOptions::default()).expect("GPU run");
            let id = BenchmarkId::new(
                format!("gpu-{}", ctx.precision.name()),
                format!("n={states},N={members}"),
            );
            group.bench_with_input(id, &plan, |b, plan| {
                b.iter(|| run(ctx, plan, &GpuRunOptions::default()).unwrap())
            });
        }
        let cpu_members = (members / 16).max(16);
        let cpu_plan = chain_plan(cpu_members, states, steps).expect("benchmark plan");
        group.throughput(Throughput::Elements((cpu_members * steps) as u64));
        let id = BenchmarkId::new("cpu-f64", format!("n={states},N={cpu_members}"));
        group.bench_with_input(id, &cpu_plan, |b, plan| {
            b.iter(|| Backend::Cpu(CpuPath::Reference).run(plan).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
