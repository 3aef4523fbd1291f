//! `harbor gradient`: cost and exact discrete gradient of one candidate or a batch,
//! written to gradient.json before anything is printed.

use std::path::Path;
use std::time::Instant;

use harbor::Result;
use harbor::identify::evaluate_range;
use harbor::io::gradient_output::write_gradient_json;
use harbor::io::gradient_spec::GradientConfig;
use harbor::io::output_target::OutputTarget;
use harbor::kernels::Family;
use harbor::plan::ProblemEstimate;

use harbor::shard::{MemberSpan, ResolvedConfig, RunRecord, ShardKind, ShardManifest};

use crate::DeviceArgs;
use crate::shard_args::ShardArgs;

pub fn gradient(
    problem_path: &Path,
    out: &Path,
    device: &DeviceArgs,
    shard: &ShardArgs,
    overrides: &[String],
) -> Result<()> {
    let budget = device.budget()?;
    let shard = match shard.spec()? {
        Some(spec) => Some((spec, ResolvedConfig::load(problem_path, overrides)?)),
        None => None,
    };
    let mut config = match &shard {
        Some((_, resolved)) => GradientConfig::from_table(
            resolved.table.clone(),
            &resolved.origin,
            resolved.base_dir.clone(),
        )?,
        None => GradientConfig::load(problem_path, overrides)?,
    };
    if let Some(limit) = crate::environment::work_limit()? {
        config = config.with_work_limit("HARBOR_WORK_LIMIT", limit)?;
    }
    let problem = config.problem_planned(&budget, print_large_plan)?;
    let plan = &problem.plan;
    let target = OutputTarget::prepare(out)?;
    let backend = device.open_for(plan)?;
    let total = plan.member_count();
    let range = match &shard {
        Some((spec, _)) => spec.members("--shard", total, "candidates")?,
        None => 0..total,
    };
    let span = MemberSpan {
        first: range.start,
        count: range.len(),
        total,
    };
    let started = Instant::now();
    let evaluations = evaluate_range(&backend, plan, &budget, range)?;
    let seconds = started.elapsed().as_secs_f64();
    target.write(|dir| {
        write_gradient_json(dir, &evaluations, problem.batch)?;
        if let Some((spec, config)) = shard {
            let run = RunRecord {
                backend: backend.label(),
                engine: backend.engine(plan).into(),
                precision: backend.precision().name().into(),
                seconds,
            };
            ShardManifest::new(ShardKind::Gradient, &config, spec, span, run).write(dir)?;
        }
        Ok(())
    })?;
    let grid = plan.grid();
    say!(
        "gradient: {} n = {}, m = {}, h = {}, {} steps, checkpoints every {} step(s), {} candidate(s)",
        plan.method_label(),
        plan.model.states(),
        plan.model.inputs_count(),
        grid.h,
        grid.steps,
        plan.segment(),
        evaluations.len()
    );
    say!(
        "backend {} ({}): {seconds:.3e} s, {:.3e} cost+gradient evaluations/s",
        backend.label(),
        backend.precision().name(),
        evaluations.len() as f64 / seconds.max(1e-9)
    );
    if let [only] = evaluations.as_slice() {
        let g = &only.gradient;
        say!("cost {:.16e}", only.cost);
        say!(
            "|∇J| {:.3e}  |∇R| {:.3e}  |∇Q| {:.3e}  |∇B| {:.3e}  |∇x0| {:.3e}",
            g.j.norm(),
            g.r.norm(),
            g.q.norm(),
            g.b.norm(),
            g.x0.norm()
        );
    } else {
        let (best, worst) = evaluations
            .iter()
            .enumerate()
            .fold((0, 0), |(b, w), (i, e)| {
                (
                    if e.cost < evaluations[b].cost { i } else { b },
                    if e.cost > evaluations[w].cost { i } else { w },
                )
            });
        say!(
            "cost: lowest {:.6e} (candidate {best}), highest {:.6e} (candidate {worst})",
            evaluations[best].cost,
            evaluations[worst].cost
        );
    }
    say!("wrote {}/gradient.json", out.display());
    Ok(())
}

/// Prints the plan of a gradient or identification problem on stderr when it is large
/// ([`ProblemEstimate::is_large`]), before its data are built.
pub fn print_large_plan(estimate: &ProblemEstimate) {
    if estimate.is_large() {
        eprintln!("plan: {}", estimate.describe());
    }
}
