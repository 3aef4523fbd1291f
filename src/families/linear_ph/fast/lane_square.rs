//! n × n matrices of a group's members side by side in lanes (column-major, `NN` = n²
//! entries, each a [`Lanes`] value): the arithmetic of the group draw (`group_draw`),
//! entry by entry as nalgebra performs it on one member, products included (its gemm's
//! order for n ≤ 5), so that each lane holds that member's bits.

use super::stage_lu::{add, mul, sub};
use crate::kernels::lanes::{LANES, Lanes, ZERO};

/// An n × n matrix in lanes, column-major (`NN` = n²).
pub(super) type Square<const NN: usize> = [Lanes; NN];

/// I.
#[inline(always)]
pub(super) fn identity<const N: usize, const NN: usize>() -> Square<NN> {
    let mut out = [ZERO; NN];
    for i in 0..N {
        out[i * N + i] = [1.0; LANES];
    }
    out
}

/// f of each lane of `v`.
#[inline(always)]
pub(super) fn lanewise(v: &Lanes, f: impl Fn(f64) -> f64) -> Lanes {
    let mut out = ZERO;
    for (out, &v) in out.iter_mut().zip(v) {
        *out = f(v);
    }
    out
}

/// A c, entry by entry.
#[inline(always)]
pub(super) fn scaled<const NN: usize>(a: &Square<NN>, c: f64) -> Square<NN> {
    let mut out = [ZERO; NN];
    for (out, v) in out.iter_mut().zip(a) {
        *out = lanewise(v, |v| v * c);
    }
    out
}

/// op(A_e, B_e) for every entry e.
#[inline(always)]
pub(super) fn entrywise<const NN: usize>(
    a: &Square<NN>,
    b: &Square<NN>,
    op: impl Fn(&Lanes, &Lanes) -> Lanes,
) -> Square<NN> {
    let mut out = [ZERO; NN];
    for ((out, a), b) in out.iter_mut().zip(a).zip(b) {
        *out = op(a, b);
    }
    out
}

/// Aᵀ.
#[inline(always)]
pub(super) fn transpose<const N: usize, const NN: usize>(a: &Square<NN>) -> Square<NN> {
    let mut out = [ZERO; NN];
    for r in 0..N {
        for c in 0..N {
            out[c * N + r] = a[r * N + c];
        }
    }
    out
}

/// A − Aᵀ.
#[inline(always)]
pub(super) fn minus_transpose<const N: usize, const NN: usize>(a: &Square<NN>) -> Square<NN> {
    entrywise(a, &transpose::<N, NN>(a), sub)
}

/// C Cᵀ (a product with the transpose, as the draw forms it).
#[inline(always)]
pub(super) fn gram<const N: usize, const NN: usize>(c: &Square<NN>) -> Square<NN> {
    product::<N, NN>(c, &transpose::<N, NN>(c))
}

/// A B as nalgebra's gemm forms it for n ≤ 5: P[r, c] = A[r, 0] B[0, c], then
/// P[r, c] ← A[r, k] B[k, c] + P[r, c] for k = 1 … n − 1.
#[inline(always)]
pub(super) fn product<const N: usize, const NN: usize>(
    a: &Square<NN>,
    b: &Square<NN>,
) -> Square<NN> {
    let mut out = [ZERO; NN];
    for c in 0..N {
        for r in 0..N {
            let mut acc = mul(&a[r], &b[c * N]);
            for k in 1..N {
                acc = add(&mul(&a[k * N + r], &b[c * N + k]), &acc);
            }
            out[c * N + r] = acc;
        }
    }
    out
}
