//! The regularisation term of the cost and its gradient:
//! (λ/2) Σ_parts d(w_part, w_ref,part)², each part's gradient in its structure.

use nalgebra::{DMatrix, SymmetricEigen};

use super::gradient::Evaluation;
use crate::linear_ph::LinearPhMember;
use crate::linear_ph::step_pullback::{skew_part, symmetric_part};
use crate::linear_ph::{QDistance, Regularization};

/// Adds (λ/2) Σ_parts d² to the cost and its gradient to each penalised part's gradient.
/// For the Frobenius distance that is (λ/2) ‖w − w_ref‖² and λ (w − w_ref), projected onto
/// the part's structure (skew for J, symmetric for R and Q); for Q under
/// [`QDistance::Log`] see [`log_distance_penalty`].
pub fn regularize(
    regularization: &Regularization,
    member: &LinearPhMember,
    evaluation: &mut Evaluation,
) {
    let Regularization {
        weight,
        reference,
        parts,
        q_distance,
    } = regularization;
    let weight = *weight;
    if weight == 0.0 {
        return;
    }
    let w = &member.system;
    let g = &mut evaluation.gradient;
    let mut squared = 0.0;
    if parts.j {
        let d = &w.j - &reference.j;
        squared += d.norm_squared();
        g.j += skew_part(&d) * weight;
    }
    if parts.r {
        let d = &w.r - &reference.r;
        squared += d.norm_squared();
        g.r += symmetric_part(&d) * weight;
    }
    if parts.q {
        match q_distance {
            QDistance::Euclidean => {
                let d = &w.q - &reference.q;
                squared += d.norm_squared();
                g.q += symmetric_part(&d) * weight;
            }
            QDistance::Log => {
                let (half_squared, gradient) = log_distance_penalty(&w.q, &reference.q);
                squared += 2.0 * half_squared;
                g.q += gradient * weight;
            }
        }
    }
    if parts.b {
        let d = &w.b - &reference.b;
        squared += d.norm_squared();
        g.b += d * weight;
    }
    if parts.x0 {
        let d = &member.x0 - &reference.x0;
        squared += d.norm_squared();
        g.x0 += d * weight;
    }
    evaluation.cost += 0.5 * weight * squared;
}

/// ½ ‖log M‖²_F with M = S Q S, S = Q_ref^{−½} (half the squared affine-invariant distance
/// of Q from Q_ref), and its gradient S (M⁻¹ log M) S with respect to Q.
///
/// With M = V diag(μ) Vᵀ the value is ½ Σ_i ln² μ_i. For the gradient, F(M) = tr g(M) with
/// g(μ) = ½ ln² μ has dF = tr(g′(M) dM), g′(μ) = ln μ / μ, and dM = S dQ S, so
/// dF = tr(S g′(M) S dQ). With Q_ref = I this is the seed's Q⁻¹ log Q. Q and Q_ref are
/// symmetric positive definite (the plan checks Q_ref, the model Q); should rounding put an
/// eigenvalue of M at or below 0, or M overflow, the distance is +∞ and the gradient zero.
pub fn log_distance_penalty(q: &DMatrix<f64>, q_ref: &DMatrix<f64>) -> (f64, DMatrix<f64>) {
    let n = q.nrows();
    // S = I for the usual Q_ref = I, without a decomposition.
    let s = if *q_ref == DMatrix::identity(n, n) {
        DMatrix::identity(n, n)
    } else {
        let reference = SymmetricEigen::new(symmetric_part(q_ref));
        &reference.eigenvectors
            * DMatrix::from_diagonal(&reference.eigenvalues.map(|mu| 1.0 / mu.sqrt()))
            * reference.eigenvectors.transpose()
    };
    let m = symmetric_part(&(&s * q * &s));
    if m.iter().any(|v| !v.is_finite()) {
        return (f64::INFINITY, DMatrix::zeros(n, n));
    }
    let eigen = SymmetricEigen::new(m);
    if eigen.eigenvalues.iter().any(|&mu| mu.is_nan() || mu <= 0.0) {
        return (f64::INFINITY, DMatrix::zeros(n, n));
    }
    let value = 0.5
        * eigen
            .eigenvalues
            .iter()
            .map(|mu| mu.ln().powi(2))
            .sum::<f64>();
    let slope = eigen.eigenvalues.map(|mu| mu.ln() / mu);
    let inner =
        &eigen.eigenvectors * DMatrix::from_diagonal(&slope) * eigen.eigenvectors.transpose();
    (value, symmetric_part(&(&s * inner * &s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DVector;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_spd(rng: &mut ChaCha8Rng, n: usize) -> DMatrix<f64> {
        let a = DMatrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
        &a * a.transpose() + DMatrix::identity(n, n) * 0.5
    }

    fn random_symmetric(rng: &mut ChaCha8Rng, n: usize) -> DMatrix<f64> {
        let a = DMatrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
        symmetric_part(&a)
    }

    #[test]
    fn from_the_identity_it_is_half_the_squared_logarithms_and_q_inverse_log_q() {
        let q = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0]));
        let (value, gradient) = log_distance_penalty(&q, &DMatrix::identity(5, 5));
        let expected: f64 = (1..=5).map(|i| 0.5 * (i as f64).ln().powi(2)).sum();
        assert!((value - expected).abs() <= 1e-15 * expected);
        for i in 0..5 {
            let mu = (i + 1) as f64;
            assert!((gradient[(i, i)] - mu.ln() / mu).abs() <= 1e-15);
        }
        let mut off_diagonal = gradient.clone();
        off_diagonal.fill_diagonal(0.0);
        assert!(off_diagonal.amax() <= 1e-15);
    }

    #[test]
    fn it_is_invariant_under_congruence_and_zero_at_the_reference() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (q, q_ref) = (random_spd(&mut rng, 6), random_spd(&mut rng, 6));
        let a = DMatrix::from_fn(6, 6, |_, _| rng.random_range(-1.0..1.0));
        let (value, _) = log_distance_penalty(&q, &q_ref);
        let (moved, _) =
            log_distance_penalty(&(&a * &q * a.transpose()), &(&a * &q_ref * a.transpose()));
        assert!((value - moved).abs() <= 1e-10 * value, "{value} vs {moved}");
        let (zero, gradient) = log_distance_penalty(&q_ref, &q_ref);
        assert!(zero <= 1e-24 && gradient.amax() <= 1e-12);
    }

    #[test]
    fn its_gradient_matches_central_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for n in [1, 3, 7] {
            let (q, q_ref) = (random_spd(&mut rng, n), random_spd(&mut rng, n));
            let direction = random_symmetric(&mut rng, n);
            let (_, gradient) = log_distance_penalty(&q, &q_ref);
            let pairing = gradient.dot(&direction);
            let at = |t: f64| log_distance_penalty(&(&q + &direction * t), &q_ref).0;
            let central = |t: f64| (at(t) - at(-t)) / (2.0 * t);
            let t = 1e-3;
            let fd = (4.0 * central(t / 2.0) - central(t)) / 3.0;
            let relative = (fd - pairing).abs() / pairing.abs().max(1e-3);
            assert!(
                relative <= 1e-8,
                "n = {n}: {pairing:e} vs {fd:e} ({relative:e})"
            );
        }
    }

    #[test]
    fn outside_the_cone_it_is_infinite() {
        let q = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, -1e-3]));
        let (value, gradient) = log_distance_penalty(&q, &DMatrix::identity(2, 2));
        assert_eq!(value, f64::INFINITY);
        assert_eq!(gradient.amax(), 0.0);
    }
}
