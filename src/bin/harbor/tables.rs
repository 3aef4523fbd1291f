//! `harbor tableau`, `harbor splitting`, `harbor devices`: tables printed from the library.

use harbor::backend::gpu::list_adapters;
use harbor::tableau::{Composition, Family as TableauFamily, Tableau};
use harbor::{Error, Result};
use serde_json::json;

pub fn tableau(family: &str, stages: usize, as_json: bool) -> Result<()> {
    let family = TableauFamily::parse(family).ok_or_else(|| {
        Error::invalid(
            "family",
            format!("unknown family {family:?}: expected gauss, lobatto-iiia or lobatto-iiib"),
        )
    })?;
    let t = Tableau::new(family, stages)?;
    if as_json {
        let doc = json!({
            "family": family.name(),
            "stages": t.stages,
            "order": t.order,
            "c": t.c,
            "b": t.b,
            "a": t.a_rows(),
            "m": t.m_rows(),
        });
        say!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("JSON values always serialise")
        );
        return Ok(());
    }
    say!(
        "{} with s = {}, order {}\n",
        family.name(),
        t.stages,
        t.order
    );
    let cell = |v: f64| format!("{:>24}", format!("{v:.17e}"));
    say!("{:>24} |{:>24}", "c", "a");
    for i in 0..t.stages {
        let row: String = (0..t.stages).map(|j| cell(t.a[(i, j)])).collect();
        say!("{} |{row}", cell(t.c[i]));
    }
    say!(
        "{:>24} |{}",
        "b",
        t.b.iter().map(|&v| cell(v)).collect::<String>()
    );
    say!("\nM (m_ij = ∫₀¹ ℓ_i ℓ_j)");
    for i in 0..t.stages {
        say!(
            "{:>24} |{}",
            "",
            (0..t.stages).map(|j| cell(t.m[(i, j)])).collect::<String>()
        );
    }
    Ok(())
}

pub fn splitting(name: Option<&str>, as_json: bool, list: bool) -> Result<()> {
    if list {
        let all = Composition::all();
        if as_json {
            let docs: Vec<_> = all.iter().map(Composition::to_json).collect();
            say!(
                "{}",
                serde_json::to_string_pretty(&docs).expect("JSON values always serialise")
            );
            return Ok(());
        }
        say!("{:<14} {:>6} {:>6}  source", "name", "stages", "order");
        for c in all {
            say!(
                "{:<14} {:>6} {:>6}  {}",
                c.name,
                c.stages(),
                c.order,
                c.source
            );
        }
        return Ok(());
    }
    let name = name.unwrap_or_default();
    let c = Composition::by_name(name).map_err(|e| match e {
        Error::Invalid { problem, .. } => Error::invalid("name", problem),
        other => other,
    })?;
    if as_json {
        say!(
            "{}",
            serde_json::to_string_pretty(&c.to_json()).expect("JSON values always serialise")
        );
        return Ok(());
    }
    say!(
        "{}: order {}, {} stage(s) of the Strang step S(γ_i h)\nsource: {}\n",
        c.name,
        c.order,
        c.stages(),
        c.source
    );
    for (i, g) in c.coefficients.iter().enumerate() {
        say!("γ_{:<3} {g:>25.17e}", i + 1);
    }
    Ok(())
}

pub fn devices(as_json: bool) -> Result<()> {
    let adapters = list_adapters();
    if as_json {
        say!(
            "{}",
            serde_json::to_string_pretty(&adapters).expect("JSON values always serialise")
        );
        return Ok(());
    }
    if adapters.is_empty() {
        say!(
            "no GPU adapters found (install a Vulkan driver; lavapipe runs on the CPU); harbor will use the CPU path"
        );
        return Ok(());
    }
    say!(
        "{:<3} {:<40} {:<8} {:<13} {:<28} {:>4} {:>16} {:>12} {:>10}",
        "#",
        "adapter",
        "backend",
        "type",
        "driver",
        "f64",
        "storage binding",
        "max buffer",
        "wg/dim"
    );
    for (i, a) in adapters.iter().enumerate() {
        say!(
            "{:<3} {:<40} {:<8} {:<13} {:<28} {:>4} {:>12} MiB {:>8} MiB {:>10}",
            i,
            a.name,
            a.backend,
            a.device_type,
            format!("{} {}", a.driver, a.driver_info).trim(),
            if a.shader_f64 { "yes" } else { "no" },
            a.max_storage_buffer_binding_size >> 20,
            a.max_buffer_size >> 20,
            a.max_compute_workgroups_per_dimension
        );
    }
    say!(
        "
auto picks #0; choose another with --adapter <substring> or HARBOR_ADAPTER"
    );
    Ok(())
}
