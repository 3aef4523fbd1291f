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
#[path = "functions_tests.rs"]
mod tests;
