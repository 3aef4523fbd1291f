//! Monte-Carlo initialisation: K random structured candidates, their costs evaluated in
//! batches, the best M kept as starting points.
//!
//! Candidate i is drawn from its own ChaCha8 stream (seed, stream i), so the draw does not
//! depend on batching or threads. Each fitted part gets its own scale
//! s = `scale` · 10^(`spread` · (2U − 1)), U uniform on [0, 1), so that the candidates
//! cover `spread` decades either side of `scale`:
//!
//! ```text
//!   J = s (A − Aᵀ)/√(2n),   L = s C/√n (R = L Lᵀ, C ∈ ℝ^{n×r}),   Q = s (I + D Dᵀ/n),
//!   B = s E,   x0 = s e,     A, C, D, E, e with independent N(0, 1) entries.
//! ```
//!
//! Fixed parts keep the template's values.

use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use super::gradient::Evaluation;
use super::manifold::Point;
use crate::error::{Error, Result};
use crate::linear_ph::Parts;

/// How the candidates are drawn and how many are kept (`[monte_carlo]` of an identify
/// config, every key defaulting to [`MonteCarlo::default`]).
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MonteCarlo {
    /// K ≥ 1 candidates drawn.
    pub candidates: usize,
    /// M, 1 ≤ M ≤ K, the best candidates kept as starts.
    pub keep: usize,
    /// Seed: candidate i depends only on (seed, i).
    pub seed: u64,
    /// Central scale s > 0 of the drawn parts.
    pub scale: f64,
    /// Decades either side of `scale`, in [0, 10].
    pub spread: f64,
}

impl Default for MonteCarlo {
    fn default() -> Self {
        MonteCarlo {
            candidates: 10_000,
            keep: 16,
            seed: 0,
            scale: 1.0,
            spread: 0.5,
        }
    }
}

impl MonteCarlo {
    /// Refuses settings outside their ranges, naming the field under `monte_carlo.`.
    pub fn check(&self) -> Result<()> {
        self.check_beside(0)
    }

    /// [`Self::check`] beside `guesses` user-given starts: with at least one, 0 candidates
    /// (no Monte-Carlo stage, `keep` unused) is allowed.
    pub fn check_beside(&self, guesses: usize) -> Result<()> {
        if self.candidates == 0 {
            if guesses > 0 {
                return Ok(());
            }
            return Err(Error::invalid(
                "monte_carlo.candidates",
                "must be ≥ 1, got 0 (0 only with an [[initial_guess]] to start from)",
            ));
        }
        if self.keep == 0 || self.keep > self.candidates {
            return Err(Error::invalid(
                "monte_carlo.keep",
                format!(
                    "must lie in 1…candidates = {}, got {}",
                    self.candidates, self.keep
                ),
            ));
        }
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(Error::invalid(
                "monte_carlo.scale",
                format!("must be a finite number > 0, got {}", self.scale),
            ));
        }
        if !(self.spread.is_finite() && (0.0..=10.0).contains(&self.spread)) {
            return Err(Error::invalid(
                "monte_carlo.spread",
                format!("must lie in 0…10 (decades), got {}", self.spread),
            ));
        }
        Ok(())
    }

    /// Candidate `index`: the fitted parts of `template` drawn anew.
    pub fn draw(&self, template: &Point, fit: Parts, index: usize) -> Result<Point> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(index as u64);
        let (n, m) = template.shape();
        let rank = template.l.ncols();
        let nf = n as f64;
        let scale = |rng: &mut ChaCha8Rng| {
            let u: f64 = rng.random();
            self.scale * 10f64.powf(self.spread * (2.0 * u - 1.0))
        };
        let normal = |rng: &mut ChaCha8Rng, rows: usize, cols: usize| -> DMatrix<f64> {
            DMatrix::from_fn(rows, cols, |_, _| rng.sample(StandardNormal))
        };
        let j = if fit.j {
            let s = scale(&mut rng);
            let a = normal(&mut rng, n, n);
            (&a - a.transpose()) * (s / (2.0 * nf).sqrt())
        } else {
            template.j.clone()
        };
        let l = if fit.r {
            let s = scale(&mut rng);
            normal(&mut rng, n, rank) * (s / nf.sqrt())
        } else {
            template.l.clone()
        };
        let q = if fit.q {
            let s = scale(&mut rng);
            let d = normal(&mut rng, n, n);
            (DMatrix::identity(n, n) + &d * d.transpose() / nf) * s
        } else {
            template.q.clone()
        };
        let b = if fit.b {
            let s = scale(&mut rng);
            normal(&mut rng, n, m) * s
        } else {
            template.b.clone()
        };
        let x0 = if fit.x0 {
            let s = scale(&mut rng);
            DVector::from_column_slice(normal(&mut rng, n, 1).as_slice()) * s
        } else {
            template.x0.clone()
        };
        let fixed_r = (!fit.r).then(|| template.r.clone());
        Point::new(j, l, fixed_r, q, b, x0)
    }
}

/// The best `keep` of the candidates evaluated so far, cheapest first.
#[derive(Debug, Default)]
pub struct Best {
    keep: usize,
    /// (cost, index, evaluation), sorted by cost then index.
    entries: Vec<(f64, usize, Evaluation)>,
}

impl Best {
    pub fn new(keep: usize) -> Self {
        Best {
            keep,
            entries: Vec::with_capacity(keep.saturating_add(1).min(1 << 16)),
        }
    }

    /// Offers candidate `index`; a non-finite cost is never kept.
    pub fn offer(&mut self, index: usize, evaluation: Evaluation) {
        let cost = evaluation.cost;
        if !cost.is_finite() {
            return;
        }
        if self.entries.len() == self.keep
            && self.entries.last().is_some_and(|worst| worst.0 <= cost)
        {
            return;
        }
        let at = self.entries.partition_point(|e| (e.0, e.1) < (cost, index));
        self.entries.insert(at, (cost, index, evaluation));
        self.entries.truncate(self.keep);
    }

    /// The kept (index, evaluation), cheapest first.
    pub fn into_entries(self) -> Vec<(usize, Evaluation)> {
        self.entries.into_iter().map(|(_, i, e)| (i, e)).collect()
    }
}
