//! A complete set of shards: read from their directories and checked against each other
//! before a merge writes anything. Every shard must come from the same harbor version,
//! command and stage, config (hash), shard count and run total; shard indices 0 … N − 1
//! must each appear exactly once, each holding the members the range rule gives it
//! ([`super::spec`]); and all must have run on the same backend, engine and precision (a
//! merge of results computed differently would not be any one run's result).

use std::path::{Path, PathBuf};

use super::manifest::{ShardKind, ShardManifest};
use super::resolved_config::ResolvedConfig;
use crate::error::{Error, Result};

/// Shards 0 … N − 1 of one run, in order.
#[derive(Debug)]
pub struct ShardSet {
    pub shards: Vec<(PathBuf, ShardManifest)>,
}

fn refuse(problem: String) -> Error {
    Error::invalid("shard directories", problem)
}

impl ShardSet {
    /// Reads and checks the shards in `dirs` (any order).
    pub fn read(dirs: &[PathBuf]) -> Result<Self> {
        if dirs.is_empty() {
            return Err(refuse(
                "none given: name every shard directory of the run".into(),
            ));
        }
        let mut shards = dirs
            .iter()
            .map(|dir| Ok((dir.clone(), ShardManifest::read(dir)?)))
            .collect::<Result<Vec<_>>>()?;
        let (first_dir, first) = shards[0].clone();
        for (dir, m) in &shards[1..] {
            let differs = |what: &str, a: &dyn std::fmt::Display, b: &dyn std::fmt::Display| {
                refuse(format!(
                    "{} and {} differ in {what}: {a} vs {b}",
                    first_dir.display(),
                    dir.display()
                ))
            };
            if m.harbor_version != first.harbor_version {
                return Err(differs(
                    "harbor version",
                    &first.harbor_version,
                    &m.harbor_version,
                ));
            }
            if m.kind != first.kind {
                return Err(differs(
                    "the command that wrote them",
                    &first.kind.command(),
                    &m.kind.command(),
                ));
            }
            if m.config_hash != first.config_hash {
                return Err(differs(
                    "config (another config, or other --set overrides)",
                    &first.config_hash,
                    &m.config_hash,
                ));
            }
            if m.shard.count != first.shard.count {
                return Err(differs("shard count N", &first.shard.count, &m.shard.count));
            }
            if m.members.total != first.members.total {
                return Err(differs(
                    "total members",
                    &first.members.total,
                    &m.members.total,
                ));
            }
            for (what, a, b) in [
                ("backend", &first.run.backend, &m.run.backend),
                ("engine", &first.run.engine, &m.run.engine),
                ("precision", &first.run.precision, &m.run.precision),
            ] {
                if a != b {
                    return Err(differs(what, a, b));
                }
            }
        }
        shards.sort_by_key(|(_, m)| m.shard.index);
        for pair in shards.windows(2) {
            if pair[0].1.shard.index == pair[1].1.shard.index {
                return Err(refuse(format!(
                    "shard {} is given twice: {} and {}",
                    pair[0].1.shard.label(),
                    pair[0].0.display(),
                    pair[1].0.display()
                )));
            }
        }
        let count = first.shard.count;
        if shards.len() != count {
            let present: Vec<usize> = shards.iter().map(|(_, m)| m.shard.index).collect();
            let missing: Vec<String> = (0..count)
                .filter(|i| !present.contains(i))
                .map(|i| format!("{i}/{count}"))
                .collect();
            return Err(refuse(format!(
                "{} of {count} shards given; missing: {}",
                shards.len(),
                missing.join(", ")
            )));
        }
        for (dir, m) in &shards {
            let range = m.shard.range_of(m.members.total);
            if (m.members.first, m.members.count) != (range.start, range.len()) {
                return Err(refuse(format!(
                    "{}: shard {} holds members {}..{}, the rule gives {}..{}",
                    dir.display(),
                    m.shard.label(),
                    m.members.first,
                    m.members.first + m.members.count,
                    range.start,
                    range.end
                )));
            }
        }
        Ok(ShardSet { shards })
    }

    /// What the shards hold.
    pub fn kind(&self) -> ShardKind {
        self.shards[0].1.kind
    }

    /// The first shard's manifest.
    pub fn manifest(&self) -> &ShardManifest {
        &self.shards[0].1
    }

    /// The config every shard ran.
    pub fn config(&self) -> Result<ResolvedConfig> {
        let (dir, manifest) = &self.shards[0];
        manifest.config(dir)
    }

    /// The shards' wall times added up.
    pub fn seconds(&self) -> f64 {
        self.shards.iter().map(|(_, m)| m.run.seconds).sum()
    }

    /// The directories, in shard order.
    pub fn dirs(&self) -> impl Iterator<Item = &Path> {
        self.shards.iter().map(|(dir, _)| dir.as_path())
    }
}
