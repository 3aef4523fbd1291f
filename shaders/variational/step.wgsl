// One invocation marches one member of a variational ensemble, an initial-value problem of
// a first-order Lagrangian L(q, q̇, t; θ) with window constraints φ_w and holonomic
// constraints φ_h, through `step_count` steps of the discrete Euler–Lagrange equations
// (src/families/variational/ivp.rs). Step k solves, for the increment Δ = q_{k+1} − q_k and
// the multipliers λ_k (c_w), μ_k (c_h), the NS = D + CW + CH equations
//
//   p_k + D₁L_d(q_k, q_k + Δ) + f_d⁻ + h D₁φ_wᵀ λ_k + h ∇φ_h(q_k, t_k)ᵀ μ_k = 0,
//   φ_w(q_k, q_k + Δ) = 0,   φ_h(q_k + Δ, t_k + h) = 0,
//
// (f_d⁻ = f_d⁺ = (h/2) f at the rule's constraint jet: the generalised forces by
// Lagrange–d'Alembert where the model has them, else 0) by Newton's method with the exact
// Jacobian from the previous increment (h q̇_0 at the first step) and λ = μ = 0; it stops
// one evaluation after the update's largest entry is at most the tolerance times
// max(1, ‖q_k + Δ‖_∞), or fails: NOT_FINITE (a residual, matrix entry or the new momentum
// not finite), SINGULAR (a zero diagonal of U), NO_CONVERGENCE (MAX_ITERATIONS updates). Then p_{k+1} = D₂L_d + f_d⁺ + h D₂φ_wᵀ λ_k, the energy
// E = q̇ · ∂L/∂q̇ − L at the rule's constraint jet of the step, q ← q + Δ (Kahan), and with a
// symmetry the momentum map J = p · ξ(q).
//
// The model arrives as the generated module `variational_model`
// (src/families/variational/shape.rs): the tapes `vl_lagrangian`, `vl_holonomic`,
// `vl_window`, `vl_forces`, `vl_energy`, `vl_symmetry` over v = [z (M = 2D), t, θ], and
// the rule's `window_terms(t_k, h)` (gw: the augmented gradient over (q_k, q_{k+1}), the
// forces' (h/2) f included; hw: the block ∂²/∂q_k∂q_{k+1} of its Hessian; phiw, jw: φ_w
// and its Jacobian over (q_k, q_{k+1})) and `step_energy(t_k, h)`. The Newton matrix is
// factorised and solved in nalgebra's order by the generated module `variational_solver`.
//
// Maxima are NaN-skipping as Rust's f64::max (`larger`); the drifts keep their first value,
// their last and the largest |value − first| (Drift in src/families/variational/kernel.rs).
// NaNs come from the constants buffer (CONST_NAN): WGSL has no NaN literal.
//
// The engine prepends `alias real`, WG, REAL_MAX, REAL_EPSILON, the specialisation
// constants D, CW, CH, CW_ARRAY, CH_ARRAY, C = CW + CH, C_ARRAY, NP, NP_ARRAY, M = 2D,
// NV = M + 1 + NP, NS, NS_SQUARED, CH_D = CH·D, HOLONOMIC = min(CH, 1), HOLONOMIC_OUT,
// MAX_ITERATIONS, SYMMETRY, UNROLL, the STATE_*, RECORD_*, PARAM_* and CONST_* offsets of
// the layouts declared in shape.rs, and the bindings (src/kernels/abi.rs). CPU twin:
// `variational_step_twin` in src/families/variational/twin.rs (the same operations in the
// same order).
#import records
#import finite
#import compensated
#import variational_model
#import variational_solver

const OK: u32 = 0u;
const NO_CONVERGENCE: u32 = 1u;
const SINGULAR: u32 = 2u;
const NOT_FINITE: u32 = 3u;

var<private> theta: array<real, NP_ARRAY>;
var<private> q: array<real, D>;
var<private> carry: array<real, D>;
var<private> p: array<real, D>;
// The increment: the guess, Newton's iterate, the step's Δ.
var<private> delta: array<real, D>;
var<private> lambda: array<real, CW_ARRAY>;
var<private> mu: array<real, CH_ARRAY>;
var<private> multipliers: array<real, C_ARRAY>;
// window_terms' outputs.
var<private> gw: array<real, M>;
var<private> hw: array<real, D * D>;
var<private> phiw: array<real, CW_ARRAY>;
var<private> jw: array<real, CW_ARRAY * M>;
// ∂φ_h/∂q at (q_k, t_k).
var<private> jhere: array<real, CH_ARRAY * D>;
var<private> matrix: array<real, NS * NS>;
var<private> rhs: array<real, NS>;
var<private> pivot: array<u32, NS>;
// A converged step's p_{k+1}, Newton updates, constraint and equation residuals.
var<private> momentum_next: array<real, D>;
var<private> step_iterations: u32;
var<private> step_constraint: real;
var<private> step_equation: real;
// What the member carries between steps (STATE).
var<private> step_energy_value: real;
var<private> code: real;
var<private> iterations: real;
var<private> constraint_residual: real;
var<private> equation_residual: real;
var<private> energy_drift: vec3<real>;
var<private> momentum_drift: vec3<real>;
// 0 while the member runs, else the step whose solve failed.
var<private> status: real;

// max(a, b) as Rust's f64::max for an a that is not NaN: b when b > a.
fn larger(a: real, b: real) -> real {
    return select(a, b, b > a);
}

// Whether v is NaN (neither finite nor beyond REAL_MAX).
fn is_nan(v: real) -> bool {
    return !(is_finite(v) || abs(v) > REAL_MAX);
}

// Drift::add: (first, last, largest |value − first|).
fn drift_add(drift: vec3<real>, value: real) -> vec3<real> {
    var first = drift.x;
    if (is_nan(first)) {
        first = value;
    }
    return vec3<real>(first, value, larger(drift.z, abs(value - first)));
}

// [φ_h, ∂φ_h/∂q, ∂²φ_h/∂q²] at the point x (velocities 0) and time t.
fn holonomic_terms(x: array<real, D>, t: real) -> array<real, HOLONOMIC_OUT> {
    var v: array<real, NV>;
    #for c in D
        v[c] = x[c];
        v[D + c] = real(0.0);
    #end
    v[M] = t;
    #for j in NP
        v[M + 1u + j] = theta[j];
    #end
    var out = array<real, HOLONOMIC_OUT>();
    #for j in HOLONOMIC
        out = vl_holonomic(v);
    #end
    return out;
}

// J = p · ξ(q), ξ at t = 0, summed from the first product.
fn momentum_map() -> real {
    var v: array<real, NV>;
    #for c in D
        v[c] = q[c];
        v[D + c] = real(0.0);
    #end
    v[M] = real(0.0);
    #for j in NP
        v[M + 1u + j] = theta[j];
    #end
    var total = real(0.0);
    #for s in SYMMETRY
        let xi = vl_symmetry(v);
        total = p[0] * xi[0];
        #for c in D
            if (c > 0u) {
                total = total + p[c] * xi[c];
            }
        #end
    #end
    return total;
}

// Newton for the step from q_k at t_k from the guess in `delta`; OK with the step in
// delta, lambda, mu, momentum_next and step_*, else the failure.
fn march(t_k: real, h: real, tolerance: real, tiny: real) -> u32 {
    #for j in CW
        lambda[j] = real(0.0);
    #end
    #for j in CH
        mu[j] = real(0.0);
    #end
    if (CH > 0u) {
        let here = holonomic_terms(q, t_k);
        #for e in CH_D
            jhere[e] = here[CH + e];
        #end
    }
    var converged = false;
    var magnitude: array<real, D>;
    for (var iteration = 1u; iteration <= MAX_ITERATIONS + 1u; iteration++) {
        var next: array<real, D>;
        #for c in D
            next[c] = q[c] + delta[c];
        #end
        window_terms(t_k, h);
        let there = holonomic_terms(next, t_k + h);
        #for c in D
            {
                var r = p[c] + gw[c];
                magnitude[c] = abs(p[c]) + abs(gw[c]);
                #for j in CH
                    let term = h * jhere[j * D + c] * mu[j];
                    r = r + term;
                    magnitude[c] = magnitude[c] + abs(term);
                #end
                rhs[c] = r;
            }
        #end
        #for j in CW
            rhs[D + j] = phiw[j];
        #end
        #for j in CH
            rhs[D + CW + j] = there[j];
        #end
        var finite = true;
        #for e in NS
            finite = finite && is_finite(rhs[e]);
        #end
        if (!finite) {
            return NOT_FINITE;
        }
        if (converged) {
            var constraint = real(0.0);
            #for j in CW
                constraint = larger(constraint, abs(phiw[j]));
            #end
            #for j in CH
                constraint = larger(constraint, abs(there[j]));
            #end
            var largest = real(0.0);
            var scale = real(0.0);
            #for c in D
                largest = larger(largest, abs(rhs[c]));
            #end
            #for c in D
                scale = larger(scale, abs(magnitude[c]));
            #end
            step_equation = largest / larger(scale, tiny);
            step_constraint = constraint;
            #for c in D
                momentum_next[c] = gw[D + c];
                finite = finite && is_finite(gw[D + c]);
            #end
            if (!finite) {
                return NOT_FINITE;
            }
            step_iterations = iteration - 1u;
            return OK;
        }
        if (iteration > MAX_ITERATIONS) {
            break;
        }
        #for e in NS_SQUARED
            matrix[e] = real(0.0);
        #end
        #for c in D
            #for c2 in D
                matrix[c * NS + c2] = hw[c * D + c2];
            #end
            #for j in CW
                matrix[c * NS + D + j] = h * jw[j * M + c];
            #end
            #for j in CH
                matrix[c * NS + D + CW + j] = h * jhere[j * D + c];
            #end
        #end
        #for j in CW
            #for c2 in D
                matrix[(D + j) * NS + c2] = jw[j * M + D + c2];
            #end
        #end
        #for j in CH
            #for c2 in D
                matrix[(D + CW + j) * NS + c2] = there[CH + j * D + c2];
            #end
        #end
        #for e in NS_SQUARED
            finite = finite && is_finite(matrix[e]);
        #end
        if (!finite) {
            return NOT_FINITE;
        }
        factorise();
        if (!solve()) {
            return SINGULAR;
        }
        var change = real(0.0);
        #for c in D
            delta[c] = delta[c] - rhs[c];
            change = larger(change, abs(rhs[c]));
        #end
        #for j in CW
            lambda[j] = lambda[j] - rhs[D + j];
        #end
        #for j in CH
            mu[j] = mu[j] - rhs[D + CW + j];
        #end
        var scale = real(1.0);
        #for c in D
            scale = larger(scale, abs(q[c] + delta[c]));
        #end
        converged = change <= tolerance * scale;
    }
    return NO_CONVERGENCE;
}

// Global step `done` (from t_k = (done − 1) h).
fn advance(done: u32, h: real, tolerance: real, tiny: real) {
    if (status != real(0.0)) {
        return;
    }
    let t_k = real(done - 1u) * h;
    let outcome = march(t_k, h, tolerance, tiny);
    if (outcome == OK) {
        iterations = iterations + real(step_iterations);
        constraint_residual = larger(constraint_residual, step_constraint);
        equation_residual = larger(equation_residual, step_equation);
        step_energy_value = step_energy(t_k, h);
        energy_drift = drift_add(energy_drift, step_energy_value);
        #for c in D
            {
                let updated = kahan(q[c], carry[c], delta[c]);
                q[c] = updated.x;
                carry[c] = updated.y;
                p[c] = momentum_next[c];
            }
        #end
        #for j in CW
            multipliers[j] = lambda[j];
        #end
        #for j in CH
            multipliers[CW + j] = mu[j];
        #end
        if (SYMMETRY == 1u) {
            momentum_drift = drift_add(momentum_drift, momentum_map());
        }
        return;
    }
    let nan = constants[CONST_NAN];
    code = real(outcome);
    status = real(done);
    #for c in D
        q[c] = nan;
    #end
    #for j in C
        multipliers[j] = nan;
    #end
    step_energy_value = nan;
}

var<private> member: u32;

// Writes record slot `slot`.
fn record(slot: u32) {
    let base = slot * RECORD_ENTRIES;
    let members = dispatch.members;
    #for c in D
        records[(base + RECORD_PATH + c) * members + member] = q[c];
    #end
    #for j in C
        records[(base + RECORD_MULTIPLIERS + j) * members + member] = multipliers[j];
    #end
    records[(base + RECORD_ENERGY) * members + member] = step_energy_value;
    if (SYMMETRY == 1u) {
        records[(base + RECORD_MOMENTUM) * members + member] =
            select(constants[CONST_NAN], momentum_drift.y, status == real(0.0));
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let members = dispatch.members;
    let i = gid.y * dispatch.row_width + gid.x;
    if (i >= members) {
        return;
    }
    member = i;
    let h = constants[CONST_H];
    // In f32 Newton cannot resolve updates below a few units of the last place.
    let tolerance = select(
        constants[CONST_TOLERANCE],
        max(constants[CONST_TOLERANCE], real(4.0) * REAL_EPSILON),
        REAL_EPSILON > real(1e-10)
    );
    // The smallest positive normal real: 2⁻¹⁰²² = (2⁻¹⁰⁰)¹⁰ 2⁻²² by exact products in f64
    // (CONST_TINY = 2⁻¹⁰⁰; f32 holds no 2⁻¹⁰²²), f32's own in f32.
    let t = constants[CONST_TINY];
    let t2 = t * t;
    let t4 = t2 * t2;
    let t8 = t4 * t4;
    let tiny = select(
        t8 * t2 * real(2.384185791015625e-7),
        real(1.1754943508222875e-38),
        REAL_EPSILON > real(1e-10)
    );
    #for j in NP
        theta[j] = params[(PARAM_THETA + j) * members + i];
    #end
    #for c in D
        q[c] = state[(STATE_Q + c) * members + i];
        carry[c] = state[(STATE_CARRY + c) * members + i];
        p[c] = state[(STATE_P + c) * members + i];
        delta[c] = state[(STATE_GUESS + c) * members + i];
    #end
    #for j in C
        multipliers[j] = state[(STATE_MULTIPLIERS + j) * members + i];
    #end
    step_energy_value = state[STATE_STEP_ENERGY * members + i];
    code = state[STATE_CODE * members + i];
    iterations = state[STATE_ITERATIONS * members + i];
    constraint_residual = state[STATE_CONSTRAINT_RESIDUAL * members + i];
    equation_residual = state[STATE_EQUATION_RESIDUAL * members + i];
    energy_drift = vec3<real>(
        state[STATE_ENERGY_DRIFT * members + i],
        state[(STATE_ENERGY_DRIFT + 1u) * members + i],
        state[(STATE_ENERGY_DRIFT + 2u) * members + i]
    );
    if (SYMMETRY == 1u) {
        momentum_drift = vec3<real>(
            state[STATE_MOMENTUM_DRIFT * members + i],
            state[(STATE_MOMENTUM_DRIFT + 1u) * members + i],
            state[(STATE_MOMENTUM_DRIFT + 2u) * members + i]
        );
    }
    status = state[STATE_STATUS * members + i];

    var slot = 0u;
    for (var k = 0u; k < dispatch.step_count; k++) {
        let done = dispatch.step_begin + k + 1u;
        advance(done, h, tolerance, tiny);
        if (records_step(done)) {
            record(slot);
            slot += 1u;
        }
    }

    #for c in D
        state[(STATE_Q + c) * members + i] = q[c];
        state[(STATE_CARRY + c) * members + i] = carry[c];
        state[(STATE_P + c) * members + i] = p[c];
        state[(STATE_GUESS + c) * members + i] = delta[c];
    #end
    #for j in C
        state[(STATE_MULTIPLIERS + j) * members + i] = multipliers[j];
    #end
    state[STATE_STEP_ENERGY * members + i] = step_energy_value;
    state[STATE_CODE * members + i] = code;
    state[STATE_ITERATIONS * members + i] = iterations;
    state[STATE_CONSTRAINT_RESIDUAL * members + i] = constraint_residual;
    state[STATE_EQUATION_RESIDUAL * members + i] = equation_residual;
    state[STATE_ENERGY_DRIFT * members + i] = energy_drift.x;
    state[(STATE_ENERGY_DRIFT + 1u) * members + i] = energy_drift.y;
    state[(STATE_ENERGY_DRIFT + 2u) * members + i] = energy_drift.z;
    if (SYMMETRY == 1u) {
        state[STATE_MOMENTUM_DRIFT * members + i] = momentum_drift.x;
        state[(STATE_MOMENTUM_DRIFT + 1u) * members + i] = momentum_drift.y;
        state[(STATE_MOMENTUM_DRIFT + 2u) * members + i] = momentum_drift.z;
    }
    state[STATE_STATUS * members + i] = status;
}
