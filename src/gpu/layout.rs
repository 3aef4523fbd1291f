//! Host mirrors of the kernel's data layouts (keep in sync with
//! `shaders/linear_ph_step.wgsl`): entry counts per member of the operator, state and
//! record buffers, and the uniform parameters.

use bytemuck::{Pod, Zeroable};

/// Uniform parameters of one dispatch; mirrors `struct Params` in linear_ph_step.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Eq)]
pub struct KernelParams {
    /// Members in this chunk (the stride of every structure-of-arrays buffer).
    pub members: u32,
    /// Global index of the first step of this dispatch.
    pub step_begin: u32,
    /// Steps advanced by this dispatch.
    pub step_count: u32,
    /// Steps of the whole run (the last one is always recorded).
    pub steps_total: u32,
    /// Record every this many steps.
    pub record_every: u32,
    /// Invocations per row of the 2-D dispatch grid.
    pub row_width: u32,
    pub pad0: u32,
    pub pad1: u32,
}

/// The per-member entry counts of one kernel variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLayout {
    pub states: usize,
    pub stages: usize,
    pub inputs: usize,
    pub rank: usize,
}

impl KernelLayout {
    /// p = n + s m.
    pub fn width(&self) -> usize {
        self.states + self.stages * self.inputs
    }

    /// Δ (n·p) + Y (sm·p) + W (s·r·p) + Q (n·n).
    pub fn operator_entries(&self) -> usize {
        let p = self.width();
        self.states * p
            + self.stages * self.inputs * p
            + self.stages * self.rank * p
            + self.states * self.states
    }

    /// x, carry, 4 totals + 4 compensations, 4 window sums + 4 compensations, max residual.
    pub fn state_entries(&self) -> usize {
        2 * self.states + 17
    }

    /// x, y, 4 window energies per record.
    pub fn record_entries(&self) -> usize {
        self.states + self.stages * self.inputs + 4
    }

    /// Floating-point operations per member-step, counted from the kernel: 2 per
    /// multiply-add of Δv, Yv, Wv and of Q(x + δ/2) (plus its 2 for x + δ/2), the port and
    /// dissipation products, and the compensated updates (4 per Kahan step, 4 per Neumaier
    /// add of 8 sums).
    pub fn flops_per_step(&self) -> usize {
        let (n, p, sm) = (self.states, self.width(), self.stages * self.inputs);
        2 * n * p
            + 2 * sm * p
            + 2 * sm
            + 2 * self.stages * self.rank * p
            + 4 * n * n
            + 2 * n
            + 4 * n
            + 8 * 4
            + 6
    }

    /// Loop iterations one invocation executes per step, counted from the kernels' loops
    /// (an upper bound: recording iterations included). The per-invocation kernel runs every
    /// loop in full; in the cooperative kernel a thread owns ⌈rows / WG⌉ rows.
    pub fn loop_iterations_per_step(&self, cooperative: bool, workgroup: usize) -> usize {
        let (n, p, sm) = (self.states, self.width(), self.stages * self.inputs);
        let sr = self.stages * self.rank;
        if cooperative {
            let rows = n + sm + sr;
            let own = |count: usize| count.div_ceil(workgroup);
            own(rows) * (p + 1) + own(n) * (n + 4) + own(sm) * 2 + workgroup + 8 + 1
        } else {
            n * (n + sm + 1) + sm * (p + 1) + sr * (p + 1) + n * (n + 1) + n + 4 + (n + sm + 4) + 1
        }
    }
}
