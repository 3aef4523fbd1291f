//! The seed's rule on the gradient difference (Günther, Jacob & Totzeck 2023, §4, beside
//! Algorithm 1): a start stops once two consecutive gradients differ by less than ε,
//!
//! ```text
//!   ‖g_{k+1} − 𝒯(g_k)‖_{w_{k+1}} < ε        (ε = optimizer.gradient_change_tolerance)
//! ```
//!
//! with the identity transport 𝒯 of the conjugate directions
//! ([`super::conjugate_gradient`], step 2) and the Riemannian norm at the new iterate
//! ([`super::manifold`]). The seed states the rule for its Euclidean gradients; on J, L, B
//! and x0 the two agree, on Q the affine-invariant norm weighs the difference by Q⁻¹ on
//! both sides. ε = 0 (the default) switches the rule off. The rule is absolute, like the
//! seed's: it stops a start whose gradient barely moves, which on a flat valley can be far
//! from a minimum (the relative rule `gradient_tolerance` does not have that blind spot).

use super::manifold::{Geometry, Point, Tangent};

/// ‖g_new − g_old‖ at `point` (the new iterate), the old gradient carried over by the
/// identity transport.
pub fn gradient_change(geometry: &Geometry, point: &Point, new: &Tangent, old: &Tangent) -> f64 {
    geometry.norm(point, &Tangent::combine(1.0, new, -1.0, old))
}

/// Whether the rule stops a start: `tolerance` > 0 and `change` < `tolerance`.
pub fn gradient_settled(tolerance: f64, change: f64) -> bool {
    tolerance > 0.0 && change < tolerance
}

#[cfg(test)]
mod tests {
    use nalgebra::{DMatrix, DVector};

    use super::*;
    use crate::linear_ph::Parts;

    fn point(q: DMatrix<f64>) -> Point {
        let n = q.nrows();
        Point::new(
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, 0),
            Some(DMatrix::zeros(n, n)),
            q,
            DMatrix::zeros(n, 1),
            DVector::zeros(n),
        )
        .unwrap()
    }

    #[test]
    fn change_is_the_riemannian_norm_of_the_difference() {
        // x0 is flat: the change is the Euclidean distance of the gradients.
        let geometry = Geometry {
            fit: Parts {
                x0: true,
                q: true,
                ..Parts::NONE
            },
        };
        let at = point(DMatrix::from_diagonal(&DVector::from_vec(vec![2.0, 1.0])));
        let mut new = at.zero_tangent();
        let mut old = at.zero_tangent();
        new.x0 = DVector::from_vec(vec![3.0, 1.0]);
        old.x0 = DVector::from_vec(vec![0.0, -3.0]);
        assert!((gradient_change(&geometry, &at, &new, &old) - 5.0).abs() < 1e-15);
        // Q's part is weighed by Q⁻¹ on both sides: ‖ξ‖² = tr(Q⁻¹ ξ Q⁻¹ ξ); ξ = E₁₁ at
        // Q = diag(2, 1) gives 1/4, on top of the 25 of x0.
        new.q[(0, 0)] = 1.0;
        let expected = (25.0_f64 + 0.25).sqrt();
        assert!((gradient_change(&geometry, &at, &new, &old) - expected).abs() < 1e-14);
    }

    #[test]
    fn the_rule_is_off_at_zero_and_strict_otherwise() {
        assert!(!gradient_settled(0.0, 0.0));
        assert!(gradient_settled(1e-6, 0.5e-6));
        assert!(!gradient_settled(1e-6, 1e-6));
        assert!(!gradient_settled(1e-6, f64::NAN));
    }
}
