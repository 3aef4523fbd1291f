// One invocation runs the forward or the backward sweep of one candidate's discrete adjoint
// (src/families/linear_ph/gradient_plan.rs, adjoint.rs) through `step_count` steps, the pass given
// by `dispatch.sweep`:
//
//   pass 0 (forward, windows in increasing order), k = 0…N−1:
//     checkpoint x_k when k ≡ 0 mod SEG;  r_k = C x_k − d_k;  cost += ½ ω_k |r_k|²;
//     x_{k+1} = x_k + Δ [x_k; U_k];  after step N−1 the terminal sample:
//     cost += ½ ω_N |r_N|²,  λ_N = ω_N Cᵀ r_N,  Ḡ_C = ω_N r_N x_Nᵀ.
//   pass 1 (backward, windows in decreasing order, each a whole number of segments): per
//     segment from the last, its states recomputed from the checkpoint by the same forward
//     step (kept in STATE_SEGMENT), then for k from the segment's end down to its start:
//     Ḡ_Δ += λ_{k+1} [x_k; U_k]ᵀ;  Ḡ_C += ω_k r_k x_kᵀ;  λ_k = λ_{k+1} + Δ_xᵀ λ_{k+1} + ω_k Cᵀ r_k.
//
// The engine prepends `alias real`, WG, the specialisation constants N (states), M (inputs
// and outputs), SM = S·M, SM_ARRAY = max(SM, 1), P = N + SM, SEG (steps between
// checkpoints), SW = SM + M + 1 (stream values per step: U_k, d_k, ω_k), OPS_ENTRIES
// (N·P + M·N), UNROLL = 1, the STATE_*, PARAM_* and CONST_* offsets generated from the
// layouts declared in src/families/linear_ph/adjoint.rs, and the bindings (src/kernels/abi.rs).
// CPU twin: `adjoint_sweep_twin` in src/families/linear_ph/adjoint_twin.rs (the same sums in
// the same order); reference: the whole-member sweeps of adjoint_reference.rs.
//
// params, structure-of-arrays across the chunk's members: Δ (N·P) | C = Bᵀ Q (M·N), both
// row-major, copied into private memory once per dispatch.
#import finite

const OFF_C: u32 = PARAM_OUTPUT;

var<private> member: u32;
var<private> stride: u32;
var<private> ops: array<real, OPS_ENTRIES>;

var<private> x: array<real, N>;
var<private> lam: array<real, N>;
var<private> previous: array<real, N>;
var<private> delta: array<real, N>;
var<private> u: array<real, SM_ARRAY>;
var<private> dk: array<real, M>;
var<private> r: array<real, M>;
var<private> g_delta: array<real, GD_ENTRIES>;
var<private> g_out: array<real, GO_ENTRIES>;
var<private> cost: real;
// 0 while finite, else the first step after which x, the cost or λ was not.
var<private> status: real;

fn at(entry: u32) -> u32 {
    return entry * stride + member;
}

// U_k, d_k of local step `k`; returns ω_k.
fn load_step(k: u32) -> real {
    #for j in SM
        u[j] = stream[k * SW + j];
    #end
    #for c in M
        dk[c] = stream[k * SW + SM + c];
    #end
    return stream[k * SW + SM + M];
}

// Row `base` of Δ applied to [x; u].
fn delta_row(base: u32) -> real {
    var acc = real(0.0);
    #for c in N
        acc += ops[base + c] * x[c];
    #end
    #for j in SM
        acc += ops[base + N + j] * u[j];
    #end
    return acc;
}

// x ← x + Δ [x; u].
fn advance() {
    #for i in N
        delta[i] = delta_row(i * P);
    #end
    #for i in N
        x[i] = x[i] + delta[i];
    #end
}

// r = C x − d; returns |r|².
fn residual() -> real {
    var squares = real(0.0);
    #for i in M
        var acc = real(0.0);
        #for c in N
            acc += ops[OFF_C + i * N + c] * x[c];
        #end
        r[i] = acc - dk[i];
        squares += r[i] * r[i];
    #end
    return squares;
}

// λ ← λ + Δ_xᵀ λ + ω Cᵀ r.
fn adjoint_step(w: real) {
    #for c in N
        previous[c] = lam[c];
    #end
    #for c in N
        var acc = real(0.0);
        #for i in N
            acc += ops[i * P + c] * previous[i];
        #end
        var forcing = real(0.0);
        #for i in M
            forcing += ops[OFF_C + i * N + c] * r[i];
        #end
        lam[c] = previous[c] + acc + w * forcing;
    #end
}

// Ḡ_Δ += λ [x; u]ᵀ, Ḡ_C += ω r xᵀ.
fn accumulate(w: real) {
    #for i in N
        let l = lam[i];
        #for c in N
            g_delta[i * P + c] += l * x[c];
        #end
        #for j in SM
            g_delta[i * P + N + j] += l * u[j];
        #end
    #end
    #for i in M
        let wr = w * r[i];
        #for c in N
            g_out[i * N + c] += wr * x[c];
        #end
    #end
}

fn x_finite() -> bool {
    var finite = true;
    #for c in N
        finite = finite && is_finite(x[c]);
    #end
    return finite;
}

fn lam_finite() -> bool {
    var finite = true;
    #for c in N
        finite = finite && is_finite(lam[c]);
    #end
    return finite;
}

fn forward(begin: u32, count: u32, total: u32) {
    #for c in N
        x[c] = state[at(STATE_X + c)];
    #end
    cost = state[at(STATE_COST)];
    for (var k = 0u; k < count; k++) {
        let step = begin + k;
        if (step % SEG == 0u) {
            let base = STATE_CHECKPOINTS + (step / SEG) * N;
            #for c in N
                state[at(base + c)] = x[c];
            #end
        }
        let w = load_step(k);
        cost += real(0.5) * w * residual();
        advance();
        if (status == real(0.0) && !(x_finite() && is_finite(cost))) {
            status = real(step + 1u);
        }
    }
    if (begin + count == total) {
        #for c in M
            dk[c] = constants[CONST_D_END + c];
        #end
        let w = constants[CONST_W_END];
        cost += real(0.5) * w * residual();
        #for c in N
            lam[c] = real(0.0);
        #end
        adjoint_step(w);
        #for c in N
            state[at(STATE_LAMBDA + c)] = lam[c];
        #end
        #for i in M
            let wr = w * r[i];
            #for c in N
                state[at(STATE_G_OUTPUT + i * N + c)] = real(0.0) + wr * x[c];
            #end
        #end
    }
    #for c in N
        state[at(STATE_X + c)] = x[c];
    #end
    state[at(STATE_COST)] = cost;
}

fn backward(begin: u32, count: u32) {
    #for c in N
        lam[c] = state[at(STATE_LAMBDA + c)];
    #end
    #for e in GD_ENTRIES
        g_delta[e] = state[at(STATE_G_DELTA + e)];
    #end
    #for e in GO_ENTRIES
        g_out[e] = state[at(STATE_G_OUTPUT + e)];
    #end
    let end = begin + count;
    var first = begin + ((count - 1u) / SEG) * SEG;
    loop {
        let last = min(first + SEG, end);
        // The segment's states, recomputed from its checkpoint.
        let checkpoint = STATE_CHECKPOINTS + (first / SEG) * N;
        #for c in N
            x[c] = state[at(checkpoint + c)];
            state[at(STATE_SEGMENT + c)] = x[c];
        #end
        for (var k = first; k + 1u < last; k++) {
            load_step(k - begin);
            advance();
            let base = STATE_SEGMENT + (k + 1u - first) * N;
            #for c in N
                state[at(base + c)] = x[c];
            #end
        }
        // The adjoint, from the segment's end down to its start.
        for (var k = last; k > first; k--) {
            let step = k - 1u;
            let base = STATE_SEGMENT + (step - first) * N;
            #for c in N
                x[c] = state[at(base + c)];
            #end
            let w = load_step(step - begin);
            residual();
            accumulate(w);
            adjoint_step(w);
            if (status == real(0.0) && !lam_finite()) {
                status = real(step + 1u);
            }
        }
        if (first == begin) {
            break;
        }
        first -= SEG;
    }
    #for c in N
        state[at(STATE_LAMBDA + c)] = lam[c];
    #end
    #for e in GD_ENTRIES
        state[at(STATE_G_DELTA + e)] = g_delta[e];
    #end
    #for e in GO_ENTRIES
        state[at(STATE_G_OUTPUT + e)] = g_out[e];
    #end
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let members = dispatch.members;
    let i = gid.y * dispatch.row_width + gid.x;
    if (i >= members) {
        return;
    }
    member = i;
    stride = members;
    #for e in OPS_ENTRIES
        ops[e] = params[e * members + i];
    #end
    status = state[at(STATE_STATUS)];
    if (dispatch.sweep == 0u) {
        forward(dispatch.step_begin, dispatch.step_count, dispatch.steps_total);
    } else {
        backward(dispatch.step_begin, dispatch.step_count);
    }
    state[at(STATE_STATUS)] = status;
}
