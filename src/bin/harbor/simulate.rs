//! `harbor simulate`: any family's run, written before anything is printed.

use std::path::Path;
use std::time::Instant;

use harbor::backend::Backend;
use harbor::io::output::SimulationWriter;
use harbor::io::summary::RunLabels;

use crate::progress::member_steps_bar;
use harbor::io::output_target::OutputTarget;
use harbor::io::resources::RunEstimate;
use harbor::io::{Config, FamilyVisitor};
use harbor::kernels::Family;
use harbor::plan::MemoryBudget;
use harbor::{Error, Result};

use harbor::shard::{
    MemberRange, MemberSpan, ResolvedConfig, RunRecord, ShardKind, ShardManifest, ShardSpec,
};

use crate::DeviceArgs;
use crate::shard_args::ShardArgs;

pub fn simulate(
    config_path: &Path,
    out: &Path,
    device: &DeviceArgs,
    keep_nonfinite: bool,
    shard: &ShardArgs,
    overrides: &[String],
) -> Result<()> {
    let budget = device.budget()?;
    let shard = match shard.spec()? {
        Some(spec) => Some((spec, ResolvedConfig::load(config_path, overrides)?)),
        None => None,
    };
    let config = match &shard {
        Some((_, resolved)) => Config::from_table(
            resolved.table.clone(),
            &resolved.origin,
            resolved.base_dir.clone(),
        )?,
        None => Config::load(config_path, overrides)?,
    };
    let plan = config.run_plan()?;
    // The output location is checked (and its staging directory made) before any work.
    let target = OutputTarget::prepare(out)?;
    let backend = device.open(false)?;
    plan.visit(Simulate {
        out,
        target,
        backend,
        auto: device.is_auto(),
        budget,
        keep_nonfinite,
        shard,
    })
}

/// `harbor simulate` for any family.
struct Simulate<'a> {
    out: &'a Path,
    target: OutputTarget,
    backend: Backend,
    /// Whether `--backend auto` chose the backend (it may then change it for the family).
    auto: bool,
    budget: MemoryBudget,
    keep_nonfinite: bool,
    /// The shard this run is, with the config as it recorded it.
    shard: Option<(ShardSpec, ResolvedConfig)>,
}

impl FamilyVisitor for Simulate<'_> {
    type Output = Result<()>;

    fn visit<F: Family>(mut self, family: &F) -> Result<()> {
        match self.shard.take() {
            None => self.run(family, None),
            Some((spec, config)) => {
                let total = family.member_count();
                let range = spec.members("--shard", total, "members")?;
                let span = MemberSpan {
                    first: range.start,
                    count: range.len(),
                    total,
                };
                self.run(
                    &MemberRange::new(family, range)?,
                    Some((spec, config, span)),
                )
            }
        }
    }
}

impl Simulate<'_> {
    /// Runs `family` (the whole plan, or a shard's members with its manifest to write).
    fn run<F: Family>(
        self,
        family: &F,
        shard: Option<(ShardSpec, ResolvedConfig, MemberSpan)>,
    ) -> Result<()> {
        let (backend, reason) = self.backend.for_family(family, self.auto);
        if let Some(reason) = reason {
            eprintln!("{reason}");
        }
        let backend = &backend;
        let label = backend.label();
        let precision = backend.precision().name();
        // What the run needs, against what the machine has, before any work.
        let estimate = RunEstimate::measure(
            backend.footprint(family, &self.budget)?,
            family,
            self.budget,
            self.target.dir(),
        );
        estimate.check()?;
        if estimate.is_large() {
            eprintln!("plan: {}", estimate.describe());
        }
        // Results are written and moved into place before anything is printed.
        let mut writer = SimulationWriter::create(self.target.dir(), family)?;
        let (bar, observer) =
            member_steps_bar((family.member_count() * family.grid().steps) as u64);
        writer.on_progress(observer);
        let started = Instant::now();
        let run = backend.run_into_within(family, &self.budget, &mut writer);
        bar.finish_and_clear();
        run?;
        let seconds = started.elapsed().as_secs_f64();
        if let Some(what) = writer.nonfinite_description() {
            if !self.keep_nonfinite {
                return Err(Error::Numerical {
                    context: "simulation".into(),
                    problem: format!(
                        "{what}; nothing was written — rerun with --keep-nonfinite to keep the results (summary.json counts those members, nonfinite_step.npy flags each)"
                    ),
                });
            }
            eprintln!(
                "warning: {what}; they are counted in summary.json under `nonfinite`, each member's status is in nonfinite_step.npy"
            );
        }
        let report = simulation_report(
            family,
            &label,
            precision,
            writer.members_received(),
            writer.first_totals(),
            seconds,
        );
        let mut files = writer.file_names();
        if shard.is_some() {
            files.push("shard.json".into());
        }
        let labels = RunLabels {
            backend: &label,
            engine: backend.engine(family),
            precision,
            seconds,
        };
        writer.finish(&labels, family)?;
        if let Some((spec, config, span)) = shard {
            let run = RunRecord {
                backend: label.clone(),
                engine: labels.engine.into(),
                precision: precision.into(),
                seconds,
            };
            ShardManifest::new(ShardKind::Simulate, &config, spec, span, run)
                .write(self.target.dir())?;
        }
        self.target.commit()?;
        say!("{report}");
        say!("wrote {}/{{{}}}", self.out.display(), files.join(", "));
        Ok(())
    }
}

/// The printed summary of a simulation: the run, its speed, and the first members' totals.
fn simulation_report<F: Family>(
    family: &F,
    backend: &str,
    precision: &str,
    members: usize,
    first_totals: &[Vec<f64>],
    seconds: f64,
) -> String {
    use std::fmt::Write;
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
    if family.record_spec().totals.is_empty() {
        text.pop();
        return text;
    }
    let _ = write!(text, "\n{:>6}", "member");
    for name in &family.record_spec().totals {
        let _ = write!(text, " {name:>24}");
    }
    text.push('\n');
    for (i, t) in first_totals.iter().enumerate() {
        let _ = write!(text, "{i:>6}");
        for v in t {
            let _ = write!(text, " {v:>24.16e}");
        }
        text.push('\n');
    }
    if members > first_totals.len() {
        let _ = writeln!(
            text,
            "   … {} more in totals.npy (statistics in summary.json)",
            members - first_totals.len()
        );
    }
    text.pop();
    text
}
