//! `harbor study …`: numerical studies written atomically, then printed.

use std::path::Path;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use harbor::backend::gpu::{GpuContext, Precision};
use harbor::io::Config;
use harbor::io::output_target::OutputTarget;
use harbor::study::energy_order;
use harbor::{Error, Result};

use crate::DeviceArgs;

pub fn study_precision_drift(
    config_path: &Path,
    out: &Path,
    steps: &[usize],
    adapter: Option<&str>,
    overrides: &[String],
) -> Result<()> {
    let config = Config::load(config_path, overrides)?;
    let target = OutputTarget::prepare(out)?;
    let selector = crate::environment::adapter_selector(adapter);
    let f32 = GpuContext::open_with(selector.as_ref(), Some(Precision::F32))?;
    eprintln!("GPU: {}", f32.adapter.describe());
    let f64 = if f32.adapter.shader_f64 {
        Some(GpuContext::open_with(
            selector.as_ref(),
            Some(Precision::F64),
        )?)
    } else {
        None
    };
    let mut contexts = vec![&f32];
    contexts.extend(f64.as_ref());
    let rows = harbor::study::precision_drift::run_study(&config, steps, &contexts)?;
    target.write(|dir| {
        let path = dir.join("precision_drift.csv");
        std::fs::write(&path, harbor::study::precision_drift::csv(&rows))
            .map_err(|e| Error::io(&path, e))
    })?;
    say_inline!("{}", harbor::study::precision_drift::table(&rows));
    say!("\nwrote {}/precision_drift.csv", out.display());
    Ok(())
}

pub fn study_contact_energy(
    config_path: &Path,
    out: &Path,
    device: &DeviceArgs,
    overrides: &[String],
) -> Result<()> {
    let budget = device.budget()?;
    let config = Config::load(config_path, overrides)?;
    let plan = harbor::contact::plan_from_config(&config)?;
    let target = OutputTarget::prepare(out)?;
    let backend = device.open(true)?;
    let study = harbor::contact::energy_study::run(&plan, &backend, &budget)?;
    let title = format!(
        "damped oscillator: contact {} vs Verlet with damping as a force, h = {}",
        plan.method().label(),
        plan.grid().h
    );
    target.write(|dir| {
        let path = dir.join("contact_energy.csv");
        std::fs::write(&path, study.csv()).map_err(|e| Error::io(&path, e))?;
        harbor::io::plot::panels_svg(&dir.join("contact_energy.svg"), &title, &study.panels())
    })?;
    say_inline!("{}", study.table());
    say!(
        "\nwrote {}/{{contact_energy.csv, contact_energy.svg}}",
        out.display()
    );
    Ok(())
}

pub fn study_contact_spin_orbit(
    config_path: &Path,
    out: &Path,
    device: &DeviceArgs,
    overrides: &[String],
) -> Result<()> {
    let budget = device.budget()?;
    let config = Config::load(config_path, overrides)?;
    let plan = harbor::contact::plan_from_config(&config)?;
    let target = OutputTarget::prepare(out)?;
    let backend = device.open(true)?;
    let study = harbor::contact::spin_orbit_study::run(&plan, &backend, &budget)?;
    let title = format!(
        "spin–orbit capture into resonance: contact {}, h = {}",
        plan.method().label(),
        plan.grid().h
    );
    target.write(|dir| {
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
        };
        write("contact_spin_orbit.csv", study.csv())?;
        write("contact_spin_orbit_section.csv", study.section_csv())?;
        harbor::io::plot::panels_svg(&dir.join("contact_spin_orbit.svg"), &title, &study.panels())
    })?;
    say_inline!("{}", study.table());
    say!(
        "\nwrote {}/{{contact_spin_orbit.csv, contact_spin_orbit_section.csv, contact_spin_orbit.svg}}",
        out.display()
    );
    Ok(())
}

pub fn study_energy_order(config_path: &Path, out: &Path, overrides: &[String]) -> Result<()> {
    let config = Config::load(config_path, overrides)?;
    let target = OutputTarget::prepare(out)?;
    // The whole sweep is checked and its work bounded before any of it runs.
    let prepared = energy_order::prepare(&config)?;
    eprintln!(
        "energy-order runs on the CPU in f64 (reference path, no GPU): {} point(s) of {} scheme(s) × {} step size(s), {} scheme steps in all; {}",
        prepared.points(),
        prepared.schemes.len(),
        config.study.h.len(),
        prepared.sweep_steps,
        prepared.describe_reference()
    );
    let progress = LateProgress::new(prepared.total_work());
    let study = prepared.run(&mut |p| progress.update(p.done, p.stage))?;
    drop(progress);
    let title = format!(
        "{}: relative energy errors, CPU f64 (supplied ●, stored ×{})",
        config_path
            .file_stem()
            .map_or_else(|| "study".into(), |s| s.to_string_lossy().into_owned()),
        if study.has_zero_errors() {
            format!(
                ", error exactly 0 ▲ drawn at {:.0e}",
                study.zero_error_floor()
            )
        } else {
            String::new()
        }
    );
    target.write(|dir| {
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
        };
        write("energy_order.csv", study.points_csv())?;
        write("energy_order_slopes.csv", study.fits_csv())?;
        study.svg(&dir.join("energy_order.svg"), &title)
    })?;
    say_inline!("{}", study.table());
    say!(
        "\nwrote {}/{{energy_order.csv, energy_order_slopes.csv, energy_order.svg}}",
        out.display()
    );
    Ok(())
}

/// A progress bar on stderr that appears only once the work has taken more than a second,
/// as the simulate command's does.
struct LateProgress {
    bar: ProgressBar,
    started: Instant,
    shown: std::cell::Cell<bool>,
}

impl LateProgress {
    fn new(total: u64) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40} {percent:>3}% {human_pos}/{human_len} work units (reference, then scheme steps), eta {eta} — {msg}",
            )
            .expect("the template is valid"),
        );
        LateProgress {
            bar,
            started: Instant::now(),
            shown: std::cell::Cell::new(false),
        }
    }

    fn update(&self, done: u64, stage: &str) {
        if !self.shown.get() && self.started.elapsed().as_secs_f64() > 1.0 {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown.set(true);
        }
        if self.bar.message() != stage {
            self.bar.set_message(stage.to_string());
        }
        self.bar.set_position(done);
    }
}

impl Drop for LateProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

pub fn study_gradient_fd(
    config_path: &Path,
    out: &Path,
    steps: &[f64],
    seed: u64,
    device: &DeviceArgs,
    overrides: &[String],
) -> Result<()> {
    if let Some(bad) = steps.iter().find(|t| !(t.is_finite() && **t > 0.0)) {
        return Err(Error::invalid(
            "--steps",
            format!("must be finite numbers > 0, got {bad}"),
        ));
    }
    let budget = device.budget()?;
    let config = harbor::io::gradient_spec::GradientConfig::load(config_path, overrides)?;
    let problem = config.problem(&budget)?;
    let target = OutputTarget::prepare(out)?;
    let backend = device.open_for(&problem.plan)?;
    let study = harbor::study::gradient_fd::run(&backend, &budget, &problem.plan, steps, seed)?;
    target.write(|dir| {
        let path = dir.join("gradient_fd.csv");
        std::fs::write(&path, study.csv()).map_err(|e| Error::io(&path, e))
    })?;
    say!(
        "the seed's gradient check (§5.1) on harbor's exact discrete gradient, backend {}:",
        backend.label()
    );
    say_inline!("{}", study.table());
    say!("\nwrote {}/gradient_fd.csv", out.display());
    Ok(())
}
