//! `harbor plot <run dir>`: the paths of a simulate run as an SVG, and for linear-PH runs
//! their energy histories (stored against supplied energy) as a second one.

use std::path::Path;

use harbor::io::energy_plot::EnergyHistory;
use harbor::io::path_plot::Paths;
use harbor::io::plot::panels_svg;
use harbor::{Error, Result};

/// Reads the run's paths (the first `members`), names the coordinates from summary.json
/// (`coordinates` or `state_names`, else q0, q1, …) and writes the panels to `out`
/// (default `<dir>/path.svg`), through a temporary file so that a failure leaves no
/// half-written plot; a run with `energy.npy` gets its energy histories too
/// (`<dir>/energy.svg`, or `<stem>_energy.svg` beside `out`).
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
    let title = format!("{}", dir.display());
    write_svg(&target, &title, &paths.panels(&names))?;
    say!("wrote {}", target.display());
    if let Some(history) = EnergyHistory::read(dir)? {
        let stem = target
            .file_stem()
            .map_or_else(|| "path".into(), |s| s.to_string_lossy().into_owned());
        let energy = if out.is_some() {
            target.with_file_name(format!("{stem}_energy.svg"))
        } else {
            dir.join("energy.svg")
        };
        write_svg(&energy, &format!("{title}: energy"), &history.panels())?;
        say!("wrote {}", energy.display());
    }
    Ok(())
}

/// Writes the panels to `target` through a temporary file, so that a failure leaves no
/// half-written plot.
fn write_svg(target: &Path, title: &str, panels: &[harbor::io::plot::Panel]) -> Result<()> {
    let staging = target.with_extension("svg.partial");
    let written = panels_svg(&staging, title, panels)
        .and_then(|()| std::fs::rename(&staging, target).map_err(|e| Error::io(target, e)));
    if written.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    written
}
