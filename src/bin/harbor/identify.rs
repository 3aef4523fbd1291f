//! `harbor identify`: Monte-Carlo initialisation and Riemannian conjugate gradients on a
//! port-Hamiltonian model of input/output data; writes identification.json, the model as
//! NPY, the cost histories, the outputs and plots, then prints a summary table.

use std::path::Path;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use harbor::Result;
use harbor::identify::{Status, identify};
use harbor::io::identify_output::IdentifyReport;
use harbor::io::identify_spec::IdentifyConfig;
use harbor::io::output_target::OutputTarget;
use harbor::kernels::Family;

use harbor::identify::staged;
use harbor::shard::{MemberSpan, ResolvedConfig, RunRecord, ShardKind, ShardManifest, ShardSpec};

use crate::DeviceArgs;
use crate::gradient::print_large_plan;
use crate::shard_args::ShardArgs;

pub fn identify_command(
    config_path: &Path,
    out: &Path,
    device: &DeviceArgs,
    shard: &ShardArgs,
    from: Option<&Path>,
    overrides: &[String],
) -> Result<()> {
    if shard.shard.is_some() || from.is_some() {
        return Err(harbor::Error::invalid(
            if from.is_some() { "--from" } else { "--shard" },
            "applies to one stage of an identification: add --stage candidates or --stage descent",
        ));
    }
    let budget = device.budget()?;
    let mut config = IdentifyConfig::load(config_path, overrides)?;
    if let Some(limit) = crate::environment::work_limit()? {
        config = config.with_work_limit("HARBOR_WORK_LIMIT", limit)?;
    }
    let config = config.problem_planned(&budget, print_large_plan)?;
    let problem = &config.problem;
    let setup = &config.setup;
    let target = OutputTarget::prepare(out)?;
    let backend = device.open_for(problem)?;
    let grid = problem.grid();
    let (n, m) = (problem.model.states(), problem.model.inputs_count());
    say!(
        "identify: n = {n}, m = {m}, fit {}, {}, h = {}, {} steps; {} Monte-Carlo candidates, best {} kept; backend {} ({})",
        setup.fit.names().join(", "),
        problem.method_label(),
        grid.h,
        grid.steps,
        setup.monte_carlo.candidates,
        setup.monte_carlo.keep,
        backend.label(),
        backend.precision().name()
    );
    let bar = ProgressBar::new(setup.monte_carlo.candidates as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} {bar:30} {pos}/{len} {msg} [{elapsed}]")
            .expect("the template is valid"),
    );
    bar.set_prefix("monte carlo");
    let started = Instant::now();
    let mut descending = false;
    let outcome = identify(&backend, &budget, problem, setup, &mut |status| {
        match status {
            Status::MonteCarlo {
                evaluated,
                best_cost,
                ..
            } => {
                bar.set_position(evaluated as u64);
                bar.set_message(format!("best cost {best_cost:.4e}"));
            }
            Status::Descent(progress) => {
                if !descending {
                    descending = true;
                    bar.set_prefix("descent");
                    bar.set_length(setup.optimizer.max_iterations as u64);
                }
                bar.set_position(progress.iterations as u64);
                bar.set_message(format!(
                    "best cost {:.4e}, {} start(s) active, {} evaluations",
                    progress.best_cost, progress.active, progress.evaluations
                ));
            }
        }
        Ok(())
    });
    bar.finish_and_clear();
    let outcome = outcome?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let report = IdentifyReport::new(&config, outcome, wall_seconds, backend.label())?;
    let mut files = Vec::new();
    target.write(|dir| {
        files = report.write(dir)?;
        Ok(())
    })?;
    print_summary(&report);
    if let Some(table) = report.paper_table() {
        say!();
        say_inline!("{table}");
    }
    say!("wrote {}/{{{}}}", out.display(), files.join(", "));
    Ok(())
}

fn print_summary(report: &IdentifyReport) {
    let outcome = &report.outcome;
    say!();
    say!(
        "{:>5} {:>9} {:>13} {:>13} {:>10}  stop",
        "start",
        "candidate",
        "cost initial",
        "cost final",
        "iterations"
    );
    for (i, s) in outcome.starts.iter().enumerate() {
        say!(
            "{:>5} {:>9} {:>13.4e} {:>13.4e} {:>10}  {}{}",
            i,
            outcome
                .candidate(i)
                .map_or_else(|| format!("guess {i}"), |c| c.to_string()),
            s.cost_initial,
            s.cost,
            s.iterations,
            s.stop,
            if i == outcome.best { "  ← best" } else { "" }
        );
    }
    let best = outcome.best_start();
    say!();
    say!(
        "cost {:.4e} → {:.4e} ({}), relative max-norm output error {:.4e}",
        best.cost_initial,
        best.cost,
        cost_change(best.cost_initial, best.cost),
        report.training.error.relative_max
    );
    say!(
        "training outputs: L2 error {:.4e}, max error {:.4e}",
        report.training.error.l2,
        report.training.error.max
    );
    say!(
        "‖y − y_ref‖∞ ({}): first {:.4e}, last {:.4e}",
        if report.max_error.noise_free {
            "y_ref noise-free"
        } else {
            "y_ref = data"
        },
        report.max_error.initial,
        report.max_error.last
    );
    if let Some(cv) = &report.cross_validation {
        say!(
            "cross-validation: L2 error {:.4e}, max error {:.4e}",
            cv.error.l2,
            cv.error.max
        );
    }
    say!(
        "{} cost+gradient evaluations ({} Monte-Carlo, {} initial guess(es), {} descent) in {:.2} s on {}",
        outcome.evaluations(),
        outcome.monte_carlo_evaluations,
        outcome.guesses,
        outcome.descent_evaluations,
        report.wall_seconds,
        report.backend
    );
}

/// How the descent changed the cost, readable at any scale: `reduced to 3.2e-9 of the
/// first` (the ratio final/first), rather than a percentage that reads 100.0000 % for
/// every large reduction.
fn cost_change(first: f64, last: f64) -> String {
    if last == first {
        return "unchanged".into();
    }
    let ratio = last / first;
    if !(first > 0.0 && ratio.is_finite()) {
        return format!("no ratio: the first cost is {first:.1e}");
    }
    if ratio < 1.0 {
        format!("reduced to {ratio:.2e} of the first")
    } else {
        format!("raised to {ratio:.2e} times the first")
    }
}

#[cfg(test)]
mod tests {
    use super::cost_change;

    #[test]
    fn cost_change_is_the_ratio_at_any_scale() {
        assert_eq!(cost_change(2.0, 1.0), "reduced to 5.00e-1 of the first");
        assert_eq!(
            cost_change(4.1e-2, 1.312e-10),
            "reduced to 3.20e-9 of the first"
        );
        assert_eq!(
            cost_change(1e-300, 1e-310),
            "reduced to 1.00e-10 of the first"
        );
        assert_eq!(cost_change(0.0, 0.0), "unchanged");
        assert_eq!(cost_change(1.0, 1.0), "unchanged");
        assert_eq!(cost_change(0.0, 1.0), "no ratio: the first cost is 0.0e0");
        assert_eq!(cost_change(1.0, 2.0), "raised to 2.00e0 times the first");
    }
}

/// One stage of a sharded identification (`--stage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Stage {
    /// The Monte-Carlo candidates of the shard, the best `monte_carlo.keep` kept.
    Candidates,
    /// The descents from the shard's starts of the merged candidates (--from).
    Descent,
}

/// `harbor identify --stage …`: one stage of shard `--shard` (default: the whole stage as
/// shard 0/1), written with its shard.json for `harbor merge`.
pub fn identify_stage(
    config_path: &Path,
    out: &Path,
    device: &DeviceArgs,
    stage: Stage,
    from: Option<&Path>,
    shard: &ShardArgs,
    overrides: &[String],
) -> Result<()> {
    let budget = device.budget()?;
    let spec = shard.spec()?.unwrap_or(ShardSpec { index: 0, count: 1 });
    let resolved = ResolvedConfig::load(config_path, overrides)?;
    let mut config = IdentifyConfig::from_table(
        resolved.table.clone(),
        &resolved.origin,
        resolved.base_dir.clone(),
    )?;
    if let Some(limit) = crate::environment::work_limit()? {
        config = config.with_work_limit("HARBOR_WORK_LIMIT", limit)?;
    }
    let problem = config.problem_planned(&budget, print_large_plan)?;
    let kept = match (stage, from) {
        (Stage::Descent, Some(from)) => Some(staged::read_kept(from, &resolved, &problem)?),
        (Stage::Descent, None) => {
            return Err(harbor::Error::invalid(
                "--from",
                "--stage descent starts from the merged candidate stage: give --from <dir>",
            ));
        }
        (Stage::Candidates, Some(_)) => {
            return Err(harbor::Error::invalid(
                "--from",
                "applies to --stage descent only",
            ));
        }
        (Stage::Candidates, None) => None,
    };
    let target = OutputTarget::prepare(out)?;
    let backend = device.open_for(&problem.problem)?;
    let label = backend.label();
    let started = Instant::now();
    let mut quiet = |_: Status| Ok(());
    match &kept {
        None => {
            let (best, span) =
                staged::candidate_shard(&backend, &budget, &problem, spec, &mut quiet)?;
            let seconds = started.elapsed().as_secs_f64();
            target.write(|dir| {
                staged::write_candidates(dir, &resolved, span.count, seconds, &label, &best)?;
                write_manifest(
                    dir,
                    ShardKind::IdentifyCandidates,
                    &resolved,
                    spec,
                    span,
                    &backend,
                    &problem,
                    seconds,
                )
            })?;
            say!(
                "identify --stage candidates, shard {}: candidates {}..{} of {}, best {} kept; backend {label}",
                spec.label(),
                span.first,
                span.first + span.count,
                span.total,
                best.len()
            );
        }
        Some(kept) => {
            let (file, span) =
                staged::descent_shard(&backend, &budget, &problem, kept, spec, &mut quiet)?;
            let seconds = started.elapsed().as_secs_f64();
            target.write(|dir| {
                staged::write_descent(dir, &file)?;
                write_manifest(
                    dir,
                    ShardKind::IdentifyDescent,
                    &resolved,
                    spec,
                    span,
                    &backend,
                    &problem,
                    seconds,
                )
            })?;
            say!(
                "identify --stage descent, shard {}: starts {}..{} of {} walked to their own stops; backend {label}",
                spec.label(),
                span.first,
                span.first + span.count,
                span.total
            );
        }
    }
    say!(
        "wrote {} (merge the shards with `harbor merge`)",
        out.display()
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn write_manifest(
    dir: &Path,
    kind: ShardKind,
    config: &ResolvedConfig,
    spec: ShardSpec,
    span: MemberSpan,
    backend: &harbor::backend::Backend,
    problem: &harbor::io::identify_spec::IdentifyProblem,
    seconds: f64,
) -> Result<()> {
    let run = RunRecord {
        backend: backend.label(),
        engine: backend.engine(&problem.problem).into(),
        precision: backend.precision().name().into(),
        seconds,
    };
    ShardManifest::new(kind, config, spec, span, run).write(dir)
}
