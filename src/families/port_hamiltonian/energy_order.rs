//! The port-Hamiltonian side of `harbor study energy-order`: orders of the state and energy
//! errors of `gauss` and `energy-preserving` against a reference of the continuous system
//!
//! ```text
//!   ẋ = (J(x) − R(x)) ∇H(x) + G(x) u(t),   x(0) = x0,
//! ```
//!
//! integrated by [`crate::reference::ode`] (Gauss–Legendre s = 8, order 16, fixed-point
//! stages, step counts doubled until two successive results agree to
//! [`REFERENCE_TOLERANCE`] relative) piece by piece between the inputs' breakpoints, so a
//! pulse or square wave does not cost the reference its order. The right-hand side is the
//! model's compiled stage tape; nothing of the schemes under study (their Newton solves,
//! tableaux or energy bookkeeping) enters the reference. ΔH_tot = H(x(T)) − H(x0).

use std::cell::RefCell;

use super::NewtonSettings;
use super::method::PortHamiltonianMethod;
use super::model::ExpressionModel;
use super::plan::{PortHamiltonianPlan, TOTALS};
use super::spec::PortHamiltonianSpec;
use crate::backend::cpu;
use crate::error::{Error, Result};
use crate::io::config::{Config, MethodFamily};
use crate::io::study_spec::SchemeChoice;
use crate::kernels::CpuPath;
use crate::model::Signal;
use crate::plan::{MemberResult, Recording};
use crate::reference::ode;
use crate::study::energy_order::{EnergyOrderSubject, PointRun, Reference, needed_by};

/// The reference's step doubling stops when two successive results agree to this,
/// relative to the max-norm of x(T).
pub const REFERENCE_TOLERANCE: f64 = 1e-14;

/// The most input breakpoints the reference integrates between (each piece is converged
/// on its own, from 8 + 16 steps of the order-16 method up).
pub const MAX_REFERENCE_PIECES: usize = 100_000;

/// A port-Hamiltonian system's energy-order study.
#[derive(Debug, Clone)]
pub struct PortHamiltonianEnergyOrder<'c> {
    config: &'c Config,
    spec: PortHamiltonianSpec,
    signals: Vec<Signal>,
    /// Where the reference is cut: the input breakpoints in (0, t_end), then t_end.
    cuts: Vec<f64>,
}

impl<'c> PortHamiltonianEnergyOrder<'c> {
    /// The study of `config`, whose `[system]` is `spec`; an invalid input, or one with more
    /// breakpoints than [`MAX_REFERENCE_PIECES`], is an error.
    pub fn new(spec: &PortHamiltonianSpec, config: &'c Config) -> Result<Self> {
        let signals = config.signals()?;
        let t_end = config.scheme.t_end;
        let mut cuts: Vec<f64> = signals
            .iter()
            .flat_map(|s| s.breakpoints(t_end))
            .filter(|&t| t > 0.0 && t < t_end)
            .collect();
        if cuts.len() > MAX_REFERENCE_PIECES {
            return Err(Error::invalid(
                "input",
                format!(
                    "has {} breakpoints in (0, t_end = {t_end}); the reference integrates piece by piece between them and takes at most {MAX_REFERENCE_PIECES} (port_hamiltonian::energy_order::MAX_REFERENCE_PIECES) — shorten scheme.t_end or lower the input's frequency",
                    cuts.len()
                ),
            ));
        }
        cuts.push(t_end);
        cuts.sort_by(f64::total_cmp);
        cuts.dedup_by(|a, b| (*a - *b).abs() <= 1e-14 * t_end.max(1.0));
        Ok(PortHamiltonianEnergyOrder {
            config,
            spec: spec.clone(),
            signals,
            cuts,
        })
    }

    /// The plan of `choice` at step size `study.h[index]`, recording the energy balance
    /// and the final state only.
    fn plan(&self, choice: SchemeChoice, index: usize) -> Result<PortHamiltonianPlan> {
        let config = self.config;
        let t_end = config.scheme.t_end;
        let steps = config.study.step_count(index, t_end)?;
        let method = match choice.family {
            MethodFamily::Gauss => PortHamiltonianMethod::Gauss,
            MethodFamily::EnergyPreserving => {
                PortHamiltonianMethod::energy_preserving(choice.stages, None)?
            }
            other => {
                return Err(Error::invalid(
                    "study.schemes",
                    format!(
                        "{} integrates {}; a port-hamiltonian system is studied with gauss or energy-preserving",
                        other.name(),
                        other.integrates()
                    ),
                ));
            }
        };
        PortHamiltonianPlan::new(
            "system",
            &self.spec.model_text(),
            self.spec.x0.clone(),
            choice.stages,
            method,
            config.study.h[index],
            t_end,
            &self.signals,
            None,
            steps,
            Recording {
                trajectory: false,
                energy: true,
                outputs: false,
            },
            NewtonSettings {
                tolerance: self.spec.newton.tolerance,
                max_iterations: self.spec.newton.max_iterations,
            },
        )
    }
}

impl EnergyOrderSubject for PortHamiltonianEnergyOrder<'_> {
    /// Gauss and energy-preserving, s = 1…3 each (orders 2, 4, 6).
    fn default_schemes(&self) -> Vec<SchemeChoice> {
        [MethodFamily::Gauss, MethodFamily::EnergyPreserving]
            .into_iter()
            .flat_map(|family| (1..=3).map(move |stages| SchemeChoice { family, stages }))
            .collect()
    }

    /// Assembles (and drops) every point's plan: a scheme other than gauss or
    /// energy-preserving, a bad model or input, or a step size that does not divide
    /// t_end is reported before the first point runs.
    fn check_sweep(&self, schemes: &[SchemeChoice], _steps: &[usize]) -> Result<()> {
        for (i, choice) in schemes.iter().enumerate() {
            for index in 0..self.config.study.h.len() {
                self.plan(*choice, index)
                    .map_err(|e| needed_by(e, i, *choice))?;
            }
        }
        Ok(())
    }

    fn reference_work(&self) -> u64 {
        0
    }

    fn describe_reference(&self) -> String {
        format!(
            "reference: Gauss–Legendre s = 8 (order 16) on ẋ = (J − R)∇H + G u over {} piece(s) between input breakpoints, step counts doubled until successive results agree to {REFERENCE_TOLERANCE:e}",
            self.cuts.len()
        )
    }

    fn reference_name(&self) -> &'static str {
        "order-16 reference solution"
    }

    fn reference(&self, _progress: &mut dyn FnMut(u64)) -> Result<Reference> {
        let model = ExpressionModel::compile("system", &self.spec.model_text())?;
        let n = model.n();
        let parameters: Vec<f64> = model.parameters.iter().map(|(_, v)| *v).collect();
        let scratch = RefCell::new((
            vec![0.0; model.stage_vars()],
            vec![0.0; model.stage.n_outputs()],
            Vec::new(),
        ));
        // ẋ = f(x, θ, u(t)): the first n outputs of the stage tape.
        let rhs = |t: f64, x: &[f64], out: &mut [f64]| {
            let mut guard = scratch.borrow_mut();
            let (vars, outputs, tape) = &mut *guard;
            vars[..n].copy_from_slice(x);
            vars[n..n + parameters.len()].copy_from_slice(&parameters);
            for (slot, signal) in vars[n + parameters.len()..].iter_mut().zip(&self.signals) {
                *slot = signal.value(t);
            }
            model.stage.eval(vars, outputs, tape);
            out.copy_from_slice(&outputs[..n]);
        };
        let x0 = &self.spec.x0;
        let states = ode::solve_at(rhs, 0.0, x0, &self.cuts, REFERENCE_TOLERANCE)?;
        let final_state = states.last().cloned().unwrap_or_else(|| x0.clone());
        let energy = |x: &[f64]| {
            let vars: Vec<f64> = x.iter().chain(&parameters).copied().collect();
            let mut h = [0.0];
            model.energy.eval(&vars, &mut h, &mut Vec::new());
            h[0]
        };
        Ok(Reference {
            energy_change: energy(&final_state) - energy(x0),
            final_state,
        })
    }

    /// Runs the point on the CPU reference path; a failed Newton solve or a non-finite
    /// state is an error naming the scheme, h and the step.
    fn run_point(&self, choice: SchemeChoice, index: usize) -> Result<PointRun> {
        let plan = self.plan(choice, index)?;
        let label = plan.method.label(&plan.scheme);
        let h = plan.grid.h;
        let mut results: Vec<MemberResult> = Vec::new();
        cpu::run_into(&plan, CpuPath::Reference, &mut results)?;
        let result = results.pop().ok_or_else(|| Error::Numerical {
            context: format!("{label} h = {h}"),
            problem: "the run returned no member".into(),
        })?;
        let total = |name: &str| {
            TOTALS
                .iter()
                .position(|t| *t == name)
                .and_then(|i| result.totals.get(i).copied())
                .unwrap_or(f64::NAN)
        };
        let failed = total("newton_failed_step");
        if failed != 0.0 {
            return Err(Error::Numerical {
                context: format!("{label} h = {h}"),
                problem: format!(
                    "the stage solve did not converge at step {failed} (system.newton: tolerance {:e}, max_iterations {}); drop this step size from study.h or raise system.newton.max_iterations",
                    self.spec.newton.tolerance, self.spec.newton.max_iterations
                ),
            });
        }
        if let Some(step) = result.nonfinite_step {
            return Err(Error::Numerical {
                context: format!("{label} h = {h}"),
                problem: format!("the state is not finite after step {step}"),
            });
        }
        Ok(PointRun {
            scheme: format!("{}-{}", plan.method.name(), plan.scheme.stages),
            order: plan.scheme.order,
            supplied_total: total("supplied_total"),
            stored_total: total("stored_total"),
            final_state: result.final_state,
        })
    }
}
