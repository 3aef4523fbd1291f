//! The fast CPU engine and the GPU kernels apply per-member step operators; where an
//! operator block is not representable but only ever multiplies a zero input, they agree
//! with the reference integrator instead of failing on ∞ · 0. A missing adapter fails
//! these tests: they never skip.

mod common;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, Precision, run};
use harbor::kernels::CpuPath;
use harbor::linear_ph::LinearPhConfig;
use harbor::linear_ph::LinearPhPlan;
use harbor::results::Results;

/// The damped oscillator with B = [[0], [−1e308]] and a zero input: Y's input block is of
/// the order h Bᵀ Q B, +∞ in f64, while B u = 0 and every recorded quantity is finite
/// (the outputs y = Bᵀ M e are about 1e308).
fn huge_coupling(input: &str) -> LinearPhPlan {
    common::example(
        "oscillator_damped.toml",
        &["system.B=[[0.0], [-1e308]]", input, "output.every=1"],
    )
    .plan()
    .unwrap()
}

/// Zero inputs written in every way the config allows.
const ZERO_INPUTS: [&str; 3] = [
    "input.0={kind=\"zero\"}",
    "input.0={kind=\"constant\",value=0.0}",
    "input.0={kind=\"sine\",frequency=3.0,amplitude=0.0}",
];

/// |a − b| ≤ 1e-12 · scale, scale the largest magnitude of the quantity in the reference.
fn assert_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let scale = b.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            x.is_finite() && (x - y).abs() <= 1e-12 * scale,
            "{what}[{i}]: {x:e} vs reference {y:e} (scale {scale:e})"
        );
    }
}

fn assert_matches_reference(results: &Results, reference: &Results, what: &str) {
    let (a, b) = (&results.members[0], &reference.members[0]);
    assert_eq!(a.nonfinite_step, None, "{what}: became non-finite");
    assert_close(&a.trajectory, &b.trajectory, &format!("{what} trajectory"));
    assert_close(
        &a.final_state,
        &b.final_state,
        &format!("{what} final state"),
    );
    for (c, (x, y)) in a.channels.iter().zip(&b.channels).enumerate() {
        assert_close(x, y, &format!("{what} channel {c}"));
    }
    assert_close(&a.totals, &b.totals, &format!("{what} totals"));
}

#[test]
fn fast_engine_and_twin_match_the_reference_with_a_huge_coupling_and_zero_input() {
    for input in ZERO_INPUTS {
        let plan = huge_coupling(input);
        let reference = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap();
        assert!(
            reference.members[0].channels[1]
                .iter()
                .any(|y| y.abs() > 1e300),
            "the outputs are of the order of B"
        );
        for path in [CpuPath::Fast, CpuPath::Twin] {
            let results = Backend::Cpu(path).run(&plan).unwrap();
            assert_matches_reference(&results, &reference, &format!("{path:?}, {input}"));
        }
    }
}

#[test]
fn gpu_f64_matches_the_reference_with_a_huge_coupling_and_zero_input() {
    let ctx = common::gpu_context(Precision::F64);
    for input in ZERO_INPUTS {
        let plan = huge_coupling(input);
        let reference = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap();
        let device = run(ctx, &plan, &ExecutorOptions::default()).unwrap();
        assert_matches_reference(&device, &reference, &format!("gpu f64, {input}"));
    }
}

/// f32 cannot hold the outputs' operator (≈ 1e308): a refusal naming --precision and the
/// value, not a run to ±∞.
#[test]
fn gpu_f32_refuses_a_coupling_it_cannot_represent() {
    let ctx = common::gpu_context(Precision::F32);
    let Err(error) = run(
        ctx,
        &huge_coupling(ZERO_INPUTS[0]),
        &ExecutorOptions::default(),
    ) else {
        panic!("f32 cannot represent B = -1e308, yet the run succeeded");
    };
    let error = error.to_string();
    common::assert_mentions(
        &error,
        &[
            "--precision: ",
            "beyond the largest f32",
            "e30",
            "--precision f64",
        ],
    );
}
