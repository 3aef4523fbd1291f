//! The plan of a linear port-Hamiltonian ensemble under a collocation scheme (Kotyczka &
//! Lefèvre 2019, Definition 1): the scheme, the grid, the members, the inputs sampled at
//! every stage time, and the records — trajectory samples, the discrete outputs y^k and the
//! energy balance per recording window.

use nalgebra::DVector;

use super::ensemble::LinearPhEnsemble;
use crate::error::{Error, Result};
use crate::linear_ph::LinearPh;
use crate::model::Signal;
use crate::plan::energy_balance::{ENERGY_TOTALS, energy_balance_channels};
use crate::plan::grid::StepGrid;
use crate::plan::record::{MemberResult, RecordSpec, Recording};
use crate::plan::stream::SharedStream;
use crate::tableau::Scheme;

/// One member of an ensemble: its own system and initial state.
#[derive(Debug, Clone)]
pub struct LinearPhMember {
    pub system: LinearPh,
    pub x0: DVector<f64>,
}

/// Index of each energy in the `energy` channel and the totals: stored ΔH̄, supplied ΔH̃,
/// port h yᵀu, dissipated h eᵀ(M ⊗ R)e.
pub const ENERGIES: [&str; 4] = ["stored", "supplied", "port", "dissipated"];

/// Energy totals of one member over the whole run (compensated sums over all steps).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
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

impl EnergyTotals {
    /// The totals of a linear-PH member's result (the order of [`LinearPhPlan::record_spec`]).
    pub fn of(result: &MemberResult) -> Self {
        let t = |i: usize| result.totals.get(i).copied().unwrap_or(f64::NAN);
        EnergyTotals {
            stored: t(0),
            supplied: t(1),
            port: t(2),
            dissipated: t(3),
            max_abs_residual: t(4),
        }
    }

    /// [stored, supplied, port, dissipated, max_abs_residual].
    pub fn to_vec(&self) -> Vec<f64> {
        vec![
            self.stored,
            self.supplied,
            self.port,
            self.dissipated,
            self.max_abs_residual,
        ]
    }
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

    /// [stored, supplied, port, dissipated].
    pub fn parts(&self) -> [f64; 4] {
        [self.stored, self.supplied, self.port, self.dissipated]
    }
}

/// Everything a backend needs to run a linear-PH ensemble.
#[derive(Debug, Clone)]
pub struct LinearPhPlan {
    pub scheme: Scheme,
    pub grid: StepGrid,
    /// Size of the position block q for partitioned schemes (x = (q, p)); `None` for
    /// monolithic schemes.
    pub split: Option<usize>,
    pub ensemble: LinearPhEnsemble,
    /// The inputs at the stage times: u_c((k + c_i) h), s points of m channels per step.
    pub inputs: SharedStream,
    /// GPU kernel: the workgroup-cooperative one (true) or one invocation per member
    /// (false); `None` picks cooperative exactly when n exceeds the per-invocation limit.
    pub cooperative: Option<bool>,
    recording: Recording,
    records: RecordSpec,
    /// Per input channel: whether its signal is 0 at every time
    /// ([`Signal::is_identically_zero`]).
    silent_inputs: Vec<bool>,
}

/// What a linear-PH member records under `recording`: trajectory samples of x, the
/// `energy` channel (window sums of [`ENERGIES`]) with the energy totals, and the `outputs`
/// channel (y^k, s × m), each when switched on.
fn record_spec(n: usize, s: usize, m: usize, recording: Recording) -> RecordSpec {
    RecordSpec {
        state_width: n,
        trajectory: recording.trajectory,
        channels: energy_balance_channels(recording, s, m, "discrete outputs y^k"),
        totals: if recording.energy {
            ENERGY_TOTALS.to_vec()
        } else {
            Vec::new()
        },
        totals_group: "energy",
    }
}

/// Refuses a member whose initial energy H(x0) = ½ x0ᵀ Q x0 already overflows.
pub fn check_initial_energy(prefix: &str, member: &LinearPhMember) -> Result<()> {
    let energy = member.system.hamiltonian(&member.x0);
    if energy.is_finite() {
        return Ok(());
    }
    Err(Error::invalid(
        format!("{prefix}.Q"),
        format!(
            "H(x0) = ½ x0ᵀ Q x0 = {energy} is not finite: Q (max |Q_ij| = {:e}) and x0 (max |x0_i| = {:e}) overflow the energy before the first step",
            member.system.q.amax(),
            member.x0.amax()
        ),
    ))
}

/// Refuses inputs that are not finite at a stage time, or whose product with B overflows.
fn check_inputs(inputs: &SharedStream, system: &LinearPh, channels: usize) -> Result<()> {
    if channels == 0 {
        return Ok(());
    }
    let largest = inputs.max_abs().map_err(|(step, stage, channel, value)| {
        Error::invalid(
            format!("input[{channel}]"),
            format!("u is {value} at stage {stage} of step {step}"),
        )
    })?;
    let coupling = system.b.amax();
    if !(largest * coupling).is_finite() {
        return Err(Error::invalid(
            "input",
            format!(
                "max |u| = {largest:e} times max |B_ij| = {coupling:e} overflows: the input term B u cannot be represented"
            ),
        ));
    }
    Ok(())
}

impl LinearPhPlan {
    /// Assembles a plan, checking that every member fits the scheme (canonical form for the
    /// Lobatto pair, matching input count) and that the signals cover the run.
    pub fn new(
        scheme: Scheme,
        h: f64,
        t_end: f64,
        members: impl Into<LinearPhEnsemble>,
        signals: &[Signal],
        record_every: usize,
    ) -> Result<Self> {
        let ensemble = members.into();
        let grid = StepGrid::new(h, t_end, record_every)?;
        if ensemble.is_empty() {
            return Err(Error::invalid("ensemble", "has no members"));
        }
        // Drawn ensembles keep the nominal's shapes and structure, so the nominal stands
        // for all of them here; explicit lists are checked member by member.
        let checked: Vec<&LinearPhMember> = match &ensemble {
            LinearPhEnsemble::List(members) => members.iter().collect(),
            LinearPhEnsemble::Drawn(d) => vec![&d.nominal],
        };
        let mut split = None;
        let first = checked[0].system.states();
        for (index, member) in checked.iter().enumerate() {
            let prefix = if checked.len() == 1 {
                "system".to_string()
            } else {
                format!("member[{index}]")
            };
            if member.system.inputs() != signals.len() {
                return Err(Error::invalid(
                    "input",
                    format!(
                        "{prefix}.B has {} column(s) but {} input signal(s) are given",
                        member.system.inputs(),
                        signals.len()
                    ),
                ));
            }
            if member.x0.len() != member.system.states() {
                return Err(Error::invalid(
                    format!("{prefix}.x0"),
                    format!(
                        "has length {}, the system has n = {}",
                        member.x0.len(),
                        member.system.states()
                    ),
                ));
            }
            if member.system.states() != first {
                return Err(Error::invalid(
                    format!("{prefix}.J"),
                    format!(
                        "members differ in state size: {} here, {first} in member[0]",
                        member.system.states()
                    ),
                ));
            }
            if scheme.is_partitioned() {
                split = Some(member.system.canonical_split(&prefix)?);
            }
            check_initial_energy(&prefix, member)?;
        }
        for (i, s) in signals.iter().enumerate() {
            s.check_covers(&format!("input[{i}]"), t_end)?;
        }
        let sampled = std::sync::Arc::new(signals.to_vec());
        let inputs =
            SharedStream::sample(&scheme.c, signals.len(), h, grid.steps, move |t, out| {
                for (value, signal) in out.iter_mut().zip(sampled.iter()) {
                    *value = signal.value(t);
                }
            });
        // A long stream is checked by the backends, after the run's resources (see
        // `Family::check_stream`).
        if inputs.is_cached() {
            check_inputs(&inputs, &checked[0].system, signals.len())?;
        }
        let prototype = &ensemble.prototype().system;
        let records = record_spec(
            prototype.states(),
            scheme.stages,
            prototype.inputs(),
            Recording::default(),
        );
        Ok(LinearPhPlan {
            scheme,
            grid,
            split,
            ensemble,
            inputs,
            cooperative: None,
            recording: Recording::default(),
            records,
            silent_inputs: signals.iter().map(Signal::is_identically_zero).collect(),
        })
    }

    /// The plan recording only what `recording` switches on (everything by default).
    pub fn with_recording(mut self, recording: Recording) -> Self {
        self.recording = recording;
        self.records = record_spec(
            self.states(),
            self.scheme.stages,
            self.inputs_count(),
            recording,
        );
        self
    }

    /// The plan of the first `count` members (at least 1), the same members as here.
    pub fn with_members(mut self, count: usize) -> Result<Self> {
        if count == 0 {
            return Err(Error::invalid("ensemble.members", "must be ≥ 1, got 0"));
        }
        self.ensemble = self.ensemble.prefix(count);
        Ok(self)
    }

    /// What the run records.
    pub fn recording(&self) -> Recording {
        self.recording
    }

    /// What every member records (see [`LinearPhPlan::with_recording`]): trajectory
    /// samples of x, the `energy` channel (window sums of [`ENERGIES`]) with the energy
    /// totals, the `outputs` channel (y^k, s × m).
    pub fn record_spec(&self) -> &RecordSpec {
        &self.records
    }

    /// Refuses inputs that are not finite at a stage time, or whose product with B
    /// overflows (a pass over every stage time).
    pub fn check_inputs(&self) -> Result<()> {
        let prototype = &self.ensemble.prototype().system;
        check_inputs(&self.inputs, prototype, prototype.inputs())
    }

    /// Per input channel: whether its signal is 0 at every time, so that its term B u
    /// vanishes exactly whatever B is.
    pub fn silent_inputs(&self) -> &[bool] {
        &self.silent_inputs
    }

    /// State size n.
    pub fn states(&self) -> usize {
        self.ensemble.prototype().system.states()
    }

    /// Input count m.
    pub fn inputs_count(&self) -> usize {
        self.ensemble.prototype().system.inputs()
    }
}
