// The compensated energy bookkeeping of the kernels that step a discrete-time
// port-Hamiltonian system (linear PH, nonlinear PH from expressions): the totals over the
// run and the sums over the current recording window, each with its Neumaier compensation,
// and the largest per-step |ΔH̄ − ΔH̃|. Energies are ordered stored, supplied, port,
// dissipated. A kernel importing it declares the state fields of
// `crate::kernels::energy_sums::energy_state_fields` and a record field `energy` of 4 reals;
// the STATE_* and RECORD_* offsets are generated from those layouts. Handled by value, like
// `neumaier`. The `#for` loops are expanded by the engine (unrolled where the kernel sets
// UNROLL). Host twin: `EnergySums` in src/kernels/energy_sums.rs.
#import compensated
#import finite

struct EnergySums {
    totals: array<real, 4>,
    totals_comp: array<real, 4>,
    window: array<real, 4>,
    window_comp: array<real, 4>,
    max_residual: real,
}

fn load_sums(member: u32) -> EnergySums {
    let members = dispatch.members;
    var sums: EnergySums;
    #for c in 4u
        sums.totals[c] = state[(STATE_TOTALS + c) * members + member];
        sums.totals_comp[c] = state[(STATE_TOTALS_COMP + c) * members + member];
        sums.window[c] = state[(STATE_WINDOW + c) * members + member];
        sums.window_comp[c] = state[(STATE_WINDOW_COMP + c) * members + member];
    #end
    sums.max_residual = state[STATE_MAX_RESIDUAL * members + member];
    return sums;
}

fn store_sums(member: u32, value: EnergySums) {
    let members = dispatch.members;
    var sums = value;
    #for c in 4u
        state[(STATE_TOTALS + c) * members + member] = sums.totals[c];
        state[(STATE_TOTALS_COMP + c) * members + member] = sums.totals_comp[c];
        state[(STATE_WINDOW + c) * members + member] = sums.window[c];
        state[(STATE_WINDOW_COMP + c) * members + member] = sums.window_comp[c];
    #end
    state[STATE_MAX_RESIDUAL * members + member] = sums.max_residual;
}

// Adds one step: stored ΔH̄, supplied ΔH̃ = port − dissipated, port and dissipated energy.
fn accumulate(value: EnergySums, stored: real, port: real, dissipated: real) -> EnergySums {
    var sums = value;
    let supplied = port - dissipated;
    var energies = array<real, 4>(stored, supplied, port, dissipated);
    #for c in 4u
        let total = neumaier(sums.totals[c], sums.totals_comp[c], energies[c]);
        sums.totals[c] = total.x;
        sums.totals_comp[c] = total.y;
        let window = neumaier(sums.window[c], sums.window_comp[c], energies[c]);
        sums.window[c] = window.x;
        sums.window_comp[c] = window.y;
    #end
    sums.max_residual = running_max(sums.max_residual, abs(stored - supplied));
    return sums;
}

// Writes the window's energies into the record slot starting at entry `base` and opens a
// new window.
fn record_window(value: EnergySums, base: u32, member: u32) -> EnergySums {
    var sums = value;
    #for c in 4u
        let entry = (base + RECORD_ENERGY + c) * dispatch.members + member;
        records[entry] = sums.window[c] + sums.window_comp[c];
        sums.window[c] = real(0.0);
        sums.window_comp[c] = real(0.0);
    #end
    return sums;
}
