//! The CPU twin of `shaders/linear_ph/adjoint_sweep.wgsl`: what the kernel's `main` does for
//! one candidate of a dispatch, on the chunk's buffers, in the same loop shape and summation
//! order, in f64. Pass 0 runs the forward sweep over the dispatch's steps (checkpoints, cost,
//! and after the last step the terminal sample); pass 1 the backward sweep over the
//! dispatch's segments, from the last, each recomputed from its checkpoint (the equations
//! are those of `linear_ph::adjoint_reference`).

use crate::kernels::{KernelSource, Strided, TwinBindings};

/// One invocation's private memory: the candidate's operators and the sweep's vectors.
struct Sweep<'a> {
    /// N, M, S·M, P = N + S·M, SEG, SW (stream values per step).
    n: usize,
    m: usize,
    sm: usize,
    p: usize,
    seg: usize,
    sw: usize,
    /// Δ (N·P) | C = Bᵀ Q (M·N), row-major; `off_c` where C starts.
    ops: Vec<f64>,
    off_c: usize,
    kernel: &'a KernelSource,
    state: Strided<'a>,
    stream: &'a [f64],
    x: Vec<f64>,
    lam: Vec<f64>,
    previous: Vec<f64>,
    delta: Vec<f64>,
    u: Vec<f64>,
    dk: Vec<f64>,
    r: Vec<f64>,
    g_delta: Vec<f64>,
    g_out: Vec<f64>,
    cost: f64,
    /// 0 while finite, else the first step after which x, the cost or λ was not.
    status: f64,
}

impl Sweep<'_> {
    fn at(&self, field: &str) -> usize {
        self.kernel.state.offset(field)
    }

    /// `load_step`: U_k and d_k of local step `k`; returns ω_k.
    fn load_step(&mut self, k: usize) -> f64 {
        let values = &self.stream[k * self.sw..(k + 1) * self.sw];
        self.u.copy_from_slice(&values[..self.sm]);
        self.dk.copy_from_slice(&values[self.sm..self.sm + self.m]);
        values[self.sm + self.m]
    }

    /// `advance`: x ← x + Δ [x; u].
    fn advance(&mut self) {
        let (n, p) = (self.n, self.p);
        for i in 0..n {
            let base = i * p;
            let mut acc = 0.0;
            for c in 0..n {
                acc += self.ops[base + c] * self.x[c];
            }
            for j in 0..self.sm {
                acc += self.ops[base + n + j] * self.u[j];
            }
            self.delta[i] = acc;
        }
        for i in 0..n {
            self.x[i] += self.delta[i];
        }
    }

    /// `residual`: r = C x − d; returns |r|².
    fn residual(&mut self) -> f64 {
        let n = self.n;
        let mut squares = 0.0;
        for i in 0..self.m {
            let mut acc = 0.0;
            for c in 0..n {
                acc += self.ops[self.off_c + i * n + c] * self.x[c];
            }
            self.r[i] = acc - self.dk[i];
            squares += self.r[i] * self.r[i];
        }
        squares
    }

    /// `adjoint_step`: λ ← λ + Δ_xᵀ λ + ω Cᵀ r.
    fn adjoint_step(&mut self, w: f64) {
        let (n, p) = (self.n, self.p);
        self.previous.copy_from_slice(&self.lam);
        for c in 0..n {
            let mut acc = 0.0;
            for i in 0..n {
                acc += self.ops[i * p + c] * self.previous[i];
            }
            let mut forcing = 0.0;
            for i in 0..self.m {
                forcing += self.ops[self.off_c + i * n + c] * self.r[i];
            }
            self.lam[c] = self.previous[c] + acc + w * forcing;
        }
    }

    /// `accumulate`: Ḡ_Δ += λ [x; u]ᵀ, Ḡ_C += ω r xᵀ.
    fn accumulate(&mut self, w: f64) {
        let (n, p) = (self.n, self.p);
        for i in 0..n {
            let l = self.lam[i];
            for c in 0..n {
                self.g_delta[i * p + c] += l * self.x[c];
            }
            for j in 0..self.sm {
                self.g_delta[i * p + n + j] += l * self.u[j];
            }
        }
        for i in 0..self.m {
            let wr = w * self.r[i];
            for c in 0..n {
                self.g_out[i * n + c] += wr * self.x[c];
            }
        }
    }

    fn load(&self, field: &str, out: &mut [f64]) {
        let at = self.at(field);
        for (e, v) in out.iter_mut().enumerate() {
            *v = self.state.get(at + e);
        }
    }

    fn store(&self, field: &str, values: &[f64]) {
        let at = self.at(field);
        for (e, v) in values.iter().enumerate() {
            self.state.set(at + e, *v);
        }
    }

    /// `forward`: steps `begin .. begin + count` of pass 0.
    fn forward(&mut self, begin: usize, count: usize, total: usize, constants: &[f64]) {
        let mut x = std::mem::take(&mut self.x);
        self.load("x", &mut x);
        self.x = x;
        self.cost = self.state.get(self.at("cost"));
        let n = self.n;
        for k in 0..count {
            let step = begin + k;
            if step.is_multiple_of(self.seg) {
                let base = self.at("checkpoints") + (step / self.seg) * n;
                for c in 0..n {
                    self.state.set(base + c, self.x[c]);
                }
            }
            let w = self.load_step(k);
            self.cost += 0.5 * w * self.residual();
            self.advance();
            let finite = self.x.iter().all(|v| v.is_finite()) && self.cost.is_finite();
            if self.status == 0.0 && !finite {
                self.status = (step + 1) as f64;
            }
        }
        if begin + count == total {
            let layout = &self.kernel.constants_layout;
            let d_end = layout.offset("d_end");
            self.dk.copy_from_slice(&constants[d_end..d_end + self.m]);
            let w = constants[layout.offset("w_end")];
            self.cost += 0.5 * w * self.residual();
            self.lam.iter_mut().for_each(|l| *l = 0.0);
            self.adjoint_step(w);
            self.store("lambda", &self.lam);
            let at = self.at("g_output");
            for i in 0..self.m {
                let wr = w * self.r[i];
                for c in 0..n {
                    self.state.set(at + i * n + c, 0.0 + wr * self.x[c]);
                }
            }
        }
        self.store("x", &self.x);
        self.state.set(self.at("cost"), self.cost);
    }

    /// `backward`: the segments of steps `begin .. begin + count` of pass 1, from the last.
    fn backward(&mut self, begin: usize, count: usize) {
        let (mut lam, mut g_delta, mut g_out) = (
            std::mem::take(&mut self.lam),
            std::mem::take(&mut self.g_delta),
            std::mem::take(&mut self.g_out),
        );
        self.load("lambda", &mut lam);
        self.load("g_delta", &mut g_delta);
        self.load("g_output", &mut g_out);
        (self.lam, self.g_delta, self.g_out) = (lam, g_delta, g_out);
        let (n, seg) = (self.n, self.seg);
        let (checkpoints, segment) = (self.at("checkpoints"), self.at("segment"));
        let end = begin + count;
        let mut first = begin + ((count - 1) / seg) * seg;
        loop {
            let last = (first + seg).min(end);
            // The segment's states, recomputed from its checkpoint.
            let checkpoint = checkpoints + (first / seg) * n;
            for c in 0..n {
                self.x[c] = self.state.get(checkpoint + c);
                self.state.set(segment + c, self.x[c]);
            }
            for k in first..last - 1 {
                self.load_step(k - begin);
                self.advance();
                let base = segment + (k + 1 - first) * n;
                for c in 0..n {
                    self.state.set(base + c, self.x[c]);
                }
            }
            // The adjoint, from the segment's end down to its start.
            for step in (first..last).rev() {
                let base = segment + (step - first) * n;
                for c in 0..n {
                    self.x[c] = self.state.get(base + c);
                }
                let w = self.load_step(step - begin);
                self.residual();
                self.accumulate(w);
                self.adjoint_step(w);
                if self.status == 0.0 && !self.lam.iter().all(|v| v.is_finite()) {
                    self.status = (step + 1) as f64;
                }
            }
            if first == begin {
                break;
            }
            first -= seg;
        }
        self.store("lambda", &self.lam);
        self.store("g_delta", &self.g_delta);
        self.store("g_output", &self.g_out);
    }
}

/// The twin of `main` in `adjoint_sweep.wgsl` for candidate `i` of the dispatch: the
/// forward sweep in pass 0, the backward sweep in pass 1.
pub fn adjoint_sweep_twin(kernel: &KernelSource, b: &TwinBindings, i: usize) {
    let constant = |name| kernel.constant(name) as usize;
    let (n, m, sm, p) = (constant("N"), constant("M"), constant("SM"), constant("P"));
    let mut sweep = Sweep {
        n,
        m,
        sm,
        p,
        seg: constant("SEG"),
        sw: constant("SW"),
        ops: b.params_of(i, constant("OPS_ENTRIES")),
        off_c: kernel.params.offset("output"),
        kernel,
        state: b.state_of(i),
        stream: b.stream,
        x: vec![0.0; n],
        lam: vec![0.0; n],
        previous: vec![0.0; n],
        delta: vec![0.0; n],
        u: vec![0.0; sm],
        dk: vec![0.0; m],
        r: vec![0.0; m],
        g_delta: vec![0.0; constant("GD_ENTRIES")],
        g_out: vec![0.0; constant("GO_ENTRIES")],
        cost: 0.0,
        status: 0.0,
    };
    let status_at = kernel.state.offset("status");
    sweep.status = sweep.state.get(status_at);
    let dispatch = b.dispatch;
    let (begin, count) = (dispatch.step_begin as usize, dispatch.step_count as usize);
    if dispatch.sweep == 0 {
        sweep.forward(begin, count, dispatch.steps_total as usize, b.constants);
    } else {
        sweep.backward(begin, count);
    }
    sweep.state.set(status_at, sweep.status);
}
