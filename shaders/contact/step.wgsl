// One invocation advances one contact-Hamiltonian member H = ½ pᵀ P p + B(t, x) + C(t) z
// through `step_count` steps, by a composition of Strang splittings of the exact flows
//
//   φ_A(τ): x ← x + τ P p, z ← z + τ ½ pᵀ P p          (time advances here)
//   φ_B(τ): p ← p − τ ∇B(t, x), z ← z − τ B(t, x)      (t frozen)
//   φ_C(τ): (p, z) ← e^{−C(t) τ} (p, z)                (t frozen)
//   S(τ) = φ_C(τ/2) φ_B(τ/2) φ_A(τ) φ_B(τ/2) φ_C(τ/2),  Ψ(h) = S(γ_s h) … S(γ_1 h)
//
// where stage i's opening half samples B and C at stream point i and its closing half at
// the point constants[CONST_CLOSING + i]: i + 1 (time sampled at the sub-step's ends) or i
// (at its midpoint, the time translation split outermost); the stream's points are placed
// accordingly by the plan (ContactMethod::offsets),
//
// or (HERGLOTZ = 1) by the composition Ψ(h) = G(γ_s h) … G(γ_1 h) of the explicit
// second-order Herglotz step G(τ), stage i sampling B at stream points 2i and 2i + 2 and
// C at 2i + 1 (its start, end and midpoint); see
// src/families/contact/flows.rs for the derivations. CPU twin: `contact_step_twin` (and
// `contact_step`) in src/families/contact/twin.rs.
//
// The engine prepends `alias real`, WG, N (degrees of freedom), STAGES (γ's), HERGLOTZ,
// POINTS (stream points per step: STAGES + 1, or 2 STAGES + 1 for Herglotz), TIME_CHANNELS, FORCINGS,
// STREAM_DAMPING, STREAM_SPIN and STREAM_TIME (channel indices), TIME_IN_STREAM and
// POTENTIAL_EXPRESSION (0 or 1), the PARAM_*, STATE_*, RECORD_* and CONST_* offsets
// generated from the layouts in src/families/contact/shape.rs (a term is present when its
// PARAM_*_LEN is non-zero), and the bindings. params are structure-of-arrays across
// members; the stream holds, per step and point, the forcing signals, c(t) of
// C = α c(t), (a/r)³ cos 2f, (a/r)³ sin 2f, and t when a potential expression uses it.
// The module potential_expression is generated for the run
// (src/families/contact/expression.rs): `potential_expression(v)` returns [B, ∇ₓB] at
// v = [x, t] (a stub returning zeros when POTENTIAL_EXPRESSION = 0).
#import records
#import finite
#import math
#import potential_expression

struct Phase {
    x: array<real, N>,
    p: array<real, N>,
    z: real,
}

// B(t, x) and ∇B(t, x).
struct PotentialValue {
    value: real,
    g: array<real, N>,
}

fn param(entry: u32, i: u32) -> real {
    return params[entry * dispatch.members + i];
}

// Time function `channel` at stream point `point` of dispatch-local step k.
fn time_fn(k: u32, point: u32, channel: u32) -> real {
    return stream[(k * POINTS + point) * TIME_CHANNELS + channel];
}

fn potential(i: u32, k: u32, point: u32, x: array<real, N>) -> PotentialValue {
    var out: PotentialValue;
    out.value = real(0.0);
    for (var r = 0u; r < N; r++) {
        out.g[r] = real(0.0);
    }
    if (PARAM_HARMONIC_LEN > 0u) {
        for (var r = 0u; r < N; r++) {
            var kx = real(0.0);
            for (var c = 0u; c < N; c++) {
                kx += param(PARAM_HARMONIC + r * N + c, i) * x[c];
            }
            out.g[r] += kx;
            out.value += real(0.5) * x[r] * kx;
        }
    }
    if (PARAM_QUARTIC_LEN > 0u) {
        let beta = param(PARAM_QUARTIC, i);
        for (var r = 0u; r < N; r++) {
            let cube = x[r] * x[r] * x[r];
            out.g[r] += beta * cube;
            out.value += real(0.25) * beta * cube * x[r];
        }
    }
    if (PARAM_PENDULUM_LEN > 0u) {
        let omega = param(PARAM_PENDULUM, i);
        let w2 = omega * omega;
        for (var r = 0u; r < N; r++) {
            out.g[r] += w2 * math_sin(x[r]);
            out.value -= w2 * math_cos(x[r]);
        }
    }
    for (var j = 0u; j < FORCINGS; j++) {
        let s = time_fn(k, point, j);
        for (var r = 0u; r < N; r++) {
            let a = param(PARAM_FORCING + j * N + r, i);
            out.g[r] -= s * a;
            out.value -= s * a * x[r];
        }
    }
    if (PARAM_KEPLER_LEN > 0u) {
        let gamma = param(PARAM_KEPLER, i);
        var squared = real(0.0);
        for (var r = 0u; r < N; r++) {
            squared += x[r] * x[r];
        }
        let radius = sqrt(squared);
        // |x|³ as |x|² |x|: one rounding fewer than |x|·|x|·|x|, and nothing for a
        // compiler to rewrite (√s·√s → s) differently from the CPU twin.
        let cube = squared * radius;
        for (var r = 0u; r < N; r++) {
            out.g[r] += gamma * x[r] / cube;
        }
        out.value -= gamma / radius;
    }
    if (PARAM_SPIN_ORBIT_LEN > 0u) {
        let epsilon = param(PARAM_SPIN_ORBIT, i);
        let ac = time_fn(k, point, STREAM_SPIN);
        let as_ = time_fn(k, point, STREAM_SPIN + 1u);
        for (var r = 0u; r < N; r++) {
            let s2 = math_sin(real(2.0) * x[r]);
            let c2 = math_cos(real(2.0) * x[r]);
            out.g[r] += epsilon * (s2 * ac - c2 * as_);
            out.value -= real(0.5) * epsilon * (c2 * ac + s2 * as_);
        }
    }
    if (POTENTIAL_EXPRESSION == 1u) {
        var v: array<real, N + 1u>;
        for (var r = 0u; r < N; r++) {
            v[r] = x[r];
        }
        v[N] = real(0.0);
        if (TIME_IN_STREAM == 1u) {
            v[N] = time_fn(k, point, STREAM_TIME);
        }
        let e = potential_expression(v);
        for (var r = 0u; r < N; r++) {
            out.g[r] += e[r + 1u];
        }
        out.value += e[0];
    }
    return out;
}

// C(t) = α c(t) at a stream point.
fn damping_rate(i: u32, k: u32, point: u32) -> real {
    if (PARAM_DAMPING_LEN == 0u) {
        return real(0.0);
    }
    return param(PARAM_DAMPING, i) * time_fn(k, point, STREAM_DAMPING);
}

// ½ vᵀ P v and P v.
struct Kinetic {
    value: real,
    pv: array<real, N>,
}

fn kinetic(i: u32, v: array<real, N>) -> Kinetic {
    var out: Kinetic;
    var sum = real(0.0);
    for (var r = 0u; r < N; r++) {
        var acc = real(0.0);
        for (var c = 0u; c < N; c++) {
            acc += param(PARAM_KINETIC + r * N + c, i) * v[c];
        }
        out.pv[r] = acc;
        sum += v[r] * acc;
    }
    out.value = real(0.5) * sum;
    return out;
}

fn flow_a(s: Phase, i: u32, tau: real) -> Phase {
    var out = s;
    let a = kinetic(i, s.p);
    for (var r = 0u; r < N; r++) {
        out.x[r] = s.x[r] + tau * a.pv[r];
    }
    out.z = s.z + tau * a.value;
    return out;
}

fn flow_b(s: Phase, i: u32, k: u32, point: u32, tau: real) -> Phase {
    var out = s;
    let b = potential(i, k, point, s.x);
    for (var r = 0u; r < N; r++) {
        out.p[r] = s.p[r] - tau * b.g[r];
    }
    out.z = s.z - tau * b.value;
    return out;
}

fn flow_c(s: Phase, i: u32, k: u32, point: u32, tau: real) -> Phase {
    var out = s;
    let decay = math_exp(-damping_rate(i, k, point) * tau);
    for (var r = 0u; r < N; r++) {
        out.p[r] = s.p[r] * decay;
    }
    out.z = s.z * decay;
    return out;
}

// G(h) from stream point `start` (B there and at start + 2, C at start + 1).
fn herglotz(s: Phase, i: u32, k: u32, start: u32, h: real) -> Phase {
    var out = s;
    let cm = real(0.5) * h * damping_rate(i, k, start + 1u);
    let b0 = potential(i, k, start, s.x);
    var w: array<real, N>;
    for (var r = 0u; r < N; r++) {
        w[r] = (real(1.0) - cm) * s.p[r] - real(0.5) * h * b0.g[r];
    }
    let a = kinetic(i, w);
    let wpw = a.value * real(2.0);
    for (var r = 0u; r < N; r++) {
        out.x[r] = s.x[r] + h * a.pv[r];
    }
    let b1 = potential(i, k, start + 2u, out.x);
    for (var r = 0u; r < N; r++) {
        out.p[r] = (w[r] - real(0.5) * h * b1.g[r]) / (real(1.0) + cm);
    }
    out.z = ((real(1.0) - cm) * s.z + h * (real(0.5) * wpw - real(0.5) * (b0.value + b1.value)))
        / (real(1.0) + cm);
    return out;
}

fn contact_step(s: Phase, i: u32, k: u32, h: real) -> Phase {
    var out = s;
    if (HERGLOTZ == 1u) {
        for (var stage = 0u; stage < STAGES; stage++) {
            out = herglotz(out, i, k, 2u * stage, h * constants[CONST_GAMMA + stage]);
        }
        return out;
    }
    for (var stage = 0u; stage < STAGES; stage++) {
        let tau = h * constants[CONST_GAMMA + stage];
        let half = real(0.5) * tau;
        out = flow_c(out, i, k, stage, half);
        out = flow_b(out, i, k, stage, half);
        out = flow_a(out, i, tau);
        let closing = u32(constants[CONST_CLOSING + stage]);
        out = flow_b(out, i, k, closing, half);
        out = flow_c(out, i, k, closing, half);
    }
    return out;
}

fn hamiltonian(s: Phase, i: u32, k: u32, point: u32) -> real {
    let a = kinetic(i, s.p);
    let b = potential(i, k, point, s.x);
    return a.value + b.value + damping_rate(i, k, point) * s.z;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * dispatch.row_width + gid.x;
    if (i >= dispatch.members) {
        return;
    }
    let members = dispatch.members;
    let h = constants[CONST_H];
    var s: Phase;
    for (var r = 0u; r < N; r++) {
        s.x[r] = state[(STATE_X + r) * members + i];
        s.p[r] = state[(STATE_P + r) * members + i];
    }
    s.z = state[STATE_Z * members + i];
    // 0 while finite, else the first step after which x, p or z were not.
    var status = state[STATE_STATUS * members + i];
    var slot = 0u;
    for (var k = 0u; k < dispatch.step_count; k++) {
        s = contact_step(s, i, k, h);
        let done = dispatch.step_begin + k + 1u;
        if (status == real(0.0)) {
            var finite = is_finite(s.z);
            for (var r = 0u; r < N; r++) {
                finite = finite && is_finite(s.x[r]) && is_finite(s.p[r]);
            }
            if (!finite) {
                status = real(done);
            }
        }
        if (records_step(done)) {
            let base = slot * RECORD_ENTRIES;
            for (var r = 0u; r < N; r++) {
                records[(base + RECORD_X + r) * members + i] = s.x[r];
                records[(base + RECORD_P + r) * members + i] = s.p[r];
            }
            records[(base + RECORD_Z) * members + i] = s.z;
            records[(base + RECORD_HAMILTONIAN) * members + i] = hamiltonian(s, i, k, POINTS - 1u);
            slot += 1u;
        }
    }
    for (var r = 0u; r < N; r++) {
        state[(STATE_X + r) * members + i] = s.x[r];
        state[(STATE_P + r) * members + i] = s.p[r];
    }
    state[STATE_Z * members + i] = s.z;
    state[STATE_STATUS * members + i] = status;
}
