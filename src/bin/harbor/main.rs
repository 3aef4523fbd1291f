//! The `harbor` command line: argument parsing and dispatch; the commands live beside this
//! file (simulate, studies, bench, tables) and print through [`say!`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use harbor::io::output_target::remove_on_interrupt;
use harbor::io::overrides::blame_override;
use interrupt::install_interrupt_cleanup;

/// `println!` through [`stdout::print`]: quiet when stdout is closed (`harbor … | head -1`),
/// an error at the end of the command when it fails otherwise (a full disk). Results are
/// always written before anything is printed, so a closed pipe loses nothing.
macro_rules! say {
    () => {
        say!("")
    };
    ($($arg:tt)*) => {
        $crate::stdout::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` through [`stdout::print`], as [`say!`].
macro_rules! say_inline {
    ($($arg:tt)*) => {
        $crate::stdout::print(format_args!($($arg)*))
    };
}

mod allocator;
mod bench;
mod device_args;
mod environment;
mod export;
mod gradient;
mod identify;
mod identify_noise;
mod interrupt;
mod keys;
mod merge;
mod notices;
mod plot;
mod progress;
mod runtime_dir;
mod shard_args;
mod simulate;
mod slurm;
mod stdout;
mod studies;
mod tables;

use bench::{BenchBackends, BenchTarget, bench};
use device_args::{DeviceArgs, PrecisionArg};
use shard_args::ShardArgs;
use simulate::simulate;
use studies::{
    study_contact_energy, study_contact_spin_orbit, study_energy_order, study_gradient_fd,
    study_precision_drift,
};
use tables::{devices, splitting, tableau};

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
    /// Lagrange basis, or both tables of the Lobatto IIIA/IIIB pair.
    Tableau {
        /// gauss (s = 1…8), lobatto-iiia or lobatto-iiib (s = 2…6), or lobatto-pair (s =
        /// 2…6: IIIA on positions with IIIB on momenta, as scheme.family = "lobatto-pair").
        family: String,
        /// Number of stages s.
        stages: usize,
        /// Print JSON {"family","stages","order","c","b","a","m"} instead of a table
        /// (lobatto-pair: "a_positions" and "a_momenta" instead of "a").
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
        /// The TOML config file: [system], [[input]], [scheme], [output], [ensemble]
        /// (README, "Configuration").
        config: PathBuf,
        #[arg(long, help = OUT_HELP)]
        out: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
        /// Keep the results when members become non-finite (NaN or ±inf): summary.json counts
        /// them under `nonfinite` (the first 1000 listed) and nonfinite_step.npy gives each
        /// member's first non-finite step. Without it such a run writes nothing and fails.
        #[arg(long)]
        keep_nonfinite: bool,
        #[command(flatten)]
        shard: ShardArgs,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
    /// Merge the output directories of a sharded run (`--shard I/N`, every shard once) into
    /// exactly the directory the unsharded run writes: every array and every number of
    /// summary.json bit for bit (wall time: the shards' added up); a gradient batch's
    /// gradient.json byte for byte; an identification's candidate or descent stage.
    /// Refuses shards of different configs, versions or backends, missing or duplicate
    /// shards and incomplete directories, writing nothing.
    Merge {
        /// The shard directories, in any order.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        #[arg(long, help = OUT_HELP)]
        out: PathBuf,
    },
    /// Write (and submit) a Slurm job array that runs a config in N shards, with a merge
    /// job that starts when every shard succeeded (afterok); an identification gets two
    /// arrays (Monte-Carlo candidates, then the descents) each followed by its merge.
    /// Prints the job ids. The merged result lands in <out>/result.
    Slurm(slurm::SlurmArgs),
    /// Plot the paths of a `simulate` run directory (path.npy or trajectory.npy with
    /// times.npy): the coordinates of the first members against t, and the path in the
    /// plane (two coordinates) or projected orthographically (three or more, with the
    /// sphere's silhouette when the path lies on one). Writes an SVG.
    Plot {
        /// The run directory written by `harbor simulate`.
        dir: PathBuf,
        /// The SVG file to write (default: <dir>/path.svg).
        #[arg(long)]
        out: Option<PathBuf>,
        /// How many members to draw (the first ones).
        #[arg(long, default_value_t = 4)]
        members: usize,
    },
    /// Write a linear-PH config's members (J, R, Q, B, x0), stage inputs, one-step
    /// operators Δ and scheme.json as NPY files, for programs outside harbor.
    ExportMembers {
        /// The TOML config of a linear-PH or mechanical system (README, "Configuration").
        config: PathBuf,
        #[arg(long, help = OUT_HELP)]
        out: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
    /// Cost and exact discrete-adjoint gradient of a candidate model (or a batch) against
    /// input/output data; writes gradient.json.
    Gradient {
        /// The TOML problem: [[input]], [scheme], [data], [cost], [candidate], optionally
        /// [candidates] and [gradient] (README, "Gradients").
        problem: PathBuf,
        #[arg(long, help = OUT_HELP)]
        out: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
        #[command(flatten)]
        shard: ShardArgs,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
    /// Identify a port-Hamiltonian model (J, R, Q, B, x0) from input/output data:
    /// Monte-Carlo initialisation, then Riemannian conjugate gradients from the best
    /// candidates; writes identification.json, model/*.npy, cost histories, outputs, plots.
    Identify {
        /// The TOML config: [[input]], [[test_input]], [scheme], [data], [test_data],
        /// [cost], [model], [monte_carlo], [optimizer] (README, "Identification").
        config: PathBuf,
        #[arg(long, help = OUT_HELP)]
        out: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
        /// Run one stage only, for a cluster: `candidates` (the Monte-Carlo candidates of
        /// --shard, the best kept) or `descent` (the descents from --from, the merge of the
        /// candidate shards, of --shard's starts); `harbor merge` joins each stage's shards,
        /// the descent's into what a whole run writes.
        #[arg(long, value_enum)]
        stage: Option<identify::Stage>,
        /// The merged candidate stage the descent stage starts from.
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        #[command(flatten)]
        shard: ShardArgs,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
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
    /// PH), damped, forced Duffing chains (contact) or damped, driven pendulum chains
    /// written as expressions (port-hamiltonian).
    Bench {
        /// Which family: linear-ph (mass–spring–damper chains, Gauss s = 2), contact
        /// (damped, forced Duffing chains under --composition) or port-hamiltonian (damped,
        /// driven pendulum chains written as expressions, Gauss s = 2).
        #[arg(long, default_value = "linear-ph", value_parser = clap::builder::PossibleValuesParser::new(harbor::families::FamilyWorkload::FAMILIES))]
        family: String,
        /// Composition of the contact cases.
        #[arg(long, default_value = "strang")]
        composition: String,
        /// Ensemble sizes N, space- or comma-separated.
        #[arg(long, num_args = 1.., value_delimiter = ',', default_values_t = [1024usize, 16384, 131072, 1048576])]
        members: Vec<usize>,
        /// State sizes n of the linear-PH chains (even: n/2 masses), or degrees of freedom
        /// of the contact and pendulum chains; space- or comma-separated.
        #[arg(long, num_args = 1.., value_delimiter = ',', default_values_t = [2usize, 8, 32])]
        states: Vec<usize>,
        /// GPU precisions, space- or comma-separated.
        #[arg(long, num_args = 1.., value_delimiter = ',', value_enum, default_values_t = [PrecisionArg::F32, PrecisionArg::F64])]
        precision: Vec<PrecisionArg>,
        /// Do not measure the reference integrator (the slowest backend).
        #[arg(long)]
        no_reference: bool,
        /// Do not measure any GPU adapter.
        #[arg(long)]
        no_gpu: bool,
        /// Steps per case.
        #[arg(long, default_value_t = 100)]
        steps: usize,
        /// What linear-PH members record: everything (the energy balance, outputs and
        /// state at the last step), or the final state only.
        #[arg(long, value_enum, default_value_t = RecordArg::All)]
        record: RecordArg,
        /// GPU adapter name substring (else HARBOR_ADAPTER, else the best one).
        #[arg(long)]
        adapter: Option<String>,
        /// Skip GPU cases whose step operators exceed this many GiB.
        #[arg(long, default_value_t = 2.0)]
        max_operator_gib: f64,
        /// Also write the rows (each with the machine's load) as JSON to this file,
        /// replacing it if it exists (its path is printed).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Measure this linear-PH configuration as `harbor simulate` runs it (its members,
        /// steps and [output] switches) instead of the chains; --members, --states, --steps
        /// and --record do not apply.
        #[arg(long, conflicts_with_all = ["members", "states", "steps", "record", "family"])]
        config: Option<PathBuf>,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP, requires = "config")]
        overrides: Vec<String>,
    },
    /// Every key of a kind of config (type, default, meaning), or a starter config.
    Config {
        #[command(subcommand)]
        command: keys::ConfigCommand,
    },
    /// Numerical studies.
    Study {
        #[command(subcommand)]
        study: Study,
    },
}

/// `harbor bench --record`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RecordArg {
    All,
    FinalState,
}

impl RecordArg {
    fn recording(self) -> harbor::plan::Recording {
        match self {
            RecordArg::All => harbor::plan::Recording::default(),
            RecordArg::FinalState => harbor::plan::Recording::FINAL_STATE,
        }
    }
}

#[derive(Subcommand)]
enum Study {
    /// GPU f32 and f64 against the f64 CPU reference over long runs (t_end = N h for each
    /// N): final-state error, energy error and energy-balance residual. Writes
    /// precision_drift.csv.
    PrecisionDrift {
        /// The TOML config of a linear-PH or mechanical system (README, "Configuration").
        config: PathBuf,
        #[arg(long, help = STUDY_OUT_HELP)]
        out: PathBuf,
        /// Step counts N, space- or comma-separated.
        #[arg(long, num_args = 1.., value_delimiter = ',', default_values_t = [10_000usize, 1_000_000])]
        steps: Vec<usize>,
        /// GPU adapter name substring (else HARBOR_ADAPTER, else the best one).
        #[arg(long)]
        adapter: Option<String>,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
    /// The damped oscillator as a contact system over an ensemble of damping coefficients
    /// and initial conditions: mechanical energy of the contact integrator and of
    /// Störmer–Verlet with the damping as a force, against the exact solution. Writes
    /// contact_energy.csv and contact_energy.svg.
    ContactEnergy {
        /// The TOML config of a contact system with constant damping (README,
        /// "Configuration").
        config: PathBuf,
        #[arg(long, help = STUDY_OUT_HELP)]
        out: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
    /// `harbor identify` once per output-noise level σ (data.noise.sigma), harbor's numbers
    /// beside the paper's ([[paper]] tables with a sigma; the seed's §5.3 Tables 1 and 2 in
    /// examples/identify_synthetic_noise.toml). Writes sigma_<σ>/ (each run's files),
    /// noise_table.csv, noise_cost.svg and noise_cross_validation.svg.
    IdentifyNoise {
        /// The TOML config of an identification (`harbor identify`).
        config: PathBuf,
        #[arg(long, help = STUDY_OUT_HELP)]
        out: PathBuf,
        /// Noise levels σ, comma-separated (default: the sigmas of the config's [[paper]]
        /// tables).
        #[arg(long, num_args = 1.., value_delimiter = ',')]
        sigma: Vec<f64>,
        #[command(flatten)]
        device: DeviceArgs,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
    /// The seed's finite-difference gradient check (Günther, Jacob & Totzeck 2023, §5.1) on
    /// a `harbor gradient` config's candidate: harbor's exact directional derivatives
    /// against forward differences per part, all at once, and central differences, over a
    /// sweep of t, the seed's relative differences at t = 1e-3 beside. Writes
    /// gradient_fd.csv.
    GradientFd {
        /// The TOML config of `harbor gradient` (its first candidate is checked).
        config: PathBuf,
        #[arg(long, help = STUDY_OUT_HELP)]
        out: PathBuf,
        /// Steps t of the differences, comma-separated.
        #[arg(long, num_args = 1.., value_delimiter = ',', default_values_t = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8])]
        steps: Vec<f64>,
        /// Seed of the random directions.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[command(flatten)]
        device: DeviceArgs,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
    /// Capture into spin–orbit resonance (Vermeeren, Bravetti & Seri's slides): the spin
    /// rate averaged over each orbit and the Poincaré section at pericentre of every member
    /// of a contact config with a spin-orbit term sampled once per orbit; the resonance each
    /// member ends in. Writes contact_spin_orbit.csv, contact_spin_orbit_section.csv and
    /// contact_spin_orbit.svg.
    ContactSpinOrbit {
        /// The TOML config of a contact system with a spin-orbit term and h · output.every
        /// = 2π (examples/contact_spin_orbit_slides.toml).
        config: PathBuf,
        #[arg(long, help = STUDY_OUT_HELP)]
        out: PathBuf,
        #[command(flatten)]
        device: DeviceArgs,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
    /// Relative errors of total supplied and stored energy over a sweep of h against the
    /// exact continuous energy change, with fitted convergence slopes (Kotyczka & Lefèvre,
    /// Fig. 3/5). Runs on the CPU (the f64 reference path on all cores). Writes
    /// energy_order.csv, energy_order_slopes.csv, energy_order.svg.
    EnergyOrder {
        /// The TOML config of a linear-PH or mechanical system; its [study] table sets the
        /// schemes and step sizes (README, "Configuration").
        config: PathBuf,
        #[arg(long, help = STUDY_OUT_HELP)]
        out: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE", help = SET_HELP)]
        overrides: Vec<String>,
    },
}

impl Command {
    /// The command's `--set` arguments, named in the errors they cause.
    fn overrides(&self) -> &[String] {
        match self {
            Command::Simulate { overrides, .. }
            | Command::ExportMembers { overrides, .. }
            | Command::Gradient { overrides, .. }
            | Command::Identify { overrides, .. }
            | Command::Bench { overrides, .. }
            | Command::Slurm(slurm::SlurmArgs { overrides, .. })
            | Command::Study {
                study:
                    Study::PrecisionDrift { overrides, .. }
                    | Study::ContactEnergy { overrides, .. }
                    | Study::ContactSpinOrbit { overrides, .. }
                    | Study::EnergyOrder { overrides, .. }
                    | Study::IdentifyNoise { overrides, .. }
                    | Study::GradientFd { overrides, .. },
            } => overrides,
            _ => &[],
        }
    }
}

/// Help of every `--set`.
const SET_HELP: &str = "Override a config value by dotted path, the value written as TOML (--set system.x0=[0.0,-1.0], --set scheme.family=gauss); repeatable";

/// Help of the `--out` of every command that writes a directory: what `OutputTarget::prepare`
/// accepts.
const OUT_HELP: &str = "Output directory: a new path, an empty directory or an earlier harbor output, replaced only when the run succeeds (anything else there is refused, never replaced)";

/// Help of every study's `--out`, with the rule of [`OUT_HELP`].
const STUDY_OUT_HELP: &str = "Output directory for the study's files: a new path, an empty directory or an earlier harbor output, replaced only when the study succeeds (anything else there is refused, never replaced)";

fn main() -> ExitCode {
    allocator::keep_freed_memory();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    notices::print_library_notices();
    let runtime_dir = runtime_dir::quiet_wayland_probe();
    if let Err(e) = install_interrupt_cleanup() {
        eprintln!("error: cannot install the interrupt handler: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(dir) = &runtime_dir {
        remove_on_interrupt(dir.path());
    }
    // The thread pool's threads start here, while the configuration and the plan are read,
    // rather than in the first run's first block; after the environment is written
    // (`quiet_wayland_probe`), which must happen before any thread starts.
    let _ = rayon::current_num_threads();
    let overrides = cli.command.overrides().to_vec();
    let outcome = environment::select_simd_level().and_then(|()| match cli.command {
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
            shard,
            overrides,
        } => simulate(&config, &out, &device, keep_nonfinite, &shard, &overrides),
        Command::Merge { shards, out } => merge::merge_command(&shards, &out),
        Command::Slurm(args) => slurm::slurm_command(args),
        Command::ExportMembers {
            config,
            out,
            overrides,
        } => export::export_members(&config, &out, &overrides),
        Command::Gradient {
            problem,
            out,
            device,
            shard,
            overrides,
        } => gradient::gradient(&problem, &out, &device, &shard, &overrides),
        Command::Identify {
            config,
            out,
            device,
            stage,
            from,
            shard,
            overrides,
        } => match stage {
            None => identify::identify_command(
                &config,
                &out,
                &device,
                &shard,
                from.as_deref(),
                &overrides,
            ),
            Some(stage) => identify::identify_stage(
                &config,
                &out,
                &device,
                stage,
                from.as_deref(),
                &shard,
                &overrides,
            ),
        },
        Command::Devices { json } => devices(json),
        Command::Config { command } => keys::config(command),
        Command::Splitting { name, json, list } => splitting(name.as_deref(), json, list),
        Command::Bench {
            family,
            composition,
            members,
            states,
            precision,
            steps,
            record,
            adapter,
            max_operator_gib,
            json,
            config,
            overrides,
            no_reference,
            no_gpu,
        } => bench(
            match &config {
                Some(path) => BenchTarget::Config {
                    path,
                    overrides: &overrides,
                },
                None => BenchTarget::Chains {
                    family: &family,
                    composition: &composition,
                    members: &members,
                    states: &states,
                    steps,
                    recording: record.recording(),
                },
            },
            BenchBackends {
                reference: !no_reference,
                precisions: if no_gpu { &[] } else { &precision },
            },
            adapter.as_deref(),
            max_operator_gib,
            json.as_deref(),
        ),
        Command::Plot { dir, out, members } => plot::plot_paths(&dir, out.as_deref(), members),
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
        Command::Study {
            study:
                Study::IdentifyNoise {
                    config,
                    out,
                    sigma,
                    device,
                    overrides,
                },
        } => identify_noise::study_identify_noise(&config, &out, &sigma, &device, &overrides),
        Command::Study {
            study:
                Study::GradientFd {
                    config,
                    out,
                    steps,
                    seed,
                    device,
                    overrides,
                },
        } => study_gradient_fd(&config, &out, &steps, seed, &device, &overrides),
        Command::Study {
            study:
                Study::ContactSpinOrbit {
                    config,
                    out,
                    device,
                    overrides,
                },
        } => study_contact_spin_orbit(&config, &out, &device, &overrides),
    });
    let printed = stdout::finish();
    let mut code = 0;
    if let Err(e) = outcome {
        eprintln!("error: {}", blame_override(e, &overrides));
        code = 1;
    }
    if let Err(e) = printed {
        eprintln!("error: stdout: {e}; what this command printed is incomplete");
        code = 1;
    }
    drop(runtime_dir);
    // An interrupt that came first keeps its own exit code (130, 143, 129).
    harbor::io::interrupt::exit_unless_interrupted(code)
}

/// Prints clap's help, version or usage error (help and version on stdout, which fails as
/// [`stdout::finish`] says) and returns clap's exit code.
fn clap_exit(e: &clap::Error) -> ExitCode {
    let printed = e.print().and_then(|()| {
        use std::io::Write as _;
        std::io::stdout().lock().flush()
    });
    match printed {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: stdout: {e}; what this command printed is incomplete");
            ExitCode::FAILURE
        }
        _ => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
    }
}
