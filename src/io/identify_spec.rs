//! The config of `harbor identify`: the data and cost as for `harbor gradient`, the model
//! to fit, the Monte-Carlo initialisation and the optimiser.
//!
//! ```toml
//! [[input]]                 # training inputs, one signal per channel (as for simulate)
//! [[test_input]]            # optional cross-validation inputs, same channel count
//! [scheme]                  # gauss or lobatto-iiia, stages, h, t_end
//! [data]                    # file = "y.csv" | "y.npy", values = [[t, y…], …], or
//!                           # [data.reference] (kind = "linear-ph" | "random" |
//!                           # "msd-chain"), noise = σ, seed
//! [test_data]               # file = … or values = …: outputs under the test inputs (needed
//!                           # when the data are measured; otherwise [data.reference] is
//!                           # simulated)
//! [cost]                    # regularization = λ, regularized = ["Q"], q_distance = "log",
//!                           # quadrature, [cost.reference] (src/io/cost_spec.rs)
//!
//! [model]
//! order = 5                 # n of the fitted model (may differ from the data's)
//! fit = ["J", "R", "B"]     # the parts fitted (default: all); the others are fixed:
//! # J, R, Q, B, x0 = …      # values of fixed parts (defaults J = 0, R = 0, Q = I, x0 = 0;
//!                           # B has no default)
//! dissipation_rank = 5      # r of R = L Lᵀ, L ∈ ℝ^{n×r} (default n)
//!
//! [monte_carlo]             # K candidates drawn, the best M kept (identify::monte_carlo)
//! candidates = 10000
//! keep = 16
//! seed = 0
//! scale = 1.0
//! spread = 0.5              # decades either side of scale
//!
//! [[paper]]                 # optional: a paper's numbers for this experiment, printed and
//! source = "…"              # written beside harbor's (src/io/paper_comparison.rs)
//!
//! [[initial_guess]]         # optional starts given by the user, beside the Monte-Carlo
//! file = "runs/x/model"     # ones (instead of them with candidates = 0): a model directory
//! x0 = [0, 0, 0, 0, 0]      # or identification.json of an earlier run, and/or values of
//!                           # the fitted parts (src/io/initial_guess_spec.rs)
//!
//! [optimizer]               # identify::conjugate_gradient
//! max_iterations = 100
//! initial_step = 1.0
//! armijo = 1e-4
//! backtrack = 0.5
//! trials = 4                # trial steps per start per batch
//! refine = true             # a secant refinement of the accepted step (one more evaluation)
//! max_backtracks = 40
//! restart_every = 0         # periodic restart along −grad; 0: never (PR+ restarts itself)
//! gradient_tolerance = 1e-8 # relative to the first gradient
//! relative_decrease = 1e-10 # over stall_window iterations
//! gradient_change_tolerance = 0 # the seed's rule ‖g_{k+1} − g_k‖ < ε; 0: off
//! stall_window = 10
//! prune_every = 10         # every k iterations the costlier half of the starts stops; 0: never
//! # evaluation_budget = …   # total cost+gradient evaluations, Monte-Carlo included
//! ```

use std::path::{Path, PathBuf};

use nalgebra::{DMatrix, DVector};
use serde::Deserialize;

use super::config::SchemeSpec;
use super::cost_spec::CostSpec;
use super::initial_guess_spec::GuessSpec;
use super::paper_comparison::PaperNumbers;
use super::problem_spec::{DataSpec, SpecContext, data_from_rows, read_data_file};
use crate::error::{Error, Result};
use crate::identify::identification::MONTE_CARLO_BATCH;
use crate::identify::{CgSettings, MonteCarlo, Point, Setup, guess_point, simulate_outputs};
use crate::linear_ph::Parts;
use crate::linear_ph::{GradientPlan, LinearPhMember, LinearPhPlan, OutputData};
use crate::model::SignalSpec;
use crate::model::validate::{
    check_pd, check_psd, check_skew, matrix_from_rows, vector_from_slice,
};
use crate::plan::{DescentSizes, MemoryBudget, ProblemEstimate, ProblemSizes, Setting, step_count};

type Rows = Vec<Vec<f64>>;

/// The whole file as read.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct IdentifyFile {
    /// Training inputs: one signal u_i(t) per input channel, `[[input]]` tables.
    #[serde(default)]
    input: Vec<SignalSpec>,
    /// Cross-validation inputs, as many channels as `[[input]]`; none: no cross-validation.
    #[serde(default)]
    test_input: Vec<SignalSpec>,
    /// The collocation scheme (gauss or lobatto-iiia), its step size and end time.
    scheme: SchemeSpec,
    /// The training output data.
    data: DataSpec,
    /// Outputs under the test inputs; needed with `[[test_input]]` when the data come from
    /// `data.file` (otherwise `[data.reference]` is simulated).
    #[serde(default)]
    test_data: Option<TestDataSpec>,
    /// The cost: quadrature of the output error and regularisation.
    #[serde(default)]
    cost: CostSpec,
    /// The model fitted: its order, the fitted parts and the fixed parts' values.
    model: ModelSpec,
    /// The Monte-Carlo initialisation: candidates drawn, the best kept as starts.
    #[serde(default)]
    monte_carlo: MonteCarlo,
    /// The Riemannian conjugate-gradient optimiser run from each start.
    #[serde(default)]
    optimizer: CgSettings,
    /// Starting points given by the user, beside the Monte-Carlo starts (instead of them
    /// with monte_carlo.candidates = 0): `[[initial_guess]]` tables
    /// (src/io/initial_guess_spec.rs).
    #[serde(default)]
    initial_guess: Vec<GuessSpec>,
    /// The numbers a paper reports for this experiment, printed and written beside harbor's:
    /// `[[paper]]` tables (src/io/paper_comparison.rs).
    #[serde(default)]
    paper: Vec<PaperNumbers>,
}

/// `[test_data]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TestDataSpec {
    /// Measured outputs under `[[test_input]]`, CSV or NPY as `data.file`; give this or
    /// `test_data.values`.
    #[serde(default)]
    file: Option<PathBuf>,
    /// Measured outputs under `[[test_input]]` written in the config (or handed over as a
    /// NumPy array by the Python package), rows as `data.values`.
    #[serde(default)]
    values: Option<Vec<Vec<f64>>>,
}

/// `[model]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ModelSpec {
    /// n, the number of states of the fitted model (may differ from the data's).
    order: usize,
    /// The parts fitted, from "J", "R", "Q", "B", "x0" (default: all); the others are fixed.
    #[serde(default)]
    fit: Option<Vec<String>>,
    /// r of R = L Lᵀ with L ∈ ℝ^{n×r}, 1 ≤ r ≤ n (default n).
    #[serde(default)]
    dissipation_rank: Option<usize>,
    /// Value of J when fixed, n × n rows, skew-symmetric (default 0).
    #[serde(rename = "J", default)]
    j: Option<Rows>,
    /// Value of R when fixed, n × n rows, symmetric positive semidefinite (default 0).
    #[serde(rename = "R", default)]
    r: Option<Rows>,
    /// Value of Q when fixed, n × n rows, symmetric positive definite (default I).
    #[serde(rename = "Q", default)]
    q: Option<Rows>,
    /// Value of B when fixed, n × m rows (required when B is fixed).
    #[serde(rename = "B", default)]
    b: Option<Rows>,
    /// Value of x0 when fixed, n entries (default 0).
    #[serde(default)]
    x0: Option<Vec<f64>>,
}

/// Cross-validation: the test inputs' plan and the outputs to compare with.
#[derive(Debug, Clone)]
pub struct CrossValidation {
    pub model: LinearPhPlan,
    pub data: OutputData,
}

/// An identification problem, validated.
#[derive(Debug, Clone)]
pub struct IdentifyProblem {
    /// The data, cost, scheme, grid and training inputs (its candidate is the template).
    pub problem: GradientPlan,
    pub setup: Setup,
    pub cross_validation: Option<CrossValidation>,
    /// The model the data were simulated from, when they were.
    pub reference: Option<LinearPhMember>,
    /// The first `[[paper]]` table for this run's noise level, if any.
    pub paper: Option<PaperNumbers>,
}

/// An identification config as read.
#[derive(Debug, Clone)]
pub struct IdentifyConfig {
    file: IdentifyFile,
    context: SpecContext,
}

impl IdentifyConfig {
    /// Reads `path` and applies `--set` overrides in order.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Self> {
        let (file, context) = SpecContext::load(path, overrides)?;
        Ok(IdentifyConfig { file, context })
    }

    /// The config of a TOML table already parsed (or built by a program: the Python
    /// package's dicts); `origin` names it in errors, relative paths (data files) are
    /// resolved against `base_dir`.
    pub fn from_table(table: toml::Table, origin: &str, base_dir: PathBuf) -> Result<Self> {
        let (file, context) = SpecContext::from_table(table, origin, base_dir)?;
        Ok(IdentifyConfig { file, context })
    }

    /// The same config with a work limit (floating-point operations a problem may take;
    /// default `plan::gradient_resources::DEFAULT_WORK_LIMIT`) in place of the default;
    /// `field` names the setting in errors (the CLI passes `HARBOR_WORK_LIMIT`).
    pub fn with_work_limit(mut self, field: &str, limit: f64) -> Result<Self> {
        self.context.set_work_limit(field, limit)?;
        Ok(self)
    }

    /// The `[[paper]]` tables as read (checked by [`Self::problem`]).
    pub fn paper_tables(&self) -> &[PaperNumbers] {
        &self.file.paper
    }

    /// The output noise σ of the data (`data.noise`; 0 without noise).
    pub fn noise_sigma(&self) -> f64 {
        self.file.data.noise().0
    }

    /// The validated problem: its resources estimated against `budget` (and the memory
    /// available, and the work limit) before anything is built, then the data read or
    /// simulated and the template model built.
    pub fn problem(&self, budget: &MemoryBudget) -> Result<IdentifyProblem> {
        self.problem_planned(budget, |_| {})
    }

    /// [`Self::problem`], handing the resource estimate to `on_estimate` once it passed its
    /// checks and before the data are read or simulated (the CLI prints a large one's plan).
    pub fn problem_planned(
        &self,
        budget: &MemoryBudget,
        on_estimate: impl FnOnce(&ProblemEstimate),
    ) -> Result<IdentifyProblem> {
        let file = &self.file;
        let context = &self.context;
        let scheme = context.scheme(&file.scheme)?;
        let signals = context.signals("input", &file.input)?;
        let m = signals.len();
        if m == 0 {
            return Err(Error::invalid(
                "input",
                "has no signal: identification compares one output channel per input",
            ));
        }
        let guesses = file.initial_guess.len();
        file.monte_carlo.check_beside(guesses)?;
        file.optimizer.check()?;
        let (mc, optimizer) = (&file.monte_carlo, &file.optimizer);
        let kept = if mc.candidates == 0 { 0 } else { mc.keep };
        let sizes = ProblemSizes {
            states: Setting::new("model.order", file.model.order),
            reference_states: file
                .data
                .reference
                .as_ref()
                .and_then(|table| context.model_states("data.reference", table)),
            inputs: m,
            stages: scheme.stages,
            steps: step_count(file.scheme.h, file.scheme.t_end)?,
            candidates: Setting::new("monte_carlo.candidates", mc.candidates + guesses),
            batch: (mc.candidates.min(MONTE_CARLO_BATCH)).max(guesses),
            descent: Some(DescentSizes {
                keep: kept + guesses,
                max_iterations: optimizer.max_iterations,
                evaluations_per_iteration: optimizer
                    .trials
                    .saturating_add(usize::from(optimizer.refine)),
                prune_every: optimizer.prune_every,
                evaluation_budget: optimizer.evaluation_budget,
            }),
            grids: 1 + usize::from(!file.test_input.is_empty()),
            workers: rayon::current_num_threads(),
        };
        on_estimate(&context.check_resources(&sizes, budget)?);
        let fit = match &file.model.fit {
            Some(names) => Parts::parse("model.fit", names)?,
            None => Parts::ALL,
        };
        if fit.is_empty() {
            return Err(Error::invalid(
                "model.fit",
                "names no part: fit at least one of J, R, Q, B, x0",
            ));
        }
        let template = template(&file.model, fit, m)?;
        let n = file.model.order;
        let (h, t_end) = (file.scheme.h, file.scheme.t_end);
        let model = LinearPhPlan::new(
            scheme.clone(),
            h,
            t_end,
            vec![template.member()],
            &signals,
            usize::MAX,
        )?;
        let reference = match &file.data.reference {
            Some(table) => Some(context.model("data.reference", table, m)?),
            None => None,
        };
        if let Some(reference) = &reference
            && reference.system.inputs() != m
        {
            return Err(Error::invalid(
                "data.reference.B",
                format!(
                    "has {} column(s), the problem has {m} input(s)",
                    reference.system.inputs()
                ),
            ));
        }
        let data = context.data(&file.data, &model, m)?;
        refuse_silent("data", &data)?;
        let problem = GradientPlan::new(
            model,
            data,
            file.cost.quadrature,
            None,
            file.cost.regularization(n, m)?,
        )?;
        let cross_validation = self.cross_validation(&scheme, &template, reference.as_ref())?;
        let initial_guesses = file
            .initial_guess
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let guess = spec.guess(i, &context.base_dir, fit, n, m)?;
                guess_point(&format!("initial_guess[{i}]"), &guess, &template, fit)
            })
            .collect::<Result<Vec<_>>>()?;
        let setup = Setup {
            fit,
            template,
            monte_carlo: file.monte_carlo.clone(),
            initial_guesses,
            optimizer: file.optimizer.clone(),
        };
        for (i, table) in file.paper.iter().enumerate() {
            table.check(i)?;
        }
        let sigma = self.noise_sigma();
        let paper = file.paper.iter().find(|p| p.matches(sigma)).cloned();
        Ok(IdentifyProblem {
            problem,
            setup,
            cross_validation,
            reference,
            paper,
        })
    }

    /// The test inputs' plan and outputs: `[test_data]` read, or `[data.reference]`
    /// simulated without noise.
    fn cross_validation(
        &self,
        scheme: &crate::tableau::Scheme,
        template: &Point,
        reference: Option<&LinearPhMember>,
    ) -> Result<Option<CrossValidation>> {
        let file = &self.file;
        if file.test_input.is_empty() {
            if file.test_data.is_some() {
                return Err(Error::invalid(
                    "test_data",
                    "is given but there is no [[test_input]] to produce it",
                ));
            }
            return Ok(None);
        }
        let signals = self.context.signals("test_input", &file.test_input)?;
        if signals.len() != file.input.len() {
            return Err(Error::invalid(
                "test_input",
                format!(
                    "has {} signal(s), the training [[input]] has {}",
                    signals.len(),
                    file.input.len()
                ),
            ));
        }
        let model = LinearPhPlan::new(
            scheme.clone(),
            file.scheme.h,
            file.scheme.t_end,
            vec![template.member()],
            &signals,
            usize::MAX,
        )
        .map_err(|e| match e {
            Error::Invalid { field, problem } if field.starts_with("input") => Error::Invalid {
                field: field.replacen("input", "test_input", 1),
                problem,
            },
            other => other,
        })?;
        model.check_inputs()?;
        let m = signals.len();
        let data = match (&file.test_data, reference) {
            (Some(spec), _) => match (&spec.file, &spec.values) {
                (Some(path), None) => read_data_file(
                    "test_data.file",
                    &self.context.base_dir.join(path),
                    m,
                    &model.grid,
                )?,
                (None, Some(rows)) => {
                    data_from_rows("test_data.values", None, rows, m, &model.grid)?
                }
                _ => {
                    return Err(Error::invalid(
                        "test_data",
                        "give exactly one of test_data.file and test_data.values",
                    ));
                }
            },
            (None, Some(reference)) => simulate_outputs(&model, reference, None)?,
            (None, None) => {
                return Err(Error::invalid(
                    "test_data.file",
                    "is required with [[test_input]] when the data are measured (data.file or data.values; there is no reference model to simulate): give test_data.file or test_data.values",
                ));
            }
        };
        refuse_silent("test_data", &data)?;
        Ok(Some(CrossValidation { model, data }))
    }
}

/// The template point: order n, the rank of R's factor, the fixed parts' values.
fn template(spec: &ModelSpec, fit: Parts, m: usize) -> Result<Point> {
    let n = spec.order;
    if n == 0 {
        return Err(Error::invalid("model.order", "must be ≥ 1, got 0"));
    }
    let rank = spec.dissipation_rank.unwrap_or(n);
    if rank == 0 || rank > n {
        return Err(Error::invalid(
            "model.dissipation_rank",
            format!("must lie in 1…n = {n}, got {rank}"),
        ));
    }
    let why = format!("n = model.order = {n}, m = {m} inputs");
    let given = |name: &str, rows: &Option<Rows>, cols: usize| -> Result<Option<DMatrix<f64>>> {
        rows.as_ref()
            .map(|rows| matrix_from_rows(&format!("model.{name}"), rows, n, cols, &why))
            .transpose()
    };
    for (name, on, present) in [
        ("J", fit.j, spec.j.is_some()),
        ("R", fit.r, spec.r.is_some()),
        ("Q", fit.q, spec.q.is_some()),
        ("B", fit.b, spec.b.is_some()),
        ("x0", fit.x0, spec.x0.is_some()),
    ] {
        if on && present {
            return Err(Error::invalid(
                format!("model.{name}"),
                format!(
                    "is given but {name} is fitted (model.fit): give values only for fixed parts"
                ),
            ));
        }
    }
    let j = given("J", &spec.j, n)?.unwrap_or_else(|| DMatrix::zeros(n, n));
    check_skew("model.J", &j)?;
    let r = given("R", &spec.r, n)?.unwrap_or_else(|| DMatrix::zeros(n, n));
    check_psd("model.R", &r)?;
    let q = given("Q", &spec.q, n)?.unwrap_or_else(|| DMatrix::identity(n, n));
    check_pd("model.Q", &q)?;
    let b = match given("B", &spec.b, m)? {
        Some(b) => b,
        None if fit.b => DMatrix::zeros(n, m),
        None => {
            return Err(Error::invalid(
                "model.B",
                "is required when B is fixed (not in model.fit): it has no default",
            ));
        }
    };
    let x0 = match &spec.x0 {
        Some(x0) => vector_from_slice("model.x0", x0, n, &why)?,
        None => DVector::zeros(n),
    };
    let (l, fixed_r) = if fit.r {
        (DMatrix::zeros(n, rank), None)
    } else {
        (DMatrix::zeros(n, 0), Some(r))
    };
    Point::new(j, l, fixed_r, q, b, x0)
}

/// Refuses outputs that are 0 at every sample: nothing reaches the outputs (for instance
/// `data.reference.B = 0`), so there is nothing to identify, and the relative error
/// ‖y − d‖∞ / ‖d‖∞ the report states is undefined. Outputs whose largest magnitude is
/// below the smallest normal f64 (2.2 × 10⁻³⁰⁸) are refused too: subnormal numbers keep
/// fewer than 53 significant bits, so such data carry no fit, and the relative error
/// overflows.
fn refuse_silent(field: &str, data: &OutputData) -> Result<()> {
    if data.values.iter().all(|&v| v == 0.0) {
        return Err(Error::invalid(
            field,
            format!(
                "every one of its {} output samples is 0: nothing reaches the outputs (is B zero?), so there is nothing to identify and the relative error ‖y − d‖∞ / ‖d‖∞ is undefined",
                data.values.len()
            ),
        ));
    }
    let largest = data.values.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    if largest < f64::MIN_POSITIVE {
        return Err(Error::invalid(
            field,
            format!(
                "its largest output sample is {largest:e}, below the smallest normal f64 ({:e}): the outputs have all but vanished (is the damping or B extreme?), so there is nothing to identify and the relative error ‖y − d‖∞ / ‖d‖∞ overflows",
                f64::MIN_POSITIVE
            ),
        ));
    }
    Ok(())
}
