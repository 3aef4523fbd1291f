// Shared by the ensemble step kernels (linear_ph_step.wgsl and
// linear_ph_step_cooperative.wgsl); the planner places it after the specialisation
// constants and before the kernel. Host mirrors: src/gpu/layout.rs.
//
// state and records are structure-of-arrays across the `members` of a chunk (entry e of
// member i at e · members + i):
//   state:   x (N) | carry (N) | totals (4) | totals' compensation (4)
//            | window (4) | window's compensation (4) | max |ΔH̄ − ΔH̃| (1)
//   records: per record slot: x (N) | y (SM) | window energies (4)
// Energies are ordered stored, supplied, port, dissipated.

const STATE_TOTALS: u32 = 2u * N;
const RECORD: u32 = N + SM + 4u;

// Keep in sync with `KernelParams` in src/gpu/layout.rs.
struct Params {
    members: u32,
    step_begin: u32,
    step_count: u32,
    steps_total: u32,
    record_every: u32,
    row_width: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> ops: array<real>;
@group(0) @binding(2) var<storage, read> inputs: array<real>;
@group(0) @binding(3) var<storage, read_write> state: array<real>;
@group(0) @binding(4) var<storage, read_write> records: array<real>;
@group(0) @binding(5) var<storage, read> scalars: array<real>;

// Neumaier's compensated sum: returns (sum + value, updated compensation). Values in and
// out rather than pointers: naga 30's SPIR-V writer cannot pass a pointer to a dynamically
// indexed array element.
fn neumaier(sum: real, comp: real, value: real) -> vec2<real> {
    let t = sum + value;
    if (abs(sum) >= abs(value)) {
        return vec2<real>(t, comp + ((sum - t) + value));
    }
    return vec2<real>(t, comp + ((value - t) + sum));
}

// Whether completing global step `done` records a sample.
fn records_step(done: u32) -> bool {
    return done % params.record_every == 0u || done == params.steps_total;
}

// One member's compensated energy bookkeeping: the totals over the run and the sums over the
// current recording window, each with its Neumaier compensation, and the largest per-step
// |ΔH̄ − ΔH̃|. Handled by value, like `neumaier`.
struct EnergySums {
    totals: array<real, 4>,
    totals_comp: array<real, 4>,
    window: array<real, 4>,
    window_comp: array<real, 4>,
    max_residual: real,
}

fn load_sums(member: u32) -> EnergySums {
    let members = params.members;
    var sums: EnergySums;
    for (var c = 0u; c < 4u; c++) {
        sums.totals[c] = state[(STATE_TOTALS + c) * members + member];
        sums.totals_comp[c] = state[(STATE_TOTALS + 4u + c) * members + member];
        sums.window[c] = state[(STATE_TOTALS + 8u + c) * members + member];
        sums.window_comp[c] = state[(STATE_TOTALS + 12u + c) * members + member];
    }
    sums.max_residual = state[(STATE_TOTALS + 16u) * members + member];
    return sums;
}

fn store_sums(member: u32, value: EnergySums) {
    let members = params.members;
    var sums = value;
    for (var c = 0u; c < 4u; c++) {
        state[(STATE_TOTALS + c) * members + member] = sums.totals[c];
        state[(STATE_TOTALS + 4u + c) * members + member] = sums.totals_comp[c];
        state[(STATE_TOTALS + 8u + c) * members + member] = sums.window[c];
        state[(STATE_TOTALS + 12u + c) * members + member] = sums.window_comp[c];
    }
    state[(STATE_TOTALS + 16u) * members + member] = sums.max_residual;
}

// Adds one step: stored ΔH̄, supplied ΔH̃ = port − dissipated, port and dissipated energy.
fn accumulate(value: EnergySums, stored: real, port: real, dissipated: real) -> EnergySums {
    var sums = value;
    let supplied = port - dissipated;
    var energies = array<real, 4>(stored, supplied, port, dissipated);
    for (var c = 0u; c < 4u; c++) {
        let total = neumaier(sums.totals[c], sums.totals_comp[c], energies[c]);
        sums.totals[c] = total.x;
        sums.totals_comp[c] = total.y;
        let window = neumaier(sums.window[c], sums.window_comp[c], energies[c]);
        sums.window[c] = window.x;
        sums.window_comp[c] = window.y;
    }
    sums.max_residual = max(sums.max_residual, abs(stored - supplied));
    return sums;
}

// Writes the window's energies into the record slot starting at entry `base` and opens a
// new window.
fn record_window(value: EnergySums, base: u32, member: u32) -> EnergySums {
    var sums = value;
    for (var c = 0u; c < 4u; c++) {
        let entry = (base + N + SM + c) * params.members + member;
        records[entry] = sums.window[c] + sums.window_comp[c];
        sums.window[c] = real(0.0);
        sums.window_comp[c] = real(0.0);
    }
    return sums;
}
