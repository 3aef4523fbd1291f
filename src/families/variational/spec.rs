//! The `[system]` of a variational model (`kind = "variational"`), its `[problem]` and its
//! `[ensemble]`:
//!
//! ```toml
//! [system]
//! kind = "variational"
//! coordinates = ["x", "y", "z"]
//! order = 2                               # 1: L(q, q̇, t); 2: L(q, q̇, q̈, t)
//! parameters = { r = 1.0 }
//! lagrangian = "(xdd^2 + ydd^2 + zdd^2)/2"
//! constraints = ["x^2 + y^2 + z^2 - r^2"]  # holonomic (q, t only) or higher-order
//! symmetry = ["-y", "x", "0"]             # optional: ξ(q), momentum map p · ξ(q)
//! observables = { speed = "sqrt(xd^2 + yd^2 + zd^2)" }   # optional, recorded per point
//! # forces = ["-c*xd", "0", "0"]         # order 1: generalised forces (Lagrange–d'Alembert)
//! newton = { tolerance = 1e-13, max_iterations = 50 }
//!
//! [problem]
//! kind = "boundary-value"                 # or "initial-value" (order 1): q0, qd0
//! start = { q = [1, 0, 0], qd = [0, 1, 0] }
//! end = { q = [0, 0, 1], qd = [0, -1, 0] }
//! knots = [{ t = 0.5, q = [0.6, 0.8, 0.0] }]
//! # rule = "central"                      # midpoint (default, order 1), trapezoid, central
//!
//! [scheme]
//! family = "variational"
//! h = 0.01
//! t_end = 1.0
//!
//! [ensemble]
//! members = 1024
//! seed = 3
//! parameters.r = { kind = "uniform", low = 0.9, high = 1.1 }
//! knots = { kind = "perturb", sigma = 0.01 }   # then projected onto φ_h = 0
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use super::plan::VariationalPlan;
use super::rule::RuleName;
use super::solve::NewtonSettings;
use crate::error::{Error, Result};
use crate::families::{RunPlan, SystemKind};
use crate::io::Config;
use crate::io::config::MethodFamily;
use crate::model::Draw;

/// `[system]` of `kind = "variational"`: a Lagrangian of order 1 or 2 with constraints,
/// written as expressions.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariationalSpec {
    /// Names of the coordinates q; each `x` also names its velocity `xd` and (order 2)
    /// acceleration `xdd`.
    pub coordinates: Vec<String>,
    /// The Lagrangian's order: 1 (L(q, q̇, t)) or 2 (L(q, q̇, q̈, t)).
    #[serde(default = "one")]
    pub order: usize,
    /// Parameter names and nominal values, usable in every expression.
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    /// L, an expression in the coordinates, their derivatives, t and the parameters.
    pub lagrangian: String,
    /// Constraints φ = 0: holonomic when they use coordinates (and t) only, imposed at
    /// every grid point; otherwise imposed per discrete Lagrangian.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// The generator ξ(q) of a symmetry (one expression in the coordinates per
    /// coordinate): the momentum map p · ξ(q) is recorded.
    #[serde(default)]
    pub symmetry: Option<Vec<String>>,
    /// Generalised forces f(q, q̇, t) on the coordinates, one expression per coordinate
    /// (first-order Lagrangians): controls or dissipation by the Lagrange–d'Alembert
    /// principle, discretized as f_d^± = (h/2) f at the rule's midpoint jet.
    #[serde(default)]
    pub forces: Vec<String>,
    /// Named expressions (in the same names as the Lagrangian) recorded along the path at
    /// each discrete Lagrangian's constraint jet: a control, a force, a curvature.
    #[serde(default)]
    pub observables: BTreeMap<String, String>,
    /// Newton's settings for every solve.
    #[serde(default)]
    pub newton: NewtonSpec,
}

fn one() -> usize {
    1
}

/// `system.newton`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "VariationalNewtonSpec")]
pub struct NewtonSpec {
    /// Stop when the update's largest entry is at most this times max(1, ‖q‖_∞) (default
    /// 1e-13).
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Most iterations per solve (default 50).
    #[serde(default = "default_iterations")]
    pub max_iterations: usize,
}

fn default_tolerance() -> f64 {
    1e-13
}

fn default_iterations() -> usize {
    50
}

impl Default for NewtonSpec {
    fn default() -> Self {
        NewtonSpec {
            tolerance: default_tolerance(),
            max_iterations: default_iterations(),
        }
    }
}

/// A point of a boundary condition: q, and q̇ for order 2.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndSpec {
    /// The position q at the end (one value per coordinate).
    pub q: Vec<f64>,
    /// The velocity (order 2 only).
    #[serde(default)]
    pub qd: Option<Vec<f64>>,
}

/// An interpolation constraint: the path passes through q at time t (a grid point).
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KnotSpec {
    /// The time of the knot: a grid point strictly inside (0, t_end).
    pub t: f64,
    /// The position the path passes through (one value per coordinate).
    pub q: Vec<f64>,
}

/// `[problem]`, selected by `kind`.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ProblemSpec {
    /// March the discrete Euler–Lagrange equations from q(0), q̇(0) (and q̈(0), q⃛(0) for
    /// order 2).
    InitialValue {
        /// q(0), one value per coordinate (on the holonomic constraints).
        q0: Vec<f64>,
        /// q̇(0), one value per coordinate (tangent to the holonomic constraints); for
        /// order 1 the discrete path starts from the momentum p(0) = ∂L/∂q̇(q(0), q̇(0), 0).
        qd0: Vec<f64>,
        /// q̈(0) (order 2 only; its components normal to the holonomic constraints are
        /// set by them): the start matches the central differences of q̇, q̈ and q⃛ at
        /// t = 0 (variational::start).
        #[serde(default)]
        qdd0: Option<Vec<f64>>,
        /// q⃛(0) (order 2 only).
        #[serde(default)]
        qddd0: Option<Vec<f64>>,
        /// The discrete Lagrangian (default: midpoint).
        #[serde(default)]
        rule: Option<RuleName>,
    },
    /// The whole path between two ends, through the knots, by one Newton solve.
    BoundaryValue {
        /// The path's start at t = 0: q, and q̇ for order 2.
        start: EndSpec,
        /// The path's end at t_end: q, and q̇ for order 2.
        end: EndSpec,
        /// Interpolation points on grid points inside (0, t_end); each replaces the
        /// Euler–Lagrange equation there.
        #[serde(default)]
        knots: Vec<KnotSpec>,
        /// The discrete Lagrangian (default: midpoint for order 1, central for order 2).
        #[serde(default)]
        rule: Option<RuleName>,
    },
}

/// `[ensemble]` of a variational run: parameters, and the problem's data perturbed.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariationalEnsembleSpec {
    /// Number of members N.
    pub members: usize,
    /// Seed: member i depends only on (seed, i).
    #[serde(default)]
    pub seed: u64,
    /// How each named parameter varies.
    #[serde(default)]
    pub parameters: BTreeMap<String, Draw>,
    /// How each entry of q0 (initial-value) varies.
    #[serde(default)]
    pub q0: Draw,
    /// How each entry of qd0 (initial-value) varies.
    #[serde(default)]
    pub qd0: Draw,
    /// How each entry of qdd0 (initial-value, order 2) varies.
    #[serde(default)]
    pub qdd0: Draw,
    /// How each entry of qddd0 (initial-value, order 2) varies.
    #[serde(default)]
    pub qddd0: Draw,
    /// How each entry of every knot varies (boundary-value); drawn knots are projected back
    /// onto the holonomic constraints.
    #[serde(default)]
    pub knots: Draw,
}

/// The variational plan of a config whose `[system]` is `kind = "variational"`.
pub fn plan_from_config(config: &Config) -> Result<VariationalPlan> {
    let crate::io::SystemSpec::Variational(spec) = &config.system else {
        return Err(Error::invalid(
            "system.kind",
            format!("is {}, not variational", config.system.kind()),
        ));
    };
    let scheme = &config.scheme;
    if scheme.family != MethodFamily::Variational {
        return Err(Error::invalid(
            "scheme.family",
            format!(
                "{} integrates {}; a variational system takes family = \"variational\" (the discrete Lagrangian is [problem] rule)",
                scheme.family.name(),
                scheme.family.integrates()
            ),
        ));
    }
    for (field, set) in [
        ("scheme.stages", scheme.stages.is_some()),
        ("scheme.composition", scheme.composition.is_some()),
        ("scheme.quadrature", scheme.quadrature.is_some()),
    ] {
        if set {
            return Err(Error::invalid(
                field,
                "does not apply to variational systems (the discrete Lagrangian is [problem] rule); remove it",
            ));
        }
    }
    if !config.input.is_empty() {
        return Err(Error::invalid(
            "input",
            "variational systems take no [[input]]: write forcing into the Lagrangian as a function of t",
        ));
    }
    let problem: ProblemSpec = config.problem_spec()?.ok_or_else(|| {
        Error::invalid(
            "problem",
            "is missing: a variational system needs [problem] kind = \"initial-value\" (q0, qd0) or \"boundary-value\" (start, end, knots)",
        )
    })?;
    let newton = spec.newton;
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
    VariationalPlan::new(
        spec,
        &problem,
        scheme.h,
        scheme.t_end,
        config.ensemble_spec()?,
        config.output.every,
        NewtonSettings {
            tolerance: newton.tolerance,
            max_iterations: newton.max_iterations,
        },
    )
}

impl SystemKind for VariationalSpec {
    type Ensemble = VariationalEnsembleSpec;
    type Problem = ProblemSpec;
    const STARTER: &'static str = include_str!("../../../examples/starters/variational.toml");
    /// Forcing is written into the Lagrangian (no `[[input]]`); `[study]` configures the
    /// energy-order study of port-Hamiltonian systems.
    const UNREAD_SECTIONS: &'static [&'static str] = &["input", "study"];

    fn run_plan(&self, config: &Config) -> Result<RunPlan> {
        Ok(RunPlan::Variational(Box::new(plan_from_config(config)?)))
    }
}
