//! `harbor slurm`: writes the sbatch scripts of a sharded run (`harbor::shard::slurm`),
//! checks the shard count against the config, and submits them with `sbatch`, each merge
//! after its array (`afterok`).

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::ValueEnum;
use harbor::io::Config;
use harbor::io::gradient_spec::GradientConfig;
use harbor::io::identify_spec::IdentifyConfig;
use harbor::kernels::Family;
use harbor::plan::MemoryBudget;
use harbor::shard::ShardSpec;
use harbor::shard::slurm::{ShardedCommand, SlurmJob};
use harbor::{Error, Result};

/// What the shards of `harbor slurm` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SlurmCommand {
    Simulate,
    Gradient,
    Identify,
}

/// The arguments of `harbor slurm`.
#[derive(clap::Args)]
pub struct SlurmArgs {
    /// The config (of `harbor simulate`, `gradient` or `identify`: --command).
    pub config: PathBuf,
    /// The command the shards run.
    #[arg(long, value_enum, default_value_t = SlurmCommand::Simulate)]
    pub command: SlurmCommand,
    /// Number of shards N (array tasks).
    #[arg(long)]
    pub shards: usize,
    /// Slurm partition (sbatch --partition).
    #[arg(long)]
    pub partition: Option<String>,
    /// GPUs per array task (sbatch --gpus-per-task); the shards then run on the GPU.
    #[arg(long)]
    pub gpus_per_task: Option<u32>,
    /// Time limit of each job (sbatch --time, e.g. 01:00:00).
    #[arg(long)]
    pub time: Option<String>,
    /// Backend of the shards (as `simulate --backend`); default: auto.
    #[arg(long)]
    pub backend: Option<String>,
    /// Work directory: the scripts, logs/, shards/ and the merged result/.
    #[arg(long)]
    pub out: PathBuf,
    /// Write the scripts without submitting them.
    #[arg(long)]
    pub dry_run: bool,
    #[arg(long = "set", value_name = "KEY=VALUE", help = crate::SET_HELP)]
    pub overrides: Vec<String>,
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| Error::io(path, e))
}

/// The shard counts of both stages, checked against the run: (N, descent shards).
fn shard_counts(args: &SlurmArgs) -> Result<(usize, usize)> {
    let n = args.shards;
    let check = |total: usize, what: &str| {
        ShardSpec::new("--shards", 0, n)?.members("--shards", total, what)?;
        Ok::<_, Error>(())
    };
    match args.command {
        SlurmCommand::Simulate => {
            let plan = Config::load(&args.config, &args.overrides)?.run_plan()?;
            check(plan.visit(MemberCount), "members")?;
            Ok((n, 0))
        }
        SlurmCommand::Gradient => {
            let problem = GradientConfig::load(&args.config, &args.overrides)?
                .problem_planned(&MemoryBudget::default(), |_| {})?;
            check(problem.plan.member_count(), "candidates")?;
            Ok((n, 0))
        }
        SlurmCommand::Identify => {
            let problem = IdentifyConfig::load(&args.config, &args.overrides)?
                .problem(&MemoryBudget::default())?;
            let mc = &problem.setup.monte_carlo;
            check(mc.candidates, "Monte-Carlo candidates")?;
            Ok((n, n.min(mc.keep.min(mc.candidates))))
        }
    }
}

struct MemberCount;

impl harbor::io::FamilyVisitor for MemberCount {
    type Output = usize;
    fn visit<F: Family>(self, family: &F) -> usize {
        family.member_count()
    }
}

pub fn slurm_command(args: SlurmArgs) -> Result<()> {
    let (shards, descent_shards) = shard_counts(&args)?;
    let mut run_args = Vec::new();
    if let Some(backend) = &args.backend {
        run_args.extend(["--backend".to_string(), backend.clone()]);
    }
    for o in &args.overrides {
        run_args.extend(["--set".to_string(), o.clone()]);
    }
    let harbor = std::env::current_exe().map_err(|e| Error::io(Path::new("harbor"), e))?;
    let out = absolute(&args.out)?;
    let job = SlurmJob {
        harbor,
        command: match args.command {
            SlurmCommand::Simulate => ShardedCommand::Simulate,
            SlurmCommand::Gradient => ShardedCommand::Gradient,
            SlurmCommand::Identify => ShardedCommand::Identify,
        },
        config: absolute(&args.config)?,
        shards,
        descent_shards,
        partition: args.partition,
        gpus_per_task: args.gpus_per_task,
        time: args.time,
        run_args,
        out: out.clone(),
    };
    let logs = out.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, e))?;
    let scripts = job.scripts();
    for script in &scripts {
        let path = out.join(&script.name);
        std::fs::write(&path, &script.text).map_err(|e| Error::io(&path, e))?;
    }
    let names: Vec<&str> = scripts.iter().map(|s| s.name.as_str()).collect();
    if args.dry_run {
        say!(
            "wrote {}/{{{}}} (not submitted: --dry-run)",
            out.display(),
            names.join(", ")
        );
        return Ok(());
    }
    let mut ids: Vec<String> = Vec::new();
    for script in &scripts {
        let mut sbatch = Command::new("sbatch");
        sbatch.arg("--parsable").current_dir(&out);
        if let Some(after) = script.after {
            sbatch.arg(format!("--dependency=afterok:{}", ids[after]));
        }
        sbatch.arg(out.join(&script.name));
        let output = sbatch.output().map_err(|e| {
            Error::invalid(
                "sbatch",
                format!("could not run sbatch ({e}): is this a Slurm submission host? --dry-run writes the scripts only"),
            )
        })?;
        if !output.status.success() {
            return Err(Error::invalid(
                "sbatch",
                format!(
                    "refused {} ({}): {}{}",
                    script.name,
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim(),
                    if ids.is_empty() {
                        String::new()
                    } else {
                        format!("; jobs already submitted: {}", ids.join(", "))
                    }
                ),
            ));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let id = stdout
            .trim()
            .split(';')
            .next()
            .unwrap_or_default()
            .to_string();
        say!("submitted {}: job {id}", script.name);
        ids.push(id);
    }
    say!("job ids: {}", ids.join(" "));
    say!("the merged result will be {}", out.join("result").display());
    Ok(())
}
