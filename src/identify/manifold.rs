//! The manifold the identification moves on: w = (J, R, Q, B, x0) with J skew, R = L Lᵀ
//! symmetric positive semidefinite of a chosen rank, Q symmetric positive definite; any
//! subset of the parts held fixed.
//!
//! # Geometry
//!
//! | part | coordinates | metric ⟨ξ, ζ⟩ | Riemannian gradient | retraction R_w(ξ) |
//! |---|---|---|---|---|
//! | J | skew n×n | tr(ξᵀ ζ) | ∇_J 𝒥 (skew) | J + ξ |
//! | R = L Lᵀ | L ∈ ℝ^{n×r} | tr(ξᵀ ζ) | ∇_L 𝒥 = 2 ∇_R 𝒥 L | L + ξ |
//! | Q | symmetric n×n | tr(Q⁻¹ ξ Q⁻¹ ζ) | Q ∇_Q 𝒥 Q | Q + ξ + ½ ξ Q⁻¹ ξ |
//! | B | n×m | tr(ξᵀ ζ) | ∇_B 𝒥 | B + ξ |
//! | x0 | ℝⁿ | ξᵀ ζ | ∇_x0 𝒥 | x0 + ξ |
//!
//! Q carries the affine-invariant metric, so steps are measured relative to Q itself. Its
//! retraction is second order for that metric and keeps Q positive definite for every ξ:
//! Q + ξ + ½ ξ Q⁻¹ ξ = ½ Q + ½ (Q + ξ) Q⁻¹ (Q + ξ) ⪰ ½ Q ≻ 0. R is never updated directly:
//! it is L Lᵀ of the moving factor L, positive semidefinite of rank ≤ r by construction.
//! J and the symmetric parts are written back exactly (skew, resp. symmetric) after each
//! update, so the structure holds to the last bit, not to a tolerance.
//!
//! Every tangent space is the same vector space, so vectors are transported by the
//! identity; conjugate gradients rescale the transported direction (Sato 2022, see
//! [`super::conjugate_gradient`]) where the metric changes with Q.

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};
use crate::linear_ph::LinearPh;
use crate::linear_ph::Parts;
use crate::linear_ph::{LinearPhMember, Parameters};

/// A point of the manifold: the model w with the factor L of R and Q⁻¹ kept at hand.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub j: DMatrix<f64>,
    /// L with R = L Lᵀ when R is fitted (n × rank); empty (n × 0) when R is fixed.
    pub l: DMatrix<f64>,
    pub r: DMatrix<f64>,
    pub q: DMatrix<f64>,
    pub b: DMatrix<f64>,
    pub x0: DVector<f64>,
    q_inverse: DMatrix<f64>,
}

/// A tangent vector (or a gradient, or a direction), part by part; fixed parts are zero.
#[derive(Debug, Clone, PartialEq)]
pub struct Tangent {
    pub j: DMatrix<f64>,
    pub l: DMatrix<f64>,
    pub q: DMatrix<f64>,
    pub b: DMatrix<f64>,
    pub x0: DVector<f64>,
}

impl Tangent {
    /// a ξ + b ζ.
    pub fn combine(a: f64, xi: &Tangent, b: f64, zeta: &Tangent) -> Tangent {
        Tangent {
            j: &xi.j * a + &zeta.j * b,
            l: &xi.l * a + &zeta.l * b,
            q: &xi.q * a + &zeta.q * b,
            b: &xi.b * a + &zeta.b * b,
            x0: &xi.x0 * a + &zeta.x0 * b,
        }
    }

    /// a ξ.
    pub fn scaled(&self, a: f64) -> Tangent {
        Tangent {
            j: &self.j * a,
            l: &self.l * a,
            q: &self.q * a,
            b: &self.b * a,
            x0: &self.x0 * a,
        }
    }
}

/// M with its upper triangle mirrored: exactly symmetric.
fn symmetrized(mut m: DMatrix<f64>) -> DMatrix<f64> {
    let n = m.nrows();
    for i in 0..n {
        for k in i + 1..n {
            let mean = 0.5 * (m[(i, k)] + m[(k, i)]);
            m[(i, k)] = mean;
            m[(k, i)] = mean;
        }
    }
    m
}

/// M with its strictly upper triangle negated into the lower one, zero diagonal: exactly
/// skew.
fn skewed(mut m: DMatrix<f64>) -> DMatrix<f64> {
    let n = m.nrows();
    for i in 0..n {
        m[(i, i)] = 0.0;
        for k in i + 1..n {
            let mean = 0.5 * (m[(i, k)] - m[(k, i)]);
            m[(i, k)] = mean;
            m[(k, i)] = -mean;
        }
    }
    m
}

impl Point {
    /// The point of (J, L, Q, B, x0), with R = L Lᵀ; `fixed_r` replaces L Lᵀ when R is
    /// held fixed (then `l` is n × 0). Fails when Q is not positive definite.
    pub fn new(
        j: DMatrix<f64>,
        l: DMatrix<f64>,
        fixed_r: Option<DMatrix<f64>>,
        q: DMatrix<f64>,
        b: DMatrix<f64>,
        x0: DVector<f64>,
    ) -> Result<Point> {
        let j = skewed(j);
        let q = symmetrized(q);
        let r = match fixed_r {
            Some(r) => symmetrized(r),
            None => symmetrized(&l * l.transpose()),
        };
        let q_inverse = q
            .clone()
            .cholesky()
            .ok_or_else(|| Error::Numerical {
                context: "identification".into(),
                problem: "an iterate's Q is not positive definite".into(),
            })?
            .inverse();
        Ok(Point {
            j,
            l,
            r,
            q,
            b,
            x0,
            q_inverse: symmetrized(q_inverse),
        })
    }

    /// (n, m).
    pub fn shape(&self) -> (usize, usize) {
        (self.q.nrows(), self.b.ncols())
    }

    /// The candidate model of this point, to evaluate.
    pub fn member(&self) -> LinearPhMember {
        LinearPhMember {
            system: LinearPh {
                j: self.j.clone(),
                r: self.r.clone(),
                q: self.q.clone(),
                b: self.b.clone(),
            },
            x0: self.x0.clone(),
        }
    }

    /// w as plain matrices.
    pub fn parameters(&self) -> Parameters {
        Parameters {
            j: self.j.clone(),
            r: self.r.clone(),
            q: self.q.clone(),
            b: self.b.clone(),
            x0: self.x0.clone(),
        }
    }

    /// The zero tangent vector at this point.
    pub fn zero_tangent(&self) -> Tangent {
        let (n, m) = self.shape();
        Tangent {
            j: DMatrix::zeros(n, n),
            l: DMatrix::zeros(n, self.l.ncols()),
            q: DMatrix::zeros(n, n),
            b: DMatrix::zeros(n, m),
            x0: DVector::zeros(n),
        }
    }

    /// What breaks the structure, if anything: J not exactly skew, R or Q not exactly
    /// symmetric, R with an eigenvalue below −1e-12 ‖R‖ (rounding of L Lᵀ), Q without a
    /// Cholesky factor. Used by tests on every iterate.
    pub fn structure_defects(&self) -> Vec<String> {
        let mut defects = Vec::new();
        if self.j != -self.j.transpose() {
            defects.push(format!(
                "J is not skew: max |J + Jᵀ| = {:e}",
                (&self.j + self.j.transpose()).amax()
            ));
        }
        for (name, m) in [("R", &self.r), ("Q", &self.q)] {
            if *m != m.transpose() {
                defects.push(format!(
                    "{name} is not symmetric: max |{name} − {name}ᵀ| = {:e}",
                    (m - m.transpose()).amax()
                ));
            }
        }
        let lowest = self.r.clone().symmetric_eigenvalues().min();
        if lowest < -1e-12 * self.r.norm().max(f64::MIN_POSITIVE) {
            defects.push(format!(
                "R is not positive semidefinite: λ_min = {lowest:e}"
            ));
        }
        if self.q.clone().cholesky().is_none() {
            defects.push("Q is not positive definite (no Cholesky factor)".into());
        }
        defects
    }
}

/// The geometry of the fitted parts (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    pub fit: Parts,
}

impl Geometry {
    /// The Riemannian gradient at `point` of a cost whose Euclidean gradient (each part in
    /// its structure) is `euclidean`; fixed parts get zero.
    pub fn gradient(&self, point: &Point, euclidean: &Parameters) -> Tangent {
        let mut g = point.zero_tangent();
        if self.fit.j {
            g.j = euclidean.j.clone();
        }
        if self.fit.r {
            g.l = &euclidean.r * &point.l * 2.0;
        }
        if self.fit.q {
            g.q = symmetrized(&point.q * &euclidean.q * &point.q);
        }
        if self.fit.b {
            g.b = euclidean.b.clone();
        }
        if self.fit.x0 {
            g.x0 = euclidean.x0.clone();
        }
        g
    }

    /// ⟨ξ, ζ⟩ at `point`.
    pub fn inner(&self, point: &Point, xi: &Tangent, zeta: &Tangent) -> f64 {
        let q_part = if self.fit.q {
            (&point.q_inverse * &xi.q).dot(&(&zeta.q * &point.q_inverse))
        } else {
            0.0
        };
        xi.j.dot(&zeta.j) + xi.l.dot(&zeta.l) + q_part + xi.b.dot(&zeta.b) + xi.x0.dot(&zeta.x0)
    }

    /// ‖ξ‖ at `point`.
    pub fn norm(&self, point: &Point, xi: &Tangent) -> f64 {
        self.inner(point, xi, xi).max(0.0).sqrt()
    }

    /// d/dt 𝒥(R_w(t ξ)) at t: the slope of the cost along the retraction curve, from the
    /// Euclidean gradient `euclidean` of 𝒥 at R_w(t ξ). The curve's velocity is ξ for J, L,
    /// B and x0, and ξ + t ξ Q⁻¹ ξ for Q (the derivative of Q + tξ + ½ t² ξ Q⁻¹ ξ); for L
    /// the Euclidean gradient is 2 ∇_R 𝒥 L, evaluated with L(t) = L + t ξ_L.
    pub fn slope_along(
        &self,
        start: &Point,
        xi: &Tangent,
        t: f64,
        reached: &Point,
        euclidean: &Parameters,
    ) -> f64 {
        let mut slope = 0.0;
        if self.fit.j {
            slope += euclidean.j.dot(&xi.j);
        }
        if self.fit.r {
            slope += (&euclidean.r * &reached.l * 2.0).dot(&xi.l);
        }
        if self.fit.q {
            let velocity = &xi.q + &xi.q * &start.q_inverse * &xi.q * t;
            slope += euclidean.q.dot(&velocity);
        }
        if self.fit.b {
            slope += euclidean.b.dot(&xi.b);
        }
        if self.fit.x0 {
            slope += euclidean.x0.dot(&xi.x0);
        }
        slope
    }

    /// R_w(t ξ): the point reached from `point` along t ξ (module docs).
    pub fn retract(&self, point: &Point, xi: &Tangent, t: f64) -> Result<Point> {
        let j = if self.fit.j {
            &point.j + &xi.j * t
        } else {
            point.j.clone()
        };
        let l = if self.fit.r {
            &point.l + &xi.l * t
        } else {
            point.l.clone()
        };
        let q = if self.fit.q {
            let step = &xi.q * t;
            let curvature = &step * &point.q_inverse * &step;
            &point.q + &step + curvature * 0.5
        } else {
            point.q.clone()
        };
        let b = if self.fit.b {
            &point.b + &xi.b * t
        } else {
            point.b.clone()
        };
        let x0 = if self.fit.x0 {
            &point.x0 + &xi.x0 * t
        } else {
            point.x0.clone()
        };
        let fixed_r = (!self.fit.r).then(|| point.r.clone());
        Point::new(j, l, fixed_r, q, b, x0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point() -> Point {
        let n = 4;
        let a = DMatrix::from_fn(n, n, |i, k| ((i * 7 + k * 3) as f64).sin());
        let l = DMatrix::from_fn(n, 2, |i, k| ((i + 2 * k) as f64).cos());
        let q = DMatrix::identity(n, n) * 2.0 + &a * a.transpose() * 0.1;
        let b = DMatrix::from_fn(n, 2, |i, k| (i as f64) - (k as f64));
        Point::new(
            &a - a.transpose(),
            l,
            None,
            q,
            b,
            DVector::from_fn(n, |i, _| i as f64),
        )
        .unwrap()
    }

    #[test]
    fn retraction_keeps_the_structure_exactly_even_for_huge_steps() {
        let geometry = Geometry { fit: Parts::ALL };
        let at = point();
        let mut xi = at.zero_tangent();
        xi.j = DMatrix::from_fn(4, 4, |i, k| (i as f64) - 2.0 * (k as f64));
        xi.j = skewed(xi.j);
        xi.l = DMatrix::from_element(4, 2, 0.3);
        xi.q = symmetrized(DMatrix::from_fn(4, 4, |i, k| ((i * k) as f64).sin() - 3.0));
        for t in [1e-3, 1.0, 1e3] {
            let moved = geometry.retract(&at, &xi, t).unwrap();
            assert!(
                moved.structure_defects().is_empty(),
                "t = {t}: {:?}",
                moved.structure_defects()
            );
        }
    }

    #[test]
    fn gradient_pairs_like_the_euclidean_derivative() {
        // ⟨grad 𝒥, ξ⟩_w must equal d/dt 𝒥(R_w(t ξ)) at t = 0 for 𝒥(w) = ⟨G, w⟩ (linear in
        // J, R, Q, B, x0), whose Euclidean gradient is G.
        let geometry = Geometry { fit: Parts::ALL };
        let at = point();
        let n = 4;
        let sym = |seed: f64| {
            symmetrized(DMatrix::from_fn(n, n, |i, k| {
                (seed + (i * 3 + k) as f64).cos()
            }))
        };
        let euclidean = Parameters {
            j: skewed(DMatrix::from_fn(n, n, |i, k| ((i + 5 * k) as f64).sin())),
            r: sym(1.0),
            q: sym(2.0),
            b: DMatrix::from_fn(n, 2, |i, k| (i + k) as f64 * 0.1),
            x0: DVector::from_fn(n, |i, _| 1.0 - i as f64),
        };
        let cost = |p: &Point| euclidean.dot(&p.parameters());
        let mut xi = at.zero_tangent();
        xi.j = skewed(DMatrix::from_fn(n, n, |i, k| (i * k) as f64 * 0.01));
        xi.l = DMatrix::from_fn(n, 2, |i, k| 0.1 * (i as f64) - 0.2 * k as f64);
        xi.q = sym(3.0);
        xi.b = DMatrix::from_element(n, 2, 0.5);
        xi.x0 = DVector::from_element(n, -0.25);
        let grad = geometry.gradient(&at, &euclidean);
        let pairing = geometry.inner(&at, &grad, &xi);
        let t = 1e-5;
        let fd = (cost(&geometry.retract(&at, &xi, t).unwrap())
            - cost(&geometry.retract(&at, &xi, -t).unwrap()))
            / (2.0 * t);
        assert!(
            (pairing - fd).abs() <= 1e-8 * pairing.abs().max(1.0),
            "pairing {pairing}, finite difference {fd}"
        );
        // Away from t = 0 the slope along the curve follows the retraction's own velocity
        // (Q's is not ξ there).
        for s in [0.0, 0.7, -1.3] {
            let reached = geometry.retract(&at, &xi, s).unwrap();
            let slope = geometry.slope_along(&at, &xi, s, &reached, &euclidean);
            let fd = (cost(&geometry.retract(&at, &xi, s + t).unwrap())
                - cost(&geometry.retract(&at, &xi, s - t).unwrap()))
                / (2.0 * t);
            assert!(
                (slope - fd).abs() <= 1e-8 * slope.abs().max(1.0),
                "t = {s}: slope {slope}, finite difference {fd}"
            );
        }
    }
}
