//! `harbor tableau`, `harbor splitting`, `harbor devices`: tables printed from the library.

use harbor::backend::gpu::context::AdapterSummary;
use harbor::backend::gpu::list_adapters;
use harbor::tableau::{Composition, NamedTableau, Tableau};
use harbor::{Error, Result};

/// `harbor tableau FAMILY STAGES`: the Butcher table with its mass matrix M as text or
/// JSON; `lobatto-pair` prints both tables of the pair (IIIA on positions, IIIB on momenta,
/// which share c, b and M).
pub fn tableau(family: &str, stages: usize, as_json: bool) -> Result<()> {
    let table = NamedTableau::new(family, stages)?;
    if as_json {
        say!(
            "{}",
            serde_json::to_string_pretty(&table.json()).expect("JSON values always serialise")
        );
        return Ok(());
    }
    match &table {
        NamedTableau::Collocation(family, t) => {
            say!(
                "{} with s = {}, order {}\n",
                family.name(),
                t.stages,
                t.order
            );
            print_butcher(t);
            print_mass(t);
        }
        NamedTableau::Pair(pair) => {
            say!(
                "lobatto-pair with s = {}, order {}: lobatto-iiia on the positions q, lobatto-iiib on the momenta p (same c, b and M)\n",
                pair.stages(),
                pair.order()
            );
            say!("positions q: lobatto-iiia");
            print_butcher(&pair.positions);
            say!("\nmomenta p: lobatto-iiib");
            print_butcher(&pair.momenta);
            print_mass(&pair.positions);
        }
    }
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
    for line in adapter_table(&adapters) {
        say!("{line}");
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

/// The lines of the `devices` table: a header, then one row per adapter, every column as
/// wide as its widest entry, the driver (whose Mesa strings run long) last.
fn adapter_table(adapters: &[AdapterSummary]) -> Vec<String> {
    let header = [
        "#",
        "adapter",
        "backend",
        "type",
        "f64",
        "storage binding",
        "max buffer",
        "wg/dim",
        "driver",
    ];
    let right_aligned = [true, false, false, false, true, true, true, true, false];
    let mut rows = vec![header.map(String::from).to_vec()];
    for (i, a) in adapters.iter().enumerate() {
        rows.push(vec![
            i.to_string(),
            a.name.clone(),
            a.backend.clone(),
            a.device_type.clone(),
            if a.shader_f64 { "yes" } else { "no" }.into(),
            format!("{} MiB", a.max_storage_buffer_binding_size >> 20),
            format!("{} MiB", a.max_buffer_size >> 20),
            a.max_compute_workgroups_per_dimension.to_string(),
            format!("{} {}", a.driver, a.driver_info).trim().to_string(),
        ]);
    }
    aligned(&rows, &right_aligned)
}

/// `rows` as lines of columns separated by two spaces, each column padded to its widest
/// entry (counted in characters), right-aligned where `right_aligned` says; the last
/// column is not padded.
fn aligned(rows: &[Vec<String>], right_aligned: &[bool]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|row| row.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    let width = if c + 1 == columns { 0 } else { widths[c] };
                    if right_aligned.get(c).copied().unwrap_or(false) {
                        format!("{cell:>width$}")
                    } else {
                        format!("{cell:<width$}")
                    }
                })
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(name: &str, driver: &str, driver_info: &str) -> AdapterSummary {
        AdapterSummary {
            name: name.into(),
            backend: "Vulkan".into(),
            device_type: "Cpu".into(),
            software: true,
            driver: driver.into(),
            driver_info: driver_info.into(),
            shader_f64: true,
            max_storage_buffer_binding_size: 128 << 20,
            max_buffer_size: 1 << 31,
            max_compute_workgroups_per_dimension: 65535,
            max_compute_invocations_per_workgroup: 256,
            max_compute_workgroup_storage_size: 32768,
        }
    }

    /// A long Mesa driver string widens its own column and moves nothing else: every row
    /// has its cells at the header's columns, and the driver text is whole.
    #[test]
    fn long_driver_strings_keep_the_columns_aligned() {
        let long_driver = "Mesa 25.0.7-2ubuntu0.1~24.04.1 (LLVM 19.1.7), llvmpipe (LLVM 19.1.7, 256 bits), with a very long suffix";
        let lines = adapter_table(&[
            adapter("llvmpipe (LLVM 19.1.7, 256 bits)", "llvmpipe", long_driver),
            adapter(
                "AMD Radeon RX 7900 XTX (RADV NAVI31)",
                "radv",
                "Mesa 25.0.7",
            ),
        ]);
        assert_eq!(lines.len(), 3);
        let header = &lines[0];
        for (title, cells) in [
            ("f64", ["yes", "yes"]),
            ("storage binding", ["128 MiB", "128 MiB"]),
            ("max buffer", ["2048 MiB", "2048 MiB"]),
            ("wg/dim", ["65535", "65535"]),
        ] {
            let end = header.find(title).unwrap() + title.len();
            for (line, cell) in lines[1..].iter().zip(cells) {
                assert!(
                    line.get(..end)
                        .is_some_and(|head| head.ends_with(&format!(" {cell}"))),
                    "{title} is not {cell} right-aligned under its header:\n{header}\n{line}"
                );
            }
        }
        let driver_at = header.find("driver").unwrap();
        assert_eq!(
            &lines[1][driver_at..],
            format!("llvmpipe {long_driver}"),
            "{lines:#?}"
        );
        assert!(lines[2][driver_at..].starts_with("radv Mesa 25.0.7"));
    }
}
