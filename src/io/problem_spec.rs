//! The sections that gradient and identification problems share: `[data]` (measured or
//! simulated outputs, noise), the model tables, and `SpecContext`, which builds
//! them with the file's name for errors and its folder for relative paths.
//!
//! A model table is `kind = "linear-ph"` (J, R, Q, B, x0), `kind = "random"` or
//! `kind = "msd-chain"` (`cells`, `mass`, `stiffness`, `damping`: the benchmark
//! collection's single mass–spring–damper chain at rest, forces on masses 1 and 2).
//! A random model (`kind = "random"`, `states`, `seed`, `scale` = 1) is drawn like the
//! `random` draws of an ensemble: J = scale (A − Aᵀ)/√(2n), R = scale C Cᵀ/n,
//! Q = scale (I + D Dᵀ/n), B = scale ξ, x0 = scale ξ, with m the number of inputs.

use std::path::{Path, PathBuf};

use nalgebra::{DMatrix, DVector};
use serde::Deserialize;

use super::config::{SchemeSpec, deserialize_section, parse_with_overrides};
use super::resources::available_memory;
use crate::bounded_read::{DATA_FILE_CAP, read_capped, read_config_text};
use crate::error::{Error, Result};
use crate::identify::{Noise, simulate_outputs};
use crate::linear_ph::LinearPh;
use crate::linear_ph::chain::msd_benchmark_chain;
use crate::linear_ph::spec::{LinearPhSpec, build_linear_ph_member};
use crate::linear_ph::{
    Draw, DrawnLinearPhEnsemble, LinearPhEnsembleSpec, LinearPhMember, LinearPhPlan, OutputData,
    check_scheme,
};
use crate::model::{Signal, SignalSpec};
use crate::plan::gradient_resources::{DEFAULT_WORK_LIMIT, check_work_limit};
use crate::plan::{MemoryBudget, ProblemEstimate, ProblemSizes, Setting};
use crate::tableau::Scheme;

/// `[data]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DataSpec {
    /// Measured outputs: N + 1 rows [t_k, y_k] with t_k = k h, CSV or NPY, relative to the
    /// config's folder; give this, `data.values` or `[data.reference]`.
    #[serde(default)]
    pub(crate) file: Option<PathBuf>,
    /// Measured outputs written in the config (or handed over as a NumPy array by the
    /// Python package): N + 1 rows [t_k, y_k] with t_k = k h, as in `data.file`.
    #[serde(default)]
    pub(crate) values: Option<Vec<Vec<f64>>>,
    /// A model whose simulated outputs are the data; give this or `data.file`.
    #[serde(default)]
    #[schemars(with = "Option<super::config_keys::ModelTable>")]
    pub(crate) reference: Option<toml::Table>,
    /// σ of the Gaussian noise added to every output sample.
    #[serde(default)]
    pub(crate) noise: NoiseSpec,
    /// Seed of the noise (unless `data.noise.seed` is given).
    #[serde(default)]
    pub(crate) seed: u64,
}

/// `data.noise`: σ alone (`noise = 0.05`, seeded by `data.seed`) or a table
/// (`[data.noise] sigma = 0.05`, optionally with its own `seed`).
#[derive(Debug, Clone, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum NoiseSpec {
    /// σ ≥ 0, seeded by `data.seed`.
    Sigma(f64),
    /// σ with its own seed.
    Table {
        /// σ ≥ 0 of the Gaussian noise.
        sigma: f64,
        /// Seed of the noise; `data.seed` when omitted.
        #[serde(default)]
        seed: Option<u64>,
    },
}

impl Default for NoiseSpec {
    fn default() -> Self {
        NoiseSpec::Sigma(0.0)
    }
}

impl DataSpec {
    /// (σ, seed) of the output noise.
    pub(crate) fn noise(&self) -> (f64, u64) {
        match self.noise {
            NoiseSpec::Sigma(sigma) => (sigma, self.seed),
            NoiseSpec::Table { sigma, seed } => (sigma, seed.unwrap_or(self.seed)),
        }
    }
}

/// `kind = "random"`: J, R, Q, B, x0 drawn at random with n = `states` (module docs).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RandomModelSpec {
    /// n, the number of states.
    states: usize,
    /// Seed of the draw.
    #[serde(default)]
    seed: u64,
    /// Scale of every drawn part, > 0.
    #[serde(default = "one")]
    scale: f64,
}

fn one() -> f64 {
    1.0
}

/// `kind = "msd-chain"`: the benchmark collection's single mass–spring–damper chain
/// (`linear_ph::chain::msd_benchmark_chain`), at rest.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MsdChainSpec {
    /// Number of masses, ≥ 2 (n = 2 cells states).
    cells: usize,
    /// Every mass, > 0.
    mass: f64,
    /// Every spring's stiffness, > 0.
    stiffness: f64,
    /// Every damper's coefficient, > 0.
    damping: f64,
}

fn msd_chain_model(prefix: &str, spec: &MsdChainSpec) -> Result<LinearPhMember> {
    if spec.cells < 2 {
        return Err(Error::invalid(
            format!("{prefix}.cells"),
            format!(
                "must be ≥ 2 (forces act on masses 1 and 2), got {}",
                spec.cells
            ),
        ));
    }
    for (name, value) in [
        ("mass", spec.mass),
        ("stiffness", spec.stiffness),
        ("damping", spec.damping),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(Error::invalid(
                format!("{prefix}.{name}"),
                format!("must be a finite number > 0, got {value}"),
            ));
        }
    }
    let system = msd_benchmark_chain(spec.cells, spec.mass, spec.stiffness, spec.damping)?;
    let n = system.states();
    Ok(LinearPhMember {
        system,
        x0: DVector::zeros(n),
    })
}

/// Where a problem file came from: its name for errors, its folder for relative paths.
/// Builds the sections that gradient and identification problems share.
#[derive(Debug, Clone)]
pub(crate) struct SpecContext {
    pub(crate) origin: String,
    pub(crate) base_dir: PathBuf,
    /// Floating-point operations a problem may take (`plan::gradient_resources`).
    pub(crate) work_limit: f64,
}

impl SpecContext {
    /// Reads the file at `path`, applies `--set` overrides in order and deserialises it,
    /// with the context of its name and folder.
    pub(crate) fn load<T: serde::de::DeserializeOwned>(
        path: &Path,
        overrides: &[String],
    ) -> Result<(T, SpecContext)> {
        let text = read_config_text(path)?;
        let origin = path.display().to_string();
        let table = parse_with_overrides(&text, overrides, &origin)?;
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::from_table(table, &origin, base_dir)
    }

    /// Deserialises a TOML table already parsed (or built by a program), with `origin` to
    /// name it in errors and `base_dir` for relative paths.
    pub(crate) fn from_table<T: serde::de::DeserializeOwned>(
        table: toml::Table,
        origin: &str,
        base_dir: PathBuf,
    ) -> Result<(T, SpecContext)> {
        let file = deserialize_section(toml::Value::Table(table), "", origin)?;
        Ok((
            file,
            SpecContext {
                origin: origin.to_string(),
                base_dir,
                work_limit: DEFAULT_WORK_LIMIT,
            },
        ))
    }

    /// Sets the work limit (floating-point operations, finite and > 0; `field` names the
    /// setting in errors).
    pub(crate) fn set_work_limit(&mut self, field: &str, limit: f64) -> Result<()> {
        self.work_limit = check_work_limit(field, limit)?;
        Ok(())
    }

    /// `[scheme]` as a collocation scheme the gradient supports.
    pub(crate) fn scheme(&self, spec: &SchemeSpec) -> Result<Scheme> {
        let family = spec.family.collocation().ok_or_else(|| {
            Error::invalid(
                "scheme.family",
                format!(
                    "{} integrates {}; gradients take gauss or lobatto-iiia",
                    spec.family.name(),
                    spec.family.integrates()
                ),
            )
        })?;
        spec.refuse_quadrature()?;
        let stages = spec
            .stages
            .ok_or_else(|| Error::invalid("scheme.stages", "is required"))?;
        let scheme = Scheme::new(family, stages)?;
        check_scheme(&scheme)?;
        Ok(scheme)
    }

    /// The signals of `[[<field>]]`, named `<field>[i]` in errors.
    pub(crate) fn signals(&self, field: &str, specs: &[SignalSpec]) -> Result<Vec<Signal>> {
        specs
            .iter()
            .enumerate()
            .map(|(i, spec)| Signal::from_spec(&format!("{field}[{i}]"), spec, &self.base_dir))
            .collect()
    }

    /// A model table: `kind = "linear-ph"` (the default) or `kind = "random"`.
    pub(crate) fn model(
        &self,
        prefix: &str,
        table: &toml::Table,
        inputs: usize,
    ) -> Result<LinearPhMember> {
        let mut table = table.clone();
        let kind = match table.remove("kind") {
            None => "linear-ph".to_string(),
            Some(toml::Value::String(kind)) => kind,
            Some(other) => {
                return Err(Error::invalid(
                    format!("{prefix}.kind"),
                    format!("must be a string (linear-ph or random), got {other}"),
                ));
            }
        };
        let rest = toml::Value::Table(table);
        match kind.as_str() {
            "linear-ph" => {
                let spec: LinearPhSpec = deserialize_section(rest, prefix, &self.origin)?;
                build_linear_ph_member(prefix, &spec)
            }
            "random" => {
                let spec: RandomModelSpec = deserialize_section(rest, prefix, &self.origin)?;
                random_model(prefix, &spec, inputs)
            }
            "msd-chain" => {
                let spec: MsdChainSpec = deserialize_section(rest, prefix, &self.origin)?;
                msd_chain_model(prefix, &spec)
            }
            other => Err(Error::invalid(
                format!("{prefix}.kind"),
                format!("unknown kind {other:?}; expected linear-ph, random or msd-chain"),
            )),
        }
    }

    /// Refuses a problem whose estimated memory exceeds `budget` or the memory available,
    /// or whose work exceeds the work limit (`plan::gradient_resources`), before anything
    /// of it is built.
    pub(crate) fn check_resources(
        &self,
        sizes: &ProblemSizes,
        budget: &MemoryBudget,
    ) -> Result<ProblemEstimate> {
        let estimate = sizes.estimate();
        estimate.check(budget, available_memory(), self.work_limit)?;
        Ok(estimate)
    }

    /// The state count n of a model table, with the setting that sets it, read without
    /// building the model: `states` (random), 2 `cells` (msd-chain) or the rows of `J`
    /// (linear-ph); `None` where the table does not say (building it reports why).
    pub(crate) fn model_states(&self, prefix: &str, table: &toml::Table) -> Option<Setting> {
        let count = |key: &str| match table.get(key)? {
            toml::Value::Integer(v) => usize::try_from(*v).ok(),
            toml::Value::Array(rows) => Some(rows.len()),
            _ => None,
        };
        let field = |key: &str| format!("{prefix}.{key}");
        match table.get("kind").and_then(toml::Value::as_str) {
            Some("random") => Some(Setting::new(field("states"), count("states")?)),
            Some("msd-chain") => Some(Setting::new(
                field("cells"),
                count("cells")?.saturating_mul(2),
            )),
            None | Some("linear-ph") => Some(Setting::new(field("J"), count("J")?)),
            Some(_) => None,
        }
    }

    /// The data: read from `data.file`, or simulated from `[data.reference]` under
    /// `model`'s scheme, grid and inputs, with noise.
    pub(crate) fn data(
        &self,
        spec: &DataSpec,
        model: &LinearPhPlan,
        m: usize,
    ) -> Result<OutputData> {
        let (sigma, seed) = spec.noise();
        if !(sigma.is_finite() && sigma >= 0.0) {
            return Err(Error::invalid(
                "data.noise",
                format!("must be a finite number ≥ 0 (σ), got {sigma}"),
            ));
        }
        let noise = (sigma > 0.0).then_some(Noise { sigma, seed });
        let data = match (&spec.file, &spec.values, &spec.reference) {
            (None, None, Some(table)) => {
                let reference = self.model("data.reference", table, m)?;
                if reference.system.inputs() != m {
                    return Err(Error::invalid(
                        "data.reference.B",
                        format!(
                            "has {} column(s), the problem has {m} input(s)",
                            reference.system.inputs()
                        ),
                    ));
                }
                return simulate_outputs(model, &reference, noise);
            }
            (Some(path), None, None) => {
                read_data_file("data.file", &self.base_dir.join(path), m, &model.grid)?
            }
            (None, Some(rows), None) => data_from_rows("data.values", None, rows, m, &model.grid)?,
            _ => {
                return Err(Error::invalid(
                    "data",
                    "give exactly one of data.file, data.values (measured outputs) and [data.reference] (a model to simulate)",
                ));
            }
        };
        let mut data = data;
        if let Some(noise) = noise {
            add_noise(&mut data, noise)?;
        }
        Ok(data)
    }
}

/// A random model with n = `spec.states` and m = `inputs` (module docs).
fn random_model(prefix: &str, spec: &RandomModelSpec, inputs: usize) -> Result<LinearPhMember> {
    let n = spec.states;
    if n == 0 {
        return Err(Error::invalid(
            format!("{prefix}.states"),
            "must be ≥ 1, got 0",
        ));
    }
    if !(spec.scale.is_finite() && spec.scale > 0.0) {
        return Err(Error::invalid(
            format!("{prefix}.scale"),
            format!("must be a finite number > 0, got {}", spec.scale),
        ));
    }
    let nominal = LinearPhMember {
        system: LinearPh::new(
            prefix,
            DMatrix::zeros(n, n),
            DMatrix::zeros(n, n),
            DMatrix::identity(n, n),
            DMatrix::zeros(n, inputs),
        )?,
        x0: DVector::zeros(n),
    };
    let random = Draw::Random { scale: spec.scale };
    let draws = LinearPhEnsembleSpec {
        members: 1,
        seed: spec.seed,
        j: random,
        r: random,
        q: random,
        b: random,
        x0: random,
    };
    DrawnLinearPhEnsemble::new(nominal, draws, None)?.draw(0)
}

/// Adds seeded Gaussian noise to read data.
fn add_noise(data: &mut OutputData, noise: Noise) -> Result<()> {
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};
    let normal = Normal::new(0.0, noise.sigma)
        .map_err(|e| Error::invalid("data.noise", format!("{e}: σ = {}", noise.sigma)))?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(noise.seed);
    data.values
        .iter_mut()
        .for_each(|v| *v += normal.sample(&mut rng));
    Ok(())
}

/// Reads N + 1 rows [t_k, y_k] (m outputs) from a CSV file (an optional header line) or an
/// NPY array ((N + 1) × (1 + m), f64) at `path`, checked as [`data_from_rows`] does; `field`
/// names the setting that named the file in errors.
pub fn read_data_file(
    field: &str,
    path: &Path,
    m: usize,
    grid: &crate::plan::StepGrid,
) -> Result<OutputData> {
    let bytes = read_capped(path, DATA_FILE_CAP).map_err(|e| e.into_error(field, path))?;
    let rows: Vec<Vec<f64>> = match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => {
            use ndarray_npy::ReadNpyExt;
            let array = ndarray::Array2::<f64>::read_npy(bytes.as_slice()).map_err(|e| {
                Error::invalid(
                    field,
                    format!("{}: not a 2-D f64 NPY array: {e}", path.display()),
                )
            })?;
            array.outer_iter().map(|row| row.to_vec()).collect()
        }
        _ => read_csv_rows(field, path, &bytes)?,
    };
    data_from_rows(field, Some(path), &rows, m, grid)
}

/// The outputs of N + 1 rows [t_k, y_k] (m outputs each), checking the columns, the grid
/// t_k = k h and that every value is finite; errors name `field` (and `source`, the file the
/// rows came from, when they did).
pub fn data_from_rows(
    field: &str,
    source: Option<&Path>,
    rows: &[Vec<f64>],
    m: usize,
    grid: &crate::plan::StepGrid,
) -> Result<OutputData> {
    let source = source.map_or_else(String::new, |path| format!("{}: ", path.display()));
    let columns = 1 + m;
    let mut values = Vec::with_capacity(rows.len() * m);
    for (k, row) in rows.iter().enumerate() {
        if row.len() != columns {
            return Err(Error::invalid(
                field,
                format!(
                    "{source}row {k} has {} column(s), expected 1 + m = {columns} (t and one output per input)",
                    row.len()
                ),
            ));
        }
        if let Some(c) = row.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                field,
                format!(
                    "{source}row {k}, column {c} is {} (values must be finite)",
                    row[c]
                ),
            ));
        }
        let expected = k as f64 * grid.h;
        if (row[0] - expected).abs() > 1e-9 * grid.h.max(expected.abs()) {
            return Err(Error::invalid(
                field,
                format!(
                    "{source}row {k} has t = {}, but the grid needs t_k = k h = {expected} (scheme.h = {}): the data grid does not match h",
                    row[0], grid.h
                ),
            ));
        }
        values.extend_from_slice(&row[1..]);
    }
    if rows.len() != grid.steps + 1 {
        return Err(Error::invalid(
            field,
            format!(
                "{source}has {} row(s), the grid t_k = k h, k = 0…N has N + 1 = {} (scheme.h = {}, scheme.t_end = {})",
                rows.len(),
                grid.steps + 1,
                grid.h,
                grid.t_end()
            ),
        ));
    }
    Ok(OutputData {
        channels: m,
        values,
    })
}

/// The numeric rows of the CSV text `bytes` read from `path` (named by `field` in errors);
/// a first line that is not numeric is a header.
fn read_csv_rows(field: &str, path: &Path, bytes: &[u8]) -> Result<Vec<Vec<f64>>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record =
            record.map_err(|e| Error::invalid(field, format!("{}: {e}", path.display())))?;
        let parsed: std::result::Result<Vec<f64>, _> =
            record.iter().map(str::parse::<f64>).collect();
        match parsed {
            Ok(row) => rows.push(row),
            Err(_) if line == 0 => {}
            Err(_) => {
                let (column, text) = record
                    .iter()
                    .enumerate()
                    .find(|(_, v)| v.parse::<f64>().is_err())
                    .expect("a field failed to parse");
                return Err(Error::invalid(
                    field,
                    format!(
                        "{}: line {}, column {column}: {text:?} is not a number",
                        path.display(),
                        line + 1
                    ),
                ));
            }
        }
    }
    Ok(rows)
}
