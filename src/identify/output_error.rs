//! How far fitted outputs are from data, in the norms of the seed (Günther, Jacob &
//! Totzeck 2023, §5): ‖e‖_{L2((0,T);ℝᵐ)} = (Σ_k ω_k |e_k|²)^{1/2} with the problem's
//! quadrature weights ω_k, and ‖e‖_∞ = max_k max_c |e_{k,c}|, over outputs sampled at
//! t_k = k h, k = 0…N.

use crate::linear_ph::{OutputData, Quadrature};

/// The L2 and max norms of y − d, and ‖y − d‖_∞ / ‖d‖_∞.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputError {
    pub l2: f64,
    pub max: f64,
    pub relative_max: f64,
}

impl OutputError {
    /// The error of `fitted` against `data` (same shape) on a grid of step h.
    pub fn of(fitted: &OutputData, data: &OutputData, quadrature: Quadrature, h: f64) -> Self {
        let steps = data.rows().saturating_sub(1);
        let mut squares = 0.0;
        let mut max: f64 = 0.0;
        let mut data_max: f64 = 0.0;
        for k in 0..data.rows() {
            let weight = quadrature.weight(k, steps, h);
            for (y, d) in fitted.row(k).iter().zip(data.row(k)) {
                squares += weight * (y - d) * (y - d);
                max = max.max((y - d).abs());
                data_max = data_max.max(d.abs());
            }
        }
        OutputError {
            l2: squares.sqrt(),
            max,
            relative_max: max / data_max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norms_of_a_known_error() {
        // d = 0…3 on 4 points, y = d + (0, 1, 0, −2): left rule ω = (h, h, h, 0).
        let data = OutputData {
            channels: 1,
            values: vec![0.0, 1.0, 2.0, 3.0],
        };
        let fitted = OutputData {
            channels: 1,
            values: vec![0.0, 2.0, 2.0, 1.0],
        };
        let e = OutputError::of(&fitted, &data, Quadrature::Left, 0.5);
        assert_eq!(e.l2, (0.5f64).sqrt());
        assert_eq!(e.max, 2.0);
        assert_eq!(e.relative_max, 2.0 / 3.0);
    }
}
