//! Identification's host-side pullback per candidate: the gradient with respect to
//! (J, R, Q, B) from the cotangents of the step operators, by the reference
//! (`step_pullback::system_gradient`, fresh matrices) and by `PullbackWorkspace` (reused
//! buffers, the same bits), for n = 2, 5 and 8 states, m = 2 inputs, Gauss s = 2. The
//! throughput is candidates per second.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use harbor::linear_ph::LinearPh;
use harbor::linear_ph::pullback_workspace::PullbackWorkspace;
use harbor::linear_ph::step_pullback::{OperatorCotangents, system_gradient};
use harbor::tableau::{Scheme, SchemeFamily};
use nalgebra::DMatrix;

/// A structured system: J skew, R = 0.1 I, Q = I + small symmetric, B with unit entries on
/// its first rows.
fn system(n: usize, m: usize) -> LinearPh {
    let j = DMatrix::from_fn(n, n, |r, c| ((r as f64) - (c as f64)) * 0.1);
    let r = DMatrix::identity(n, n) * 0.1;
    let q = DMatrix::from_fn(n, n, |r, c| if r == c { 1.0 } else { 0.01 });
    let b = DMatrix::from_fn(n, m, |r, c| if r == c { 1.0 } else { 0.05 });
    LinearPh::new("bench", j, r, q, b).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("pullback");
    let (m, stages, h) = (2, 2, 1e-3);
    let scheme = Scheme::new(SchemeFamily::Gauss, stages).unwrap();
    for n in [2usize, 5, 8] {
        let p = n + stages * m;
        let sys = system(n, m);
        let delta: Vec<f64> = (0..n * p).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
        let output: Vec<f64> = (0..m * n).map(|i| ((i * 5) % 3) as f64 - 1.0).collect();
        let cotangents = OperatorCotangents {
            delta: DMatrix::from_row_slice(n, p, &delta),
            output: DMatrix::from_row_slice(m, n, &output),
        };
        group.throughput(Throughput::Elements(1));
        group.bench_function(BenchmarkId::new("reference", format!("n={n}")), |b| {
            b.iter(|| system_gradient(&scheme, None, h, &sys, &cotangents).unwrap())
        });
        let mut workspace = PullbackWorkspace::default();
        group.bench_function(BenchmarkId::new("workspace", format!("n={n}")), |b| {
            b.iter(|| {
                workspace
                    .system_gradient(&scheme, None, h, &sys, &delta, &output)
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
