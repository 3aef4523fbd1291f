//! The `HARBOR_*` environment variables the CLI honours, read here and nowhere else: the
//! library takes each as an explicit option.
//!
//! - `HARBOR_SIMD`: the fast engines' SIMD level (`avx512`, `avx2`, `portable`; empty for
//!   the best), checked at start-up.
//! - `HARBOR_ADAPTER`: the adapter when `--adapter` is not given.
//! - `HARBOR_MEMORY_BUDGET`: the memory budget when `--memory-budget` is not given.
//! - `HARBOR_WORK_LIMIT`: the floating-point operations a gradient or identification
//!   problem may take.

use harbor::Result;
use harbor::backend::AdapterSelector;
use harbor::kernels::lanes::SimdLevel;
use harbor::plan::MemoryBudget;
use harbor::plan::gradient_resources::parse_work_limit;

/// `name`, when set (`Some("")` when set empty).
fn var(name: &str) -> Option<String> {
    std::env::var_os(name).map(|value| value.to_string_lossy().into_owned())
}

/// Applies `HARBOR_SIMD` when set; an unknown level or one this CPU lacks is an error
/// naming it.
pub fn select_simd_level() -> Result<()> {
    if let Some(value) = var("HARBOR_SIMD") {
        SimdLevel::select("HARBOR_SIMD", &value)?;
    }
    Ok(())
}

/// `--adapter` when given, else `HARBOR_ADAPTER` when set and non-empty.
pub fn adapter_selector(flag: Option<&str>) -> Option<AdapterSelector> {
    match flag {
        Some(pattern) => Some(AdapterSelector::new(pattern, "--adapter")),
        None => var("HARBOR_ADAPTER")
            .filter(|pattern| !pattern.is_empty())
            .map(|pattern| AdapterSelector::new(pattern, "HARBOR_ADAPTER")),
    }
}

/// `--memory-budget` when given, else `HARBOR_MEMORY_BUDGET` when set, else the default.
pub fn memory_budget(flag: Option<&str>) -> Result<MemoryBudget> {
    match (flag, var("HARBOR_MEMORY_BUDGET")) {
        (Some(text), _) => MemoryBudget::parse("--memory-budget", text),
        (None, Some(text)) => MemoryBudget::parse("HARBOR_MEMORY_BUDGET", &text),
        (None, None) => Ok(MemoryBudget::default()),
    }
}

/// `HARBOR_WORK_LIMIT` as a number of operations, when set.
pub fn work_limit() -> Result<Option<f64>> {
    var("HARBOR_WORK_LIMIT")
        .map(|text| parse_work_limit("HARBOR_WORK_LIMIT", &text))
        .transpose()
}
