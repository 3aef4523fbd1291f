// The math library for `alias real = f32;`: the same names as math_f64.wgsl, calling the
// WGSL builtins (whose accuracy is the adapter's; Vulkan bounds sin and cos absolutely).
// See src/kernels/math.rs.

fn math_sin(x: real) -> real {
    return sin(x);
}

fn math_cos(x: real) -> real {
    return cos(x);
}

fn math_exp(x: real) -> real {
    return exp(x);
}

fn math_log(x: real) -> real {
    return log(x);
}
