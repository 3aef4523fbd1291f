//! The fast CPU engine of the port-Hamiltonian family: the Gauss step of
//! [`super::gauss_step`] for a block of members side by side, with each member's result
//! equal to the reference's to the last bit.
//!
//! A block holds B members (lanes, B a multiple of [`LANE_MULTIPLE`]) structure-of-arrays:
//! value v of lane l at `v · B + l`. Every step runs each stage of the reference over all
//! lanes at once — the model's tapes over B lanes (H) or s·B stage points (f, ∂f/∂x,
//! eᵀRe, Gᵀe) with [`crate::expr::Tape::eval_lanes_inline`], the Newton iteration with all
//! lanes together (`newton.rs`), the Newton matrices factorised with nalgebra's pivoting and
//! operation order (`lu.rs`) — so the interpretive cost of a tape instruction is paid once per
//! block and the arithmetic runs as vector instructions over the lanes:
//!
//! ```text
//!   Z_i = h Σ_j a_ij f(x_k + Z_j, u_j)                 (Newton, converged lanes frozen)
//!   x_{k+1} = x_k + h Σ_j b_j f_j                      (Kahan-compensated)
//!   y_i = b_i G(x_i)ᵀ e_i,  port = h Σ_i y_iᵀ u_i,  dissipated = h Σ_i b_i e_iᵀ R e_i
//!   stored = H(x_{k+1}) − H(x_k),  supplied = port − dissipated
//! ```
//!
//! A lane whose step fails (a value not finite, a singular Newton matrix, no convergence)
//! is flagged as the reference flags its member: `newton_failed_step` and the non-finite
//! step are that step, its state and outputs are NaN from then on, and the other lanes go
//! on undisturbed. Nothing is fused (no multiply-add is rounded once), so the results are
//! the same at every [`SimdLevel`]; the level only sets the vector width the block's loops
//! are compiled for.

mod lu;
mod newton;

use super::plan::{PortHamiltonianMember, PortHamiltonianPlan};
use crate::compensated::kahan_add;
use crate::error::Result;
use crate::kernels::family::{Family, FastEngine};
use crate::kernels::lanes::SimdLevel;
use crate::plan::{EnergyBalance, MemberResult, ResultBlock};
use newton::LaneNewton;

/// Lanes of a block come in multiples of this (one AVX-512 register of f64).
pub const LANE_MULTIPLE: usize = 8;

/// Most lanes per block.
const MAX_LANES: usize = 128;

/// Bytes of a block's work buffers (tape registers, stage values, Newton matrices) the
/// block sizing aims to keep in a core's L2 cache.
const WORK_BYTES: usize = 256 << 10;

impl PortHamiltonianPlan {
    /// Whether the fast engine runs this plan's scheme (Gauss collocation).
    pub fn fast_engine_runs(&self) -> bool {
        self.method.is_gauss()
    }

    /// Members per fast-engine block: as many lanes as keep one block's work buffers
    /// within `WORK_BYTES`, a multiple of `LANE_MULTIPLE`, at most `MAX_LANES`.
    pub fn fast_block_members(&self) -> usize {
        let model = &self.model;
        let (s, dim) = (self.scheme.stages, self.scheme.stages * model.n());
        let per_lane = s * (model.stage.len() + model.stage.n_outputs() + model.stage_vars())
            + dim * dim
            + 2 * dim
            + model.energy.len()
            + model.energy.n_vars();
        let lanes = WORK_BYTES / (8 * per_lane.max(1));
        (lanes / LANE_MULTIPLE * LANE_MULTIPLE).clamp(LANE_MULTIPLE, MAX_LANES)
    }
}

impl FastEngine for PortHamiltonianPlan {
    type Member = PortHamiltonianMember;
    type Block = FastBlock;
    type Shared = ();

    fn block_members(&self) -> usize {
        self.fast_block_members()
    }

    fn prepare(&self, members: Vec<PortHamiltonianMember>) -> Result<FastBlock> {
        Ok(FastBlock::new(self, &members))
    }

    fn run(&self, block: FastBlock) -> Result<ResultBlock> {
        let members = block.run(self, SimdLevel::get());
        Ok(ResultBlock::from_members(
            self.record_spec(),
            self.grid().records(),
            members,
        ))
    }
}

/// A block of members laid out lane by lane, with their results' first sample.
#[derive(Debug, Clone)]
pub struct FastBlock {
    /// Members; lanes beyond them repeat the first member and are dropped.
    members: usize,
    /// B: `members` rounded up to a multiple of [`LANE_MULTIPLE`].
    lanes: usize,
    /// θ_p of lane l at `p · B + l`.
    parameters: Vec<f64>,
    /// x0_r of lane l at `r · B + l`.
    x0: Vec<f64>,
    results: Vec<MemberResult>,
}

impl FastBlock {
    /// Lays out `members` (any number; the engine's blocks hold at most
    /// [`PortHamiltonianPlan::fast_block_members`]) under `plan` and records their t = 0
    /// sample.
    pub fn new(plan: &PortHamiltonianPlan, members: &[PortHamiltonianMember]) -> FastBlock {
        let lanes = members.len().div_ceil(LANE_MULTIPLE) * LANE_MULTIPLE;
        let lane = |l: usize| &members[if l < members.len() { l } else { 0 }];
        let gather = |count: usize, value: &dyn Fn(&PortHamiltonianMember, usize) -> f64| {
            (0..count * lanes)
                .map(|e| value(lane(e % lanes), e / lanes))
                .collect::<Vec<f64>>()
        };
        let spec = plan.record_spec();
        let records = plan.grid.records();
        let results = members
            .iter()
            .map(|member| {
                let mut result = MemberResult::with_capacity(spec, records);
                if plan.recording.trajectory {
                    result.trajectory.extend_from_slice(&member.x0);
                }
                result
            })
            .collect();
        FastBlock {
            members: members.len(),
            lanes,
            parameters: gather(plan.model.parameters.len(), &|m, p| m.parameters[p]),
            x0: gather(plan.model.n(), &|m, r| m.x0[r]),
            results,
        }
    }

    /// Integrates the block through `plan`'s grid with its loops compiled for `level` (a
    /// level this CPU lacks runs the portable code) and returns its members' results.
    pub fn run(mut self, plan: &PortHamiltonianPlan, level: SimdLevel) -> Vec<MemberResult> {
        if self.members == 0 {
            return Vec::new();
        }
        let state = BlockState::new(plan, &self);
        let results = &mut self.results;
        match level {
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 if crate::kernels::lanes::Avx512::new().is_some() => {
                // SAFETY: the CPU has the instructions (checked just above).
                unsafe { integrate_avx512(state, plan, results) }
            }
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 if crate::kernels::lanes::Avx2::new().is_some() => {
                // SAFETY: the CPU has the instructions (checked just above).
                unsafe { integrate_avx2(state, plan, results) }
            }
            _ => state.integrate(plan, results),
        }
        self.results
    }
}

/// [`BlockState::integrate`] compiled for AVX-512 (F, DQ, VL): the block's loops, inlined into
/// it, run 8 lanes per instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl")]
fn integrate_avx512(state: BlockState, plan: &PortHamiltonianPlan, results: &mut [MemberResult]) {
    state.integrate(plan, results)
}

/// [`BlockState::integrate`] compiled for AVX2: the block's loops, inlined into it, run 4 lanes
/// per instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn integrate_avx2(state: BlockState, plan: &PortHamiltonianPlan, results: &mut [MemberResult]) {
    state.integrate(plan, results)
}

/// A block's state while it runs: x with its Kahan carries, the last outputs, H at x, the
/// energy sums and the failures, lane by lane.
struct BlockState<'a> {
    lanes: usize,
    newton: LaneNewton<'a>,
    x: Vec<f64>,
    carry: Vec<f64>,
    /// y_{i,k} of lane l at `(i · m + k) · B + l`.
    y: Vec<f64>,
    /// The energy tape's variables [x, θ].
    energy_vars: Vec<f64>,
    energy_scratch: Vec<f64>,
    /// H at the state each lane is in (the step's H(x_k)), and after the step.
    before: Vec<f64>,
    after: Vec<f64>,
    port: Vec<f64>,
    dissipated: Vec<f64>,
    /// Σ_i b_i f_i of one state component.
    delta: Vec<f64>,
    /// Lanes whose solve failed at an earlier step, and up to this one.
    failed: Vec<bool>,
    failed_now: Vec<bool>,
    /// The step whose stage solve failed, 0 while none did.
    failed_step: Vec<usize>,
    balance: Vec<EnergyBalance>,
}

impl<'a> BlockState<'a> {
    fn new(plan: &'a PortHamiltonianPlan, block: &FastBlock) -> Self {
        let model = &plan.model;
        let (n, lanes) = (model.n(), block.lanes);
        let newton = LaneNewton::new(
            model,
            &plan.scheme,
            plan.grid.h,
            plan.newton,
            lanes,
            &block.parameters,
        );
        let mut energy_vars = vec![0.0; model.energy.n_vars() * lanes];
        let count = block.parameters.len();
        energy_vars[n * lanes..][..count].copy_from_slice(&block.parameters);
        let lane_values = |count: usize| vec![0.0; count * lanes];
        BlockState {
            lanes,
            newton,
            x: block.x0.clone(),
            carry: lane_values(n),
            y: lane_values(plan.scheme.stages * model.inputs),
            energy_vars,
            energy_scratch: Vec::new(),
            before: lane_values(1),
            after: lane_values(1),
            port: lane_values(1),
            dissipated: lane_values(1),
            delta: lane_values(1),
            failed: vec![false; lanes],
            failed_now: vec![false; lanes],
            failed_step: vec![0; lanes],
            balance: vec![EnergyBalance::default(); lanes],
        }
    }

    /// H at `self.x`, into `self.after`.
    #[inline(always)]
    fn hamiltonian(&mut self, plan: &PortHamiltonianPlan) {
        self.energy_vars[..self.x.len()].copy_from_slice(&self.x);
        plan.model.energy.eval_lanes_inline(
            &self.energy_vars,
            self.lanes,
            &mut self.after,
            &mut self.energy_scratch,
        );
    }

    /// Runs every step, recording into `results` (one per member, the first lanes).
    #[inline(always)]
    fn integrate(mut self, plan: &PortHamiltonianPlan, results: &mut [MemberResult]) {
        let grid = &plan.grid;
        let recording = plan.recording;
        let outputs_channel = usize::from(recording.energy);
        let mut inputs = Vec::new();
        self.hamiltonian(plan);
        std::mem::swap(&mut self.before, &mut self.after);
        let mut next_record = grid.record_points().into_iter().peekable();
        for k in 0..grid.steps {
            if self.failed.contains(&false) {
                let u = plan.inputs.step(k, &mut inputs);
                self.step(plan, k, u, results);
            } else {
                for balance in &mut self.balance {
                    balance.add([f64::NAN; 4]);
                }
            }
            if next_record.peek() == Some(&(k + 1)) {
                next_record.next();
                self.record(plan, results, outputs_channel);
            }
        }
        let n = plan.model.n();
        for (l, result) in results.iter_mut().enumerate() {
            result.final_state = (0..n).map(|r| self.x[r * self.lanes + l]).collect();
            result.totals = self.balance[l].totals();
            result.totals.push(self.failed_step[l] as f64);
        }
    }

    /// Step k → k + 1 of every lane that has not failed, with stage inputs `u`.
    #[inline(always)]
    fn step(
        &mut self,
        plan: &PortHamiltonianPlan,
        k: usize,
        u: &[f64],
        results: &mut [MemberResult],
    ) {
        let model = &plan.model;
        let (n, m, s, h) = (model.n(), model.inputs, plan.scheme.stages, plan.grid.h);
        let lanes = self.lanes;
        let b = &plan.scheme.b;
        self.newton.set_inputs(u);
        self.failed_now.copy_from_slice(&self.failed);
        self.newton.solve(&self.x, &mut self.failed_now);
        // y_i = b_i Gᵀe_i, port = Σ y·u, dissipated = Σ b_i eᵀRe_i (each sum in the
        // reference's order).
        self.port.fill(0.0);
        self.dissipated.fill(0.0);
        let first_output = n + n * n;
        for (i, &b_i) in b.iter().enumerate() {
            let dissipation = self.newton.output(first_output, i);
            for (sum, &d) in self.dissipated.iter_mut().zip(dissipation) {
                *sum += b_i * d;
            }
            for c in 0..m {
                let output = self.newton.output(first_output + 1 + c, i);
                let u_ic = u[i * m + c];
                let y = &mut self.y[(i * m + c) * lanes..][..lanes];
                for ((y, port), &g) in y.iter_mut().zip(self.port.iter_mut()).zip(output) {
                    let value = b_i * g;
                    *y = value;
                    *port += value * u_ic;
                }
            }
        }
        // x ← x + h Σ_i b_i f_i (Kahan).
        for r in 0..n {
            self.delta.fill(0.0);
            for (i, &b_i) in b.iter().enumerate() {
                for (d, &f) in self.delta.iter_mut().zip(self.newton.output(r, i)) {
                    *d += b_i * f;
                }
            }
            let x = &mut self.x[r * lanes..][..lanes];
            let carry = &mut self.carry[r * lanes..][..lanes];
            for ((x, carry), &d) in x.iter_mut().zip(carry.iter_mut()).zip(&self.delta) {
                kahan_add(x, carry, h * d);
            }
        }
        self.hamiltonian(plan);
        for l in 0..lanes {
            let stored = self.after[l] - self.before[l];
            let finite = stored.is_finite() && (0..n).all(|r| self.x[r * lanes + l].is_finite());
            let failed_now = self.failed_now[l] || !finite;
            let parts = if failed_now {
                if !self.failed[l] {
                    self.failed[l] = true;
                    self.failed_step[l] = k + 1;
                    if let Some(result) = results.get_mut(l) {
                        result.nonfinite_step = Some(k as u64 + 1);
                    }
                }
                for r in 0..n {
                    self.x[r * lanes + l] = f64::NAN;
                }
                for e in 0..s * m {
                    self.y[e * lanes + l] = f64::NAN;
                }
                [f64::NAN; 4]
            } else {
                let (port, dissipated) = (h * self.port[l], h * self.dissipated[l]);
                [stored, port - dissipated, port, dissipated]
            };
            self.balance[l].add(parts);
        }
        std::mem::swap(&mut self.before, &mut self.after);
    }

    /// Appends a record point's samples of each member and opens a new energy window.
    fn record(
        &mut self,
        plan: &PortHamiltonianPlan,
        results: &mut [MemberResult],
        outputs_channel: usize,
    ) {
        let recording = plan.recording;
        let lanes = self.lanes;
        for (l, result) in results.iter_mut().enumerate() {
            if recording.trajectory {
                let n = plan.model.n();
                result
                    .trajectory
                    .extend((0..n).map(|r| self.x[r * lanes + l]));
            }
            let window = self.balance[l].take_window();
            if recording.energy {
                result.channels[0].extend(window);
            }
            if recording.outputs {
                let sm = self.y.len() / lanes;
                result.channels[outputs_channel].extend((0..sm).map(|e| self.y[e * lanes + l]));
            }
        }
        // Padding lanes open a new window too.
        for balance in &mut self.balance[results.len()..] {
            balance.take_window();
        }
    }
}
