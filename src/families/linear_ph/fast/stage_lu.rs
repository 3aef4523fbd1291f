//! The stage equations of the stack set-up (`setup`) for a group of [`LANES`] members side
//! by side: each member's stage matrix factored in its own lane with nalgebra's pivoting
//! and operation order, and solved for one unit right-hand side at a time. A lane's
//! arithmetic never mixes with another's, so the bits are those of one member at a time.

use super::setup::MAX_STAGE_SIZE;
use crate::error::{Error, Result};
use crate::kernels::lanes::{LANES, Lanes};

/// The group's stage matrices factored in place, column-major, lane l member l's: U on and
/// above the diagonal, the unit-diagonal L_u below it (the first (n·s)² entries), and the
/// row each step i swapped with row i (i itself where it swapped none).
pub(super) struct StageFactors {
    pub(super) matrix: Vec<Lanes>,
    pub(super) pivots: Vec<[usize; LANES]>,
    /// Whether step i swapped rows in any lane (usually none: the stage matrix is close to
    /// I for small h), so that a solve looks at each lane's pivot only then.
    pub(super) swapped: Vec<bool>,
}

/// P (I − h (a^{(r)}_ij L[r, c])) = L_u U for every lane, step for step as
/// `nalgebra::LU::new` (and `CollocationStepper::rebuild`) factor it: the pivot is the
/// first largest |entry| of the column; rows are swapped, the column below the pivot
/// scaled by 1/pivot, and the rest updated by a_rk ← (−a_ik) l_r + a_rk. `l` holds L
/// column-major, one [`Lanes`] per entry. A singular matrix in any lane is an error.
#[inline(always)]
pub(super) fn factor_stage_matrix<const N: usize, const S: usize>(
    lu: &mut StageFactors,
    l: &[Lanes],
    stage_coef: &[f64],
    h: f64,
) -> Result<()> {
    let (n, s) = (N, S);
    let size = n * s;
    let a = &mut lu.matrix[..size * size];
    for col in 0..size {
        for row in 0..size {
            let (i, r) = (row / n, row % n);
            let (j, c) = (col / n, col % n);
            let identity = if row == col { 1.0 } else { 0.0 };
            let scale = h * stage_coef[(r * s + i) * s + j];
            let mut entry = [0.0; LANES];
            for (entry, l) in entry.iter_mut().zip(&l[c * n + r]) {
                *entry = identity - scale * l;
            }
            a[col * size + row] = entry;
        }
    }
    for i in 0..size {
        // The first largest |a_ri|, r ≥ i, in each lane.
        let mut pivot = [i; LANES];
        let mut largest = abs(&a[i * size + i]);
        for row in i + 1..size {
            let value = abs(&a[i * size + row]);
            for lane in 0..LANES {
                let larger = value[lane] > largest[lane];
                largest[lane] = if larger { value[lane] } else { largest[lane] };
                pivot[lane] = if larger { row } else { pivot[lane] };
            }
        }
        lu.pivots[i] = pivot;
        lu.swapped[i] = pivot.iter().any(|&row| row != i);
        // Rows i and the pivot's exchanged in every column, in the lanes whose pivot is
        // not on the diagonal (few: the stage matrix is close to I for small h).
        if lu.swapped[i] {
            for (lane, &row) in pivot.iter().enumerate() {
                if row != i {
                    for col in 0..size {
                        swap_in_lane(a, col * size + i, col * size + row, lane);
                    }
                }
            }
        }
        let diag = a[i * size + i];
        if diag.contains(&0.0) {
            // Every entry of the column from the diagonal down is zero (nalgebra skips the
            // column and leaves a zero on U's diagonal).
            return Err(singular(h));
        }
        let inv_diag = div(&[1.0; LANES], &diag);
        for row in i + 1..size {
            a[i * size + row] = mul(&a[i * size + row], &inv_diag);
        }
        for k in i + 1..size {
            let minus_pivot = neg(&a[k * size + i]);
            for row in i + 1..size {
                let update = mul(&minus_pivot, &a[i * size + row]);
                a[k * size + row] = add(&a[k * size + row], &update);
            }
        }
    }
    Ok(())
}

/// The error of a stage matrix without an inverse.
fn singular(h: f64) -> Error {
    Error::Numerical {
        context: "stage matrix".into(),
        problem: format!("I − h (A ⊗ L) is singular at h = {h}"),
    }
}

/// Exchanges entries `first` and `second` of `values` in lane `lane`.
#[inline(always)]
fn swap_in_lane(values: &mut [Lanes], first: usize, second: usize, lane: usize) {
    let value = values[first][lane];
    values[first][lane] = values[second][lane];
    values[second][lane] = value;
}

/// |v|, lane by lane.
#[inline(always)]
fn abs(v: &Lanes) -> Lanes {
    let mut out = [0.0; LANES];
    for (out, v) in out.iter_mut().zip(v) {
        *out = v.abs();
    }
    out
}

/// Solves P A z = rhs in place in every lane with the factors of [`factor_stage_matrix`],
/// as nalgebra's `solve_lower_triangular_with_diag_mut` (unit diagonal) and
/// `solve_upper_triangular_mut` do: z_r ← (−z_i) a_ri + z_r below, then z_i ← z_i / a_ii
/// and z_r ← (−z_i) a_ri + z_r above; for `columns` right-hand sides of n·s entries one
/// after the other in `rhs`, each step taken for every column before the next (the
/// columns' chains of divisions overlap; each column's operations are its own).
#[inline(always)]
pub(super) fn solve_factored_columns<const N: usize, const S: usize>(
    lu: &StageFactors,
    rhs: &mut [Lanes],
    columns: usize,
) {
    let size = N * S;
    let matrix = &lu.matrix[..size * size];
    let rhs = &mut rhs[..columns * size];
    for (i, pivot) in lu.pivots[..size].iter().enumerate() {
        if !lu.swapped[i] {
            continue;
        }
        for z in rhs.chunks_exact_mut(size) {
            for (lane, &row) in pivot.iter().enumerate() {
                if row != i {
                    swap_in_lane(z, i, row, lane);
                }
            }
        }
    }
    for i in 0..size.saturating_sub(1) {
        for z in rhs.chunks_exact_mut(size) {
            let mut coeff = [0.0; LANES];
            for (coeff, z) in coeff.iter_mut().zip(&z[i]) {
                *coeff = -(z / 1.0);
            }
            for row in i + 1..size {
                z[row] = add(&z[row], &mul(&coeff, &matrix[i * size + row]));
            }
        }
    }
    for i in (0..size).rev() {
        for z in rhs.chunks_exact_mut(size) {
            z[i] = div(&z[i], &matrix[i * size + i]);
            let minus_coeff = neg(&z[i]);
            for row in 0..i {
                z[row] = add(&z[row], &mul(&minus_coeff, &matrix[i * size + row]));
            }
        }
    }
}

/// u · v, lane by lane. (Explicit loops rather than `std::array::from_fn`, whose closure
/// LLVM leaves as a call per element in the set-up's target-feature build; values rather
/// than updates in place, which LLVM keeps scalar.)
#[inline(always)]
pub(super) fn mul(u: &Lanes, v: &Lanes) -> Lanes {
    let mut out = [0.0; LANES];
    for ((out, u), v) in out.iter_mut().zip(u).zip(v) {
        *out = u * v;
    }
    out
}

/// u / v, lane by lane.
#[inline(always)]
fn div(u: &Lanes, v: &Lanes) -> Lanes {
    let mut out = [0.0; LANES];
    for ((out, u), v) in out.iter_mut().zip(u).zip(v) {
        *out = u / v;
    }
    out
}

/// u + v, lane by lane.
#[inline(always)]
pub(super) fn add(u: &Lanes, v: &Lanes) -> Lanes {
    let mut out = [0.0; LANES];
    for ((out, u), v) in out.iter_mut().zip(u).zip(v) {
        *out = u + v;
    }
    out
}

/// u − v, lane by lane.
#[inline(always)]
pub(super) fn sub(u: &Lanes, v: &Lanes) -> Lanes {
    let mut out = [0.0; LANES];
    for ((out, u), v) in out.iter_mut().zip(u).zip(v) {
        *out = u - v;
    }
    out
}

/// −v, lane by lane.
#[inline(always)]
fn neg(v: &Lanes) -> Lanes {
    let mut out = [0.0; LANES];
    for (out, v) in out.iter_mut().zip(v) {
        *out = -v;
    }
    out
}

impl StageFactors {
    /// Room for stage matrices of `size` rows (at most [`MAX_STAGE_SIZE`]).
    pub(super) fn new(size: usize) -> Self {
        debug_assert!(size <= MAX_STAGE_SIZE);
        StageFactors {
            matrix: vec![[0.0; LANES]; size * size],
            pivots: vec![[0; LANES]; size],
            swapped: vec![false; size],
        }
    }
}
