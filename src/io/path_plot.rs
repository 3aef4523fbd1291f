//! Plots of recorded paths, for any family that writes its states along the run
//! (`path.npy` of variational runs, `trajectory.npy` of the others): the coordinates of the
//! first members against time, and the path itself — in the plane for two coordinates,
//! orthographically projected for three or more (azimuth 35°, elevation 25°), with the
//! silhouette of the sphere it lies on when every point has the same norm (splines on the
//! sphere).

use std::path::Path;

use super::npy_stream::read_rows;
use super::plot::{Marker, Panel, Series};
use crate::error::{Error, Result};

/// The shape of an `.npy` file written by harbor (its header's `'shape': (…)`).
pub fn npy_shape(path: &Path) -> Result<Vec<usize>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let header = String::from_utf8_lossy(&bytes[..bytes.len().min(256)]).into_owned();
    let bad = || {
        Error::invalid(
            path.display().to_string(),
            "is not an .npy array file as harbor writes them (no shape in its header)",
        )
    };
    let start = header.find("'shape': (").ok_or_else(bad)? + "'shape': (".len();
    let end = start + header[start..].find(')').ok_or_else(bad)?;
    header[start..end]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|_| bad()))
        .collect()
}

/// A map from a state to the plane of the plot.
type Projection = Box<dyn Fn(&[f64]) -> (f64, f64)>;

/// Paths of members: `paths[member][point]` is the state at `times[point]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Paths {
    pub times: Vec<f64>,
    pub paths: Vec<Vec<Vec<f64>>>,
}

impl Paths {
    /// Reads `times.npy` and `path.npy` (or `trajectory.npy`) of a run directory, keeping
    /// the first `members` members.
    pub fn read(dir: &Path, members: usize) -> Result<Paths> {
        let file = ["path.npy", "trajectory.npy"]
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.exists())
            .ok_or_else(|| {
                Error::invalid(
                    dir.display().to_string(),
                    "holds neither path.npy nor trajectory.npy: plot a run directory of `harbor simulate` that recorded its states",
                )
            })?;
        let shape = npy_shape(&file)?;
        let [count, points, width] = shape[..] else {
            return Err(Error::invalid(
                file.display().to_string(),
                format!("has shape {shape:?}; expected (members, points, coordinates)"),
            ));
        };
        let mut times = Vec::with_capacity(points);
        read_rows(&dir.join("times.npy"), 1, |row| times.push(row[0]))?;
        if times.len() != points {
            return Err(Error::invalid(
                dir.join("times.npy").display().to_string(),
                format!(
                    "has {} times for {points} points of {}",
                    times.len(),
                    file.display()
                ),
            ));
        }
        let keep = members.min(count);
        let mut paths: Vec<Vec<Vec<f64>>> = vec![Vec::with_capacity(points); keep];
        let mut row = 0usize;
        read_rows(&file, width, |values| {
            let member = row / points;
            if member < keep {
                paths[member].push(values.to_vec());
            }
            row += 1;
        })?;
        Ok(Paths { times, paths })
    }

    /// The panels: coordinates against t, and (two or more coordinates) the path.
    pub fn panels(&self, names: &[String]) -> Vec<Panel> {
        let width = self
            .paths
            .first()
            .and_then(|p| p.first())
            .map_or(0, Vec::len);
        let name = |c: usize| names.get(c).cloned().unwrap_or_else(|| format!("q{c}"));
        let mut against_time = Vec::new();
        for (m, path) in self.paths.iter().enumerate() {
            for c in 0..width {
                against_time.push(Series {
                    label: if m == 0 { name(c) } else { String::new() },
                    points: self
                        .times
                        .iter()
                        .zip(path)
                        .map(|(&t, q)| (t, q[c]))
                        .collect(),
                    color: c,
                    width: 1,
                    marker: Marker::None,
                });
            }
        }
        let mut panels = vec![Panel {
            title: format!("coordinates of {} member(s)", self.paths.len()),
            x_label: "t".into(),
            y_label: "q".into(),
            log_x: false,
            log_y: false,
            series: against_time,
        }];
        if width >= 2 {
            let (project, x_label, y_label): (Projection, String, String) = if width == 2 {
                (Box::new(|q: &[f64]| (q[0], q[1])), name(0), name(1))
            } else {
                let (az, el) = (35f64.to_radians(), 25f64.to_radians());
                (
                    Box::new(move |q: &[f64]| {
                        let x = -az.sin() * q[0] + az.cos() * q[1];
                        let y = -el.sin() * az.cos() * q[0] - el.sin() * az.sin() * q[1]
                            + el.cos() * q[2];
                        (x, y)
                    }),
                    format!(
                        "projection (azimuth 35°, elevation 25°) of {}, {}, {}",
                        name(0),
                        name(1),
                        name(2)
                    ),
                    String::new(),
                )
            };
            let mut series: Vec<Series> = self
                .paths
                .iter()
                .enumerate()
                .map(|(m, path)| Series {
                    label: format!("member {m}"),
                    points: path.iter().map(|q| project(q)).collect(),
                    color: m,
                    width: 1,
                    marker: Marker::None,
                })
                .collect();
            if let Some(radius) = self.common_norm() {
                // The sphere's silhouette: under an orthographic projection, a circle.
                let circle = (0..=180)
                    .map(|i| {
                        let a = i as f64 * std::f64::consts::TAU / 180.0;
                        (radius * a.cos(), radius * a.sin())
                    })
                    .collect();
                series.push(Series {
                    label: format!("sphere |q| = {radius:.4}"),
                    points: circle,
                    color: 5,
                    width: 1,
                    marker: Marker::None,
                });
            }
            panels.push(Panel {
                title: "path".into(),
                x_label,
                y_label,
                log_x: false,
                log_y: false,
                series,
            });
        }
        panels
    }

    /// The norm every point of every path shares (to 1e-6 relative), if any, for paths
    /// of three or more coordinates.
    fn common_norm(&self) -> Option<f64> {
        let norms: Vec<f64> = self
            .paths
            .iter()
            .flatten()
            .filter(|q| q.len() >= 3)
            .map(|q| q.iter().map(|v| v * v).sum::<f64>().sqrt())
            .collect();
        let first = *norms.first()?;
        (first > 0.0 && norms.iter().all(|n| (n - first).abs() <= 1e-6 * first)).then_some(first)
    }
}
