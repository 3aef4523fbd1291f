//! Throughput of the GPU ensemble kernels next to the CPU paths, in member-steps per
//! second: linear PH on ensembles of mass–spring–damper chains (n = 2, 8, 32; Gauss s = 2),
//! contact on damped, forced Duffing chains (n = 1, 4; strang and yoshida-6a). Plans and
//! the device are set up outside the timed closures. Without an adapter only the CPU
//! figures are measured, and the reason is printed.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, run};
use harbor::backend::gpu::{GpuContext, Precision};
use harbor::contact::contact_chain_plan;
use harbor::kernels::CpuPath;
use harbor::linear_ph::workloads::chain_plan;
use harbor::plan::Recording;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("ensemble");
    group.sample_size(10);
    let contexts: Vec<GpuContext> = [Precision::F32, Precision::F64]
        .into_iter()
        .filter_map(|p| match GpuContext::open(None, Some(p)) {
            Ok(ctx) => Some(ctx),
            Err(e) => {
                eprintln!("GPU {} benchmarks skipped: {e}", p.name());
                None
            }
        })
        .collect();
    let steps = 100;
    for (states, members) in [(2usize, 1usize << 14), (8, 1 << 12), (32, 1 << 10)] {
        let plan =
            chain_plan(members, states, steps, Recording::default()).expect("benchmark plan");
        group.throughput(Throughput::Elements((members * steps) as u64));
        for ctx in &contexts {
            // Warm-up outside the measurement: pipeline compilation.
            run(ctx, &plan, &ExecutorOptions::default()).expect("GPU run");
            let id = BenchmarkId::new(
                format!("gpu-{}", ctx.precision.name()),
                format!("n={states},N={members}"),
            );
            group.bench_with_input(id, &plan, |b, plan| {
                b.iter(|| run(ctx, plan, &ExecutorOptions::default()).unwrap())
            });
        }
        let cpu_members = (members / 16).max(16);
        let cpu_plan =
            chain_plan(cpu_members, states, steps, Recording::default()).expect("benchmark plan");
        group.throughput(Throughput::Elements((cpu_members * steps) as u64));
        let id = BenchmarkId::new("cpu-f64", format!("n={states},N={cpu_members}"));
        group.bench_with_input(id, &cpu_plan, |b, plan| {
            b.iter(|| Backend::Cpu(CpuPath::Reference).run(plan).unwrap())
        });
    }
    group.finish();

    // Contact ensembles: damped, forced Duffing chains under the Strang splitting and a
    // sixth-order composition; the CPU twin of the kernel beside the reference.
    let mut group = c.benchmark_group("contact");
    group.sample_size(10);
    for (dof, members, composition) in [
        (1usize, 1usize << 14, "strang"),
        (1, 1 << 14, "yoshida-6a"),
        (4, 1 << 12, "strang"),
    ] {
        let plan = contact_chain_plan(members, dof, steps, composition).expect("benchmark plan");
        group.throughput(Throughput::Elements((members * steps) as u64));
        for ctx in &contexts {
            run(ctx, &plan, &ExecutorOptions::default()).expect("GPU run");
            let id = BenchmarkId::new(
                format!("gpu-{}", ctx.precision.name()),
                format!("{composition},n={dof},N={members}"),
            );
            group.bench_with_input(id, &plan, |b, plan| {
                b.iter(|| run(ctx, plan, &ExecutorOptions::default()).unwrap())
            });
        }
        let cpu_members = (members / 16).max(16);
        let cpu_plan =
            contact_chain_plan(cpu_members, dof, steps, composition).expect("benchmark plan");
        group.throughput(Throughput::Elements((cpu_members * steps) as u64));
        for (name, path) in [
            ("cpu-f64", CpuPath::Reference),
            ("cpu-twin-f64", CpuPath::Twin),
        ] {
            let id = BenchmarkId::new(name, format!("{composition},n={dof},N={cpu_members}"));
            group.bench_with_input(id, &cpu_plan, |b, plan| {
                b.iter(|| Backend::Cpu(path).run(plan).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
