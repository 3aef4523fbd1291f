// One invocation solves one member's boundary-value problem of a variational ensemble: the
// whole discrete path q_0 … q_N (order 2: with the ghost points q_{−1}, q_{N+1}), the
// window multipliers λ and the holonomic multipliers μ of the free points, by Newton's
// method on the banded system of the discrete Euler–Lagrange equations, exactly as the CPU
// reference does it (src/families/variational/bvp.rs, BoundarySolver::solve):
//
// - the guess: piecewise linear through the prescribed points (start, knots, end), each
//   free point projected onto the holonomic constraints (Gauss–Newton, `project`), the
//   ghosts from the clamped velocities, the multipliers 0;
// - per iteration: the residual F, the row magnitudes and the banded Jacobian assembled
//   window by window (the generated `window_terms`, with the generalised forces'
//   f_d± = (h/2) f and their Jacobian where the model has them), then point by point,
//   then the clamped velocities (`assemble`); F not finite: NOT_FINITE; the band
//   factorised by Gaussian elimination with partial pivoting
//   (src/families/variational/banded.rs: a pivot not > 0 and finite, or a solution not
//   finite: SINGULAR); x ← x − δ, prescribed points set exactly; stop when
//   max |δ_q| ≤ tolerance · max(1, max |q|), after at most MAX_ITERATIONS iterations
//   (else NO_CONVERGENCE);
// - then the constraint residual and the relative equation residual of one more
//   assembly, the energy of every step (order 1: E at the step's midpoint jet; order 2:
//   the Ostrogradsky energy of the windows centred at its ends) and, with a symmetry, the
//   momentum map of every step, with their drifts, the action Σ_j w_j L_d(window j)
//   (Neumaier) — the windows of all three with the ghosts rebuilt from the clamped
//   velocities — and the first row of the path, multipliers and observables
//   (src/families/variational/path_quantities.rs and kernel.rs, boundary_value).
//
// The solve runs in the dispatch that starts at step 0; every dispatch then writes its
// record slots from the solved path. The member's x, residual, magnitudes, right-hand side
// and band (row i holds columns i − KL … i + KL + KU) live in its region of the engine's
// `scratch` buffer (entry e at e · members + member).
//
// The engine prepends `alias real`, WG, REAL_MAX, REAL_EPSILON, the specialisation
// constants of src/families/variational/boundary.rs (BoundaryShape::kernel), the STATE_*,
// RECORD_*, PARAM_* and CONST_* offsets and the bindings (src/kernels/abi.rs). CPU twin:
// `variational_boundary_twin` in src/families/variational/boundary_twin.rs (the same
// operations in the same order).
#import records
#import finite
#import compensated
#import variational_boundary_model

const OK: u32 = 0u;
const NO_CONVERGENCE: u32 = 1u;
const SINGULAR: u32 = 2u;
const NOT_FINITE: u32 = 3u;

var<private> member: u32;
var<private> members: u32;
var<private> theta: array<real, NP_ARRAY>;
// A window: its first point, the offsets of its points from it, its λ; its terms.
var<private> base: array<real, D>;
var<private> offs: array<real, WD>;
var<private> lam: array<real, CW_ARRAY>;
var<private> g: array<real, WD>;
var<private> hs: array<real, WD2>;
var<private> con: array<real, CW_ARRAY>;
var<private> cj: array<real, CJ_ARRAY>;
// J Jᵀ of the projection and its solve (the generated gram_factorise, gram_solve).
var<private> gram: array<real, CH_SQUARED>;
var<private> gram_rhs: array<real, CH_ARRAY>;
var<private> gram_pivot: array<u32, CH_ARRAY>;
// Newton's iterations and the residual maxima of the solve.
var<private> newton_iterations: u32;
var<private> constraint_max: real;
var<private> equation_max: real;

fn sget(e: u32) -> real {
    return scratch[e * members + member];
}

fn sset(e: u32, v: real) {
    scratch[e * members + member] = v;
}

fn sadd(e: u32, v: real) {
    scratch[e * members + member] = scratch[e * members + member] + v;
}

// The band's entry (i, j), j within i − KL … i + KL + KU.
fn band(i: u32, j: u32) -> u32 {
    return S_BAND + i * WIDTH + j + KL - i;
}

fn add_jacobian(jacobian: bool, i: u32, j: u32, v: real) {
    if (jacobian) {
        sadd(band(i, j), v);
    }
}

// max(a, b) as Rust's f64::max for an a that is not NaN.
fn larger(a: real, b: real) -> real {
    return select(a, b, b > a);
}

fn offset_of(s: u32) -> u32 {
    return u32(constants[CONST_OFFSETS + s]);
}

// The prescribed index of grid point k (PRESCRIBED where it is free).
fn fixed_of(k: u32) -> u32 {
    return u32(constants[CONST_FIXED + k]);
}

fn anchor_of(p: u32) -> u32 {
    return u32(constants[CONST_ANCHORS + p]);
}

fn prescribed(p: u32, c: u32) -> real {
    return params[(PARAM_PRESCRIBED + p * D + c) * members + member];
}

fn velocity(end: u32, c: u32) -> real {
    return params[(PARAM_VELOCITIES + end * D + c) * members + member];
}

// Whether slot s holds a free grid point (which has μ with holonomic constraints).
fn free_slot(s: u32) -> bool {
    return s >= FIRST && s - FIRST <= STEPS && fixed_of(s - FIRST) == PRESCRIBED;
}

fn has_mu(s: u32) -> bool {
    return CH > 0u && free_slot(s);
}

fn has_lambda(s: u32) -> bool {
    return CW > 0u && s >= FIRST && s - FIRST < WINDOWS;
}

fn mu_at(s: u32) -> u32 {
    return offset_of(s) + D;
}

fn lambda_at(s: u32) -> u32 {
    return offset_of(s) + D + select(0u, CH, has_mu(s));
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

// solve::project: q onto φ_h(q, t) = 0 by Gauss–Newton steps q ← q − Jᵀ (J Jᵀ)⁻¹ φ.
fn project(q_in: array<real, D>, t: real) -> array<real, D> {
    var q = q_in;
    for (var step = 0u; step < PROJECTION_STEPS; step++) {
        let out = holonomic_terms(q, t);
        var residual = real(0.0);
        #for j in CH
            residual = larger(residual, abs(out[j]));
        #end
        var scale = real(1.0);
        #for c in D
            scale = larger(scale, abs(q[c]));
        #end
        if (CH == 0u || residual <= real(1e-15) * scale) {
            break;
        }
        #for r in CH
            #for s in CH
                {
                    var sum = real(0.0);
                    #for c in D
                        sum = sum + out[CH + r * D + c] * out[CH + s * D + c];
                    #end
                    gram[r * CH + s] = sum;
                }
            #end
            gram_rhs[r] = out[r];
        #end
        var regular = true;
        #for j in HOLONOMIC
            gram_factorise();
            regular = gram_solve();
        #end
        if (!regular) {
            break;
        }
        #for c in D
            {
                var step_c = real(0.0);
                #for r in CH
                    step_c = step_c + out[CH + r * D + c] * gram_rhs[r];
                #end
                q[c] = q[c] - step_c;
            }
        #end
    }
    return q;
}

// Loads window j's points (slots j … j + ORDER) and λ into base, offs and lam.
fn load_window(j: u32) {
    let o0 = offset_of(j);
    #for c in D
        base[c] = sget(S_X + o0 + c);
    #end
    #for i in W
        {
            let o = offset_of(j + i);
            #for c in D
                offs[i * D + c] = sget(S_X + o + c) - base[c];
            #end
        }
    #end
    let s = j + FIRST;
    if (has_lambda(s)) {
        let at = lambda_at(s);
        #for k in CW
            lam[k] = sget(S_X + at + k);
        #end
    }
}

// The residual, the row magnitudes and (with `jacobian`) the Jacobian at x; returns
// max |φ| over the points and windows (BoundarySolver::assemble).
fn assemble(jacobian: bool, h: real) -> real {
    var constraint = real(0.0);
    for (var j = 0u; j < WINDOWS; j++) {
        load_window(j);
        let t = real(i32(j) - i32(FIRST)) * h;
        window_terms(t, h);
        let s = j + FIRST;
        let lambda = lambda_at(s);
        #for i in W
            if (free_slot(j + i)) {
                let row = offset_of(j + i);
                #for c in D
                    {
                        let gv = g[i * D + c];
                        sadd(S_R + row + c, gv);
                        sadd(S_M + row + c, abs(gv));
                        if (jacobian) {
                            #for i2 in W
                                {
                                    let col = offset_of(j + i2);
                                    #for c2 in D
                                        sadd(band(row + c, col + c2), hs[(i * D + c) * WD + i2 * D + c2]);
                                    #end
                                }
                            #end
                            #for k in CW
                                sadd(band(row + c, lambda + k), h * cj[k * WD + i * D + c]);
                            #end
                        }
                    }
                #end
            }
        #end
        #for k in CW
            {
                let row = lambda + k;
                sset(S_R + row, con[k]);
                sset(S_M + row, abs(con[k]));
                constraint = larger(constraint, abs(con[k]));
                if (jacobian) {
                    #for i2 in W
                        {
                            let col = offset_of(j + i2);
                            #for c2 in D
                                sadd(band(row, col + c2), cj[k * WD + i2 * D + c2]);
                            #end
                        }
                    #end
                }
            }
        #end
    }
    for (var k = 0u; k <= STEPS; k++) {
        let s = k + FIRST;
        let o = offset_of(s);
        var q: array<real, D>;
        #for c in D
            q[c] = sget(S_X + o + c);
        #end
        let t = real(k) * h;
        if (has_mu(s)) {
            let at = mu_at(s);
            var mu: array<real, CH_ARRAY>;
            #for jj in CH
                mu[jj] = sget(S_X + at + jj);
            #end
            let out = holonomic_terms(q, t);
            // Σ_j μ_j ∇²φ_hj, from 0 in j's order.
            var hessian: array<real, D * D>;
            #for e in DD
                hessian[e] = real(0.0);
            #end
            #for jj in CH
                #for e in DD
                    hessian[e] = hessian[e] + mu[jj] * out[CH + CH_D + jj * D * D + e];
                #end
            #end
            #for c in D
                #for jj in CH
                    {
                        let term = h * out[CH + jj * D + c] * mu[jj];
                        sadd(S_R + o + c, term);
                        sadd(S_M + o + c, abs(term));
                        add_jacobian(jacobian, o + c, at + jj, h * out[CH + jj * D + c]);
                    }
                #end
                if (jacobian) {
                    #for c2 in D
                        sadd(band(o + c, o + c2), h * hessian[c * D + c2]);
                    #end
                }
            #end
            #for jj in CH
                {
                    sset(S_R + at + jj, out[jj]);
                    sset(S_M + at + jj, abs(out[jj]));
                    constraint = larger(constraint, abs(out[jj]));
                    if (jacobian) {
                        #for c2 in D
                            sadd(band(at + jj, o + c2), out[CH + jj * D + c2]);
                        #end
                    }
                }
            #end
        } else if (CH > 0u) {
            let out = holonomic_terms(q, t);
            #for jj in CH
                constraint = larger(constraint, abs(out[jj]));
            #end
        }
        let p = fixed_of(k);
        if (p != PRESCRIBED) {
            var row = o;
            if (ORDER == 2u && k == 0u) {
                row = offset_of(0u);
            }
            #for c in D
                {
                    let value = prescribed(p, c);
                    sset(S_R + row + c, q[c] - value);
                    sset(S_M + row + c, abs(q[c]) + abs(value));
                    add_jacobian(jacobian, row + c, o + c, real(1.0));
                }
            #end
        }
    }
    if (ORDER == 2u) {
        // (q_1 − q_{−1})/2h = start.qd in the rows of point 0's slot; the end's in the
        // rows of slot N + 2 (point N + 1).
        for (var side = 0u; side < 2u; side++) {
            let row = offset_of(select(1u, STEPS + 2u, side == 1u));
            let plus = offset_of(select(2u, STEPS + 2u, side == 1u));
            let minus = offset_of(select(0u, STEPS, side == 1u));
            #for c in D
                {
                    let xp = sget(S_X + plus + c);
                    let xm = sget(S_X + minus + c);
                    let v = velocity(side, c);
                    sset(S_R + row + c, (xp - xm) / (real(2.0) * h) - v);
                    sset(S_M + row + c, (abs(xp) + abs(xm)) / (real(2.0) * h) + abs(v));
                    add_jacobian(jacobian, row + c, plus + c, real(0.5) / h);
                    add_jacobian(jacobian, row + c, minus + c, real(-0.5) / h);
                }
            #end
        }
    }
    return constraint;
}

// Zeroes the residual and magnitudes and, with `jacobian`, the band.
fn clear(jacobian: bool) {
    for (var i = 0u; i < UNKNOWNS; i++) {
        sset(S_R + i, real(0.0));
        sset(S_M + i, real(0.0));
        if (jacobian) {
            #for e in WIDTH
                sset(S_BAND + i * WIDTH + e, real(0.0));
            #end
        }
    }
}

// Banded::solve on the band and S_B: false when a pivot is not > 0 and finite, or the
// solution is not finite.
fn banded_solve() -> bool {
    for (var k = 0u; k < UNKNOWNS; k++) {
        let last = min(k + KL, UNKNOWNS - 1u);
        var pivot = k;
        var best = abs(sget(band(k, k)));
        #for i in KL
            if (k + 1u + i <= last) {
                let v = abs(sget(band(k + 1u + i, k)));
                if (v > best) {
                    best = v;
                    pivot = k + 1u + i;
                }
            }
        #end
        if (!(best > real(0.0) && is_finite(best))) {
            return false;
        }
        let end = min(k + KLKU, UNKNOWNS - 1u);
        if (pivot != k) {
            #for e in KLKU1
                if (k + e <= end) {
                    let a = band(k, k + e);
                    let b = band(pivot, k + e);
                    let held = sget(a);
                    sset(a, sget(b));
                    sset(b, held);
                }
            #end
            let held = sget(S_B + k);
            sset(S_B + k, sget(S_B + pivot));
            sset(S_B + pivot, held);
        }
        let diagonal = sget(band(k, k));
        let bk = sget(S_B + k);
        #for i in KL
            if (k + 1u + i <= last) {
                let r = k + 1u + i;
                let factor = sget(band(r, k)) / diagonal;
                if (factor != real(0.0)) {
                    sset(band(r, k), real(0.0));
                    #for e in KLKU
                        if (k + 1u + e <= end) {
                            let v = sget(band(k, k + 1u + e));
                            if (v != real(0.0)) {
                                let at = band(r, k + 1u + e);
                                sset(at, sget(at) - factor * v);
                            }
                        }
                    #end
                    sset(S_B + r, sget(S_B + r) - factor * bk);
                }
            }
        #end
    }
    var finite = true;
    for (var kk = 0u; kk < UNKNOWNS; kk++) {
        let k = UNKNOWNS - 1u - kk;
        let end = min(k + KLKU, UNKNOWNS - 1u);
        var sum = sget(S_B + k);
        #for e in KLKU
            if (k + 1u + e <= end) {
                sum = sum - sget(band(k, k + 1u + e)) * sget(S_B + k + 1u + e);
            }
        #end
        let value = sum / sget(band(k, k));
        sset(S_B + k, value);
        finite = finite && is_finite(value);
    }
    return finite;
}

// The guess (BoundarySolver::guess).
fn guess(h: real) {
    for (var i = 0u; i < UNKNOWNS; i++) {
        sset(S_X + i, real(0.0));
    }
    var previous = 0u;
    for (var k = 0u; k <= STEPS; k++) {
        let p = fixed_of(k);
        var q: array<real, D>;
        if (p != PRESCRIBED) {
            previous = p;
            #for c in D
                q[c] = prescribed(p, c);
            #end
        } else {
            let a = anchor_of(previous);
            let b = anchor_of(previous + 1u);
            let s = real(k - a) / real(b - a);
            #for c in D
                {
                    let u = prescribed(previous, c);
                    let v = prescribed(previous + 1u, c);
                    q[c] = u + s * (v - u);
                }
            #end
            if (CH > 0u) {
                q = project(q, real(k) * h);
            }
        }
        let o = offset_of(k + FIRST);
        #for c in D
            sset(S_X + o + c, q[c]);
        #end
    }
    if (ORDER == 2u) {
        let o0 = offset_of(1u);
        let om = offset_of(0u);
        let on = offset_of(STEPS + 1u);
        let op = offset_of(STEPS + 2u);
        #for c in D
            sset(S_X + om + c, sget(S_X + o0 + c) - h * velocity(0u, c));
            sset(S_X + op + c, sget(S_X + on + c) + h * velocity(1u, c));
        #end
    }
}

// Newton (BoundarySolver::solve): OK with the path in x, else the failure.
fn newton(h: real, tolerance: real, tiny: real) -> u32 {
    guess(h);
    for (var iteration = 1u; iteration <= MAX_ITERATIONS; iteration++) {
        newton_iterations = iteration;
        clear(true);
        assemble(true, h);
        var finite = true;
        for (var i = 0u; i < UNKNOWNS; i++) {
            let r = sget(S_R + i);
            finite = finite && is_finite(r);
            sset(S_B + i, r);
        }
        if (!finite) {
            return NOT_FINITE;
        }
        if (!banded_solve()) {
            return SINGULAR;
        }
        var change = real(0.0);
        var scale = real(1.0);
        for (var s = 0u; s < SLOTS; s++) {
            let o = offset_of(s);
            #for c in D
                {
                    let delta = sget(S_B + o + c);
                    let x = sget(S_X + o + c) - delta;
                    sset(S_X + o + c, x);
                    change = larger(change, abs(delta));
                    scale = larger(scale, abs(x));
                }
            #end
        }
        for (var s = 0u; s < SLOTS; s++) {
            let o = offset_of(s);
            let extra = offset_of(s + 1u) - o - D;
            #for e in C
                if (e < extra) {
                    sset(S_X + o + D + e, sget(S_X + o + D + e) - sget(S_B + o + D + e));
                }
            #end
            if (s >= FIRST && s - FIRST <= STEPS) {
                let p = fixed_of(s - FIRST);
                if (p != PRESCRIBED) {
                    #for c in D
                        sset(S_X + o + c, prescribed(p, c));
                    #end
                }
            }
        }
        if (change <= tolerance * scale) {
            clear(false);
            constraint_max = assemble(false, h);
            var largest = real(0.0);
            var size = real(0.0);
            for (var i = 0u; i < UNKNOWNS; i++) {
                largest = larger(largest, abs(sget(S_R + i)));
                size = larger(size, abs(sget(S_M + i)));
            }
            equation_max = largest / larger(size, tiny);
            if (!is_finite(equation_max)) {
                return NOT_FINITE;
            }
            return OK;
        }
    }
    newton_iterations = MAX_ITERATIONS;
    return NO_CONVERGENCE;
}

// q_k of the solved path (k may be a ghost's −1 or N + 1 through its slot).
fn point_of(s: u32) -> array<real, D> {
    var q: array<real, D>;
    let o = offset_of(s);
    #for c in D
        q[c] = sget(S_X + o + c);
    #end
    return q;
}

// The point of grid index k = s − 1 in the action's windows (order 2): the ghosts rebuilt
// from the clamped velocities, q_{−1} = q_1 − 2h q̇(0), q_{N+1} = q_{N−1} + 2h q̇(T).
fn action_point(s: u32, h: real) -> array<real, D> {
    if (ORDER == 2u && s == 0u) {
        var q = point_of(2u);
        #for c in D
            q[c] = q[c] - real(1.0) * real(2.0) * h * velocity(0u, c);
        #end
        return q;
    }
    if (ORDER == 2u && s == STEPS + 2u) {
        var q = point_of(STEPS);
        #for c in D
            q[c] = q[c] - real(-1.0) * real(2.0) * h * velocity(1u, c);
        #end
        return q;
    }
    return point_of(s);
}

// Loads window j of the action (ghosts rebuilt) into base and offs.
fn load_action_window(j: u32, h: real) {
    let first = action_point(j, h);
    #for c in D
        base[c] = first[c];
    #end
    #for i in W
        {
            let q = action_point(j + i, h);
            #for c in D
                offs[i * D + c] = q[c] - base[c];
            #end
        }
    #end
}

// OstrogradskyParts::step_energy: the energy of the step between the windows centred at
// t_k (parts p0) and t_{k+1} (p1), parts [L, a = ∂L/∂q̇, b = ∂L/∂q̈, q̈], increment Δ:
//   E = −½ (L_k + L_{k+1}) + Σ_c ([½ (a_k + a_{k+1}) − (b_{k+1} − b_k)/h]_c Δ_c/h
//                                  + ½ (b_k q̈_k + b_{k+1} q̈_{k+1})_c).
fn ostrogradsky_energy(
    p0: array<real, PARTS>,
    p1: array<real, PARTS>,
    delta: array<real, D>,
    h: real
) -> real {
    var energy = real(-0.5) * (p0[0] + p1[0]);
    #for c in D
        {
            let momentum = real(0.5) * (p0[1u + c] + p1[1u + c])
                - (p1[1u + D + c] - p0[1u + D + c]) / h;
            energy = energy + (momentum * delta[c] / h
                + real(0.5) * (p0[1u + D + c] * p0[1u + 2u * D + c]
                    + p1[1u + D + c] * p1[1u + 2u * D + c]));
        }
    #end
    return energy;
}

// The energy of the step from point k to k + 1: order 1, E at the constraint jet of
// (q_k, q_{k+1}); order 2, the Ostrogradsky energy of the windows centred at t_k and
// t_{k+1} (ghosts rebuilt, as the action's) over Δ = q_{k+1} − q_k.
fn step_energy_at(k: u32, h: real) -> real {
    let q = point_of(k + FIRST);
    let next = point_of(k + 1u + FIRST);
    var energy = real(0.0);
    if (ORDER == 1u) {
        #for c in D
            base[c] = q[c];
            offs[c] = real(0.0);
            offs[D + c] = next[c] - q[c];
        #end
        energy = window_energy(real(k) * h, h);
    }
    #for j in SECOND_ORDER
        load_action_window(k, h);
        let before = window_parts(real(i32(k) - 1) * h, h);
        load_action_window(k + 1u, h);
        let after = window_parts(real(k) * h, h);
        var delta: array<real, D>;
        #for c in D
            delta[c] = next[c] - q[c];
        #end
        energy = ostrogradsky_energy(before, after, delta, h);
    #end
    return energy;
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

// The terms of window j of the action (ghosts rebuilt) with its λ (those of point j)
// into g, hs, con, cj.
fn action_window_terms(j: u32, h: real) {
    load_action_window(j, h);
    let s = j + FIRST;
    let at = lambda_at(s);
    let held = has_lambda(s);
    #for k in CW
        lam[k] = select(real(0.0), sget(S_X + at + k), held);
    #end
    window_terms(real(i32(j) - i32(FIRST)) * h, h);
}

// The momentum map of step k = 1 … N (path_quantities.rs): order 1,
// J_k = D₂L_d^aug(w_{k−1}) · ξ(q_k); order 2, with w_j centred at t_j,
// J_k = [D₃L_d^aug(w_{k−1}) + D₂L_d^aug(w_k)] · ξ(q_k) + D₃L_d^aug(w_k) · ξ(q_{k+1}).
fn momentum_at(k: u32, h: real) -> real {
    var value = real(0.0);
    var momentum: array<real, D>;
    #for j in FIRST_ORDER
        action_window_terms(k - 1u, h);
        #for c in D
            momentum[c] = g[D + c];
        #end
        value = dot_d(momentum, generator(action_point(k, h)));
    #end
    #for j in SECOND_ORDER
        action_window_terms(k - 1u, h);
        #for c in D
            momentum[c] = g[2u * D + c];
        #end
        action_window_terms(k, h);
        var pending: array<real, D>;
        #for c in D
            momentum[c] = momentum[c] + g[D + c];
            pending[c] = g[2u * D + c];
        #end
        value = dot_d(momentum, generator(action_point(k + 1u, h)))
            + dot_d(pending, generator(action_point(k + 2u, h)));
    #end
    return value;
}

// Drift::add: (first, last, largest |value − first|), the first kept once it is not NaN.
fn drift_add(drift: vec3<real>, value: real) -> vec3<real> {
    var first = drift.x;
    if (!(is_finite(first) || abs(first) > REAL_MAX)) {
        first = value;
    }
    return vec3<real>(first, value, larger(drift.z, abs(value - first)));
}

// The multipliers of point k: λ of its window (0 without), then μ (0 where fixed).
fn multipliers_of(k: u32) -> array<real, C + 1u> {
    var values: array<real, C + 1u>;
    let s = k + FIRST;
    let o = offset_of(s) + D;
    var at = o;
    if (has_mu(s)) {
        #for jj in CH
            values[CW + jj] = sget(S_X + at + jj);
        #end
        at = at + CH;
    }
    if (has_lambda(s)) {
        #for jj in CW
            values[jj] = sget(S_X + at + jj);
        #end
    }
    return values;
}

// The observables of the window recorded at point k (order 2: centred at k; order 1: the
// step ending at k).
fn observables_at(k: u32, h: real) -> array<real, OBS_ARRAY> {
    let j = k - (1u - FIRST);
    load_action_window(j, h);
    return window_observables(real(i32(j) - i32(FIRST)) * h, h);
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    members = dispatch.members;
    let i = gid.y * dispatch.row_width + gid.x;
    if (i >= members) {
        return;
    }
    member = i;
    let h = constants[CONST_H];
    let nan = constants[CONST_NAN];
    // In f32 Newton cannot resolve updates below a few units of the last place.
    let tolerance = select(
        constants[CONST_TOLERANCE],
        max(constants[CONST_TOLERANCE], real(4.0) * REAL_EPSILON),
        REAL_EPSILON > real(1e-10)
    );
    // The smallest positive normal real: 2⁻¹⁰²² = (2⁻¹⁰⁰)¹⁰ 2⁻²² by exact products in f64,
    // f32's own in f32.
    let t1 = constants[CONST_TINY];
    let t2 = t1 * t1;
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
    if (dispatch.step_begin == 0u) {
        let outcome = newton(h, tolerance, tiny);
        state[STATE_ITERATIONS * members + i] = real(newton_iterations);
        if (outcome == OK) {
            state[STATE_CODE * members + i] = real(0.0);
            state[STATE_STATUS * members + i] = real(0.0);
            state[STATE_CONSTRAINT_RESIDUAL * members + i] = constraint_max;
            state[STATE_EQUATION_RESIDUAL * members + i] = equation_max;
            // The energies and momentum maps of the steps in order (Drift::add).
            if (ENERGY == 1u) {
                var drift = vec3<real>(nan, nan, real(0.0));
                for (var k = 0u; k < STEPS; k++) {
                    drift = drift_add(drift, step_energy_at(k, h));
                }
                state[STATE_ENERGY_DRIFT * members + i] = drift.x;
                state[(STATE_ENERGY_DRIFT + 1u) * members + i] = drift.y;
                state[(STATE_ENERGY_DRIFT + 2u) * members + i] = drift.z;
            }
            if (SYMMETRY == 1u) {
                var drift = vec3<real>(nan, nan, real(0.0));
                for (var k = 1u; k <= STEPS; k++) {
                    drift = drift_add(drift, momentum_at(k, h));
                }
                state[STATE_MOMENTUM_DRIFT * members + i] = drift.x;
                state[(STATE_MOMENTUM_DRIFT + 1u) * members + i] = drift.y;
                state[(STATE_MOMENTUM_DRIFT + 2u) * members + i] = drift.z;
            }
            // The action, Neumaier-compensated, the end windows of order 2 weighted ½.
            var action = vec2<real>(real(0.0), real(0.0));
            for (var j = 0u; j < WINDOWS; j++) {
                load_action_window(j, h);
                let l_d = window_lagrangian(real(i32(j) - i32(FIRST)) * h, h);
                var weight = real(1.0);
                if (ORDER == 2u && (j == 0u || j == STEPS)) {
                    weight = real(0.5);
                }
                action = neumaier(action.x, action.y, weight * l_d);
                if (ORDER == 2u && j == 0u) {
                    let values = window_observables(-h, h);
                    #for e in OBS
                        state[(STATE_START_OBSERVABLES + e) * members + i] = values[e];
                    #end
                }
            }
            state[STATE_ACTION * members + i] = action.x + action.y;
            let last = point_of(STEPS + FIRST);
            let first = point_of(FIRST);
            #for c in D
                state[(STATE_Q + c) * members + i] = last[c];
                state[(STATE_START_PATH + c) * members + i] = first[c];
            #end
            let m0 = multipliers_of(0u);
            #for e in C
                state[(STATE_START_MULTIPLIERS + e) * members + i] = m0[e];
            #end
        } else {
            state[STATE_CODE * members + i] = real(outcome);
            state[STATE_STATUS * members + i] = real(1.0);
            state[STATE_CONSTRAINT_RESIDUAL * members + i] = nan;
            state[STATE_EQUATION_RESIDUAL * members + i] = nan;
            state[STATE_ACTION * members + i] = nan;
            if (ENERGY == 1u) {
                state[STATE_ENERGY_DRIFT * members + i] = nan;
                state[(STATE_ENERGY_DRIFT + 1u) * members + i] = nan;
                state[(STATE_ENERGY_DRIFT + 2u) * members + i] = real(0.0);
            }
            if (SYMMETRY == 1u) {
                state[STATE_MOMENTUM_DRIFT * members + i] = nan;
                state[(STATE_MOMENTUM_DRIFT + 1u) * members + i] = nan;
                state[(STATE_MOMENTUM_DRIFT + 2u) * members + i] = real(0.0);
            }
            #for c in D
                state[(STATE_Q + c) * members + i] = nan;
                state[(STATE_START_PATH + c) * members + i] = nan;
            #end
            #for e in C
                state[(STATE_START_MULTIPLIERS + e) * members + i] = nan;
            #end
            if (ORDER == 2u) {
                #for e in OBS
                    state[(STATE_START_OBSERVABLES + e) * members + i] = nan;
                #end
            }
        }
    }
    let solved = state[STATE_STATUS * members + i] == real(0.0);
    var slot = 0u;
    for (var k = 0u; k < dispatch.step_count; k++) {
        let done = dispatch.step_begin + k + 1u;
        if (records_step(done)) {
            let base_entry = slot * RECORD_ENTRIES;
            let q = point_of(done + FIRST);
            let m = multipliers_of(done);
            #for c in D
                records[(base_entry + RECORD_PATH + c) * members + i] = select(nan, q[c], solved);
            #end
            #for e in C
                records[(base_entry + RECORD_MULTIPLIERS + e) * members + i] = select(nan, m[e], solved);
            #end
            if (ENERGY == 1u) {
                var e = nan;
                if (solved) {
                    e = step_energy_at(done - 1u, h);
                }
                records[(base_entry + RECORD_ENERGY) * members + i] = e;
            }
            if (SYMMETRY == 1u) {
                var value = nan;
                if (solved) {
                    value = momentum_at(done, h);
                }
                records[(base_entry + RECORD_MOMENTUM) * members + i] = value;
            }
            if (OBS > 0u) {
                var values: array<real, OBS_ARRAY>;
                #for e in OBS
                    values[e] = nan;
                #end
                if (solved) {
                    values = observables_at(done, h);
                }
                #for e in OBS
                    records[(base_entry + RECORD_OBSERVABLES + e) * members + i] = values[e];
                #end
            }
            slot += 1u;
        }
    }
}
