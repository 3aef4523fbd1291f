//! What `harbor bench` runs: mass–spring–damper chains (linear PH, Gauss s = 2), damped
//! forced Duffing chains (contact, a splitting composition), or a user's linear-PH
//! configuration, each as a plan of any member count.

use super::{BenchCase, BenchRow, GpuContexts, measure};
use crate::error::{Error, Result};
use crate::families::RunPlan;
use crate::families::contact::contact_chain_plan;
use crate::io::Config;
use crate::kernels::Family;
use crate::linear_ph::chain::{chain_initial_state, mass_spring_damper_chain};
use crate::linear_ph::ensemble::Draw;
use crate::linear_ph::{DrawnLinearPhEnsemble, LinearPhEnsembleSpec, LinearPhMember, LinearPhPlan};
use crate::model::Signal;
use crate::plan::Recording;
use crate::tableau::{Scheme, SchemeFamily};

/// The plan of a benchmark case: `members` chains of n = `states` (even) states, recording
/// what `recording` switches on once, at the last step.
pub fn chain_plan(
    members: usize,
    states: usize,
    steps: usize,
    recording: Recording,
) -> Result<LinearPhPlan> {
    let half = (states / 2).max(1);
    let nominal = LinearPhMember {
        system: mass_spring_damper_chain(half, 1.0, 0.05)?,
        x0: chain_initial_state(half),
    };
    let spec = LinearPhEnsembleSpec {
        members,
        seed: 1,
        j: Draw::Fixed,
        r: Draw::Fixed,
        q: Draw::Fixed,
        b: Draw::Fixed,
        x0: Draw::Perturb { sigma: 0.1 },
    };
    let ensemble = DrawnLinearPhEnsemble::new(nominal, spec, None)?;
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
        _ => {
            return Err(Error::invalid(
                "system.kind",
                format!(
                    "is {}: bench --config measures linear-ph configs; other families are benchmarked with --family",
                    config.system.kind()
                ),
            ));
        }
    };
    Ok(match members {
        Some(count) if count < plan.member_count() => plan.with_members(count)?,
        _ => plan,
    })
}
