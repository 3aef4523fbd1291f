// The math library for `alias real = f32;`: the same names as math_f64.wgsl, calling the
// WGSL builtins (whose accuracy is the adapter's; Vulkan bounds sin and cos absolutely, and
// only on [−π, π]). Arguments of sin and cos are first reduced to [−π, π] by
// x − 2π round(x / 2π) — exact for |x| ≤ π, and for larger |x| an error of about ulp(x),
// where the builtins alone may return anything (angles of long runs grow to 10⁴ rad).
// See src/kernels/math.rs.

const MATH_TWO_PI_F32: f32 = 6.2831855;
const MATH_INV_TWO_PI_F32: f32 = 0.15915494;

fn math_reduce_f32(x: real) -> real {
    return x - MATH_TWO_PI_F32 * round(x * MATH_INV_TWO_PI_F32);
}

fn math_sin(x: real) -> real {
    return sin(math_reduce_f32(x));
}

fn math_cos(x: real) -> real {
    return cos(math_reduce_f32(x));
}

fn math_exp(x: real) -> real {
    return exp(x);
}

fn math_log(x: real) -> real {
    return log(x);
}
