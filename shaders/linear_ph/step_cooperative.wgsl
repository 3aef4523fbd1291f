// The workgroup-cooperative variant of linear_ph_step.wgsl for large members (n up to 128):
// one workgroup of WG threads advances one member. Same step, same energies:
//
//   v = [x_k; U_k],  [δ; y; w] = [Δ; Y; W] v,  x_{k+1} = x_k + δ (Kahan)
//   port = h yᵀ U_k,  dissipated = h ‖w‖²,  stored = δᵀ Q (x_k + δ/2)
//
// Thread t owns rows t, t + WG, … of [Δ; Y; W] and of Q (x + δ/2); v lives in workgroup
// memory; thread 0 sums the partial energies in a fixed order (deterministic) and keeps the
// compensated totals. CPU twin: `linear_ph_step_twin` in src/families/linear_ph/twin.rs (same step;
// sums in row order).
//
// The engine prepends what linear_ph_step.wgsl lists. params, per member (member-major,
// offset member · OPS), column-major so that the threads of a workgroup read neighbouring
// addresses: [Δ; Y; W] (ROWS × P) at c·ROWS + row, then Q at OFF_Q + c·N + r (Y, W and Q
// as far as the recording switches need them, see linear_ph_step.wgsl).
#import records
#import finite
#import energy_balance

// The member-major, column-major arrangement of the PARAM layout's entries: the blocks
// Δ, Y, W form one ROWS × P matrix stored by columns, then Q by columns; the block sizes
// (and so PARAM_Q and PARAM_ENTRIES) are those of the declared layout.
const ROWS: u32 = N + Y_ROWS + W_ROWS;
const OFF_Q: u32 = PARAM_Q;
const OPS: u32 = PARAM_ENTRIES;

var<workgroup> v: array<real, P>;
var<workgroup> carry: array<real, N>;
var<workgroup> delta: array<real, N>;
var<workgroup> mid: array<real, N>;
var<workgroup> y: array<real, SM_ARRAY>;
// Per thread: (port, ‖w‖², stored) partial sums.
var<workgroup> partial: array<vec3<real>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let member = wid.y * dispatch.row_width + wid.x;
    if (member >= dispatch.members) {
        return;
    }
    let members = dispatch.members;
    let base = member * OPS;
    let h = constants[CONST_H];

    for (var r = t; r < N; r += WG) {
        v[r] = state[(STATE_X + r) * members + member];
        carry[r] = state[(STATE_CARRY + r) * members + member];
    }
    // The energy sums and the status (0 while finite, else the first step after which x or
    // the step energies were not) live in thread 0's registers.
    var sums: EnergySums;
    var status = real(0.0);
    var energies_finite = true;
    if (t == 0u) {
        if (ENERGY == 1u) {
            sums = load_sums(member);
        }
        status = state[STATE_STATUS * members + member];
    }

    var slot = 0u;
    for (var k = 0u; k < dispatch.step_count; k++) {
        for (var j = t; j < SM; j += WG) {
            v[N + j] = stream[k * SM + j];
        }
        workgroupBarrier();
        // [δ; y; w] = [Δ; Y; W] v, row by row.
        var part = vec3<real>(real(0.0), real(0.0), real(0.0));
        for (var row = t; row < ROWS; row += WG) {
            var acc = real(0.0);
            for (var c = 0u; c < P; c++) {
                acc += params[base + c * ROWS + row] * v[c];
            }
            if (row < N) {
                delta[row] = acc;
            } else if (row < N + Y_ROWS) {
                y[row - N] = acc;
                part.x += acc * v[row];
            } else {
                part.y += acc * acc;
            }
        }
        workgroupBarrier();
        for (var r = t; r < N; r += WG) {
            mid[r] = v[r] + real(0.5) * delta[r];
        }
        workgroupBarrier();
        // stored = δᵀ Q (x + δ/2), rows owned as above.
        for (var r = t; r < N && ENERGY == 1u; r += WG) {
            var q_mid = real(0.0);
            for (var c = 0u; c < N; c++) {
                q_mid += params[base + OFF_Q + c * N + r] * mid[c];
            }
            part.z += delta[r] * q_mid;
        }
        partial[t] = part;
        workgroupBarrier();
        // x ← x + δ, Kahan-compensated, by the owners of the rows.
        for (var r = t; r < N; r += WG) {
            let updated = kahan(v[r], carry[r], delta[r]);
            v[r] = updated.x;
            carry[r] = updated.y;
        }
        if (t == 0u) {
            var total = vec3<real>(real(0.0), real(0.0), real(0.0));
            for (var q = 0u; q < WG; q++) {
                total += partial[q];
            }
            let port_h = h * total.x;
            let dissipated_h = h * total.y;
            if (ENERGY == 1u) {
                sums = accumulate(sums, total.z, port_h, dissipated_h);
                energies_finite = is_finite(total.z) && is_finite(port_h)
                    && is_finite(dissipated_h);
            }
        }
        let done = dispatch.step_begin + k + 1u;
        if (records_step(done)) {
            let rec = slot * RECORD_ENTRIES;
            for (var r = t; r < N && TRAJECTORY == 1u; r += WG) {
                records[(rec + RECORD_X + r) * members + member] = v[r];
            }
            for (var j = t; j < SM && OUTPUTS == 1u; j += WG) {
                records[(rec + RECORD_Y + j) * members + member] = y[j];
            }
            if (t == 0u && ENERGY == 1u) {
                sums = record_window(sums, rec, member);
            }
            slot += 1u;
        }
        workgroupBarrier();
        // Every owner has updated its rows of x: thread 0 checks them all.
        if (t == 0u && status == real(0.0)) {
            var finite = energies_finite;
            for (var r = 0u; r < N; r++) {
                finite = finite && is_finite(v[r]);
            }
            if (!finite) {
                status = real(done);
            }
        }
    }

    for (var r = t; r < N; r += WG) {
        state[(STATE_X + r) * members + member] = v[r];
        state[(STATE_CARRY + r) * members + member] = carry[r];
    }
    if (t == 0u) {
        if (ENERGY == 1u) {
            store_sums(member, sums);
        }
        state[STATE_STATUS * members + member] = status;
    }
}
