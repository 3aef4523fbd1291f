//! The `[system]` of a contact run (`kind = "contact"`) and its translation into a
//! validated [`ContactMember`].
//!
//! ```toml
//! [system]
//! kind = "contact"
//! x0 = [0.5]
//! p0 = [0.5]
//! z0 = 0.0                         # optional, 0
//! kinetic = [[1.0]]                # P of A(p) = ½ pᵀ P p, SPD; optional, identity
//! potential = [                    # B(t, x), a sum of terms, at most one of each kind
//!   { kind = "harmonic", K = [[1.0]] },          # ½ xᵀ K x
//!   { kind = "quartic", beta = 1.0 },            # (β/4) Σ x_i⁴
//!   { kind = "pendulum", omega = 1.0 },          # −ω² Σ cos x_i
//!   { kind = "forcing", amplitude = [0.3], signal = { kind = "cosine", frequency = 0.2 } },
//!   { kind = "kepler", gamma = 1.0 },            # −γ/|x|
//!   { kind = "spin-orbit", epsilon = 0.1, eccentricity = 0.1 },
//!   { kind = "expression", B = "x^4/4 - x^2/2" },  # in x (n = 1) or x1 … xn, and t
//! ]
//! damping = { kind = "constant", alpha = 0.1 }  # or "signal" (alpha, signal), "tidal"
//!                                               # (eta, eccentricity), "expression" (C, in
//!                                               # t: C = "2/(t + 1)"); optional, none
//! time_sampling = "endpoints"      # splitting: B, C of each sub-step at its ends, or
//!                                  # "midpoint"; optional, endpoints
//! ```
//!
//! Expressions (`src/expr` grammar) take numbers only, no named parameters: they are the
//! same for every member, and `[ensemble]` draws none of their constants.

use std::path::Path;
use std::sync::Arc;

use nalgebra::{DMatrix, DVector};
use serde::Deserialize;

use super::model::{
    ContactMember, ContactSystem, Damping, DampingExpression, Potential, PotentialExpression,
};
use super::orbit::KeplerOrbit;
use super::plan::{ContactEnsembleSpec, ContactMethod, ContactPlan, TimeSampling};
use crate::error::{Error, Result};
use crate::families::{RunPlan, SystemKind};
use crate::io::Config;
use crate::io::config::MethodFamily;
use crate::model::Signal;
use crate::model::input::SignalSpec;
use crate::model::validate::{matrix_from_rows, vector_from_slice};
use crate::tableau::Composition;

type Rows = Vec<Vec<f64>>;

/// `[system]` with `kind = "contact"`: H(t, x, p, z) = ½ pᵀ P p + B(t, x) + C(t) z.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactSystemSpec {
    /// Initial positions x(0); its length sets the degrees of freedom n.
    pub x0: Vec<f64>,
    /// Initial momenta p(0), n entries.
    pub p0: Vec<f64>,
    /// Initial contact variable z(0).
    #[serde(default)]
    pub z0: f64,
    /// P of the kinetic term A(p) = ½ pᵀ P p, n × n rows, symmetric positive definite;
    /// the identity when omitted.
    #[serde(default)]
    pub kinetic: Option<Rows>,
    /// B(t, x): a sum of terms, at most one of each kind; none when empty.
    #[serde(default)]
    pub potential: Vec<PotentialSpec>,
    /// C(t) of the damping term C(t) z; no damping when omitted.
    #[serde(default)]
    pub damping: Option<DampingSpec>,
    /// Where each Strang sub-step S(τ) from t to t + τ of a splitting scheme evaluates the
    /// time-dependent B(t, x) and C(t): "endpoints" (default: the opening half at t, the
    /// closing half at t + τ, time advancing with the kinetic flow) or "midpoint" (both
    /// halves at t + τ/2, the time translation split outermost). Both keep the
    /// composition's order; refused for herglotz, whose discrete Lagrangian fixes its
    /// times.
    #[serde(default)]
    pub time_sampling: Option<TimeSampling>,
}

/// One term of B(t, x).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PotentialSpec {
    /// ½ xᵀ K x.
    Harmonic {
        /// K of ½ xᵀ K x, n × n rows, symmetric.
        #[serde(rename = "K")]
        k: Rows,
    },
    /// (β/4) Σ x_i⁴ (Duffing).
    Quartic {
        /// β of (β/4) Σ x_i⁴.
        beta: f64,
    },
    /// −ω² Σ cos x_i.
    Pendulum {
        /// ω of −ω² Σ cos x_i.
        omega: f64,
    },
    /// −s(t) aᵀ x: a force s(t) a.
    Forcing {
        /// a of the force s(t) a, n entries.
        amplitude: Vec<f64>,
        /// s(t), a signal table as in `[[input]]`.
        signal: SignalSpec,
    },
    /// −γ/|x|.
    Kepler {
        /// γ > 0 of −γ/|x|.
        gamma: f64,
    },
    /// −(ε/2)(a/r)³ Σ cos(2x_i − 2f(t)) on a Keplerian orbit with mean motion 1.
    SpinOrbit {
        /// ε of the gravity-gradient torque.
        epsilon: f64,
        /// Orbital eccentricity e, 0 ≤ e < 1.
        eccentricity: f64,
    },
    /// B(t, x) written as an expression; its gradient is derived symbolically.
    Expression {
        /// B(t, x) in the positions (`x` when n = 1, else `x1` … `xn`) and `t`, with
        /// numbers, + − * / ^, parentheses and sin cos tan exp log sqrt tanh sinh cosh atan
        /// abs, e.g. "x^4/4 - x^2/2"; no momenta, no named parameters.
        #[serde(rename = "B")]
        b: String,
    },
}

/// C(t).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DampingSpec {
    /// C = α.
    Constant {
        /// α of C = α.
        alpha: f64,
    },
    /// C = α s(t).
    Signal {
        /// α of C = α s(t).
        alpha: f64,
        /// s(t), a signal table as in `[[input]]`.
        signal: SignalSpec,
    },
    /// The MacDonald tidal torque C = η (a/r)⁶ of the spin–orbit problem.
    Tidal {
        /// η of C = η (a/r)⁶.
        eta: f64,
        /// Orbital eccentricity e, 0 ≤ e < 1 (as the spin-orbit term's).
        eccentricity: f64,
    },
    /// C(t) written as an expression in t, evaluated on the host at every time the run
    /// needs it; it must be finite there (runs start at t = 0).
    Expression {
        /// C(t) in `t`, e.g. "2/(t + 1)" (the Lane–Emden equation from ξ = t + 1 = 1);
        /// numbers only, not drawn by `[ensemble]`.
        #[serde(rename = "C")]
        c: String,
    },
}

/// Most degrees of freedom of a contact system: its kinetic matrix P is dense, n² values
/// (128 MiB at the limit).
pub const MAX_CONTACT_DOF: usize = 4096;

/// Validates the spec into a member; `prefix` names it in errors.
pub fn build_contact_member(
    prefix: &str,
    spec: &ContactSystemSpec,
    base_dir: &Path,
) -> Result<ContactMember> {
    let n = spec.x0.len();
    if n == 0 {
        return Err(Error::invalid(
            format!("{prefix}.x0"),
            "must have at least one entry",
        ));
    }
    if n > MAX_CONTACT_DOF {
        return Err(Error::invalid(
            format!("{prefix}.x0"),
            format!(
                "has n = {n} entries; contact systems support at most n = {MAX_CONTACT_DOF} degrees of freedom (the kinetic matrix P is a dense n × n matrix: {} here)",
                crate::plan::format_bytes((n as u64).saturating_mul(n as u64).saturating_mul(8))
            ),
        ));
    }
    let why = format!("n = {n} from {prefix}.x0");
    let x0 = vector_from_slice(&format!("{prefix}.x0"), &spec.x0, n, &why)?;
    let p0 = vector_from_slice(&format!("{prefix}.p0"), &spec.p0, n, &why)?;
    let kinetic = match &spec.kinetic {
        Some(rows) => matrix_from_rows(&format!("{prefix}.kinetic"), rows, n, n, &why)?,
        None => DMatrix::identity(n, n),
    };
    let mut potential = Vec::with_capacity(spec.potential.len());
    for (index, term) in spec.potential.iter().enumerate() {
        let field = |name: &str| format!("{prefix}.potential[{index}].{name}");
        potential.push(match term {
            PotentialSpec::Harmonic { k } => Potential::Harmonic {
                k: matrix_from_rows(&field("K"), k, n, n, &why)?,
            },
            PotentialSpec::Quartic { beta } => Potential::Quartic { beta: *beta },
            PotentialSpec::Pendulum { omega } => Potential::Pendulum { omega: *omega },
            PotentialSpec::Forcing { amplitude, signal } => Potential::Forcing {
                amplitude: DVector::from_column_slice(amplitude),
                signal: Signal::from_spec(&field("signal"), signal, base_dir)?,
            },
            PotentialSpec::Kepler { gamma } => Potential::Kepler { gamma: *gamma },
            PotentialSpec::SpinOrbit {
                epsilon,
                eccentricity,
            } => Potential::SpinOrbit {
                epsilon: *epsilon,
                orbit: KeplerOrbit::new(&field("eccentricity"), *eccentricity)?,
            },
            PotentialSpec::Expression { b } => {
                Potential::Expression(Arc::new(PotentialExpression::compile(&field("B"), b, n)?))
            }
        });
    }
    let damping = match &spec.damping {
        None => Damping::None,
        Some(DampingSpec::Constant { alpha }) => Damping::Constant { alpha: *alpha },
        Some(DampingSpec::Signal { alpha, signal }) => Damping::Signal {
            alpha: *alpha,
            signal: Signal::from_spec(&format!("{prefix}.damping.signal"), signal, base_dir)?,
        },
        Some(DampingSpec::Tidal { eta, eccentricity }) => Damping::Tidal {
            eta: *eta,
            orbit: KeplerOrbit::new(&format!("{prefix}.damping.eccentricity"), *eccentricity)?,
        },
        Some(DampingSpec::Expression { c }) => Damping::Expression(Arc::new(
            DampingExpression::compile(&format!("{prefix}.damping.C"), c)?,
        )),
    };
    let system = ContactSystem::new(prefix, kinetic, potential, damping)?;
    ContactMember::new(prefix, system, x0, p0, spec.z0)
}

/// The contact plan of a config whose `[system]` is `kind = "contact"`: its splitting
/// composition or its composition of Herglotz steps (`strang`, the plain second-order
/// integrator, when `scheme.composition` is omitted), h, T, the nominal member, `[ensemble]` and the
/// record cadence. Contact systems have no input ports and no stages.
pub fn plan_from_config(config: &Config) -> Result<ContactPlan> {
    let crate::io::SystemSpec::Contact(spec) = &config.system else {
        return Err(Error::invalid(
            "system.kind",
            format!("is {}, not contact", config.system.kind()),
        ));
    };
    let scheme = &config.scheme;
    if scheme.stages.is_some() {
        return Err(Error::invalid(
            "scheme.stages",
            "applies to collocation schemes; contact schemes take scheme.composition",
        ));
    }
    scheme.refuse_quadrature()?;
    if !config.input.is_empty() {
        return Err(Error::invalid(
            "input",
            "contact systems have no input ports; time dependence goes into system.potential (forcing) and system.damping",
        ));
    }
    let method = match scheme.family {
        MethodFamily::Splitting => {
            let name = scheme.composition.as_deref().ok_or_else(|| {
                Error::invalid(
                    "scheme.composition",
                    format!(
                        "is required for splitting; available: {}",
                        Composition::names().join(", ")
                    ),
                )
            })?;
            ContactMethod::Splitting(
                Composition::by_name(name)?,
                spec.time_sampling.unwrap_or_default(),
            )
        }
        MethodFamily::Herglotz => {
            if let Some(sampling) = spec.time_sampling {
                return Err(Error::invalid(
                    "system.time_sampling",
                    format!(
                        "is \"{}\", but it applies to splitting schemes; herglotz samples B at t_k and t_(k+1) and C at t_(k+1/2) by its discrete Lagrangian",
                        sampling.name()
                    ),
                ));
            }
            // Optional: the plain second-order step (`strang`, γ = [1]) unless a
            // composition raises its order.
            ContactMethod::Herglotz(Composition::by_name(
                scheme.composition.as_deref().unwrap_or("strang"),
            )?)
        }
        other => {
            return Err(Error::invalid(
                "scheme.family",
                format!(
                    "{} integrates {}; contact systems take splitting or herglotz",
                    other.name(),
                    other.integrates()
                ),
            ));
        }
    };
    let nominal = build_contact_member("system", spec, &config.base_dir)?;
    ContactPlan::new(
        method,
        scheme.h,
        scheme.t_end,
        nominal,
        config.ensemble_spec()?,
        config.output.every,
    )
}

/// The contact plan of a [`Config`], as a method: `config.contact_plan()` with this trait in
/// scope ([`plan_from_config`]).
pub trait ContactConfig {
    fn contact_plan(&self) -> Result<ContactPlan>;
}

impl ContactConfig for Config {
    fn contact_plan(&self) -> Result<ContactPlan> {
        plan_from_config(self)
    }
}

impl SystemKind for ContactSystemSpec {
    type Ensemble = ContactEnsembleSpec;
    type Problem = crate::families::NoProblem;
    const STARTER: &'static str = include_str!("../../../examples/starters/contact.toml");
    /// Contact systems carry their forcing in `[system]` (no `[[input]]`), and `[study]`
    /// configures the linear-PH studies.
    const UNREAD_SECTIONS: &'static [&'static str] = &["input", "study"];

    /// [`plan_from_config`]; contact runs always record their trajectory and H, so an
    /// `[output]` recording switch turned off is refused.
    fn run_plan(&self, config: &Config) -> Result<RunPlan> {
        let output = &config.output;
        let switched_off = [
            ("output.trajectory", output.trajectory),
            ("output.energy", output.energy),
            ("output.outputs", output.outputs),
        ]
        .into_iter()
        .find(|(_, on)| !on);
        if let Some((field, _)) = switched_off {
            return Err(Error::invalid(
                field,
                "is false, but contact runs always record their trajectory and H; the recording switches apply to linear-ph",
            ));
        }
        Ok(RunPlan::Contact(Box::new(plan_from_config(config)?)))
    }
}
