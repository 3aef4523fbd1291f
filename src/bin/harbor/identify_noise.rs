//! `harbor study identify-noise <config>`: `harbor identify` once per output-noise level σ
//! (`data.noise.sigma`), each run's files in `sigma_<σ>/`, then harbor's numbers beside the
//! paper's (the config's `[[paper]]` tables with a `sigma`) as a table (printed and
//! `noise_table.csv`) and the seed's Figs. 11 and 12 as plots: the cost of the best start
//! over the iterations for every σ (`noise_cost.svg`) and the cross-validation outputs
//! (`noise_cross_validation.svg`).

use std::path::Path;

use harbor::io::identify_spec::IdentifyConfig;
use harbor::io::output_target::OutputTarget;
use harbor::io::plot::{Marker, Panel, Series, panels_svg};
use harbor::study::identify_noise::{NoiseRun, csv, numbers_from_json, table};
use harbor::{Error, Result};

use crate::DeviceArgs;
use crate::identify::identify_command;

pub fn study_identify_noise(
    config_path: &Path,
    out: &Path,
    sigmas: &[f64],
    device: &DeviceArgs,
    overrides: &[String],
) -> Result<()> {
    let config = IdentifyConfig::load(config_path, overrides)?;
    let tables = config.paper_tables().to_vec();
    let sigmas: Vec<f64> = if sigmas.is_empty() {
        tables.iter().filter_map(|p| p.sigma).collect()
    } else {
        sigmas.to_vec()
    };
    if sigmas.is_empty() {
        return Err(Error::invalid(
            "--sigma",
            "gives no noise level and no [[paper]] table of the config has a sigma: give --sigma 0.01,0.05,0.25",
        ));
    }
    if let Some(bad) = sigmas.iter().find(|s| !(s.is_finite() && **s >= 0.0)) {
        return Err(Error::invalid(
            "--sigma",
            format!("must be finite numbers ≥ 0, got {bad}"),
        ));
    }
    let target = OutputTarget::prepare(out)?;
    let mut runs = Vec::new();
    target.write(|dir| {
        let mut costs = Vec::new();
        let mut outputs = Vec::new();
        for &sigma in &sigmas {
            let name = format!("sigma_{sigma}");
            let run_dir = dir.join(&name);
            let mut run_overrides = overrides.to_vec();
            run_overrides.push(format!("data.noise.sigma={sigma}"));
            say!("── σ = {sigma} → {}/{name}", out.display());
            identify_command(
                config_path,
                &run_dir,
                device,
                &crate::shard_args::ShardArgs::default(),
                None,
                &run_overrides,
            )?;
            let path = run_dir.join("identification.json");
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            let json: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| Error::invalid(path.display().to_string(), e.to_string()))?;
            let harbor = numbers_from_json(&path.display().to_string(), &json)?;
            costs.push((sigma, best_history(&run_dir, &json)?));
            outputs.push((sigma, read_csv(&run_dir.join("cross_validation.csv"))?));
            let paper = tables.iter().find(|p| p.matches(sigma)).cloned();
            runs.push(NoiseRun {
                sigma,
                harbor,
                paper,
            });
        }
        let path = dir.join("noise_table.csv");
        std::fs::write(&path, csv(&runs)).map_err(|e| Error::io(&path, e))?;
        plot_costs(&dir.join("noise_cost.svg"), &costs)?;
        plot_outputs(&dir.join("noise_cross_validation.svg"), &outputs)
    })?;
    say!();
    say_inline!("{}", table(&runs));
    say!(
        "wrote {}/{{noise_table.csv, noise_cost.svg, noise_cross_validation.svg, sigma_<σ>/…}}",
        out.display()
    );
    Ok(())
}

/// The cost history of the run's best start (lowest `cost_final`), from cost_history.csv.
fn best_history(run_dir: &Path, json: &serde_json::Value) -> Result<Vec<f64>> {
    let best = json["starts"]
        .as_array()
        .and_then(|starts| {
            (0..starts.len()).min_by(|&a, &b| {
                let cost = |i: usize| starts[i]["cost_final"].as_f64().unwrap_or(f64::INFINITY);
                cost(a).total_cmp(&cost(b))
            })
        })
        .unwrap_or(0);
    let (header, rows) = read_csv(&run_dir.join("cost_history.csv"))?;
    let column = |name: &str| header.iter().position(|h| h == name);
    let (Some(start), Some(cost)) = (column("start"), column("cost")) else {
        return Err(Error::invalid(
            run_dir.join("cost_history.csv").display().to_string(),
            "has no start and cost columns",
        ));
    };
    Ok(rows
        .iter()
        .filter(|row| row[start] as usize == best)
        .map(|row| row[cost])
        .collect())
}

/// A CSV of numbers: its header line's names and its rows.
type Csv = (Vec<String>, Vec<Vec<f64>>);

/// A CSV of numbers with a header line.
fn read_csv(path: &Path) -> Result<Csv> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .filter(|l| !l.is_empty())
        .map(|line| {
            line.split(',')
                .map(|v| {
                    v.parse::<f64>().map_err(|_| {
                        Error::invalid(
                            path.display().to_string(),
                            format!("holds {v:?}, not a number"),
                        )
                    })
                })
                .collect::<Result<Vec<f64>>>()
        })
        .collect::<Result<_>>()?;
    Ok((header, rows))
}

/// The seed's Fig. 11: the cost over the iterations for every σ.
fn plot_costs(path: &Path, costs: &[(f64, Vec<f64>)]) -> Result<()> {
    let series = costs
        .iter()
        .enumerate()
        .map(|(i, (sigma, history))| Series {
            label: format!("σ = {sigma}"),
            points: history
                .iter()
                .enumerate()
                .map(|(k, &c)| (k as f64, c))
                .collect(),
            color: i,
            width: 2,
            marker: Marker::None,
        })
        .collect();
    panels_svg(
        path,
        "identification with output noise: cost of the best start (seed's Fig. 11)",
        &[Panel {
            title: "cost 𝒥(w_k)".into(),
            x_label: "iteration k".into(),
            y_label: "cost".into(),
            log_x: false,
            log_y: true,
            series,
        }],
    )
}

/// The seed's Fig. 12: the fitted models' outputs under the test inputs for every σ, and
/// the reference's.
fn plot_outputs(path: &Path, outputs: &[(f64, Csv)]) -> Result<()> {
    let Some((_, (header, _))) = outputs.first() else {
        return Ok(());
    };
    let channels = header.iter().filter(|h| h.starts_with("data_")).count();
    let panels = (0..channels)
        .map(|c| {
            let column = |header: &[String], name: &str| header.iter().position(|h| h == name);
            let mut series: Vec<Series> = outputs
                .iter()
                .enumerate()
                .filter_map(|(i, (sigma, (header, rows)))| {
                    let (t, y) = (
                        column(header, "t")?,
                        column(header, &format!("fitted_{c}"))?,
                    );
                    Some(Series {
                        label: format!("σ = {sigma}"),
                        points: rows.iter().map(|r| (r[t], r[y])).collect(),
                        color: i,
                        width: 1,
                        marker: Marker::None,
                    })
                })
                .collect();
            let (_, (header, rows)) = &outputs[0];
            if let (Some(t), Some(y)) = (column(header, "t"), column(header, &format!("data_{c}")))
            {
                series.push(Series {
                    label: "reference".into(),
                    points: rows.iter().map(|r| (r[t], r[y])).collect(),
                    color: 5,
                    width: 2,
                    marker: Marker::None,
                });
            }
            Panel {
                title: format!("cross-validation output y[{c}]"),
                x_label: "t".into(),
                y_label: format!("y[{c}]"),
                log_x: false,
                log_y: false,
                series,
            }
        })
        .collect::<Vec<_>>();
    panels_svg(
        path,
        "cross-validation after identification with output noise (seed's Fig. 12)",
        &panels,
    )
}
