//! The structure checks of drawn members at the cost of the draw: the same decisions as
//! `model::validate` (J skew, R symmetric PSD, Q symmetric PD, each within the relative
//! tolerance τ = `STRUCTURE_TOLERANCE` of the scale s = max(1, max |entry|)), without an
//! eigen-decomposition where a cheaper test settles them.
//!
//! A draw keeps the structure by construction (skew A − Aᵀ, congruences S X Sᵀ, Gram
//! matrices C Cᵀ), so for small exactly symmetric matrices a Cholesky factorisation decides:
//!
//! ```text
//!   R ⪰ 0 (λ_min ≥ −τ s)  is certain when  R + ½ τ s I = L Lᵀ  exists in f64
//!   Q ≻ 0 (λ_min >  τ s)  is certain when  Q − 2 τ s I = L Lᵀ  exists in f64
//! ```
//!
//! (the Cholesky factorisation's backward error, ≤ (n + 1) n ε s, and the eigen-solver's,
//! O(n ε ‖A‖) ≤ O(n² ε s), stay far inside the margins ½ τ s and τ s for n ≤
//! [`MAX_CERTIFIED_STATES`]). Whatever the cheap test cannot settle — a factorisation that
//! fails, non-finite or huge entries, an asymmetric matrix, a larger n — goes to the full
//! check, which also words every error; so a member is refused exactly when the full checks
//! refuse it.

use nalgebra::{DMatrix, Dim, Matrix, RawStorage};

use crate::error::Result;
use crate::kernels::lanes::{LANES, Lanes};
use crate::model::validate::{STRUCTURE_TOLERANCE, check_pd, check_psd, check_skew};

/// Largest n the Cholesky test decides for.
pub const MAX_CERTIFIED_STATES: usize = 8;

/// Entries up to this size cannot overflow in the Cholesky test.
const MAX_CERTIFIED_ENTRY: f64 = 1e150;

/// A square matrix of any storage: the heap matrices of `LinearPh` and the stack ones of
/// the fast engine's draws (`nalgebra::SMatrix`).
type Square<D, S> = Matrix<f64, D, D, S>;

/// The matrix on the heap, for the full checks (only reached when a cheap test fails).
fn heap<D: Dim, S: RawStorage<f64, D, D>>(a: &Square<D, S>) -> DMatrix<f64> {
    DMatrix::from_fn(a.nrows(), a.ncols(), |i, k| a[(i, k)])
}

/// max(1, max |a_ij|), the scale of the tolerances (as `model::validate` takes it).
fn scale<D: Dim, S: RawStorage<f64, D, D>>(a: &Square<D, S>) -> f64 {
    a.iter().fold(1.0_f64, |acc, v| acc.max(v.abs()))
}

/// Whether `a` is small enough, finite, moderate and exactly symmetric: the matrices the
/// Cholesky test decides for.
fn certifiable<D: Dim, S: RawStorage<f64, D, D>>(a: &Square<D, S>) -> bool {
    let n = a.nrows();
    n <= MAX_CERTIFIED_STATES
        && a.iter().all(|v| v.abs() <= MAX_CERTIFIED_ENTRY)
        && (0..n).all(|i| (0..i).all(|k| a[(i, k)] == a[(k, i)]))
}

/// Whether A + `shift` I = L Lᵀ (A symmetric, n ≤ [`MAX_CERTIFIED_STATES`]) factors in f64
/// with every pivot l_jj² = a_jj + shift − Σ_{k<j} l_jk² positive.
fn cholesky_succeeds<D: Dim, S: RawStorage<f64, D, D>>(a: &Square<D, S>, shift: f64) -> bool {
    const N: usize = MAX_CERTIFIED_STATES;
    let n = a.nrows();
    let mut l = [0.0_f64; N * N];
    for j in 0..n {
        let pivot = a[(j, j)] + shift - (0..j).map(|k| l[j * N + k] * l[j * N + k]).sum::<f64>();
        if pivot.is_nan() || pivot <= 0.0 {
            return false;
        }
        let diagonal = pivot.sqrt();
        l[j * N + j] = diagonal;
        for i in j + 1..n {
            let dot: f64 = (0..j).map(|k| l[i * N + k] * l[j * N + k]).sum();
            l[i * N + j] = (a[(i, j)] - dot) / diagonal;
        }
    }
    true
}

/// J = −Jᵀ within tolerance, as [`check_skew`] decides it.
pub fn check_drawn_skew<D: Dim, S: RawStorage<f64, D, D>>(
    field: impl FnOnce() -> String,
    j: &Square<D, S>,
) -> Result<()> {
    let n = j.nrows();
    if j.iter().all(|v| v.is_finite()) {
        let defect = (0..n)
            .flat_map(|i| (0..n).map(move |k| (i, k)))
            .fold(0.0_f64, |acc, (i, k)| {
                acc.max((j[(i, k)] + j[(k, i)]).abs())
            });
        if defect <= STRUCTURE_TOLERANCE * scale(j) {
            return Ok(());
        }
    }
    check_skew(&field(), &heap(j))
}

/// R symmetric positive semidefinite within tolerance, as [`check_psd`] decides it.
pub fn check_drawn_psd<D: Dim, S: RawStorage<f64, D, D>>(
    field: impl FnOnce() -> String,
    r: &Square<D, S>,
) -> Result<()> {
    if certifiable(r) && cholesky_succeeds(r, 0.5 * STRUCTURE_TOLERANCE * scale(r)) {
        return Ok(());
    }
    check_psd(&field(), &heap(r))
}

/// Q symmetric positive definite within tolerance, as [`check_pd`] decides it.
pub fn check_drawn_pd<D: Dim, S: RawStorage<f64, D, D>>(
    field: impl FnOnce() -> String,
    q: &Square<D, S>,
) -> Result<()> {
    if certifiable(q) && cholesky_succeeds(q, -2.0 * STRUCTURE_TOLERANCE * scale(q)) {
        return Ok(());
    }
    check_pd(&field(), &heap(q))
}

/// The lanes of a group of members side by side (n = `N` ≤ [`MAX_CERTIFIED_STATES`],
/// `NN` = n², column-major, lane l member l's) in which the cheap tests of
/// [`check_drawn_skew`], [`check_drawn_psd`] and [`check_drawn_pd`] all pass, with the same
/// operations as those tests (τ = `STRUCTURE_TOLERANCE`, s(A) = max(1, max |a_ij|)):
///
/// ```text
///   J finite and max |J_ik + J_ki| ≤ τ s(J)
///   R, Q exactly symmetric with |entries| ≤ 10¹⁵⁰
///   R + ½ τ s(R) I = L Lᵀ and Q − 2 τ s(Q) I = L Lᵀ with every pivot > 0
/// ```
///
/// For those lanes the three checks pass. A lane not certified goes to the member's own
/// checks, which decide and word the error.
#[inline(always)]
pub fn certified_lanes<const N: usize, const NN: usize>(
    j: &[Lanes],
    r: &[Lanes],
    q: &[Lanes],
) -> [bool; LANES] {
    debug_assert!(N <= MAX_CERTIFIED_STATES && NN == N * N);
    let (j, r, q) = (&j[..NN], &r[..NN], &q[..NN]);
    let skew: [bool; LANES] = {
        let mut defect = [0.0_f64; LANES];
        let mut finite = [true; LANES];
        for i in 0..N {
            for k in 0..N {
                let (ik, ki) = (&j[k * N + i], &j[i * N + k]);
                for l in 0..LANES {
                    defect[l] = defect[l].max((ik[l] + ki[l]).abs());
                    finite[l] &= ik[l].is_finite();
                }
            }
        }
        let scale = lanes_scale(j);
        let mut skew = [false; LANES];
        for l in 0..LANES {
            skew[l] = finite[l] && defect[l] <= STRUCTURE_TOLERANCE * scale[l];
        }
        skew
    };
    let psd = certified_cholesky::<N, NN>(r, 0.5 * STRUCTURE_TOLERANCE);
    let pd = certified_cholesky::<N, NN>(q, -2.0 * STRUCTURE_TOLERANCE);
    let mut certified = [false; LANES];
    for l in 0..LANES {
        certified[l] = skew[l] && psd[l] && pd[l];
    }
    certified
}

/// max(1, max |a_ij|) of each lane, as [`scale`] takes it.
#[inline(always)]
fn lanes_scale(a: &[Lanes]) -> Lanes {
    let mut scale = [1.0_f64; LANES];
    for v in a {
        for l in 0..LANES {
            scale[l] = scale[l].max(v[l].abs());
        }
    }
    scale
}

/// The lanes in which `a` is [`certifiable`] and A + `tolerance` · scale(A) I factors as
/// [`cholesky_succeeds`] factors it (the same operations in each lane; a sum of no terms
/// is −0, as `Iterator::sum` starts).
#[inline(always)]
fn certified_cholesky<const N: usize, const NN: usize>(
    a: &[Lanes],
    tolerance: f64,
) -> [bool; LANES] {
    let scale = lanes_scale(a);
    let mut ok = [true; LANES];
    for i in 0..N {
        for k in 0..N {
            let (ik, ki) = (&a[k * N + i], &a[i * N + k]);
            for l in 0..LANES {
                ok[l] &= ik[l].abs() <= MAX_CERTIFIED_ENTRY && (k >= i || ik[l] == ki[l]);
            }
        }
    }
    // L row by row as `cholesky_succeeds` holds it: l[i·N + k]. Each operation runs over
    // the lanes (which vectorises); a lane that fails goes on with meaningless values.
    let mut factor = [[0.0_f64; LANES]; NN];
    let mut pivot = [0.0_f64; LANES];
    for j in 0..N {
        let mut squares = [-0.0_f64; LANES];
        for k in 0..j {
            let l_jk = factor[j * N + k];
            for l in 0..LANES {
                squares[l] += l_jk[l] * l_jk[l];
            }
        }
        let a_jj = &a[j * N + j];
        for l in 0..LANES {
            pivot[l] = a_jj[l] + tolerance * scale[l] - squares[l];
        }
        for l in 0..LANES {
            ok[l] &= pivot[l] > 0.0;
        }
        let mut diagonal = [0.0_f64; LANES];
        for l in 0..LANES {
            diagonal[l] = pivot[l].sqrt();
        }
        factor[j * N + j] = diagonal;
        for i in j + 1..N {
            let mut dot = [-0.0_f64; LANES];
            for k in 0..j {
                let (l_ik, l_jk) = (factor[i * N + k], factor[j * N + k]);
                for l in 0..LANES {
                    dot[l] += l_ik[l] * l_jk[l];
                }
            }
            let a_ij = &a[j * N + i];
            for l in 0..LANES {
                factor[i * N + j][l] = (a_ij[l] - dot[l]) / diagonal[l];
            }
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::validate::smallest_eigenvalue;
    use nalgebra::dmatrix;
    use rand::{Rng, SeedableRng};

    /// The cheap checks decide as the full ones on matrices spread across the boundary:
    /// Gram matrices C Cᵀ shifted by multiples of τ s around the PSD and PD thresholds,
    /// including rank-deficient ones (λ_min = 0 in exact arithmetic).
    #[test]
    fn decide_as_the_eigen_checks() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(27);
        let mut decided = [0usize; 2];
        for case in 0..4000 {
            let n = 1 + case % MAX_CERTIFIED_STATES;
            let rank = rng.random_range(0..=n);
            let c = DMatrix::from_fn(n, rank, |_, _| rng.random_range(-1.0..1.0));
            let gram = &c * c.transpose();
            let gram = (&gram + gram.transpose()) * 0.5;
            let s = scale(&gram);
            let shift = rng.random_range(-4.0..4.0) * STRUCTURE_TOLERANCE * s;
            let a = gram + DMatrix::identity(n, n) * shift;
            let field = || "A".to_string();
            let psd = check_drawn_psd(field, &a).is_ok();
            let pd = check_drawn_pd(field, &a).is_ok();
            assert_eq!(psd, check_psd("A", &a).is_ok(), "PSD of {a} ({case})");
            assert_eq!(pd, check_pd("A", &a).is_ok(), "PD of {a} ({case})");
            let s = scale(&a);
            decided[0] += usize::from(
                cholesky_succeeds(&a, 0.5 * STRUCTURE_TOLERANCE * s)
                    && smallest_eigenvalue(&a) < STRUCTURE_TOLERANCE * s,
            );
            decided[1] += usize::from(!psd);
        }
        // Both sides of the boundary occur: near-singular matrices the cheap test settles,
        // and matrices the checks refuse.
        assert!(decided[0] > 100 && decided[1] > 100, "{decided:?}");
    }

    /// The lanes certified are those whose matrices pass the cheap tests one by one, on
    /// the same boundary cases (Gram matrices shifted around the thresholds, J skew or
    /// nearly so, non-finite and huge entries, asymmetric ones), for n ≤ 5.
    #[test]
    fn lanes_decide_as_the_cheap_tests() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(29);
        let mut certified = [0usize; 2];
        for case in 0..600 {
            match 1 + case % 5 {
                1 => lanes_case::<1, 1>(&mut rng, &mut certified),
                2 => lanes_case::<2, 4>(&mut rng, &mut certified),
                3 => lanes_case::<3, 9>(&mut rng, &mut certified),
                4 => lanes_case::<4, 16>(&mut rng, &mut certified),
                _ => lanes_case::<5, 25>(&mut rng, &mut certified),
            }
        }
        assert!(certified[0] > 500 && certified[1] > 500, "{certified:?}");
    }

    /// One group of [`LANES`] random members: each lane's certificate against the scalar
    /// cheap tests; counts lanes certified and not.
    fn lanes_case<const N: usize, const NN: usize>(rng: &mut impl Rng, certified: &mut [usize; 2]) {
        let near_boundary = |rng: &mut dyn rand::RngCore| {
            let rank = rng.random_range(0..=N);
            let c = DMatrix::from_fn(N, rank, |_, _| rng.random_range(-1.0..1.0));
            let gram = &c * c.transpose();
            let gram = (&gram + gram.transpose()) * 0.5;
            let shift = rng.random_range(-4.0..4.0) * STRUCTURE_TOLERANCE * scale(&gram);
            let mut a = gram + DMatrix::identity(N, N) * shift;
            match rng.random_range(0..12) {
                0 => a[(N - 1, 0)] = f64::NAN,
                1 => a[(0, 0)] = 2e150,
                2 if N > 1 => a[(1, 0)] += 1e-9,
                _ => {}
            }
            a
        };
        let (mut js, mut rs, mut qs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..LANES {
            let a = DMatrix::from_fn(N, N, |_, _| rng.random_range(-1.0..1.0));
            let mut j = (&a - a.transpose()) * rng.random_range(0.1..1e3);
            match rng.random_range(0..12) {
                0 => j[(0, N - 1)] += 1e-6,
                1 => j[(0, 0)] = f64::INFINITY,
                _ => {}
            }
            js.push(j);
            rs.push(near_boundary(rng));
            let q = near_boundary(rng);
            qs.push(if rng.random_bool(0.5) {
                q.clone() + DMatrix::identity(N, N)
            } else {
                q
            });
        }
        let lanes = |ms: &[DMatrix<f64>]| -> Vec<Lanes> {
            (0..NN)
                .map(|e| std::array::from_fn(|l| ms[l].as_slice()[e]))
                .collect()
        };
        let got = certified_lanes::<N, NN>(&lanes(&js), &lanes(&rs), &lanes(&qs));
        for l in 0..LANES {
            let (j, r, q) = (&js[l], &rs[l], &qs[l]);
            let skew = j.iter().all(|v| v.is_finite())
                && (0..N)
                    .flat_map(|i| (0..N).map(move |k| (i, k)))
                    .all(|(i, k)| (j[(i, k)] + j[(k, i)]).abs() <= STRUCTURE_TOLERANCE * scale(j));
            let psd = certifiable(r) && cholesky_succeeds(r, 0.5 * STRUCTURE_TOLERANCE * scale(r));
            let pd = certifiable(q) && cholesky_succeeds(q, -2.0 * STRUCTURE_TOLERANCE * scale(q));
            assert_eq!(got[l], skew && psd && pd, "lane {l}: J {j} R {r} Q {q}");
            certified[usize::from(got[l])] += 1;
        }
    }

    #[test]
    fn refusals_keep_the_full_checks_words() {
        let pumping = dmatrix![0.0, 0.0; 0.0, -0.1];
        let refused = check_drawn_psd(|| "ensemble member 3.R".into(), &pumping).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "ensemble member 3.R: is not positive semidefinite: smallest eigenvalue -1.000e-1"
        );
        let singular = dmatrix![1.0, 1.0; 1.0, 1.0];
        assert!(check_drawn_psd(|| "R".into(), &singular).is_ok());
        assert!(check_drawn_pd(|| "Q".into(), &singular).is_err());
        let skewed = dmatrix![0.0, 1.0; -1.0 + 1e-6, 0.0];
        assert!(check_drawn_skew(|| "J".into(), &skewed).is_err());
        assert!(check_drawn_skew(|| "J".into(), &dmatrix![0.0, 2.0; -2.0, 0.0]).is_ok());
    }
}
