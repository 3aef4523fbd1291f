//! The plan of an ensemble of port-Hamiltonian models written as expressions: the compiled
//! model, the Gauss scheme with the stage rule run on it (Gauss or energy-preserving
//! collocation), the grid, the inputs sampled once at the stage times
//! t_k + c_i h, the members drawn from (seed, i), the Newton settings and the records —
//! trajectory samples of x, the energy balance per recording window, the discrete outputs.
//!
//! Member i's draws come from the ChaCha8 stream i of `seed`: x0 entry by entry, then the
//! parameters in name order, one draw each whether or not it varies, so a member does not
//! depend on chunking, threads or which keys are drawn.

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::gauss_step::NewtonSettings;
use super::method::PortHamiltonianMethod;
use super::model::{ExpressionModel, ModelText};
use super::spec::{Draw, PortHamiltonianEnsembleSpec};
use crate::error::{Error, Num, Result};
use crate::model::Signal;
use crate::plan::energy_balance::{ENERGY_TOTALS, energy_balance_channels};
use crate::plan::grid::StepGrid;
use crate::plan::record::{RecordSpec, Recording};
use crate::plan::stream::SharedStream;
use crate::tableau::{Scheme, SchemeFamily};

/// One member: its parameter values (in the model's order) and initial state.
#[derive(Debug, Clone, PartialEq)]
pub struct PortHamiltonianMember {
    pub parameters: Vec<f64>,
    pub x0: Vec<f64>,
}

/// The totals of a member, in order: the energy balance's, then the step whose stage
/// solve failed (0 when none did).
pub const TOTALS: [&str; 6] = [
    ENERGY_TOTALS[0],
    ENERGY_TOTALS[1],
    ENERGY_TOTALS[2],
    ENERGY_TOTALS[3],
    ENERGY_TOTALS[4],
    "newton_failed_step",
];

/// Everything a backend needs to run a port-Hamiltonian ensemble.
#[derive(Debug, Clone)]
pub struct PortHamiltonianPlan {
    pub model: Arc<ExpressionModel>,
    /// The Gauss tableau (c, b, a) of s stages, whichever method runs on it.
    pub scheme: Scheme,
    /// The stage rule the steps apply: [`PortHamiltonianMethod::Gauss`] or the
    /// energy-preserving collocation (`method.is_gauss()` tells them apart).
    pub method: PortHamiltonianMethod,
    pub grid: StepGrid,
    pub nominal: PortHamiltonianMember,
    pub ensemble: Option<PortHamiltonianEnsembleSpec>,
    /// Draws of each parameter, in the model's order.
    draws: Vec<Draw>,
    /// u(t_k + c_i h), s · m values per step.
    pub inputs: SharedStream,
    pub newton: NewtonSettings,
    pub recording: Recording,
    records: RecordSpec,
}

impl PortHamiltonianPlan {
    /// Compiles `text` (with the projected tapes when `method` is energy-preserving) and
    /// plans its run of `method` on s = `stages` Gauss nodes; `prefix` names `[system]` in
    /// errors.
    #[expect(
        clippy::too_many_arguments,
        reason = "the sections of a config, each checked here"
    )]
    pub fn new(
        prefix: &str,
        text: &ModelText,
        x0: Vec<f64>,
        stages: usize,
        method: PortHamiltonianMethod,
        h: f64,
        t_end: f64,
        signals: &[Signal],
        ensemble: Option<PortHamiltonianEnsembleSpec>,
        record_every: usize,
        recording: Recording,
        newton: NewtonSettings,
    ) -> Result<Self> {
        let model = if method.is_gauss() {
            ExpressionModel::compile(prefix, text)?
        } else {
            ExpressionModel::compile_projected(prefix, text)?
        };
        let n = model.n();
        if x0.len() != n {
            return Err(Error::invalid(
                format!("{prefix}.x0"),
                format!("has length {}, the model has n = {n} states", x0.len()),
            ));
        }
        if let Some(bad) = x0.iter().find(|v| !v.is_finite()) {
            return Err(Error::invalid(
                format!("{prefix}.x0"),
                format!("must be finite, got {bad}"),
            ));
        }
        if model.inputs != signals.len() {
            return Err(Error::invalid(
                "input",
                format!(
                    "{prefix}.G has {} column(s) but {} input signal(s) are given",
                    model.inputs,
                    signals.len()
                ),
            ));
        }
        let range = SchemeFamily::Gauss.stage_range();
        if !range.contains(&stages) {
            return Err(Error::invalid(
                "scheme.stages",
                format!(
                    "{} takes {} to {} stages, got {stages}",
                    method.name(),
                    range.start(),
                    range.end()
                ),
            ));
        }
        if let PortHamiltonianMethod::EnergyPreserving(rule) = &method
            && rule.stages != stages
        {
            return Err(Error::invalid(
                "scheme.stages",
                format!(
                    "is {stages}, but the energy-preserving projection was built for {} stages",
                    rule.stages
                ),
            ));
        }
        let scheme = Scheme::new(SchemeFamily::Gauss, stages)?;
        let grid = StepGrid::new(h, t_end, record_every)?;
        for (i, s) in signals.iter().enumerate() {
            s.check_covers(&format!("input[{i}]"), t_end)?;
        }
        let draws = match &ensemble {
            Some(spec) => draws_of(&model, spec)?,
            None => vec![Draw::Fixed; model.parameters.len()],
        };
        let sampled = Arc::new(signals.to_vec());
        let inputs =
            SharedStream::sample(&scheme.c, signals.len(), h, grid.steps, move |t, out| {
                for (value, signal) in out.iter_mut().zip(sampled.iter()) {
                    *value = signal.value(t);
                }
            });
        let nominal = PortHamiltonianMember {
            parameters: model.parameters.iter().map(|(_, v)| *v).collect(),
            x0,
        };
        let records = record_spec(n, stages, model.inputs, recording);
        let plan = PortHamiltonianPlan {
            model: Arc::new(model),
            scheme,
            method,
            grid,
            nominal,
            ensemble,
            draws,
            inputs,
            newton,
            recording,
            records,
        };
        plan.check_member(prefix, &plan.nominal)?;
        Ok(plan)
    }

    pub fn member_count(&self) -> usize {
        self.ensemble.as_ref().map_or(1, |e| e.members)
    }

    /// Member `index`: the nominal model with its draws from stream `index` of the seed.
    pub fn member(&self, index: usize) -> Result<PortHamiltonianMember> {
        let Some(spec) = &self.ensemble else {
            return Ok(self.nominal.clone());
        };
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        rng.set_stream(index as u64);
        let mut member = self.nominal.clone();
        for v in &mut member.x0 {
            *v = spec.x0.sample(*v, &mut rng);
        }
        for (v, d) in member.parameters.iter_mut().zip(&self.draws) {
            *v = d.sample(*v, &mut rng);
        }
        self.check_member(&format!("member[{index}]"), &member)?;
        Ok(member)
    }

    /// A member's numbers: finite, H finite at x0, and R(x0) ⪰ 0.
    fn check_member(&self, prefix: &str, member: &PortHamiltonianMember) -> Result<()> {
        let model = &self.model;
        if let Some((name, value)) = model
            .parameters
            .iter()
            .zip(&member.parameters)
            .find(|(_, v)| !v.is_finite())
            .map(|((name, _), v)| (name, v))
        {
            return Err(Error::invalid(
                format!("{prefix}.parameters.{name}"),
                format!("must be finite, got {value}"),
            ));
        }
        if let Some(bad) = member.x0.iter().find(|v| !v.is_finite()) {
            return Err(Error::invalid(
                format!("{prefix}.x0"),
                format!("must be finite, got {bad}"),
            ));
        }
        let vars: Vec<f64> = member
            .x0
            .iter()
            .chain(&member.parameters)
            .copied()
            .collect();
        let mut scratch = Vec::new();
        let mut h = [0.0];
        model.energy.eval(&vars, &mut h, &mut scratch);
        if !h[0].is_finite() {
            return Err(Error::invalid(
                format!("{prefix}.H"),
                format!("is {} at x0, not finite", Num(h[0])),
            ));
        }
        if !model.lossless {
            let n = model.n();
            let mut r = vec![0.0; n * n];
            model.dissipation.eval(&vars, &mut r, &mut scratch);
            let matrix = nalgebra::DMatrix::from_row_slice(n, n, &r);
            let smallest = matrix.symmetric_eigenvalues().min();
            let scale = r.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            // A NaN eigenvalue (R not finite at x0) is refused too.
            if smallest.is_nan() || smallest < -1e-12 * scale {
                return Err(Error::invalid(
                    format!("{prefix}.R"),
                    format!(
                        "is not positive semidefinite at x0: smallest eigenvalue {}",
                        Num(smallest)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// What every member records.
    pub fn record_spec(&self) -> &RecordSpec {
        &self.records
    }
}

/// Each parameter's draw in the model's order; a draw of an unknown parameter is an error
/// naming it.
fn draws_of(model: &ExpressionModel, spec: &PortHamiltonianEnsembleSpec) -> Result<Vec<Draw>> {
    crate::model::draw::check_members(spec.members)?;
    spec.x0.check("ensemble.x0")?;
    crate::model::draw::parameter_draws(&model.parameters, &spec.parameters)
}

/// Trajectory samples of x (n), the `energy` channel and the `outputs` channel (s × m) as
/// `recording` switches them on; the totals always.
fn record_spec(n: usize, s: usize, m: usize, recording: Recording) -> RecordSpec {
    RecordSpec {
        state_width: n,
        trajectory: recording.trajectory,
        channels: energy_balance_channels(
            recording,
            s,
            m,
            "discrete outputs y^k = b_i G(x_i)ᵀ ∇H(x_i)",
        ),
        totals: TOTALS.to_vec(),
        totals_group: "energy",
    }
}
