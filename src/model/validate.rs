//! Checks of the matrix properties a port-Hamiltonian model relies on. Each failure names the
//! matrix by its config path, the violated property and the measured value.

use nalgebra::{DMatrix, DVector, SymmetricEigen};

use crate::error::{Error, Result};

/// Relative tolerance of the structural checks: a defect δ passes when
/// δ ≤ `STRUCTURE_TOLERANCE` · max(1, max |entry|).
pub const STRUCTURE_TOLERANCE: f64 = 1e-12;

/// Largest absolute entry, the scale the tolerances are relative to.
fn scale(a: &DMatrix<f64>) -> f64 {
    a.iter().fold(1.0_f64, |acc, v| acc.max(v.abs()))
}

/// Builds a `rows`×`cols` matrix from nested rows, checking the shape and that every entry
/// is finite. `expected` explains where the required shape comes from.
pub fn matrix_from_rows(
    field: &str,
    data: &[Vec<f64>],
    rows: usize,
    cols: usize,
    expected: &str,
) -> Result<DMatrix<f64>> {
    if data.len() != rows {
        return Err(Error::invalid(
            field,
            format!(
                "wrong shape: expected {rows}×{cols} ({expected}), found {} rows",
                data.len()
            ),
        ));
    }
    for (i, row) in data.iter().enumerate() {
        if row.len() != cols {
            return Err(Error::invalid(
                field,
                format!(
                    "wrong shape: expected {rows}×{cols} ({expected}), row {i} has {} entries",
                    row.len()
                ),
            ));
        }
        for (j, v) in row.iter().enumerate() {
            if !v.is_finite() {
                return Err(Error::invalid(
                    format!("{field}[{i}][{j}]"),
                    format!("entry is not finite ({v})"),
                ));
            }
        }
    }
    Ok(DMatrix::from_fn(rows, cols, |i, j| data[i][j]))
}

/// A vector of finite entries with the given length.
pub fn vector_from_slice(
    field: &str,
    data: &[f64],
    len: usize,
    expected: &str,
) -> Result<DVector<f64>> {
    if data.len() != len {
        return Err(Error::invalid(
            field,
            format!(
                "wrong length: expected {len} ({expected}), found {}",
                data.len()
            ),
        ));
    }
    if let Some((i, v)) = data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Error::invalid(
            format!("{field}[{i}]"),
            format!("entry is not finite ({v})"),
        ));
    }
    Ok(DVector::from_column_slice(data))
}

/// J = −Jᵀ within tolerance.
pub fn check_skew(field: &str, a: &DMatrix<f64>) -> Result<()> {
    let defect = (a + a.transpose()).amax();
    if defect > STRUCTURE_TOLERANCE * scale(a) {
        return Err(Error::invalid(
            field,
            format!("is not skew-symmetric: max |J + Jᵀ| = {defect:.3e}"),
        ));
    }
    Ok(())
}

/// A = Aᵀ within tolerance.
pub fn check_symmetric(field: &str, a: &DMatrix<f64>) -> Result<()> {
    let defect = (a - a.transpose()).amax();
    if defect > STRUCTURE_TOLERANCE * scale(a) {
        return Err(Error::invalid(
            field,
            format!("is not symmetric: max |A − Aᵀ| = {defect:.3e}"),
        ));
    }
    Ok(())
}

/// Smallest eigenvalue of the symmetric part of a (square) matrix.
pub fn smallest_eigenvalue(a: &DMatrix<f64>) -> f64 {
    if a.nrows() == 0 {
        return f64::INFINITY;
    }
    let symmetric = (a + a.transpose()) * 0.5;
    SymmetricEigen::new(symmetric).eigenvalues.min()
}

/// Symmetric positive semidefinite: λ_min ≥ −tol · scale.
pub fn check_psd(field: &str, a: &DMatrix<f64>) -> Result<()> {
    check_symmetric(field, a)?;
    let lambda = smallest_eigenvalue(a);
    if lambda < -STRUCTURE_TOLERANCE * scale(a) {
        return Err(Error::invalid(
            field,
            format!("is not positive semidefinite: smallest eigenvalue {lambda:.3e}"),
        ));
    }
    Ok(())
}

/// Symmetric positive definite: λ_min > tol · scale.
pub fn check_pd(field: &str, a: &DMatrix<f64>) -> Result<()> {
    check_symmetric(field, a)?;
    let lambda = smallest_eigenvalue(a);
    if lambda <= STRUCTURE_TOLERANCE * scale(a) {
        return Err(Error::invalid(
            field,
            format!("is not positive definite: smallest eigenvalue {lambda:.3e}"),
        ));
    }
    Ok(())
}
