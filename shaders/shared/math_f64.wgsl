// f64 sin, cos, exp and log for harbor's kernels, for `alias real = f64;` (prepended by
// the kernel's specialisation). CPU twin, accuracy and ranges: src/kernels/math.rs, whose
// `CONSTANTS` a unit test ties to the MATH_* constants below, bit for bit.
//
//   math_sin(x), math_cos(x): |x| ≤ 2^20·π/2 ≈ 1.647e6; beyond, absolute error ≈ ulp(x)/2
//                              up to 2^52 and NaN from there on (no significant digit);
//                              sin(±0) = ±0, ±∞ and NaN give NaN.
//   math_exp(x):              x > 709.78… → +∞, x < −745.13… → +0, exp(−∞) = 0, NaN → NaN;
//                              subnormal results are rounded once.
//   math_log(x):              log(±0) = −∞, log(+∞) = +∞, log(x < 0) = NaN (√x), NaN → NaN.
//
// Only operations IEEE 754 performs exactly or rounds correctly: + − × ÷, sqrt, round
// (ties to even), floor, abs, select, comparisons, and ldexp(1, e) for exact powers of two.
// No fma and no builtin transcendental (GLSL.std.450 has them for f32 only). Every
// expression is parenthesised as in the twin, so an adapter that rounds each operation and
// does not contract a·b + c into an fma reproduces the CPU results to the last bit. The
// compensated steps avoid the shapes Mesa's NIR reassociates ((a + b) − a → b,
// 1 − (1 − h) → h, (p·q + r·s) + c → (p·q + c) + r·s), so lavapipe matches too. There is no
// access to the bits of an f64 (naga rejects bitcast<vec2<u32>>(f64), and frexp on f64
// needs SHADER_INT64): log finds the exponent by comparisons with exact powers of two.
// The algorithms are fdlibm's / FreeBSD msun's (e_rem_pio2.c, k_sin.c, k_cos.c, e_exp.c,
// e_log.c), restated for this machine model.

// Reduction modulo π/2 (fdlibm e_rem_pio2.c): 2/π, and π/2 split into three 33-bit
// parts and a 53-bit tail, so n·MATH_PIO2_{1,2,3} is exact for |n| ≤ 2^20.
const MATH_INVPIO2: real = 6.366197723675814e-1;
const MATH_PIO2_1: real = 1.5707963267341256;
const MATH_PIO2_2: real = 6.077100506303966e-11;
const MATH_PIO2_3: real = 2.0222662487111665e-21;
const MATH_PIO2_3T: real = 8.4784276603689e-32;
// |x| from which sin and cos return NaN: 2^52, where ulp(x) = 1.
const MATH_TRIG_LIMIT: real = 0x1p52;
// 2^±53, to split x²/2 in the cos kernel.
const MATH_TWO_P53: real = 0x1p53;
const MATH_TWO_M53: real = 0x1p-53;
// sin(x) ≈ x + S1·x³ + … + S6·x¹³ on [−π/4, π/4] (k_sin.c, |error| ≤ 2^−58).
const MATH_S1: real = -1.6666666666666632e-1;
const MATH_S2: real = 8.33333333332249e-3;
const MATH_S3: real = -1.984126982985795e-4;
const MATH_S4: real = 2.7557313707070068e-6;
const MATH_S5: real = -2.5050760253406863e-8;
const MATH_S6: real = 1.58969099521155e-10;
// cos(x) ≈ 1 − x²/2 + C1·x⁴ + … + C6·x¹⁴ on [−π/4, π/4] (k_cos.c, |error| ≤ 2^−58).
const MATH_C1: real = 4.16666666666666e-2;
const MATH_C2: real = -1.388888888887411e-3;
const MATH_C3: real = 2.480158728947673e-5;
const MATH_C4: real = -2.7557314351390663e-7;
const MATH_C5: real = 2.087572321298175e-9;
const MATH_C6: real = -1.1359647557788195e-11;
// exp (e_exp.c): overflow and underflow thresholds, 1/ln 2, ln 2 = LN2_HI + LN2_LO with
// k·LN2_HI exact for |k| < 2^21, and the Remez coefficients of r·(e^r + 1)/(e^r − 1).
const MATH_EXP_OVERFLOW: real = 709.782712893384;
const MATH_EXP_UNDERFLOW: real = -745.1332191019411;
const MATH_INVLN2: real = 1.4426950408889634;
const MATH_LN2_HI: real = 6.931471803691238e-1;
const MATH_LN2_LO: real = 1.9082149292705877e-10;
const MATH_P1: real = 1.6666666666666602e-1;
const MATH_P2: real = -2.7777777777015593e-3;
const MATH_P3: real = 6.613756321437934e-5;
const MATH_P4: real = -1.6533902205465252e-6;
const MATH_P5: real = 4.1381367970572385e-8;
// log (e_log.c): the Remez coefficients of (log(1+s) − log(1−s) − 2s)/s in s², …
const MATH_LG1: real = 6.666666666666735e-1;
const MATH_LG2: real = 3.999999999940942e-1;
const MATH_LG3: real = 2.857142874366239e-1;
const MATH_LG4: real = 2.2222198432149784e-1;
const MATH_LG5: real = 1.818357216161805e-1;
const MATH_LG6: real = 1.5313837699209373e-1;
const MATH_LG7: real = 1.4798198605116586e-1;
// … the bound of the reduced argument m ∈ [√2/2, √2), and the scaling of x into [1, 2):
// the smallest normal number, 2^54 for subnormal inputs, 2^±e for e = 512, 256, …, 1.
const MATH_SQRT2: real = 1.4142135623730951;
const MATH_MIN_NORMAL: real = 0x1p-1022;
const MATH_TWO_P54: real = 0x1p54;
const MATH_TWO_P512: real = 0x1p512;
const MATH_TWO_P256: real = 0x1p256;
const MATH_TWO_P128: real = 0x1p128;
const MATH_TWO_P64: real = 0x1p64;
const MATH_TWO_P32: real = 0x1p32;
const MATH_TWO_P16: real = 0x1p16;
const MATH_TWO_P8: real = 0x1p8;
const MATH_TWO_P4: real = 0x1p4;
const MATH_TWO_P2: real = 0x1p2;
const MATH_TWO_P1: real = 0x1p1;
const MATH_TWO_M512: real = 0x1p-512;
const MATH_TWO_M256: real = 0x1p-256;
const MATH_TWO_M128: real = 0x1p-128;
const MATH_TWO_M64: real = 0x1p-64;
const MATH_TWO_M32: real = 0x1p-32;
const MATH_TWO_M16: real = 0x1p-16;
const MATH_TWO_M8: real = 0x1p-8;
const MATH_TWO_M4: real = 0x1p-4;
const MATH_TWO_M2: real = 0x1p-2;
const MATH_TWO_M1: real = 0x1p-1;
// Special results made at run time (a constant infinity is a WGSL shader-creation
// error): the largest finite f64, 2^1023 and 10^300, whose products overflow.
const MATH_MAX: real = 1.7976931348623157e308;
const MATH_TWO_P1023: real = 0x1p1023;
const MATH_HUGE: real = 1e300;

// s = a + b rounded and the exact error e, s + e = a + b (Knuth's TwoSum, any magnitudes).
// b' = −(a − s) and a' = −(b' − s) equal the textbook s − a and s − b' exactly; written so
// because Mesa's NIR folds (a + b) − a to b (it treats naga's operations as reassociable).
fn math_two_sum(a: real, b: real) -> vec2<real> {
    let s = a + b;
    let bb = -(a - s);
    let av = -(bb - s);
    return vec2<real>(s, (a - av) + (b - bb));
}

// x = n·π/2 + (y0 + y1) with n = round(x·2/π): returns (y0, y1, n mod 4). Cody–Waite:
// x − n·P1 is exact, the next two parts are subtracted with TwoSum, the tail closes π/2
// to ~150 bits. Exact reduction for |x| ≤ 2^20·π/2. n = 0 returns x itself (keeps −0).
fn math_rem_pio2(x: real) -> vec3<real> {
    let n = round(x * MATH_INVPIO2);
    let r0 = x - n * MATH_PIO2_1;
    let a = math_two_sum(r0, -(n * MATH_PIO2_2));
    let b = math_two_sum(a.x, -(n * MATH_PIO2_3));
    let tail = (a.y + b.y) - n * MATH_PIO2_3T;
    let y = math_two_sum(b.x, tail);
    let q = n - 4.0 * floor(n * 0.25);
    let small = n == 0.0;
    return vec3<real>(select(y.x, x, small), select(y.y, 0.0, small), q);
}

// sin(x + y) for |x| ≲ π/4 and a tail |y| ≤ ulp(x)/2 (msun k_sin.c).
fn math_kernel_sin(x: real, y: real) -> real {
    let z = x * x;
    let w = z * z;
    let r = (MATH_S2 + z * (MATH_S3 + z * MATH_S4)) + (z * w) * (MATH_S5 + z * MATH_S6);
    let v = z * x;
    return x - (((z * ((0.5 * y) - (v * r))) - y) - v * MATH_S1);
}

// cos(x + y) for |x| ≲ π/4 and a tail |y| ≤ ulp(x)/2 (msun k_cos.c). msun's correction
// (1 − w) − hz, w = 1 − hz, is folded to 0 by NIR, which also reassociates sums whose inner
// sum adds two products; k = round(hz·2^53) gives the same w = 1 − k·2^−53 exactly and the
// correction (k − hz·2^53)·2^−53 exactly, in neither shape.
fn math_kernel_cos(x: real, y: real) -> real {
    let z = x * x;
    let w = z * z;
    let r = z * (MATH_C1 + z * (MATH_C2 + z * MATH_C3))
        + (w * w) * (MATH_C4 + z * (MATH_C5 + z * MATH_C6));
    let hz = 0.5 * z;
    let k = round(hz * MATH_TWO_P53);
    let v = 1.0 - k * MATH_TWO_M53;
    let tmp = (k - hz * MATH_TWO_P53) * MATH_TWO_M53;
    return v + (tmp + ((z * r) - (x * y)));
}

fn math_sin(x: real) -> real {
    let red = math_rem_pio2(x);
    let q = red.z;
    var v: real;
    if (q == 1.0 || q == 3.0) {
        v = math_kernel_cos(red.x, red.y);
    } else {
        v = math_kernel_sin(red.x, red.y);
    }
    return select(select(v, -v, q >= 2.0), sqrt(-abs(x)), abs(x) >= MATH_TRIG_LIMIT);
}

fn math_cos(x: real) -> real {
    let red = math_rem_pio2(x);
    let q = red.z;
    var v: real;
    if (q == 1.0 || q == 3.0) {
        v = math_kernel_sin(red.x, red.y);
    } else {
        v = math_kernel_cos(red.x, red.y);
    }
    return select(select(v, -v, q == 1.0 || q == 2.0), sqrt(-abs(x)), abs(x) >= MATH_TRIG_LIMIT);
}

// 2^e for an integer-valued e in [−1022, 1023] (exact).
fn math_pow2(e: real) -> real {
    return ldexp(real(1.0), i32(e));
}

// k = round(x/ln 2), r = (x − k·LN2_HI) − k·LN2_LO, e^r = 1 + r + r·c/(2 − c) with
// c = r − r²·P(r²) (msun e_exp.c), then 2^k as (y·2^a)·2^b, both factors normal, so a
// subnormal result is rounded once.
fn math_exp(x: real) -> real {
    let overflow = x > MATH_EXP_OVERFLOW;
    let underflow = x < MATH_EXP_UNDERFLOW;
    let xr = select(x, 0.0, overflow || underflow);
    let k_raw = round(xr * MATH_INVLN2);
    // NaN → k = 0, so the powers of two below stay in range; r carries the NaN.
    let k = select(0.0, k_raw, abs(k_raw) <= 1100.0);
    let hi = xr - k * MATH_LN2_HI;
    let lo = k * MATH_LN2_LO;
    let r = hi - lo;
    let t = r * r;
    let c = r - t * (MATH_P1 + t * (MATH_P2 + t * (MATH_P3 + t * (MATH_P4 + t * MATH_P5))));
    let y = 1.0 - ((lo - ((r * c) / (2.0 - c))) - hi);
    // 2^k = 2^a · 2^b: b = −1000 below the normal exponents, 1 for k = 1024, else 0.
    let b = select(select(real(0.0), real(1.0), k > 1023.0), real(-1000.0), k < -1021.0);
    let a = k - b;
    let scaled = (y * math_pow2(a)) * math_pow2(b);
    let huge = x * MATH_TWO_P1023;
    return select(select(scaled, huge, overflow), 0.0, underflow);
}

// (m, k) → (m·2^−e, k + e) if m ≥ 2^e.
fn math_log_down(mk: vec2<real>, e: real, scale: real) -> vec2<real> {
    let t = mk.x * scale;
    return select(mk, vec2<real>(t, mk.y + e), t >= 1.0);
}

// (m, k) → (m·2^e, k − e) if m < 2^(1−e).
fn math_log_up(mk: vec2<real>, e: real, scale: real) -> vec2<real> {
    let t = mk.x * scale;
    return select(mk, vec2<real>(t, mk.y - e), t < 2.0);
}

// x = 2^k·m, m ∈ [√2/2, √2), found by exact scalings; f = m − 1, s = f/(2 + f),
// ln(1 + f) = f − (f²/2 − s·(f²/2 + R(s²))) (msun e_log.c), in fdlibm's order with k·ln 2.
fn math_log(x: real) -> real {
    let sub = x < MATH_MIN_NORMAL;
    var mk = vec2<real>(select(x, x * MATH_TWO_P54, sub), select(real(0.0), real(-54.0), sub));
    mk = math_log_down(mk, 512.0, MATH_TWO_M512);
    mk = math_log_down(mk, 256.0, MATH_TWO_M256);
    mk = math_log_down(mk, 128.0, MATH_TWO_M128);
    mk = math_log_down(mk, 64.0, MATH_TWO_M64);
    mk = math_log_down(mk, 32.0, MATH_TWO_M32);
    mk = math_log_down(mk, 16.0, MATH_TWO_M16);
    mk = math_log_down(mk, 8.0, MATH_TWO_M8);
    mk = math_log_down(mk, 4.0, MATH_TWO_M4);
    mk = math_log_down(mk, 2.0, MATH_TWO_M2);
    mk = math_log_down(mk, 1.0, MATH_TWO_M1);
    mk = math_log_up(mk, 512.0, MATH_TWO_P512);
    mk = math_log_up(mk, 256.0, MATH_TWO_P256);
    mk = math_log_up(mk, 128.0, MATH_TWO_P128);
    mk = math_log_up(mk, 64.0, MATH_TWO_P64);
    mk = math_log_up(mk, 32.0, MATH_TWO_P32);
    mk = math_log_up(mk, 16.0, MATH_TWO_P16);
    mk = math_log_up(mk, 8.0, MATH_TWO_P8);
    mk = math_log_up(mk, 4.0, MATH_TWO_P4);
    mk = math_log_up(mk, 2.0, MATH_TWO_P2);
    mk = math_log_up(mk, 1.0, MATH_TWO_P1);
    let halve = mk.x >= MATH_SQRT2;
    let m = select(mk.x, mk.x * 0.5, halve);
    let dk = select(mk.y, mk.y + 1.0, halve);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (MATH_LG2 + w * (MATH_LG4 + w * MATH_LG6));
    let t2 = z * (MATH_LG1 + w * (MATH_LG3 + w * (MATH_LG5 + w * MATH_LG7)));
    let rr = t2 + t1;
    let hfsq = (0.5 * f) * f;
    let v = dk * MATH_LN2_HI - ((hfsq - ((s * (hfsq + rr)) + dk * MATH_LN2_LO)) - f);
    let minus_inf = -((abs(x) + MATH_HUGE) * MATH_HUGE);
    var out = select(v, x, x > MATH_MAX);
    out = select(out, minus_inf, x == 0.0);
    return select(out, sqrt(x), x < 0.0);
}
