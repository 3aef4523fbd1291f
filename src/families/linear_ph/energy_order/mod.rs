//! The linear-PH side of `harbor study energy-order` (Kotyczka & Lefèvre Fig. 3/5): the
//! errors are measured against the exact flow of the system ([`LinearFlow`]), whose work
//! is bounded before any of it is done ([`WorkEstimate`]), and each point runs the
//! collocation scheme on the CPU reference path.

use crate::backend::cpu;
use crate::error::{Error, Result};
use crate::io::config::{Config, MethodFamily};
use crate::io::study_spec::SchemeChoice;
use crate::kernels::CpuPath;
use crate::linear_ph::reference_flow::LinearFlow;
use crate::linear_ph::{EnergyTotals, LinearPhConfig, LinearPhMember};
use crate::model::Signal;
use crate::plan::MemberResult;
use crate::study::energy_order::{EnergyOrderSubject, PointRun, Reference, needed_by};
use crate::tableau::Scheme;

mod work;

use work::check_work;
pub use work::{MAX_REFERENCE_WORK, WorkEstimate};

/// A linear-PH or mechanical system's energy-order study.
#[derive(Debug, Clone)]
pub struct LinearEnergyOrder<'c> {
    config: &'c Config,
    member: LinearPhMember,
    signals: Vec<Signal>,
}

impl<'c> LinearEnergyOrder<'c> {
    /// The study of `config`'s `[system]`; an invalid system or input is an error.
    pub fn new(config: &'c Config) -> Result<Self> {
        Ok(LinearEnergyOrder {
            config,
            member: config.member()?,
            signals: config.signals()?,
        })
    }

    fn flow(&self) -> LinearFlow<'_> {
        LinearFlow::new(&self.member.system, &self.signals)
    }

    /// The work of a sweep of `sweep_steps` scheme steps over `points` points.
    pub fn estimate(&self, sweep_steps: u64, points: usize) -> WorkEstimate {
        WorkEstimate::of(
            &self.flow(),
            self.member.system.states(),
            self.config.scheme.t_end,
            sweep_steps,
            points,
        )
    }
}

/// The work estimate of the study `config` configures, as [`crate::study::energy_order::prepare`]
/// checks it (for the tests of the estimate and of the caps).
pub fn estimate(config: &Config) -> Result<WorkEstimate> {
    let prepared = crate::study::energy_order::prepare(config)?;
    Ok(LinearEnergyOrder::new(config)?.estimate(prepared.sweep_steps, prepared.points()))
}

impl EnergyOrderSubject for LinearEnergyOrder<'_> {
    /// Gauss s = 1…3 (order 2s) and the Lobatto IIIA–IIIB pair s = 3, 4 (order 2s − 2), as
    /// in the paper's figures.
    fn default_schemes(&self) -> Vec<SchemeChoice> {
        let gauss = (1..=3).map(|stages| SchemeChoice {
            family: MethodFamily::Gauss,
            stages,
        });
        let pair = (3..=4).map(|stages| SchemeChoice {
            family: MethodFamily::LobattoPair,
            stages,
        });
        gauss.chain(pair).collect()
    }

    /// Refuses reference work beyond [`MAX_REFERENCE_WORK`], then every (scheme, h) point
    /// whose plan does not assemble (a scheme for other systems, the Lobatto pair on a
    /// system not in canonical form, inputs that are not finite at some stage time).
    fn check_sweep(&self, schemes: &[SchemeChoice], steps: &[usize]) -> Result<()> {
        let study = &self.config.study;
        let sweep_steps = schemes.len() as u64 * steps.iter().map(|&n| n as u64).sum::<u64>();
        let estimate = self.estimate(sweep_steps, schemes.len() * steps.len());
        check_work(&estimate, &self.signals, self.config.scheme.t_end)?;
        // Every point's plan is assembled (and dropped) now, so a point that cannot run is
        // reported before the first one runs.
        for (i, choice) in schemes.iter().enumerate() {
            for index in 0..study.h.len() {
                self.config
                    .study_plan(*choice, index)
                    .map_err(|e| needed_by(e, i, *choice))?;
            }
        }
        Ok(())
    }

    fn reference_work(&self) -> u64 {
        self.flow().nodes(self.config.scheme.t_end)
    }

    fn describe_reference(&self) -> String {
        let flow = self.flow();
        let t_end = self.config.scheme.t_end;
        format!(
            "exact reference flow: {} quadrature nodes (‖(J − R)Q‖_∞ = {:.3e}, f_max = {:.3e} Hz)",
            flow.nodes(t_end),
            flow.drift_norm(),
            flow.max_frequency(t_end)
        )
    }

    fn reference_name(&self) -> &'static str {
        "exact reference flow"
    }

    /// x(T) = e^{(J−R)Q T} x0 + ∫₀ᵀ e^{(J−R)Q (T−s)} B u(s) ds and
    /// ΔH_tot = ½ (x(T) − x0)ᵀ Q (x(T) + x0).
    fn reference(&self, progress: &mut dyn FnMut(u64)) -> Result<Reference> {
        let x0 = &self.member.x0;
        let x1 = self
            .flow()
            .state_at_with_progress(x0, self.config.scheme.t_end, progress);
        // ½ (x1 − x0)ᵀ Q (x1 + x0) avoids cancelling two large energies.
        let energy_change = 0.5 * (&x1 - x0).dot(&(&self.member.system.q * (&x1 + x0)));
        Ok(Reference {
            final_state: x1.iter().copied().collect(),
            energy_change,
        })
    }

    fn run_point(&self, choice: SchemeChoice, index: usize) -> Result<PointRun> {
        let mut plan = self.config.study_plan(choice, index)?;
        plan.grid.record_every = plan.grid.steps;
        let mut results: Vec<MemberResult> = Vec::new();
        cpu::run_into(&plan, CpuPath::Reference, &mut results)?;
        let result = results.pop().ok_or_else(|| Error::Numerical {
            context: "energy-order point".into(),
            problem: "the run returned no member".into(),
        })?;
        let totals = EnergyTotals::of(&result);
        let scheme: &Scheme = &plan.scheme;
        Ok(PointRun {
            scheme: scheme.label(),
            order: scheme.order,
            supplied_total: totals.supplied,
            stored_total: totals.stored,
            final_state: result.final_state,
        })
    }
}
