//! LU factorisation with partial pivoting in a caller's buffer, step for step as
//! `nalgebra::LU::new` does it, and its solve as `LU::solve_mut`: the same operations in the
//! same order, so the same bits, without the factorisation's own allocation. Building many
//! members' (or candidates') stage matrices then allocates nothing per member.

use nalgebra::DMatrix;

/// Factors A (`matrix`, square) in place, P A = L_u U: U on and above the diagonal, the
/// unit-diagonal L_u below it. Step i takes the first largest |a_ri|, r ≥ i, as the pivot
/// (`icamax`), exchanges rows i and the pivot's (recorded in `swaps`, in order, as
/// `PermutationSequence` does), scales the column below the pivot by 1/pivot
/// (l_r = a_ri · (1/a_ii)) and updates the rest by a_rk ← (−a_ik) l_r + a_rk
/// (`gauss_step`'s `axpy`); a column whose largest |a_ri| is zero (or NaN) is skipped, as
/// nalgebra skips it. Returns whether U's diagonal has no zero (A invertible).
// `x = p + x`, not `x += p`: nalgebra's operand order, which decides which NaN an
// addition of two NaNs returns.
#[allow(clippy::assign_op_pattern)]
pub fn factor_in_place(matrix: &mut DMatrix<f64>, swaps: &mut Vec<(usize, usize)>) -> bool {
    let size = matrix.nrows();
    debug_assert_eq!(
        size,
        matrix.ncols(),
        "an LU factorisation of a square matrix"
    );
    let a = matrix.as_mut_slice();
    swaps.clear();
    for i in 0..size {
        let mut pivot = i;
        let mut largest = a[i * size + i].abs();
        for row in i + 1..size {
            let value = a[i * size + row].abs();
            if value > largest {
                (largest, pivot) = (value, row);
            }
        }
        let diag = a[i * size + pivot];
        if diag == 0.0 {
            continue;
        }
        if pivot != i {
            swaps.push((i, pivot));
            for column in a.chunks_exact_mut(size) {
                column.swap(i, pivot);
            }
        }
        let inv_diag = 1.0 / diag;
        let (left, right) = a.split_at_mut((i + 1) * size);
        let multipliers = &mut left[i * size + i + 1..];
        for l in multipliers.iter_mut() {
            *l *= inv_diag;
        }
        for column in right.chunks_exact_mut(size) {
            let minus_pivot = -column[i];
            for (entry, &l) in column[i + 1..].iter_mut().zip(multipliers.iter()) {
                *entry = minus_pivot * l + *entry;
            }
        }
    }
    (0..size).all(|i| a[i * size + i] != 0.0)
}

/// Solves A Z = B in place, from the factors of [`factor_in_place`]: `rows` holds B
/// row-major, A's size rows of `width` right-hand sides each (one row per unknown). The
/// rows are permuted by P, then L_u Y = P B (y_r ← (−y_i) l_ri + y_r, r > i) and U Z = Y
/// (z_i ← y_i / u_ii, then y_r ← (−z_i) u_ri + y_r, r < i): for every right-hand side the
/// operations of `LU::solve_mut` in its order. Each step is taken for all right-hand sides
/// at once (the divisions of a row in one go), which does not change any one's operations.
/// Returns false, and leaves the rows as they were, where U has a zero on its diagonal.
// `x = p + x`, not `x += p`: nalgebra's operand order, which decides which NaN an
// addition of two NaNs returns.
#[allow(clippy::assign_op_pattern)]
pub fn solve_in_place(
    lu: &DMatrix<f64>,
    swaps: &[(usize, usize)],
    rows: &mut [f64],
    width: usize,
) -> bool {
    let size = lu.nrows();
    assert_eq!(rows.len(), size * width, "size rows of the given width");
    let a = lu.as_slice();
    if (0..size).any(|i| a[i * size + i] == 0.0) {
        return false;
    }
    if width == 0 {
        return true;
    }
    for &(i, pivot) in swaps {
        for col in 0..width {
            rows.swap(i * width + col, pivot * width + col);
        }
    }
    for i in 0..size {
        let (done, below) = rows.split_at_mut((i + 1) * width);
        let row_i = &done[i * width..];
        let column = &a[i * size + i + 1..(i + 1) * size];
        for (row_r, &l) in below.chunks_exact_mut(width).zip(column) {
            for (entry, &y) in row_r.iter_mut().zip(row_i) {
                *entry = -y * l + *entry;
            }
        }
    }
    for i in (0..size).rev() {
        let (above, from_i) = rows.split_at_mut(i * width);
        let row_i = &mut from_i[..width];
        let diag = a[i * size + i];
        for entry in row_i.iter_mut() {
            *entry /= diag;
        }
        let column = &a[i * size..i * size + i];
        for (row_r, &u) in above.chunks_exact_mut(width).zip(column) {
            for (entry, &z) in row_r.iter_mut().zip(row_i.iter()) {
                *entry = -z * u + *entry;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matrix of entries in {−1, −0, 0, 1, 2}: ties for every pivot and signed zeros.
    fn tied(size: usize) -> DMatrix<f64> {
        let values = [-1.0, -0.0, 0.0, 1.0, 2.0, 1.0, -1.0];
        DMatrix::from_fn(size, size, |r, c| {
            values[(r * 3 + c * 5 + r * c) % values.len()]
        })
    }

    /// A matrix of entries in [−1, 1) from a fixed LCG, with `zero_column` set to zero.
    fn matrix(size: usize, seed: u64, zero_column: Option<usize>) -> DMatrix<f64> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        DMatrix::from_fn(size, size, |_, col| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let value = ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0;
            if Some(col) == zero_column { 0.0 } else { value }
        })
    }

    /// The factors, the invertibility and the solutions are nalgebra's to the bit, with
    /// pivoting (random matrices need row exchanges), a zero column, and tied pivots with
    /// signed zeros.
    #[test]
    fn factors_and_solutions_are_nalgebras_bits() {
        let cases = [
            (matrix(1, 1, None), 1, true),
            (matrix(4, 2, None), 2, true),
            (matrix(10, 3, None), 3, true),
            (matrix(17, 4, None), 4, true),
            (matrix(6, 5, Some(2)), 5, false),
            (tied(5), 6, false),
            (tied(8), 7, false),
        ];
        for (a, seed, random) in cases {
            let size = a.nrows();
            let theirs = a.clone().lu();
            let mut mine = a.clone();
            let mut swaps = Vec::new();
            let invertible = factor_in_place(&mut mine, &mut swaps);
            assert_eq!(invertible, theirs.is_invertible(), "size {size}");
            let (l, u) = (theirs.l(), theirs.u());
            for row in 0..size {
                for col in 0..size {
                    let expected = if row > col {
                        l[(row, col)]
                    } else {
                        u[(row, col)]
                    };
                    assert_eq!(mine[(row, col)].to_bits(), expected.to_bits());
                }
            }
            if random {
                assert!(!swaps.is_empty() || size == 1, "size {size} pivots");
            }
            let width = size.min(3);
            let b = matrix(size, seed + 100, None)
                .columns(0, width)
                .into_owned();
            let mut z = b.transpose().as_slice().to_vec();
            let solved = solve_in_place(&mine, &swaps, &mut z, width);
            match theirs.solve(&b) {
                Some(expected) => {
                    assert!(solved);
                    let expected = expected.transpose();
                    assert!(
                        z.iter()
                            .zip(&expected)
                            .all(|(a, b)| a.to_bits() == b.to_bits())
                    );
                }
                None => assert!(!solved),
            }
        }
    }
}
