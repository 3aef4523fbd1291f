//! Shared test helpers: example configs and random structured linear PH systems.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use harbor::io::Config;
use harbor::model::LinearPh;
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub fn example_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

pub fn example(name: &str, overrides: &[&str]) -> Config {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::load(&example_path(name), &overrides).unwrap()
}

/// A fresh seed per run, printed so a failure can be replayed with HARBOR_TEST_SEED.
pub fn fresh_rng(test: &str) -> ChaCha8Rng {
    let seed = std::env::var("HARBOR_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random::<u64>());
    eprintln!("{test}: seed {seed} (replay with HARBOR_TEST_SEED={seed})");
    ChaCha8Rng::seed_from_u64(seed)
}

fn gaussian_matrix(rng: &mut ChaCha8Rng, rows: usize, cols: usize) -> DMatrix<f64> {
    DMatrix::from_fn(rows, cols, |_, _| rng.random_range(-1.0..1.0))
}

/// A random well-conditioned linear PH system: J = A − Aᵀ, R = CᵀC/n scaled by
/// `damping`, Q = DᵀD/n + I/2, B uniform in [−1, 1].
pub fn random_linear_ph(
    rng: &mut ChaCha8Rng,
    n: usize,
    m: usize,
    damping: f64,
) -> (LinearPh, DVector<f64>) {
    let a = gaussian_matrix(rng, n, n);
    let c = gaussian_matrix(rng, n, n);
    let d = gaussian_matrix(rng, n, n);
    let j = &a - a.transpose();
    let r = c.transpose() * &c * (damping / n as f64);
    let r = (&r + r.transpose()) * 0.5;
    let q = d.transpose() * &d / n as f64 + DMatrix::identity(n, n) * 0.5;
    let q = (&q + q.transpose()) * 0.5;
    let b = gaussian_matrix(rng, n, m);
    let x0 = DVector::from_fn(n, |_, _| rng.random_range(-1.0..1.0));
    (LinearPh::new("random", j, r, q, b).unwrap(), x0)
}
