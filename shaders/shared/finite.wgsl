// Finiteness without isnan/isinf (WGSL has neither): every comparison with NaN is false, so
// |v| ≤ REAL_MAX (the largest finite real, prepended by the engine) holds exactly for
// finite v. Host twin: f64::is_finite.

fn is_finite(v: real) -> bool {
    return abs(v) <= REAL_MAX;
}

// The running maximum of |r| that, unlike max(), keeps a NaN or an infinity once one
// arrives instead of skipping it. Host twin: `running_max` in src/compensated.rs.
fn running_max(current: real, r: real) -> real {
    if (is_finite(current) && !(r <= current)) {
        return r;
    }
    return current;
}
