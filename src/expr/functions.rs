//! The functions an expression may call, and their f64 implementations with WGSL twins.
//!
//! `sin`, `cos`, `exp` and `log` are the crate's own [`math_sin`], [`math_cos`],
//! [`math_exp`] and [`math_log`] (twins of `shaders/shared/math_f64.wgsl`); `sqrt` and
//! `abs` are IEEE 754 operations (correctly rounded, exact); `atan` is
//! [`atan`](super::atan::atan); the rest are built here from those with `+ − × ÷`,
//! comparisons and `sqrt` only, so that each has a WGSL twin with the same operations in
//! the same order ([`helpers`](super::wgsl::helpers)):
//!
//! - tan x = sin x / cos x;
//! - sinh x = x + x·(x²·P(x²)) for |x| < 1, with P the Taylor series of (sinh x − x)/x³
//!   to the x¹⁸ term (1/3!, 1/5!, …, 1/21!; truncation error < 4·10⁻²³ relative), else
//!   ±(eᵃ − e⁻ᵃ)/2 with a = |x| ≤ 709, and ±e^{a−8}·(e⁸/2) beyond (where eᵃ
//!   overflows but sinh does not yet; a − 8 is exact there);
//! - cosh x = 1 + x²·C(x²) for |x| < 1, C the Taylor series of (cosh x − 1)/x² to the
//!   x¹⁸ term (1/2!, …, 1/20!), else (eᵃ + e⁻ᵃ)/2 for a ≤ 709, e^{a−8}·(e⁸/2) beyond;
//! - tanh x = x + x·(x²·D(x²))/(1 + x²·C(x²)) for |x| < 1, where x³·D(x²) =
//!   sinh x − x·cosh x is the difference of the two Taylor series taken term by term
//!   (D's coefficients are −2k/(2k+1)!), so nothing cancels near 0; else
//!   ±(1 − 2/(e^{2a} + 1)), which is ±1 once e^{2a} ≫ 2/ε;
//! - xⁿ for an integer n by binary powering (square-and-multiply from the low bit, 1/xⁿ
//!   for n < 0), the same multiplications in the same order on every backend;
//! - aᵇ for a non-integer exponent as exp(b·log a): NaN for a < 0, 0 for a = 0 and b > 0.
//!
//! Measured accuracy against Rust's `std` (the platform libm), in ulps (test
//! `tan_sinh_cosh_tanh_against_std`, 2·10⁵ points per function and run): tan, sinh, cosh
//! and tanh are each within 2 ulps.

use std::fmt::Write;

use crate::kernels::math::{math_cos, math_exp, math_log, math_sin};

/// A function of one argument that an expression may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Func {
    Sin,
    Cos,
    Tan,
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sinh,
    Cosh,
    Atan,
    Abs,
}

impl Func {
    /// Every function, in the order the parser's error messages list them.
    pub const ALL: [Func; 11] = [
        Func::Sin,
        Func::Cos,
        Func::Tan,
        Func::Exp,
        Func::Log,
        Func::Sqrt,
        Func::Tanh,
        Func::Sinh,
        Func::Cosh,
        Func::Atan,
        Func::Abs,
    ];

    /// The name in expressions: `sin`, `cos`, …, `abs`.
    pub fn name(self) -> &'static str {
        match self {
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tan => "tan",
            Func::Exp => "exp",
            Func::Log => "log",
            Func::Sqrt => "sqrt",
            Func::Tanh => "tanh",
            Func::Sinh => "sinh",
            Func::Cosh => "cosh",
            Func::Atan => "atan",
            Func::Abs => "abs",
        }
    }

    /// The function called `name` in expressions, if any.
    pub fn from_name(name: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The WGSL function that computes it: `math_*` of the engine's math library, a WGSL
    /// builtin that IEEE 754 defines exactly (`sqrt`, `abs`), or an `expr_*` helper of
    /// [`wgsl::helpers`](super::wgsl::helpers).
    pub fn wgsl_name(self) -> &'static str {
        match self {
            Func::Sin => "math_sin",
            Func::Cos => "math_cos",
            Func::Tan => "expr_tan",
            Func::Exp => "math_exp",
            Func::Log => "math_log",
            Func::Sqrt => "sqrt",
            Func::Tanh => "expr_tanh",
            Func::Sinh => "expr_sinh",
            Func::Cosh => "expr_cosh",
            Func::Atan => "expr_atan",
            Func::Abs => "abs",
        }
    }

    /// The function at `x` in f64, as every backend computes it (see the module
    /// documentation).
    pub fn eval(self, x: f64) -> f64 {
        match self {
            Func::Sin => math_sin(x),
            Func::Cos => math_cos(x),
            Func::Tan => tan(x),
            Func::Exp => math_exp(x),
            Func::Log => math_log(x),
            Func::Sqrt => x.sqrt(),
            Func::Tanh => tanh(x),
            Func::Sinh => sinh(x),
            Func::Cosh => cosh(x),
            Func::Atan => super::atan::atan(x),
            Func::Abs => x.abs(),
        }
    }
}

/// The Taylor coefficients 1/3!, 1/5!, …, 1/21! of (sinh x − x)/x³ in powers of x².
const SINH_TAYLOR: [f64; 10] = [
    1.0 / 6.0,
    1.0 / 120.0,
    1.0 / 5040.0,
    1.0 / 362880.0,
    1.0 / 39916800.0,
    1.0 / 6227020800.0,
    1.0 / 1307674368000.0,
    1.0 / 355687428096000.0,
    1.0 / 121645100408832000.0,
    1.0 / 51090942171709440000.0,
];

/// The Taylor coefficients 1/2!, 1/4!, …, 1/20! of (cosh x − 1)/x² in powers of x².
const COSH_TAYLOR: [f64; 10] = [
    1.0 / 2.0,
    1.0 / 24.0,
    1.0 / 720.0,
    1.0 / 40320.0,
    1.0 / 3628800.0,
    1.0 / 479001600.0,
    1.0 / 87178291200.0,
    1.0 / 20922789888000.0,
    1.0 / 6402373705728000.0,
    1.0 / 2432902008176640000.0,
];

/// The Taylor coefficients −2k/(2k+1)!, k = 1, …, 10, of (sinh x − x·cosh x)/x³ in
/// powers of x²: the difference of the two series above, term by term, without
/// cancellation.
const TANH_TAYLOR: [f64; 10] = [
    -2.0 / 6.0,
    -4.0 / 120.0,
    -6.0 / 5040.0,
    -8.0 / 362880.0,
    -10.0 / 39916800.0,
    -12.0 / 6227020800.0,
    -14.0 / 1307674368000.0,
    -16.0 / 355687428096000.0,
    -18.0 / 121645100408832000.0,
    -20.0 / 51090942171709440000.0,
];

/// Below this |x| sinh, cosh and tanh use their Taylor polynomials.
const SINH_SMALL: f64 = 1.0;

/// 2⁻²⁷: below it tanh x rounds to x.
const TANH_TINY: f64 = 1.0 / 134_217_728.0;

/// Up to this |x| eˣ is finite (ln f64::MAX ≈ 709.78); beyond, sinh and cosh are
/// e^{|x| − 8}·(e⁸/2).
const EXP_SAFE: f64 = 709.0;

/// e⁸/2 = 1490.478993520864137…, correctly rounded; |x| − 8 is exact for |x| ∈ [512, 1024).
const EXP8_HALF: f64 = f64::from_bits(0x409749EA_7D470C6E);

/// tan x = sin x / cos x, the twin of WGSL `expr_tan`.
pub fn tan(x: f64) -> f64 {
    math_sin(x) / math_cos(x)
}

/// c₀ + z·(c₁ + z·(… + z·c_last)), Horner from the highest coefficient.
fn horner(z: f64, coefficients: &[f64]) -> f64 {
    let (&last, rest) = coefficients
        .split_last()
        .expect("a polynomial has coefficients");
    rest.iter().rev().fold(last, |p, &c| c + z * p)
}

/// sinh x for |x| < 1: x + x·(x²·S(x²)). Keeps −0.
fn sinh_small(x: f64) -> f64 {
    let z = x * x;
    x + x * (z * horner(z, &SINH_TAYLOR))
}

/// cosh x − 1 for |x| < 1: x²·C(x²).
fn cosh_small_m1(x: f64) -> f64 {
    let z = x * x;
    z * horner(z, &COSH_TAYLOR)
}

/// sinh x, the twin of WGSL `expr_sinh`: the Taylor polynomial for |x| < 1, else
/// ±(eᵃ − e⁻ᵃ)/2 (see the module documentation).
pub fn sinh(x: f64) -> f64 {
    let a = x.abs();
    if a < SINH_SMALL {
        return sinh_small(x);
    }
    let r = if a <= EXP_SAFE {
        let t = math_exp(a);
        0.5 * (t - 1.0 / t)
    } else {
        math_exp(a - 8.0) * EXP8_HALF
    };
    if x < 0.0 { -r } else { r }
}

/// cosh x, the twin of WGSL `expr_cosh`: the Taylor polynomial for |x| < 1, else
/// (eᵃ + e⁻ᵃ)/2 (see the module documentation).
pub fn cosh(x: f64) -> f64 {
    let a = x.abs();
    if a < SINH_SMALL {
        return 1.0 + cosh_small_m1(x);
    }
    if a <= EXP_SAFE {
        let t = math_exp(a);
        0.5 * (t + 1.0 / t)
    } else {
        math_exp(a - 8.0) * EXP8_HALF
    }
}

/// tanh x, the twin of WGSL `expr_tanh`: x + x·(x²·D(x²))/(1 + x²·C(x²)) for |x| < 1,
/// else ±(1 − 2/(e^{2|x|} + 1)) (see the module documentation).
pub fn tanh(x: f64) -> f64 {
    let a = x.abs();
    if a < SINH_SMALL {
        let z = x * x;
        let r = x + x * ((z * horner(z, &TANH_TAYLOR)) / (1.0 + cosh_small_m1(x)));
        // tanh x rounds to x below 2⁻²⁷; returning x keeps −0.
        return if a < TANH_TINY { x } else { r };
    }
    let t = math_exp(2.0 * a);
    let r = 1.0 - 2.0 / (t + 1.0);
    if x < 0.0 { -r } else { r }
}

/// xⁿ by binary powering, the twin of WGSL `expr_powi`: acc = 1, and for each bit of |n|
/// from the lowest, acc·base if the bit is set, then base². For n < 0 the result is
/// 1/x^|n| (so 0 where x^|n| overflows, even if xⁿ would be subnormal). x⁰ = 1 (also for
/// NaN, as IEEE 754's pown).
pub fn powi(x: f64, n: i32) -> f64 {
    let mut e = n.unsigned_abs();
    let mut base = x;
    let mut acc = 1.0;
    loop {
        if e & 1 == 1 {
            acc *= base;
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        base *= base;
    }
    if n < 0 { 1.0 / acc } else { acc }
}

/// aᵇ = exp(b·log a), the twin of WGSL `expr_pow`, for exponents that are not constant
/// integers: NaN for a < 0, 0 for a = 0 < b, +∞ for a = 0 > b.
pub fn pow(a: f64, b: f64) -> f64 {
    math_exp(b * math_log(a))
}

/// `c0 + z * (c1 + z * (… + z * c_last))` in WGSL, the same operations as the Horner
/// loops here.
pub(super) fn wgsl_horner(z: &str, names: &[String]) -> String {
    let (last, rest) = names.split_last().expect("a polynomial has coefficients");
    let mut out = last.clone();
    for c in rest.iter().rev() {
        out = format!("{c} + {z} * ({out})");
    }
    out
}

/// The WGSL twins of [`tan`], [`sinh`], [`cosh`], [`tanh`], [`powi`] and [`pow`], with
/// their constants written from the Rust ones (so they agree to the last bit). Needs
/// `alias real` and the engine's math library.
pub(super) fn wgsl() -> String {
    let mut out = String::new();
    let mut table = |prefix: &str, first_power: usize, coefficients: &[f64]| {
        let mut names = Vec::new();
        for (i, c) in coefficients.iter().enumerate() {
            let name = format!("{prefix}{}", first_power + 2 * i);
            writeln!(out, "const {name}: real = {c:e};").unwrap();
            names.push(name);
        }
        wgsl_horner("z", &names)
    };
    // Named by the power of x each coefficient multiplies.
    let sinh_p = table("EXPR_SINH_C", 3, &SINH_TAYLOR);
    let cosh_p = table("EXPR_COSH_C", 2, &COSH_TAYLOR);
    let tanh_p = table("EXPR_TANH_C", 3, &TANH_TAYLOR);
    writeln!(out, "const EXPR_SINH_SMALL: real = {SINH_SMALL:e};").unwrap();
    writeln!(out, "const EXPR_EXP_SAFE: real = {EXP_SAFE:e};").unwrap();
    writeln!(out, "const EXPR_EXP8_HALF: real = {EXP8_HALF:e};").unwrap();
    writeln!(out, "const EXPR_TANH_TINY: real = {TANH_TINY:e};").unwrap();
    write!(
        out,
        r"
fn expr_tan(x: real) -> real {{
    return math_sin(x) / math_cos(x);
}}

fn expr_sinh_small(x: real) -> real {{
    let z = x * x;
    return x + x * (z * ({sinh_p}));
}}

fn expr_cosh_small_m1(x: real) -> real {{
    let z = x * x;
    return z * ({cosh_p});
}}

fn expr_sinh(x: real) -> real {{
    let a = abs(x);
    if a < EXPR_SINH_SMALL {{
        return expr_sinh_small(x);
    }}
    var r: real;
    if a <= EXPR_EXP_SAFE {{
        let t = math_exp(a);
        r = 0.5 * (t - 1.0 / t);
    }} else {{
        r = math_exp(a - 8.0) * EXPR_EXP8_HALF;
    }}
    return select(r, -r, x < 0.0);
}}

fn expr_cosh(x: real) -> real {{
    let a = abs(x);
    if a < EXPR_SINH_SMALL {{
        return 1.0 + expr_cosh_small_m1(x);
    }}
    if a <= EXPR_EXP_SAFE {{
        let t = math_exp(a);
        return 0.5 * (t + 1.0 / t);
    }}
    return math_exp(a - 8.0) * EXPR_EXP8_HALF;
}}

fn expr_tanh(x: real) -> real {{
    let a = abs(x);
    if a < EXPR_SINH_SMALL {{
        let z = x * x;
        let r = x + x * ((z * ({tanh_p})) / (1.0 + expr_cosh_small_m1(x)));
        return select(r, x, a < EXPR_TANH_TINY);
    }}
    let t = math_exp(2.0 * a);
    let r = 1.0 - 2.0 / (t + 1.0);
    return select(r, -r, x < 0.0);
}}

fn expr_powi(x: real, n: i32) -> real {{
    var e = abs(n);
    var base = x;
    var acc: real = 1.0;
    loop {{
        if (e & 1) == 1 {{
            acc = acc * base;
        }}
        e = e >> 1u;
        if e == 0 {{
            break;
        }}
        base = base * base;
    }}
    return select(acc, 1.0 / acc, n < 0);
}}

fn expr_pow(a: real, b: real) -> real {{
    return math_exp(b * math_log(a));
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
    use rand_chacha::ChaCha8Rng;

    /// A real function of a real variable.
    type Real = fn(f64) -> f64;

    /// The largest ulp distance of `ours` from `std` at 2·10⁵ points: a quarter uniform
    /// in [−r, r], the rest log-uniform in magnitude from 1e−12 to r, both signs.
    fn max_ulps(rng: &mut ChaCha8Rng, r: f64, ours: Real, std: Real) -> (u64, f64) {
        let mut worst = (0, 0.0);
        for i in 0..200_000 {
            let x = if i % 4 == 0 {
                rng.random_range(-r..=r)
            } else {
                let m = rng.random_range((1e-12f64).ln()..r.ln()).exp();
                if rng.random() { m } else { -m }
            };
            let d = ulps(ours(x), std(x));
            if d > worst.0 {
                worst = (d, x);
            }
        }
        worst
    }

    /// Measured over ten seeds: tan ≤ 2 ulps on [−10, 10] (sin and cos are each within
    /// 1 ulp, and the quotient rounds once more); sinh and cosh ≤ 2 ulps on [−709, 709]
    /// (beyond: `sinh_and_cosh_near_overflow`); tanh ≤ 2 ulps on [−30, 30]. These are the
    /// bounds asserted.
    #[test]
    fn tan_sinh_cosh_tanh_against_std() {
        let mut rng = fresh_rng("tan_sinh_cosh_tanh_against_std");
        let cases: [(&str, f64, Real, Real, u64); 4] = [
            ("tan", 10.0, tan, f64::tan, 2),
            ("sinh", 709.0, sinh, f64::sinh, 2),
            ("cosh", 709.0, cosh, f64::cosh, 2),
            ("tanh", 30.0, tanh, f64::tanh, 2),
        ];
        for (name, r, ours, std, bound) in cases {
            let (d, x) = max_ulps(&mut rng, r, ours, std);
            eprintln!("{name}: max {d} ulps (at x = {x:e})");
            assert!(
                d <= bound,
                "{name}({x:e}) = {:e}, std {:e}: {d} ulps > {bound}",
                ours(x),
                std(x)
            );
        }
    }

    /// sinh and cosh beyond 709, where they scale e^{|x| − 8}, against eˣ/2 (e⁻ˣ is far
    /// below an ulp) with the platform's exp, as long as eˣ is finite (x ≤ 709.78): within
    /// 2 ulps (measured 2). Further on, the platform's sinh is itself up to 2 ulps from the
    /// exact value (glibc squares e^{x/2}; checked against 50-digit decimal arithmetic),
    /// while e^{x − 8}·(e⁸/2) stays within 1 ulp there; so no std comparison is made there.
    #[test]
    fn sinh_and_cosh_near_overflow() {
        let mut rng = fresh_rng("sinh_and_cosh_near_overflow");
        let mut worst = 0;
        for _ in 0..100_000 {
            let x: f64 = rng.random_range(709.0..709.78);
            let want = 0.5 * x.exp();
            worst = worst.max(ulps(sinh(x), want)).max(ulps(cosh(-x), want));
            assert!(ulps(sinh(x), want) <= 2, "sinh({x:e})");
            assert!(ulps(cosh(-x), want) <= 2, "cosh({x:e})");
            assert!(ulps(sinh(-x), -want) <= 2, "sinh({:e})", -x);
        }
        eprintln!("sinh, cosh on [709, 709.78]: max {worst} ulps");
        assert!(sinh(710.47).is_finite() && sinh(710.48).is_infinite());
        // e⁸/2 to 60 digits (decimal arithmetic), read as the nearest f64.
        let exact: f64 = "1490.47899352086413737179604972644433687798396956641785110448"
            .parse()
            .unwrap();
        assert_eq!(EXP8_HALF, exact);
    }

    #[test]
    fn special_values() {
        let inf = f64::INFINITY;
        for f in [sinh, tanh, tan] {
            assert_eq!(f(-0.0).to_bits(), (-0.0f64).to_bits());
            assert_eq!(f(0.0).to_bits(), 0.0f64.to_bits());
            assert!(f(f64::NAN).is_nan());
        }
        assert_eq!(cosh(0.0), 1.0);
        assert!(cosh(f64::NAN).is_nan());
        assert_eq!(sinh(inf), inf);
        assert_eq!(sinh(-inf), -inf);
        assert_eq!(cosh(-inf), inf);
        assert_eq!(tanh(inf), 1.0);
        assert_eq!(tanh(-inf), -1.0);
        assert_eq!(tanh(1e300), 1.0);
        // sinh(710) ≈ 1.117e308 is finite, though e^710 is not; sinh(711) overflows.
        assert!(sinh(710.0).is_finite() && cosh(-710.0).is_finite());
        assert_eq!(sinh(711.0), inf);
        assert!(tan(f64::INFINITY).is_nan());
    }

    #[test]
    fn integer_powers_multiply_exactly_as_written() {
        let x = 1.1f64;
        assert_eq!(powi(x, 0), 1.0);
        assert_eq!(powi(f64::NAN, 0), 1.0);
        assert_eq!(powi(x, 1), x);
        assert_eq!(powi(x, 2), x * x);
        assert_eq!(powi(x, 3), x * (x * x));
        // 5 = 101₂: acc = x, base = x², base = x⁴, acc = x·x⁴.
        assert_eq!(powi(x, 5), x * ((x * x) * (x * x)));
        assert_eq!(powi(x, -2), 1.0 / (x * x));
        assert_eq!(powi(2.0, 10), 1024.0);
        assert_eq!(powi(2.0, -1022), f64::MIN_POSITIVE);
        // 1/2^1074 = 1/∞: the power overflows before its reciprocal is taken.
        assert_eq!(powi(2.0, -1074), 0.0);
        assert_eq!(powi(-1.0, i32::MAX), -1.0);
        assert_eq!(powi(0.0, -1), f64::INFINITY);
    }

    #[test]
    fn general_powers() {
        assert_eq!(pow(4.0, 0.5), 2.0);
        assert!(pow(-1.0, 0.5).is_nan());
        assert_eq!(pow(0.0, 0.5), 0.0);
        assert_eq!(pow(0.0, -0.5), f64::INFINITY);
        assert!(ulps(pow(2.0, 0.3), 2f64.powf(0.3)) <= 2);
    }

    #[test]
    fn names_round_trip() {
        for f in Func::ALL {
            assert_eq!(Func::from_name(f.name()), Some(f));
        }
        assert_eq!(Func::from_name("sine"), None);
    }
}
