//! Energy histories of a linear-PH `harbor simulate` run, the lower panels of Kotyczka &
//! Lefèvre (2019), Figs. 2 and 4 (the states, their upper panels, are
//! [`super::path_plot`]'s). From `energy.npy` (members × windows × \[stored, supplied, port,
//! dissipated\], window w ending at `times[w + 1]`) of the first member:
//!
//! ```text
//!   stored   Σ_{k<K} ΔH̄^k = H(x_K) − H(x_0)          (eq. 39, summed)
//!   supplied Σ_{k<K} ΔH̃^k = Σ (port − dissipated)    (eq. 24, summed)
//!   port     Σ_{k<K} h (y^k)ᵀ u^k                     (eq. 37)
//!   dissipated Σ_{k<K} h (e^k)ᵀ (M ⊗ R) e^k           (booked for eq. 71, see collocation_step)
//! ```
//!
//! against t_K, and the per-window increments of stored and supplied energy (equal for
//! Gauss collocation, O(h^p) apart for the Lobatto pairs).

use std::path::Path;

use super::npy_stream::read_rows;
use super::path_plot::npy_shape;
use super::plot::{Marker, Panel, Series};
use crate::error::{Error, Result};

/// The first member's energy windows and the times they end at.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyHistory {
    /// t_0 = 0 first, then the end of every window.
    pub times: Vec<f64>,
    /// \[stored, supplied, port, dissipated\] per window.
    pub windows: Vec<[f64; 4]>,
}

impl EnergyHistory {
    /// Reads `energy.npy` and `times.npy` of a run directory; `None` when the run has no
    /// energy channel (not a linear-PH run, or `output.energy = false`).
    pub fn read(dir: &Path) -> Result<Option<EnergyHistory>> {
        let file = dir.join("energy.npy");
        if !file.exists() {
            return Ok(None);
        }
        let shape = npy_shape(&file)?;
        let [_, windows, 4] = shape[..] else {
            return Err(Error::invalid(
                file.display().to_string(),
                format!("has shape {shape:?}; expected (members, windows, 4)"),
            ));
        };
        let mut times = Vec::with_capacity(windows + 1);
        read_rows(&dir.join("times.npy"), 1, |row| times.push(row[0]))?;
        if times.len() != windows + 1 {
            return Err(Error::invalid(
                dir.join("times.npy").display().to_string(),
                format!(
                    "has {} times for {windows} energy windows (expected one more)",
                    times.len()
                ),
            ));
        }
        let mut rows = Vec::with_capacity(windows);
        read_rows(&file, 4, |row| {
            if rows.len() < windows {
                rows.push([row[0], row[1], row[2], row[3]]);
            }
        })?;
        Ok(Some(EnergyHistory {
            times,
            windows: rows,
        }))
    }

    /// Σ over the windows up to each time of part `part` (0 at t_0).
    pub fn cumulative(&self, part: usize) -> Vec<(f64, f64)> {
        let mut sum = 0.0;
        let mut points = vec![(self.times[0], 0.0)];
        for (w, window) in self.windows.iter().enumerate() {
            sum += window[part];
            points.push((self.times[w + 1], sum));
        }
        points
    }

    /// The panels: cumulative energies against t, and the per-window increments.
    pub fn panels(&self) -> Vec<Panel> {
        let line = |label: &str, points: Vec<(f64, f64)>, color: usize, width: u32| Series {
            label: label.into(),
            points,
            color,
            width,
            marker: Marker::None,
        };
        let dissipated: Vec<(f64, f64)> = self
            .cumulative(3)
            .into_iter()
            .map(|(t, d)| (t, -d))
            .collect();
        let per_window = |part: usize| -> Vec<(f64, f64)> {
            self.windows
                .iter()
                .enumerate()
                .map(|(w, window)| (self.times[w + 1], window[part]))
                .collect()
        };
        vec![
            Panel {
                title: "energy change since t = 0 (member 0)".into(),
                x_label: "t".into(),
                y_label: "energy".into(),
                log_x: false,
                log_y: false,
                series: vec![
                    line("stored H(x_k) − H(x_0)", self.cumulative(0), 0, 3),
                    line(
                        "supplied Σ ΔH̃ = port − dissipated",
                        self.cumulative(1),
                        1,
                        1,
                    ),
                    line("port Σ h yᵀu", self.cumulative(2), 2, 1),
                    line("− dissipated Σ h eᵀ(M⊗R)e", dissipated, 3, 1),
                ],
            },
            Panel {
                title: "per recording window: stored ΔH̄ and supplied ΔH̃".into(),
                x_label: "t".into(),
                y_label: "energy per window".into(),
                log_x: false,
                log_y: false,
                series: vec![
                    line("stored ΔH̄", per_window(0), 0, 3),
                    line("supplied ΔH̃", per_window(1), 1, 1),
                ],
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_energies_start_at_zero_and_sum_the_windows() {
        let history = EnergyHistory {
            times: vec![0.0, 0.5, 1.0],
            windows: vec![[1.0, 1.0, 1.5, 0.5], [-0.25, -0.25, 0.0, 0.25]],
        };
        assert_eq!(
            history.cumulative(0),
            vec![(0.0, 0.0), (0.5, 1.0), (1.0, 0.75)]
        );
        assert_eq!(
            history.cumulative(3),
            vec![(0.0, 0.0), (0.5, 0.5), (1.0, 0.75)]
        );
        let panels = history.panels();
        assert_eq!(panels.len(), 2);
        let dissipated = &panels[0].series[3].points;
        assert_eq!(dissipated.last(), Some(&(1.0, -0.75)));
        assert_eq!(panels[1].series[0].points, vec![(0.5, 1.0), (1.0, -0.25)]);
    }
}
