//! `harbor study …`: numerical studies written atomically, then printed.

use std::path::Path;

use harbor::backend::gpu::context::adapter_selector;
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
    let selector = adapter_selector(adapter);
    let f32 = GpuContext::open(selector.as_deref(), Some(Precision::F32))?;
    eprintln!("GPU: {}", f32.adapter.describe());
    let f64 = if f32.adapter.shader_f64 {
        Some(GpuContext::open(selector.as_deref(), Some(Precision::F64))?)
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
    let config = Config::load(config_path, overrides)?;
    let plan = config.contact_plan()?;
    let target = OutputTarget::prepare(out)?;
    let backend = device.open(true)?;
    let study = harbor::study::contact_energy::run(&plan, &backend)?;
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

pub fn study_energy_order(config_path: &Path, out: &Path, overrides: &[String]) -> Result<()> {
    let config = Config::load(config_path, overrides)?;
    let target = OutputTarget::prepare(out)?;
    let study = energy_order::run(&config)?;
    let title = format!(
        "{}: relative energy errors (supplied ●, stored ×)",
        config_path
            .file_stem()
            .map_or_else(|| "study".into(), |s| s.to_string_lossy().into_owned())
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
