//! What `harbor bench` runs: mass–spring–damper chains (linear PH, Gauss s = 2), damped
//! forced Duffing chains (contact, a splitting composition), or a user's linear-PH
//! configuration, each as a plan of any member count.

use super::{BenchCase, BenchRow, GpuContexts, measure};
use crate::error::{Error, Result};
use crate::io::{Config, RunPlan};
use crate::kernels::Family;
use crate::model::chain::{chain_initial_state, mass_spring_damper_chain};
use crate::model::{ContactMember, ContactSystem, Damping, Potential, Signal};
use crate::plan::ensemble::Draw;
use crate::plan::{
    ContactEnsembleSpec, ContactMethod, ContactPlan, DrawnEnsemble, EnsembleSpec, LinearPhPlan,
    Member, ParameterDraw, Recording,
};
use crate::tableau::Composition;
use crate::tableau::{Scheme, SchemeFamily};
use nalgebra::{DMatrix, DVector};

/// The plan of a benchmark case: `members` chains of n = `states` (even) states, recording
/// what `recording` switches on once, at the last step.
pub fn chain_plan(
    members: usize,
    states: usize,
    steps: usize,
    recording: Recording,
) -> Result<LinearPhPlan> {
    let half = (states / 2).max(1);
    let nominal = Member {
        system: mass_spring_damper_chain(half, 1.0, 0.05)?,
        x0: chain_initial_state(half),
    };
    let spec = EnsembleSpec {
        members,
        seed: 1,
        j: Draw::Fixed,
        r: Draw::Fixed,
        q: Draw::Fixed,
        b: Draw::Fixed,
        x0: Draw::Perturb { sigma: 0.1 },
    };
    let ensemble = DrawnEnsemble::new(nominal, spec, None)?;
    let signals = [Signal::Harmonic {
        amplitude: 1.0,
        omega: 1.0,
        phase: 0.0,
        offset: 0.0,
    }];
    LinearPhPlan::new(
        Scheme::new(SchemeFamily::Gauss, 2)?,
        0.01,
        steps as f64 * 0.01,
        ensemble,
        &signals,
        steps,
    )
    .map(|plan| plan.with_recording(recording))
}

/// The plan of a contact benchmark case: `members` chains of n = `dof` oscillators,
/// H = ½|p|² + ½ xᵀ K x + (β/4) Σ x_i⁴ − cos(t) x_1 + α z with K the chain Laplacian
/// (tridiagonal 2, −1), β = 0.1, α uniform in [0.01, 0.1] and x0 perturbed per member,
/// h = 0.01, under the splitting `composition`.
pub fn contact_chain_plan(
    members: usize,
    dof: usize,
    steps: usize,
    composition: &str,
) -> Result<ContactPlan> {
    let n = dof.max(1);
    let k = DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
        0 => 2.0,
        1 => -1.0,
        _ => 0.0,
    });
    let mut amplitude = DVector::zeros(n);
    amplitude[0] = 1.0;
    let system = ContactSystem::new(
        "bench",
        DMatrix::identity(n, n),
        vec![
            Potential::Harmonic { k },
            Potential::Quartic { beta: 0.1 },
            Potential::Forcing {
                amplitude,
                signal: Signal::Harmonic {
                    amplitude: 1.0,
                    omega: 1.0,
                    phase: std::f64::consts::FRAC_PI_2,
                    offset: 0.0,
                },
            },
        ],
        Damping::Constant { alpha: 0.05 },
    )?;
    let x0 = DVector::from_fn(n, |i, _| 0.1 * (i as f64 + 1.0));
    let nominal = ContactMember::new("bench", system, x0, DVector::zeros(n), 0.0)?;
    let spec = ContactEnsembleSpec {
        members,
        seed: 1,
        x0: ParameterDraw::Perturb { sigma: 0.1 },
        p0: ParameterDraw::Fixed,
        z0: ParameterDraw::Fixed,
        alpha: ParameterDraw::Uniform {
            low: 0.01,
            high: 0.1,
        },
        beta: ParameterDraw::Fixed,
        omega: ParameterDraw::Fixed,
        gamma: ParameterDraw::Fixed,
        epsilon: ParameterDraw::Fixed,
        amplitude: ParameterDraw::Fixed,
    };
    ContactPlan::new(
        ContactMethod::Splitting(Composition::by_name(composition)?),
        0.01,
        steps as f64 * 0.01,
        nominal,
        Some(spec),
        steps,
    )
}

/// What a benchmark runs: one workload per family, or a user's configuration.
#[derive(Debug, Clone)]
pub enum Workload {
    /// Mass–spring–damper chains under Gauss s = 2 ([`chain_plan`]).
    LinearPhChain,
    /// Damped, forced Duffing chains under `composition` ([`contact_chain_plan`]).
    ContactChain { composition: String },
    /// A linear-PH configuration as `harbor simulate` runs it (its members, steps and
    /// `[output]` switches).
    Config(Box<Config>),
}

impl Workload {
    /// The family's name in tables.
    pub fn family(&self) -> &'static str {
        match self {
            Workload::LinearPhChain | Workload::Config(_) => "linear-ph",
            Workload::ContactChain { .. } => "contact",
        }
    }

    /// Checks a size n (`--states`): linear-PH chains have n = 2 × masses states, contact
    /// chains n ≥ 1 degrees of freedom.
    pub fn check_size(&self, n: usize) -> Result<()> {
        match self {
            Workload::LinearPhChain if n == 0 || n % 2 == 1 => Err(Error::invalid(
                "--states",
                format!("chain state sizes are even (n = 2 × masses), got {n}"),
            )),
            Workload::ContactChain { .. } if n == 0 => Err(Error::invalid(
                "--states",
                "contact chains need at least 1 degree of freedom, got 0",
            )),
            _ => Ok(()),
        }
    }

    /// The case a configuration describes (its members, n, steps and recording).
    pub fn config_case(config: &Config) -> Result<BenchCase> {
        let plan = config_plan(config, None)?;
        Ok(BenchCase {
            family: "linear-ph",
            members: plan.member_count(),
            states: plan.states(),
            steps: plan.grid.steps,
            recording: plan.recording(),
            reference: true,
        })
    }

    /// Measures `case` (its `states` is the size n) with [`measure`].
    pub fn measure(
        &self,
        case: BenchCase,
        gpus: GpuContexts,
        max_param_bytes: u64,
    ) -> Result<BenchRow> {
        let n = case.states;
        match self {
            Workload::LinearPhChain => measure(
                case,
                |members, steps| chain_plan(members, n, steps, case.recording),
                gpus,
                max_param_bytes,
            ),
            Workload::ContactChain { composition } => measure(
                case,
                |members, steps| contact_chain_plan(members, n, steps, composition),
                gpus,
                max_param_bytes,
            ),
            Workload::Config(config) => measure(
                case,
                |members, _| config_plan(config, Some(members)),
                gpus,
                max_param_bytes,
            ),
        }
    }
}

/// The linear-PH plan of `config` as `harbor simulate` runs it, with its first `members`
/// members when given (member i depends on (seed, i) alone, so a prefix is the same
/// members).
fn config_plan(config: &Config, members: Option<usize>) -> Result<LinearPhPlan> {
    let plan = match config.run_plan()? {
        RunPlan::LinearPh(plan) => *plan,
        RunPlan::Contact(_) => {
            return Err(Error::invalid(
                "system.kind",
                "is contact: bench --config measures linear-ph configs; contact chains are benchmarked with --family contact",
            ));
        }
    };
    Ok(match members {
        Some(count) if count < plan.member_count() => plan.with_members(count)?,
        _ => plan,
    })
}
