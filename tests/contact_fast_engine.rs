//! The contact fast engine (members side by side in SIMD blocks) against the reference
//! integrator member by member: every recorded value (trajectory [x, p, z] and the
//! `hamiltonian` channel), the final state, the totals and the non-finite step, within
//! 1e-13 relative (the engine is written to give the reference's bits, and the largest
//! deviation found is printed: `cargo test --release --test contact_fast_engine --
//! --nocapture`). Covered: every contact example under every composition of the registry
//! with both time samplings and the Herglotz integrator, the bench's Duffing chains, every
//! instruction set this CPU has, blocks that are not full, lanes that blow up at their own
//! steps, blocks of members that do not share their terms (run by the reference), the
//! CPU backend running the engine, and blocks drawn straight from the plan (every drawn key,
//! members that fail their checks) against blocks of members built one by one.

mod common;

use harbor::backend::Backend;
use harbor::contact::fast::ContactBlock;
use harbor::contact::{
    ContactConfig, ContactMethod, ContactPlan, TimeSampling, contact_chain_plan,
};
use harbor::io::Config;
use harbor::kernels::lanes::SimdLevel;
use harbor::kernels::{CpuPath, Family, FastEngine};
use harbor::plan::MemberResult;
use harbor::tableau::Composition;

/// The largest relative deviation allowed between the engine and the reference.
const TOLERANCE: f64 = 1e-13;

/// The contact examples.
const EXAMPLES: [&str; 6] = [
    "contact_damped_oscillator.toml",
    "contact_energy_sweep.toml",
    "contact_expression_double_well.toml",
    "contact_forced_oscillator.toml",
    "contact_kepler_perturbed.toml",
    "contact_spin_orbit.toml",
];

/// Every method: each composition of the Strang splitting with both samplings, then
/// each composition of the Herglotz step.
fn methods() -> Vec<ContactMethod> {
    let mut methods = Vec::new();
    for name in Composition::names() {
        for sampling in [TimeSampling::Endpoints, TimeSampling::Midpoint] {
            let composition = Composition::by_name(name).unwrap();
            methods.push(ContactMethod::Splitting(composition, sampling));
        }
    }
    for name in Composition::names() {
        methods.push(ContactMethod::Herglotz(Composition::by_name(name).unwrap()));
    }
    methods
}

/// `plan`'s members (at most `members`) under `method` over `steps` steps, recorded
/// every `every`.
fn with_method(
    plan: &ContactPlan,
    method: ContactMethod,
    steps: usize,
    every: usize,
    members: usize,
) -> ContactPlan {
    let h = plan.grid().h;
    let ensemble = plan.ensemble.clone().map(|mut e| {
        e.members = e.members.min(members);
        e
    });
    ContactPlan::new(
        method,
        h,
        h * steps as f64,
        plan.nominal.clone(),
        ensemble,
        every,
    )
    .unwrap()
}

fn example_plan(example: &str, overrides: &[&str]) -> ContactPlan {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::load(&common::example_path(example), &overrides)
        .unwrap()
        .contact_plan()
        .unwrap()
}

fn reference(plan: &ContactPlan) -> Vec<MemberResult> {
    (0..plan.member_count())
        .map(|i| plan.reference(&plan.member(i).unwrap()).unwrap())
        .collect()
}

/// `plan`'s members through the fast engine at `level`, in blocks of `block` members.
fn fast(plan: &ContactPlan, level: SimdLevel, block: usize) -> Vec<MemberResult> {
    let members: Vec<_> = (0..plan.member_count())
        .map(|i| plan.member(i).unwrap())
        .collect();
    members
        .chunks(block)
        .flat_map(|chunk| {
            let block = plan.fast_block(chunk.to_vec());
            assert!(matches!(block, ContactBlock::Lanes(_)), "laid out in lanes");
            plan.run_fast_block(block, level).unwrap().into_members()
        })
        .collect()
}

/// |a − b| / |b|, 0 for equal values (NaNs and infinities of the same sign included), and
/// infinite where one is finite and the other not.
fn deviation(a: f64, b: f64) -> f64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        0.0
    } else if a.is_finite() && b.is_finite() {
        (a - b).abs() / b.abs()
    } else {
        f64::INFINITY
    }
}

/// The largest deviation of `fast` from `reference` over every value of every member;
/// asserts equal shapes and non-finite steps.
fn max_deviation(what: &str, fast: &[MemberResult], reference: &[MemberResult]) -> f64 {
    assert_eq!(fast.len(), reference.len(), "{what}: members");
    let mut worst: f64 = 0.0;
    for (i, (a, b)) in fast.iter().zip(reference).enumerate() {
        assert_eq!(
            a.nonfinite_step, b.nonfinite_step,
            "{what}: member {i} non-finite step"
        );
        let pairs = [
            ("trajectory", &a.trajectory, &b.trajectory),
            ("hamiltonian", &a.channels[0], &b.channels[0]),
            ("final state", &a.final_state, &b.final_state),
            ("totals", &a.totals, &b.totals),
        ];
        assert_eq!(a.channels.len(), b.channels.len(), "{what}: channels");
        for (field, x, y) in pairs {
            assert_eq!(x.len(), y.len(), "{what}: member {i} {field} length");
            for (j, (&u, &v)) in x.iter().zip(y.iter()).enumerate() {
                let d = deviation(u, v);
                assert!(
                    d <= TOLERANCE,
                    "{what}: member {i} {field}[{j}]: fast {u:e} vs reference {v:e} (relative {d:e})"
                );
                worst = worst.max(d);
            }
        }
    }
    worst
}

/// Every example under every method, shortened to at most 400 steps and 11 members, in
/// blocks of 8 and of 5 (3 padding lanes) at every level.
#[test]
fn every_example_and_method_agrees_with_the_reference() {
    let mut worst: f64 = 0.0;
    for example in EXAMPLES {
        let base = example_plan(example, &[]);
        let steps = base.grid().steps.min(400);
        for method in methods() {
            let plan = with_method(&base, method, steps, 7, 11);
            let expected = reference(&plan);
            for level in common::simd_levels() {
                for block in [8, 5] {
                    let what = format!(
                        "{example} {} {} blocks of {block}",
                        plan.method_label(),
                        level.name()
                    );
                    worst = worst.max(max_deviation(&what, &fast(&plan, level, block), &expected));
                }
            }
        }
    }
    println!("every example and method: largest relative deviation {worst:e}");
}

/// Every example as written (its method, steps and members), through the CPU backend's
/// fast engine, against `--backend reference`.
#[test]
fn every_example_as_written_through_the_cpu_backend() {
    for example in EXAMPLES {
        let plan = example_plan(example, &[]);
        assert!(
            plan.fast_engine().is_some(),
            "contact plans have a fast engine"
        );
        assert_eq!(Backend::Cpu(CpuPath::Fast).engine(&plan), "fast");
        let fast = Backend::Cpu(CpuPath::Fast).run(&plan).unwrap();
        let expected = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap();
        let worst = max_deviation(example, &fast.members, &expected.members);
        println!("{example} as written: largest relative deviation {worst:e}");
    }
}

/// The bench's damped, forced Duffing chains at n = 1, 3 and 8 under several compositions,
/// 19 members (two full blocks of 8 and a part of one) over 300 steps, recorded every 50.
#[test]
fn the_bench_duffing_chains_agree_with_the_reference() {
    let mut worst: f64 = 0.0;
    for dof in [1, 3, 8] {
        for composition in ["strang", "suzuki-4", "yoshida-6a"] {
            let plan = contact_chain_plan(19, dof, 300, composition).unwrap();
            let expected = reference(&plan);
            assert_ne!(expected[0].final_state, expected[1].final_state);
            for level in common::simd_levels() {
                let what = format!("Duffing n = {dof} {composition} {}", level.name());
                worst = worst.max(max_deviation(&what, &fast(&plan, level, 8), &expected));
            }
        }
    }
    println!("Duffing chains: largest relative deviation {worst:e}");
}

/// The bench's Duffing chains in full-size blocks (several chunks of groups, a block that
/// is not full, steps in several tiles, records inside and across tiles) at n = 2, 5, 8
/// and 32 equal the reference to the last bit at every level.
#[test]
fn full_blocks_of_duffing_chains_equal_the_reference_bit_for_bit() {
    for dof in [2, 5, 8, 32] {
        for composition in ["strang", "suzuki-4"] {
            let plan = contact_chain_plan(300, dof, 150, composition).unwrap();
            let plan = with_method(&plan, plan.method().clone(), 150, 25, 300);
            let expected = reference(&plan);
            for level in common::simd_levels() {
                let what = format!(
                    "Duffing n = {dof} {composition} {} full blocks",
                    level.name()
                );
                let block = plan.fast_block_members();
                assert!(block > 8, "{what}: blocks of several groups");
                let fast = fast(&plan, level, block);
                assert_eq!(max_deviation(&what, &fast, &expected), 0.0, "{what}");
            }
        }
    }
}

/// An anharmonic well turned upside down, B = −x⁴/4 + x²/2 with damping and a forcing:
/// members with enough momentum run off to infinity, at different steps, and are flagged at
/// the reference's step; the members beside them in a block are unaffected.
#[test]
fn members_that_blow_up_are_flagged_at_the_reference_steps() {
    let text = r#"
[system]
kind = "contact"
x0 = [0.5]
p0 = [0.0]
potential = [{ kind = "quartic", beta = -1.0 }, { kind = "harmonic", K = [[1.0]] }]
damping = { kind = "constant", alpha = 0.1 }

[scheme]
family = "splitting"
composition = "suzuki-4"
h = 0.05
t_end = 30.0

[output]
every = 10

[ensemble]
members = 21
seed = 3
p0 = { kind = "uniform", low = -3.0, high = 3.0 }
"#;
    let base = Config::from_str_with(text, &[], "test")
        .unwrap()
        .contact_plan()
        .unwrap();
    let suzuki = base.method().clone();
    let herglotz = ContactMethod::Herglotz(Composition::by_name("strang").unwrap());
    for method in [suzuki, herglotz] {
        let plan = with_method(&base, method, base.grid().steps, 10, 21);
        let expected = reference(&plan);
        let steps: std::collections::BTreeSet<u64> =
            expected.iter().filter_map(|r| r.nonfinite_step).collect();
        let flagged = expected
            .iter()
            .filter(|r| r.nonfinite_step.is_some())
            .count();
        assert!(
            steps.len() > 1 && flagged < expected.len(),
            "{}: members blow up at several steps and some stay finite: {flagged} of {} at {steps:?}",
            plan.method_label(),
            expected.len()
        );
        for level in common::simd_levels() {
            let what = format!("{} {}", plan.method_label(), level.name());
            max_deviation(&what, &fast(&plan, level, 8), &expected);
        }
    }
}

/// A block of members that do not share their terms (one forced oscillator, one without
/// the forcing) is run by the reference, member by member, and gives its results.
#[test]
fn a_block_of_unlike_members_runs_on_the_reference() {
    let forced = example_plan("contact_forced_oscillator.toml", &[]);
    let damped = example_plan("contact_damped_oscillator.toml", &[]);
    let members = vec![forced.member(0).unwrap(), damped.member(0).unwrap()];
    let block = forced.prepare(members.clone()).unwrap();
    assert!(matches!(block, ContactBlock::Reference(_)));
    let results = forced.run(block).unwrap().into_members();
    let expected: Vec<MemberResult> = members
        .iter()
        .map(|m| forced.reference(m).unwrap())
        .collect();
    assert_eq!(max_deviation("unlike members", &results, &expected), 0.0);
    assert_ne!(results[0].final_state, results[1].final_state);
    // Like members of the same plan are laid out in lanes.
    let like = vec![forced.member(0).unwrap(), forced.member(0).unwrap()];
    assert!(matches!(
        forced.prepare(like).unwrap(),
        ContactBlock::Lanes(_)
    ));
}

/// Every value of two result lists, bit for bit.
fn assert_same_bits(what: &str, a: &[MemberResult], b: &[MemberResult]) {
    assert_eq!(a.len(), b.len(), "{what}: members");
    for (i, (a, b)) in a.iter().zip(b).enumerate() {
        assert_eq!(a.nonfinite_step, b.nonfinite_step, "{what}: member {i}");
        let bits = |r: &MemberResult| -> Vec<u64> {
            let values = r.trajectory.iter().chain(&r.final_state).chain(&r.totals);
            values
                .chain(r.channels.concat().iter())
                .map(|v| v.to_bits())
                .collect()
        };
        assert_eq!(bits(a), bits(b), "{what}: member {i}");
    }
}

/// `system` (a `[system]` table) under Suzuki's fourth-order splitting over 50 steps, with
/// 37 members of `seed` drawn by `draws` (lines of the `[ensemble]` table); the error of
/// its first member where that fails its checks.
fn drawn_plan(system: &str, seed: u64, draws: &str) -> harbor::error::Result<ContactPlan> {
    let text = format!(
        r#"
{system}

[scheme]
family = "splitting"
composition = "suzuki-4"
h = 0.02
t_end = 1.0

[output]
every = 10

[ensemble]
members = 37
seed = {seed}
{draws}
"#
    );
    Config::from_str_with(&text, &[], "test")?.contact_plan()
}

/// A chain of two degrees of freedom with every drawn key's term (harmonic, quartic,
/// pendulum, two forcings, constant damping).
const EVERY_TERM: &str = r#"
[system]
kind = "contact"
x0 = [0.3, -0.2]
p0 = [0.1, 0.4]
z0 = 0.5
potential = [
  { kind = "harmonic", K = [[2.0, -1.0], [-1.0, 2.0]] },
  { kind = "quartic", beta = 0.1 },
  { kind = "pendulum", omega = 1.3 },
  { kind = "forcing", amplitude = [0.5, 0.0], signal = { kind = "cosine", frequency = 0.2 } },
  { kind = "forcing", amplitude = [0.0, 0.2], signal = { kind = "cosine", frequency = 0.7 } },
]
damping = { kind = "constant", alpha = 0.1 }
"#;

/// The built-in Kepler potential γ = 1 from the Kepler example's initial state, with the
/// `damping` line (empty for none).
fn kepler_system(damping: &str) -> String {
    let kepler = example_plan("contact_kepler_perturbed.toml", &[]);
    let (x0, p0) = (&kepler.nominal.x0, &kepler.nominal.p0);
    format!(
        r#"
[system]
kind = "contact"
x0 = [{}, {}]
p0 = [{}, {}]
potential = [{{ kind = "kepler", gamma = 1.0 }}]
{damping}
"#,
        x0[0], x0[1], p0[0], p0[1]
    )
}

/// Blocks drawn straight from the plan (what the CPU backend runs) give the blocks laid out
/// from members built one by one, bit for bit, for every example with an ensemble, a system
/// with every drawn key, and Kepler and spin–orbit coefficients drawn; full blocks, a block
/// that is not full and one of a single member, at every level.
#[test]
fn blocks_drawn_from_the_plan_equal_blocks_of_built_members() {
    let mut plans: Vec<(String, ContactPlan)> = EXAMPLES
        .iter()
        .map(|e| (e.to_string(), example_plan(e, &[])))
        .collect();
    let every_key = r#"
x0 = { kind = "perturb", sigma = 0.1 }
p0 = { kind = "uniform", low = -0.5, high = 0.5 }
z0 = { kind = "perturb", sigma = 0.2 }
alpha = { kind = "uniform", low = 0.01, high = 0.2 }
beta = { kind = "perturb", sigma = 0.05 }
omega = { kind = "uniform", low = 0.5, high = 1.5 }
amplitude = { kind = "perturb", sigma = 0.1 }
"#;
    plans.push((
        "every key".into(),
        drawn_plan(EVERY_TERM, 11, every_key).unwrap(),
    ));
    let kepler_system = kepler_system(r#"damping = { kind = "constant", alpha = 0.01 }"#);
    let gamma = r#"gamma = { kind = "uniform", low = 0.5, high = 1.5 }"#;
    plans.push((
        "kepler".into(),
        drawn_plan(&kepler_system, 11, gamma).unwrap(),
    ));
    let spin = example_plan("contact_spin_orbit.toml", &["ensemble.members=37"]);
    let epsilon = ["ensemble.epsilon={ kind = \"perturb\", sigma = 0.01 }".to_string()];
    let spin_text = std::fs::read_to_string(common::example_path("contact_spin_orbit.toml"));
    let spin_epsilon = Config::from_str_with(&spin_text.unwrap(), &epsilon, "spin")
        .unwrap()
        .contact_plan()
        .unwrap();
    plans.push(("spin-orbit".into(), spin));
    plans.push(("spin-orbit ε drawn".into(), spin_epsilon));
    for (name, plan) in &plans {
        let steps = plan.grid().steps.min(200);
        let plan = &with_method(plan, plan.method().clone(), steps, 9, 40);
        let count = plan.member_count();
        let members: Vec<_> = (0..count).map(|i| plan.member(i).unwrap()).collect();
        assert!(
            count > 1 || name.ends_with(".toml"),
            "{name}: drawn members"
        );
        for level in common::simd_levels() {
            for block in [plan.fast_block_members(), 8, 5, 1] {
                let what = format!("{name} {} blocks of {block}", level.name());
                let mut drawn = Vec::new();
                let mut built = Vec::new();
                for start in (0..count).step_by(block) {
                    let range = start..(start + block).min(count);
                    let from_plan = plan.fast_block_range(range.clone()).unwrap();
                    assert!(matches!(from_plan, ContactBlock::Lanes(_)), "{what}");
                    let run = plan.run_fast_block(from_plan, level).unwrap();
                    drawn.extend(run.into_members());
                    let from_members = plan.fast_block(members[range].to_vec());
                    let run = plan.run_fast_block(from_members, level).unwrap();
                    built.extend(run.into_members());
                }
                assert_same_bits(&what, &drawn, &built);
            }
        }
    }
}

/// A block drawn from the plan with members that fail their checks (a Kepler γ ≤ 0 drawn,
/// an initial energy that overflows, both in one block) reports the first failing member's
/// error, word for word as [`ContactPlan::member`] gives it, at every level (an overflowing
/// H(0) is found by the engine's first evaluation), also from a block that starts later in
/// the plan; blocks before it run; and a block run after the failure on the same thread, of
/// the same shape, equals the reference bit for bit (nothing of the failed block is
/// reused).
#[test]
fn a_drawn_block_reports_its_first_failing_members_error() {
    let kepler_system = kepler_system("");
    // (system, draws, whether the first member to fail must fail on H(0) alone, with a
    // later member failing another check: the block's draws stop at the later one, and
    // the earlier one's error, found only by the engine's first evaluation, still comes
    // first).
    let cases = [
        (
            kepler_system.as_str(),
            r#"gamma = { kind = "uniform", low = -1.0, high = 3.0 }"#,
            false,
        ),
        // |x| > 1.6e77 overflows β x⁴/4: about one member in nine.
        (
            EVERY_TERM,
            r#"x0 = { kind = "perturb", sigma = 1e77 }"#,
            false,
        ),
        // |p_i| > 1.9e154 overflows ½|p|², γ ≤ 0 is refused.
        (
            kepler_system.as_str(),
            "gamma = { kind = \"uniform\", low = -1.0, high = 3.0 }\n\
             p0 = { kind = \"perturb\", sigma = 1e154 }",
            true,
        ),
    ];
    let overflows = |error: &harbor::Error| error.to_string().contains("is not finite");
    for (system, draws, mixed) in cases {
        // The first seed whose members 0 and 1 pass (a plan checks member 0) and another
        // fails, so that a block from member 1 on starts inside the plan.
        let plan = (1..1000)
            .filter_map(|seed| drawn_plan(system, seed, draws).ok())
            .filter(|plan| plan.member(1).is_ok())
            .find(|plan| {
                let errors: Vec<_> = (2..plan.member_count())
                    .filter_map(|i| plan.member(i).err())
                    .collect();
                match (errors.first(), mixed) {
                    (None, _) => false,
                    (Some(_), false) => true,
                    (Some(first), true) => overflows(first) && errors.iter().any(|e| !overflows(e)),
                }
            })
            .expect("a seed with members that pass and fail");
        let plan = &plan;
        let count = plan.member_count();
        let first_bad = (0..count)
            .find(|&i| plan.member(i).is_err())
            .expect("some member fails its checks");
        let expected = plan.member(first_bad).unwrap_err().to_string();
        assert!(
            expected.contains(&format!("ensemble member {first_bad}")),
            "{expected}"
        );
        // Members of the same system with nothing out of range, as many as `plan`'s.
        let good = drawn_plan(system, 1, r#"x0 = { kind = "perturb", sigma = 0.01 }"#).unwrap();
        for level in common::simd_levels() {
            let run = |members: std::ops::Range<usize>| {
                let block = plan.fast_block_range(members)?;
                plan.run_fast_block(block, level)
            };
            let Err(error) = run(0..count) else {
                panic!("the block fails");
            };
            assert_eq!(error.to_string(), expected, "{level:?}");
            assert_same_bits(
                &format!("after a failed block, {level:?}"),
                &fast(&good, level, count),
                &reference(&good),
            );
            let Err(error) = run(first_bad / 2..count) else {
                panic!("the later block fails");
            };
            assert_eq!(
                error.to_string(),
                expected,
                "from {}, {level:?}",
                first_bad / 2
            );
            assert!(run(0..first_bad).is_ok());
        }
        let error = Backend::Cpu(CpuPath::Fast).run(plan).err();
        let error = error.expect("the run fails").to_string();
        assert!(error.contains(&expected), "{error}");
    }
}
