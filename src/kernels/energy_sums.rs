//! The host twin of `shaders/shared/energy_balance.wgsl`, the energy bookkeeping of every
//! kernel that steps a discrete-time port-Hamiltonian system: per member the run's totals
//! and the current recording window's sums of [stored, supplied, port, dissipated], each
//! Neumaier-compensated, and the largest per-step |stored − supplied|, kept in the member's
//! state between dispatches and decoded into the totals of
//! [`crate::plan::energy_balance::ENERGY_TOTALS`].

use super::family::KernelSource;
use super::layout::{Layout, MemberView};
use super::twin::Strided;
use crate::compensated::{CompensatedSum, running_max};

/// Declares, after the fields of `layout`, the state fields the WGSL module reads and
/// writes: 4 totals and their compensations, 4 window sums and their compensations, the
/// largest residual.
pub fn energy_state_fields(layout: Layout) -> Layout {
    layout
        .field("totals", 4)
        .field("totals_comp", 4)
        .field("window", 4)
        .field("window_comp", 4)
        .field("max_residual", 1)
}

/// The values of `ENERGY_TOTALS` from a member's final state: each total plus its
/// compensation, then the largest residual.
pub fn decode_energy_totals(state: &MemberView) -> Vec<f64> {
    let mut totals: Vec<f64> = (0..4)
        .map(|c| state.get("totals", c) + state.get("totals_comp", c))
        .collect();
    totals.push(state.get("max_residual", 0));
    totals
}

/// The energy sums a member carries across steps (`EnergySums` of the WGSL module).
pub struct EnergySums {
    totals: [CompensatedSum; 4],
    window: [CompensatedSum; 4],
    max_residual: f64,
}

impl EnergySums {
    /// `load_sums`.
    pub fn load(kernel: &KernelSource, state: &Strided) -> Self {
        let layout = &kernel.state;
        let sum = |value: &str, comp: &str, c: usize| {
            CompensatedSum::from_parts(
                state.get(layout.offset(value) + c),
                state.get(layout.offset(comp) + c),
            )
        };
        EnergySums {
            totals: std::array::from_fn(|c| sum("totals", "totals_comp", c)),
            window: std::array::from_fn(|c| sum("window", "window_comp", c)),
            max_residual: state.get(layout.offset("max_residual")),
        }
    }

    /// `store_sums`.
    pub fn store(&self, kernel: &KernelSource, state: &Strided) {
        let layout = &kernel.state;
        for c in 0..4 {
            let (total, total_comp) = self.totals[c].parts();
            let (window, window_comp) = self.window[c].parts();
            state.set(layout.offset("totals") + c, total);
            state.set(layout.offset("totals_comp") + c, total_comp);
            state.set(layout.offset("window") + c, window);
            state.set(layout.offset("window_comp") + c, window_comp);
        }
        state.set(layout.offset("max_residual"), self.max_residual);
    }

    /// `accumulate`: adds one step's stored energy and port and dissipated work, with
    /// supplied = port − dissipated.
    pub fn accumulate(&mut self, stored: f64, port: f64, dissipated: f64) {
        let supplied = port - dissipated;
        let energies = [stored, supplied, port, dissipated];
        for ((total, window), energy) in self.totals.iter_mut().zip(&mut self.window).zip(energies)
        {
            total.add(energy);
            window.add(energy);
        }
        self.max_residual = running_max(self.max_residual, (stored - supplied).abs());
    }

    /// `record_window`: the window's energies into the record slot whose first entry is
    /// `base`, and a new window.
    pub fn record_window(&mut self, kernel: &KernelSource, records: &Strided, base: usize) {
        let energy = kernel.record.offset("energy");
        for c in 0..4 {
            records.set(base + energy + c, self.window[c].value());
            self.window[c] = CompensatedSum::default();
        }
    }
}
