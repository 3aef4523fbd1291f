// One invocation advances one member of a nonlinear port-Hamiltonian ensemble,
// ẋ = f(x, u) = (J(x) − R(x)) ∇H(x) + G(x) u, through `step_count` steps of Definition 1
// (Kotyczka & Lefèvre 2019) under s-stage Gauss–Legendre collocation, with stage increments
// Z_i = x_i − x_k and stage inputs u_i = u(t_k + c_i h):
//
//   Z_i = h Σ_j a_ij f(x_k + Z_j, u_j)              (Newton, exact Jacobian, in registers)
//   x_{k+1} = x_k + h Σ_j b_j f(x_j, u_j)           (Kahan-compensated)
//   y_i = b_i G(x_i)ᵀ ∇H(x_i),  port = h Σ_i y_iᵀ u_i,  dissipated = h Σ_i b_i e_iᵀ R(x_i) e_i
//   stored = H(x_{k+1}) − H(x_k),  supplied = port − dissipated
//
// The model's expressions arrive as the generated module `port_hamiltonian_model`
// (src/families/port_hamiltonian/shape.rs): `ph_stage(v)` with v = [x, θ, u] returns
// [f (N), ∂f/∂x (N × N, row-major), eᵀ R e, G(x)ᵀ e (M)] and `ph_energy(v)` with v = [x, θ]
// returns [H], straight-line code with shared subexpressions.
//
// Newton from Z = 0: the residual F = −(Z − h (A ⊗ I) f) and the matrix I − h (a_ij ∂f/∂x_j)
// are assembled, the matrix is factorised by Gaussian elimination with partial pivoting
// and the update solved (`factorise`, `solve`: the generated module
// `port_hamiltonian_solver`, straight-line code for the run's s·n), each in the order of
// nalgebra's `LU` (the CPU reference's solver, src/families/port_hamiltonian/gauss_step.rs):
// the first row of largest |entry| pivots, multipliers are scaled by the pivot's
// reciprocal, a zero pivot column is skipped and a zero diagonal in the back substitution
// fails the solve. The iteration stops when the
// update's largest entry is at most the tolerance times the largest of |x_k| and |Z|; a
// failed solve (no convergence within MAX_ITERATIONS, a value that is not finite) ends the
// member: its status is the step, its state, outputs and energies NaN from then on.
//
// NaNs come from the constants buffer (CONST_NAN): WGSL has no NaN literal.
//
// The engine prepends `alias real`, WG, REAL_MAX, REAL_EPSILON, the specialisation
// constants N (states), S (stages), M (inputs), NP (parameters), NP_ARRAY = max(NP, 1),
// SM = S·M, SM_ARRAY = max(SM, 1), NS = S·N (Newton unknowns), NV = N + NP + M,
// NVE = N + NP, STAGE_OUT = N + N·N + 1 + M, MAX_ITERATIONS, the recording switches
// TRAJECTORY, OUTPUTS, ENERGY, UNROLL, the STATE_*, RECORD_*, PARAM_* and CONST_* offsets
// of the layouts declared in shape.rs, and the bindings (src/kernels/abi.rs). The energy
// totals are kept whatever ENERGY says (summary.json reports them); ENERGY switches the
// per-window records. CPU twin: `port_hamiltonian_step_twin` in
// src/families/port_hamiltonian/twin.rs (the same operations in the same order).
#import records
#import finite
#import energy_balance
#import port_hamiltonian_model
#import port_hamiltonian_solver

var<private> theta: array<real, NP_ARRAY>;
var<private> x: array<real, N>;
var<private> carry: array<real, N>;
var<private> u: array<real, SM_ARRAY>;
var<private> y: array<real, SM_ARRAY>;
var<private> z: array<real, NS>;
var<private> stage_out: array<real, S * STAGE_OUT>;
var<private> matrix: array<real, NS * NS>;
var<private> rhs: array<real, NS>;
var<private> pivot: array<u32, NS>;
var<private> sums: EnergySums;
// H at the state the member is in.
var<private> energy: real;
// 0 while the member runs, else the step whose solve failed.
var<private> status: real;

// H(x) at the member's parameters.
fn hamiltonian() -> real {
    var v: array<real, NVE>;
    #for c in N
        v[c] = x[c];
    #end
    #for p in NP
        v[N + p] = theta[p];
    #end
    return ph_energy(v)[0];
}

// The stage tape at x_k + Z_i and u_i for every stage; false when an output is not finite.
fn evaluate_stages() -> bool {
    var finite = true;
    #for i in S
        var v: array<real, NV>;
        #for c in N
            v[c] = x[c] + z[i * N + c];
        #end
        #for p in NP
            v[N + p] = theta[p];
        #end
        #for ch in M
            v[N + NP + ch] = u[i * M + ch];
        #end
        let out = ph_stage(v);
        #for o in STAGE_OUT
            stage_out[i * STAGE_OUT + o] = out[o];
            finite = finite && is_finite(out[o]);
        #end
    #end
    return finite;
}

// Solves the stage equations for the step from x; true on convergence, with the stage
// tape evaluated at the final stage points.
fn solve_stages(h: real, tolerance: real) -> bool {
    #for e in NS
        z[e] = real(0.0);
    #end
    var scale_x = real(0.0);
    #for c in N
        scale_x = max(scale_x, abs(x[c]));
    #end
    for (var iteration = 0u; iteration < MAX_ITERATIONS; iteration++) {
        if (!evaluate_stages()) {
            return false;
        }
        // F_i = −(Z_i − h Σ_j a_ij f_j);  ∂F/∂Z = I − h (a_ij ∂f/∂x_j).
        #for i in S
            #for r in N
                var sum = real(0.0);
                #for j in S
                    sum += constants[CONST_A + i * S + j] * stage_out[j * STAGE_OUT + r];
                #end
                rhs[i * N + r] = -(z[i * N + r] - h * sum);
            #end
        #end
        #for i in S
            #for j in S
                let factor = h * constants[CONST_A + i * S + j];
                #for r in N
                    #for c in N
                        let identity = select(real(0.0), real(1.0), i == j && r == c);
                        let jacobian = stage_out[j * STAGE_OUT + N + r * N + c];
                        matrix[(i * N + r) * NS + j * N + c] = identity - factor * jacobian;
                    #end
                #end
            #end
        #end
        factorise();
        if (!solve()) {
            return false;
        }
        var finite = true;
        var largest = real(0.0);
        var scale = scale_x;
        #for e in NS
            finite = finite && is_finite(rhs[e]);
        #end
        if (!finite) {
            return false;
        }
        #for e in NS
            z[e] = z[e] + rhs[e];
            largest = max(largest, abs(rhs[e]));
        #end
        #for e in NS
            scale = max(scale, abs(z[e]));
        #end
        var last = real(0.0);
        if (scale > real(0.0)) {
            last = largest / scale;
        }
        if (last <= tolerance) {
            return evaluate_stages();
        }
    }
    return false;
}

// Local step `k` of the dispatch, completing global step `done`.
fn advance(k: u32, done: u32, h: real, tolerance: real) {
    #for j in SM
        u[j] = stream[k * SM + j];
    #end
    // Two NaNs from two entries: the compiler may fold nan − nan to 0 for one value, and
    // supplied = port − dissipated must stay NaN.
    let nan = constants[CONST_NAN];
    let nan_other = constants[CONST_NAN + 1u];
    if (status != real(0.0)) {
        // A member that failed in an earlier dispatch: its outputs are NaN too.
        #for j in SM
            y[j] = nan;
        #end
        sums = accumulate(sums, nan, nan, nan_other);
        return;
    }
    var solved = solve_stages(h, tolerance);
    var stored = real(0.0);
    var port = real(0.0);
    var dissipated = real(0.0);
    if (solved) {
        #for i in S
            let b_i = constants[CONST_B + i];
            dissipated += b_i * stage_out[i * STAGE_OUT + N + N * N];
            #for ch in M
                let y_ik = b_i * stage_out[i * STAGE_OUT + N + N * N + 1u + ch];
                y[i * M + ch] = y_ik;
                port += y_ik * u[i * M + ch];
            #end
        #end
        #for r in N
            var delta = real(0.0);
            #for i in S
                delta += constants[CONST_B + i] * stage_out[i * STAGE_OUT + r];
            #end
            let updated = kahan(x[r], carry[r], h * delta);
            x[r] = updated.x;
            carry[r] = updated.y;
        #end
        let after = hamiltonian();
        stored = after - energy;
        energy = after;
        solved = is_finite(stored);
        #for r in N
            solved = solved && is_finite(x[r]);
        #end
    }
    if (!solved) {
        status = real(done);
        #for r in N
            x[r] = nan;
        #end
        #for j in SM
            y[j] = nan;
        #end
        sums = accumulate(sums, nan, nan, nan_other);
        return;
    }
    sums = accumulate(sums, stored, h * port, h * dissipated);
}

// Writes record slot `slot`.
fn record(slot: u32) {
    let base = slot * RECORD_ENTRIES;
    if (TRAJECTORY == 1u) {
        #for r in N
            records[(base + RECORD_X + r) * dispatch.members + member] = x[r];
        #end
    }
    if (OUTPUTS == 1u) {
        #for j in SM
            records[(base + RECORD_Y + j) * dispatch.members + member] = y[j];
        #end
    }
    if (ENERGY == 1u) {
        sums = record_window(sums, base, member);
    }
}

var<private> member: u32;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let members = dispatch.members;
    let i = gid.y * dispatch.row_width + gid.x;
    if (i >= members) {
        return;
    }
    member = i;
    let h = constants[CONST_H];
    // Newton cannot resolve updates below a few units of the last place.
    let tolerance = max(constants[CONST_TOLERANCE], real(4.0) * REAL_EPSILON);
    #for p in NP
        theta[p] = params[(PARAM_THETA + p) * members + i];
    #end
    #for r in N
        x[r] = state[(STATE_X + r) * members + i];
        carry[r] = state[(STATE_CARRY + r) * members + i];
    #end
    energy = state[STATE_ENERGY * members + i];
    status = state[STATE_STATUS * members + i];
    sums = load_sums(i);

    var slot = 0u;
    for (var k = 0u; k < dispatch.step_count; k++) {
        let done = dispatch.step_begin + k + 1u;
        advance(k, done, h, tolerance);
        if (records_step(done)) {
            record(slot);
            slot += 1u;
        }
    }

    #for r in N
        state[(STATE_X + r) * members + i] = x[r];
        state[(STATE_CARRY + r) * members + i] = carry[r];
    #end
    state[STATE_ENERGY * members + i] = energy;
    state[STATE_STATUS * members + i] = status;
    store_sums(i, sums);
}
