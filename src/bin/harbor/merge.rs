//! `harbor merge`: a sharded run's directories into the unsharded run's directory,
//! written in place only when the whole merge succeeded.

use std::path::{Path, PathBuf};
use std::time::Instant;

use harbor::Result;
use harbor::io::output_target::OutputTarget;
use harbor::shard::merge;

pub fn merge_command(shards: &[PathBuf], out: &Path) -> Result<()> {
    let started = Instant::now();
    let target = OutputTarget::prepare(out)?;
    let report = merge(shards, target.dir())?;
    target.commit()?;
    say!(
        "merged {} shard(s) of `{}`: {} member(s) in {:.3} s (the shards ran {:.3} s in all)",
        report.shards,
        report.kind.command(),
        report.members,
        started.elapsed().as_secs_f64(),
        report.seconds
    );
    say!("wrote {}", out.display());
    Ok(())
}
