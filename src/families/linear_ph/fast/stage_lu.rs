//! The stage equations of the stack set-up (`setup`): the stage matrix factored with
//! nalgebra's pivoting and operation order, and solved for a chunk of [`CHUNK`] unit
//! right-hand sides at once, column by column (independent columns, so the bits are those
//! of one column at a time).

use super::setup::{MAX_SETUP_STATES, MAX_STAGE_INPUTS, MAX_STAGE_SIZE};
use crate::error::{Error, Result};

/// The stage matrix factored in place, column-major: U on and above the diagonal, the
/// unit-diagonal L_u below it (the first (n·s)² entries), and the row swaps made, in order.
pub(super) struct StageFactors {
    pub(super) matrix: [f64; MAX_STAGE_SIZE * MAX_STAGE_SIZE],
    pub(super) swaps: [(usize, usize); MAX_STAGE_SIZE],
    pub(super) swap_count: usize,
}

/// P (I − h (a^{(r)}_ij L[r, c])) = L_u U, step for step as `nalgebra::LU::new` (and
/// `CollocationStepper::rebuild`) factor it: the pivot is the first largest |entry| of
/// the column; rows are swapped, the column below the pivot scaled by 1/pivot, and the
/// rest updated by a_rk ← (−a_ik) l_r + a_rk.
#[inline(always)]
pub(super) fn factor_stage_matrix<const N: usize, const S: usize>(
    lu: &mut StageFactors,
    l: &[f64],
    stage_coef: &[f64],
    h: f64,
) -> Result<()> {
    let (n, s) = (N, S);
    let size = n * s;
    lu.swap_count = 0;
    let a = &mut lu.matrix[..size * size];
    for col in 0..size {
        for row in 0..size {
            let (i, r) = (row / n, row % n);
            let (j, c) = (col / n, col % n);
            let identity = if row == col { 1.0 } else { 0.0 };
            a[col * size + row] = identity - h * stage_coef[(r * s + i) * s + j] * l[c * n + r];
        }
    }
    for i in 0..size {
        let mut pivot = i;
        let mut largest = a[i * size + i].abs();
        for row in i + 1..size {
            let value = a[i * size + row].abs();
            if value > largest {
                largest = value;
                pivot = row;
            }
        }
        let diag = a[i * size + pivot];
        if diag == 0.0 {
            continue;
        }
        if pivot != i {
            lu.swaps[lu.swap_count] = (i, pivot);
            lu.swap_count += 1;
            for c in 0..=i {
                a.swap(c * size + i, c * size + pivot);
            }
        }
        let inv_diag = 1.0 / diag;
        for row in i + 1..size {
            a[i * size + row] *= inv_diag;
        }
        for k in i + 1..size {
            if pivot != i {
                a.swap(k * size + i, k * size + pivot);
            }
            let pivot_entry = a[k * size + i];
            for row in i + 1..size {
                a[k * size + row] += -pivot_entry * a[i * size + row];
            }
        }
    }
    if (0..size).any(|i| a[i * size + i] == 0.0) {
        return Err(Error::Numerical {
            context: "stage matrix".into(),
            problem: format!("I − h (A ⊗ L) is singular at h = {h}"),
        });
    }
    Ok(())
}

/// Solves P A z = rhs in place for CHUNK right-hand sides with the factors of
/// [`factor_stage_matrix`], as nalgebra's `solve_lower_triangular_with_diag_mut` (unit
/// diagonal) and `solve_upper_triangular_mut` do for each: z_r ← (−z_i) a_ri + z_r below,
/// then z_i ← z_i / a_ii and z_r ← (−z_i) a_ri + z_r above.
#[inline(always)]
pub(super) fn solve_factored<const N: usize, const S: usize>(
    matrix: &[f64],
    swaps: &[(usize, usize)],
    rhs: &mut [Cols],
) {
    let size = N * S;
    let rhs = &mut rhs[..size];
    for &(i, pivot) in swaps {
        rhs.swap(i, pivot);
    }
    for i in 0..size.saturating_sub(1) {
        let mut coeff = [0.0; CHUNK];
        for (coeff, z) in coeff.iter_mut().zip(&rhs[i]) {
            *coeff = -(z / 1.0);
        }
        for row in i + 1..size {
            let a = matrix[i * size + row];
            for (z, coeff) in rhs[row].iter_mut().zip(&coeff) {
                *z += coeff * a;
            }
        }
    }
    for i in (0..size).rev() {
        let diag = matrix[i * size + i];
        for z in &mut rhs[i] {
            *z /= diag;
        }
        let coeff = rhs[i];
        for row in 0..i {
            let a = matrix[i * size + row];
            for (z, coeff) in rhs[row].iter_mut().zip(&coeff) {
                *z += -coeff * a;
            }
        }
    }
}

/// Columns of the stack set-up handled side by side (one AVX2 register of f64: the set-up
/// is built for AVX2, and the n + s·m ≤ 4 columns of small members fill one chunk).
pub(super) const CHUNK: usize = 4;

/// One value per column of a chunk.
pub(super) type Cols = [f64; CHUNK];

/// a · v, column by column. (Explicit loops rather than `std::array::from_fn`, whose
/// closure LLVM leaves as a call per element in the set-up's target-feature build.)
#[inline(always)]
pub(super) fn mul(a: f64, v: &Cols) -> Cols {
    let mut out = [0.0; CHUNK];
    for (out, v) in out.iter_mut().zip(v) {
        *out = a * v;
    }
    out
}

/// u + v, column by column.
#[inline(always)]
pub(super) fn add(u: &Cols, v: &Cols) -> Cols {
    let mut out = [0.0; CHUNK];
    for ((out, u), v) in out.iter_mut().zip(u).zip(v) {
        *out = u + v;
    }
    out
}

/// Σ_{t < count} term(t) in order, as `Iterator::sum` adds f64 (from −0, so that the
/// first term is kept as it is).
#[inline(always)]
pub(super) fn sum(count: usize, term: impl Fn(usize) -> Cols) -> Cols {
    let mut acc = [-0.0; CHUNK];
    for t in 0..count {
        acc = add(&acc, &term(t));
    }
    acc
}

/// The per-column values of one chunk of columns (kept between members, so that nothing
/// is allocated or cleared per member).
pub(super) struct ColumnWork {
    pub(super) x: [Cols; MAX_SETUP_STATES],
    pub(super) u: [Cols; MAX_STAGE_INPUTS],
    pub(super) drift0: [Cols; MAX_SETUP_STATES],
    pub(super) rhs: [Cols; MAX_STAGE_SIZE],
    pub(super) stage_states: [Cols; MAX_STAGE_SIZE],
    pub(super) stage_rates: [Cols; MAX_STAGE_SIZE],
    pub(super) efforts: [Cols; MAX_STAGE_SIZE],
    pub(super) weighted: [Cols; MAX_STAGE_SIZE],
}

impl StageFactors {
    /// Room for the largest stage matrix.
    pub(super) fn new() -> Self {
        StageFactors {
            matrix: [0.0; MAX_STAGE_SIZE * MAX_STAGE_SIZE],
            swaps: [(0, 0); MAX_STAGE_SIZE],
            swap_count: 0,
        }
    }
}

impl ColumnWork {
    /// Room for the largest member.
    pub(super) fn new() -> Self {
        ColumnWork {
            x: [[0.0; CHUNK]; MAX_SETUP_STATES],
            u: [[0.0; CHUNK]; MAX_STAGE_INPUTS],
            drift0: [[0.0; CHUNK]; MAX_SETUP_STATES],
            rhs: [[0.0; CHUNK]; MAX_STAGE_SIZE],
            stage_states: [[0.0; CHUNK]; MAX_STAGE_SIZE],
            stage_rates: [[0.0; CHUNK]; MAX_STAGE_SIZE],
            efforts: [[0.0; CHUNK]; MAX_STAGE_SIZE],
            weighted: [[0.0; CHUNK]; MAX_STAGE_SIZE],
        }
    }
}
