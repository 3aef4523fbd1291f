//! Shared test helpers: example configs and random structured linear PH systems.

#![allow(dead_code)]

pub mod gradient_batch;

use std::path::{Path, PathBuf};

use harbor::io::Config;
use harbor::linear_ph::LinearPh;
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

/// The shared GPU context of a test binary, one per precision. A missing adapter fails the
/// test with instructions: GPU tests never skip (CI runs them on lavapipe).
pub fn gpu_context(
    precision: harbor::backend::gpu::Precision,
) -> &'static harbor::backend::gpu::GpuContext {
    use harbor::backend::gpu::{GpuContext, Precision};
    use std::sync::OnceLock;
    static F64: OnceLock<GpuContext> = OnceLock::new();
    static F32: OnceLock<GpuContext> = OnceLock::new();
    let cell = if precision == Precision::F64 {
        &F64
    } else {
        &F32
    };
    cell.get_or_init(|| {
        let ctx = GpuContext::open(None, Some(precision))
            .unwrap_or_else(|e| {
                panic!(
                    "these tests need a GPU adapter with {} support (lavapipe: apt-get install mesa-vulkan-drivers); they never skip: {e}",
                    precision.name()
                )
            });
        eprintln!(
            "GPU tests run on {} in {}",
            ctx.adapter.describe(),
            precision.name()
        );
        ctx
    })
}

/// Runs the harbor binary with `args` and returns what it did, success or not.
pub fn run_harbor(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `harbor simulate <config> --out <tmp>/run --backend cpu` with `--set` overrides.
/// `Ok(stdout)` when it succeeds; on failure `Err(stderr)` after asserting that the binary
/// reported an error rather than panicking and left nothing behind (no `run`, no staging
/// directory).
pub fn simulate_outcome(config: &Path, overrides: &[&str]) -> Result<String, String> {
    command_outcome("simulate", config, overrides)
}

/// [`simulate_outcome`] for any command that takes a file, `--out` and `--backend`
/// (`simulate`, `gradient`).
pub fn command_outcome(command: &str, config: &Path, overrides: &[&str]) -> Result<String, String> {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("run");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_harbor"));
    cmd.arg(command)
        .arg(config)
        .arg("--out")
        .arg(&target)
        .args(["--backend", "cpu"]);
    for o in overrides {
        cmd.args(["--set", o]);
    }
    let output = cmd.output().unwrap();
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !stderr.contains("panicked"),
        "{overrides:?}: the binary panicked instead of reporting an error: {stderr}"
    );
    assert!(
        !target.exists(),
        "{overrides:?}: a failed run must not create its output directory"
    );
    let leftovers: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
    assert!(
        leftovers.is_empty(),
        "{overrides:?}: a failed run leaves nothing behind: {leftovers:?}"
    );
    Err(stderr)
}

/// [`simulate_outcome`] that must fail; returns stderr.
pub fn simulate_fails_with(config: &Path, overrides: &[&str]) -> String {
    match simulate_outcome(config, overrides) {
        Ok(stdout) => panic!(
            "expected failure for {} with {overrides:?}, stdout: {stdout}",
            config.display()
        ),
        Err(stderr) => stderr,
    }
}

/// Asserts that an error message mentions every one of `parts`.
pub fn assert_mentions(stderr: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            stderr.contains(part),
            "error message {stderr:?} should mention {part:?}"
        );
    }
}

/// Every member's every value and flag, bit for bit.
pub fn assert_same_bits(
    a: &[harbor::plan::MemberResult],
    b: &[harbor::plan::MemberResult],
    what: &str,
) {
    assert_eq!(a.len(), b.len(), "{what}: members");
    let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(
            bits(&x.trajectory),
            bits(&y.trajectory),
            "{what}: member {i} trajectory"
        );
        assert_eq!(
            x.channels.len(),
            y.channels.len(),
            "{what}: member {i} channels"
        );
        for (c, (u, v)) in x.channels.iter().zip(&y.channels).enumerate() {
            assert_eq!(bits(u), bits(v), "{what}: member {i} channel {c}");
        }
        assert_eq!(
            bits(&x.totals),
            bits(&y.totals),
            "{what}: member {i} totals"
        );
        assert_eq!(
            bits(&x.final_state),
            bits(&y.final_state),
            "{what}: member {i} final state"
        );
        assert_eq!(
            x.nonfinite_step, y.nonfinite_step,
            "{what}: member {i} flag"
        );
    }
}

/// The continuous forced damped pendulum of the `PENDULUM` configs of the port-Hamiltonian
/// tests (m = 1.2, l = 0.8, g = 9.81, c = 0.3, u = 0.7 sin(2π·0.4 t), x0 = (2, 0)), written
/// out by hand with std's functions, q̇ = p/(ml²), ṗ = −mgl sin q − c p/(ml²) + u(t), solved
/// by harbor's adaptive order-16 reference at a 1e-14 tolerance; the state at `t_end`.
pub fn pendulum_reference(t_end: f64) -> Vec<f64> {
    let (m, l, g, c) = (1.2, 0.8, 9.81, 0.3);
    let u = |t: f64| 0.7 * (2.0 * std::f64::consts::PI * 0.4 * t).sin();
    harbor::reference::ode::solve_converged(
        |t, y, out| {
            let velocity = y[1] / (m * l * l);
            out[0] = velocity;
            out[1] = -m * g * l * y[0].sin() - c * velocity + u(t);
        },
        0.0,
        &[2.0, 0.0],
        t_end,
        1e-14,
    )
    .unwrap()
}

/// Every SIMD level of the fast engines this CPU can run, the portable one first.
pub fn simd_levels() -> Vec<harbor::kernels::lanes::SimdLevel> {
    use harbor::kernels::lanes::SimdLevel;
    let mut levels = vec![SimdLevel::Portable];
    #[cfg(target_arch = "x86_64")]
    {
        if harbor::kernels::lanes::Avx2::new().is_some() {
            levels.push(SimdLevel::Avx2);
        }
        if harbor::kernels::lanes::Avx512::new().is_some() {
            levels.push(SimdLevel::Avx512);
        }
    }
    levels
}
