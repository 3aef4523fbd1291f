//! The linear-PH workload of `harbor bench`: ensembles of mass–spring–damper chains.

use super::chain::{chain_initial_state, mass_spring_damper_chain};
use super::ensemble::{Draw, DrawnLinearPhEnsemble, LinearPhEnsembleSpec};
use super::plan::{LinearPhMember, LinearPhPlan};
use crate::error::{Error, Result};
use crate::families::{BenchWorkload, WorkloadOptions};
use crate::model::Signal;
use crate::plan::Recording;
use crate::tableau::{Scheme, SchemeFamily};

/// The plan of a benchmark case: `members` mass–spring–damper chains of n = `states`
/// (even) states, k = 1, c = 0.05, driven by u(t) = cos t, x0 perturbed per member
/// (σ = 0.1), Gauss s = 2 with h = 0.01, recording what `recording` switches on once, at
/// the last step.
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

/// `harbor bench --family linear-ph`: [`chain_plan`], n = 2 × masses states.
#[derive(Debug, Clone)]
pub struct ChainWorkload;

impl BenchWorkload for ChainWorkload {
    type Plan = LinearPhPlan;
    const FAMILY: &'static str = "linear-ph";

    fn new(_options: &WorkloadOptions) -> Result<Self> {
        Ok(ChainWorkload)
    }

    fn check_size(&self, n: usize) -> Result<()> {
        if n == 0 || n % 2 == 1 {
            return Err(Error::invalid(
                "--states",
                format!("chain state sizes are even (n = 2 × masses), got {n}"),
            ));
        }
        Ok(())
    }

    fn plan(
        &self,
        members: usize,
        n: usize,
        steps: usize,
        recording: Recording,
    ) -> Result<LinearPhPlan> {
        chain_plan(members, n, steps, recording)
    }
}
