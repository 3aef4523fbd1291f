//! `harbor plot <run dir>`: the paths of a simulate run as an SVG.

use std::path::Path;

use harbor::io::path_plot::Paths;
use harbor::io::plot::panels_svg;
use harbor::{Error, Result};

/// Reads the run's paths (the first `members`), names the coordinates from summary.json
/// (`coordinates` or `state_names`, else q0, q1, …) and writes the panels to `out`
/// (default `<dir>/path.svg`), through a temporary file so that a failure leaves no
/// half-written plot.
pub fn plot_paths(dir: &Path, out: Option<&Path>, members: usize) -> Result<()> {
    if members == 0 {
        return Err(Error::invalid("--members", "must be ≥ 1, got 0"));
    }
    let paths = Paths::read(dir, members)?;
    let names: Vec<String> = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|summary| {
            ["coordinates", "state_names"].iter().find_map(|key| {
                summary.get(key).and_then(|v| v.as_array()).map(|names| {
                    names
                        .iter()
                        .filter_map(|n| n.as_str().map(str::to_string))
                        .collect()
                })
            })
        })
        .unwrap_or_default();
    let target = out.map_or_else(|| dir.join("path.svg"), Path::to_path_buf);
    let staging = target.with_extension("svg.partial");
    let title = format!("{}", dir.display());
    let written = panels_svg(&staging, &title, &paths.panels(&names))
        .and_then(|()| std::fs::rename(&staging, &target).map_err(|e| Error::io(&target, e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    written?;
    say!("wrote {}", target.display());
    Ok(())
}
