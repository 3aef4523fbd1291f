//! `shard.json`, the mark of a shard's output directory: which command and stage wrote it,
//! harbor's version, the config (its canonical text and hash) and its directory, which
//! shard of how many, the members it holds, what ran them, and the size of every file it
//! wrote — so that a merge refuses shards of other configs or versions, missing or
//! duplicate shards, and truncated or missing files, before it writes anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::resolved_config::ResolvedConfig;
use super::spec::ShardSpec;
use crate::error::{Error, Result};

/// The manifest's file name in a shard directory.
pub const MANIFEST: &str = "shard.json";

/// What a shard holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShardKind {
    /// `harbor simulate --shard`: members of an ensemble.
    Simulate,
    /// `harbor gradient --shard`: candidates of a batch.
    Gradient,
    /// `harbor identify --stage candidates --shard`: the best Monte-Carlo candidates of a
    /// range of them.
    IdentifyCandidates,
    /// `harbor identify --stage descent --shard`: descents from a range of the kept starts.
    IdentifyDescent,
}

impl ShardKind {
    /// The command that writes it, as a user types it.
    pub fn command(self) -> &'static str {
        match self {
            ShardKind::Simulate => "harbor simulate --shard",
            ShardKind::Gradient => "harbor gradient --shard",
            ShardKind::IdentifyCandidates => "harbor identify --stage candidates --shard",
            ShardKind::IdentifyDescent => "harbor identify --stage descent --shard",
        }
    }
}

/// The members (candidates, starts) of the whole run a shard holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberSpan {
    pub first: usize,
    pub count: usize,
    /// Of the whole run.
    pub total: usize,
}

/// What ran a shard: as summary.json's `backend`, `engine`, `precision`, and its wall time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub backend: String,
    pub engine: String,
    pub precision: String,
    pub seconds: f64,
}

/// The contents of `shard.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardManifest {
    pub harbor_version: String,
    pub kind: ShardKind,
    pub config_hash: String,
    /// The config's canonical TOML text, overrides applied.
    pub config: String,
    /// The absolute directory relative paths of the config are resolved against.
    pub base_dir: PathBuf,
    pub shard: ShardSpec,
    pub members: MemberSpan,
    pub run: RunRecord,
    /// Every other file of the directory and its size in bytes.
    pub files: BTreeMap<String, u64>,
}

impl ShardManifest {
    /// The manifest of a shard of `config`, before its files are listed.
    pub fn new(
        kind: ShardKind,
        config: &ResolvedConfig,
        shard: ShardSpec,
        members: MemberSpan,
        run: RunRecord,
    ) -> Self {
        ShardManifest {
            harbor_version: env!("CARGO_PKG_VERSION").into(),
            kind,
            config_hash: config.hash.clone(),
            config: config.text.clone(),
            base_dir: config.base_dir.clone(),
            shard,
            members,
            run,
            files: BTreeMap::new(),
        }
    }

    /// Lists every file of `dir` with its size and writes `dir/shard.json`: the last file a
    /// shard writes, into its staging directory.
    pub fn write(mut self, dir: &Path) -> Result<()> {
        self.files.clear();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let meta = entry.metadata().map_err(|e| Error::io(entry.path(), e))?;
            if meta.is_file() && name != MANIFEST {
                self.files.insert(name, meta.len());
            }
        }
        let value = serde_json::to_value(&self).expect("a manifest serialises");
        crate::io::output::write_json(&dir.join(MANIFEST), &value)
    }

    /// Reads `dir/shard.json` and checks that every file it lists is there at its size.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(MANIFEST);
        if !dir.is_dir() {
            return Err(Error::invalid(
                "shard directory",
                format!("{} is not a directory", dir.display()),
            ));
        }
        let text = std::fs::read_to_string(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::invalid(
                    "shard directory",
                    format!(
                        "{} has no {MANIFEST}: it was not written by a run with --shard (or is incomplete)",
                        dir.display()
                    ),
                )
            } else {
                Error::io(&path, e)
            }
        })?;
        let manifest: ShardManifest = serde_json::from_str(&text).map_err(|e| {
            Error::invalid(
                "shard directory",
                format!(
                    "{} is not a shard manifest harbor can read: {e}",
                    path.display()
                ),
            )
        })?;
        for (name, &size) in &manifest.files {
            let file = dir.join(name);
            match std::fs::metadata(&file) {
                Ok(meta) if meta.len() == size => {}
                Ok(meta) => {
                    return Err(Error::invalid(
                        "shard directory",
                        format!(
                            "incomplete shard {}: {name} has {} bytes, the shard wrote {size}",
                            dir.display(),
                            meta.len()
                        ),
                    ));
                }
                Err(_) => {
                    return Err(Error::invalid(
                        "shard directory",
                        format!(
                            "incomplete shard {}: {name} is missing (the shard wrote {size} bytes)",
                            dir.display()
                        ),
                    ));
                }
            }
        }
        Ok(manifest)
    }

    /// The config the shard ran, rebuilt from its record (checked against its hash).
    pub fn config(&self, dir: &Path) -> Result<ResolvedConfig> {
        let origin = format!("{}/{MANIFEST} (config)", dir.display());
        let config = ResolvedConfig::recorded(&self.config, &origin, self.base_dir.clone())?;
        if config.hash != self.config_hash {
            return Err(Error::invalid(
                "shard directory",
                format!(
                    "{}: the recorded config does not match its hash {} (the manifest was edited)",
                    dir.display(),
                    self.config_hash
                ),
            ));
        }
        Ok(config)
    }
}
