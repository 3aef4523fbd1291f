//! The work of a linear system's energy-order study, estimated before any of it is done
//! and held to a cap: quadrature nodes of the exact reference flow. (The sweep's scheme
//! steps are capped for every family by the study itself.)

use crate::error::{Error, Result};
use crate::linear_ph::LinearFlow;
use crate::linear_ph::reference_flow::QUADRATURE_POINTS;
use crate::model::Signal;

/// The most reference work a study may take, in quadrature nodes of a 2-state system: the
/// reference flow's node bound ([`LinearFlow::node_bound`]) weighted by max(1, (n/2)³),
/// since each node costs one n×n matrix exponential. Measured at n = 2: about 1.5–2 µs per
/// node on one core, so the cap is a few minutes of reference work.
pub const MAX_REFERENCE_WORK: f64 = 1e8;

/// The work of a study, bounded before any of it is done.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkEstimate {
    /// State size n.
    pub states: usize,
    /// ‖(J − R) Q‖_∞.
    pub drift_norm: f64,
    /// The highest input frequency f_max in Hz.
    pub max_frequency: f64,
    /// The longest reference piece δ_max = min(1/(4‖L‖_∞), 1/20, 1/(20 f_max)).
    pub piece_max: f64,
    /// Upper bound of the reference flow's quadrature nodes, 16 (t_end/δ_max + b + 1).
    pub reference_nodes: f64,
    /// `reference_nodes` × max(1, (n/2)³), compared with [`MAX_REFERENCE_WORK`].
    pub reference_work: f64,
    /// Scheme steps Σ_schemes Σ_h t_end / h (capped by the study,
    /// `energy_order::MAX_SWEEP_STEPS`).
    pub sweep_steps: u64,
    /// Number of (scheme, h) points.
    pub points: usize,
}

impl WorkEstimate {
    /// The estimate of `flow` over [0, t_end] and a sweep of `points` points taking
    /// `sweep_steps` steps in all.
    pub fn of(
        flow: &LinearFlow,
        states: usize,
        t_end: f64,
        sweep_steps: u64,
        points: usize,
    ) -> Self {
        let reference_nodes = flow.node_bound(t_end);
        WorkEstimate {
            states,
            drift_norm: flow.drift_norm(),
            max_frequency: flow.max_frequency(t_end),
            piece_max: flow.piece_max(t_end),
            reference_nodes,
            reference_work: reference_nodes * (states as f64 / 2.0).powi(3).max(1.0),
            sweep_steps,
            points,
        }
    }
}

/// Refuses an estimate over a cap, naming the setting that drives it.
pub(super) fn check_work(estimate: &WorkEstimate, signals: &[Signal], t_end: f64) -> Result<()> {
    let e = estimate;
    if e.reference_work.is_nan() || e.reference_work > MAX_REFERENCE_WORK {
        // What sets δ_max: the drift, an input's frequency, or only the 1/20 ceiling.
        let drift_limited = 0.25 / e.drift_norm.max(1e-300) <= e.piece_max;
        let fastest = signals
            .iter()
            .enumerate()
            .max_by(|a, b| {
                a.1.max_frequency(t_end)
                    .total_cmp(&b.1.max_frequency(t_end))
            })
            .map(|(i, _)| i);
        let field = match fastest {
            _ if drift_limited => "system".to_string(),
            Some(i) if e.max_frequency > 0.0 && 0.05 / e.max_frequency <= e.piece_max => {
                format!("input[{i}]")
            }
            _ if e.reference_nodes > 2.0 * QUADRATURE_POINTS as f64 * t_end / e.piece_max => {
                "input".to_string()
            }
            _ => "scheme.t_end".to_string(),
        };
        return Err(Error::invalid(
            field,
            format!(
                "the exact reference flow would take up to {:.3e} quadrature nodes (each a {n}×{n} matrix exponential; work {:.3e} with weight max(1, (n/2)³)), above the cap of {MAX_REFERENCE_WORK:.0e} (energy_order::MAX_REFERENCE_WORK, minutes of CPU time): pieces may be at most δ_max = min(1/(4‖(J − R)Q‖_∞), 1/20, 1/(20 f_max)) = {:.3e} with ‖(J − R)Q‖_∞ = {:.3e} and the highest input frequency f_max = {:.3e} Hz, over t_end = {t_end}; reduce scheme.t_end, the scale of system.J/R/Q, the input frequency, or the number of input breakpoints",
                e.reference_nodes,
                e.reference_work,
                e.piece_max,
                e.drift_norm,
                e.max_frequency,
                n = e.states,
            ),
        ));
    }
    Ok(())
}
