//! `harbor tableau`, `harbor splitting`, `harbor devices`: tables printed from the library.

use harbor::backend::gpu::list_adapters;
use harbor::tableau::{Composition, Family as TableauFamily, LobattoPair, Tableau};
use harbor::{Error, Result};
use serde_json::json;

/// `harbor tableau FAMILY STAGES`: the Butcher table with its mass matrix M as text or
/// JSON; `lobatto-pair` prints both tables of the pair (IIIA on positions, IIIB on momenta,
/// which share c, b and M).
pub fn tableau(family: &str, stages: usize, as_json: bool) -> Result<()> {
    if family == "lobatto-pair" {
        return lobatto_pair(stages, as_json);
    }
    let family = TableauFamily::parse(family).ok_or_else(|| {
        Error::invalid(
            "family",
            format!(
                "unknown family {family:?}: expected gauss, lobatto-iiia, lobatto-iiib or lobatto-pair"
            ),
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
    print_butcher(&t);
    print_mass(&t);
    Ok(())
}

/// The Lobatto IIIA/IIIB pair as configs mean `scheme.family = "lobatto-pair"`.
fn lobatto_pair(stages: usize, as_json: bool) -> Result<()> {
    let pair = LobattoPair::new(stages).map_err(|e| match e {
        Error::Invalid { field, problem } => {
            Error::invalid(field, problem.replace("lobatto-iiia", "lobatto-pair"))
        }
        other => other,
    })?;
    let (positions, momenta) = (&pair.positions, &pair.momenta);
    if as_json {
        let doc = json!({
            "family": "lobatto-pair",
            "stages": pair.stages(),
            "order": pair.order(),
            "c": positions.c,
            "b": positions.b,
            "a_positions": positions.a_rows(),
            "a_momenta": momenta.a_rows(),
            "m": positions.m_rows(),
        });
        say!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("JSON values always serialise")
        );
        return Ok(());
    }
    say!(
        "lobatto-pair with s = {}, order {}: lobatto-iiia on the positions q, lobatto-iiib on the momenta p (same c, b and M)\n",
        pair.stages(),
        pair.order()
    );
    say!("positions q: lobatto-iiia");
    print_butcher(positions);
    say!("\nmomenta p: lobatto-iiib");
    print_butcher(momenta);
    print_mass(positions);
    Ok(())
}

/// Width of one printed coefficient.
fn cell(v: f64) -> String {
    format!("{:>24}", format!("{v:.17e}"))
}

/// The c | a rows and the b row of `t`.
fn print_butcher(t: &Tableau) {
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
}

/// The mass matrix M of `t`'s Lagrange basis, after a blank line.
fn print_mass(t: &Tableau) {
    say!("\nM (m_ij = ∫₀¹ ℓ_i ℓ_j)");
    for i in 0..t.stages {
        say!(
            "{:>24} |{}",
            "",
            (0..t.stages).map(|j| cell(t.m[(i, j)])).collect::<String>()
        );
    }
}

/// `harbor splitting`: one composition's coefficients, or the list of all.
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

/// `harbor devices`: every adapter, best first, and which one each backend choice takes.
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
    if adapters[0].software {
        say!(
            "\nevery adapter is a software rasteriser, slower than the CPU path: auto runs the CPU path, --backend gpu picks #0; choose another with --adapter <substring> or HARBOR_ADAPTER"
        );
    } else {
        say!(
            "\nauto and --backend gpu pick #0; choose another with --adapter <substring> or HARBOR_ADAPTER"
        );
    }
    Ok(())
}
