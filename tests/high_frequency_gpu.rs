//! The contact kernel against the CPU for forcing and damping signals of high frequency,
//! 10⁶ to 10¹⁵ Hz. The signals are sampled on the host at the stream's times
//! t = (k + offset_i) h for both paths, so the GPU and the CPU reference see the same f64
//! values however fast the signal turns (an ulp of t moves sin(2π f t) by 2π f ulp(t),
//! 1.4 rad at 10¹⁵ Hz, t ≈ 1). A missing adapter fails these tests: they never skip.
//!
//! Tolerance: the 1e-12 relative criterion of `contact_gpu_vs_cpu.rs` (x, p, z and H against
//! their largest magnitude over the run).

mod common;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, Precision, run};
use harbor::contact::{ContactConfig, ContactPlan};
use harbor::io::Config;
use harbor::kernels::CpuPath;
use harbor::results::Results;

const FREQUENCIES: [f64; 6] = [1e6, 1e8, 1e10, 1e12, 1e14, 1e15];

/// `[scheme]` lines of the methods compared: compositions whose sub-step times are partial
/// sums of their γ, and Herglotz with its midpoint.
const SCHEMES: [&str; 4] = [
    "family = \"splitting\"\ncomposition = \"strang\"",
    "family = \"splitting\"\ncomposition = \"suzuki-4\"",
    "family = \"splitting\"\ncomposition = \"yoshida-6b\"",
    "family = \"herglotz\"",
];

const F64_TOLERANCE: f64 = 1e-12;

/// A forced, damped oscillator whose forcing and damping signals turn at `frequency` Hz.
fn plan(frequency: f64, scheme: &str) -> ContactPlan {
    let text = format!(
        r#"
[system]
kind = "contact"
x0 = [0.5, -0.25]
p0 = [0.5, 0.75]
z0 = 0.1
potential = [
  {{ kind = "harmonic", K = [[1.0, 0.2], [0.2, 2.0]] }},
  {{ kind = "forcing", amplitude = [0.5, -0.3], signal = {{ kind = "sine", frequency = {frequency:e}, phase = 0.3 }} }},
  {{ kind = "forcing", amplitude = [0.2, 0.4], signal = {{ kind = "cosine", frequency = {frequency:e} }} }},
]
damping = {{ kind = "signal", alpha = 0.1, signal = {{ kind = "sine", frequency = {frequency:e}, amplitude = 0.5, offset = 1.0 }} }}

[scheme]
{scheme}
h = 0.01
t_end = 2.0

[output]
every = 7
"#
    );
    Config::from_str_with(&text, &[], "high-frequency test config")
        .and_then(|c| c.contact_plan())
        .unwrap_or_else(|e| panic!("bad test config: {e}\n{text}"))
}

/// The largest relative gap between `a` and `b`: per state component and for H, against
/// that quantity's largest magnitude in `b`.
fn worst_gap(a: &Results, b: &Results, width: usize) -> (f64, String) {
    let (ma, mb) = (&a.members[0], &b.members[0]);
    assert_eq!(ma.trajectory.len(), mb.trajectory.len());
    let mut worst = (0.0, String::new());
    let mut update = |gap: f64, at: String| {
        let gap = if gap.is_nan() { f64::INFINITY } else { gap };
        if gap > worst.0 {
            worst = (gap, at);
        }
    };
    for j in 0..width {
        let column = |m: &[f64]| m.iter().skip(j).step_by(width).copied().collect::<Vec<_>>();
        let (ca, cb) = (column(&ma.trajectory), column(&mb.trajectory));
        let scale = cb.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
        for (k, (x, y)) in ca.iter().zip(&cb).enumerate() {
            update(
                (x - y).abs() / scale,
                format!("sample {k} component {j}: {x:e} vs {y:e}"),
            );
        }
    }
    let (ha, hb) = (&ma.channels[0], &mb.channels[0]);
    let scale = hb.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
    for (k, (x, y)) in ha.iter().zip(hb).enumerate() {
        update(
            (x - y).abs() / scale,
            format!("H sample {k}: {x:e} vs {y:e}"),
        );
    }
    worst
}

#[test]
fn gpu_matches_the_cpu_for_signals_up_to_1e15_hz() {
    let ctx = common::gpu_context(Precision::F64);
    for scheme in SCHEMES {
        for frequency in FREQUENCIES {
            let plan = plan(frequency, scheme);
            let width = 2 * plan.dof() + 1;
            let device = run(ctx, &plan, &ExecutorOptions::default()).unwrap();
            for path in [CpuPath::Reference, CpuPath::Fast, CpuPath::Twin] {
                let cpu = Backend::Cpu(path).run(&plan).unwrap();
                let (gap, at) = worst_gap(&device, &cpu, width);
                let what = format!("{scheme:?} at {frequency:e} Hz, gpu vs {path:?}");
                eprintln!("{what}: {gap:.2e}");
                assert!(gap <= F64_TOLERANCE, "{what}: gap {gap:.3e} at {at}");
            }
        }
    }
}
