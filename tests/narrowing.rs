//! Every user value on its way to a GPU kernel is mapped exactly or refused before any work:
//! the record cadence `output.every` beyond the kernels' 32-bit counters (a cadence ≥ N
//! records only the last step, so it maps to N), and in f32 the values f32 cannot hold.
//! A missing adapter fails these tests: they never skip.

mod common;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, Precision, run};
use harbor::contact::{ContactConfig, ContactPlan};
use harbor::kernels::CpuPath;
use harbor::linear_ph::LinearPhConfig;
use harbor::linear_ph::LinearPhPlan;
use harbor::results::Results;

fn linear_plan(overrides: &[&str]) -> LinearPhPlan {
    common::example("oscillator_damped.toml", overrides)
        .plan()
        .unwrap()
}

fn contact_plan(overrides: &[&str]) -> ContactPlan {
    common::example("contact_damped_oscillator.toml", overrides)
        .contact_plan()
        .unwrap()
}

/// Cadences at and beyond 2³², where a 32-bit truncation gives 0, 1, 0 and 0: each must
/// record exactly what every = N (the step count) records.
const HUGE_CADENCES: [u64; 4] = [1 << 32, (1 << 32) + 1, 1 << 33, (1 << 62) + 3];

/// The linear-PH example on the GPU (f64) with `output.every` beyond u32 gives results bit
/// for bit equal to every = N on the same adapter, and the shape the CPU path gives.
#[test]
fn linear_ph_cadence_beyond_u32_records_like_the_step_count() {
    let ctx = common::gpu_context(Precision::F64);
    let options = ExecutorOptions::default();
    let steps = linear_plan(&[]).grid.steps;
    let last_only = run(
        ctx,
        &linear_plan(&[&format!("output.every={steps}")]),
        &options,
    )
    .unwrap();
    for every in HUGE_CADENCES {
        let plan = linear_plan(&[&format!("output.every={every}")]);
        let device = run(ctx, &plan, &options).unwrap();
        assert_eq!(device.members, last_only.members, "every = {every}");
        assert_eq!(
            device.sample_times, last_only.sample_times,
            "every = {every}"
        );
        let cpu = Backend::Cpu(CpuPath::Twin).run(&plan).unwrap();
        assert_eq!(cpu.sample_times, device.sample_times, "every = {every}");
        let (d, c) = (&device.members[0], &cpu.members[0]);
        assert_eq!(d.trajectory.len(), c.trajectory.len(), "every = {every}");
        for (a, b) in d.final_state.iter().zip(&c.final_state) {
            assert!((a - b).abs() <= 1e-12, "every = {every}: {a} vs {b}");
        }
        for (a, b) in d.totals.iter().zip(&c.totals) {
            assert!((a - b).abs() <= 1e-12, "every = {every}: totals {a} vs {b}");
        }
    }
}

/// The same for the contact kernel.
#[test]
fn contact_cadence_beyond_u32_records_like_the_step_count() {
    let ctx = common::gpu_context(Precision::F64);
    let options = ExecutorOptions::default();
    let steps = contact_plan(&[]).grid().steps;
    let last_only = run(
        ctx,
        &contact_plan(&[&format!("output.every={steps}")]),
        &options,
    )
    .unwrap();
    for every in HUGE_CADENCES {
        let device = run(
            ctx,
            &contact_plan(&[&format!("output.every={every}")]),
            &options,
        )
        .unwrap();
        assert_eq!(device.members, last_only.members, "every = {every}");
        assert_eq!(
            device.sample_times, last_only.sample_times,
            "every = {every}"
        );
    }
}

fn f32_refusal(plan: &LinearPhPlan) -> String {
    let ctx = common::gpu_context(Precision::F32);
    match run(ctx, plan, &ExecutorOptions::default()) {
        Ok(results) => panic!(
            "f32 ran a plan it cannot represent: final state {:?}",
            results.members[0].final_state
        ),
        Err(e) => e.to_string(),
    }
}

/// In f32 a parameter beyond the largest f32 (here the step operators of B = 1e39, with
/// a non-zero input) is refused naming --precision and the value, not run to ±∞.
#[test]
fn f32_refuses_parameters_beyond_its_range() {
    let error = f32_refusal(&linear_plan(&[
        "system.B=[[0.0], [1e39]]",
        "input.0={kind=\"constant\",value=1.0}",
    ]));
    common::assert_mentions(
        &error,
        &[
            "--precision: ",
            "per-member parameters",
            "e3",
            "--precision f64",
        ],
    );
}

/// In f32 an input beyond the largest f32 is refused before any work.
#[test]
fn f32_refuses_inputs_beyond_its_range() {
    let error = f32_refusal(&linear_plan(&[
        "system.B=[[0.0], [1e-40]]",
        "input.0={kind=\"constant\",value=1e39}",
    ]));
    common::assert_mentions(&error, &["--precision: ", "shared inputs", "1e39"]);
}

/// In f32 a step h that rounds to 0 (which would freeze the run) is refused.
#[test]
fn f32_refuses_a_step_that_rounds_to_zero() {
    let error = f32_refusal(&linear_plan(&["scheme.h=1e-50", "scheme.t_end=1e-48"]));
    common::assert_mentions(
        &error,
        &["--precision: ", "constants", "1e-50", "rounded to 0"],
    );
}

/// f64 holds all of these: the same plans run (results checked against the CPU).
#[test]
fn f64_runs_what_f32_refuses() {
    let ctx = common::gpu_context(Precision::F64);
    let plan = linear_plan(&["scheme.h=1e-50", "scheme.t_end=1e-48"]);
    let device: Results = run(ctx, &plan, &ExecutorOptions::default()).unwrap();
    let cpu = Backend::Cpu(CpuPath::Twin).run(&plan).unwrap();
    let (d, c) = (&device.members[0], &cpu.members[0]);
    assert_eq!(d.nonfinite_step, None);
    for (a, b) in d.final_state.iter().zip(&c.final_state) {
        assert!((a - b).abs() <= 1e-12, "{a} vs {b}");
    }
}
