//! The `[system]` section of a port-Hamiltonian model written as expressions, and its
//! `[ensemble]`:
//!
//! ```toml
//! [system]
//! kind = "port-hamiltonian"
//! states = ["q", "p"]
//! parameters = { m = 1.0, l = 1.0, g = 9.81, c = 0.1 }
//! H = "p^2 / (2*m*l^2) + m*g*l*(1 - cos(q))"
//! J = [[0, 1], [-1, 0]]          # numbers or expression strings in states and parameters
//! R = [[0, 0], [0, "c"]]         # symmetric as written, positive semidefinite
//! G = [[0], [1]]                 # n × m; inputs from [[input]]
//! x0 = [1.0, 0.0]
//! newton = { tolerance = 1e-14, max_iterations = 50 }
//!
//! [ensemble]
//! members = 4096
//! seed = 7
//! x0 = { kind = "perturb", sigma = 0.05 }
//! parameters.c = { kind = "uniform", low = 0.05, high = 0.2 }
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use super::energy_order::PortHamiltonianEnergyOrder;
use super::gauss_step::NewtonSettings;
use super::method::PortHamiltonianMethod;
use super::model::{Entry, ModelText};
use super::plan::PortHamiltonianPlan;
use crate::error::{Error, Result};
use crate::families::{RunPlan, SystemKind};
use crate::io::Config;
use crate::io::config::MethodFamily;
pub use crate::model::Draw;
use crate::study::energy_order::EnergyOrderSubject;

/// A matrix entry: a number or an expression in the states and parameters.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum EntrySpec {
    /// A constant.
    Number(f64),
    /// An expression in the states and parameters.
    Expression(String),
}

impl From<&EntrySpec> for Entry {
    fn from(spec: &EntrySpec) -> Entry {
        match spec {
            EntrySpec::Number(v) => Entry::Number(*v),
            EntrySpec::Expression(text) => Entry::Expression(text.clone()),
        }
    }
}

/// `[system]` of `kind = "port-hamiltonian"`: ẋ = (J(x) − R(x)) ∇H(x) + G(x) u,
/// y = G(x)ᵀ ∇H(x), written as expressions.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortHamiltonianSpec {
    /// Names of the state components x, in order; their count sets n.
    pub states: Vec<String>,
    /// Parameter names with their nominal values; expressions use them by name, and
    /// `[ensemble] parameters.<name>` draws them per member.
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    /// The Hamiltonian H(x) as an expression: + − * / ^, parentheses, numbers, states,
    /// parameters and sin cos tan exp log sqrt tanh sinh cosh atan abs.
    #[serde(rename = "H")]
    pub hamiltonian: String,
    /// The structure matrix J(x), n × n, skew-symmetric as written.
    #[serde(rename = "J")]
    pub j: Vec<Vec<EntrySpec>>,
    /// The dissipation R(x), n × n, symmetric as written and positive semidefinite
    /// (optional: 0).
    #[serde(rename = "R", default)]
    pub r: Option<Vec<Vec<EntrySpec>>>,
    /// The input matrix G(x), n × m, one column per `[[input]]` (optional: no inputs).
    #[serde(rename = "G", default)]
    pub g: Option<Vec<Vec<EntrySpec>>>,
    /// The initial state, n values.
    pub x0: Vec<f64>,
    /// The stage equations' Newton solve.
    #[serde(default)]
    pub newton: NewtonSpec,
}

/// `system.newton`.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewtonSpec {
    /// The iteration stops when the update's largest entry is at most this times the
    /// largest of |x_k| and the stage increments (default 1e-14).
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Most iterations per step (default 50); a step that needs more ends its member with
    /// a flag (`newton_failed_step` in totals.npy) and NaN from that step on.
    #[serde(default = "default_iterations")]
    pub max_iterations: usize,
}

fn default_tolerance() -> f64 {
    NewtonSettings::default().tolerance
}

fn default_iterations() -> usize {
    NewtonSettings::default().max_iterations
}

impl Default for NewtonSpec {
    fn default() -> Self {
        NewtonSpec {
            tolerance: default_tolerance(),
            max_iterations: default_iterations(),
        }
    }
}

/// `[ensemble]` of a port-Hamiltonian run.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortHamiltonianEnsembleSpec {
    /// Number of members N.
    pub members: usize,
    /// Seed: member i depends only on (seed, i).
    #[serde(default)]
    pub seed: u64,
    /// How each entry of x0 varies.
    #[serde(default)]
    pub x0: Draw,
    /// How each named parameter varies (parameters not named keep their nominal value).
    #[serde(default)]
    pub parameters: BTreeMap<String, Draw>,
}

impl PortHamiltonianSpec {
    /// The model's text, parameters in name order.
    pub fn model_text(&self) -> ModelText {
        let matrix = |rows: &Vec<Vec<EntrySpec>>| -> Vec<Vec<Entry>> {
            rows.iter()
                .map(|row| row.iter().map(Entry::from).collect())
                .collect()
        };
        ModelText {
            states: self.states.clone(),
            parameters: self
                .parameters
                .iter()
                .map(|(name, value)| (name.clone(), *value))
                .collect(),
            hamiltonian: self.hamiltonian.clone(),
            j: matrix(&self.j),
            r: self.r.as_ref().map(matrix),
            g: self.g.as_ref().map(matrix),
        }
    }
}

/// The port-Hamiltonian plan of a config whose `[system]` is `kind = "port-hamiltonian"`.
pub fn plan_from_config(config: &Config) -> Result<PortHamiltonianPlan> {
    let crate::io::SystemSpec::PortHamiltonian(spec) = &config.system else {
        return Err(Error::invalid(
            "system.kind",
            format!("is {}, not port-hamiltonian", config.system.kind()),
        ));
    };
    let scheme = &config.scheme;
    if !matches!(
        scheme.family,
        MethodFamily::Gauss | MethodFamily::EnergyPreserving
    ) {
        return Err(Error::invalid(
            "scheme.family",
            format!(
                "{} is not available for port-hamiltonian models; they run gauss or energy-preserving (s = 1…8)",
                scheme.family.name()
            ),
        ));
    }
    let name = scheme.family.name();
    if scheme.composition.is_some() {
        return Err(Error::invalid(
            "scheme.composition",
            format!("applies to splitting schemes, not {name}"),
        ));
    }
    scheme.refuse_quadrature()?;
    let stages = scheme
        .stages
        .ok_or_else(|| Error::invalid("scheme.stages", format!("is required for {name} (1…8)")))?;
    let method = match scheme.family {
        MethodFamily::EnergyPreserving => {
            PortHamiltonianMethod::energy_preserving(stages, scheme.quadrature)?
        }
        _ => PortHamiltonianMethod::Gauss,
    };
    let newton = &spec.newton;
    if !(newton.tolerance.is_finite() && newton.tolerance > 0.0) {
        return Err(Error::invalid(
            "system.newton.tolerance",
            format!("must be finite and > 0, got {}", newton.tolerance),
        ));
    }
    if newton.max_iterations == 0 {
        return Err(Error::invalid(
            "system.newton.max_iterations",
            "must be ≥ 1, got 0",
        ));
    }
    PortHamiltonianPlan::new(
        "system",
        &spec.model_text(),
        spec.x0.clone(),
        stages,
        method,
        scheme.h,
        scheme.t_end,
        &config.signals()?,
        config.ensemble_spec()?,
        config.output.every,
        config.output.recording(),
        NewtonSettings {
            tolerance: newton.tolerance,
            max_iterations: newton.max_iterations,
        },
    )
}

/// The port-Hamiltonian plan of a [`Config`], as a method (`config.port_hamiltonian_plan()`).
pub trait PortHamiltonianConfig {
    fn port_hamiltonian_plan(&self) -> Result<PortHamiltonianPlan>;
}

impl PortHamiltonianConfig for Config {
    fn port_hamiltonian_plan(&self) -> Result<PortHamiltonianPlan> {
        plan_from_config(self)
    }
}

impl SystemKind for PortHamiltonianSpec {
    type Ensemble = PortHamiltonianEnsembleSpec;
    type Problem = crate::families::NoProblem;
    const STARTER: &'static str = include_str!("../../../examples/starters/port-hamiltonian.toml");
    fn run_plan(&self, config: &Config) -> Result<RunPlan> {
        Ok(RunPlan::PortHamiltonian(Box::new(plan_from_config(
            config,
        )?)))
    }

    fn energy_order<'c>(
        &self,
        config: &'c Config,
    ) -> Option<Result<Box<dyn EnergyOrderSubject + 'c>>> {
        Some(
            PortHamiltonianEnergyOrder::new(self, config)
                .map(|s| Box::new(s) as Box<dyn EnergyOrderSubject>),
        )
    }
}
