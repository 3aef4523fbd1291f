//! Tests of the gradient and identification resource estimate.

use super::*;

fn sizes(n: usize, candidates: usize) -> ProblemSizes {
    ProblemSizes {
        states: Setting::new("candidate.states", n),
        reference_states: None,
        inputs: 2,
        stages: 2,
        steps: 1000,
        candidates: Setting::new("candidates.members", candidates),
        batch: candidates,
        descent: None,
        grids: 1,
        workers: 2,
    }
}

/// n = 5, m = 2, s = 2, N = 1000 (p = 9): per step 6·5·9 + 2·25 + 4·10 = 360, set-up
/// 4·10³ + 4·10²·9 = 7600.
#[test]
fn the_work_of_an_evaluation_follows_the_formula() {
    let estimate = sizes(5, 1).estimate();
    assert_eq!(estimate.evaluation_work, 1000.0 * 360.0 + 7600.0);
    assert!(estimate.check(&MemoryBudget::default(), None, 1e14).is_ok());
    assert_eq!(estimate.once_work, 20.0 * 125.0);
    assert!(!estimate.is_large());
}

/// The data simulated from a 1022-state reference (msd-chain with 511 cells, s = 2,
/// N = 1000) are 9 × 10¹⁰ operations, ~40 s on a 2-core CPU: most of the work of one
/// small candidate, planned, and the reference's setting is the one a refusal names.
#[test]
fn the_reference_models_simulation_is_counted_and_blamed() {
    let mut problem = sizes(5, 1);
    problem.reference_states = Some(Setting::new("data.reference.cells", 1022));
    let estimate = problem.estimate();
    let (n, s) = (1022.0_f64, 2.0);
    let expected = 1000.0 * (2.0 * 5.0 * n * n + 2.0 * (s * n).powi(2))
        + 4.0 * (s * n).powi(3)
        + 4.0 * (s * n).powi(2) * n
        + 20.0 * n.powi(3)
        + 20.0 * 125.0;
    assert_eq!(estimate.once_work, expected);
    assert!(
        estimate.work > 8e10 && estimate.work < 1e11,
        "{}",
        estimate.work
    );
    assert!(estimate.is_large());
    let plan = estimate.describe();
    assert!(plan.contains("reference model (n = 1022)"), "{plan}");
    let budget = MemoryBudget::default();
    let text = estimate.check(&budget, None, 1e10).unwrap_err().to_string();
    assert!(text.starts_with("data.reference.cells: "), "{text}");
    assert!(text.contains("more than the work limit of 1e10"), "{text}");
}

#[test]
fn huge_sizes_are_refused_naming_their_setting() {
    let budget = MemoryBudget::default();
    let error = sizes(1 << 31, 1).estimate().check(&budget, None, 1e14);
    let text = error.unwrap_err().to_string();
    assert!(text.starts_with("candidate.states: "), "{text}");
    let error = sizes(5, usize::MAX).estimate().check(&budget, None, 1e14);
    let text = error.unwrap_err().to_string();
    assert!(text.starts_with("candidates.members: "), "{text}");
}
