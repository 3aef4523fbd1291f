//! Merging `harbor gradient --shard` directories: a batch's gradient.json lists one
//! evaluation per line in candidate order (as [`crate::io::gradient_output`] writes it), so
//! the merge is the shards' lines in shard order — the unsharded file byte for byte. A
//! single candidate (one shard) is copied as it is.

use std::io::Write;
use std::path::Path;

use super::set::ShardSet;
use crate::error::{Error, Result};

/// Writes the merge of the `gradient` shards of `set` into `dir`; returns the candidates
/// merged.
pub fn merge_gradient(set: &ShardSet, dir: &Path) -> Result<usize> {
    let path = dir.join("gradient.json");
    let mut lines: Vec<String> = Vec::with_capacity(set.manifest().members.total);
    for (shard_dir, manifest) in &set.shards {
        let file = shard_dir.join("gradient.json");
        let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
        if set.shards.len() == 1 && !text.starts_with('[') {
            std::fs::write(&path, &text).map_err(|e| Error::io(&path, e))?;
            return Ok(1);
        }
        let refuse = |problem: &str| {
            Error::invalid(
                "shard directories",
                format!("{}: {problem}", file.display()),
            )
        };
        let body = text
            .strip_prefix("[\n")
            .and_then(|t| t.strip_suffix("\n]\n"))
            .ok_or_else(|| {
                refuse("is not a batch's gradient.json (a list, one candidate per line)")
            })?;
        let shard_lines: Vec<&str> = body.split(",\n").collect();
        if shard_lines.len() != manifest.members.count {
            return Err(refuse(&format!(
                "lists {} candidates, the shard holds {}",
                shard_lines.len(),
                manifest.members.count
            )));
        }
        for line in shard_lines {
            serde_json::from_str::<serde_json::Value>(line)
                .map_err(|e| refuse(&format!("a candidate's line does not read as JSON: {e}")))?;
            lines.push(line.to_string());
        }
    }
    let io = |e| Error::io(&path, e);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(io)?);
    out.write_all(b"[\n").map_err(io)?;
    out.write_all(lines.join(",\n").as_bytes()).map_err(io)?;
    out.write_all(b"\n]\n").map_err(io)?;
    out.flush().map_err(io)?;
    Ok(lines.len())
}
