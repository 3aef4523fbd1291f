//! A config as a sharded run used it: the TOML table after `--set` overrides, its canonical
//! text (which every shard records, so that a merge rebuilds the very same plan), the
//! SHA-256 of that text (which tells shards of one config from another) and the absolute
//! directory its relative paths (input files, data) are resolved against.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::bounded_read::read_config_text;
use crate::error::{Error, Result};
use crate::io::config::parse_with_overrides;

/// A config file with its overrides applied, as shards record it.
#[derive(Debug, Clone)]
pub struct ResolvedConfig {
    pub table: toml::Table,
    /// The table as canonical TOML text.
    pub text: String,
    /// `sha256:` and the hex digest of `text`.
    pub hash: String,
    /// Names the config in errors.
    pub origin: String,
    /// Absolute directory of the config file.
    pub base_dir: PathBuf,
}

impl ResolvedConfig {
    /// Reads `path` and applies `overrides` in order.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Self> {
        let text = read_config_text(path)?;
        let origin = path.display().to_string();
        let table = parse_with_overrides(&text, overrides, &origin)?;
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let base_dir = std::fs::canonicalize(parent).map_err(|e| Error::io(parent, e))?;
        Ok(Self::from_table(table, origin, base_dir))
    }

    /// The config a shard recorded: its canonical `text`, read back.
    pub fn recorded(text: &str, origin: &str, base_dir: PathBuf) -> Result<Self> {
        let table = parse_with_overrides(text, &[], origin)?;
        Ok(Self::from_table(table, origin.to_string(), base_dir))
    }

    fn from_table(table: toml::Table, origin: String, base_dir: PathBuf) -> Self {
        let text = toml::to_string(&table).expect("a parsed TOML table prints");
        let hash = config_hash(&text);
        ResolvedConfig {
            table,
            text,
            hash,
            origin,
            base_dir,
        }
    }
}

/// `sha256:<hex>` of `text`.
pub fn config_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_follows_the_content_not_the_spelling() {
        let a = ResolvedConfig::recorded("[a]\nx = 1\ny = 2.5\n", "a", PathBuf::new()).unwrap();
        let b =
            ResolvedConfig::recorded("[a]\ny = 2.50\nx = 1 # one\n", "b", PathBuf::new()).unwrap();
        let c = ResolvedConfig::recorded("[a]\nx = 1\ny = 2.6\n", "c", PathBuf::new()).unwrap();
        assert_eq!(a.hash, b.hash);
        assert_ne!(a.hash, c.hash);
        let again = ResolvedConfig::recorded(&a.text, "again", PathBuf::new()).unwrap();
        assert_eq!(again.hash, a.hash);
        assert!(a.hash.starts_with("sha256:") && a.hash.len() == 7 + 64);
    }
}
