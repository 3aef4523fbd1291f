//! `harbor study precision-drift`: how far the GPU path drifts from the f64 CPU reference
//! over long runs, in each precision. For every requested step count N the configured run is
//! repeated with t_end = N h and compared at the end:
//!
//! ```text
//!   state error  = max_members ‖x_N − x_N^ref‖∞ / max(‖x_N^ref‖∞, ‖x_0‖∞)
//!   energy error = max_members |ΔH̄_tot − ΔH̄_tot^ref| / max(H(x_0), |ΔH̄_tot^ref|)
//!   balance      = max_members max_k |ΔH̄^k − ΔH̃^k| / max(H(x_0), |ΔH̄_tot^ref|)
//! ```

use crate::backend::Backend;
use crate::backend::gpu::{ExecutorOptions, GpuContext, run_into};
use crate::error::{Error, Result};
use crate::io::config::Config;
use crate::kernels::CpuPath;
use crate::linear_ph::LinearPhConfig;
use crate::linear_ph::{EnergyTotals, LinearPhPlan};
use crate::plan::MemberResult;
use crate::results::Results;

/// One (precision, N) measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftRow {
    pub precision: String,
    pub steps: usize,
    pub state_error: f64,
    pub energy_error: f64,
    pub balance_residual: f64,
    pub gpu_seconds: f64,
}

fn compare(reference: &Results, device: &Results, plan: &LinearPhPlan) -> Result<(f64, f64, f64)> {
    let (mut state, mut energy, mut balance) = (0.0_f64, 0.0_f64, 0.0_f64);
    for (i, (r, d)) in reference.members.iter().zip(&device.members).enumerate() {
        let member = plan.ensemble.member(i)?;
        let x0_scale = member.x0.amax();
        let h0 = member.system.hamiltonian(&member.x0);
        let state_scale = r
            .final_state
            .iter()
            .fold(x0_scale, |m, v| m.max(v.abs()))
            .max(1e-300);
        let gap = r
            .final_state
            .iter()
            .zip(&d.final_state)
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
        state = state.max(gap / state_scale);
        let energy_scale = h0.max(EnergyTotals::of(r).stored.abs()).max(1e-300);
        energy = energy
            .max((EnergyTotals::of(r).stored - EnergyTotals::of(d).stored).abs() / energy_scale);
        balance = balance.max(EnergyTotals::of(d).max_abs_residual / energy_scale);
    }
    Ok((state, energy, balance))
}

/// Runs the study on `contexts` (one per precision).
pub fn run_study(
    config: &Config,
    steps: &[usize],
    contexts: &[&GpuContext],
) -> Result<Vec<DriftRow>> {
    let mut rows = Vec::new();
    for &n in steps {
        if n == 0 {
            return Err(Error::invalid("--steps", "step counts must be ≥ 1"));
        }
        let mut cfg = config.clone();
        cfg.scheme.t_end = n as f64 * cfg.scheme.h;
        cfg.output.every = n;
        let plan = cfg.plan()?;
        let reference = Backend::Cpu(CpuPath::Reference).run(&plan)?;
        for ctx in contexts {
            let started = std::time::Instant::now();
            let mut members: Vec<MemberResult> = Vec::new();
            run_into(ctx, &plan, &ExecutorOptions::default(), &mut members)?;
            let device = Results::new(&plan, "gpu", ctx.precision, members);
            let gpu_seconds = started.elapsed().as_secs_f64();
            let (state_error, energy_error, balance_residual) =
                compare(&reference, &device, &plan)?;
            rows.push(DriftRow {
                precision: ctx.precision.name().into(),
                steps: n,
                state_error,
                energy_error,
                balance_residual,
                gpu_seconds,
            });
        }
    }
    Ok(rows)
}

/// The printed table.
pub fn table(rows: &[DriftRow]) -> String {
    let mut out = format!(
        "{:<5} {:>9} {:>12} {:>12} {:>14} {:>9}\n",
        "prec", "steps", "state err", "energy err", "balance resid", "GPU s"
    );
    for r in rows {
        out += &format!(
            "{:<5} {:>9} {:>12.3e} {:>12.3e} {:>14.3e} {:>9.2}\n",
            r.precision, r.steps, r.state_error, r.energy_error, r.balance_residual, r.gpu_seconds
        );
    }
    out
}

/// CSV of the rows.
pub fn csv(rows: &[DriftRow]) -> String {
    let mut out =
        String::from("precision,steps,state_error,energy_error,balance_residual,gpu_seconds\n");
    for r in rows {
        out += &format!(
            "{},{},{:.6e},{:.6e},{:.6e},{:.3}\n",
            r.precision, r.steps, r.state_error, r.energy_error, r.balance_residual, r.gpu_seconds
        );
    }
    out
}
