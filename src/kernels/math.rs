//! f64 `sin`, `cos`, `exp` and `log` for the WGSL kernels, and their CPU twin.
//!
//! WGSL's f64 (naga's `SHADER_F64`) has no usable transcendental functions: the
//! GLSL.std.450 ones are f32-only. [`WGSL_F64`] (`shaders/shared/math_f64.wgsl`) implements
//! `math_sin`, `math_cos`, `math_exp` and `math_log` for `real = f64` with nothing but
//! operations IEEE 754 rounds correctly or performs exactly (`+ − × ÷`, `sqrt`, `round`,
//! `floor`, `abs`, `select`, comparisons, and `ldexp(1, e)` to form exact powers of two);
//! no `fma`. [`WGSL_F32`] (`shaders/shared/math_f32.wgsl`) gives the same four names for
//! `real = f32` by calling the WGSL builtins. A kernel prepends `alias real = …;` and
//! appends [`wgsl_library`] of its precision.
//!
//! The functions here are the CPU twin of the f64 library: the same algorithm, the same
//! constants ([`CONSTANTS`], tied to the WGSL file by a unit test) and the same order of
//! operations, so on an adapter that rounds every operation to f64 and does not contract
//! `a·b + c` into a fused multiply-add, GPU and CPU agree to the last bit. The algorithms
//! are those of fdlibm / FreeBSD msun (Cody–Waite reduction, the msun polynomial and
//! rational kernels), restated for a machine without integer access to the bits of an f64:
//! naga rejects `bitcast` between f64 and `vec2<u32>`, and its f64 `frexp` needs
//! `SHADER_INT64`, so exponents are found by comparisons with exact powers of two.
//!
//! The compensated steps are written so that a shader compiler that treats floating-point
//! operations as reassociable leaves them alone. Mesa's NIR (lavapipe, RADV, ANV, …) does
//! so for every operation naga emits (naga never marks one `NoContraction`): it folds
//! (a + b) − a to b and (1 − (1 − h)) to h, and rewrites (p + q) + c to (p + c) + q when p
//! and q are products used once. msun's TwoSum and cos-kernel correction met both; the
//! forms used here (`math_two_sum`, `math_kernel_cos`) compute the same values in
//! shapes those rules do not match, and tests/math_gpu.rs checks on lavapipe that the GPU
//! equals the twin bit for bit, alone and inlined into larger expressions.
//!
//! On the CPU each function also comes as `math_*_inline`, inlined into its caller: in a
//! loop over many points compiled for a wider instruction set (the fast engines' lane
//! loops) it runs as vector instructions, with the same IEEE operations in the same order
//! and so the same results (nothing is fused).
//!
//! Measured accuracy against Rust's `std` (the platform libm), in ulps (the distance
//! between the integer representations): at most 1 ulp for all four functions over their
//! ranges, on the CPU (tests/math_cpu.rs, 3·10⁶ seeded points per run, 1.5·10⁷ over five
//! seeds) and on lavapipe (tests/math_gpu.rs, 2^18 points, bit-equal to the twin).

use super::precision::Precision;

/// The f64 library (`real = f64`): `math_sin`, `math_cos`, `math_exp`, `math_log` and
/// private `math_*` helpers and `MATH_*` constants.
pub const WGSL_F64: &str = include_str!("../../shaders/shared/math_f64.wgsl");

/// The f32 library (`real = f32`): the same four functions, calling the WGSL builtins.
pub const WGSL_F32: &str = include_str!("../../shaders/shared/math_f32.wgsl");

/// The math library for kernels specialised with `alias real = <precision>;`.
pub fn wgsl_library(precision: Precision) -> &'static str {
    match precision {
        Precision::F64 => WGSL_F64,
        Precision::F32 => WGSL_F32,
    }
}

/// 2^e as an f64, for an integer e in [−1022, 1023] (a normal power of two).
const fn two_pow(e: i64) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

macro_rules! constants {
    ($($(#[$doc:meta])* $name:ident = $value:expr;)*) => {
        $($(#[$doc])* const $name: f64 = $value;)*

        /// Every `MATH_*` constant of [`WGSL_F64`], by its WGSL name. A unit test checks,
        /// through naga, that the WGSL file declares exactly these names with these values
        /// to the last bit, so no constant is maintained in two places unchecked.
        pub const CONSTANTS: &[(&str, f64)] = &[$((stringify!($name), $name)),*];
    };
}

constants! {
    // Reduction modulo π/2 (fdlibm e_rem_pio2.c): 2/π, and π/2 split into three 33-bit
    // parts and a 53-bit tail, so n·MATH_PIO2_{1,2,3} is exact for |n| ≤ 2^20.
    MATH_INVPIO2 = f64::from_bits(0x3FE45F30_6DC9C883);
    MATH_PIO2_1 = f64::from_bits(0x3FF921FB_54400000);
    MATH_PIO2_2 = f64::from_bits(0x3DD0B461_1A600000);
    MATH_PIO2_3 = f64::from_bits(0x3BA3198A_2E000000);
    MATH_PIO2_3T = f64::from_bits(0x397B839A_252049C1);
    // |x| from which sin and cos return NaN: 2^52, where ulp(x) = 1.
    MATH_TRIG_LIMIT = two_pow(52);
    // 2^±53, to split x²/2 in the cos kernel.
    MATH_TWO_P53 = two_pow(53);
    MATH_TWO_M53 = two_pow(-53);
    // sin(x) ≈ x + S1·x³ + … + S6·x¹³ on [−π/4, π/4] (k_sin.c, |error| ≤ 2^−58).
    MATH_S1 = f64::from_bits(0xBFC55555_55555549);
    MATH_S2 = f64::from_bits(0x3F811111_1110F8A6);
    MATH_S3 = f64::from_bits(0xBF2A01A0_19C161D5);
    MATH_S4 = f64::from_bits(0x3EC71DE3_57B1FE7D);
    MATH_S5 = f64::from_bits(0xBE5AE5E6_8A2B9CEB);
    MATH_S6 = f64::from_bits(0x3DE5D93A_5ACFD57C);
    // cos(x) ≈ 1 − x²/2 + C1·x⁴ + … + C6·x¹⁴ on [−π/4, π/4] (k_cos.c, |error| ≤ 2^−58).
    MATH_C1 = f64::from_bits(0x3FA55555_5555554C);
    MATH_C2 = f64::from_bits(0xBF56C16C_16C15177);
    MATH_C3 = f64::from_bits(0x3EFA01A0_19CB1590);
    MATH_C4 = f64::from_bits(0xBE927E4F_809C52AD);
    MATH_C5 = f64::from_bits(0x3E21EE9E_BDB4B1C4);
    MATH_C6 = f64::from_bits(0xBDA8FAE9_BE8838D4);
    // exp (e_exp.c): overflow and underflow thresholds, 1/ln 2, ln 2 = LN2_HI + LN2_LO with
    // k·LN2_HI exact for |k| < 2^21, and the Remez coefficients of r·(e^r + 1)/(e^r − 1).
    MATH_EXP_OVERFLOW = f64::from_bits(0x40862E42_FEFA39EF);
    MATH_EXP_UNDERFLOW = f64::from_bits(0xC0874910_D52D3051);
    MATH_INVLN2 = f64::from_bits(0x3FF71547_652B82FE);
    MATH_LN2_HI = f64::from_bits(0x3FE62E42_FEE00000);
    MATH_LN2_LO = f64::from_bits(0x3DEA39EF_35793C76);
    MATH_P1 = f64::from_bits(0x3FC55555_5555553E);
    MATH_P2 = f64::from_bits(0xBF66C16C_16BEBD93);
    MATH_P3 = f64::from_bits(0x3F11566A_AF25DE2C);
    MATH_P4 = f64::from_bits(0xBEBBBD41_C5D26BF1);
    MATH_P5 = f64::from_bits(0x3E663769_72BEA4D0);
    // log (e_log.c): the Remez coefficients of (log(1+s) − log(1−s) − 2s)/s in s², …
    MATH_LG1 = f64::from_bits(0x3FE55555_55555593);
    MATH_LG2 = f64::from_bits(0x3FD99999_9997FA04);
    MATH_LG3 = f64::from_bits(0x3FD24924_94229359);
    MATH_LG4 = f64::from_bits(0x3FCC71C5_1D8E78AF);
    MATH_LG5 = f64::from_bits(0x3FC74664_96CB03DE);
    MATH_LG6 = f64::from_bits(0x3FC39A09_D078C69F);
    MATH_LG7 = f64::from_bits(0x3FC2F112_DF3E5244);
    // … the bound of the reduced argument m ∈ [√2/2, √2), and the scaling of x into [1, 2):
    // the smallest normal number, 2^54 for subnormal inputs, 2^±e for e = 512, 256, …, 1.
    MATH_SQRT2 = std::f64::consts::SQRT_2;
    MATH_MIN_NORMAL = f64::MIN_POSITIVE;
    MATH_TWO_P54 = two_pow(54);
    MATH_TWO_P512 = two_pow(512);
    MATH_TWO_P256 = two_pow(256);
    MATH_TWO_P128 = two_pow(128);
    MATH_TWO_P64 = two_pow(64);
    MATH_TWO_P32 = two_pow(32);
    MATH_TWO_P16 = two_pow(16);
    MATH_TWO_P8 = two_pow(8);
    MATH_TWO_P4 = two_pow(4);
    MATH_TWO_P2 = two_pow(2);
    MATH_TWO_P1 = two_pow(1);
    MATH_TWO_M512 = two_pow(-512);
    MATH_TWO_M256 = two_pow(-256);
    MATH_TWO_M128 = two_pow(-128);
    MATH_TWO_M64 = two_pow(-64);
    MATH_TWO_M32 = two_pow(-32);
    MATH_TWO_M16 = two_pow(-16);
    MATH_TWO_M8 = two_pow(-8);
    MATH_TWO_M4 = two_pow(-4);
    MATH_TWO_M2 = two_pow(-2);
    MATH_TWO_M1 = two_pow(-1);
    // Special results made at run time (a constant infinity is a WGSL shader-creation
    // error): the largest finite f64, 2^1023 and 10^300, whose products overflow.
    MATH_MAX = f64::MAX;
    MATH_TWO_P1023 = two_pow(1023);
    MATH_HUGE = 1e300;
}

/// `math_two_sum`: s = a + b rounded and the exact error e, s + e = a + b (Knuth's TwoSum,
/// valid whatever the magnitudes). Written with b' = −(a − s) and a' = −(b' − s), which
/// IEEE arithmetic makes equal to the textbook s − a and s − b', because NIR folds the
/// textbook (a + b) − a to b, which would make e = 0 (see the module documentation).
#[inline(always)]
fn math_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = -(a - s);
    let av = -(bb - s);
    (s, (a - av) + (b - bb))
}

/// `math_select(f, t, c)`: WGSL's `select(f, t, c)`, t where c holds.
#[inline(always)]
fn math_select(f: f64, t: f64, c: bool) -> f64 {
    if c { t } else { f }
}

/// `math_rem_pio2`: x = n·π/2 + (y0 + y1) with n = round(x·2/π) (ties to even),
/// |y0 + y1| ≲ π/4 and |y1| ≤ ulp(y0)/2; returns (y0, y1, n mod 4).
///
/// Cody–Waite: x − n·P1 is exact (P1 has 33 bits and |n| ≤ 2^20), the next two parts are
/// subtracted with TwoSum so their rounding errors are carried, and the 53-bit tail P3T
/// closes π/2 to about 150 bits; the result is accurate to far below an ulp of y0 even for
/// the x closest to a multiple of π/2 in range. Exact for |x| ≤ 2^20·π/2 ≈ 1.647e6; beyond
/// that n·P1 is rounded and the reduced argument carries an absolute error of order
/// ulp(x). n = 0 (|x| ≲ π/4) returns x itself, which keeps −0.
#[inline(always)]
fn math_rem_pio2(x: f64) -> (f64, f64, f64) {
    let n = (x * MATH_INVPIO2).round_ties_even();
    let r0 = x - n * MATH_PIO2_1;
    let (a0, a1) = math_two_sum(r0, -(n * MATH_PIO2_2));
    let (b0, b1) = math_two_sum(a0, -(n * MATH_PIO2_3));
    let tail = (a1 + b1) - n * MATH_PIO2_3T;
    let (y0, y1) = math_two_sum(b0, tail);
    let q = n - 4.0 * (n * 0.25).floor();
    let small = n == 0.0;
    (math_select(y0, x, small), math_select(y1, 0.0, small), q)
}

/// `math_kernel_sin`: sin(x + y) for |x| ≲ π/4 and a tail |y| ≤ ulp(x)/2 (msun k_sin.c).
#[inline(always)]
fn math_kernel_sin(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = (MATH_S2 + z * (MATH_S3 + z * MATH_S4)) + (z * w) * (MATH_S5 + z * MATH_S6);
    let v = z * x;
    x - (((z * ((0.5 * y) - (v * r))) - y) - v * MATH_S1)
}

/// `math_kernel_cos`: cos(x + y) for |x| ≲ π/4 and a tail |y| ≤ ulp(x)/2 (msun k_cos.c).
///
/// msun returns w + (((1 − w) − hz) + (z·r − x·y)) with hz = x²/2 and w = 1 − hz rounded.
/// Mesa's NIR folds (1 − w) − hz to 0, and reassociates a sum whose inner sum adds two
/// products ((a·b + c·d) + e → (a·b + e) + c·d). The same values come without either
/// shape: k = round(hz·2^53) (hz ≤ 0.31) gives w = 1 − k·2^−53 exactly, equal to 1 − hz
/// rounded, and (1 − w) − hz = (k − hz·2^53)·2^−53 exactly.
#[inline(always)]
fn math_kernel_cos(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = z * (MATH_C1 + z * (MATH_C2 + z * MATH_C3))
        + (w * w) * (MATH_C4 + z * (MATH_C5 + z * MATH_C6));
    let hz = 0.5 * z;
    let k = (hz * MATH_TWO_P53).round_ties_even();
    let v = 1.0 - k * MATH_TWO_M53;
    let tmp = (k - hz * MATH_TWO_P53) * MATH_TWO_M53;
    v + (tmp + ((z * r) - (x * y)))
}

/// sin x, the twin of WGSL `math_sin`.
///
/// x = n·π/2 + y by the Cody–Waite reduction of `math_rem_pio2`, then the degree-13 odd
/// polynomial of msun's `__kernel_sin` or the degree-14 even one of `__kernel_cos` on
/// y ∈ [−π/4, π/4] according to n mod 4, with the reduction's tail as a first-order
/// correction.
///
/// Range: |x| ≤ 2^20·π/2 ≈ 1.647e6, where the measured error is ≤ 1 ulp against the
/// platform libm (tests/math_cpu.rs); sin(±0) = ±0. Beyond that range the reduction is no
/// longer exact (there is no Payne–Hanek reduction): for |x| < 2^52 the absolute error is
/// about half an ulp of x (measured 0.50 ulp(x)), and from |x| = 2^52 on, where ulp(x) ≥ 1
/// and no digit of the result would be significant, the result is NaN (as √−|x|).
/// sin(±∞) = sin(NaN) = NaN.
pub fn math_sin(x: f64) -> f64 {
    math_sin_inline(x)
}

/// [`math_sin`], inlined into its caller: in a loop over many points compiled for a
/// wider instruction set it vectorises (the same operations, the same results).
#[inline(always)]
pub fn math_sin_inline(x: f64) -> f64 {
    let (y0, y1, q) = math_rem_pio2(x);
    let v = if q == 1.0 || q == 3.0 {
        math_kernel_cos(y0, y1)
    } else {
        math_kernel_sin(y0, y1)
    };
    let v = math_select(v, -v, q >= 2.0);
    math_select(v, (-x.abs()).sqrt(), x.abs() >= MATH_TRIG_LIMIT)
}

/// cos x, the twin of WGSL `math_cos`: as [`math_sin`], with the quadrants shifted by one.
///
/// Range: |x| ≤ 2^20·π/2 ≈ 1.647e6, measured error ≤ 1 ulp against the platform libm;
/// cos(±0) = 1. For 2^20·π/2 < |x| < 2^52 an absolute error of about ulp(x)/2, from 2^52
/// on NaN; cos(±∞) = cos(NaN) = NaN.
pub fn math_cos(x: f64) -> f64 {
    math_cos_inline(x)
}

/// [`math_cos`], inlined into its caller: in a loop over many points compiled for a
/// wider instruction set it vectorises (the same operations, the same results).
#[inline(always)]
pub fn math_cos_inline(x: f64) -> f64 {
    let (y0, y1, q) = math_rem_pio2(x);
    let v = if q == 1.0 || q == 3.0 {
        math_kernel_sin(y0, y1)
    } else {
        math_kernel_cos(y0, y1)
    };
    let v = math_select(v, -v, q == 1.0 || q == 2.0);
    math_select(v, (-x.abs()).sqrt(), x.abs() >= MATH_TRIG_LIMIT)
}

/// 2^e for an integer-valued e in [−1022, 1023]: WGSL `math_pow2`, `ldexp(1.0, i32(e))`.
#[inline(always)]
fn math_pow2(e: f64) -> f64 {
    two_pow(e as i64)
}

/// eˣ, the twin of WGSL `math_exp`.
///
/// k = round(x/ln 2), r = (x − k·LN2_HI) − k·LN2_LO (the first product exact), then msun's
/// rational form e^r = 1 + r + r·c/(2 − c) with c = r − r²·P(r²), a degree-5 Remez
/// polynomial (e_exp.c), and the scaling by 2^k as (y·2^a)·2^b with both factors normal
/// powers of two, so a subnormal result is rounded once.
///
/// Range: all f64. x > 709.78… (`MATH_EXP_OVERFLOW`, ln of the largest f64) gives +∞ (as
/// x·2^1023, so also for x = +∞), x < −745.13… (`MATH_EXP_UNDERFLOW`) gives +0, exp(±0) = 1,
/// exp(−∞) = 0, exp(NaN) = NaN. Measured error ≤ 1 ulp against the platform libm over
/// [−745.13, 709.78], subnormal results included (their ulp is 2^−1074).
pub fn math_exp(x: f64) -> f64 {
    math_exp_inline(x)
}

/// [`math_exp`], inlined into its caller: in a loop over many points compiled for a
/// wider instruction set it vectorises (the same operations, the same results).
#[inline(always)]
pub fn math_exp_inline(x: f64) -> f64 {
    let overflow = x > MATH_EXP_OVERFLOW;
    let underflow = x < MATH_EXP_UNDERFLOW;
    let xr = math_select(x, 0.0, overflow || underflow);
    let k_raw = (xr * MATH_INVLN2).round_ties_even();
    // NaN → k = 0, so the powers of two below stay in range; r carries the NaN.
    let k = math_select(0.0, k_raw, k_raw.abs() <= 1100.0);
    let hi = xr - k * MATH_LN2_HI;
    let lo = k * MATH_LN2_LO;
    let r = hi - lo;
    let t = r * r;
    let c = r - t * (MATH_P1 + t * (MATH_P2 + t * (MATH_P3 + t * (MATH_P4 + t * MATH_P5))));
    let y = 1.0 - ((lo - ((r * c) / (2.0 - c))) - hi);
    // 2^k = 2^a · 2^b: b = −1000 below the normal exponents, 1 for k = 1024, else 0.
    let b = math_select(math_select(0.0, 1.0, k > 1023.0), -1000.0, k < -1021.0);
    let a = k - b;
    let scaled = (y * math_pow2(a)) * math_pow2(b);
    let huge = x * MATH_TWO_P1023;
    math_select(math_select(scaled, huge, overflow), 0.0, underflow)
}

/// One step of `math_log`'s downward scaling: (m, k) → (m·2^−e, k + e) if m ≥ 2^e.
#[inline(always)]
fn math_log_down(m: f64, k: f64, e: f64, scale: f64) -> (f64, f64) {
    let t = m * scale;
    let take = t >= 1.0;
    (math_select(m, t, take), math_select(k, k + e, take))
}

/// One step of `math_log`'s upward scaling: (m, k) → (m·2^e, k − e) if m < 2^(1−e).
#[inline(always)]
fn math_log_up(m: f64, k: f64, e: f64, scale: f64) -> (f64, f64) {
    let t = m * scale;
    let take = t < 2.0;
    (math_select(m, t, take), math_select(k, k - e, take))
}

/// ln x, the twin of WGSL `math_log`.
///
/// x = 2^k·m with m ∈ [√2/2, √2): subnormal x is first multiplied by 2^54, then m is
/// brought into [1, 2) by exact multiplications with 2^∓512, 2^∓256, …, 2^∓1 (a binary
/// search on the exponent by comparisons, as naga has no f64 bit access), and halved if
/// m ≥ √2. Then with f = m − 1 and s = f/(2 + f), msun's e_log.c kernel
/// ln(1 + f) = f − (f²/2 − s·(f²/2 + R(s²))) with a degree-14 Remez R, and
/// ln x = k·LN2_HI + (ln(1 + f) + k·LN2_LO) in fdlibm's order.
///
/// Range: all f64. ln(+∞) = +∞, ln(±0) = −∞, ln(x < 0) = ln(−∞) = NaN (the NaN of √x),
/// ln(NaN) = NaN, ln(1) = +0. Measured error ≤ 1 ulp against the platform libm over all
/// positive f64, subnormals included.
pub fn math_log(x: f64) -> f64 {
    math_log_inline(x)
}

/// [`math_log`], inlined into its caller: in a loop over many points compiled for a
/// wider instruction set it vectorises (the same operations, the same results).
#[inline(always)]
pub fn math_log_inline(x: f64) -> f64 {
    let sub = x < MATH_MIN_NORMAL;
    let mut m = math_select(x, x * MATH_TWO_P54, sub);
    let mut k = math_select(0.0, -54.0, sub);
    (m, k) = math_log_down(m, k, 512.0, MATH_TWO_M512);
    (m, k) = math_log_down(m, k, 256.0, MATH_TWO_M256);
    (m, k) = math_log_down(m, k, 128.0, MATH_TWO_M128);
    (m, k) = math_log_down(m, k, 64.0, MATH_TWO_M64);
    (m, k) = math_log_down(m, k, 32.0, MATH_TWO_M32);
    (m, k) = math_log_down(m, k, 16.0, MATH_TWO_M16);
    (m, k) = math_log_down(m, k, 8.0, MATH_TWO_M8);
    (m, k) = math_log_down(m, k, 4.0, MATH_TWO_M4);
    (m, k) = math_log_down(m, k, 2.0, MATH_TWO_M2);
    (m, k) = math_log_down(m, k, 1.0, MATH_TWO_M1);
    (m, k) = math_log_up(m, k, 512.0, MATH_TWO_P512);
    (m, k) = math_log_up(m, k, 256.0, MATH_TWO_P256);
    (m, k) = math_log_up(m, k, 128.0, MATH_TWO_P128);
    (m, k) = math_log_up(m, k, 64.0, MATH_TWO_P64);
    (m, k) = math_log_up(m, k, 32.0, MATH_TWO_P32);
    (m, k) = math_log_up(m, k, 16.0, MATH_TWO_P16);
    (m, k) = math_log_up(m, k, 8.0, MATH_TWO_P8);
    (m, k) = math_log_up(m, k, 4.0, MATH_TWO_P4);
    (m, k) = math_log_up(m, k, 2.0, MATH_TWO_P2);
    (m, k) = math_log_up(m, k, 1.0, MATH_TWO_P1);
    let halve = m >= MATH_SQRT2;
    let m = math_select(m, m * 0.5, halve);
    let dk = math_select(k, k + 1.0, halve);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (MATH_LG2 + w * (MATH_LG4 + w * MATH_LG6));
    let t2 = z * (MATH_LG1 + w * (MATH_LG3 + w * (MATH_LG5 + w * MATH_LG7)));
    let rr = t2 + t1;
    let hfsq = (0.5 * f) * f;
    let v = dk * MATH_LN2_HI - ((hfsq - ((s * (hfsq + rr)) + dk * MATH_LN2_LO)) - f);
    let minus_inf = -((x.abs() + MATH_HUGE) * MATH_HUGE);
    let v = math_select(v, x, x > MATH_MAX);
    let v = math_select(v, minus_inf, x == 0.0);
    math_select(v, x.sqrt(), x < 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::wgsl::{to_spirv, validate};

    /// The library for `precision` with its alias and a tiny entry point that calls all
    /// four functions.
    fn probe_source(precision: Precision) -> String {
        format!(
            "alias real = {real};\n{library}\n\
             @group(0) @binding(0) var<storage, read_write> data: array<real>;\n\
             @compute @workgroup_size(1)\n\
             fn main() {{\n\
             let x = data[0];\n\
             data[1] = math_sin(x);\n\
             data[2] = math_cos(x);\n\
             data[3] = math_exp(x);\n\
             data[4] = math_log(x);\n\
             }}\n",
            real = precision.name(),
            library = wgsl_library(precision),
        )
    }

    #[test]
    fn both_libraries_validate_and_translate_to_spirv() {
        for precision in [Precision::F32, Precision::F64] {
            let source = probe_source(precision);
            if let Err(e) = to_spirv(&source, precision) {
                panic!("{} library: {e}", precision.name());
            }
        }
        // The f64 library needs the FLOAT64 capability, so the check above is not vacuous.
        assert!(validate(&probe_source(Precision::F64), Precision::F32).is_err());
    }

    /// No builtin transcendental (they are f32-only) and no `fma` in the f64 library.
    #[test]
    fn the_f64_library_calls_no_transcendental_builtin() {
        let code: String = WGSL_F64
            .lines()
            .map(|line| line.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        for builtin in [
            "sin(", "cos(", "tan(", "exp(", "exp2(", "log(", "log2(", "pow(", "fma(", "frexp(",
            "bitcast",
        ] {
            for (i, _) in code.match_indices(builtin) {
                let before = code[..i].chars().next_back().unwrap_or(' ');
                assert!(
                    before.is_alphanumeric() || before == '_',
                    "math_f64.wgsl calls {builtin}…)"
                );
            }
        }
    }

    /// The `MATH_*` constants of the WGSL file, as naga reads them, are exactly
    /// [`CONSTANTS`]: the same names and the same bits.
    #[test]
    fn wgsl_constants_match_the_rust_table() {
        let source = probe_source(Precision::F64);
        let (module, _) = validate(&source, Precision::F64).unwrap();
        let mut in_wgsl = std::collections::BTreeMap::new();
        for (_, constant) in module.constants.iter() {
            let Some(name) = constant.name.as_deref() else {
                continue;
            };
            if !name.starts_with("MATH_") {
                continue;
            }
            let value = match module.global_expressions[constant.init] {
                naga::Expression::Literal(naga::Literal::F64(v)) => v,
                ref other => panic!("{name} is not an f64 literal: {other:?}"),
            };
            assert!(
                in_wgsl.insert(name.to_string(), value).is_none(),
                "{name} declared twice"
            );
        }
        for (name, value) in CONSTANTS {
            let Some(wgsl) = in_wgsl.remove(*name) else {
                panic!("math_f64.wgsl lacks {name}; add\nconst {name}: real = {value:e};");
            };
            assert_eq!(
                wgsl.to_bits(),
                value.to_bits(),
                "{name}: WGSL {wgsl:e}, Rust {value:e}; use\nconst {name}: real = {value:e};"
            );
        }
        assert!(
            in_wgsl.is_empty(),
            "WGSL constants missing from CONSTANTS: {:?}",
            in_wgsl.keys().collect::<Vec<_>>()
        );
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[track_caller]
    fn check(name: &str, got: f64, want: f64) {
        assert!(same(got, want), "{name}: got {got:e}, want {want:e}");
    }

    #[test]
    fn special_values_of_sin_and_cos() {
        let inf = f64::INFINITY;
        check("sin(0)", math_sin(0.0), 0.0);
        check("sin(-0)", math_sin(-0.0), -0.0);
        check("cos(0)", math_cos(0.0), 1.0);
        check("cos(-0)", math_cos(-0.0), 1.0);
        for x in [inf, -inf, f64::NAN] {
            check("sin(non-finite)", math_sin(x), f64::NAN);
            check("cos(non-finite)", math_cos(x), f64::NAN);
        }
        // Tiny arguments: sin x = x, cos x = 1.
        for x in [f64::MIN_POSITIVE, 5e-324, -1e-200, 1e-9] {
            check("sin(tiny)", math_sin(x), x);
        }
        check("cos(tiny)", math_cos(1e-9), 1.0);
        check("sin(π/2)", math_sin(std::f64::consts::FRAC_PI_2), 1.0);
        // No significant digit from 2^52 on: NaN.
        for x in [MATH_TRIG_LIMIT, -MATH_TRIG_LIMIT, 1e20, -1e300, f64::MAX] {
            check("sin(huge)", math_sin(x), f64::NAN);
            check("cos(huge)", math_cos(x), f64::NAN);
        }
        assert!(math_sin(MATH_TRIG_LIMIT * (1.0 - f64::EPSILON)).abs() <= 1.0);
        check("cos(π)", math_cos(std::f64::consts::PI), -1.0);
    }

    #[test]
    fn special_values_of_exp() {
        let inf = f64::INFINITY;
        check("exp(0)", math_exp(0.0), 1.0);
        check("exp(-0)", math_exp(-0.0), 1.0);
        check("exp(inf)", math_exp(inf), inf);
        check("exp(-inf)", math_exp(-inf), 0.0);
        check("exp(NaN)", math_exp(f64::NAN), f64::NAN);
        check("exp(710)", math_exp(710.0), inf);
        check("exp(1e300)", math_exp(1e300), inf);
        check("exp(-746)", math_exp(-746.0), 0.0);
        check("exp(-1e300)", math_exp(-1e300), 0.0);
        // The ends of the range: the largest finite result, the smallest subnormal.
        check(
            "exp(overflow threshold)",
            math_exp(MATH_EXP_OVERFLOW),
            MATH_EXP_OVERFLOW.exp(),
        );
        assert!(math_exp(MATH_EXP_OVERFLOW).is_finite());
        check("exp(-745.1)", math_exp(-745.1), 5e-324);
        check("exp(tiny)", math_exp(1e-300), 1.0);
        assert!(math_exp(-740.0) > 0.0 && math_exp(-740.0) < f64::MIN_POSITIVE);
    }

    #[test]
    fn special_values_of_log() {
        let inf = f64::INFINITY;
        check("log(1)", math_log(1.0), 0.0);
        check("log(0)", math_log(0.0), -inf);
        check("log(-0)", math_log(-0.0), -inf);
        check("log(inf)", math_log(inf), inf);
        check("log(-1)", math_log(-1.0), f64::NAN);
        check("log(-tiny)", math_log(-5e-324), f64::NAN);
        check("log(-inf)", math_log(-inf), f64::NAN);
        check("log(NaN)", math_log(f64::NAN), f64::NAN);
        check("log(2)", math_log(2.0), std::f64::consts::LN_2);
        check("log(0.5)", math_log(0.5), -std::f64::consts::LN_2);
        check("log(e)", math_log(std::f64::consts::E), 1.0);
        check("log(max)", math_log(f64::MAX), f64::MAX.ln());
        check("log(min subnormal)", math_log(5e-324), (5e-324f64).ln());
        check(
            "log(min normal)",
            math_log(f64::MIN_POSITIVE),
            f64::MIN_POSITIVE.ln(),
        );
    }
}
