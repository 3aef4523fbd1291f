//! `harbor export-members`: a linear-PH plan's members, stage inputs and step operators as
//! NPY files, for programs outside harbor (see `harbor::linear_ph::export`).

use std::path::Path;

use harbor::Result;
use harbor::io::Config;
use harbor::io::output_target::OutputTarget;
use harbor::linear_ph::export::{EXPORT_FILES, check_export_size, export_plan, write_members};

pub fn export_members(config_path: &Path, out: &Path, overrides: &[String]) -> Result<()> {
    let config = Config::load(config_path, overrides)?;
    let plan = export_plan(&config)?;
    // Everything that can be checked is checked before the output location is touched.
    check_export_size(&plan)?;
    let target = OutputTarget::prepare(out)?;
    let mut summary = None;
    target.write(|dir| {
        summary = Some(write_members(&plan, dir)?);
        Ok(())
    })?;
    let summary = summary.expect("written when the target commits");
    say!(
        "exported {} member(s) of linear-ph {} (order {}), h = {}, {} steps, states = {}, inputs = {}: {} bytes",
        summary.members,
        plan.scheme.label(),
        plan.scheme.order,
        plan.grid.h,
        summary.steps,
        summary.states,
        summary.inputs,
        summary.bytes
    );
    say!("wrote {}/{{{}}}", out.display(), EXPORT_FILES.join(", "));
    Ok(())
}
