//! The port-Hamiltonian workload of `harbor bench`: ensembles of damped, driven chains of
//! coupled pendulums written as expressions, measured beside the same chains written by
//! hand in Rust ([`super::hand_written`]).

use std::collections::BTreeMap;

use super::gauss_step::NewtonSettings;
use super::method::PortHamiltonianMethod;
use super::model::{Entry, ModelText};
use super::plan::PortHamiltonianPlan;
use super::spec::{Draw, PortHamiltonianEnsembleSpec};
use crate::error::{Error, Result};
use crate::families::{BenchWorkload, WorkloadOptions};
use crate::model::Signal;
use crate::plan::Recording;

/// The model of a chain of `dof` pendulums (2·dof states q_i, p_i):
/// H = Σ p_i²/2 + Σ (1 − cos q_i) + (k/2) Σ (q_{i+1} − q_i)², canonical J, damping c on
/// every momentum, the first momentum driven by the one input; k = 0.5, c = 0.05.
pub fn pendulum_chain(dof: usize) -> ModelText {
    let n = 2 * dof;
    let q = |i: usize| format!("q{i}");
    let p = |i: usize| format!("p{i}");
    let mut hamiltonian: Vec<String> = (0..dof)
        .map(|i| format!("{}^2/2 + (1 - cos({}))", p(i), q(i)))
        .collect();
    hamiltonian.extend((1..dof).map(|i| format!("k/2*({} - {})^2", q(i), q(i - 1))));
    let zero = || Entry::Number(0.0);
    let j = (0..n)
        .map(|r| {
            (0..n)
                .map(|c| match (r < dof, c) {
                    (true, c) if c == r + dof => Entry::Number(1.0),
                    (false, c) if c + dof == r => Entry::Number(-1.0),
                    _ => zero(),
                })
                .collect()
        })
        .collect();
    let r = (0..n)
        .map(|r| {
            (0..n)
                .map(|c| {
                    if r == c && r >= dof {
                        Entry::Expression("c".into())
                    } else {
                        zero()
                    }
                })
                .collect()
        })
        .collect();
    let g = (0..n)
        .map(|r| vec![Entry::Number(if r == dof { 1.0 } else { 0.0 })])
        .collect();
    ModelText {
        states: (0..dof).map(q).chain((0..dof).map(p)).collect(),
        parameters: vec![("c".into(), 0.05), ("k".into(), 0.5)],
        hamiltonian: hamiltonian.join(" + "),
        j,
        r: Some(r),
        g: Some(g),
    }
}

/// `harbor bench --family port-hamiltonian`: `members` chains of n = dof pendulums under
/// Gauss s = 2, h = 0.01, driven by cos t, the damping c drawn uniform in [0.01, 0.1] and
/// x0 perturbed per member; n = degrees of freedom.
#[derive(Debug, Clone)]
pub struct PendulumChainWorkload;

impl BenchWorkload for PendulumChainWorkload {
    type Plan = PortHamiltonianPlan;
    const FAMILY: &'static str = "port-hamiltonian";

    fn new(_options: &WorkloadOptions) -> Result<Self> {
        Ok(PendulumChainWorkload)
    }

    fn check_size(&self, n: usize) -> Result<()> {
        if n == 0 {
            return Err(Error::invalid(
                "--states",
                "pendulum chains need at least 1 degree of freedom, got 0",
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
    ) -> Result<PortHamiltonianPlan> {
        let x0 = (0..2 * n)
            .map(|i| if i < n { 0.3 + 0.1 * i as f64 } else { 0.0 })
            .collect();
        let ensemble = PortHamiltonianEnsembleSpec {
            members,
            seed: 1,
            x0: Draw::Perturb { sigma: 0.1 },
            parameters: BTreeMap::from([(
                "c".to_string(),
                Draw::Uniform {
                    low: 0.01,
                    high: 0.1,
                },
            )]),
        };
        PortHamiltonianPlan::new(
            "bench",
            &pendulum_chain(n),
            x0,
            2,
            PortHamiltonianMethod::Gauss,
            0.01,
            steps as f64 * 0.01,
            &[Signal::Harmonic {
                amplitude: 1.0,
                omega: 1.0,
                phase: std::f64::consts::FRAC_PI_2,
                offset: 0.0,
            }],
            Some(ensemble),
            steps,
            recording,
            NewtonSettings::default(),
        )
    }

    fn hand_written(&self) -> Option<&'static str> {
        Some("the model written by hand, std sin/cos")
    }

    /// The chain written by hand in Rust ([`super::hand_written`]), for 1 to 8 degrees of
    /// freedom.
    fn time_hand_written(
        &self,
        plan: &PortHamiltonianPlan,
        n: usize,
        count: usize,
    ) -> Option<Result<f64>> {
        super::hand_written::time(plan, n, count)
    }
}
