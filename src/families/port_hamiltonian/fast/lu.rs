//! Dense linear solves A d = b side by side, one system per lane, with the operations of
//! nalgebra's `LU::new` (partial pivoting) and `LU::solve` in the same order, so that each
//! lane's d equals, to the last bit, what `matrix.lu().solve(&b)` gives for its system:
//!
//! ```text
//!   for i in 0..dim:                      (elimination)
//!     p = the first row r ≥ i of largest |A_ri|; swap rows i and p (of A and of b)
//!     A_ri ← A_ri · (1 / A_ii)                         for r > i
//!     A_rc ← (−A_ic) · A_ri + A_rc                     for c > i, r > i
//!   b_r ← (−b_i) · A_ri + b_r       for i = 0, 1, …, r > i         (L, unit diagonal)
//!   b_i ← b_i / A_ii, then b_r ← (−b_i) · A_ri + b_r  for i = dim−1, …, 0, r < i  (U)
//! ```
//!
//! Swapping b's rows during the elimination is the data movement of nalgebra's permutation
//! sequence applied before the substitutions. A lane whose pivot A_ii is zero is singular:
//! nalgebra skips that column and its solve returns `None`; here the lane is marked and its
//! values are not used.
//!
//! Layout: entry-major, lane-minor — `a[(r · dim + c) · lanes + l]`, `b[r · lanes + l]`.

/// Work buffers of one lane per system: the pivot row and its |A_pi|.
#[derive(Debug, Clone, Default)]
pub struct LuWork {
    pivot: Vec<f64>,
    largest: Vec<f64>,
}

impl LuWork {
    pub fn new(lanes: usize) -> Self {
        LuWork {
            pivot: vec![0.0; lanes],
            largest: vec![0.0; lanes],
        }
    }
}

/// Solves `a` d = `b` in place (d in `b`, the factors in `a`) for each of the `lanes`
/// systems of size `dim`; sets `singular[l]` where lane l met a zero pivot (and leaves it
/// as it was elsewhere).
#[inline(always)]
pub fn solve_lanes(
    a: &mut [f64],
    b: &mut [f64],
    dim: usize,
    lanes: usize,
    singular: &mut [bool],
    work: &mut LuWork,
) {
    assert_eq!(a.len(), dim * dim * lanes, "matrix entries × lanes");
    assert_eq!(b.len(), dim * lanes, "right-hand side × lanes");
    assert!(singular.len() == lanes && work.pivot.len() == lanes);
    let (pivot, largest) = (&mut work.pivot[..], &mut work.largest[..]);
    let at = |r: usize, c: usize| (r * dim + c) * lanes;
    for i in 0..dim {
        // icamax over rows i.. of column i: the first row of strictly largest |A_ri|.
        let column = &a[at(i, i)..][..lanes];
        for ((p, m), &v) in pivot.iter_mut().zip(largest.iter_mut()).zip(column) {
            *p = i as f64;
            *m = v.abs();
        }
        for r in i + 1..dim {
            let column = &a[at(r, i)..][..lanes];
            for ((p, m), &v) in pivot.iter_mut().zip(largest.iter_mut()).zip(column) {
                let v = v.abs();
                let larger = v > *m;
                *m = if larger { v } else { *m };
                *p = if larger { r as f64 } else { *p };
            }
        }
        // Rows i and p swap where p ≠ i (the whole row: L's columns, U's, and b), lane by
        // lane: a diagonally dominant Newton matrix rarely pivots.
        for (l, &p) in pivot.iter().enumerate() {
            let p = p as usize;
            if p != i {
                for c in 0..dim {
                    a.swap(at(i, c) + l, at(p, c) + l);
                }
                b.swap(i * lanes + l, p * lanes + l);
            }
        }
        // The pivot, its reciprocal, and the multipliers of column i.
        let (top, below) = a.split_at_mut(at(i + 1, 0));
        let pivot_row = &top[at(i, 0)..][..dim * lanes];
        let diagonal = &pivot_row[i * lanes..][..lanes];
        for (s, &d) in singular.iter_mut().zip(diagonal) {
            *s |= d == 0.0;
        }
        // largest ← 1 / A_ii (the buffer is free now).
        for (inverse, &d) in largest.iter_mut().zip(diagonal) {
            *inverse = 1.0 / d;
        }
        for r in i + 1..dim {
            let row = &mut below[(r - i - 1) * dim * lanes..][..dim * lanes];
            let (left, right) = row.split_at_mut((i + 1) * lanes);
            let multiplier = &mut left[i * lanes..];
            for (m, &inverse) in multiplier.iter_mut().zip(largest.iter()) {
                *m *= inverse;
            }
            for c in i + 1..dim {
                let target = &mut right[(c - i - 1) * lanes..][..lanes];
                let source = &pivot_row[c * lanes..][..lanes];
                for ((t, &u), &m) in target.iter_mut().zip(source).zip(multiplier.iter()) {
                    *t += -u * m;
                }
            }
        }
    }
    // L (unit diagonal): b_r ← (−b_i)·L_ri + b_r, i ascending.
    for i in 0..dim.saturating_sub(1) {
        let (top, below) = b.split_at_mut((i + 1) * lanes);
        let coefficient = &top[i * lanes..];
        for r in i + 1..dim {
            let target = &mut below[(r - i - 1) * lanes..][..lanes];
            let l_ri = &a[at(r, i)..][..lanes];
            for ((t, &c), &m) in target.iter_mut().zip(coefficient).zip(l_ri) {
                *t += -c * m;
            }
        }
    }
    // U: b_i ← b_i / U_ii, then b_r ← (−b_i)·U_ri + b_r for r < i, i descending.
    for i in (0..dim).rev() {
        let (top, rest) = b.split_at_mut(i * lanes);
        let coefficient = &mut rest[..lanes];
        let diagonal = &a[at(i, i)..][..lanes];
        for (c, &d) in coefficient.iter_mut().zip(diagonal) {
            *c /= d;
        }
        for r in 0..i {
            let target = &mut top[r * lanes..][..lanes];
            let u_ri = &a[at(r, i)..][..lanes];
            for ((t, &c), &u) in target.iter_mut().zip(coefficient.iter()).zip(u_ri) {
                *t += -c * u;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// Random systems (ties in |A_ri| and exact zeros included) solved lane by lane equal
    /// nalgebra's `lu().solve()` to the last bit; a singular lane is marked where nalgebra
    /// returns `None`, and only there.
    #[test]
    fn lanes_reproduce_nalgebra_bit_for_bit() {
        let mut rng = ChaCha8Rng::seed_from_u64(22);
        for dim in 1..=7 {
            let lanes = 13;
            let mut systems = Vec::new();
            for l in 0..lanes {
                let entry = |rng: &mut ChaCha8Rng| match rng.random_range(0..8) {
                    0 => 0.0,
                    1 => 1.0,
                    2 => -1.0,
                    _ => rng.random_range(-2.0..2.0),
                };
                let mut a: Vec<f64> = (0..dim * dim).map(|_| entry(&mut rng)).collect();
                if l == 3 {
                    // A zero column: singular.
                    for r in 0..dim {
                        a[r * dim] = 0.0;
                    }
                }
                let b: Vec<f64> = (0..dim).map(|_| entry(&mut rng)).collect();
                systems.push((a, b));
            }
            let mut a = vec![0.0; dim * dim * lanes];
            let mut b = vec![0.0; dim * lanes];
            for (l, (sa, sb)) in systems.iter().enumerate() {
                for e in 0..dim * dim {
                    a[e * lanes + l] = sa[e];
                }
                for r in 0..dim {
                    b[r * lanes + l] = sb[r];
                }
            }
            let mut singular = vec![false; lanes];
            solve_lanes(
                &mut a,
                &mut b,
                dim,
                lanes,
                &mut singular,
                &mut LuWork::new(lanes),
            );
            for (l, (sa, sb)) in systems.iter().enumerate() {
                let expected = DMatrix::from_row_slice(dim, dim, sa)
                    .lu()
                    .solve(&DVector::from_column_slice(sb));
                match expected {
                    None => assert!(
                        singular[l],
                        "dim {dim} lane {l}: nalgebra finds it singular"
                    ),
                    Some(d) => {
                        assert!(!singular[l], "dim {dim} lane {l}: marked singular");
                        for r in 0..dim {
                            assert!(
                                same(d[r], b[r * lanes + l]),
                                "dim {dim} lane {l} d[{r}]: {:e} vs nalgebra {:e}",
                                b[r * lanes + l],
                                d[r]
                            );
                        }
                    }
                }
            }
        }
    }
}
