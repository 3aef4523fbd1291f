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
// switches TRAJECTORY, OUTPUTS, ENERGY (1 on, 0 off), the STATE_*, RECORD_*, PARAM_* and
// CONST_* offsets generated from the layouts declared in src/kernels/linear_ph.rs, and the
// bindings (src/kernels/abi.rs). A switched-off quantity is neither computed nor stored.
// CPU twin: `linear_ph_step` in src/kernels/linear_ph_twin.rs.
//
// params are structure-of-arrays across the `members` of the chunk (entry e of member i at
// e · members + i, so neighbouring invocations read neighbouring addresses):
//   Δ (N·P) | Y (Y_ROWS·P) | W (W_ROWS·P) | Q (N·N with energies), all row-major.
#import records
#import finite
#import linear_ph_energy

// Offsets of the operator blocks: the generated PARAM_* constants.
const OFF_OUT: u32 = PARAM_OUTPUT;
const OFF_DISS: u32 = PARAM_DISSIPATION;
const OFF_Q: u32 = PARAM_Q;

fn op(entry: u32, i: u32) -> real {
    return params[entry * dispatch.members + i];
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * dispatch.row_width + gid.x;
    if (i >= dispatch.members) {
        return;
    }
    let members = dispatch.members;
    let h = constants[CONST_H];

    var x: array<real, N>;
    var carry: array<real, N>;
    for (var r = 0u; r < N; r++) {
        x[r] = state[(STATE_X + r) * members + i];
        carry[r] = state[(STATE_CARRY + r) * members + i];
    }
    var sums: EnergySums;
    if (ENERGY == 1u) {
        sums = load_sums(i);
    }
    // 0 while finite, else the first step after which x or the step energies were not.
    var status = state[STATE_STATUS * members + i];

    var delta: array<real, N>;
    var y: array<real, SM_ARRAY>;
    var slot = 0u;
    for (var k = 0u; k < dispatch.step_count; k++) {
        let u0 = k * SM;
        let done = dispatch.step_begin + k + 1u;
        let record = records_step(done);
        // δ = Δ v.
        for (var r = 0u; r < N; r++) {
            var acc = real(0.0);
            for (var c = 0u; c < N; c++) {
                acc += op(r * P + c, i) * x[c];
            }
            for (var j = 0u; j < SM; j++) {
                acc += op(r * P + N + j, i) * stream[u0 + j];
            }
            delta[r] = acc;
        }
        // y = Y v, port = yᵀ U: every step with energies, else at record points only.
        var port = real(0.0);
        if (ENERGY == 1u || (OUTPUTS == 1u && record)) {
            for (var row = 0u; row < Y_ROWS; row++) {
                var acc = real(0.0);
                for (var c = 0u; c < N; c++) {
                    acc += op(OFF_OUT + row * P + c, i) * x[c];
                }
                for (var j = 0u; j < SM; j++) {
                    acc += op(OFF_OUT + row * P + N + j, i) * stream[u0 + j];
                }
                y[row] = acc;
                port += acc * stream[u0 + row];
            }
        }
        var stored = real(0.0);
        var dissipated = real(0.0);
        if (ENERGY == 1u) {
            // ‖W v‖².
            for (var row = 0u; row < W_ROWS; row++) {
                var acc = real(0.0);
                for (var c = 0u; c < N; c++) {
                    acc += op(OFF_DISS + row * P + c, i) * x[c];
                }
                for (var j = 0u; j < SM; j++) {
                    acc += op(OFF_DISS + row * P + N + j, i) * stream[u0 + j];
                }
                dissipated += acc * acc;
            }
            // stored = δᵀ Q (x + δ/2).
            for (var r = 0u; r < N; r++) {
                var q_mid = real(0.0);
                for (var c = 0u; c < N; c++) {
                    q_mid += op(OFF_Q + r * N + c, i) * (x[c] + real(0.5) * delta[c]);
                }
                stored += delta[r] * q_mid;
            }
        }
        // x ← x + δ, Kahan-compensated.
        for (var r = 0u; r < N; r++) {
            let updated = kahan(x[r], carry[r], delta[r]);
            x[r] = updated.x;
            carry[r] = updated.y;
        }
        let port_h = h * port;
        let dissipated_h = h * dissipated;
        if (ENERGY == 1u) {
            sums = accumulate(sums, stored, port_h, dissipated_h);
        }

        if (status == real(0.0)) {
            var finite = ENERGY == 0u
                || (is_finite(stored) && is_finite(port_h) && is_finite(dissipated_h));
            for (var r = 0u; r < N; r++) {
                finite = finite && is_finite(x[r]);
            }
            if (!finite) {
                status = real(done);
            }
        }
        if (record) {
            let base = slot * RECORD_ENTRIES;
            if (TRAJECTORY == 1u) {
                for (var r = 0u; r < N; r++) {
                    records[(base + RECORD_X + r) * members + i] = x[r];
                }
            }
            if (OUTPUTS == 1u) {
                for (var row = 0u; row < SM; row++) {
                    records[(base + RECORD_Y + row) * members + i] = y[row];
                }
            }
            if (ENERGY == 1u) {
                sums = record_window(sums, base, i);
            }
            slot += 1u;
        }
    }

    for (var r = 0u; r < N; r++) {
        state[(STATE_X + r) * members + i] = x[r];
        state[(STATE_CARRY + r) * members + i] = carry[r];
    }
    state[STATE_STATUS * members + i] = status;
    if (ENERGY == 1u) {
        store_sums(i, sums);
    }
}
