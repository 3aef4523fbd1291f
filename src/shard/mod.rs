//! Sharded runs and their exact merge. Member i of every plan depends on (seed, i) alone,
//! so an ensemble (a batch of candidates, the Monte-Carlo candidates of an identification)
//! splits into contiguous shards that run anywhere — the tasks of a Slurm job array, a
//! Kubernetes Indexed Job — and merge into exactly the unsharded run's output:
//!
//! - [`spec`]: which shard a run is (`--shard I/N`, `--shard auto`) and the members it owns;
//! - [`member_range`]: a family restricted to those members, run by any backend;
//! - [`resolved_config`] and [`manifest`]: `shard.json`, the mark of a shard's directory
//!   (config text and hash, harbor's version, the shard, the members, what ran them, the
//!   size of every file);
//! - [`set`]: a complete set of shards, checked against each other;
//! - [`merge_simulation`], [`merge_gradient`]: the merges, streaming and exact;
//! - [`slurm`]: the sbatch scripts of a sharded run and its dependent merge.

pub mod manifest;
pub mod member_range;
pub mod merge_gradient;
pub mod merge_simulation;
pub mod npy_rows;
pub mod resolved_config;
pub mod set;
pub mod slurm;
pub mod spec;

use std::path::{Path, PathBuf};

pub use manifest::{MemberSpan, RunRecord, ShardKind, ShardManifest};
pub use member_range::MemberRange;
pub use resolved_config::ResolvedConfig;
pub use set::ShardSet;
pub use spec::{ProcessEnvironment, ShardSpec};

use crate::error::Result;

/// What a merge wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeReport {
    pub kind: ShardKind,
    pub shards: usize,
    /// Members (candidates) merged.
    pub members: usize,
    /// The shards' wall times added up.
    pub seconds: f64,
}

/// Merges the shard directories `dirs` (any order) into `dir`, an empty directory (the
/// staging directory of an output target): refused, naming the problem, before anything is
/// written unless they are shards 0 … N − 1 of one run.
pub fn merge(dirs: &[PathBuf], dir: &Path) -> Result<MergeReport> {
    let set = ShardSet::read(dirs)?;
    let kind = set.kind();
    let members = match kind {
        ShardKind::Simulate => merge_simulation::merge_simulation(&set, dir)?,
        ShardKind::Gradient => merge_gradient::merge_gradient(&set, dir)?,
        ShardKind::IdentifyCandidates | ShardKind::IdentifyDescent => {
            crate::identify::staged::merge(&set, dir)?
        }
    };
    Ok(MergeReport {
        kind,
        shards: set.shards.len(),
        members,
        seconds: set.seconds(),
    })
}
