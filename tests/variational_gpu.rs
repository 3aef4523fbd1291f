//! The variational kernel (`shaders/variational/step.wgsl`, the model's tapes and the rule
//! generated into it) against its CPU twin and the CPU reference marcher: the twin gives
//! the reference's bits whatever the chunks and dispatch windows, and the GPU (lavapipe in
//! CI; a missing adapter fails, never skips) matches the reference member by member to
//! ≤ 1e-10 in f64 on ensembles of 1024 initial-value problems, unconstrained (the forced
//! oscillator) and constrained (the spherical pendulum), failures flagged at the same step.
//! Boundary-value problems run on their own kernel (`shaders/variational/boundary.wgsl`,
//! one invocation per member solving its whole path): the twin gives the reference's bits
//! and the GPU matches it to ≤ 1e-10 on 1024 sphere splines, the cubic spline and the
//! beam. Generalised forces (Lagrange–d'Alembert) run on both kernels: damped and driven
//! oscillators, a damped spherical pendulum, a velocity-constrained pair and first-order
//! boundary-value problems with forces, the twins giving the reference's bits and the GPU
//! within 1e-10 of it. Boundary values also record the energy of every step (order 2:
//! Ostrogradsky) and, with a symmetry, the momentum map of every step. Second-order
//! initial-value problems run on their own kernel (`shaders/variational/second_order.wgsl`,
//! start and march): Pais–Uhlenbeck and sphere cubics, twin bits, GPU within 1e-10 but for
//! the multipliers and round-off-level totals (`second_order_round_off`). Run with
//! `--nocapture` to see the measured gaps.

mod common;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, Precision, run};
use harbor::backend::twin;
use harbor::io::Config;
use harbor::kernels::{CpuPath, Family, GpuKernel};
use harbor::plan::MemberResult;
use harbor::variational::{VariationalPlan, plan_from_config};

fn plan(text: &str, overrides: &[&str]) -> VariationalPlan {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::from_str_with(text, &overrides, "test")
        .and_then(|c| plan_from_config(&c))
        .unwrap_or_else(|e| panic!("bad test config: {e}"))
}

fn example_text(name: &str) -> String {
    std::fs::read_to_string(common::example_path(name)).unwrap()
}

/// `examples/variational_forced_oscillator.toml` (time-dependent L, drawn F and q̇_0).
fn forced_oscillator() -> String {
    example_text("variational_forced_oscillator.toml")
}

/// The spherical pendulum of `examples/starters/variational.toml` (a holonomic constraint
/// and the rotational symmetry about z) over an ensemble of drawn g. Its q̇_0 is not drawn:
/// it must stay tangent to the sphere, which independent draws of its entries would break
/// (the plan refuses such members).
fn spherical_pendulum() -> String {
    example_text("starters/variational.toml")
        + r#"
[ensemble]
members = 1024
seed = 11
parameters.g = { kind = "uniform", low = 2.0, high = 20.0 }
"#
}

/// Two coupled oscillators with a velocity (window) constraint ẋ = a ẏ, a drawn, and
/// drawn initial velocities (the first step enforces the constraint).
const VELOCITY_CONSTRAINED: &str = r#"
[system]
kind = "variational"
coordinates = ["x", "y"]
parameters = { a = 0.5, k = 2.0 }
lagrangian = "(xd^2 + yd^2)/2 - (x^2 + k*y^2)/2 - x^4/4"
constraints = ["xd - a*yd"]

[problem]
kind = "initial-value"
q0 = [1.0, 0.5]
qd0 = [0.25, 0.5]

[scheme]
family = "variational"
h = 0.02
t_end = 4.0

[output]
every = 7

[ensemble]
members = 64
seed = 5
parameters.a = { kind = "uniform", low = 0.2, high = 1.5 }
qd0 = { kind = "perturb", sigma = 0.2 }
"#;

fn reference(plan: &VariationalPlan) -> Vec<MemberResult> {
    Backend::Cpu(CpuPath::Reference).run(plan).unwrap().members
}

fn twin_run(plan: &VariationalPlan, caps: (Option<usize>, Option<usize>)) -> Vec<MemberResult> {
    let options = ExecutorOptions {
        max_chunk_members: caps.0,
        max_steps_per_dispatch: caps.1,
        ..ExecutorOptions::default()
    };
    twin::run(plan, &options).unwrap().members
}

fn gpu_run(plan: &VariationalPlan, precision: Precision) -> Vec<MemberResult> {
    run(
        common::gpu_context(precision),
        plan,
        &ExecutorOptions::default(),
    )
    .unwrap_or_else(|e| panic!("GPU run failed: {e}"))
    .members
}

/// `totals[2]`, the Newton iterations of the whole run.
const NEWTON_ITERATIONS: usize = 2;

/// The gaps of a GPU run `a` from the reference `b`.
struct Gaps {
    /// The largest |a − b| / max(1, |b|) over every value of every member (path,
    /// multipliers, energy, momentum map, totals but the Newton iterations, final state).
    values: f64,
    /// The largest difference of a member's Newton iterations, and its share of them.
    iterations: f64,
    iterations_share: f64,
}

/// The gaps of `a` from `b`, printed with where the largest is; flags and non-finite values
/// must agree exactly.
fn gaps(a: &[MemberResult], b: &[MemberResult]) -> Gaps {
    assert_eq!(a.len(), b.len());
    let mut worst = (0.0_f64, String::new());
    let (mut iterations, mut iterations_share) = (0.0_f64, 0.0_f64);
    let mut compare = |x: &[f64], y: &[f64], what: &str, i: usize| {
        assert_eq!(x.len(), y.len(), "member {i} {what}");
        for (j, (u, v)) in x.iter().zip(y).enumerate() {
            if u.is_finite() || v.is_finite() {
                assert!(
                    u.is_finite() && v.is_finite(),
                    "member {i} {what}[{j}]: {u} vs {v}"
                );
                let gap = (u - v).abs() / v.abs().max(1.0);
                if gap > worst.0 {
                    worst = (gap, format!("member {i} {what}[{j}]: {u:e} vs {v:e}"));
                }
            }
        }
    };
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x.nonfinite_step, y.nonfinite_step, "member {i} flag");
        compare(&x.trajectory, &y.trajectory, "trajectory", i);
        assert_eq!(x.channels.len(), y.channels.len());
        for (c, (u, v)) in x.channels.iter().zip(&y.channels).enumerate() {
            compare(u, v, &format!("channel {c}"), i);
        }
        let (mut u, mut v) = (x.totals.clone(), y.totals.clone());
        let difference = (u[NEWTON_ITERATIONS] - v[NEWTON_ITERATIONS]).abs();
        iterations = iterations.max(difference);
        iterations_share = iterations_share.max(difference / v[NEWTON_ITERATIONS].max(1.0));
        u.remove(NEWTON_ITERATIONS);
        v.remove(NEWTON_ITERATIONS);
        compare(&u, &v, "totals (but the Newton iterations)", i);
        compare(&x.final_state, &y.final_state, "final state", i);
    }
    eprintln!("  largest gap at {}", worst.1);
    Gaps {
        values: worst.0,
        iterations,
        iterations_share,
    }
}

/// Asserts the GPU's gaps: every value within 1e-10 (relative to max(1, |value|)), and a
/// member's Newton iterations within 1 % of the reference's. Newton stops when its update
/// is at most the tolerance times max(1, ‖q‖): where an update lands within rounding of
/// that bound, the GPU (whose compiler may reassociate and fuse) and the CPU can decide
/// differently, and one of them takes one more iteration (an update below the tolerance,
/// invisible in every recorded value).
fn assert_gaps(name: &str, gaps: &Gaps) {
    eprintln!(
        "{name}: largest GPU − reference gap {:.2e}; Newton iterations differ by at most {} ({:.1e} of a member's)",
        gaps.values, gaps.iterations, gaps.iterations_share
    );
    assert!(
        gaps.values <= 1e-10,
        "{name}: GPU vs reference {:e}",
        gaps.values
    );
    assert!(
        gaps.iterations_share <= 1e-2,
        "{name}: Newton iterations differ by {} ({:e})",
        gaps.iterations,
        gaps.iterations_share
    );
}

/// The twin is the reference to the last bit, however members and steps are cut: the
/// forced oscillator (midpoint and trapezoid), the spherical pendulum (a holonomic
/// constraint, the momentum map) and a velocity constraint.
#[test]
fn the_twin_gives_the_reference_bits() {
    let oscillator = forced_oscillator();
    let pendulum = spherical_pendulum();
    let cases: [(&str, &[&str]); 6] = [
        (&oscillator, &["ensemble.members=37"]),
        (
            &oscillator,
            &[
                "ensemble.members=9",
                "problem.rule=\"trapezoid\"",
                "output.every=1",
            ],
        ),
        (&pendulum, &["ensemble.members=17", "scheme.t_end=2.0"]),
        (
            &pendulum,
            &[
                "ensemble.members=5",
                "scheme.t_end=1.0",
                "problem.rule=\"trapezoid\"",
            ],
        ),
        (VELOCITY_CONSTRAINED, &[]),
        (VELOCITY_CONSTRAINED, &["problem.rule=\"trapezoid\""]),
    ];
    for (text, overrides) in cases {
        let plan = plan(text, overrides);
        let expected = reference(&plan);
        for caps in [(None, None), (Some(5), Some(3)), (Some(1), Some(1))] {
            common::assert_same_bits(
                &twin_run(&plan, caps),
                &expected,
                &format!("{overrides:?} {caps:?}"),
            );
        }
    }
}

/// Members whose Newton solve fails are flagged at the same step, with the same status
/// code, by the twin, the GPU and the reference, and the other members are undisturbed:
/// `examples/variational_central_potential.toml` with wide draws of q̇_0, where some orbits
/// fall into the singularity at r = 0.
fn plunging_orbits() -> VariationalPlan {
    let text = example_text("variational_central_potential.toml")
        + r#"
[ensemble]
members = 40
seed = 3
qd0 = { kind = "perturb", sigma = 1.0 }
parameters.k = { kind = "uniform", low = 0.5, high = 2.0 }
"#;
    plan(&text, &["scheme.t_end=20.0"])
}

#[test]
fn failures_are_flagged_alike() {
    let plan = plunging_orbits();
    let expected = reference(&plan);
    let failed = expected
        .iter()
        .filter(|m| m.nonfinite_step.is_some())
        .count();
    assert!(
        failed > 0 && failed < expected.len(),
        "{failed} of {} failed",
        expected.len()
    );
    common::assert_same_bits(&twin_run(&plan, (Some(16), Some(7))), &expected, "failures");
    let gpu = gpu_run(&plan, Precision::F64);
    assert_gaps(
        &format!("plunging orbits ({failed} of 40 fail)"),
        &gaps(&gpu, &expected),
    );
}

/// The GPU in f64 against the reference, member by member, on 1024 forced oscillators and
/// 1024 spherical pendulums, and on the velocity-constrained oscillators.
#[test]
fn the_gpu_matches_the_reference_to_1e_10() {
    let oscillator = forced_oscillator();
    let pendulum = spherical_pendulum();
    let cases: [(&str, &str, &[&str]); 3] = [
        ("forced oscillator", &oscillator, &["ensemble.members=1024"]),
        ("spherical pendulum", &pendulum, &[]),
        ("velocity constraint", VELOCITY_CONSTRAINED, &[]),
    ];
    for (name, text, overrides) in cases {
        let plan = plan(text, overrides);
        let expected = reference(&plan);
        assert!(expected.iter().all(|m| m.nonfinite_step.is_none()));
        let gpu = gpu_run(&plan, Precision::F64);
        assert_gaps(
            &format!(
                "{name}, {} members, {} steps",
                expected.len(),
                plan.grid.steps
            ),
            &gaps(&gpu, &expected),
        );
    }
}

/// In f32 the kernel floors Newton's tolerance at 4 ε_f32 and follows the f64 reference to
/// f32's accuracy on the forced oscillator.
#[test]
fn f32_runs_follow_the_reference() {
    let plan = plan(
        &forced_oscillator(),
        &["ensemble.members=64", "scheme.t_end=2.0"],
    );
    let expected = reference(&plan);
    let gpu = gpu_run(&plan, Precision::F32);
    let mut worst = 0.0_f64;
    for (x, y) in gpu.iter().zip(&expected) {
        assert_eq!(x.nonfinite_step, None);
        for (u, v) in x.final_state.iter().zip(&y.final_state) {
            worst = worst.max((u - v).abs() / v.abs().max(1.0));
        }
    }
    eprintln!("f32 final states: largest gap {worst:.2e}");
    assert!(worst <= 1e-4, "f32 vs f64 reference {worst:e}");
}

/// Every variant validates with naga and translates to SPIR-V in both precisions.
#[test]
fn every_variant_validates() {
    use harbor::kernels::wgsl::translate;
    let oscillator = forced_oscillator();
    let pendulum = spherical_pendulum();
    for (text, overrides) in [
        (oscillator.as_str(), vec![]),
        (oscillator.as_str(), vec!["problem.rule=\"trapezoid\""]),
        (pendulum.as_str(), vec![]),
        (VELOCITY_CONSTRAINED, vec![]),
        (
            example_text("variational_central_potential.toml").as_str(),
            vec![],
        ),
    ] {
        let plan = plan(text, &overrides);
        let kernel = plan.kernel_bound().unwrap();
        for precision in [Precision::F64, Precision::F32] {
            translate(&kernel, precision).unwrap_or_else(|e| panic!("{overrides:?}: {e}"));
        }
    }
}

/// The sphere splines of `examples/variational_sphere_spline.toml` (1024 members with
/// drawn knots) at h = 0.02: the whole solve of a member runs in one invocation, whose loop
/// passes (bounded with the Newton cap of 50) must stay within lavapipe's budget; the
/// example's h = 0.01 doubles them.
fn sphere_splines(overrides: &[&str]) -> VariationalPlan {
    let mut all = vec!["scheme.h=0.02"];
    all.extend_from_slice(overrides);
    plan(&example_text("variational_sphere_spline.toml"), &all)
}

/// A first-order boundary-value problem with a holonomic constraint, an observable and the
/// energy: a particle on a cylinder over the unit circle in a potential with a drawn
/// stiffness k, through a knot.
const FIRST_ORDER_BVP: &str = r#"
[system]
kind = "variational"
coordinates = ["x", "y", "z"]
parameters = { k = 1.5 }
lagrangian = "(xd^2 + yd^2 + zd^2)/2 - k*(x^2 + y^2)/2 - z^4/4"
constraints = ["x^2 + y^2 - 1"]
observables = { speed = "sqrt(xd^2 + yd^2 + zd^2)" }

[problem]
kind = "boundary-value"
start = { q = [1.0, 0.0, 0.0] }
end = { q = [0.0, 1.0, -0.5] }
knots = [{ t = 0.5, q = [0.8, 0.6, -0.1] }]

[scheme]
family = "variational"
h = 0.05
t_end = 1.0

[output]
every = 3

[ensemble]
members = 12
seed = 9
parameters.k = { kind = "uniform", low = 0.5, high = 3.0 }
"#;

/// Rotations about the z axis, ξ(q) = (−y, x, 0): the sphere splines' and the cylinder's
/// symmetry (the momentum map J_z).
const ROTATION: &str = "system.symmetry=['-y', 'x', '0']";

/// Translations along x, ξ = (1, 0): the Euclidean cubic spline's symmetry.
const TRANSLATION: &str = "system.symmetry=['1', '0']";

/// The energy (order 2 always; order 1 with an energy) and, with a symmetry, the momentum
/// map are recorded for every step and in the totals: they are what the kernel must
/// reproduce, so a case without them would test nothing new.
fn assert_records_every_step_quantity(
    plan: &VariationalPlan,
    results: &[MemberResult],
    name: &str,
) {
    let spec = plan.record_spec();
    let has = |channel: &str| spec.channels.iter().any(|c| c.name == channel);
    assert!(has("energy"), "{name}: no energy channel");
    assert_eq!(has("momentum"), plan.model.symmetry.is_some(), "{name}");
    for total in ["energy_first", "energy_max_abs_change"] {
        let at = spec.totals.iter().position(|t| *t == total).unwrap();
        assert!(
            results.iter().all(|m| m.totals[at].is_finite()),
            "{name}: {total}"
        );
    }
    if let Some(at) = spec.totals.iter().position(|t| *t == "momentum_first") {
        assert!(
            results.iter().all(|m| m.totals[at].is_finite()),
            "{name}: J"
        );
    }
}

/// The boundary-value kernel's twin is the reference to the last bit: sphere splines (a
/// holonomic constraint, drawn knots), the Euclidean cubic spline through two knots, the
/// clamped beam, a first-order problem with a holonomic constraint, an observable and the
/// energy (midpoint and trapezoid), with records every step or sparser, in one chunk or many;
/// with a symmetry (sphere splines and the cylinder with J_z, the cubic spline with a
/// translation) also the momentum map of every step, and for order 2 the Ostrogradsky
/// energy of every step.
#[test]
fn the_boundary_value_twin_gives_the_reference_bits() {
    let cases: Vec<(&str, VariationalPlan)> = vec![
        ("sphere splines", sphere_splines(&["ensemble.members=24"])),
        (
            "sphere splines, every 7",
            sphere_splines(&["ensemble.members=5", "output.every=7"]),
        ),
        (
            "cubic spline",
            plan(&example_text("variational_cubic_spline.toml"), &[]),
        ),
        ("beam", plan(&example_text("variational_beam.toml"), &[])),
        ("first order", plan(FIRST_ORDER_BVP, &[])),
        (
            "first order, trapezoid",
            plan(FIRST_ORDER_BVP, &["problem.rule=\"trapezoid\""]),
        ),
        (
            "sphere splines, J_z",
            sphere_splines(&["ensemble.members=12", ROTATION]),
        ),
        (
            "sphere splines, J_z, every 7",
            sphere_splines(&["ensemble.members=3", "output.every=7", ROTATION]),
        ),
        (
            "cubic spline, translation",
            plan(
                &example_text("variational_cubic_spline.toml"),
                &[TRANSLATION],
            ),
        ),
        ("first order, J_z", plan(FIRST_ORDER_BVP, &[ROTATION])),
        (
            "first order, trapezoid, J_z",
            plan(FIRST_ORDER_BVP, &["problem.rule=\"trapezoid\"", ROTATION]),
        ),
    ];
    for (name, plan) in cases {
        let expected = reference(&plan);
        assert!(
            expected.iter().all(|m| m.nonfinite_step.is_none()),
            "{name}: the reference fails"
        );
        assert_records_every_step_quantity(&plan, &expected, name);
        for caps in [(None, None), (Some(5), Some(3)), (Some(1), Some(1))] {
            common::assert_same_bits(
                &twin_run(&plan, caps),
                &expected,
                &format!("{name} {caps:?}"),
            );
        }
    }
}

/// A boundary-value solve that fails (one Newton iteration allowed) is
/// flagged alike by the twin, the GPU and the reference: status code, iterations, NaN
/// records, totals.
#[test]
fn boundary_value_failures_are_flagged_alike() {
    for (name, plan) in [
        (
            "one iteration",
            sphere_splines(&["ensemble.members=16", "system.newton.max_iterations=1"]),
        ),
        (
            "beam, one iteration",
            plan(
                &example_text("variational_beam.toml"),
                &["system.newton.max_iterations=1"],
            ),
        ),
        (
            "sphere splines with J_z, one iteration",
            sphere_splines(&[
                "ensemble.members=16",
                "system.newton.max_iterations=1",
                ROTATION,
            ]),
        ),
        (
            "first order with J_z, one iteration",
            plan(
                FIRST_ORDER_BVP,
                &["system.newton.max_iterations=1", ROTATION],
            ),
        ),
    ] {
        let expected = reference(&plan);
        assert!(
            expected.iter().all(|m| m.nonfinite_step == Some(1)),
            "{name}: the reference should fail"
        );
        common::assert_same_bits(&twin_run(&plan, (Some(5), None)), &expected, name);
        let gpu = gpu_run(&plan, Precision::F64);
        assert_gaps(name, &gaps(&gpu, &expected));
    }
}

/// The GPU in f64 against the reference, member by member and value by value (path,
/// multipliers, observables, energy, residuals, action, final point): 1024 sphere splines
/// with drawn knots at h = 0.02, the Euclidean cubic spline at h = 0.025 and the clamped
/// beam at h = 0.02 (the examples' h = 0.01 would take a single solve past lavapipe's loop
/// budget with the Newton cap of 50), and the first-order problem.
#[test]
fn the_boundary_value_gpu_matches_the_reference_to_1e_10() {
    let cases: Vec<(&str, VariationalPlan)> = vec![
        ("sphere splines", sphere_splines(&[])),
        (
            "cubic spline",
            plan(
                &example_text("variational_cubic_spline.toml"),
                &["scheme.h=0.025"],
            ),
        ),
        (
            "beam",
            plan(&example_text("variational_beam.toml"), &["scheme.h=0.02"]),
        ),
        ("first order", plan(FIRST_ORDER_BVP, &[])),
        ("sphere splines, J_z", sphere_splines(&[ROTATION])),
        (
            "cubic spline, translation",
            plan(
                &example_text("variational_cubic_spline.toml"),
                &["scheme.h=0.025", TRANSLATION],
            ),
        ),
        ("first order, J_z", plan(FIRST_ORDER_BVP, &[ROTATION])),
    ];
    for (name, plan) in cases {
        let expected = reference(&plan);
        assert!(expected.iter().all(|m| m.nonfinite_step.is_none()));
        assert_records_every_step_quantity(&plan, &expected, name);
        let started = std::time::Instant::now();
        let gpu = gpu_run(&plan, Precision::F64);
        eprintln!("{name}: GPU run {:.1} s", started.elapsed().as_secs_f64());
        assert_gaps(
            &format!(
                "{name}, {} members, {} steps",
                expected.len(),
                plan.grid.steps
            ),
            &gaps(&gpu, &expected),
        );
    }
}

/// Every boundary-value variant validates with naga and translates to SPIR-V in both
/// precisions; with a symmetry its work and loop estimates count the momentum map's
/// windows and generators (more flops and loop passes per step than without).
#[test]
fn every_boundary_value_variant_validates() {
    use harbor::kernels::wgsl::translate;
    let cubic = example_text("variational_cubic_spline.toml");
    for (plan, without) in [
        (sphere_splines(&[]), None),
        (plan(&cubic, &[]), None),
        (plan(&example_text("variational_beam.toml"), &[]), None),
        (plan(FIRST_ORDER_BVP, &[]), None),
        (plan(FIRST_ORDER_BVP, &["problem.rule=\"trapezoid\""]), None),
        (sphere_splines(&[ROTATION]), Some(sphere_splines(&[]))),
        (plan(&cubic, &[TRANSLATION]), Some(plan(&cubic, &[]))),
        (
            plan(FIRST_ORDER_BVP, &[ROTATION]),
            Some(plan(FIRST_ORDER_BVP, &[])),
        ),
    ] {
        let kernel = plan.kernel_bound().unwrap();
        assert!(kernel.scratch > 0);
        for precision in [Precision::F64, Precision::F32] {
            translate(&kernel, precision).unwrap_or_else(|e| panic!("{e}"));
        }
        if let Some(without) = without {
            let without = without.kernel_bound().unwrap();
            assert!(kernel.flops_per_step > without.flops_per_step);
            assert!(kernel.loop_iterations_per_step > without.loop_iterations_per_step);
        }
    }
}

/// The forced oscillator of `examples/variational_forced_oscillator.toml` damped by the
/// nonlinear force f = −c ẋ − μ x² ẋ with c drawn per member: the force depends on q and
/// q̇ (both blocks of its Jacobian enter Newton) and on x² (an `expr_powi` loop in the
/// kernels).
fn damped_oscillator(overrides: &[&str]) -> VariationalPlan {
    let mut all = vec![
        "system.parameters={omega = 1.0, F = 0.5, Omega = 0.7, c = 0.3, mu = 0.2}",
        "system.forces=['-c*xd - mu*x^2*xd']",
        "ensemble.parameters.c={kind = 'uniform', low = 0.05, high = 0.6}",
    ];
    all.extend_from_slice(overrides);
    plan(&forced_oscillator(), &all)
}

/// The spherical pendulum (a holonomic constraint, the momentum map) damped by −c q̇ (in
/// z by −c (1 + z²) ż) and driven in y by a time-dependent force that is not tangent to
/// the sphere (its normal part goes into the multiplier).
fn damped_pendulum(overrides: &[&str]) -> VariationalPlan {
    let mut all = vec![
        "system.parameters={g = 9.81, l = 1.0, c = 0.4}",
        "system.forces=['-c*xd', '-c*yd + 0.3*cos(2*t)*x', '-c*(1 + z^2)*zd']",
    ];
    all.extend_from_slice(overrides);
    plan(&spherical_pendulum(), &all)
}

/// The velocity-constrained oscillators with a gyroscopic coupling g and forces that
/// depend on q, q̇ and t.
fn forced_velocity_constrained(overrides: &[&str]) -> VariationalPlan {
    let mut all = vec![
        "system.parameters={a = 0.5, k = 2.0, g = 0.7}",
        "system.forces=['g*yd - 0.1*x^2*xd', '-g*xd + 0.2*sin(t)*x*y']",
    ];
    all.extend_from_slice(overrides);
    plan(VELOCITY_CONSTRAINED, &all)
}

/// A first-order boundary-value problem with generalised forces: two coupled oscillators
/// (drawn stiffness w), damped by −c (1 + x²) ẋ and −c ẏ with c drawn, a gyroscopic
/// coupling and a time-dependent drive, through a knot.
const FORCED_BVP: &str = r#"
[system]
kind = "variational"
coordinates = ["x", "y"]
parameters = { c = 0.5, w = 2.0, g = 0.3 }
lagrangian = "(xd^2 + yd^2)/2 - w^2*(x^2 + y^2)/2 - x^2*y^2/2"
forces = ["-c*(1 + x^2)*xd + g*yd", "-c*yd - g*xd + sin(3*t)"]

[problem]
kind = "boundary-value"
start = { q = [1.0, 0.0] }
end = { q = [0.0, 0.5] }
knots = [{ t = 0.5, q = [0.4, 0.8] }]

[scheme]
family = "variational"
h = 0.025
t_end = 1.0

[output]
every = 3

[ensemble]
members = 256
seed = 13
parameters.c = { kind = "uniform", low = 0.0, high = 1.0 }
parameters.w = { kind = "uniform", low = 1.0, high = 3.0 }
"#;

/// The first-order problem on the cylinder (`FIRST_ORDER_BVP`: a holonomic constraint, an
/// observable, the energy) damped by −c q̇ with a nonlinear drag on z.
fn forced_cylinder(overrides: &[&str]) -> VariationalPlan {
    let mut all = vec![
        "system.parameters={k = 1.5, c = 0.4}",
        "system.forces=['-c*xd', '-c*yd', '-c*zd - 0.5*z*zd^2']",
    ];
    all.extend_from_slice(overrides);
    plan(FIRST_ORDER_BVP, &all)
}

/// With generalised forces the twins of both kernels are the reference to the last bit,
/// however members and steps are cut: the damped oscillator (midpoint and trapezoid), the
/// damped pendulum, the forced velocity-constrained pair, and the boundary-value problems
/// with forces (midpoint and trapezoid, with and without a holonomic constraint). The
/// plans have a kernel: forces no longer send a run to the CPU.
#[test]
fn with_forces_the_twins_give_the_reference_bits() {
    let cases: Vec<(&str, VariationalPlan)> = vec![
        (
            "damped oscillator",
            damped_oscillator(&["ensemble.members=37"]),
        ),
        (
            "damped oscillator, trapezoid",
            damped_oscillator(&[
                "ensemble.members=9",
                "problem.rule=\"trapezoid\"",
                "output.every=1",
            ]),
        ),
        (
            "damped pendulum",
            damped_pendulum(&["ensemble.members=17", "scheme.t_end=2.0"]),
        ),
        (
            "damped pendulum, trapezoid",
            damped_pendulum(&[
                "ensemble.members=5",
                "scheme.t_end=1.0",
                "problem.rule=\"trapezoid\"",
            ]),
        ),
        (
            "forced velocity constraint",
            forced_velocity_constrained(&[]),
        ),
        (
            "forced velocity constraint, trapezoid",
            forced_velocity_constrained(&["problem.rule=\"trapezoid\""]),
        ),
        (
            "forced boundary values",
            plan(FORCED_BVP, &["ensemble.members=24"]),
        ),
        (
            "forced boundary values, trapezoid",
            plan(
                FORCED_BVP,
                &["ensemble.members=7", "problem.rule=\"trapezoid\""],
            ),
        ),
        ("forced cylinder", forced_cylinder(&[])),
    ];
    for (name, plan) in cases {
        assert!(plan.model.forces.is_some(), "{name}: no forces");
        assert!(plan.gpu_kernel().is_some(), "{name}: no kernel");
        let expected = reference(&plan);
        assert!(
            expected.iter().all(|m| m.nonfinite_step.is_none()),
            "{name}: the reference fails"
        );
        for caps in [(None, None), (Some(5), Some(3)), (Some(1), Some(1))] {
            common::assert_same_bits(
                &twin_run(&plan, caps),
                &expected,
                &format!("{name} {caps:?}"),
            );
        }
    }
}

/// The GPU in f64 with generalised forces against the reference, member by member and
/// value by value (≤ 1e-10, Newton iterations within 1 %), and against the twin (printed):
/// 1024 damped oscillators × 2000 steps, 256 damped pendulums × 1000 steps, the forced
/// velocity-constrained pair (64 members, trapezoid), 256 forced boundary-value problems
/// and the damped problem on the cylinder (midpoint and trapezoid).
#[test]
fn with_forces_the_gpu_matches_the_reference_to_1e_10() {
    let cases: Vec<(&str, VariationalPlan)> = vec![
        (
            "damped oscillator",
            damped_oscillator(&["ensemble.members=1024"]),
        ),
        (
            "damped pendulum",
            damped_pendulum(&["ensemble.members=256"]),
        ),
        (
            "forced velocity constraint, trapezoid",
            forced_velocity_constrained(&["problem.rule=\"trapezoid\""]),
        ),
        ("forced boundary values", plan(FORCED_BVP, &[])),
        (
            "forced boundary values, trapezoid",
            plan(FORCED_BVP, &["problem.rule=\"trapezoid\""]),
        ),
        ("forced cylinder", forced_cylinder(&[])),
    ];
    for (name, plan) in cases {
        let expected = reference(&plan);
        assert!(
            expected.iter().all(|m| m.nonfinite_step.is_none()),
            "{name}: the reference fails"
        );
        let started = std::time::Instant::now();
        let gpu = gpu_run(&plan, Precision::F64);
        eprintln!("{name}: GPU run {:.1} s", started.elapsed().as_secs_f64());
        let name = format!(
            "{name}, {} members, {} steps",
            expected.len(),
            plan.grid.steps
        );
        assert_gaps(&name, &gaps(&gpu, &expected));
        let twin = gaps(&gpu, &twin_run(&plan, (None, None)));
        eprintln!(
            "{name}: largest GPU − twin gap {:.2e}; Newton iterations differ by at most {}",
            twin.values, twin.iterations
        );
    }
}

/// Failures with forces are flagged alike: the damping force f = −c √(x + 1.2) ẋ is not
/// finite below x = −1.2, which the lightly damped members (c drawn in [0, 0.3]), driven
/// near resonance, reach; the twin, the GPU and the reference flag them at the same step
/// with the same status, the other members undisturbed. (A force that blows the path up
/// instead, such as c ẋ³, fails where Newton loses its root near the blow-up, a step that
/// rounding can move.)
#[test]
fn with_forces_failures_are_flagged_alike() {
    let plan = damped_oscillator(&[
        "system.forces=['-c*sqrt(x + 1.2)*xd']",
        "ensemble.members=40",
        "ensemble.parameters.c={kind = 'uniform', low = 0.0, high = 0.3}",
    ]);
    let expected = reference(&plan);
    let failed = expected
        .iter()
        .filter(|m| m.nonfinite_step.is_some())
        .count();
    assert!(
        failed > 0 && failed < expected.len(),
        "{failed} of {} failed",
        expected.len()
    );
    common::assert_same_bits(
        &twin_run(&plan, (Some(16), Some(7))),
        &expected,
        "failures with forces",
    );
    let gpu = gpu_run(&plan, Precision::F64);
    assert_gaps(
        &format!("damped by −c √(x + 1.2) ẋ ({failed} of 40 fail)"),
        &gaps(&gpu, &expected),
    );
}

/// Every variant with forces validates with naga and translates to SPIR-V in both
/// precisions, and its work and loop estimates count the forces' tape: the same plans
/// without forces have fewer flops per step and, as f's x² runs an `expr_powi` loop in
/// every Newton iteration, fewer loop passes per step.
#[test]
fn every_variant_with_forces_validates_and_is_counted() {
    use harbor::kernels::wgsl::translate;
    let cases: Vec<(&str, VariationalPlan, VariationalPlan)> = vec![
        (
            "damped oscillator",
            damped_oscillator(&[]),
            damped_oscillator(&["system.forces=[]"]),
        ),
        (
            "damped oscillator, trapezoid",
            damped_oscillator(&["problem.rule=\"trapezoid\""]),
            damped_oscillator(&["problem.rule=\"trapezoid\"", "system.forces=[]"]),
        ),
        (
            "damped pendulum",
            damped_pendulum(&[]),
            damped_pendulum(&["system.forces=[]"]),
        ),
        (
            "forced velocity constraint",
            forced_velocity_constrained(&[]),
            forced_velocity_constrained(&["system.forces=[]"]),
        ),
        (
            "forced boundary values",
            plan(FORCED_BVP, &[]),
            plan(FORCED_BVP, &["system.forces=[]"]),
        ),
        (
            "forced boundary values, trapezoid",
            plan(FORCED_BVP, &["problem.rule=\"trapezoid\""]),
            plan(
                FORCED_BVP,
                &["problem.rule=\"trapezoid\"", "system.forces=[]"],
            ),
        ),
    ];
    for (name, forced, free) in cases {
        assert!(forced.model.forces.is_some() && free.model.forces.is_none());
        let kernel = forced.kernel_bound().unwrap();
        for precision in [Precision::F64, Precision::F32] {
            translate(&kernel, precision).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let without = free.kernel_bound().unwrap();
        assert!(
            kernel.flops_per_step > without.flops_per_step,
            "{name}: {} flops per step with forces, {} without",
            kernel.flops_per_step,
            without.flops_per_step
        );
        assert!(
            kernel.loop_iterations_per_step > without.loop_iterations_per_step,
            "{name}: {} loop passes per step with forces, {} without",
            kernel.loop_iterations_per_step,
            without.loop_iterations_per_step
        );
    }
}

/// `examples/variational_pais_uhlenbeck.toml`: a second-order Lagrangian without
/// constraints, 256 members with drawn ω₂ and q̈(0) over 2000 steps (overrides set the
/// member count).
fn pais_uhlenbeck(overrides: &[&str]) -> VariationalPlan {
    plan(&example_text("variational_pais_uhlenbeck.toml"), overrides)
}

/// The cubic on the sphere of `tests/variational.rs`
/// (`a_sphere_cubic_initial_value_problem_stays_on_the_sphere_at_second_order`: L = ½|q̈|²
/// on |q| = 1, the momentum map of rotations about z) over an ensemble of drawn q̈(0) and
/// q⃛(0); its solutions blow up near t = 1.45 (that test's note), so runs past t = 1 fail
/// member by member.
const SPHERE_CUBIC: &str = r#"
[system]
kind = "variational"
coordinates = ["x", "y", "z"]
order = 2
lagrangian = "(xdd^2 + ydd^2 + zdd^2)/2"
constraints = ["x^2 + y^2 + z^2 - 1"]
symmetry = ["-y", "x", "0"]

[problem]
kind = "initial-value"
q0 = [1.0, 0.0, 0.0]
qd0 = [0.0, 1.0, 0.0]
qdd0 = [-1.0, 0.0, 0.5]
qddd0 = [0.0, -0.3, 0.2]

[scheme]
family = "variational"
h = 0.01
t_end = 1.0

[output]
every = 3

[ensemble]
members = 256
seed = 21
qdd0 = { kind = "perturb", sigma = 0.05 }
qddd0 = { kind = "perturb", sigma = 0.1 }
"#;

/// Second-order initial-value problems run on their own kernel
/// (`shaders/variational/second_order.wgsl`: the start and the march in one invocation);
/// its twin is the reference to the last bit however members and steps are cut: the
/// Pais–Uhlenbeck ensemble (1024 members; the energy of every step) and the sphere cubic (a
/// holonomic constraint, whose start projects q_1 onto it, and the momentum map with J_0
/// from the start), with records every step or sparser.
#[test]
fn second_order_twin_gives_the_reference_bits() {
    // (members per chunk, steps per dispatch) caps.
    type Caps = (Option<usize>, Option<usize>);
    let cases: Vec<(&str, VariationalPlan, Vec<Caps>)> = vec![
        (
            "Pais–Uhlenbeck, 1024 members",
            pais_uhlenbeck(&["ensemble.members=1024"]),
            vec![(None, None), (Some(300), Some(7))],
        ),
        (
            "Pais–Uhlenbeck, every step",
            pais_uhlenbeck(&["ensemble.members=5", "output.every=1", "scheme.t_end=1.0"]),
            vec![(Some(1), Some(1)), (Some(2), Some(3))],
        ),
        (
            "sphere cubic",
            plan(SPHERE_CUBIC, &["ensemble.members=40"]),
            vec![(None, None), (Some(5), Some(3)), (Some(1), Some(1))],
        ),
    ];
    for (name, plan, caps) in cases {
        assert!(plan.gpu_kernel().is_some(), "{name}: no kernel");
        let expected = reference(&plan);
        assert!(
            expected.iter().all(|m| m.nonfinite_step.is_none()),
            "{name}: the reference fails"
        );
        for caps in caps {
            common::assert_same_bits(
                &twin_run(&plan, caps),
                &expected,
                &format!("{name} {caps:?}"),
            );
        }
    }
}

/// Takes out of both runs what the discrete equations of a second-order problem fix only
/// to round-off amplified by their scaling, returning the largest gaps: the multipliers μ
/// (the Newton matrix holds ∂²L_d ~ 1/h³ beside h ∇φ_h, so μ is resolved to ~ε/h⁴ ≈ 1e-8
/// relative at h = 0.01, and any reordering — the GPU's compiler may fuse and reassociate
/// — moves it that much), the relative equation residual (a round-off level), and the
/// largest change of the Ostrogradsky energy (third differences of the path ÷ h³: a path
/// differing in its last bits moves E_k by ~1e-16 |q|/h³, ~1e-10 at h = 0.01), which is
/// then compared on the energy's scale max(1, |E_first|). Everything else (path, energy,
/// momentum map, totals, final state) stays in the 1e-10 comparison.
fn second_order_round_off(
    plan: &VariationalPlan,
    gpu: &mut [MemberResult],
    expected: &mut [MemberResult],
) -> [f64; 3] {
    let spec = plan.record_spec();
    let total = |name: &str| spec.totals.iter().position(|t| *t == name).unwrap();
    let (first, change, equation) = (
        total("energy_first"),
        total("energy_max_abs_change"),
        total("equation_residual_max"),
    );
    let multipliers = spec.channels.iter().position(|c| c.name == "multipliers");
    let mut largest = [0.0_f64; 3];
    for (x, y) in gpu.iter_mut().zip(expected.iter_mut()) {
        if let Some(c) = multipliers {
            for (u, v) in x.channels[c].iter_mut().zip(&y.channels[c]) {
                if u.is_finite() && v.is_finite() {
                    largest[0] = largest[0].max((*u - v).abs() / v.abs().max(1.0));
                    *u = *v;
                }
            }
        }
        largest[1] = largest[1].max((x.totals[equation] - y.totals[equation]).abs());
        x.totals[equation] = y.totals[equation];
        largest[2] = largest[2].max((x.totals[change] - y.totals[change]).abs());
        let scale = y.totals[first].abs().max(1.0);
        x.totals[change] /= scale;
        y.totals[change] /= scale;
    }
    eprintln!(
        "  μ differ by at most {:.2e} (relative), the equation residual by {:.2e}, the largest energy change by {:.2e} (absolute)",
        largest[0], largest[1], largest[2]
    );
    assert!(largest[0] <= 1e-6, "μ: {:e}", largest[0]);
    assert!(largest[1] <= 1e-9, "equation residual: {:e}", largest[1]);
    assert!(largest[2] <= 1e-9, "energy change: {:e}", largest[2]);
    largest
}

/// The GPU in f64 against the reference, member by member: 1024 Pais–Uhlenbeck
/// oscillators over 2000 steps and 256 sphere cubics with J_z, every value within 1e-10
/// but those `second_order_round_off` takes out (μ within 1e-6, the equation residual and
/// the absolute energy change within 1e-9).
#[test]
fn second_order_gpu_matches_the_reference_to_1e_10() {
    let cases: Vec<(&str, VariationalPlan)> = vec![
        ("Pais–Uhlenbeck", pais_uhlenbeck(&["ensemble.members=1024"])),
        ("sphere cubic", plan(SPHERE_CUBIC, &[])),
    ];
    for (name, plan) in cases {
        let mut expected = reference(&plan);
        assert!(expected.iter().all(|m| m.nonfinite_step.is_none()));
        let mut gpu = gpu_run(&plan, Precision::F64);
        eprintln!("{name}:");
        second_order_round_off(&plan, &mut gpu, &mut expected);
        assert_gaps(
            &format!(
                "{name}, {} members, {} steps",
                expected.len(),
                plan.grid.steps
            ),
            &gaps(&gpu, &expected),
        );
    }
}

/// Second-order failures are flagged alike by the twin (bits), the GPU and the reference:
/// the sphere cubics run to t = 2, past their blow-up, fail at different steps (the first
/// after the start; the GPU's failed steps and status codes equal the reference's, its
/// values near the blow-up are not compared); with one
/// Newton iteration allowed every start fails (J_0's place NaN).
#[test]
fn second_order_failures_are_flagged_alike() {
    for (name, plan, at_start) in [
        (
            "sphere cubics past the blow-up",
            plan(SPHERE_CUBIC, &["ensemble.members=64", "scheme.t_end=2.0"]),
            false,
        ),
        (
            "one Newton iteration",
            plan(
                SPHERE_CUBIC,
                &["ensemble.members=8", "system.newton.max_iterations=1"],
            ),
            true,
        ),
    ] {
        let expected = reference(&plan);
        let failed = expected
            .iter()
            .filter(|m| m.nonfinite_step.is_some())
            .count();
        if !at_start {
            let mut steps: Vec<u64> = expected.iter().filter_map(|m| m.nonfinite_step).collect();
            steps.sort_unstable();
            steps.dedup();
            assert!(
                failed > 0 && steps.len() > 1 && steps[0] > 1,
                "{name}: {failed} of {} failed, at steps {steps:?}",
                expected.len()
            );
        } else {
            assert!(
                expected.iter().all(|m| m.nonfinite_step == Some(1)),
                "{name}: every start should fail"
            );
        }
        common::assert_same_bits(&twin_run(&plan, (Some(16), Some(7))), &expected, name);
        let mut gpu = gpu_run(&plan, Precision::F64);
        if !at_start {
            // Near the blow-up the paths are ill-conditioned: the flags (failed step,
            // status code) must agree exactly, the values are not compared.
            for (i, (x, y)) in gpu.iter().zip(&expected).enumerate() {
                assert_eq!(x.nonfinite_step, y.nonfinite_step, "{name}: member {i}");
                assert_eq!(x.totals[..2], y.totals[..2], "{name}: member {i}");
            }
            eprintln!("{name}: {failed} of {} fail, flagged alike", expected.len());
            continue;
        }
        let mut expected = expected;
        second_order_round_off(&plan, &mut gpu, &mut expected);
        assert_gaps(
            &format!("{name} ({failed} of {} fail)", expected.len()),
            &gaps(&gpu, &expected),
        );
    }
}

/// Every second-order variant validates with naga and translates to SPIR-V in both
/// precisions, and its estimates count the constraint and the symmetry.
#[test]
fn every_second_order_variant_validates() {
    use harbor::kernels::wgsl::translate;
    let free = pais_uhlenbeck(&[]).kernel_bound().unwrap();
    let sphere = plan(SPHERE_CUBIC, &[]).kernel_bound().unwrap();
    let without_symmetry = plan(
        &SPHERE_CUBIC.replace("symmetry = [\"-y\", \"x\", \"0\"]\n", ""),
        &[],
    );
    assert!(without_symmetry.model.symmetry.is_none());
    let without_symmetry = without_symmetry.kernel_bound().unwrap();
    for kernel in [&free, &sphere, &without_symmetry] {
        for precision in [Precision::F64, Precision::F32] {
            translate(kernel, precision).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    assert!(sphere.flops_per_step > without_symmetry.flops_per_step);
    assert!(sphere.loop_iterations_per_step >= without_symmetry.loop_iterations_per_step);
}
