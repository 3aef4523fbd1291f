//! Starting points given by the user (`[[initial_guess]]` of an identify config): a model
//! from an earlier run or written in the config, entering the descent beside the best
//! Monte-Carlo candidates, or instead of them (`monte_carlo.candidates = 0`).
//!
//! A guess gives a value for every fitted part; the fixed parts keep the template's values
//! (`[model]`). R enters through its factor L ∈ ℝ^{n×r} (r = `model.dissipation_rank`), from
//! the eigendecomposition R = V Λ Vᵀ:
//!
//! ```text
//!   L = V_r Λ_r^{1/2}        (the r largest eigenvalues, negative rounding set to 0)
//! ```
//!
//! so that L Lᵀ = R exactly when rank R ≤ r; a guess whose R has a larger rank is refused
//! rather than truncated. A zero column of L has a zero gradient 2 ∇_R 𝒥 L, so the descent
//! keeps rank R at most the guess's: a zero R (L = 0) could never move and is refused when
//! R is fitted, and a guess of lower rank than r restricts the fit to that rank (lift its
//! zero eigenvalues a little to let the rank grow).

use nalgebra::{DMatrix, DVector};

use super::gradient::Evaluation;
use super::identification::evaluate_points;
use super::manifold::Point;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::linear_ph::GradientPlan;
use crate::linear_ph::Parts;
use crate::model::validate::{check_pd, check_psd, check_skew};
use crate::plan::MemoryBudget;

/// The parts of one guess, already shaped (n × n, n × m, n); `None` where it gives none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Guess {
    pub j: Option<DMatrix<f64>>,
    pub r: Option<DMatrix<f64>>,
    pub q: Option<DMatrix<f64>>,
    pub b: Option<DMatrix<f64>>,
    pub x0: Option<DVector<f64>>,
}

/// The starting point of `guess`: its values for the parts in `fit`, the template's for the
/// others. `field` names the guess in errors (`initial_guess[0]`).
pub fn guess_point(field: &str, guess: &Guess, template: &Point, fit: Parts) -> Result<Point> {
    let missing = |name: &str| {
        Error::invalid(
            format!("{field}.{name}"),
            format!(
                "is missing: {name} is fitted (model.fit), so the guess must give its value (here or in {field}.file)"
            ),
        )
    };
    let j = if fit.j {
        let j = guess.j.clone().ok_or_else(|| missing("J"))?;
        check_skew(&format!("{field}.J"), &j)?;
        j
    } else {
        template.j.clone()
    };
    let (l, fixed_r) = if fit.r {
        let r = guess.r.as_ref().ok_or_else(|| missing("R"))?;
        check_psd(&format!("{field}.R"), r)?;
        (factor(&format!("{field}.R"), r, template.l.ncols())?, None)
    } else {
        (template.l.clone(), Some(template.r.clone()))
    };
    let q = if fit.q {
        let q = guess.q.clone().ok_or_else(|| missing("Q"))?;
        check_pd(&format!("{field}.Q"), &q)?;
        q
    } else {
        template.q.clone()
    };
    let b = if fit.b {
        guess.b.clone().ok_or_else(|| missing("B"))?
    } else {
        template.b.clone()
    };
    let x0 = if fit.x0 {
        guess.x0.clone().ok_or_else(|| missing("x0"))?
    } else {
        template.x0.clone()
    };
    Point::new(j, l, fixed_r, q, b, x0)
}

/// The starting points `guesses` with their evaluations against `problem` on `backend`; a
/// guess whose trajectory overflows is refused, naming it (`initial_guess[i]`).
pub fn evaluated_guesses(
    backend: &Backend,
    budget: &MemoryBudget,
    problem: &GradientPlan,
    guesses: &[Point],
) -> Result<Vec<(Point, Evaluation)>> {
    if guesses.is_empty() {
        return Ok(Vec::new());
    }
    let evaluations = evaluate_points(backend, budget, problem, guesses)?;
    guesses
        .iter()
        .zip(evaluations)
        .enumerate()
        .map(|(i, (point, evaluation))| {
            if evaluation.cost.is_finite() {
                Ok((point.clone(), evaluation))
            } else {
                Err(Error::invalid(
                    format!("initial_guess[{i}]"),
                    format!(
                        "has cost {}: its trajectory overflows on the training inputs, so no descent can start from it",
                        evaluation.cost
                    ),
                ))
            }
        })
        .collect()
}

/// L ∈ ℝ^{n×rank} with L Lᵀ = `r` (module docs); `r` symmetric positive semidefinite.
fn factor(field: &str, r: &DMatrix<f64>, rank: usize) -> Result<DMatrix<f64>> {
    let n = r.nrows();
    let eigen = r.clone().symmetric_eigen();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
    let largest = eigen.eigenvalues.amax();
    if largest == 0.0 {
        return Err(Error::invalid(
            field,
            "is 0: R = L Lᵀ cannot move from L = 0 (its gradient vanishes there); give a nonzero R, however small",
        ));
    }
    let tolerance = 1e-12 * largest;
    if let Some(&dropped) = order.get(rank)
        && eigen.eigenvalues[dropped] > tolerance
    {
        let rank_of_r = order
            .iter()
            .filter(|&&i| eigen.eigenvalues[i] > tolerance)
            .count();
        return Err(Error::invalid(
            field,
            format!(
                "has rank {rank_of_r}, above model.dissipation_rank = {rank}: R = L Lᵀ with L ∈ ℝ^(n×{rank}) cannot hold it (raise the rank or give an R of rank ≤ {rank})"
            ),
        ));
    }
    Ok(DMatrix::from_fn(n, rank, |i, k| {
        let column = order[k];
        eigen.eigenvectors[(i, column)] * eigen.eigenvalues[column].max(0.0).sqrt()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(n: usize, m: usize, rank: usize) -> Point {
        Point::new(
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, rank),
            None,
            DMatrix::identity(n, n),
            DMatrix::from_element(n, m, 0.5),
            DVector::zeros(n),
        )
        .unwrap()
    }

    fn psd(n: usize, rank: usize) -> DMatrix<f64> {
        // A Cauchy matrix 1/(x_i + y_k), x and y distinct: full column rank.
        let a = DMatrix::from_fn(n, rank, |i, k| 1.0 / (i as f64 + 1.5 * k as f64 + 1.0));
        &a * a.transpose()
    }

    #[test]
    fn a_guess_of_r_is_factored_exactly_up_to_the_rank() {
        let fit = Parts {
            r: true,
            ..Parts::NONE
        };
        for (rank_of_r, rank) in [(4, 4), (2, 4), (2, 2), (1, 3)] {
            let r = psd(4, rank_of_r);
            let guess = Guess {
                r: Some(r.clone()),
                ..Guess::default()
            };
            let point =
                guess_point("initial_guess[0]", &guess, &template(4, 2, rank), fit).unwrap();
            assert_eq!(point.l.shape(), (4, rank));
            let defect = (&point.l * point.l.transpose() - &r).amax();
            assert!(
                defect < 1e-13 * r.amax(),
                "rank {rank_of_r} in {rank}: {defect:e}"
            );
            assert_eq!(
                point.b,
                template(4, 2, rank).b,
                "a fixed part keeps the template's value"
            );
        }
    }

    #[test]
    fn bad_guesses_name_the_field_and_the_property() {
        let fit = Parts {
            r: true,
            j: true,
            ..Parts::NONE
        };
        let t = template(4, 2, 2);
        let message = |guess: Guess| {
            guess_point("initial_guess[1]", &guess, &t, fit)
                .unwrap_err()
                .to_string()
        };
        let text = message(Guess {
            r: Some(psd(4, 2)),
            ..Guess::default()
        });
        assert!(
            text.contains("initial_guess[1].J") && text.contains("missing"),
            "{text}"
        );
        let text = message(Guess {
            j: Some(DMatrix::zeros(4, 4)),
            r: Some(psd(4, 3)),
            ..Guess::default()
        });
        assert!(
            text.contains("initial_guess[1].R") && text.contains("rank 3"),
            "{text}"
        );
        let text = message(Guess {
            j: Some(DMatrix::zeros(4, 4)),
            r: Some(DMatrix::zeros(4, 4)),
            ..Guess::default()
        });
        assert!(
            text.contains("initial_guess[1].R") && text.contains("is 0"),
            "{text}"
        );
        let text = message(Guess {
            j: Some(DMatrix::identity(4, 4)),
            r: Some(psd(4, 2)),
            ..Guess::default()
        });
        assert!(
            text.contains("initial_guess[1].J") && text.contains("skew"),
            "{text}"
        );
    }
}
