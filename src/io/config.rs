//! The TOML configuration of a run and its translation into a family's plan ([`RunPlan`]).
//!
//! ```toml
//! [system]                      # or kind = "mechanical" with K, P, D, G, q0, p0
//! kind = "linear-ph"
//! J = [[0.0, 1.0], [-1.0, 0.0]]
//! R = [[0.0, 0.0], [0.0, 0.1]]  # optional, zero when omitted
//! Q = [[1.0, 0.0], [0.0, 1.0]]
//! B = [[0.0], [1.0]]            # optional, no inputs when omitted
//! x0 = [0.0, -1.0]
//!
//! [[input]]                     # one table per column of B
//! kind = "pulse"
//! start = 8.0
//! end = 10.0
//!
//! [scheme]
//! family = "gauss"              # gauss | lobatto-iiia | lobatto-pair
//! stages = 2
//! h = 0.01
//! t_end = 18.0
//!
//! [output]
//! every = 10                    # record cadence in steps
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::overrides::{apply_override, parse_override};
pub use super::study_spec::{SchemeChoice, StudySpec};
use crate::error::{Error, Result};
use crate::families::RunPlan;
pub use crate::families::SystemSpec;
use crate::model::{Signal, SignalSpec};
use crate::plan::Recording;
use crate::tableau::SchemeFamily;

/// A whole configuration file as read: `[system]` stays a table until its kind is known.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    /// The system to integrate, selected by `kind`.
    #[schemars(with = "SystemSpec")]
    system: toml::Table,
    /// One signal u_i(t) per input channel (column of B or G), `[[input]]` tables.
    #[serde(default)]
    input: Vec<SignalSpec>,
    /// The integration scheme, its step size and end time.
    scheme: SchemeSpec,
    /// What is recorded and how often.
    #[serde(default)]
    output: OutputSpec,
    /// Many members drawn around `[system]`; absent: the one system.
    #[serde(default)]
    #[schemars(with = "Option<crate::families::EnsembleTable>")]
    ensemble: Option<toml::Table>,
    /// The schemes and step sizes of `harbor study energy-order`.
    #[serde(default)]
    study: StudySpec,
    /// The problem posed to the system, for kinds that pose one (initial or boundary
    /// values of a variational system); its keys depend on the `[system]` kind.
    #[serde(default)]
    #[schemars(with = "Option<crate::families::ProblemTable>")]
    problem: Option<toml::Table>,
}

/// A whole configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub system: SystemSpec,
    /// One signal per input channel (column of B).
    pub input: Vec<SignalSpec>,
    pub scheme: SchemeSpec,
    pub output: OutputSpec,
    /// Many members drawn around `[system]`; absent means the one system. Its keys depend
    /// on the `[system]` kind (its [`SystemKind::Ensemble`](crate::families::SystemKind::Ensemble)).
    pub ensemble: Option<toml::Table>,
    /// Parameters of `harbor study`; defaults reproduce Kotyczka & Lefèvre Fig. 3/5.
    pub study: StudySpec,
    /// The problem posed to the system (kinds that read one: its
    /// [`SystemKind::Problem`](crate::families::SystemKind::Problem)).
    pub problem: Option<toml::Table>,
    /// Where the config came from, for error messages.
    pub origin: String,
    /// Directory that relative paths (CSV inputs) are resolved against.
    pub base_dir: PathBuf,
}

/// `[scheme]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemeSpec {
    /// The method: a collocation family (linear-ph, mechanical, port-hamiltonian), the
    /// energy-preserving collocation (port-hamiltonian) or a contact method.
    pub family: MethodFamily,
    /// Stages s of a collocation scheme (required for gauss, lobatto-iiia, lobatto-pair,
    /// energy-preserving).
    #[serde(default)]
    pub stages: Option<usize>,
    /// Gauss–Legendre nodes q of the energy-preserving projection (energy-preserving only,
    /// s ≤ q ≤ 128; default s(s + 1), exact for polynomial H of degree ≤ 2s + 2, in general
    /// for degree ≤ ⌊2q / s⌋).
    #[serde(default)]
    pub quadrature: Option<usize>,
    /// The composition of the Strang splitting or of the Herglotz step (`harbor splitting
    /// --list`); without it, the second-order step itself.
    #[serde(default)]
    pub composition: Option<String>,
    /// Step size h > 0; t_end / h must be a whole number of steps.
    pub h: f64,
    /// End time T of the run, which starts at t = 0.
    pub t_end: f64,
}

/// `scheme.family`: a collocation family (linear PH) or a contact method.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum MethodFamily {
    /// Gauss–Legendre collocation on the whole state, s = 1…8.
    Gauss,
    /// Lobatto IIIA collocation on the whole state, s = 2…6.
    LobattoIiia,
    /// Lobatto IIIA on positions q and IIIB on momenta p, s = 2…6.
    LobattoPair,
    /// A composition of the Strang splitting (contact systems).
    Splitting,
    /// The Herglotz variational integrator (contact systems): its symmetric second-order
    /// step, or a composition of it of order 4, 6 or 8 (`composition`).
    Herglotz,
    /// Energy-preserving collocation on s Gauss nodes, s = 1…8 (port-hamiltonian systems):
    /// the efforts are projections of ∇H along the step, so the energy balance is exact for
    /// polynomial H.
    EnergyPreserving,
    /// A discrete Lagrangian (variational systems): the rule is `[problem] rule`.
    Variational,
}

impl MethodFamily {
    /// The collocation family, if this is one.
    pub fn collocation(self) -> Option<SchemeFamily> {
        match self {
            MethodFamily::Gauss => Some(SchemeFamily::Gauss),
            MethodFamily::LobattoIiia => Some(SchemeFamily::LobattoIiia),
            MethodFamily::LobattoPair => Some(SchemeFamily::LobattoPair),
            MethodFamily::Splitting
            | MethodFamily::Herglotz
            | MethodFamily::EnergyPreserving
            | MethodFamily::Variational => None,
        }
    }

    /// The stage counts harbor supports, for the methods that have them (collocation and
    /// energy-preserving: s Gauss nodes); `None` for splitting and Herglotz.
    pub fn stage_range(self) -> Option<std::ops::RangeInclusive<usize>> {
        match self {
            MethodFamily::EnergyPreserving => Some(SchemeFamily::Gauss.stage_range()),
            other => other.collocation().map(SchemeFamily::stage_range),
        }
    }

    /// The systems the method integrates, for the errors of a family that does not take it.
    pub fn integrates(self) -> &'static str {
        match self {
            MethodFamily::Gauss => "linear-ph, mechanical and port-hamiltonian systems",
            MethodFamily::LobattoIiia | MethodFamily::LobattoPair => {
                "linear-ph and mechanical systems"
            }
            MethodFamily::Splitting | MethodFamily::Herglotz => "contact systems",
            MethodFamily::EnergyPreserving => {
                "port-hamiltonian systems (H written as an expression; with a quadratic H it is gauss)"
            }
            MethodFamily::Variational => {
                "variational systems (a Lagrangian written as an expression)"
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MethodFamily::Splitting => "splitting",
            MethodFamily::Herglotz => "herglotz",
            MethodFamily::EnergyPreserving => "energy-preserving",
            MethodFamily::Variational => "variational",
            other => other.collocation().map_or("", SchemeFamily::name),
        }
    }
}

impl SchemeSpec {
    /// Refuses `scheme.quadrature`, which only the energy-preserving scheme reads.
    pub fn refuse_quadrature(&self) -> Result<()> {
        match self.quadrature {
            Some(q) if self.family != MethodFamily::EnergyPreserving => Err(Error::invalid(
                "scheme.quadrature",
                format!(
                    "is {q}, but it applies to energy-preserving schemes only, not {}",
                    self.family.name()
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// `[output]`.
#[derive(Debug, Clone, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Record trajectory samples, discrete outputs and windowed energies every this many
    /// steps.
    #[serde(default = "default_every")]
    pub every: usize,
    /// Record the state at every record point (`trajectory.npy`); the final state is kept
    /// either way.
    #[serde(default = "on")]
    pub trajectory: bool,
    /// Keep the energy balance: per-window energies (`energy.npy`) and the compensated
    /// totals (linear-ph).
    #[serde(default = "on")]
    pub energy: bool,
    /// Record the discrete outputs y^k (`outputs.npy`, linear-ph).
    #[serde(default = "on")]
    pub outputs: bool,
}

fn default_every() -> usize {
    1
}

fn on() -> bool {
    true
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            every: default_every(),
            trajectory: true,
            energy: true,
            outputs: true,
        }
    }
}

impl OutputSpec {
    /// The recording switches.
    pub fn recording(&self) -> Recording {
        Recording {
            trajectory: self.trajectory,
            energy: self.energy,
            outputs: self.outputs,
        }
    }
}

impl Config {
    /// Reads `path`, applies `--set` overrides in order, and checks the structure (unknown
    /// keys are errors that name their dotted path).
    pub fn load(path: &Path, overrides: &[String]) -> Result<Config> {
        let text = crate::bounded_read::read_config_text(path)?;
        let mut config = Self::from_str_with(&text, overrides, &path.display().to_string())?;
        config.base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(config)
    }

    /// Parses config text; `origin` names it in errors.
    pub fn from_str_with(text: &str, overrides: &[String], origin: &str) -> Result<Config> {
        let table = parse_with_overrides(text, overrides, origin)?;
        Self::from_table(table, origin, PathBuf::new())
    }

    /// The config of a TOML table already parsed (or built by a program: the Python
    /// package's dicts); `origin` names it in errors, relative paths (CSV inputs) are
    /// resolved against `base_dir`.
    pub fn from_table(table: toml::Table, origin: &str, base_dir: PathBuf) -> Result<Config> {
        let file: ConfigFile = deserialize_section(toml::Value::Table(table), "", origin)?;
        file.study.check()?;
        Ok(Config {
            system: SystemSpec::parse(file.system, origin)?,
            input: file.input,
            scheme: file.scheme,
            output: file.output,
            ensemble: file.ensemble,
            study: file.study,
            problem: file.problem,
            origin: origin.to_string(),
            base_dir,
        })
    }

    /// `[ensemble]` as the family's spec type `T`.
    pub(crate) fn ensemble_spec<T: serde::de::DeserializeOwned>(&self) -> Result<Option<T>> {
        self.ensemble
            .as_ref()
            .map(|table| {
                deserialize_section(toml::Value::Table(table.clone()), "ensemble", &self.origin)
            })
            .transpose()
    }

    /// `[problem]` as the family's spec type `T`; `None` when the section is absent.
    pub(crate) fn problem_spec<T: serde::de::DeserializeOwned>(&self) -> Result<Option<T>> {
        self.problem
            .as_ref()
            .map(|table| {
                deserialize_section(toml::Value::Table(table.clone()), "problem", &self.origin)
            })
            .transpose()
    }

    /// The input signals, validated.
    pub fn signals(&self) -> Result<Vec<Signal>> {
        self.input
            .iter()
            .enumerate()
            .map(|(i, spec)| Signal::from_spec(&format!("input[{i}]"), spec, &self.base_dir))
            .collect()
    }

    /// The plan of the configured family, exactly as configured.
    pub fn run_plan(&self) -> Result<RunPlan> {
        self.system.run_plan(self)
    }
}

/// Parses TOML text (`origin` names it in errors) and applies `--set` overrides in order.
pub fn parse_with_overrides(text: &str, overrides: &[String], origin: &str) -> Result<toml::Table> {
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| Error::Config {
        path: origin.to_string(),
        message: e.to_string(),
    })?;
    for text in overrides {
        let (path, value) = parse_override(text)?;
        apply_override(&mut table, &path, value)?;
    }
    Ok(table)
}

/// Deserializes `value` as `T`, naming the dotted path of a bad value under `prefix`.
pub(crate) fn deserialize_section<T: serde::de::DeserializeOwned>(
    value: toml::Value,
    prefix: &str,
    origin: &str,
) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // toml appends "in `path`" on a second line; the path is already in front.
        let inner =
            super::serde_words::in_user_words(inner.lines().next().unwrap_or_default().trim());
        let path = match (prefix.is_empty(), path == ".") {
            (true, true) => String::new(),
            (true, false) => path,
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{path}"),
        };
        Error::Config {
            path: origin.to_string(),
            message: if path.is_empty() {
                inner.to_string()
            } else {
                format!("{path}: {inner}")
            },
        }
    })
}
