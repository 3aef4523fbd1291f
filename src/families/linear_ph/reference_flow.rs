//! High-accuracy reference solution of the continuous system ẋ = L x + B u(t) by the
//! variation-of-constants formula evaluated directly at the final time,
//!
//! ```text
//!   x(T) = e^{LT} x(0) + ∫₀^T e^{L(T − s)} B u(s) ds,
//! ```
//!
//! with every kernel e^{L(T − s)} computed by its own matrix exponential (nalgebra's Padé
//! scaling and squaring) rather than by repeated application of a one-piece propagator,
//! whose rounding errors would add up over the pieces. The integral is split at the input
//! breakpoints (pulse edges, square-wave edges, CSV knots) so the integrand is smooth on
//! each segment, subdivided into pieces short enough that ‖L‖δ ≤ 1/4 and the input
//! completes at most 1/20 of a period, and each piece is integrated by a 16-point Gauss
//! rule (exact for polynomials of degree 31) with compensated summation. Against closed
//! forms the result agrees to about 1e-16 (tests/reference_flow.rs).
//!
//! The work is therefore about 16 (t_end/δ_max + breakpoints) matrix exponentials, with
//! δ_max = min(1/(4‖L‖_∞), 1/20, 1/(20 f_max)): it grows linearly with ‖L‖_∞ t_end and
//! with the highest input frequency times t_end. [`LinearFlow::node_bound`] bounds it
//! before any of it is done, so callers can refuse what cannot finish.

use std::f64::consts::PI;

use nalgebra::{DMatrix, DVector};

use crate::compensated::CompensatedSum;
use crate::linear_ph::LinearPh;
use crate::model::Signal;
use crate::tableau::polynomial::UnitQuadrature;

/// Gauss nodes per piece; each node with a non-zero input costs one n×n matrix exponential.
pub const QUADRATURE_POINTS: usize = 16;

/// The exact flow of one system under given inputs, evaluated to near machine precision.
pub struct LinearFlow<'a> {
    system: &'a LinearPh,
    signals: &'a [Signal],
    drift: DMatrix<f64>,
    nodes: Vec<f64>,
    weights: Vec<f64>,
}

/// One smooth segment [start, end] between input breakpoints, cut into `pieces` equal pieces.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Window {
    start: f64,
    end: f64,
    pieces: usize,
}

impl<'a> LinearFlow<'a> {
    pub fn new(system: &'a LinearPh, signals: &'a [Signal]) -> Self {
        let (nodes, weights) = UnitQuadrature::gauss(QUADRATURE_POINTS).to_f64();
        LinearFlow {
            system,
            signals,
            drift: system.drift(),
            nodes,
            weights,
        }
    }

    /// ‖L‖_∞ = max_i Σ_j |L_ij| of the drift L = (J − R) Q.
    pub fn drift_norm(&self) -> f64 {
        self.drift.abs().row_sum().max()
    }

    /// The highest input frequency f_max (Hz) on [0, t_end], 0 without oscillating inputs.
    pub fn max_frequency(&self, t_end: f64) -> f64 {
        self.signals
            .iter()
            .map(|s| s.max_frequency(t_end))
            .fold(0.0, f64::max)
    }

    /// The longest quadrature piece on [0, t_end],
    ///
    /// ```text
    ///   δ_max = min(1/(4 ‖L‖_∞), 1/20, 1/(20 f_max))
    /// ```
    ///
    /// (the last term only when f_max > 0): short enough that ‖L‖δ ≤ 1/4 and the input
    /// completes at most 1/20 of a period per piece.
    pub fn piece_max(&self, t_end: f64) -> f64 {
        let norm = self.drift_norm().max(1e-300);
        let frequency = self.max_frequency(t_end);
        let mut piece_max = (0.25 / norm).min(0.05);
        if frequency > 0.0 {
            piece_max = piece_max.min(0.05 / frequency);
        }
        piece_max
    }

    /// An upper bound of [`Self::nodes`] computed without listing the breakpoints (so it is
    /// cheap however fine the subdivision): with W ≤ b + 1 windows for b breakpoints,
    ///
    /// ```text
    ///   Σ_w ⌈|w| / δ_max⌉ ≤ t_end / δ_max + W,   nodes ≤ 16 (t_end / δ_max + b + 1),
    /// ```
    ///
    /// where b is bounded per signal: 2 for a pulse, the sample count of a CSV signal, and
    /// 2 (f t_end + 3) for a square wave of frequency f. It grows with ‖L‖_∞ t_end, with
    /// f_max t_end and with the number of breakpoints; it is +∞ when those overflow.
    pub fn node_bound(&self, t_end: f64) -> f64 {
        let breakpoints: f64 = self
            .signals
            .iter()
            .map(|s| breakpoint_bound(s, t_end))
            .sum();
        QUADRATURE_POINTS as f64 * (t_end / self.piece_max(t_end) + breakpoints + 1.0)
    }

    /// The number of quadrature nodes that [`Self::state_at`] visits on [0, t_end]: 16 per
    /// piece. Lists the breakpoints, so call it once [`Self::node_bound`] is affordable.
    pub fn nodes(&self, t_end: f64) -> u64 {
        self.windows(t_end)
            .iter()
            .map(|w| (QUADRATURE_POINTS * w.pieces) as u64)
            .sum()
    }

    /// [0, t_end] split at the input breakpoints (pulse edges, square-wave edges, CSV
    /// knots), each window cut into ⌈|w| / δ_max⌉ (at least one) equal pieces.
    fn windows(&self, t_end: f64) -> Vec<Window> {
        let mut cuts: Vec<f64> = self
            .signals
            .iter()
            .flat_map(|s| s.breakpoints(t_end))
            .collect();
        cuts.push(0.0);
        cuts.push(t_end);
        cuts.sort_by(f64::total_cmp);
        cuts.dedup_by(|a, b| (*a - *b).abs() <= 1e-14 * t_end.max(1.0));
        let piece_max = self.piece_max(t_end);
        cuts.windows(2)
            .map(|pair| {
                let (start, end) = (pair[0], pair[1]);
                Window {
                    start,
                    end,
                    pieces: ((end - start) / piece_max).ceil().max(1.0) as usize,
                }
            })
            .collect()
    }

    /// x(t_end) from x(0) = x0.
    pub fn state_at(&self, x0: &DVector<f64>, t_end: f64) -> DVector<f64> {
        self.state_at_with_progress(x0, t_end, &mut |_| {})
    }

    /// [`Self::state_at`], calling `progress` with the number of quadrature nodes done so
    /// far (of [`Self::nodes`]) after every piece.
    pub fn state_at_with_progress(
        &self,
        x0: &DVector<f64>,
        t_end: f64,
        progress: &mut dyn FnMut(u64),
    ) -> DVector<f64> {
        let n = x0.len();
        let homogeneous = (&self.drift * t_end).exp() * x0;
        let mut sums: Vec<CompensatedSum> = vec![CompensatedSum::default(); n];
        for r in 0..n {
            sums[r].add(homogeneous[r]);
        }
        let mut u = DVector::zeros(self.signals.len());
        let mut done = 0u64;
        for window in self.windows(t_end) {
            let width = (window.end - window.start) / window.pieces as f64;
            for piece in 0..window.pieces {
                let t = window.start + piece as f64 * width;
                for (&sigma, &w) in self.nodes.iter().zip(&self.weights) {
                    let s = t + sigma * width;
                    for (slot, signal) in u.iter_mut().zip(self.signals) {
                        *slot = signal.value(s);
                    }
                    let forcing = &self.system.b * &u;
                    if forcing.amax() == 0.0 {
                        continue;
                    }
                    let contribution = (&self.drift * (t_end - s)).exp() * forcing * (w * width);
                    for r in 0..n {
                        sums[r].add(contribution[r]);
                    }
                }
                done += QUADRATURE_POINTS as u64;
                progress(done);
            }
        }
        DVector::from_iterator(n, sums.iter().map(CompensatedSum::value))
    }

    /// ΔH_tot = H(x(t_end)) − H(x(0)), the exact change of stored energy.
    pub fn energy_change(&self, x0: &DVector<f64>, t_end: f64) -> f64 {
        self.energy_change_with_progress(x0, t_end, &mut |_| {})
    }

    /// [`Self::energy_change`] with the progress of [`Self::state_at_with_progress`].
    pub fn energy_change_with_progress(
        &self,
        x0: &DVector<f64>,
        t_end: f64,
        progress: &mut dyn FnMut(u64),
    ) -> f64 {
        let x1 = self.state_at_with_progress(x0, t_end, progress);
        // ½ (x1 − x0)ᵀ Q (x1 + x0) avoids cancelling two large energies.
        0.5 * (&x1 - x0).dot(&(&self.system.q * (&x1 + x0)))
    }
}

/// An upper bound of the number of breakpoints `signal` has in (0, t_end), without listing
/// them: 2 for a pulse, the sample count for CSV samples, 2 (f t_end + 3) for a square wave
/// of frequency f = |ω|/2π (two edges per period, plus the periods the phase shifts in),
/// and 0 for smooth signals.
fn breakpoint_bound(signal: &Signal, t_end: f64) -> f64 {
    match signal {
        Signal::Pulse { .. } => 2.0,
        Signal::Samples { times, .. } => times.len() as f64,
        Signal::Square { omega, .. } => 2.0 * (omega.abs() / (2.0 * PI) * t_end + 3.0),
        _ => 0.0,
    }
}
