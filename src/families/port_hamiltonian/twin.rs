//! The CPU twin of `shaders/port_hamiltonian/step.wgsl`: what the kernel's `main` does for
//! one member of a dispatch, on the chunk's buffers, with the same operations in the same
//! order, in f64. The stage tape and the energy tape are evaluated by [`Tape::eval`], whose
//! instructions the kernel's generated `ph_stage` and `ph_energy` execute as written; the
//! Newton matrix is factorised and solved in nalgebra's order, as the reference stepper's
//! `LU` does ([`super::gauss_step`]), so the twin's results are the reference's to the
//! last bit:
//!
//! ```text
//!   Z_i = h Σ_j a_ij f(x_k + Z_j, u_j)          Newton from Z = 0, exact Jacobian
//!   x_{k+1} = x_k + h Σ_j b_j f_j                (Kahan-compensated)
//!   y_i = b_i G(x_i)ᵀ e_i,  port = h Σ y_iᵀ u_i,  dissipated = h Σ b_i e_iᵀ R(x_i) e_i
//!   stored = H(x_{k+1}) − H(x_k)
//! ```

use super::shape::PortHamiltonianShape;
use crate::compensated::kahan_add;
use crate::expr::Tape;
use crate::kernels::dense_lu;
use crate::kernels::energy_sums::EnergySums;
use crate::kernels::{KernelSource, TwinBindings};

/// One invocation's private memory (the kernel's `var<private>` arrays).
struct Invocation<'a> {
    stage: &'a Tape,
    energy_tape: &'a Tape,
    n: usize,
    s: usize,
    m: usize,
    /// [x, θ, u] of one stage point; its first n + θ entries are H's variables.
    vars: Vec<f64>,
    x: Vec<f64>,
    carry: Vec<f64>,
    z: Vec<f64>,
    stage_out: Vec<f64>,
    matrix: Vec<f64>,
    rhs: Vec<f64>,
    pivot: Vec<usize>,
    scratch: Vec<f64>,
}

impl Invocation<'_> {
    /// `hamiltonian`: H(x) at the member's parameters.
    fn hamiltonian(&mut self) -> f64 {
        let n = self.n;
        self.vars[..n].copy_from_slice(&self.x);
        let variables = &self.vars[..self.energy_tape.n_vars()];
        let mut out = [0.0];
        self.energy_tape
            .eval(variables, &mut out, &mut self.scratch);
        out[0]
    }

    /// `evaluate_stages`: the stage tape at x_k + Z_i and u_i; false when an output is not
    /// finite.
    fn evaluate_stages(&mut self, u: &[f64]) -> bool {
        let (n, m) = (self.n, self.m);
        let width = self.stage.n_outputs();
        let u_base = self.stage.n_vars() - m;
        let mut finite = true;
        for i in 0..self.s {
            for c in 0..n {
                self.vars[c] = self.x[c] + self.z[i * n + c];
            }
            self.vars[u_base..].copy_from_slice(&u[i * m..(i + 1) * m]);
            let out = &mut self.stage_out[i * width..(i + 1) * width];
            self.stage.eval(&self.vars, out, &mut self.scratch);
            finite = finite && out.iter().all(|v| v.is_finite());
        }
        finite
    }

    /// `factorise`: [`dense_lu::factorise`] of the Newton matrix.
    fn factorise(&mut self) {
        dense_lu::factorise(&mut self.matrix, &mut self.pivot);
    }

    /// `solve`: [`dense_lu::solve`], the update in place in `rhs`; false at a zero
    /// diagonal of U.
    fn solve(&mut self) -> bool {
        dense_lu::solve(&self.matrix, &self.pivot, &mut self.rhs)
    }

    /// `solve_stages`: Newton for the stage equations from x; true on convergence, with
    /// the stage tape at the final stage points.
    fn solve_stages(&mut self, u: &[f64], c: &Coefficients) -> bool {
        let (n, s) = (self.n, self.s);
        let width = self.stage.n_outputs();
        self.z.iter_mut().for_each(|v| *v = 0.0);
        let scale_x = self.x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        for _ in 0..c.max_iterations {
            if !self.evaluate_stages(u) {
                return false;
            }
            for i in 0..s {
                for r in 0..n {
                    let mut sum = 0.0;
                    for j in 0..s {
                        sum += c.a[i * s + j] * self.stage_out[j * width + r];
                    }
                    self.rhs[i * n + r] = -(self.z[i * n + r] - c.h * sum);
                }
            }
            let d = s * n;
            for i in 0..s {
                for j in 0..s {
                    let factor = c.h * c.a[i * s + j];
                    for r in 0..n {
                        for col in 0..n {
                            let identity = if i == j && r == col { 1.0 } else { 0.0 };
                            let jacobian = self.stage_out[j * width + n + r * n + col];
                            self.matrix[(i * n + r) * d + j * n + col] =
                                identity - factor * jacobian;
                        }
                    }
                }
            }
            self.factorise();
            if !self.solve() || !self.rhs.iter().all(|v| v.is_finite()) {
                return false;
            }
            let mut largest = 0.0_f64;
            for (z, delta) in self.z.iter_mut().zip(&self.rhs) {
                *z += delta;
                largest = largest.max(delta.abs());
            }
            let scale = self.z.iter().fold(scale_x, |m, v| m.max(v.abs()));
            let last = if scale > 0.0 { largest / scale } else { 0.0 };
            if last <= c.tolerance {
                return self.evaluate_stages(u);
            }
        }
        false
    }
}

/// The run constants as the kernel reads them.
struct Coefficients {
    h: f64,
    a: Vec<f64>,
    b: Vec<f64>,
    tolerance: f64,
    max_iterations: usize,
}

/// The twin of `main` in the port-Hamiltonian step kernel for member `member`.
pub fn port_hamiltonian_step_twin(
    shape: &PortHamiltonianShape,
    stage: &Tape,
    energy_tape: &Tape,
    kernel: &KernelSource,
    bindings: &TwinBindings,
    member: usize,
) {
    let (n, s, m) = (shape.states, shape.stages, shape.inputs);
    let sm = s * m;
    let constant = |name: &str| kernel.constants_layout.offset(name);
    let values = bindings.constants;
    let c = Coefficients {
        h: values[constant("h")],
        a: values[constant("a")..constant("a") + s * s].to_vec(),
        b: values[constant("b")..constant("b") + s].to_vec(),
        tolerance: values[constant("tolerance")].max(4.0 * f64::EPSILON),
        max_iterations: shape.max_iterations,
    };
    let nan = values[constant("nan")];
    let state = bindings.state_of(member);
    let records = bindings.records_of(member);
    let field = |name: &str| kernel.state.offset(name);
    let theta = bindings.params_of(member, shape.parameters);
    let mut vars = vec![0.0; stage.n_vars()];
    vars[n..n + shape.parameters].copy_from_slice(&theta);
    let mut me = Invocation {
        stage,
        energy_tape,
        n,
        s,
        m,
        vars,
        x: (0..n).map(|r| state.get(field("x") + r)).collect(),
        carry: (0..n).map(|r| state.get(field("carry") + r)).collect(),
        z: vec![0.0; s * n],
        stage_out: vec![0.0; s * stage.n_outputs()],
        matrix: vec![0.0; s * n * s * n],
        rhs: vec![0.0; s * n],
        pivot: vec![0; s * n],
        scratch: Vec::new(),
    };
    let width = stage.n_outputs();
    let mut energy = state.get(field("energy"));
    let mut status = state.get(field("status"));
    let mut sums = EnergySums::load(kernel, &state);
    let mut y = vec![0.0; sm];
    let record_entries = kernel.record.entries();
    let (record_x, record_y) = (kernel.record.offset("x"), kernel.record.offset("y"));
    let mut slot = 0;
    for k in 0..bindings.dispatch.step_count as usize {
        let done = bindings.dispatch.step_begin + k as u32 + 1;
        let u = &bindings.stream[k * sm..(k + 1) * sm];
        if status != 0.0 {
            // A member that failed in an earlier dispatch: its outputs are NaN too.
            y.iter_mut().for_each(|v| *v = nan);
            sums.accumulate(nan, nan, nan);
        } else {
            let mut solved = me.solve_stages(u, &c);
            let (mut stored, mut port, mut dissipated) = (0.0, 0.0, 0.0);
            if solved {
                for i in 0..s {
                    let b_i = c.b[i];
                    dissipated += b_i * me.stage_out[i * width + n + n * n];
                    for ch in 0..m {
                        let y_ik = b_i * me.stage_out[i * width + n + n * n + 1 + ch];
                        y[i * m + ch] = y_ik;
                        port += y_ik * u[i * m + ch];
                    }
                }
                for r in 0..n {
                    let mut delta = 0.0;
                    for i in 0..s {
                        delta += c.b[i] * me.stage_out[i * width + r];
                    }
                    kahan_add(&mut me.x[r], &mut me.carry[r], c.h * delta);
                }
                let after = me.hamiltonian();
                stored = after - energy;
                energy = after;
                solved = stored.is_finite() && me.x.iter().all(|v| v.is_finite());
            }
            if solved {
                sums.accumulate(stored, c.h * port, c.h * dissipated);
            } else {
                status = done as f64;
                me.x.iter_mut().for_each(|v| *v = nan);
                y.iter_mut().for_each(|v| *v = nan);
                sums.accumulate(nan, nan, nan);
            }
        }
        if bindings.records_step(done) {
            let base = slot * record_entries;
            if shape.recording.trajectory {
                for r in 0..n {
                    records.set(base + record_x + r, me.x[r]);
                }
            }
            if shape.recording.outputs {
                for (j, value) in y.iter().enumerate() {
                    records.set(base + record_y + j, *value);
                }
            }
            if shape.recording.energy {
                sums.record_window(kernel, &records, base);
            }
            slot += 1;
        }
    }
    for r in 0..n {
        state.set(field("x") + r, me.x[r]);
        state.set(field("carry") + r, me.carry[r]);
    }
    state.set(field("energy"), energy);
    state.set(field("status"), status);
    sums.store(kernel, &state);
}
