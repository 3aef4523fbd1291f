// One invocation advances one linear port-Hamiltonian member through `step_count` steps of
// Definition 1 (Kotyczka & Lefèvre 2019) with the planner's step operators:
//
//   v = [x_k; U_k]            U_k: the s·m stage inputs, shared by all members
//   δ = Δ v,  x_{k+1} = x_k + δ                       (Kahan-compensated)
//   y = Y v,  port = h yᵀ U_k,  dissipated = h ‖W v‖²
//   stored = δᵀ Q (x_k + δ/2),  supplied = port − dissipated
//
// The engine prepends `alias real`, WG (workgroup size), the specialisation constants N
// (states), S (stages), M (inputs), SM = S·M, SM_ARRAY = max(SM, 1), Y_ROWS (rows of Y
// applied: SM, or 0 when neither outputs nor energies are recorded), W_ROWS (rows of W: S
// times the chunk's dissipation rank, 0 without energies), P = N + SM, the recording
// switches TRAJECTORY, OUTPUTS, ENERGY (1 on, 0 off), OPS_PRIVATE (1: the member's
// operators are copied into private memory once per dispatch, 0: read from `params` at every
// use; the rule is `LinearPhShape::private_operators`), OPS_ENTRIES (the operator entries
// copied) and OPS_ARRAY = max(OPS_ENTRIES, 1), the STATE_*, RECORD_*, PARAM_* and CONST_*
// offsets generated from the layouts declared in src/families/linear_ph/shape.rs, and the
// bindings (src/kernels/abi.rs). A switched-off quantity is neither computed nor stored.
// CPU twin: `linear_ph_step_twin` in src/families/linear_ph/twin.rs (the same sums in the same
// order).
//
// params are structure-of-arrays across the `members` of the chunk (entry e of member i at
// e · members + i, so neighbouring invocations read neighbouring addresses):
//   Δ (N·P) | Y (Y_ROWS·P) | W (W_ROWS·P) | Q (N·N with energies), all row-major.
//
// Steps run in segments that end at a record point or at the end of the dispatch, so the
// record stores (and, without energies, y = Y v) sit outside the inner step loop.
#import records
#import finite
#import energy_balance

// Offsets of the operator blocks: the generated PARAM_* constants.
const OFF_OUT: u32 = PARAM_OUTPUT;
const OFF_DISS: u32 = PARAM_DISSIPATION;
const OFF_Q: u32 = PARAM_Q;

// The invocation's member, the chunk's member count (the structure-of-arrays stride), and
// its operators when OPS_PRIVATE is 1.
var<private> member: u32;
var<private> stride: u32;
var<private> ops: array<real, OPS_ARRAY>;

// The member's state and the step's work arrays.
var<private> x: array<real, N>;
var<private> carry: array<real, N>;
var<private> u: array<real, SM_ARRAY>;
var<private> delta: array<real, N>;
var<private> y: array<real, SM_ARRAY>;
var<private> sums: EnergySums;
// 0 while finite, else the first step after which x or the step energies were not.
var<private> status: real;

fn op(entry: u32) -> real {
    if (OPS_PRIVATE == 1u) {
        return ops[entry];
    }
    return params[entry * stride + member];
}

// Row · v for the row of a [x; U] operator block whose first entry is `base`.
fn apply_row(base: u32) -> real {
    var acc = real(0.0);
    #for c in N
        acc += op(base + c) * x[c];
    #end
    #for j in SM
        acc += op(base + N + j) * u[j];
    #end
    return acc;
}

// Local step `k` of the dispatch, completing global step `done`; `outputs`: compute y.
fn advance(k: u32, done: u32, h: real, outputs: bool) {
    #for j in SM
        u[j] = stream[k * SM + j];
    #end
    // δ = Δ v.
    #for r in N
        delta[r] = apply_row(r * P);
    #end
    // y = Y v, port = yᵀ U: every step with energies, else at record points only.
    var port = real(0.0);
    if (ENERGY == 1u || (OUTPUTS == 1u && outputs)) {
        #for row in Y_ROWS
            let acc = apply_row(OFF_OUT + row * P);
            y[row] = acc;
            port += acc * u[row];
        #end
    }
    var stored = real(0.0);
    var dissipated = real(0.0);
    if (ENERGY == 1u) {
        // ‖W v‖².
        #for row in W_ROWS
            let acc = apply_row(OFF_DISS + row * P);
            dissipated += acc * acc;
        #end
        // stored = δᵀ Q (x + δ/2).
        #for r in N
            var q_mid = real(0.0);
            #for c in N
                q_mid += op(OFF_Q + r * N + c) * (x[c] + real(0.5) * delta[c]);
            #end
            stored += delta[r] * q_mid;
        #end
    }
    // x ← x + δ, Kahan-compensated.
    #for r in N
        let updated = kahan(x[r], carry[r], delta[r]);
        x[r] = updated.x;
        carry[r] = updated.y;
    #end
    let port_h = h * port;
    let dissipated_h = h * dissipated;
    if (ENERGY == 1u) {
        sums = accumulate(sums, stored, port_h, dissipated_h);
    }
    if (status == real(0.0)) {
        var finite = ENERGY == 0u
            || (is_finite(stored) && is_finite(port_h) && is_finite(dissipated_h));
        #for r in N
            finite = finite && is_finite(x[r]);
        #end
        if (!finite) {
            status = real(done);
        }
    }
}

// Writes record slot `slot`.
fn record(slot: u32) {
    let base = slot * RECORD_ENTRIES;
    let i = member;
    if (TRAJECTORY == 1u) {
        #for r in N
            records[(base + RECORD_X + r) * stride + i] = x[r];
        #end
    }
    if (OUTPUTS == 1u) {
        #for row in SM
            records[(base + RECORD_Y + row) * stride + i] = y[row];
        #end
    }
    if (ENERGY == 1u) {
        sums = record_window(sums, base, i);
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
    stride = members;
    let h = constants[CONST_H];

    if (OPS_PRIVATE == 1u) {
        #for e in OPS_ENTRIES
            ops[e] = params[e * members + i];
        #end
    }
    #for r in N
        x[r] = state[(STATE_X + r) * members + i];
        carry[r] = state[(STATE_CARRY + r) * members + i];
    #end
    if (ENERGY == 1u) {
        sums = load_sums(i);
    }
    status = state[STATE_STATUS * members + i];

    let begin = dispatch.step_begin;
    let count = dispatch.step_count;
    let every = dispatch.record_every;
    let total = dispatch.steps_total;
    var k = 0u;
    var slot = 0u;
    loop {
        if (k >= count) {
            break;
        }
        // The segment's record point: the next multiple of `every` after the steps done,
        // or the run's last step (records_step's rule), and its local end.
        let done = begin + k;
        let next = done + min(every - done % every, total - done);
        let end = min(next - begin, count);
        for (; k + 1u < end; k++) {
            advance(k, begin + k + 1u, h, false);
        }
        let recorded = begin + end == next;
        advance(k, begin + end, h, recorded);
        k = end;
        if (recorded) {
            record(slot);
            slot += 1u;
        }
    }

    #for r in N
        state[(STATE_X + r) * members + i] = x[r];
        state[(STATE_CARRY + r) * members + i] = carry[r];
    #end
    state[STATE_STATUS * members + i] = status;
    if (ENERGY == 1u) {
        store_sums(i, sums);
    }
}
