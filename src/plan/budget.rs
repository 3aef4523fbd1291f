//! The host memory a run is planned in. Results travel from a backend to the files in
//! chunks of members; the budget bounds how many members' results are in flight, so a run
//! of any size streams with bounded memory. One knob (`--memory-budget`, or the
//! `HARBOR_MEMORY_BUDGET` environment variable) sets it.

use crate::error::{Error, Result};

/// Bytes in a gibibyte.
pub const GIB: u64 = 1 << 30;

/// The host memory a run plans for: results in flight, the sink's copy of them while it
/// writes, the GPU's staging of a chunk, the cached shared stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryBudget {
    bytes: u64,
}

impl Default for MemoryBudget {
    /// 1 GiB.
    fn default() -> Self {
        MemoryBudget { bytes: GIB }
    }
}

/// The smallest budget accepted: one chunk must hold at least a few members' records.
pub const MIN_MEMORY_BUDGET: u64 = 16 << 20;

impl MemoryBudget {
    /// A budget of `bytes`, at least [`MIN_MEMORY_BUDGET`]; `field` names the setting in
    /// errors.
    pub fn new(field: &str, bytes: u64) -> Result<Self> {
        if bytes < MIN_MEMORY_BUDGET {
            return Err(Error::invalid(
                field,
                format!(
                    "must be at least {} (16 MiB), got {}",
                    format_bytes(MIN_MEMORY_BUDGET),
                    format_bytes(bytes)
                ),
            ));
        }
        Ok(MemoryBudget { bytes })
    }

    /// Parses `512MiB`, `2GiB`, `1.5GB`, `1e9` or a plain byte count (binary units KiB,
    /// MiB, GiB, TiB; decimal kB, MB, GB, TB; case-insensitive, spaces allowed).
    pub fn parse(field: &str, text: &str) -> Result<Self> {
        let trimmed = text.trim();
        let split = trimmed
            .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            .unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        let not_a_size = || {
            Error::invalid(
                field,
                format!("`{text}` is not a size (write e.g. 512MiB, 2GiB or 1e9)"),
            )
        };
        if number.trim().is_empty() {
            return Err(not_a_size());
        }
        let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "k" | "kib" => 1024.0,
            "m" | "mib" => 1024.0 * 1024.0,
            "g" | "gib" => GIB as f64,
            "t" | "tib" => 1024.0 * GIB as f64,
            "kb" => 1e3,
            "mb" => 1e6,
            "gb" => 1e9,
            "tb" => 1e12,
            other => {
                return Err(Error::invalid(
                    field,
                    format!(
                        "unknown unit `{other}` in `{text}` (use B, KiB, MiB, GiB, TiB, kB, MB, GB or TB)"
                    ),
                ));
            }
        };
        let value: f64 = number.trim().parse().map_err(|_| not_a_size())?;
        let bytes = value * scale;
        if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
            return Err(Error::invalid(
                field,
                format!("`{text}` is not a byte count between 0 and 2⁶⁴"),
            ));
        }
        MemoryBudget::new(field, bytes as u64)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes of results a backend may hold before handing them to the sink: a quarter of
    /// the budget, since the sink copies a chunk while writing it and a GPU chunk is staged
    /// once more in the device's precision.
    pub fn results(&self) -> usize {
        usize::try_from(self.bytes / 4).unwrap_or(usize::MAX)
    }
}

/// Members per chunk so that a chunk's results stay within `budget` bytes.
pub fn members_within(budget: usize, per_member: usize) -> usize {
    (budget / per_member.max(1)).max(1)
}

/// `1.50 GiB`, `512 MiB`, `12 KiB`, `100 B`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        let bytes = |t: &str| MemoryBudget::parse("--memory-budget", t).unwrap().bytes();
        assert_eq!(bytes("512MiB"), 512 << 20);
        assert_eq!(bytes("2 GiB"), 2 << 30);
        assert_eq!(bytes("1.5gb"), 1_500_000_000);
        assert_eq!(bytes("1e9"), 1_000_000_000);
        assert_eq!(bytes("33554432"), 32 << 20);
        for bad in ["", "lots", "5 parsecs", "-1GiB", "1e400", "1MiB"] {
            let error = MemoryBudget::parse("--memory-budget", bad)
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("--memory-budget: "), "{bad}: {error}");
        }
    }

    #[test]
    fn bytes_print_in_binary_units() {
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_bytes(3 << 29), "1.50 GiB");
        assert_eq!(format_bytes(512 << 20), "512.00 MiB");
    }
}
