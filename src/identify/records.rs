//! Points and evaluations as JSON that reads back bit for bit (serde_json writes the
//! shortest representation that round-trips, and reads with `float_roundtrip`): the
//! records a sharded identification passes between its stages.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use super::gradient::Evaluation;
use super::manifold::Point;
use crate::error::{Error, Result};
use crate::linear_ph::Parameters;

/// A matrix: its shape and its entries in column order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixRecord {
    pub rows: usize,
    pub columns: usize,
    pub entries: Vec<f64>,
}

impl MatrixRecord {
    pub fn of(m: &DMatrix<f64>) -> Self {
        MatrixRecord {
            rows: m.nrows(),
            columns: m.ncols(),
            entries: m.as_slice().to_vec(),
        }
    }

    pub fn of_vector(v: &DVector<f64>) -> Self {
        MatrixRecord {
            rows: v.len(),
            columns: 1,
            entries: v.as_slice().to_vec(),
        }
    }

    fn checked(&self, what: &str) -> Result<()> {
        if self.rows * self.columns != self.entries.len() {
            return Err(Error::invalid(
                what,
                format!(
                    "a {}×{} matrix with {} entries",
                    self.rows,
                    self.columns,
                    self.entries.len()
                ),
            ));
        }
        Ok(())
    }

    pub fn matrix(&self, what: &str) -> Result<DMatrix<f64>> {
        self.checked(what)?;
        Ok(DMatrix::from_column_slice(
            self.rows,
            self.columns,
            &self.entries,
        ))
    }

    pub fn vector(&self, what: &str) -> Result<DVector<f64>> {
        self.checked(what)?;
        Ok(DVector::from_column_slice(&self.entries))
    }
}

/// A point of the model manifold: J, the factor L of R (empty when R is fixed), R, Q, B, x0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    pub j: MatrixRecord,
    pub l: MatrixRecord,
    pub r: MatrixRecord,
    pub q: MatrixRecord,
    pub b: MatrixRecord,
    pub x0: MatrixRecord,
}

impl PointRecord {
    pub fn of(p: &Point) -> Self {
        PointRecord {
            j: MatrixRecord::of(&p.j),
            l: MatrixRecord::of(&p.l),
            r: MatrixRecord::of(&p.r),
            q: MatrixRecord::of(&p.q),
            b: MatrixRecord::of(&p.b),
            x0: MatrixRecord::of_vector(&p.x0),
        }
    }

    /// The point again: J and Q are skew and symmetric already, so [`Point::new`] keeps
    /// their bits, and recomputes R = L Lᵀ (or keeps a fixed R) and Q⁻¹ as the run did.
    pub fn point(&self) -> Result<Point> {
        let l = self.l.matrix("point.l")?;
        let fixed_r = (l.ncols() == 0)
            .then(|| self.r.matrix("point.r"))
            .transpose()?;
        Point::new(
            self.j.matrix("point.j")?,
            l,
            fixed_r,
            self.q.matrix("point.q")?,
            self.b.matrix("point.b")?,
            self.x0.vector("point.x0")?,
        )
    }
}

/// A cost with its Euclidean gradient.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvaluationRecord {
    pub cost: f64,
    pub j: MatrixRecord,
    pub r: MatrixRecord,
    pub q: MatrixRecord,
    pub b: MatrixRecord,
    pub x0: MatrixRecord,
}

impl EvaluationRecord {
    pub fn of(e: &Evaluation) -> Self {
        let g = &e.gradient;
        EvaluationRecord {
            cost: e.cost,
            j: MatrixRecord::of(&g.j),
            r: MatrixRecord::of(&g.r),
            q: MatrixRecord::of(&g.q),
            b: MatrixRecord::of(&g.b),
            x0: MatrixRecord::of_vector(&g.x0),
        }
    }

    pub fn evaluation(&self) -> Result<Evaluation> {
        Ok(Evaluation {
            cost: self.cost,
            gradient: Parameters {
                j: self.j.matrix("gradient.j")?,
                r: self.r.matrix("gradient.r")?,
                q: self.q.matrix("gradient.q")?,
                b: self.b.matrix("gradient.b")?,
                x0: self.x0.vector("gradient.x0")?,
            },
        })
    }
}
