//! The adjoint's fast engine (candidates side by side in SIMD blocks) against the reference
//! sweeps candidate by candidate: the raw results [cost, λ_0, Ḡ_Δ, Ḡ_C] bit for bit and the
//! non-finite step, at every instruction set this CPU has. Covered: n inside and outside
//! the sizes compiled in (n ≤ 8), several inputs and stages, every state stored (S = 1),
//! checkpoint spacings that do and do not divide N, blocks that are not full, candidates
//! that overflow in the forward sweep, in the cotangents only, or not at all within one
//! block, a candidate whose operators cannot be built, a silent input, and the CPU backend
//! running the engine.

mod common;

use common::gradient_batch::{plan, plan_with_inputs};
use harbor::backend::Backend;
use harbor::kernels::lanes::SimdLevel;
use harbor::kernels::{CpuPath, Family};
use harbor::linear_ph::adjoint_fast::{SweepBlock, engine_shape};
use harbor::linear_ph::{GradientPlan, LinearPhMember};
use harbor::model::Signal;
use harbor::plan::MemberResult;

fn candidates(plan: &GradientPlan) -> Vec<LinearPhMember> {
    (0..plan.member_count())
        .map(|i| plan.member(i).unwrap())
        .collect()
}

fn reference(plan: &GradientPlan) -> Vec<MemberResult> {
    candidates(plan)
        .iter()
        .map(|member| plan.reference(member).unwrap())
        .collect()
}

/// `plan`'s candidates through the fast engine at `level`, in blocks of `block`.
fn fast(plan: &GradientPlan, level: SimdLevel, block: usize) -> Vec<MemberResult> {
    candidates(plan)
        .chunks(block)
        .flat_map(|chunk| {
            SweepBlock::new(plan, chunk)
                .unwrap()
                .run(plan, level)
                .into_members()
        })
        .collect()
}

#[test]
fn the_fast_sweeps_are_the_reference_sweeps_bit_for_bit() {
    let mut rng = common::fresh_rng("adjoint fast engine");
    // (n, m, s, N, K, S): n = 9 and 12 run with n at run time.
    for (n, m, stages, steps, members, every) in [
        (5, 2, 2, 97, 29, Some(8)),
        (1, 1, 1, 40, 9, None),
        (2, 1, 1, 60, 17, Some(1)),
        (4, 3, 3, 45, 11, Some(7)),
        (8, 2, 4, 33, 8, Some(33)),
        (9, 1, 2, 50, 13, Some(6)),
        (12, 2, 1, 20, 3, None),
    ] {
        let plan = plan(&mut rng, n, m, stages, steps, members, every);
        let expected = reference(&plan);
        for level in common::simd_levels() {
            for block in [1, 8, 13, 32] {
                let what = format!(
                    "n = {n}, m = {m}, s = {stages}, N = {steps}, S = {}, {}, blocks of {block}",
                    plan.segment(),
                    level.name()
                );
                common::assert_same_bits(&expected, &fast(&plan, level, block), &what);
            }
        }
        // The CPU backend runs the engine, in its own blocks.
        let backend = Backend::Cpu(CpuPath::Fast).run(&plan).unwrap().members;
        common::assert_same_bits(&expected, &backend, &format!("n = {n}: the CPU backend"));
    }
}

/// A silent input (u ≡ 0): the linear engine's stack set-up zeroes its columns of Δ, which
/// the reference keeps, so the engine builds such candidates' operators as the reference
/// does (the same bits, also for a candidate whose B is infinite in that input's column).
/// Whether zeroed columns could change a bit at all is open: a sum from +0 never becomes
/// −0, and the infinite B here makes every column of Δ NaN either way.
#[test]
fn a_silent_input_keeps_its_columns_of_the_operators() {
    let mut rng = common::fresh_rng("adjoint fast engine silent input");
    let mut inputs = common::gradient_batch::signals(2);
    inputs.push(Signal::Harmonic {
        amplitude: 0.0,
        omega: 1.0,
        phase: 0.0,
        offset: 0.0,
    });
    let base = plan_with_inputs(&mut rng, 3, &inputs, 2, 40, 11, Some(6));
    let mut members = candidates(&base);
    // An infinite entry of B in the silent input's column: its columns of Δ are not
    // finite, and the reference's step multiplies them by u = 0.
    members[4].system.b[(0, 2)] = f64::INFINITY;
    let plan = base.with_candidates(members).unwrap();
    let expected = reference(&plan);
    assert_eq!(expected[4].nonfinite_step, Some(1));
    for level in common::simd_levels() {
        common::assert_same_bits(&expected, &fast(&plan, level, 16), level.name());
    }
}

/// Candidates at rest (x0 = 0) whose input matrices B are scaled by 2^e, e = 240, 240 +
/// 1/32, …, 265: the inputs drive x up from 0, so r = Bᵀ Q x − d grows along the run. From
/// sweeps that stay finite, through cotangents that overflow while the cost does not
/// (reported at step N), to residuals whose square overflows at a step part-way that moves
/// earlier as B grows, down to the second; all in the same blocks, so that lanes go bad at
/// their own steps beside lanes that do not.
#[test]
fn candidates_that_overflow_report_the_reference_step() {
    // One fixed system: which outcomes a scan of B shows depends on the system (for some,
    // the cost overflows before any cotangent does), and the test must see all of them.
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(2026);
    let base = plan(&mut rng, 3, 2, 2, 300, 1, Some(9));
    let nominal = base.member(0).unwrap();
    let scaled: Vec<LinearPhMember> = (0..800)
        .map(|e| {
            let mut member = nominal.clone();
            member.x0.fill(0.0);
            member.system.b *= 2f64.powf(240.0 + e as f64 / 32.0);
            member
        })
        .collect();
    let plan = base.with_candidates(scaled).unwrap();
    let expected = reference(&plan);
    let steps = plan.grid().steps as u64;
    let statuses: Vec<Option<u64>> = expected.iter().map(|r| r.nonfinite_step).collect();
    // The range covers every kind of outcome (else the test would prove nothing).
    assert!(statuses.contains(&None), "{statuses:?}");
    assert!(statuses.contains(&Some(steps)), "{statuses:?}");
    assert!(
        statuses
            .iter()
            .any(|s| s.is_some_and(|k| k > 1 && k < steps)),
        "{statuses:?}"
    );
    assert!(statuses.contains(&Some(2)), "{statuses:?}");
    for level in common::simd_levels() {
        for block in [8, 32] {
            let what = format!("{}, blocks of {block}", level.name());
            let fast = fast(&plan, level, block);
            common::assert_same_bits(&expected, &fast, &what);
            let found: Vec<Option<u64>> = fast.iter().map(|r| r.nonfinite_step).collect();
            assert_eq!(found, statuses, "{what}");
        }
    }
}

/// A candidate whose step operators cannot be built (its stage matrix is singular) fails
/// the run with the reference's error (the message names no candidate), from blocks built
/// directly as from the CPU backend.
#[test]
fn a_candidate_without_operators_fails_as_on_the_reference() {
    let mut rng = common::fresh_rng("adjoint fast engine errors");
    // Implicit midpoint on h = 1/32: I − (h/2) (J − R) Q is singular for n = 1, Q = 1 and
    // R = −64 (exactly, in floating point).
    let base = plan(&mut rng, 1, 1, 1, 32, 12, None);
    let mut members = candidates(&base);
    for bad in [5, 9] {
        members[bad].system.q[(0, 0)] = 1.0;
        members[bad].system.r[(0, 0)] = -64.0;
    }
    let plan = base.with_candidates(members).unwrap();
    let error = |path| {
        Backend::Cpu(path)
            .run(&plan)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let on_reference = error(CpuPath::Reference);
    assert!(on_reference.contains("singular"), "{on_reference}");
    assert_eq!(error(CpuPath::Fast), on_reference);
    let direct = SweepBlock::new(&plan, &candidates(&plan)[6..])
        .err()
        .unwrap();
    assert_eq!(direct.to_string(), on_reference);
}

/// A long run the plan stores whole (S = 1: one candidate's states fit its budget) is
/// checkpointed by the engine, whose groups hold eight lanes; the same bits.
#[test]
fn a_run_the_plan_stores_whole_is_checkpointed_by_the_engine() {
    let mut rng = common::fresh_rng("adjoint fast engine long run");
    let plan = plan(&mut rng, 2, 1, 1, 140_000, 3, Some(1));
    assert_eq!(plan.segment(), 1);
    assert_eq!(engine_shape(&plan).segment, 375);
    let expected = reference(&plan);
    for level in common::simd_levels() {
        common::assert_same_bits(&expected, &fast(&plan, level, 8), level.name());
    }
}
