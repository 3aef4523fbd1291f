//! Identification of a linear port-Hamiltonian model from input/output data: the outputs
//! of a random reference model (n = 5, m = 2; J, R and B to be found, Q = I and x0 = 0
//! fixed), Monte-Carlo initialisation, then Riemannian conjugate gradients that keep J
//! skew and R positive semidefinite at every iterate.
//!
//! It reads `examples/identify_synthetic.toml` (what `harbor identify` reads) with a
//! smaller search, and runs on the CPU.
//!
//! ```text
//! cargo run --release --example identification
//! ```

use harbor::backend::Backend;
use harbor::identify::identify;
use harbor::io::identify_spec::IdentifyConfig;
use harbor::kernels::CpuPath;
use harbor::plan::MemoryBudget;

fn main() -> harbor::Result<()> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/identify_synthetic.toml");
    let overrides = [
        "monte_carlo.candidates=256",
        "monte_carlo.keep=2",
        "optimizer.max_iterations=60",
    ]
    .map(String::from);
    let budget = MemoryBudget::default();
    let config = IdentifyConfig::load(&path, &overrides)?.problem(&budget)?;
    let backend = Backend::Cpu(CpuPath::Fast);
    let outcome = identify(
        &backend,
        &budget,
        &config.problem,
        &config.setup,
        &mut |_| Ok(()),
    )?;

    let best = outcome.best_start();
    let history = &best.history;
    println!(
        "{} evaluations; cost {:.3e} (best Monte-Carlo candidate) → {:.3e} after {} iterations",
        outcome.evaluations(),
        history[0],
        history[history.len() - 1],
        history.len() - 1
    );
    let defects = best.point.structure_defects();
    assert!(
        defects.is_empty(),
        "the fit breaks the structure: {defects:?}"
    );
    assert!(
        history[history.len() - 1] < 0.01 * history[0],
        "the descent should cut the cost a hundredfold: {history:?}"
    );
    Ok(())
}
