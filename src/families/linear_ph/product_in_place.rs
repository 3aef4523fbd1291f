//! Matrix products into a caller's buffer with the bits of nalgebra's `*`, and the buffers'
//! shaping: the stage solves of the collocation stepper and of the pullback reuse their
//! matrices from member to member, and must round exactly as the allocating operations
//! they replace.

use nalgebra::{DMatrix, Dyn, Matrix, Storage};

/// Makes `matrix` `rows` × `cols`, keeping its allocation when the shape is already right.
pub fn fit(matrix: &mut DMatrix<f64>, rows: usize, cols: usize) {
    if matrix.shape() != (rows, cols) {
        *matrix = DMatrix::zeros(rows, cols);
    }
}

/// out = a b with the operations, in their order, of nalgebra's `gemm` (α = 1, β = 0),
/// which `a * b` calls. The shapes it hands to matrixmultiply (a's rows and columns and
/// b's columns all above 5) are handed to it. The rest it computes column by column
/// (`gemv`): out[:, c] = a[:, 0] b[0, c], then out[:, c] ← a[:, k] b[k, c] + out[:, c] for
/// k = 1, 2, …; this loop does the same without its per-column views, which are most of a
/// small product's cost.
// `x = p + x`, not `x += p`: nalgebra's operand order, which decides which NaN an
// addition of two NaNs returns.
#[allow(clippy::assign_op_pattern)]
pub fn product<S: Storage<f64, Dyn, Dyn>>(
    out: &mut DMatrix<f64>,
    a: &DMatrix<f64>,
    b: &Matrix<f64, Dyn, Dyn, S>,
) {
    const SMALL_DIM: usize = 5;
    let (rows, inner) = a.shape();
    let cols = b.ncols();
    assert_eq!(
        (inner, out.shape()),
        (b.nrows(), (rows, cols)),
        "a product's shapes"
    );
    if (rows > SMALL_DIM && cols > SMALL_DIM && inner > SMALL_DIM) || inner == 0 || rows == 0 {
        out.gemm(1.0, a, b, 0.0);
        return;
    }
    let a = a.as_slice();
    for (c, column) in out.as_mut_slice().chunks_exact_mut(rows).enumerate() {
        let first = b[(0, c)];
        for (entry, &a_i0) in column.iter_mut().zip(&a[..rows]) {
            *entry = a_i0 * first;
        }
        for (k, a_k) in a.chunks_exact(rows).enumerate().skip(1) {
            let b_kc = b[(k, c)];
            for (entry, &a_ik) in column.iter_mut().zip(a_k) {
                *entry = a_ik * b_kc + *entry;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry of the product is nalgebra's `*`'s to the bit, on both of its paths
    /// (small shapes by columns, large ones by matrixmultiply), for owned and viewed b,
    /// with signed zeros among the entries.
    #[test]
    fn products_are_nalgebras_bits() {
        let entry = |seed: usize| {
            let x = ((seed * 2654435761) % 1000) as f64 / 137.0 - 3.5;
            if seed.is_multiple_of(11) { -0.0 } else { x }
        };
        for (rows, inner, cols) in [(1, 1, 1), (3, 4, 2), (5, 9, 5), (7, 3, 7), (7, 13, 6)] {
            let a = DMatrix::from_fn(rows, inner, |r, c| entry(r * 31 + c * 7 + 1));
            let b = DMatrix::from_fn(inner, cols + 2, |r, c| entry(r * 17 + c * 5 + 3));
            let b_view = b.columns(1, cols);
            let expected = &a * b_view;
            let mut out = DMatrix::zeros(0, 0);
            fit(&mut out, rows, cols);
            product(&mut out, &a, &b_view);
            let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&out), bits(&expected), "{rows} × {inner} × {cols}");
        }
    }
}
