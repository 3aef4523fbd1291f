//! atan x from `+ − × ÷` and comparisons, with its WGSL twin `expr_atan`.
//!
//! The algorithm is fdlibm's / FreeBSD msun's s_atan.c, restated without access to the
//! bits of an f64 (as `crate::kernels::math` restates sin, cos, exp and log): with a = |x|,
//!
//! | a in            | reduction                                  |
//! |-----------------|--------------------------------------------|
//! | [0, 7/16)       | atan a (no reduction)                      |
//! | [7/16, 11/16)   | atan(½) + atan((2a − 1)/(2 + a))           |
//! | [11/16, 19/16)  | atan(1) + atan((a − 1)/(a + 1))            |
//! | [19/16, 39/16)  | atan(3/2) + atan((a − 3/2)/(1 + 3a/2))     |
//! | [39/16, ∞]      | π/2 + atan(−1/a)                           |
//!
//! (the last is the reflection atan a = π/2 − atan(1/a), the middle ones the addition
//! theorem around tan c for c = atan ½, π/4, atan 3/2), so the reduced argument t has
//! |t| ≤ 7/16; there atan t = t − t·(s₁ + s₂) with s₁ + s₂ = Σ aTᵢ t^{2i+2}, msun's
//! degree-22 minimax polynomial split into even and odd powers of t⁴. The constant atan c
//! is carried as hi + lo (lo below half an ulp of hi) and added as
//! hi − ((t·(s₁ + s₂) − lo) − t). The sign is restored last (atan is odd; the operations
//! are symmetric under negation), and |x| < 2⁻²⁷ returns x itself, which keeps −0.
//!
//! Measured against Rust's `f64::atan` (the platform libm): at most 1 ulp over 10⁶ points
//! per run spread over all magnitudes, and on the interval ends (test
//! `atan_against_std`). atan(±∞) = ±π/2 rounded, atan(NaN) = NaN.

use std::fmt::Write;

/// atan c, high parts, for c = ½, 1, 3/2, ∞ (msun `atanhi`).
const ATAN_HI: [f64; 4] = [
    f64::from_bits(0x3FDDAC67_0561BB4F),
    f64::from_bits(0x3FE921FB_54442D18),
    f64::from_bits(0x3FEF730B_D281F69B),
    f64::from_bits(0x3FF921FB_54442D18),
];

/// atan c − hi, for the same c (msun `atanlo`).
const ATAN_LO: [f64; 4] = [
    f64::from_bits(0x3C7A2B7F_222F65E2),
    f64::from_bits(0x3C81A626_33145C07),
    f64::from_bits(0x3C700788_7AF0CBBD),
    f64::from_bits(0x3C91A626_33145C07),
];

/// atan t ≈ t − t·Σ aTᵢ t^{2i+2} on |t| ≤ 7/16 (msun `aT`, a Remez fit, |error| < 2⁻⁷¹·t).
const ATAN_T: [f64; 11] = [
    f64::from_bits(0x3FD55555_5555550D),
    f64::from_bits(0xBFC99999_9998EBC4),
    f64::from_bits(0x3FC24924_920083FF),
    f64::from_bits(0xBFBC71C6_FE231671),
    f64::from_bits(0x3FB745CD_C54C206E),
    f64::from_bits(0xBFB3B0F2_AF749A6D),
    f64::from_bits(0x3FB10D66_A0D03D51),
    f64::from_bits(0xBFADDE2D_52DEFD9A),
    f64::from_bits(0x3FA97B4B_24760DEB),
    f64::from_bits(0xBFA2B444_2C6A6C2F),
    f64::from_bits(0x3F90AD3A_E322DA11),
];

/// 2⁻²⁷: below it atan x rounds to x.
const ATAN_TINY: f64 = 1.0 / 134_217_728.0;

/// atan x, the twin of WGSL `expr_atan` (see the module documentation).
pub fn atan(x: f64) -> f64 {
    let a = x.abs();
    // The reduced argument t and the constant atan c = hi + lo it is measured from.
    let (t, id) = if a < 0.4375 {
        (a, None)
    } else if a < 0.6875 {
        ((2.0 * a - 1.0) / (2.0 + a), Some(0))
    } else if a < 1.1875 {
        ((a - 1.0) / (a + 1.0), Some(1))
    } else if a < 2.4375 {
        ((a - 1.5) / (1.0 + 1.5 * a), Some(2))
    } else {
        (-1.0 / a, Some(3))
    };
    let z = t * t;
    let w = z * z;
    let c = &ATAN_T;
    let s1 = z * (c[0] + w * (c[2] + w * (c[4] + w * (c[6] + w * (c[8] + w * c[10])))));
    let s2 = w * (c[1] + w * (c[3] + w * (c[5] + w * (c[7] + w * c[9]))));
    let r = match id {
        None => t - t * (s1 + s2),
        Some(i) => ATAN_HI[i] - ((t * (s1 + s2) - ATAN_LO[i]) - t),
    };
    let r = if x < 0.0 { -r } else { r };
    if a < ATAN_TINY { x } else { r }
}

/// The WGSL twin `expr_atan` with its constants written from the Rust ones.
pub(super) fn wgsl() -> String {
    let mut out = String::new();
    for (i, (hi, lo)) in ATAN_HI.iter().zip(&ATAN_LO).enumerate() {
        writeln!(out, "const EXPR_ATAN_HI{i}: real = {hi:e};").unwrap();
        writeln!(out, "const EXPR_ATAN_LO{i}: real = {lo:e};").unwrap();
    }
    for (i, c) in ATAN_T.iter().enumerate() {
        writeln!(out, "const EXPR_ATAN_T{i}: real = {c:e};").unwrap();
    }
    writeln!(out, "const EXPR_ATAN_TINY: real = {ATAN_TINY:e};").unwrap();
    let c = |i: usize| format!("EXPR_ATAN_T{i}");
    let s1 = super::functions::wgsl_horner("w", &[0, 2, 4, 6, 8, 10].map(c));
    let s2 = super::functions::wgsl_horner("w", &[1, 3, 5, 7, 9].map(c));
    write!(
        out,
        r"
fn expr_atan(x: real) -> real {{
    let a = abs(x);
    var t: real;
    var hi: real = 0.0;
    var lo: real = 0.0;
    var reduced = true;
    if a < 0.4375 {{
        t = a;
        reduced = false;
    }} else if a < 0.6875 {{
        t = (2.0 * a - 1.0) / (2.0 + a);
        hi = EXPR_ATAN_HI0;
        lo = EXPR_ATAN_LO0;
    }} else if a < 1.1875 {{
        t = (a - 1.0) / (a + 1.0);
        hi = EXPR_ATAN_HI1;
        lo = EXPR_ATAN_LO1;
    }} else if a < 2.4375 {{
        t = (a - 1.5) / (1.0 + 1.5 * a);
        hi = EXPR_ATAN_HI2;
        lo = EXPR_ATAN_LO2;
    }} else {{
        t = -1.0 / a;
        hi = EXPR_ATAN_HI3;
        lo = EXPR_ATAN_LO3;
    }}
    let z = t * t;
    let w = z * z;
    let s1 = z * ({s1});
    let s2 = w * ({s2});
    var r: real;
    if reduced {{
        r = hi - ((t * (s1 + s2) - lo) - t);
    }} else {{
        r = t - t * (s1 + s2);
    }}
    r = select(r, -r, x < 0.0);
    return select(r, x, a < EXPR_ATAN_TINY);
}}
"
    )
    .unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::testing::{fresh_rng, ulps};
    use rand::Rng;

    /// The constants are the values they name: hi + lo is atan c to about 2⁻¹⁰⁷, so hi is
    /// atan c correctly rounded, which the platform's atan also returns.
    #[test]
    fn table_constants_are_the_arctangents_they_name() {
        for (i, c) in [0.5f64, 1.0, 1.5, f64::INFINITY].into_iter().enumerate() {
            assert_eq!(ATAN_HI[i], c.atan(), "atan({c}) hi");
            assert!(ATAN_LO[i].abs() <= 0.5 * (ATAN_HI[i] * f64::EPSILON));
        }
        assert_eq!(ATAN_HI[3], std::f64::consts::FRAC_PI_2);
        assert_eq!(ATAN_HI[1], std::f64::consts::FRAC_PI_4);
    }

    /// Measured: at most 1 ulp from `f64::atan` (the platform libm) over 10⁶ points per run
    /// (half uniform in [−4, 4], half log-uniform in magnitude over [1e−310, 1e310], both
    /// signs) and at the interval ends and their neighbours; 0 ulps at ±0, ±∞, tiny
    /// arguments and subnormals.
    #[test]
    fn atan_against_std() {
        let mut rng = fresh_rng("atan_against_std");
        let mut worst = (0u64, 0.0f64);
        let mut check = |x: f64| {
            let d = ulps(atan(x), x.atan());
            if d > worst.0 {
                worst = (d, x);
            }
        };
        for i in 0..1_000_000 {
            let x = if i % 2 == 0 {
                rng.random_range(-4.0..4.0)
            } else {
                let m = rng.random_range(-310.0f64..310.0) * std::f64::consts::LN_10;
                let m = m.exp();
                if rng.random() { m } else { -m }
            };
            check(x);
        }
        for edge in [0.4375, 0.6875, 1.1875, 2.4375, ATAN_TINY, 1.0, 0.5, 1.5] {
            for x in [edge, edge.next_down(), edge.next_up()] {
                check(x);
                check(-x);
            }
        }
        eprintln!("atan: max {} ulps at x = {:e}", worst.0, worst.1);
        assert!(
            worst.0 <= 1,
            "atan({:e}) = {:e}, std {:e}: {} ulps",
            worst.1,
            atan(worst.1),
            worst.1.atan(),
            worst.0
        );
    }

    #[test]
    fn special_values() {
        assert_eq!(atan(0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(atan(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(atan(5e-324), 5e-324);
        assert_eq!(atan(f64::INFINITY), std::f64::consts::FRAC_PI_2);
        assert_eq!(atan(f64::NEG_INFINITY), -std::f64::consts::FRAC_PI_2);
        assert_eq!(atan(1e300), std::f64::consts::FRAC_PI_2);
        assert_eq!(atan(1.0), std::f64::consts::FRAC_PI_4);
        assert!(atan(f64::NAN).is_nan());
    }
}
