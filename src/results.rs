//! What a backend returns: per member, the final state, the energy totals, and the samples
//! recorded at the plan's cadence. Both backends fill the same type so tests can compare them
//! member by member.

use serde::Serialize;

use crate::error::Result;

/// Energy totals of one member over the whole run (compensated sums over all steps).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EnergyTotals {
    /// Σ_k ΔH̄^k = H(x_N) − H(x_0), the change of stored energy.
    pub stored: f64,
    /// Σ_k ΔH̃^k = port − dissipated, the approximated supplied energy.
    pub supplied: f64,
    /// Σ_k h (y^k)ᵀ u^k, the energy through the port.
    pub port: f64,
    /// Σ_k h (e^k)ᵀ (M ⊗ R) e^k, the energy dissipated in R.
    pub dissipated: f64,
    /// max_k |ΔH̄^k − ΔH̃^k|, the worst per-step residual of the discrete energy balance.
    pub max_abs_residual: f64,
}

/// The per-step energy quantities of Definition 1 (Kotyczka & Lefèvre 2019).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepEnergy {
    /// ΔH̄^k = H(x_{k+1}) − H(x_k).
    pub stored: f64,
    /// ΔH̃^k = port − dissipated.
    pub supplied: f64,
    /// h (y^k)ᵀ u^k.
    pub port: f64,
    /// h Σ_ij m_ij (e_i^k)ᵀ R e_j^k.
    pub dissipated: f64,
}

impl StepEnergy {
    /// ΔH̄^k − ΔH̃^k.
    pub fn residual(&self) -> f64 {
        self.stored - self.supplied
    }
}

/// Everything recorded for one member.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemberResult {
    pub final_state: Vec<f64>,
    pub totals: EnergyTotals,
    /// States at the sample times: x_0 first, then every recorded step; samples × n.
    pub trajectory: Vec<f64>,
    /// Energies summed over each recording window (so windows add up to the totals):
    /// windows × [stored, supplied, port, dissipated].
    pub window_energy: Vec<[f64; 4]>,
    /// Discrete output y^k of each recorded step: records × s × m.
    pub outputs: Vec<f64>,
}

/// The results of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// `cpu` or the adapter the GPU path ran on.
    pub backend: String,
    /// `f64` or `f32`.
    pub precision: String,
    pub scheme: String,
    pub h: f64,
    pub steps: usize,
    pub states: usize,
    pub stages: usize,
    pub inputs: usize,
    pub sample_times: Vec<f64>,
    pub members: Vec<MemberResult>,
}

/// Receives the results of consecutive member chunks, in member order, as a backend
/// produces them; lets a run stream to disk with bounded memory.
pub trait ResultSink {
    /// Members `first .. first + members.len()`.
    fn accept(&mut self, first: usize, members: Vec<MemberResult>) -> Result<()>;

    /// Progress in member-steps completed so far (of members × steps).
    fn progress(&mut self, _member_steps_done: u64) {}
}

impl ResultSink for Vec<MemberResult> {
    fn accept(&mut self, first: usize, members: Vec<MemberResult>) -> Result<()> {
        debug_assert_eq!(first, self.len());
        self.extend(members);
        Ok(())
    }
}

/// Bytes of host memory one member's recorded results take (trajectory, outputs, windows).
pub fn member_result_bytes(states: usize, stages: usize, inputs: usize, records: usize) -> usize {
    8 * ((records + 1) * states + records * (stages * inputs + 4) + states) + 160
}

/// Members per chunk so that a chunk's results stay within `budget` bytes of host memory.
pub fn members_within(budget: usize, per_member: usize) -> usize {
    (budget / per_member.max(1)).max(1)
}

/// Host memory a backend may hold in results before handing them to the sink.
pub const HOST_RESULT_BUDGET: usize = 256 << 20;
