//! `harbor simulate`: any family's run, written before anything is printed.

use std::path::Path;
use std::time::Instant;

use harbor::backend::Backend;
use harbor::io::output::SimulationWriter;
use harbor::io::output_target::OutputTarget;
use harbor::io::{Config, FamilyVisitor};
use harbor::kernels::Family;
use harbor::{Error, Result};

use crate::DeviceArgs;

pub fn simulate(
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
