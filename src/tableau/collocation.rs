//! Collocation Butcher tables with the mass matrix of their Lagrange basis, computed in f64
//! from the definitions (Hairer, Lubich & Wanner, *Geometric Numerical Integration*, §II.1):
//!
//! - nodes: Gauss–Legendre c_i are the roots of the shifted Legendre polynomial
//!   dˢ/dτˢ (τˢ (τ − 1)ˢ); Lobatto c_i are 0, 1 and the roots of P'_{s−1}(2τ − 1);
//! - collocation (Gauss, Lobatto IIIA): a_ij = ∫₀^{c_i} ℓ_j, b_j = ∫₀¹ ℓ_j;
//! - Lobatto IIIB is defined by the simplifying assumption D(s); written in the Lagrange
//!   basis p = ℓ_i it reads b_i a_ij = b_j ∫_{c_j}^1 ℓ_i, which is how it is computed;
//! - the mass matrix m_ij = ∫₀¹ ℓ_i ℓ_j (Kotyczka & Lefèvre 2019, eq. 25).
//!
//! All integrals are of polynomials of degree ≤ 2s − 2 and are evaluated exactly (up to
//! rounding) by an (s + 1)-point Gauss rule. Everything is computed in double-double and
//! rounded to f64 once at the end.

use nalgebra::DMatrix;
use serde::Serialize;

use super::polynomial::{Dd, LagrangeBasis, UnitQuadrature, gauss_legendre, lobatto_interior};
use crate::error::{Error, Result};

/// A family of collocation-type Runge–Kutta methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Gauss–Legendre collocation, order 2s, s = 1…8.
    Gauss,
    /// Lobatto IIIA (collocation at the Lobatto points), order 2s − 2, s = 2…6.
    LobattoIiia,
    /// Lobatto IIIB (discontinuous collocation, the symplectic partner of IIIA), order
    /// 2s − 2, s = 2…6.
    LobattoIiib,
}

impl Family {
    /// The name used on the command line and in configs.
    pub fn name(self) -> &'static str {
        match self {
            Family::Gauss => "gauss",
            Family::LobattoIiia => "lobatto-iiia",
            Family::LobattoIiib => "lobatto-iiib",
        }
    }

    /// The stage counts harbor supports for this family.
    pub fn stage_range(self) -> std::ops::RangeInclusive<usize> {
        match self {
            Family::Gauss => 1..=8,
            Family::LobattoIiia | Family::LobattoIiib => 2..=6,
        }
    }

    /// Classical order of the s-stage method.
    pub fn order(self, stages: usize) -> usize {
        match self {
            Family::Gauss => 2 * stages,
            Family::LobattoIiia | Family::LobattoIiib => 2 * stages - 2,
        }
    }

    /// Parses `gauss`, `lobatto-iiia`, `lobatto-iiib`.
    pub fn parse(name: &str) -> Option<Family> {
        match name {
            "gauss" => Some(Family::Gauss),
            "lobatto-iiia" => Some(Family::LobattoIiia),
            "lobatto-iiib" => Some(Family::LobattoIiib),
            _ => None,
        }
    }
}

/// An s-stage Butcher table (c, a, b) with its order and the mass matrix M of the Lagrange
/// basis on the nodes c.
#[derive(Debug, Clone)]
pub struct Tableau {
    pub family: Family,
    pub stages: usize,
    pub order: usize,
    /// Collocation nodes c_i ∈ [0, 1], increasing.
    pub c: Vec<f64>,
    /// Quadrature weights b_j = ∫₀¹ ℓ_j.
    pub b: Vec<f64>,
    /// Stage coefficients a_ij (row i = stage).
    pub a: DMatrix<f64>,
    /// Mass matrix m_ij = ∫₀¹ ℓ_i ℓ_j (symmetric positive definite).
    pub m: DMatrix<f64>,
}

impl Tableau {
    /// The s-stage table of `family`; errors when s is outside [`Family::stage_range`].
    ///
    /// ```
    /// use harbor::tableau::{Family, Tableau};
    ///
    /// // Lobatto IIIA, s = 3 (Simpson's rule): c = (0, ½, 1), a₂₁ = 5/24, b = (1/6, 2/3, 1/6),
    /// // and the last row of a is b (the method is stiffly accurate).
    /// let lobatto = Tableau::new(Family::LobattoIiia, 3)?;
    /// assert_eq!((lobatto.order, lobatto.c.as_slice()), (4, &[0.0, 0.5, 1.0][..]));
    /// assert_eq!(lobatto.a[(1, 0)], 5.0 / 24.0);
    /// assert_eq!(lobatto.b, [1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0]);
    /// assert_eq!(lobatto.a_rows()[2], lobatto.b);
    ///
    /// let too_many = Tableau::new(Family::Gauss, 9).unwrap_err();
    /// assert_eq!(too_many.to_string(), "stages: gauss supports 1..=8 stages, got 9");
    /// # Ok::<(), harbor::Error>(())
    /// ```
    pub fn new(family: Family, stages: usize) -> Result<Self> {
        let range = family.stage_range();
        if !range.contains(&stages) {
            return Err(Error::invalid(
                "stages",
                format!(
                    "{} supports {}..={} stages, got {stages}",
                    family.name(),
                    range.start(),
                    range.end()
                ),
            ));
        }
        let c = match family {
            Family::Gauss => gauss_nodes(stages),
            Family::LobattoIiia | Family::LobattoIiib => lobatto_nodes(stages),
        };
        let (zero, one) = (Dd::from(0.0), Dd::from(1.0));
        let basis = LagrangeBasis::new(&c);
        let rule = UnitQuadrature::gauss(stages + 1);
        let b: Vec<Dd> = (0..stages)
            .map(|j| rule.integrate(zero, one, |t| basis.eval(j, t)))
            .collect();
        let a = match family {
            Family::Gauss | Family::LobattoIiia => DMatrix::from_fn(stages, stages, |i, j| {
                f64::from(rule.integrate(zero, c[i], |t| basis.eval(j, t)))
            }),
            Family::LobattoIiib => DMatrix::from_fn(stages, stages, |i, j| {
                f64::from(b[j] * rule.integrate(c[j], one, |t| basis.eval(i, t)) / b[i])
            }),
        };
        let m = DMatrix::from_fn(stages, stages, |i, j| {
            f64::from(rule.integrate(zero, one, |t| basis.eval(i, t) * basis.eval(j, t)))
        });
        let (a, m) = (a.map(flush_rounding_noise), m.map(flush_rounding_noise));
        let c = c.into_iter().map(f64::from).collect();
        let b = b.into_iter().map(f64::from).collect();
        Ok(Tableau {
            family,
            stages,
            order: family.order(stages),
            c,
            b,
            a,
            m,
        })
    }

    /// Gauss–Legendre collocation with s stages.
    pub fn gauss(stages: usize) -> Result<Self> {
        Self::new(Family::Gauss, stages)
    }

    /// Lobatto IIIA with s stages.
    pub fn lobatto_iiia(stages: usize) -> Result<Self> {
        Self::new(Family::LobattoIiia, stages)
    }

    /// Lobatto IIIB with s stages.
    pub fn lobatto_iiib(stages: usize) -> Result<Self> {
        Self::new(Family::LobattoIiib, stages)
    }

    /// The rows of a as plain vectors (for JSON and WGSL constants).
    pub fn a_rows(&self) -> Vec<Vec<f64>> {
        matrix_rows(&self.a)
    }

    /// The rows of M as plain vectors.
    pub fn m_rows(&self) -> Vec<Vec<f64>> {
        matrix_rows(&self.m)
    }
}

/// Entries that are exactly zero in exact arithmetic come out of the double-double sums
/// as ~1e-33; every genuine entry of s ≤ 8 tables exceeds 1e-4, so anything below 1e-30 is
/// that noise and is returned as 0.
fn flush_rounding_noise(v: f64) -> f64 {
    if v.abs() < 1e-30 { 0.0 } else { v }
}

/// Rows of a dense matrix as nested vectors.
pub fn matrix_rows(m: &DMatrix<f64>) -> Vec<Vec<f64>> {
    m.row_iter().map(|r| r.iter().copied().collect()).collect()
}

/// Gauss–Legendre nodes on [0, 1]: the roots of P_s(2τ − 1).
fn gauss_nodes(stages: usize) -> Vec<Dd> {
    gauss_legendre(stages)
        .0
        .iter()
        .map(|&x| (x + 1.0) * 0.5)
        .collect()
}

/// Lobatto nodes on [0, 1]: 0, the roots of P'_{s−1}(2τ − 1), 1.
fn lobatto_nodes(stages: usize) -> Vec<Dd> {
    let mut c = vec![Dd::from(0.0)];
    c.extend(
        lobatto_interior(stages - 1)
            .iter()
            .map(|&x| (x + 1.0) * 0.5),
    );
    c.push(Dd::from(1.0));
    c
}
