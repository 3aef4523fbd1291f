//! The contact workload of `harbor bench`: ensembles of damped, forced Duffing chains.

use nalgebra::{DMatrix, DVector};

use super::model::{ContactMember, ContactSystem, Damping, Potential};
use super::plan::{ContactEnsembleSpec, ContactMethod, ContactPlan, ParameterDraw};
use crate::error::{Error, Result};
use crate::families::{BenchWorkload, WorkloadOptions};
use crate::model::Signal;
use crate::plan::Recording;
use crate::tableau::Composition;

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
        ContactMethod::Splitting(Composition::by_name(composition)?, Default::default()),
        0.01,
        steps as f64 * 0.01,
        nominal,
        Some(spec),
        steps,
    )
}

/// `harbor bench --family contact`: [`contact_chain_plan`] under the `--composition`,
/// n = degrees of freedom; contact cases record everything.
#[derive(Debug, Clone)]
pub struct ChainWorkload {
    composition: String,
}

impl BenchWorkload for ChainWorkload {
    type Plan = ContactPlan;
    const FAMILY: &'static str = "contact";

    fn new(options: &WorkloadOptions) -> Result<Self> {
        Composition::by_name(&options.composition).map_err(|e| match e {
            Error::Invalid { problem, .. } => Error::invalid("--composition", problem),
            other => other,
        })?;
        Ok(ChainWorkload {
            composition: options.composition.clone(),
        })
    }

    fn check_size(&self, n: usize) -> Result<()> {
        if n == 0 {
            return Err(Error::invalid(
                "--states",
                "contact chains need at least 1 degree of freedom, got 0",
            ));
        }
        Ok(())
    }

    fn plan(
        &self,
        members: usize,
        n: usize,
        steps: usize,
        _recording: Recording,
    ) -> Result<ContactPlan> {
        contact_chain_plan(members, n, steps, &self.composition)
    }
}
