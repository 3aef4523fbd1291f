//! The `harbor` command line: collocation tables, simulations, studies.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use harbor::backend::gpu::context::adapter_selector;
use harbor::backend::gpu::{GpuContext, Precision, list_adapters};
use harbor::backend::{Backend, BackendKind, BackendRequest};
use harbor::bench::Workload;
use harbor::io::output::SimulationWriter;
use harbor::io::output_target::{OutputTarget, install_interrupt_cleanup};
use harbor::io::{Config, FamilyVisitor};
use harbor::kernels::Family;
use harbor::study::energy_order;
use harbor::tableau::{Composition, Family as TableauFamily, Tableau};
use harbor::{Error, Result};
use serde_json::json;

/// `println!` that ends quietly when stdout is closed (`harbor … | head -1`): results are
/// always written before anything is printed, so nothing is lost.
macro_rules! say {
    () => {
        say!("")
    };
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `print!` with the same quiet end as [`say!`].
macro_rules! say_inline {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

#[derive(Parser)]
#[command(
    name = "harbor",
    version,
    about = "Structure-preserving ensembles of port-Hamiltonian and contact-Hamiltonian systems"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a collocation Butcher table (c, a, b, order) with the mass matrix M of its
    /// Lagrange basis.
    Tableau {
        /// gauss (s = 1…8), lobatto-iiia or lobatto-iiib (s = 2…6).
        family: String,
        /// Number of stages s.
        stages: usize,
        /// Print JSON {"family","stages","order","c","b","a","m"} instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print a splitting composition (its coefficients γ_i, order and source), or list
    /// them all.
    Splitting {
        /// strang, triple-jump-4, triple-jump-6, triple-jump-8, suzuki-4, yoshida-6a,
        /// yoshida-6b, yoshida-6c, kahan-li-6, mclachlan-8, kahan-li-8.
        #[arg(required_unless_present = "list")]
        name: Option<String>,
        /// Print JSON {"name","order","coefficients"} instead of a table.
        #[arg(long)]
        json: bool,
        /// List every composition with its stages and order.
        #[arg(long, conflicts_with = "name")]
        list: bool,
    },
    /// Integrate the system of a config file and write summary.json plus NPY arrays.
    Simulate {
        config: PathBuf,
        /// Output directory (created; files in it are replaced only when the run succeeds).
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
        /// Keep the results when members become non-finite (NaN or ±inf): they are listed in
        /// summary.json under `nonfinite`. Without it such a run writes nothing and fails.
        #[arg(long)]
        keep_nonfinite: bool,
        /// Override a config value by dotted path, the value written as TOML
        /// (--set system.x0=[0.0,-1.0]); repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// List every GPU adapter with backend, type, driver, f64 support and limits.
    Devices {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Member-steps per second of the CPU path (all cores) and the GPU path side by side,
    /// with the GPU's achieved FLOP/s, over ensembles of mass–spring–damper chains (linear
    /// PH) or damped, forced Duffing chains (contact).
    Bench {
        /// Which family: linear-ph (mass–spring–damper chains, Gauss s = 2) or contact
        /// (damped, forced Duffing chains under --composition).
        #[arg(long, value_enum, default_value_t = BenchFamily::LinearPh)]
        family: BenchFamily,
        /// Composition of the contact cases.
        #[arg(long, default_value = "strang")]
        composition: String,
        /// Ensemble sizes N.
        #[arg(long, value_delimiter = ',', default_values_t = [1024usize, 16384, 131072, 1048576])]
        members: Vec<usize>,
        /// State sizes n of the linear-PH chains (even: n/2 masses), or degrees of freedom
        /// of the contact chains.
        #[arg(long, value_delimiter = ',', default_values_t = [2usize, 8, 32])]
        states: Vec<usize>,
        /// GPU precisions.
        #[arg(long, value_delimiter = ',', value_enum, default_values_t = [PrecisionArg::F32, PrecisionArg::F64])]
        precision: Vec<PrecisionArg>,
        /// Steps per case.
        #[arg(long, default_value_t = 100)]
        steps: usize,
        /// GPU adapter name substring (else HARBOR_ADAPTER, else the best one).
        #[arg(long)]
        adapter: Option<String>,
        /// Skip GPU cases whose step operators exceed this many GiB.
        #[arg(long, default_value_t = 2.0)]
        max_operator_gib: f64,
        /// Also write the rows as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Numerical studies.
    Study {
        #[command(subcommand)]
        study: Study,
    },
}

#[derive(Subcommand)]
enum Study {
    /// GPU f32 and f64 against the f64 CPU reference over long runs (t_end = N h for each
    /// N): final-state error, energy error and energy-balance residual. Writes
    /// precision_drift.csv.
    PrecisionDrift {
        config: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Step counts N.
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 1_000_000])]
        steps: Vec<usize>,
        /// GPU adapter name substring (else HARBOR_ADAPTER, else the best one).
        #[arg(long)]
        adapter: Option<String>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// The damped oscillator as a contact system over an ensemble of damping coefficients
    /// and initial conditions: mechanical energy of the contact integrator and of
    /// Störmer–Verlet with the damping as a force, against the exact solution. Writes
    /// contact_energy.csv and contact_energy.svg.
    ContactEnergy {
        config: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Relative errors of total supplied and stored energy over a sweep of h against the
    /// exact continuous energy change, with fitted convergence slopes (Kotyczka & Lefèvre,
    /// Fig. 3/5). Writes energy_order.csv, energy_order_slopes.csv, energy_order.svg.
    EnergyOrder {
        config: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    /// The best GPU adapter, else the CPU path.
    Auto,
    /// The GPU path; fails when no adapter is usable.
    Gpu,
    /// The f64 reference path on all CPU cores.
    Cpu,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BenchFamily {
    LinearPh,
    Contact,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PrecisionArg {
    F64,
    F32,
}

impl From<PrecisionArg> for Precision {
    fn from(p: PrecisionArg) -> Precision {
        match p {
            PrecisionArg::F64 => Precision::F64,
            PrecisionArg::F32 => Precision::F32,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    install_interrupt_cleanup();
    let outcome = match cli.command {
        Command::Tableau {
            family,
            stages,
            json,
        } => tableau(&family, stages, json),
        Command::Simulate {
            config,
            out,
            device,
            keep_nonfinite,
            overrides,
        } => simulate(&config, &out, &device, keep_nonfinite, &overrides),
        Command::Devices { json } => devices(json),
        Command::Splitting { name, json, list } => splitting(name.as_deref(), json, list),
        Command::Bench {
            family,
            composition,
            members,
            states,
            precision,
            steps,
            adapter,
            max_operator_gib,
            json,
        } => bench(
            family,
            &composition,
            &members,
            &states,
            &precision,
            steps,
            adapter.as_deref(),
            max_operator_gib,
            json.as_deref(),
        ),
        Command::Study {
            study:
                Study::PrecisionDrift {
                    config,
                    out,
                    steps,
                    adapter,
                    overrides,
                },
        } => study_precision_drift(&config, &out, &steps, adapter.as_deref(), &overrides),
        Command::Study {
            study:
                Study::EnergyOrder {
                    config,
                    out,
                    overrides,
                },
        } => study_energy_order(&config, &out, &overrides),
        Command::Study {
            study:
                Study::ContactEnergy {
                    config,
                    out,
                    device,
                    overrides,
                },
        } => study_contact_energy(&config, &out, &device, &overrides),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn tableau(family: &str, stages: usize, as_json: bool) -> Result<()> {
    let family = TableauFamily::parse(family).ok_or_else(|| {
        Error::invalid(
            "family",
            format!("unknown family {family:?}: expected gauss, lobatto-iiia or lobatto-iiib"),
        )
    })?;
    let t = Tableau::new(family, stages)?;
    if as_json {
        let doc = json!({
            "family": family.name(),
            "stages": t.stages,
            "order": t.order,
            "c": t.c,
            "b": t.b,
            "a": t.a_rows(),
            "m": t.m_rows(),
        });
        say!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("JSON values always serialise")
        );
        return Ok(());
    }
    say!(
        "{} with s = {}, order {}\n",
        family.name(),
        t.stages,
        t.order
    );
    let cell = |v: f64| format!("{:>24}", format!("{v:.17e}"));
    say!("{:>24} |{:>24}", "c", "a");
    for i in 0..t.stages {
        let row: String = (0..t.stages).map(|j| cell(t.a[(i, j)])).collect();
        say!("{} |{row}", cell(t.c[i]));
    }
    say!(
        "{:>24} |{}",
        "b",
        t.b.iter().map(|&v| cell(v)).collect::<String>()
    );
    say!("\nM (m_ij = ∫₀¹ ℓ_i ℓ_j)");
    for i in 0..t.stages {
        say!(
            "{:>24} |{}",
            "",
            (0..t.stages).map(|j| cell(t.m[(i, j)])).collect::<String>()
        );
    }
    Ok(())
}

fn splitting(name: Option<&str>, as_json: bool, list: bool) -> Result<()> {
    if list {
        let all = Composition::all();
        if as_json {
            let docs: Vec<_> = all.iter().map(Composition::to_json).collect();
            say!(
                "{}",
                serde_json::to_string_pretty(&docs).expect("JSON values always serialise")
            );
            return Ok(());
        }
        say!("{:<14} {:>6} {:>6}  source", "name", "stages", "order");
        for c in all {
            say!(
                "{:<14} {:>6} {:>6}  {}",
                c.name,
                c.stages(),
                c.order,
                c.source
            );
        }
        return Ok(());
    }
    let name = name.unwrap_or_default();
    let c = Composition::by_name(name).map_err(|e| match e {
        Error::Invalid { problem, .. } => Error::invalid("name", problem),
        other => other,
    })?;
    if as_json {
        say!(
            "{}",
            serde_json::to_string_pretty(&c.to_json()).expect("JSON values always serialise")
        );
        return Ok(());
    }
    say!(
        "{}: order {}, {} stage(s) of the Strang step S(γ_i h)\nsource: {}\n",
        c.name,
        c.order,
        c.stages(),
        c.source
    );
    for (i, g) in c.coefficients.iter().enumerate() {
        say!("γ_{:<3} {g:>25.17e}", i + 1);
    }
    Ok(())
}

/// Which backend, adapter and precision the user asked for.
#[derive(clap::Args)]
struct DeviceArgs {
    /// Where to run: auto picks the best GPU adapter, else the CPU path, and says which.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Pick the GPU adapter whose name contains this (case-insensitive); also read from
    /// the HARBOR_ADAPTER environment variable.
    #[arg(long)]
    adapter: Option<String>,
    /// GPU precision; default f64 where the adapter supports it, else f32.
    #[arg(long, value_enum)]
    precision: Option<PrecisionArg>,
}

impl DeviceArgs {
    /// Opens the backend asked for; `auto` (and `announce`) says on stderr which one runs
    /// and, after a fallback, why.
    fn open(&self, announce: bool) -> Result<Backend> {
        let request = BackendRequest {
            kind: match self.backend {
                BackendArg::Auto => BackendKind::Auto,
                BackendArg::Gpu => BackendKind::Gpu,
                BackendArg::Cpu => BackendKind::Cpu,
            },
            adapter: self.adapter.clone(),
            precision: self.precision.map(Precision::from),
        };
        let (backend, chosen) = Backend::open(&request)?;
        if announce || self.backend == BackendArg::Auto {
            match &chosen.fallback {
                Some(reason) => eprintln!("backend: {} — {reason}", chosen.description),
                None => eprintln!("backend: {}", chosen.description),
            }
        }
        Ok(backend)
    }
}

fn simulate(
    config_path: &Path,
    out: &Path,
    device: &DeviceArgs,
    keep_nonfinite: bool,
    overrides: &[String],
) -> Result<()> {
    let config = Config::load(config_path, overrides)?;
    let plan = config.run_plan()?;
    // The output location is checked (and its staging directory made) before any work.
    let target = OutputTarget::prepare(out)?;
    let backend = device.open(false)?;
    plan.visit(Simulate {
        out,
        target,
        backend: &backend,
        keep_nonfinite,
    })
}

/// `harbor simulate` for any family.
struct Simulate<'a> {
    out: &'a Path,
    target: OutputTarget,
    backend: &'a Backend,
    keep_nonfinite: bool,
}

impl FamilyVisitor for Simulate<'_> {
    type Output = Result<()>;

    fn visit<F: Family>(self, family: &F) -> Result<()> {
        let label = self.backend.label();
        let precision = self.backend.precision().name();
        // Results are written and moved into place before anything is printed.
        let mut writer = SimulationWriter::create(self.target.dir(), family)?;
        let started = Instant::now();
        self.backend.run_into(family, &mut writer)?;
        let seconds = started.elapsed().as_secs_f64();
        if let Some(&(member, step)) = writer.nonfinite.first() {
            let count = writer.nonfinite.len();
            let what = format!(
                "{count} of {} member(s) became non-finite (NaN or ±inf; first: member {member} after step {step})",
                writer.totals.len()
            );
            if !self.keep_nonfinite {
                return Err(Error::Numerical {
                    context: "simulation".into(),
                    problem: format!(
                        "{what}; nothing was written — rerun with --keep-nonfinite to keep the results, with those members listed in summary.json"
                    ),
                });
            }
            eprintln!("warning: {what}; they are listed in summary.json under `nonfinite`");
        }
        let report = simulation_report(family, &label, precision, &writer.totals, seconds);
        let files = writer.file_names();
        writer.finish(&label, precision, family, seconds)?;
        self.target.commit()?;
        say!("{report}");
        say!("wrote {}/{{{}}}", self.out.display(), files.join(", "));
        Ok(())
    }
}

#[expect(clippy::too_many_arguments, reason = "one per command-line option")]
fn bench(
    family: BenchFamily,
    composition: &str,
    members: &[usize],
    states: &[usize],
    precisions: &[PrecisionArg],
    steps: usize,
    adapter: Option<&str>,
    max_operator_gib: f64,
    json_path: Option<&Path>,
) -> Result<()> {
    if steps == 0 {
        return Err(Error::invalid("--steps", "must be ≥ 1, got 0"));
    }
    let workload = match family {
        BenchFamily::LinearPh => Workload::LinearPhChain,
        BenchFamily::Contact => Workload::ContactChain {
            composition: composition.to_string(),
        },
    };
    for &n in states {
        workload.check_size(n)?;
    }
    let selector = adapter_selector(adapter);
    let mut rows = Vec::new();
    let max_bytes = (max_operator_gib * (1u64 << 30) as f64) as u64;
    for &precision in precisions {
        let precision = Precision::from(precision);
        let gpu = match GpuContext::open(selector.as_deref(), Some(precision)) {
            Ok(ctx) => {
                eprintln!("GPU: {} ({})", ctx.adapter.describe(), precision.name());
                Some(ctx)
            }
            Err(e) => {
                eprintln!("GPU {} unavailable: {e}", precision.name());
                None
            }
        };
        for &n in states {
            for &count in members {
                let case = harbor::bench::BenchCase {
                    family: workload.family(),
                    members: count,
                    states: n,
                    precision,
                    steps,
                };
                let row = workload.measure(case, gpu.as_ref(), max_bytes)?;
                if rows.is_empty() {
                    say!("{}", harbor::bench::header());
                }
                say!("{}", harbor::bench::row(&row));
                rows.push(row);
            }
        }
    }
    say!(
        "rates in member-steps per second; GPU kernel = dispatch time only; CPU = f64 reference on {} threads",
        rayon::current_num_threads()
    );
    if let Some(path) = json_path {
        let text = serde_json::to_string_pretty(&rows).expect("rows serialise");
        std::fs::write(path, text + "\n").map_err(|e| Error::io(path, e))?;
    }
    Ok(())
}

fn devices(as_json: bool) -> Result<()> {
    let adapters = list_adapters();
    if as_json {
        say!(
            "{}",
            serde_json::to_string_pretty(&adapters).expect("JSON values always serialise")
        );
        return Ok(());
    }
    if adapters.is_empty() {
        say!(
            "no GPU adapters found (install a Vulkan driver; lavapipe runs on the CPU); harbor will use the CPU path"
        );
        return Ok(());
    }
    say!(
        "{:<3} {:<40} {:<8} {:<13} {:<28} {:>4} {:>16} {:>12} {:>10}",
        "#",
        "adapter",
        "backend",
        "type",
        "driver",
        "f64",
        "storage binding",
        "max buffer",
        "wg/dim"
    );
    for (i, a) in adapters.iter().enumerate() {
        say!(
            "{:<3} {:<40} {:<8} {:<13} {:<28} {:>4} {:>12} MiB {:>8} MiB {:>10}",
            i,
            a.name,
            a.backend,
            a.device_type,
            format!("{} {}", a.driver, a.driver_info).trim(),
            if a.shader_f64 { "yes" } else { "no" },
            a.max_storage_buffer_binding_size >> 20,
            a.max_buffer_size >> 20,
            a.max_compute_workgroups_per_dimension
        );
    }
    say!(
        "
auto picks #0; choose another with --adapter <substring> or HARBOR_ADAPTER"
    );
    Ok(())
}

/// The printed summary of a simulation: the run, its speed, and the first members' totals.
fn simulation_report<F: Family>(
    family: &F,
    backend: &str,
    precision: &str,
    totals: &[Vec<f64>],
    seconds: f64,
) -> String {
    use std::fmt::Write;
    let members = totals.len();
    let grid = family.grid();
    let description = family.describe();
    let sizes: Vec<String> = description
        .iter()
        .filter(|(_, v)| v.is_number())
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let order = description
        .get("scheme")
        .and_then(|s| s.get("order"))
        .map_or_else(String::new, |o| format!(" (order {o})"));
    let mut text = format!(
        "{} {}{order}, h = {}, {} steps, {members} member(s), {}\n",
        family.name(),
        family.method_label(),
        grid.h,
        grid.steps,
        sizes.join(", ")
    );
    let _ = writeln!(
        text,
        "backend {backend} ({precision}): {seconds:.3} s, {:.3e} member-steps/s",
        (members * grid.steps) as f64 / seconds.max(1e-9)
    );
    let _ = write!(text, "\n{:>6}", "member");
    for name in &family.record_spec().totals {
        let _ = write!(text, " {name:>24}");
    }
    text.push('\n');
    for (i, t) in totals.iter().enumerate().take(8) {
        let _ = write!(text, "{i:>6}");
        for v in t {
            let _ = write!(text, " {v:>24.16e}");
        }
        text.push('\n');
    }
    if members > 8 {
        let _ = writeln!(text, "   … {} more in summary.json", members - 8);
    }
    text.pop();
    text
}

fn study_precision_drift(
    config_path: &Path,
    out: &Path,
    steps: &[usize],
    adapter: Option<&str>,
    overrides: &[String],
) -> Result<()> {
    let config = Config::load(config_path, overrides)?;
    let target = OutputTarget::prepare(out)?;
    let selector = adapter_selector(adapter);
    let f32 = GpuContext::open(selector.as_deref(), Some(Precision::F32))?;
    eprintln!("GPU: {}", f32.adapter.describe());
    let f64 = if f32.adapter.shader_f64 {
        Some(GpuContext::open(selector.as_deref(), Some(Precision::F64))?)
    } else {
        None
    };
    let mut contexts = vec![&f32];
    contexts.extend(f64.as_ref());
    let rows = harbor::study::precision_drift::run_study(&config, steps, &contexts)?;
    target.write(|dir| {
        let path = dir.join("precision_drift.csv");
        std::fs::write(&path, harbor::study::precision_drift::csv(&rows))
            .map_err(|e| Error::io(&path, e))
    })?;
    say_inline!("{}", harbor::study::precision_drift::table(&rows));
    say!("\nwrote {}/precision_drift.csv", out.display());
    Ok(())
}

fn study_contact_energy(
    config_path: &Path,
    out: &Path,
    device: &DeviceArgs,
    overrides: &[String],
) -> Result<()> {
    let config = Config::load(config_path, overrides)?;
    let plan = config.contact_plan()?;
    let target = OutputTarget::prepare(out)?;
    let backend = device.open(true)?;
    let study = harbor::study::contact_energy::run(&plan, &backend)?;
    let title = format!(
        "damped oscillator: contact {} vs Verlet with damping as a force, h = {}",
        plan.method().label(),
        plan.grid().h
    );
    target.write(|dir| {
        let path = dir.join("contact_energy.csv");
        std::fs::write(&path, study.csv()).map_err(|e| Error::io(&path, e))?;
        harbor::io::plot::panels_svg(&dir.join("contact_energy.svg"), &title, &study.panels())
    })?;
    say_inline!("{}", study.table());
    say!(
        "\nwrote {}/{{contact_energy.csv, contact_energy.svg}}",
        out.display()
    );
    Ok(())
}

fn study_energy_order(config_path: &Path, out: &Path, overrides: &[String]) -> Result<()> {
    let config = Config::load(config_path, overrides)?;
    let target = OutputTarget::prepare(out)?;
    let study = energy_order::run(&config)?;
    let title = format!(
        "{}: relative energy errors (supplied ●, stored ×)",
        config_path
            .file_stem()
            .map_or_else(|| "study".into(), |s| s.to_string_lossy().into_owned())
    );
    target.write(|dir| {
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
        };
        write("energy_order.csv", study.points_csv())?;
        write("energy_order_slopes.csv", study.fits_csv())?;
        study.svg(&dir.join("energy_order.svg"), &title)
    })?;
    say_inline!("{}", study.table());
    say!(
        "\nwrote {}/{{energy_order.csv, energy_order_slopes.csv, energy_order.svg}}",
        out.display()
    );
    Ok(())
}
