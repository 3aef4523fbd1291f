//! The CPU twin of the linear-PH kernels (`shaders/linear_ph/step.wgsl` and
//! `step_cooperative.wgsl`): what a kernel's `main` does for one member of a dispatch, on the
//! chunk's buffers, with the same sums in the same order, in f64:
//!
//! ```text
//!   v = [x_k; U_k],  δ = Δ v,  x_{k+1} = x_k + δ            (Kahan-compensated)
//!   y = Y v,  port = h yᵀ U_k,  dissipated = h ‖W v‖²
//!   stored = δᵀ Q (x_k + δ/2),  supplied = port − dissipated
//! ```
//!
//! with the energies summed (Neumaier) into the run's totals and the record window's sums,
//! the largest |stored − supplied| kept, and the first non-finite step noted in `status`.
//! The cooperative kernel's threads sum their rows' partial energies before thread 0 adds
//! them up; its twin sums in row order, as the per-invocation kernel does.

use crate::compensated::kahan_add;
use crate::kernels::energy_sums::EnergySums;
use crate::kernels::{KernelSource, TwinBindings};

/// The kernel's specialisation, read from its constants as the WGSL sees them.
struct StepShape {
    /// N, S·M, the rows of Y and of W applied, P = N + S·M.
    n: usize,
    sm: usize,
    y_rows: usize,
    w_rows: usize,
    p: usize,
    trajectory: bool,
    outputs: bool,
    energy: bool,
}

impl StepShape {
    fn of(kernel: &KernelSource) -> Self {
        let constant = |name| kernel.constant(name) as usize;
        StepShape {
            n: constant("N"),
            sm: constant("SM"),
            y_rows: constant("Y_ROWS"),
            w_rows: constant("W_ROWS"),
            p: constant("P"),
            trajectory: constant("TRAJECTORY") == 1,
            outputs: constant("OUTPUTS") == 1,
            energy: constant("ENERGY") == 1,
        }
    }
}

/// One member's operators [Δ; Y; W] (row-major, p columns) then Q, in the order of the
/// `PARAM` layout, read from the chunk's packing: structure-of-arrays for the
/// per-invocation kernel, member-major and column-major for the cooperative one
/// (`pack_operators`).
fn member_operators(
    kernel: &KernelSource,
    shape: &StepShape,
    b: &TwinBindings,
    i: usize,
) -> Vec<f64> {
    let entries = kernel.params.entries();
    if kernel.name != "linear_ph_step_cooperative" {
        return b.params_of(i, entries);
    }
    let (n, p) = (shape.n, shape.p);
    let rows = n + shape.y_rows + shape.w_rows;
    let base = i * entries;
    (0..entries)
        .map(|e| {
            if e < rows * p {
                b.params[base + (e % p) * rows + e / p]
            } else {
                let q = e - rows * p;
                b.params[base + rows * p + (q % n) * n + q / n]
            }
        })
        .collect()
}

/// The twin of `main` in the linear-PH step kernels for member `i` of the dispatch.
#[expect(
    clippy::needless_range_loop,
    reason = "the same indexed loops as step.wgsl, so that both sum in the same order"
)]
pub fn linear_ph_step_twin(kernel: &KernelSource, b: &TwinBindings, i: usize) {
    let shape = StepShape::of(kernel);
    let (n, sm, p) = (shape.n, shape.sm, shape.p);
    let ops = member_operators(kernel, &shape, b, i);
    let (off_out, off_diss, off_q) = (
        kernel.params.offset("output"),
        kernel.params.offset("dissipation"),
        kernel.params.offset("q"),
    );
    let h = b.constants[kernel.constants_layout.offset("h")];
    let state = b.state_of(i);
    let records = b.records_of(i);
    let (x_at, carry_at, status_at) = (
        kernel.state.offset("x"),
        kernel.state.offset("carry"),
        kernel.state.offset("status"),
    );
    let mut x: Vec<f64> = (0..n).map(|r| state.get(x_at + r)).collect();
    let mut carry: Vec<f64> = (0..n).map(|r| state.get(carry_at + r)).collect();
    let mut sums = shape.energy.then(|| EnergySums::load(kernel, &state));
    let mut status = state.get(status_at);
    let (mut u, mut delta, mut y) = (vec![0.0; sm], vec![0.0; n], vec![0.0; sm]);
    let record_entries = kernel.record.entries();
    let (record_x, record_y) = (kernel.record.offset("x"), kernel.record.offset("y"));
    // Row · v of the [x; U] operator row whose first entry is `base`.
    let apply_row = |base: usize, x: &[f64], u: &[f64]| {
        let mut acc = 0.0;
        for c in 0..n {
            acc += ops[base + c] * x[c];
        }
        for j in 0..sm {
            acc += ops[base + n + j] * u[j];
        }
        acc
    };
    let mut slot = 0;
    for k in 0..b.dispatch.step_count as usize {
        let done = b.dispatch.step_begin + k as u32 + 1;
        let recorded = b.records_step(done);
        u.copy_from_slice(&b.stream[k * sm..(k + 1) * sm]);
        for r in 0..n {
            delta[r] = apply_row(r * p, &x, &u);
        }
        // y = Y v and port = yᵀ U: every step with energies, else where outputs are recorded.
        let mut port = 0.0;
        if shape.energy || (shape.outputs && recorded) {
            for row in 0..shape.y_rows {
                let acc = apply_row(off_out + row * p, &x, &u);
                y[row] = acc;
                port += acc * u[row];
            }
        }
        let (mut stored, mut dissipated) = (0.0, 0.0);
        if shape.energy {
            for row in 0..shape.w_rows {
                let acc = apply_row(off_diss + row * p, &x, &u);
                dissipated += acc * acc;
            }
            for r in 0..n {
                let mut q_mid = 0.0;
                for c in 0..n {
                    q_mid += ops[off_q + r * n + c] * (x[c] + 0.5 * delta[c]);
                }
                stored += delta[r] * q_mid;
            }
        }
        for r in 0..n {
            kahan_add(&mut x[r], &mut carry[r], delta[r]);
        }
        let (port_h, dissipated_h) = (h * port, h * dissipated);
        if let Some(sums) = &mut sums {
            sums.accumulate(stored, port_h, dissipated_h);
        }
        if status == 0.0 {
            let energies_finite =
                stored.is_finite() && port_h.is_finite() && dissipated_h.is_finite();
            let finite = (!shape.energy || energies_finite) && x.iter().all(|v| v.is_finite());
            if !finite {
                status = done as f64;
            }
        }
        if recorded {
            let base = slot * record_entries;
            if shape.trajectory {
                for r in 0..n {
                    records.set(base + record_x + r, x[r]);
                }
            }
            if shape.outputs {
                for row in 0..sm {
                    records.set(base + record_y + row, y[row]);
                }
            }
            if let Some(sums) = &mut sums {
                sums.record_window(kernel, &records, base);
            }
            slot += 1;
        }
    }
    for r in 0..n {
        state.set(x_at + r, x[r]);
        state.set(carry_at + r, carry[r]);
    }
    state.set(status_at, status);
    if let Some(sums) = &sums {
        sums.store(kernel, &state);
    }
}
