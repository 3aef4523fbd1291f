// One invocation marches one member of a variational ensemble, an initial-value problem of
// a second-order Lagrangian L(q, q̇, q̈, t; θ) with holonomic constraints φ_h, through
// `step_count` steps of the central rule's discrete Euler–Lagrange equations, as the CPU
// reference does (src/families/variational/start.rs and march.rs, with ivp.rs's step):
//
// - step 1, the start: q_1 = q_0 + Δ_0 from the Taylor point y = h q̇ + (h²/2) q̈ moved
//   along ∇φ_h(q_1)ᵀ ν onto the constraints (Newton on (Δ_0, ν) for Δ_0 − y − ∇φ_hᵀ ν = 0,
//   φ_h(q_1) = 0; without constraints Δ_0 = y); the ghosts q_{−1} = q_0 − Δ_{−1},
//   Δ_{−1} = Δ_0 − h² q̈, and q_{−2} through the third difference 2h³ q⃛; then Newton on
//   (Δ_1, μ_0) for the discrete equation at point 0,
//     D₃L_d(w_{−1}) + D₂L_d(w_0) + D₁L_d(w_1) + h ∇φ_h(q_0)ᵀ μ_0 = 0,   φ_h(q_2) = 0,
//   (w_j the window centred at t_j, evaluated by the generated `window_terms`), from
//   Δ_1 = h q̇ + (3/2) h² q̈ + (7/6) h³ q⃛; its momenta p_1 = D₃L_d(w_0) + D₂L_d(w_1),
//   π_2 = D₃L_d(w_1), and the momentum map of the path ending at q_1,
//   J_0 = [D₃L_d(w_{−1}) + D₂L_d(w_0)] · ξ(q_0) + D₃L_d(w_0) · ξ(q_1);
// - step k + 1 ≥ 2, the march: Newton on (Δ_{k+1}, μ_k) for
//     p_k + D₁L_d(q_k, q_{k+1}, q_{k+1} + Δ) + h ∇φ_h(q_k, t_k)ᵀ μ_k = 0,
//     φ_h(q_{k+1} + Δ, t_k + 2h) = 0,
//   from the guess 2Δ_k − Δ_{k−1}; then p_{k+1} = π_{k+1} + D₂L_d(w_{k+1}),
//   π_{k+2} = D₃L_d(w_{k+1});
// - every step reports q_{k+1} (Kahan-compensated), μ, the Ostrogradsky energy of the step
//   from the windows centred at its ends (`ostrogradsky_energy`) and, with a symmetry, the
//   momentum map J = p_{k+1} · ξ(q_{k+1}) + π_{k+2} · ξ(q_{k+2}).
//
// Newton stops one evaluation after the update's largest entry is at most the tolerance
// times max(1, ‖q + Δ‖_∞), or fails: NOT_FINITE (a residual, a matrix entry of the
// equation's solve or a new momentum not finite), SINGULAR (a zero diagonal of U),
// NO_CONVERGENCE (MAX_ITERATIONS updates).
//
// The model arrives as the generated module `variational_second_order_model`
// (src/families/variational/second_order.rs): the tapes `vl_lagrangian`, `vl_holonomic`,
// `vl_symmetry` over v = [z (M = 3D), t, θ], the rule's `window_terms(t, h)` (g, hs over a
// window of three points loaded into base and offs) and `window_parts(t, h)` (the
// Ostrogradsky parts [L, ∂L/∂q̇, ∂L/∂q̈, q̈] at the central jet); the Newton matrix is
// factorised and solved in nalgebra's order by `variational_solver`.
//
// The engine prepends `alias real`, WG, REAL_MAX, REAL_EPSILON, the specialisation
// constants of SecondOrderShape::kernel, the STATE_*, RECORD_*, PARAM_* and CONST_*
// offsets and the bindings (src/kernels/abi.rs). CPU twin: `variational_second_order_twin`
// in src/families/variational/second_order_twin.rs (the same operations in the same order).
#import records
#import finite
#import compensated
#import variational_second_order_model
#import variational_solver

const OK: u32 = 0u;
const NO_CONVERGENCE: u32 = 1u;
const SINGULAR: u32 = 2u;
const NOT_FINITE: u32 = 3u;

var<private> member: u32;
var<private> theta: array<real, NP_ARRAY>;
// The generated window code's inputs (a window's first point, the offsets of its three
// points from it, λ: none here) and outputs.
var<private> base: array<real, D>;
var<private> offs: array<real, WD>;
var<private> lam: array<real, CW_ARRAY>;
var<private> g: array<real, WD>;
var<private> hs: array<real, WD2>;
var<private> con: array<real, CW_ARRAY>;
var<private> cj: array<real, CJ_ARRAY>;
// The Newton system (variational_solver).
var<private> matrix: array<real, NS_SQUARED>;
var<private> rhs: array<real, NS>;
var<private> pivot: array<u32, NS>;
// The march after the equation at point k − 1: q_k (here) and q_{k+1} (ahead) with their
// Kahan carries, Δ_k = q_{k+1} − q_k and Δ_{k−1}, p_k, π_{k+1} and the Ostrogradsky parts
// of the window centred at t_k.
var<private> here: array<real, D>;
var<private> here_carry: array<real, D>;
var<private> ahead: array<real, D>;
var<private> ahead_carry: array<real, D>;
var<private> increment: array<real, D>;
var<private> earlier: array<real, D>;
var<private> p: array<real, D>;
var<private> pending: array<real, D>;
var<private> parts: array<real, PARTS>;
var<private> multipliers: array<real, CH_ARRAY>;
// A solve: the new increment, μ, the window's outgoing momenta D₂L_d and D₃L_d, the
// Newton updates and the residuals of the converged point.
var<private> delta: array<real, D>;
var<private> mu: array<real, CH_ARRAY>;
var<private> out_near: array<real, D>;
var<private> out_far: array<real, D>;
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
var<private> start_momentum: real;
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

// Entry e of the data (q̇, q̈, q⃛ at t = 0, D each).
fn initial_data(e: u32) -> real {
    return params[(PARAM_DATA + e) * dispatch.members + member];
}

// [φ_h, ∂φ_h/∂q, ∂²φ_h/∂q²] at the point x (derivatives 0) and time t.
fn holonomic_terms(x: array<real, D>, t: real) -> array<real, HOLONOMIC_OUT> {
    var v: array<real, NV>;
    #for c in M
        v[c] = real(0.0);
    #end
    #for c in D
        v[c] = x[c];
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

// ξ(q) at t = 0 (Scratch::generator; 0 without a symmetry).
fn generator(q: array<real, D>) -> array<real, D> {
    var v: array<real, NV>;
    #for c in M
        v[c] = real(0.0);
    #end
    #for c in D
        v[c] = q[c];
    #end
    v[M] = real(0.0);
    #for j in NP
        v[M + 1u + j] = theta[j];
    #end
    var xi: array<real, D>;
    #for s in SYMMETRY
        let out = vl_symmetry(v);
        #for c in D
            xi[c] = out[c];
        #end
    #end
    return xi;
}

// a · b summed from the first product (as Rust's sum from −0).
fn dot_d(a: array<real, D>, b: array<real, D>) -> real {
    var total = a[0] * b[0];
    #for c in D
        if (c > 0u) {
            total = total + a[c] * b[c];
        }
    #end
    return total;
}

// Loads the window of the points b + o0, b + o1, b + o2 into base and offs.
fn load_window(b: array<real, D>, o0: array<real, D>, o1: array<real, D>, o2: array<real, D>) {
    #for c in D
        base[c] = b[c];
        offs[c] = o0[c];
        offs[D + c] = o1[c];
        offs[2u * D + c] = o2[c];
    #end
}

// max(1, ‖q + Δ‖_∞): the scale of Newton's stopping rule.
fn scale_of(q: array<real, D>, dq: array<real, D>) -> real {
    var s = real(1.0);
    #for c in D
        s = larger(s, abs(q[c] + dq[c]));
    #end
    return s;
}

fn rhs_finite() -> bool {
    var finite = true;
    #for e in NS
        finite = finite && is_finite(rhs[e]);
    #end
    return finite;
}

fn matrix_finite() -> bool {
    var finite = true;
    #for e in NS_SQUARED
        finite = finite && is_finite(matrix[e]);
    #end
    return finite;
}

// OstrogradskyParts::step_energy: the energy of the step between the windows centred at
// t_k (parts p0) and t_{k+1} (p1), parts [L, a = ∂L/∂q̇, b = ∂L/∂q̈, q̈], increment Δ:
//   E = −½ (L_k + L_{k+1}) + Σ_c ([½ (a_k + a_{k+1}) − (b_{k+1} − b_k)/h]_c Δ_c/h
//                                  + ½ (b_k q̈_k + b_{k+1} q̈_{k+1})_c).
fn ostrogradsky_energy(
    p0: array<real, PARTS>,
    p1: array<real, PARTS>,
    dq: array<real, D>,
    h: real
) -> real {
    var energy = real(-0.5) * (p0[0] + p1[0]);
    #for c in D
        {
            let momentum = real(0.5) * (p0[1u + c] + p1[1u + c])
                - (p1[1u + D + c] - p0[1u + D + c]) / h;
            energy = energy + (momentum * dq[c] / h
                + real(0.5) * (p0[1u + D + c] * p0[1u + 2u * D + c]
                    + p1[1u + D + c] * p1[1u + 2u * D + c]));
        }
    #end
    return energy;
}

// J = p_k · ξ(q_k) + π_{k+1} · ξ(q_{k+1}) of the march's state.
fn momentum_map() -> real {
    let near = dot_d(p, generator(here));
    return near + dot_d(pending, generator(ahead));
}

// The start (start.rs, second_order_start, then SecondOrder::new in march.rs): OK with
// the march's state after the equation at point 0 and the first step's outcome, else the
// failure.
fn start(h: real, tolerance: real, tiny: real) -> u32 {
    let q0 = here;
    var qd: array<real, D>;
    var qdd: array<real, D>;
    var qddd: array<real, D>;
    #for c in D
        qd[c] = initial_data(c);
        qdd[c] = initial_data(D + c);
        qddd[c] = initial_data(2u * D + c);
    #end
    var taylor: array<real, D>;
    #for c in D
        taylor[c] = h * qd[c] + real(0.5) * h * h * qdd[c];
    #end
    var first = taylor;
    var projection_iterations = 0u;
    #for once in HOLONOMIC
        // Δ_0 and ν by Newton: Δ_0 − y − ∇φ_h(q_0 + Δ_0)ᵀ ν = 0, φ_h(q_0 + Δ_0, h) = 0.
        var nu: array<real, CH_ARRAY>;
        var converged = false;
        for (var iteration = 1u; iteration <= MAX_ITERATIONS + 1u; iteration++) {
            var q1: array<real, D>;
            #for c in D
                q1[c] = q0[c] + first[c];
            #end
            let out = holonomic_terms(q1, h);
            // Σ_j ν_j ∇²φ_hj, from 0 in j's order (Scratch::point).
            var hessian: array<real, DD>;
            #for e in DD
                hessian[e] = real(0.0);
            #end
            #for j in CH
                #for e in DD
                    hessian[e] = hessian[e] + nu[j] * out[CH + CH_D + j * DD + e];
                #end
            #end
            #for c in D
                {
                    var normal = out[CH + c] * nu[0];
                    #for j in CH
                        if (j > 0u) {
                            normal = normal + out[CH + j * D + c] * nu[j];
                        }
                    #end
                    rhs[c] = first[c] - taylor[c] - normal;
                }
            #end
            #for j in CH
                rhs[D + j] = out[j];
            #end
            if (!rhs_finite()) {
                return NOT_FINITE;
            }
            if (converged) {
                projection_iterations = iteration - 1u;
                break;
            }
            if (iteration > MAX_ITERATIONS) {
                return NO_CONVERGENCE;
            }
            #for e in NS_SQUARED
                matrix[e] = real(0.0);
            #end
            #for c in D
                matrix[c * NS + c] = real(1.0);
                #for c2 in D
                    matrix[c * NS + c2] = matrix[c * NS + c2] - hessian[c * D + c2];
                #end
                #for j in CH
                    matrix[c * NS + D + j] = -out[CH + j * D + c];
                    matrix[(D + j) * NS + c] = out[CH + j * D + c];
                #end
            #end
            factorise();
            if (!solve()) {
                return SINGULAR;
            }
            var change = real(0.0);
            #for c in D
                first[c] = first[c] - rhs[c];
                change = larger(change, abs(rhs[c]));
            #end
            #for j in CH
                nu[j] = nu[j] - rhs[D + j];
            #end
            converged = change <= tolerance * scale_of(q0, first);
        }
    #end
    // Δ_{−1} = q_0 − q_{−1} = Δ_0 − h² q̈(0); the window centred at 0 is fixed from here.
    var back: array<real, D>;
    var minus_back: array<real, D>;
    var zeros: array<real, D>;
    #for c in D
        back[c] = first[c] - h * h * qdd[c];
        minus_back[c] = -back[c];
        zeros[c] = real(0.0);
    #end
    load_window(q0, minus_back, zeros, first);
    window_terms(-h, h);
    var w0_near: array<real, D>;
    var w0_far: array<real, D>;
    #for c in D
        w0_near[c] = g[D + c];
        w0_far[c] = g[2u * D + c];
    #end
    let parts0 = window_parts(-h, h);
    // (Δ_1, μ_0) by Newton on the discrete equation at 0 and φ_h(q_2) = 0; q_{−2} follows
    // Δ_1 through Δ_{−2} = q_{−1} − q_{−2} = 2h³ q⃛(0) − Δ_1 + Δ_0 + Δ_{−1}.
    var second: array<real, D>;
    #for c in D
        second[c] = h * qd[c] + real(1.5) * h * h * qdd[c] + SEVEN_SIXTHS * h * h * h * qddd[c];
    #end
    #for j in CH
        mu[j] = real(0.0);
    #end
    var converged = false;
    for (var iteration = 1u; iteration <= MAX_ITERATIONS + 1u; iteration++) {
        var far: array<real, D>;
        var reach: array<real, D>;
        #for c in D
            {
                let back_two = real(2.0) * h * h * h * qddd[c] - second[c] + first[c] + back[c];
                far[c] = -back[c] - back_two;
                reach[c] = first[c] + second[c];
            }
        #end
        // w_{−1} = (q_{−2}, q_{−1}, q_0): its D₃L_d and the block ∂²/∂q_0∂q_{−2}.
        load_window(q0, far, minus_back, zeros);
        window_terms(real(-2.0) * h, h);
        var before_far: array<real, D>;
        var before_block: array<real, DD>;
        #for c in D
            before_far[c] = g[2u * D + c];
            #for c2 in D
                before_block[c * D + c2] = hs[(2u * D + c) * WD + c2];
            #end
        #end
        // w_1 = (q_0, q_1, q_2), left in base, offs, g and hs.
        load_window(q0, zeros, first, reach);
        window_terms(real(0.0), h);
        let at_zero = holonomic_terms(q0, real(0.0));
        var q2: array<real, D>;
        #for c in D
            q2[c] = q0[c] + reach[c];
        #end
        let there = holonomic_terms(q2, real(2.0) * h);
        var magnitude: array<real, D>;
        #for c in D
            {
                let t0 = before_far[c];
                let t1 = w0_near[c];
                let t2 = g[c];
                var sum = t0 + t1 + t2;
                magnitude[c] = abs(t0) + abs(t1) + abs(t2);
                #for j in CH
                    {
                        let term = h * at_zero[CH + j * D + c] * mu[j];
                        sum = sum + term;
                        magnitude[c] = magnitude[c] + abs(term);
                    }
                #end
                rhs[c] = sum;
            }
        #end
        #for j in CH
            rhs[D + j] = there[j];
        #end
        if (!rhs_finite()) {
            return NOT_FINITE;
        }
        if (converged) {
            var largest = real(0.0);
            var size = real(0.0);
            #for c in D
                largest = larger(largest, abs(rhs[c]));
            #end
            #for c in D
                size = larger(size, abs(magnitude[c]));
            #end
            step_equation = largest / larger(size, tiny);
            var q1: array<real, D>;
            #for c in D
                q1[c] = q0[c] + first[c];
            #end
            let at_one = holonomic_terms(q1, h);
            var constraint = real(0.0);
            #for j in CH
                constraint = larger(constraint, abs(at_one[j]));
            #end
            #for j in CH
                constraint = larger(constraint, abs(there[j]));
            #end
            step_constraint = constraint;
            let parts1 = window_parts(real(0.0), h);
            var start_p: array<real, D>;
            var finite = true;
            #for c in D
                p[c] = w0_far[c] + g[D + c];
                pending[c] = g[2u * D + c];
                start_p[c] = before_far[c] + w0_near[c];
                finite = finite && is_finite(p[c]);
            #end
            if (!finite) {
                return NOT_FINITE;
            }
            step_iterations = projection_iterations + iteration - 1u;
            // The march's state (SecondOrder::new and its shift): q_1 = q_0 ⊕ Δ_0 and
            // q_2 = q_1 ⊕ Δ_1 (Kahan), the first step's energy, J_0 of the path ending at
            // q_1 and the state's J.
            #for c in D
                {
                    let one = kahan(q0[c], real(0.0), first[c]);
                    ahead[c] = one.x;
                    ahead_carry[c] = one.y;
                }
            #end
            if (SYMMETRY == 1u) {
                let near = dot_d(start_p, generator(q0));
                start_momentum = near + dot_d(w0_far, generator(ahead));
                momentum_drift = drift_add(momentum_drift, start_momentum);
            }
            step_energy_value = ostrogradsky_energy(parts0, parts1, first, h);
            #for c in D
                {
                    here[c] = ahead[c];
                    here_carry[c] = ahead_carry[c];
                    let two = kahan(ahead[c], ahead_carry[c], second[c]);
                    ahead[c] = two.x;
                    ahead_carry[c] = two.y;
                    earlier[c] = first[c];
                    increment[c] = second[c];
                }
            #end
            parts = parts1;
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
                matrix[c * NS + c2] = hs[c * WD + 2u * D + c2] + before_block[c * D + c2];
            #end
            #for j in CH
                matrix[c * NS + D + j] = h * at_zero[CH + j * D + c];
            #end
        #end
        #for j in CH
            #for c2 in D
                matrix[(D + j) * NS + c2] = there[CH + j * D + c2];
            #end
        #end
        if (!matrix_finite()) {
            return NOT_FINITE;
        }
        factorise();
        if (!solve()) {
            return SINGULAR;
        }
        var change = real(0.0);
        #for c in D
            second[c] = second[c] - rhs[c];
            change = larger(change, abs(rhs[c]));
        #end
        #for j in CH
            mu[j] = mu[j] - rhs[D + j];
        #end
        var updated: array<real, D>;
        #for c in D
            updated[c] = first[c] + second[c];
        #end
        converged = change <= tolerance * scale_of(q0, updated);
    }
    return NO_CONVERGENCE;
}

// Marcher::step for order 2: Newton for Δ = q_{k+2} − q_{k+1} and μ_k from the guess
// 2Δ_k − Δ_{k−1}; OK with delta, mu, out_near, out_far and step_*, else the failure.
fn march(t_k: real, h: real, tolerance: real, tiny: real) -> u32 {
    var minus_previous: array<real, D>;
    var zeros: array<real, D>;
    #for c in D
        minus_previous[c] = -increment[c];
        zeros[c] = real(0.0);
        delta[c] = real(2.0) * increment[c] - earlier[c];
    #end
    #for j in CH
        mu[j] = real(0.0);
    #end
    var converged = false;
    for (var iteration = 1u; iteration <= MAX_ITERATIONS + 1u; iteration++) {
        var next: array<real, D>;
        #for c in D
            next[c] = ahead[c] + delta[c];
        #end
        load_window(ahead, minus_previous, zeros, delta);
        window_terms(t_k, h);
        let at_here = holonomic_terms(here, t_k);
        let there = holonomic_terms(next, t_k + real(2.0) * h);
        var magnitude: array<real, D>;
        #for c in D
            {
                var r = p[c] + g[c];
                magnitude[c] = abs(p[c]) + abs(g[c]);
                #for j in CH
                    {
                        let term = h * at_here[CH + j * D + c] * mu[j];
                        r = r + term;
                        magnitude[c] = magnitude[c] + abs(term);
                    }
                #end
                rhs[c] = r;
            }
        #end
        #for j in CH
            rhs[D + j] = there[j];
        #end
        if (!rhs_finite()) {
            return NOT_FINITE;
        }
        if (converged) {
            var constraint = real(0.0);
            #for j in CH
                constraint = larger(constraint, abs(there[j]));
            #end
            var largest = real(0.0);
            var size = real(0.0);
            #for c in D
                largest = larger(largest, abs(rhs[c]));
            #end
            #for c in D
                size = larger(size, abs(magnitude[c]));
            #end
            step_equation = largest / larger(size, tiny);
            step_constraint = constraint;
            var finite = true;
            #for c in D
                out_near[c] = g[D + c];
                out_far[c] = g[2u * D + c];
                finite = finite && is_finite(out_near[c]);
            #end
            #for c in D
                finite = finite && is_finite(out_far[c]);
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
                matrix[c * NS + c2] = hs[c * WD + 2u * D + c2];
            #end
            #for j in CH
                matrix[c * NS + D + j] = h * at_here[CH + j * D + c];
            #end
        #end
        #for j in CH
            #for c2 in D
                matrix[(D + j) * NS + c2] = there[CH + j * D + c2];
            #end
        #end
        if (!matrix_finite()) {
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
        #for j in CH
            mu[j] = mu[j] - rhs[D + j];
        #end
        converged = change <= tolerance * scale_of(ahead, delta);
    }
    return NO_CONVERGENCE;
}

// SecondOrder::advance after a converged march at t_k: the window centred at t_{k+1},
// the step's energy, p_{k+1}, π_{k+2}, and the shift to point k + 1.
fn shift(t_k: real, h: real) {
    var minus_increment: array<real, D>;
    var zeros: array<real, D>;
    #for c in D
        minus_increment[c] = -increment[c];
        zeros[c] = real(0.0);
    #end
    load_window(ahead, minus_increment, zeros, delta);
    let next_parts = window_parts(t_k, h);
    step_energy_value = ostrogradsky_energy(parts, next_parts, increment, h);
    #for c in D
        {
            p[c] = pending[c] + out_near[c];
            pending[c] = out_far[c];
            here[c] = ahead[c];
            here_carry[c] = ahead_carry[c];
            let moved = kahan(ahead[c], ahead_carry[c], delta[c]);
            ahead[c] = moved.x;
            ahead_carry[c] = moved.y;
            earlier[c] = increment[c];
            increment[c] = delta[c];
        }
    #end
    parts = next_parts;
}

// Global step `done` (the equation at point done − 1, t_k = (done − 1) h).
fn advance(done: u32, h: real, tolerance: real, tiny: real) {
    if (status != real(0.0)) {
        return;
    }
    let t_k = real(done - 1u) * h;
    var outcome: u32;
    if (done == 1u) {
        outcome = start(h, tolerance, tiny);
    } else {
        outcome = march(t_k, h, tolerance, tiny);
        if (outcome == OK) {
            shift(t_k, h);
        }
    }
    if (outcome == OK) {
        iterations = iterations + real(step_iterations);
        constraint_residual = larger(constraint_residual, step_constraint);
        equation_residual = larger(equation_residual, step_equation);
        energy_drift = drift_add(energy_drift, step_energy_value);
        #for j in CH
            multipliers[j] = mu[j];
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
        here[c] = nan;
    #end
    #for j in CH
        multipliers[j] = nan;
    #end
    step_energy_value = nan;
}

// Writes record slot `slot`.
fn record(slot: u32) {
    let base_entry = slot * RECORD_ENTRIES;
    let members = dispatch.members;
    #for c in D
        records[(base_entry + RECORD_PATH + c) * members + member] = here[c];
    #end
    #for j in CH
        records[(base_entry + RECORD_MULTIPLIERS + j) * members + member] = multipliers[j];
    #end
    records[(base_entry + RECORD_ENERGY) * members + member] = step_energy_value;
    if (SYMMETRY == 1u) {
        records[(base_entry + RECORD_MOMENTUM) * members + member] =
            select(constants[CONST_NAN], momentum_drift.y, status == real(0.0));
    }
}

// Reads or writes field entry e of the member's state.
fn sget(field: u32, e: u32) -> real {
    return state[(field + e) * dispatch.members + member];
}

fn sset(field: u32, e: u32, v: real) {
    state[(field + e) * dispatch.members + member] = v;
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
    // The smallest positive normal real: 2⁻¹⁰²² = (2⁻¹⁰⁰)¹⁰ 2⁻²² by exact products in f64,
    // f32's own in f32.
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
        here[c] = sget(STATE_Q, c);
        here_carry[c] = sget(STATE_CARRY, c);
        ahead[c] = sget(STATE_AHEAD, c);
        ahead_carry[c] = sget(STATE_AHEAD_CARRY, c);
        increment[c] = sget(STATE_INCREMENT, c);
        earlier[c] = sget(STATE_EARLIER, c);
        p[c] = sget(STATE_P, c);
        pending[c] = sget(STATE_PENDING, c);
    #end
    #for e in PARTS
        parts[e] = sget(STATE_PARTS, e);
    #end
    #for j in CH
        multipliers[j] = sget(STATE_MULTIPLIERS, j);
    #end
    step_energy_value = sget(STATE_STEP_ENERGY, 0u);
    code = sget(STATE_CODE, 0u);
    iterations = sget(STATE_ITERATIONS, 0u);
    constraint_residual = sget(STATE_CONSTRAINT_RESIDUAL, 0u);
    equation_residual = sget(STATE_EQUATION_RESIDUAL, 0u);
    energy_drift = vec3<real>(
        sget(STATE_ENERGY_DRIFT, 0u),
        sget(STATE_ENERGY_DRIFT, 1u),
        sget(STATE_ENERGY_DRIFT, 2u)
    );
    if (SYMMETRY == 1u) {
        momentum_drift = vec3<real>(
            sget(STATE_MOMENTUM_DRIFT, 0u),
            sget(STATE_MOMENTUM_DRIFT, 1u),
            sget(STATE_MOMENTUM_DRIFT, 2u)
        );
        start_momentum = sget(STATE_START_MOMENTUM, 0u);
    }
    status = sget(STATE_STATUS, 0u);

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
        sset(STATE_Q, c, here[c]);
        sset(STATE_CARRY, c, here_carry[c]);
        sset(STATE_AHEAD, c, ahead[c]);
        sset(STATE_AHEAD_CARRY, c, ahead_carry[c]);
        sset(STATE_INCREMENT, c, increment[c]);
        sset(STATE_EARLIER, c, earlier[c]);
        sset(STATE_P, c, p[c]);
        sset(STATE_PENDING, c, pending[c]);
    #end
    #for e in PARTS
        sset(STATE_PARTS, e, parts[e]);
    #end
    #for j in CH
        sset(STATE_MULTIPLIERS, j, multipliers[j]);
    #end
    sset(STATE_STEP_ENERGY, 0u, step_energy_value);
    sset(STATE_CODE, 0u, code);
    sset(STATE_ITERATIONS, 0u, iterations);
    sset(STATE_CONSTRAINT_RESIDUAL, 0u, constraint_residual);
    sset(STATE_EQUATION_RESIDUAL, 0u, equation_residual);
    sset(STATE_ENERGY_DRIFT, 0u, energy_drift.x);
    sset(STATE_ENERGY_DRIFT, 1u, energy_drift.y);
    sset(STATE_ENERGY_DRIFT, 2u, energy_drift.z);
    if (SYMMETRY == 1u) {
        sset(STATE_MOMENTUM_DRIFT, 0u, momentum_drift.x);
        sset(STATE_MOMENTUM_DRIFT, 1u, momentum_drift.y);
        sset(STATE_MOMENTUM_DRIFT, 2u, momentum_drift.z);
        sset(STATE_START_MOMENTUM, 0u, start_momentum);
    }
    sset(STATE_STATUS, 0u, status);
}
