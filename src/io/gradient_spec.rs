//! The problem file of `harbor gradient`: inputs, scheme, data, cost, and the candidate(s).
//!
//! ```toml
//! [[input]]                     # one signal per input channel, as for simulate
//! kind = "chirp"
//! f0 = 3.0
//! f1 = 20.0
//! t1 = 1.0
//!
//! [scheme]                      # gauss or lobatto-iiia
//! family = "gauss"
//! stages = 2
//! h = 1e-3
//! t_end = 1.0
//!
//! [data]                        # file = "y.csv" | "y.npy": N + 1 rows [t_k, y_k] with t_k = k h,
//!                               # or values = [[t_0, y_0…], …]: the same rows inline
//! noise = 0.0                   # σ of Gaussian noise added to the outputs (seeded by `seed`);
//!                               # or a table: [data.noise] sigma = 0.05, seed = 7
//! seed = 0
//! [data.reference]              # or: data made by simulating this model
//! kind = "random"               # or "linear-ph" with J, R, Q, B, x0
//! states = 5
//! seed = 1
//!
//! [cost]
//! regularization = 0.0          # λ
//! quadrature = "left"           # or "trapezoid"
//! # regularized = ["Q"]; q_distance = "log" (src/io/cost_spec.rs)
//! # [cost.reference] J, R, Q, B, x0 (w_ref; zero where omitted, Q = I under "log")
//!
//! [candidate]                   # kind = "linear-ph" (default: J, R, Q, B, x0) or "random"
//! kind = "random"
//! states = 5
//! seed = 2
//!
//! # [candidates]                # a batch drawn around [candidate], keys as [ensemble]
//! # members = 10000
//! # seed = 3
//! # J = { kind = "perturb", sigma = 0.1 }
//!
//! # [gradient]
//! # checkpoint_every = 32       # steps between checkpoints; 1 keeps every state (default:
//! #                             # 1 when every candidate's states fit 64 MiB, else ⌈√N⌉)
//! ```
//!
//! The model tables (`[candidate]`, `[data.reference]`) and the shared sections are read by
//! `io::problem_spec`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::config::SchemeSpec;
use super::cost_spec::CostSpec;
use super::problem_spec::{DataSpec, SpecContext};
use crate::error::{Error, Result};
use crate::linear_ph::{DrawnLinearPhEnsemble, GradientPlan, LinearPhEnsembleSpec, LinearPhPlan};
use crate::model::SignalSpec;
use crate::plan::{MemoryBudget, ProblemEstimate, ProblemSizes, Setting, step_count};

/// The whole file as read.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GradientFile {
    /// One signal u_i(t) per input channel (column of B), `[[input]]` tables.
    #[serde(default)]
    input: Vec<SignalSpec>,
    /// The collocation scheme (gauss or lobatto-iiia), its step size and end time.
    scheme: SchemeSpec,
    /// The output data the candidates are compared with.
    data: DataSpec,
    /// The cost: quadrature of the output error and regularisation.
    #[serde(default)]
    cost: CostSpec,
    /// The candidate model whose cost and gradient are computed.
    #[schemars(with = "super::config_keys::ModelTable")]
    candidate: toml::Table,
    /// A batch of candidates drawn around `[candidate]`, keys as a linear-ph `[ensemble]`.
    #[serde(default)]
    candidates: Option<LinearPhEnsembleSpec>,
    /// Options of the adjoint computation.
    #[serde(default)]
    gradient: GradientOptions,
}

/// `[gradient]`.
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct GradientOptions {
    /// Steps between stored checkpoints of the forward run; 1 keeps every state. Default:
    /// 1 when every candidate's states fit 64 MiB, else ⌈√N⌉.
    #[serde(default)]
    checkpoint_every: Option<usize>,
}

/// A gradient problem as configured.
#[derive(Debug, Clone)]
pub struct GradientConfig {
    file: GradientFile,
    context: SpecContext,
}

/// The problem and whether it is a batch (`[candidates]`) or a single candidate.
pub struct GradientProblem {
    pub plan: GradientPlan,
    pub batch: bool,
}

impl GradientConfig {
    /// Reads `path` and applies `--set` overrides in order.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Self> {
        let (file, context) = SpecContext::load(path, overrides)?;
        Ok(GradientConfig { file, context })
    }

    /// The config of a TOML table already parsed (or built by a program: the Python
    /// package's dicts); `origin` names it in errors, relative paths (data files) are
    /// resolved against `base_dir`.
    pub fn from_table(table: toml::Table, origin: &str, base_dir: PathBuf) -> Result<Self> {
        let (file, context) = SpecContext::from_table(table, origin, base_dir)?;
        Ok(GradientConfig { file, context })
    }

    /// The same config with a work limit (floating-point operations a problem may take;
    /// default `plan::gradient_resources::DEFAULT_WORK_LIMIT`) in place of the default;
    /// `field` names the setting in errors (the CLI passes `HARBOR_WORK_LIMIT`).
    pub fn with_work_limit(mut self, field: &str, limit: f64) -> Result<Self> {
        self.context.set_work_limit(field, limit)?;
        Ok(self)
    }

    /// The validated problem: its resources estimated against `budget` (and the memory
    /// available, and the work limit) before anything is built, then the data read or
    /// simulated and the candidates built.
    pub fn problem(&self, budget: &MemoryBudget) -> Result<GradientProblem> {
        self.problem_planned(budget, |_| {})
    }

    /// [`Self::problem`], handing the resource estimate to `on_estimate` once it passed its
    /// checks and before the data are read or simulated (the CLI prints a large one's plan).
    pub fn problem_planned(
        &self,
        budget: &MemoryBudget,
        on_estimate: impl FnOnce(&ProblemEstimate),
    ) -> Result<GradientProblem> {
        let file = &self.file;
        let context = &self.context;
        let scheme = context.scheme(&file.scheme)?;
        let signals = context.signals("input", &file.input)?;
        let m = signals.len();
        let candidates = file.candidates.as_ref().map_or(1, |spec| spec.members);
        let sizes = ProblemSizes {
            states: context
                .model_states("candidate", &file.candidate)
                .unwrap_or_else(|| Setting::new("candidate", 1)),
            reference_states: file
                .data
                .reference
                .as_ref()
                .and_then(|table| context.model_states("data.reference", table)),
            inputs: m,
            stages: scheme.stages,
            steps: step_count(file.scheme.h, file.scheme.t_end)?,
            candidates: Setting::new("candidates.members", candidates),
            batch: candidates,
            descent: None,
            grids: 1,
            workers: rayon::current_num_threads(),
        };
        on_estimate(&context.check_resources(&sizes, budget)?);
        let nominal = context.model("candidate", &file.candidate, m)?;
        let n = nominal.system.states();
        let (h, t_end) = (file.scheme.h, file.scheme.t_end);
        let model = match file.candidates.clone() {
            Some(spec) => LinearPhPlan::new(
                scheme,
                h,
                t_end,
                DrawnLinearPhEnsemble::new(nominal, spec, None)
                    .map_err(|e| rename(e, "ensemble", "candidates"))?,
                &signals,
                usize::MAX,
            ),
            None => LinearPhPlan::new(scheme, h, t_end, vec![nominal], &signals, usize::MAX),
        }
        .map_err(|e| rename(e, "system", "candidate"))?;
        let data = context.data(&file.data, &model, m)?;
        let plan = GradientPlan::new(
            model,
            data,
            file.cost.quadrature,
            file.gradient.checkpoint_every,
            file.cost.regularization(n, m)?,
        )?;
        Ok(GradientProblem {
            plan,
            batch: file.candidates.is_some(),
        })
    }
}

/// An error about `from.…` renamed to `to.…`, in its field and its text (the plan's names
/// for what the problem file calls otherwise).
fn rename(e: Error, from: &str, to: &str) -> Error {
    match e {
        Error::Invalid { field, problem } => Error::Invalid {
            field: match field.strip_prefix(from) {
                Some(rest) => format!("{to}{rest}"),
                None => field,
            },
            problem: problem.replace(&format!("{from}."), &format!("{to}.")),
        },
        other => other,
    }
}
