//! Non-finite results are errors, per member: every member carries the first step after
//! which it was not finite, the same on the CPU reference, the CPU twin and the GPU (both
//! linear-PH kernels and the contact kernel); a run with such members fails and writes
//! nothing unless --keep-nonfinite, which lists them in summary.json; inputs that make
//! overflow certain are refused before any work.

mod common;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, Precision, run};
use harbor::compensated::running_max;
use harbor::contact::ContactConfig;
use harbor::io::Config;
use harbor::kernels::CpuPath;
use harbor::linear_ph::LinearPhConfig;
use harbor::results::Results;

fn statuses(results: &Results) -> Vec<Option<u64>> {
    results.members.iter().map(|m| m.nonfinite_step).collect()
}

/// The pulse experiment with an input amplitude whose square overflows: the stored and
/// port energies are ±inf from the first step of the pulse (t = 8, step 801) on.
#[test]
fn linear_ph_members_report_their_first_nonfinite_step_on_every_path() {
    let mut plan = common::example(
        "oscillator_pulse.toml",
        &["input.0.amplitude=1.7976931348623157e308"],
    )
    .plan()
    .unwrap();
    let expected = vec![Some(801)];
    for path in [CpuPath::Reference, CpuPath::Twin] {
        assert_eq!(
            statuses(&Backend::Cpu(path).run(&plan).unwrap()),
            expected,
            "{path:?}"
        );
    }
    for cooperative in [false, true] {
        plan.cooperative = Some(cooperative);
        let gpu = run(
            common::gpu_context(Precision::F64),
            &plan,
            &ExecutorOptions::default(),
        )
        .unwrap();
        assert_eq!(statuses(&gpu), expected, "cooperative = {cooperative}");
        // The residual maximum keeps the non-finite value instead of skipping it.
        let residual = *gpu.members[0].totals.last().unwrap();
        assert!(!residual.is_finite(), "max_abs_residual = {residual}");
    }
    let reference = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap();
    assert!(!reference.members[0].totals.last().unwrap().is_finite());
}

/// Quantities observed only at record points count too: a constant input of 1.34e154
/// keeps the damped oscillator's state finite (x ~ 1e154) while its stored energy sum
/// overflows; a stiff quartic potential overflows H of a finite contact state. Both are
/// flagged on every path, at the record step where the value is first seen.
#[test]
fn recorded_values_and_totals_that_overflow_flag_the_member() {
    let linear = common::example(
        "oscillator_damped.toml",
        &[
            "input.0={kind=\"constant\",value=1.3407807929942596e154}",
            "scheme.t_end=1.87",
        ],
    )
    .plan()
    .unwrap();
    let contact = common::example(
        "contact_damped_oscillator.toml",
        &[
            "system.potential=[{kind=\"quartic\",beta=1e20}]",
            "scheme.t_end=0.02",
        ],
    )
    .contact_plan()
    .unwrap();
    let gpu = common::gpu_context(Precision::F64);
    for path in [CpuPath::Reference, CpuPath::Twin] {
        let linear_cpu = Backend::Cpu(path).run(&linear).unwrap();
        assert!(
            linear_cpu.members[0]
                .final_state
                .iter()
                .all(|v| v.is_finite())
        );
        assert!(statuses(&linear_cpu)[0].is_some(), "{path:?}");
        let contact_cpu = Backend::Cpu(path).run(&contact).unwrap();
        assert_eq!(statuses(&contact_cpu), vec![Some(2)], "{path:?}");
    }
    let linear_gpu = run(gpu, &linear, &ExecutorOptions::default()).unwrap();
    assert_eq!(
        statuses(&linear_gpu),
        statuses(&Backend::Cpu(CpuPath::Twin).run(&linear).unwrap())
    );
    let contact_gpu = run(gpu, &contact, &ExecutorOptions::default()).unwrap();
    assert_eq!(statuses(&contact_gpu), vec![Some(2)]);
}

/// Softening Duffing oscillators H = p²/2 + x²/2 + (β/4)x⁴ + αz with β < 0 escape over the
/// barrier and blow up in finite time; the others stay finite. The GPU reports the same
/// step as the CPU twin (the same arithmetic), the reference the same or a neighbouring one.
#[test]
fn contact_members_that_blow_up_are_flagged_alike_on_cpu_and_gpu() {
    let text = r#"
[system]
kind = "contact"
x0 = [1.2]
p0 = [1.0]
potential = [{ kind = "harmonic", K = [[1.0]] }, { kind = "quartic", beta = -1.0 }]
damping = { kind = "constant", alpha = 0.05 }
[scheme]
family = "splitting"
composition = "yoshida-6a"
h = 0.01
t_end = 20.0
[output]
every = 100
[ensemble]
members = 64
seed = 3
beta = { kind = "uniform", low = -1.0, high = 0.5 }
x0 = { kind = "uniform", low = 0.0, high = 2.0 }
"#;
    let plan = Config::from_str_with(text, &[], "test")
        .unwrap()
        .contact_plan()
        .unwrap();
    let reference = statuses(&Backend::Cpu(CpuPath::Reference).run(&plan).unwrap());
    let twin = statuses(&Backend::Cpu(CpuPath::Twin).run(&plan).unwrap());
    let gpu = statuses(
        &run(
            common::gpu_context(Precision::F64),
            &plan,
            &ExecutorOptions::default(),
        )
        .unwrap(),
    );
    let blown = twin.iter().filter(|s| s.is_some()).count();
    eprintln!("{blown} of 64 members blew up");
    assert!(
        blown > 0 && blown < 64,
        "the ensemble mixes both outcomes: {twin:?}"
    );
    assert_eq!(gpu, twin);
    for (i, (r, t)) in reference.iter().zip(&twin).enumerate() {
        match (r, t) {
            (None, None) => {}
            (Some(a), Some(b)) => assert!(a.abs_diff(*b) <= 2, "member {i}: {a} vs {b}"),
            _ => panic!("member {i}: reference {r:?}, twin {t:?}"),
        }
    }
}

#[test]
fn a_nonfinite_run_fails_and_writes_nothing_unless_kept() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_pulse.toml");
    let set = ["input.0.amplitude=1.7976931348623157e308"];
    let stderr = common::simulate_fails_with(&config, &set);
    common::assert_mentions(
        &stderr,
        &[
            "1 of 1 member(s) became non-finite",
            "member 0 after step 801",
            "nothing was written",
            "--keep-nonfinite",
        ],
    );
    let out = dir.path().join("kept");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(["simulate", config.to_str().unwrap(), "--out"])
        .arg(&out)
        .args(["--backend", "cpu", "--keep-nonfinite", "--set", set[0]])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: 1 of 1 member(s) became non-finite"),
        "{stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["nonfinite"]["members"], 1);
    assert_eq!(summary["nonfinite"]["first"][0]["member"], 0);
    assert_eq!(summary["nonfinite"]["first"][0]["step"], 801);
    // A finite run says so too.
    let fine = dir.path().join("fine");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(["simulate", config.to_str().unwrap(), "--out"])
        .arg(&fine)
        .args(["--backend", "cpu"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fine.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["nonfinite"]["members"], 0);
}

#[test]
fn certain_overflow_is_refused_before_any_work() {
    let pulse = common::example_path("oscillator_pulse.toml");
    let e = common::simulate_fails_with(&pulse, &["system.x0=[0.0,-1e300]"]);
    common::assert_mentions(&e, &["system.Q", "H(x0)", "is not finite", "1e300"]);
    let e = common::simulate_fails_with(
        &pulse,
        &["system.B=[[0.0],[1e300]]", "input.0.amplitude=1e10"],
    );
    common::assert_mentions(&e, &["input", "max |B_ij| = 1e300", "overflows"]);
    let ensemble = common::example_path("oscillator_ensemble.toml");
    let e = common::simulate_fails_with(&ensemble, &["ensemble.x0.sigma=1e300"]);
    common::assert_mentions(&e, &["ensemble member 0", "H(x0)", "is not finite"]);
    let contact = common::example_path("contact_damped_oscillator.toml");
    let e = common::simulate_fails_with(&contact, &["system.x0=[1e200]"]);
    common::assert_mentions(&e, &["system.x0", "H(0, x0, p0, z0) = inf"]);
}

#[test]
fn the_running_maximum_keeps_what_max_would_skip() {
    assert_eq!(running_max(1.0, 2.0), 2.0);
    assert_eq!(running_max(2.0, 1.0), 2.0);
    assert!(running_max(1.0, f64::NAN).is_nan());
    assert!(running_max(f64::NAN, 3.0).is_nan());
    assert_eq!(running_max(1.0, f64::INFINITY), f64::INFINITY);
    assert_eq!(running_max(f64::INFINITY, 3.0), f64::INFINITY);
    // f64::max would have returned 1.0 here.
    assert_eq!(1.0_f64.max(f64::NAN), 1.0);
}
