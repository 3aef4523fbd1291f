//! Linear port-Hamiltonian systems ẋ = (J − R) Q x + B u, y = Bᵀ Q x, H(x) = ½ xᵀ Q x.

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};
use crate::model::validate::{STRUCTURE_TOLERANCE, check_pd, check_psd, check_skew};

/// A validated linear PH system: J skew, R symmetric PSD, Q symmetric PD, B of shape n×m.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearPh {
    pub j: DMatrix<f64>,
    pub r: DMatrix<f64>,
    pub q: DMatrix<f64>,
    pub b: DMatrix<f64>,
}

impl LinearPh {
    /// Validates the structure; `prefix` names the system in errors (`system` gives
    /// `system.J`, `system.R`, …). Shapes must already agree (see `validate::matrix_from_rows`).
    ///
    /// ```
    /// use harbor::linear_ph::LinearPh;
    /// use nalgebra::{DMatrix, dmatrix};
    ///
    /// // The damped oscillator: J skew, R ⪰ 0, Q ≻ 0, one input on the momentum.
    /// let j = dmatrix![0.0, 1.0; -1.0, 0.0];
    /// let q = DMatrix::identity(2, 2);
    /// let b = dmatrix![0.0; 1.0];
    /// let r = dmatrix![0.0, 0.0; 0.0, 0.1];
    /// let damped = LinearPh::new("system", j.clone(), r, q.clone(), b.clone())?;
    /// assert_eq!((damped.states(), damped.inputs()), (2, 1));
    ///
    /// // Negative damping is refused, naming the matrix and the measured eigenvalue.
    /// let pumping = dmatrix![0.0, 0.0; 0.0, -0.1];
    /// let refused = LinearPh::new("system", j, pumping, q, b).unwrap_err();
    /// assert_eq!(
    ///     refused.to_string(),
    ///     "system.R: is not positive semidefinite: smallest eigenvalue -1.000e-1"
    /// );
    /// # Ok::<(), harbor::Error>(())
    /// ```
    pub fn new(
        prefix: &str,
        j: DMatrix<f64>,
        r: DMatrix<f64>,
        q: DMatrix<f64>,
        b: DMatrix<f64>,
    ) -> Result<Self> {
        let n = q.nrows();
        for (name, m, cols) in [
            ("J", &j, n),
            ("R", &r, n),
            ("Q", &q, n),
            ("B", &b, b.ncols()),
        ] {
            if m.nrows() != n || m.ncols() != cols {
                return Err(Error::invalid(
                    format!("{prefix}.{name}"),
                    format!(
                        "wrong shape: expected {n}×{cols}, found {}×{}",
                        m.nrows(),
                        m.ncols()
                    ),
                ));
            }
        }
        check_skew(&format!("{prefix}.J"), &j)?;
        check_psd(&format!("{prefix}.R"), &r)?;
        check_pd(&format!("{prefix}.Q"), &q)?;
        Ok(LinearPh { j, r, q, b })
    }

    /// State dimension n.
    pub fn states(&self) -> usize {
        self.q.nrows()
    }

    /// Input dimension m.
    pub fn inputs(&self) -> usize {
        self.b.ncols()
    }

    /// The drift matrix L = (J − R) Q of ẋ = L x + B u.
    pub fn drift(&self) -> DMatrix<f64> {
        (&self.j - &self.r) * &self.q
    }

    /// H(x) = ½ xᵀ Q x.
    pub fn hamiltonian(&self, x: &DVector<f64>) -> f64 {
        0.5 * x.dot(&(&self.q * x))
    }

    /// y = Bᵀ Q x.
    pub fn output(&self, x: &DVector<f64>) -> DVector<f64> {
        self.b.transpose() * (&self.q * x)
    }

    /// Checks the canonical form that the partitioned Lobatto pair needs — x = (q, p) with
    /// J = [[0, I], [−I, 0]] and Q, R block-diagonal — and returns the size of q.
    pub fn canonical_split(&self, prefix: &str) -> Result<usize> {
        let n = self.states();
        if !n.is_multiple_of(2) {
            return Err(Error::invalid(
                format!("{prefix}.J"),
                format!(
                    "lobatto-pair needs canonical form x = (q, p) with an even state size, found n = {n}"
                ),
            ));
        }
        let half = n / 2;
        let defect = (&self.j - canonical_structure(n)).amax();
        if defect > STRUCTURE_TOLERANCE {
            return Err(Error::invalid(
                format!("{prefix}.J"),
                format!(
                    "lobatto-pair needs canonical J = [[0, I], [−I, 0]]: max deviation {defect:.3e}"
                ),
            ));
        }
        for (name, m) in [("Q", &self.q), ("R", &self.r)] {
            let coupling = m.view((0, half), (half, half)).amax();
            if coupling > STRUCTURE_TOLERANCE * m.amax().max(1.0) {
                return Err(Error::invalid(
                    format!("{prefix}.{name}"),
                    format!(
                        "lobatto-pair needs {name} block-diagonal in (q, p): max off-diagonal block entry {coupling:.3e}"
                    ),
                ));
            }
        }
        Ok(half)
    }
}

/// The canonical structure matrix of n = 2k states x = (q, p): J = [[0, I], [−I, 0]].
pub fn canonical_structure(n: usize) -> DMatrix<f64> {
    let half = n / 2;
    DMatrix::from_fn(n, n, |i, k| {
        if k == i + half {
            1.0
        } else if i == k + half {
            -1.0
        } else {
            0.0
        }
    })
}
