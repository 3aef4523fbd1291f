//! Throughput of the CPU reference path in member-steps per second, for ensembles of random
//! structured linear PH members (state sizes 2, 8, 32; Gauss s = 2 and the Lobatto pair
//! s = 3). Setup (matrices, plan) stays outside the timed closure.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use harbor::backend::Backend;
use harbor::kernels::CpuPath;
use harbor::linear_ph::LinearPh;
use harbor::linear_ph::{LinearPhMember, LinearPhPlan};
use harbor::model::Signal;
use harbor::tableau::{Scheme, SchemeFamily};
use nalgebra::{DMatrix, DVector};

/// A damped chain-like member in canonical form: K tridiagonal, P = I, D = 0.1 I.
fn member(half: usize) -> LinearPhMember {
    let n = 2 * half;
    let mut j = DMatrix::zeros(n, n);
    let mut q = DMatrix::zeros(n, n);
    let mut r = DMatrix::zeros(n, n);
    for i in 0..half {
        j[(i, half + i)] = 1.0;
        j[(half + i, i)] = -1.0;
        q[(i, i)] = 2.0;
        if i + 1 < half {
            q[(i, i + 1)] = -0.5;
            q[(i + 1, i)] = -0.5;
        }
        q[(half + i, half + i)] = 1.0;
        r[(half + i, half + i)] = 0.1;
    }
    let mut b = DMatrix::zeros(n, 1);
    b[(n - 1, 0)] = 1.0;
    let x0 = DVector::from_fn(n, |i, _| ((i + 1) as f64).sin());
    LinearPhMember {
        system: LinearPh::new("bench", j, r, q, b).unwrap(),
        x0,
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_reference");
    group.sample_size(10);
    let signals = [Signal::Harmonic {
        amplitude: 1.0,
        omega: 1.0,
        phase: 0.0,
        offset: 0.0,
    }];
    for (family, stages) in [(SchemeFamily::Gauss, 2), (SchemeFamily::LobattoPair, 3)] {
        for n in [2usize, 8, 32] {
            let members = (4096 / (n * n)).max(8);
            let steps = 200;
            let plan = LinearPhPlan::new(
                Scheme::new(family, stages).unwrap(),
                0.01,
                steps as f64 * 0.01,
                vec![member(n / 2); members],
                &signals,
                steps,
            )
            .unwrap();
            group.throughput(Throughput::Elements((members * steps) as u64));
            let id = BenchmarkId::new(
                format!("{}-{stages}", family.name()),
                format!("n={n},N={members}"),
            );
            group.bench_with_input(id, &plan, |b, plan| {
                b.iter(|| Backend::Cpu(CpuPath::Reference).run(plan).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
