//! The bindings every family kernel sees, declared once: the WGSL declarations here and
//! the GPU backend's bind-group layout and bind groups are generated from [`BINDINGS`], and
//! the dispatch uniform's WGSL struct from [`DISPATCH_FIELDS`].

use bytemuck::{Pod, Zeroable};

use crate::error::{Error, Result};
use crate::plan::StepGrid;

/// How a kernel accesses a binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Uniform,
    Read,
    ReadWrite,
}

/// One binding of group 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binding {
    /// The WGSL variable name.
    pub name: &'static str,
    pub access: Access,
}

/// The engine's bindings, in binding-index order.
pub const BINDINGS: [Binding; 7] = [
    // The dispatch's step range and strides (`Dispatch`).
    Binding {
        name: "dispatch",
        access: Access::Uniform,
    },
    // Per-member parameters, laid out by the family.
    Binding {
        name: "params",
        access: Access::Read,
    },
    // Values shared by all members, `stream_width` per step of the dispatch.
    Binding {
        name: "stream",
        access: Access::Read,
    },
    // Per-member state (layout `STATE`), persistent across dispatches.
    Binding {
        name: "state",
        access: Access::ReadWrite,
    },
    // Record slots of the dispatch (layout `RECORD` per slot).
    Binding {
        name: "records",
        access: Access::ReadWrite,
    },
    // Run-wide constants (layout `CONST`).
    Binding {
        name: "constants",
        access: Access::Read,
    },
    // Per-member scratch ([`crate::kernels::KernelSource::scratch`] reals per member,
    // structure-of-arrays), persistent across the dispatches of a chunk, never uploaded
    // or read back: working memory too large for an invocation's registers.
    Binding {
        name: "scratch",
        access: Access::ReadWrite,
    },
];

/// Index of a binding by name.
pub fn binding_index(name: &str) -> u32 {
    BINDINGS
        .iter()
        .position(|b| b.name == name)
        .unwrap_or_else(|| panic!("no binding {name}")) as u32
}

/// Uniform parameters of one dispatch; the WGSL struct `Dispatch` is generated from
/// [`DISPATCH_FIELDS`], which lists these fields in order.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable, PartialEq, Eq)]
pub struct DispatchParams {
    /// Members in this chunk (the stride of every structure-of-arrays buffer).
    pub members: u32,
    /// Global index of the first step of this dispatch.
    pub step_begin: u32,
    /// Steps advanced by this dispatch.
    pub step_count: u32,
    /// Steps of the whole run (the last one is always recorded).
    pub steps_total: u32,
    /// Record every this many steps.
    pub record_every: u32,
    /// Members per row of the 2-D dispatch grid.
    pub row_width: u32,
    /// Index of the pass this dispatch belongs to ([`crate::kernels::GpuKernel::passes`]; `pass` is a WGSL keyword).
    pub sweep: u32,
    pub pad1: u32,
}

impl DispatchParams {
    /// The parameters of a dispatch of `members` members over steps `step_begin ..
    /// step_begin + step_count` of `grid`, in pass `sweep`, with `row_width` members per
    /// row. Every count is mapped exactly or refused: the cadence is the grid's
    /// [`StepGrid::record_stride`] (≤ N, the same records), and a count beyond the kernels'
    /// u32 is an error naming it, never a truncation.
    pub fn new(
        members: usize,
        step_begin: usize,
        step_count: usize,
        grid: &StepGrid,
        row_width: usize,
        sweep: usize,
    ) -> Result<Self> {
        let steps = u32::try_from(grid.steps).map_err(|_| {
            Error::invalid(
                "scheme.t_end",
                format!(
                    "t_end / h = {} steps exceed the GPU kernels' 2³² − 1",
                    grid.steps
                ),
            )
        })?;
        let word = |value: usize, what: &str| {
            u32::try_from(value).map_err(|_| {
                Error::Gpu(format!(
                    "{what} = {value} exceeds the kernels' 32-bit counters (2³² − 1)"
                ))
            })
        };
        Ok(DispatchParams {
            members: word(members, "members per chunk")?,
            step_begin: word(step_begin, "first step of a dispatch")?,
            step_count: word(step_count, "steps per dispatch")?,
            steps_total: steps,
            record_every: word(grid.record_stride(), "record cadence")?,
            row_width: word(row_width, "members per dispatch row")?,
            sweep: word(sweep, "pass")?,
            pad1: 0,
        })
    }
}

/// The fields of [`DispatchParams`], all u32, in order.
pub const DISPATCH_FIELDS: [&str; 8] = [
    "members",
    "step_begin",
    "step_count",
    "steps_total",
    "record_every",
    "row_width",
    "sweep",
    "pad1",
];

/// The WGSL declarations of the dispatch struct and every binding.
pub fn wgsl_bindings() -> String {
    let mut out = String::from("struct Dispatch {\n");
    for field in DISPATCH_FIELDS {
        out.push_str(&format!("    {field}: u32,\n"));
    }
    out.push_str("}\n");
    for (index, b) in BINDINGS.iter().enumerate() {
        let decl = match b.access {
            Access::Uniform => format!("var<uniform> {}: Dispatch;", b.name),
            Access::Read => format!("var<storage, read> {}: array<real>;", b.name),
            Access::ReadWrite => format!("var<storage, read_write> {}: array<real>;", b.name),
        };
        out.push_str(&format!("@group(0) @binding({index}) {decl}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_struct_matches_its_field_list() {
        assert_eq!(
            std::mem::size_of::<DispatchParams>(),
            4 * DISPATCH_FIELDS.len()
        );
        let p = DispatchParams {
            members: 1,
            step_begin: 2,
            step_count: 3,
            steps_total: 4,
            record_every: 5,
            row_width: 6,
            sweep: 7,
            pad1: 8,
        };
        let words: &[u32] = bytemuck::cast_slice(bytemuck::bytes_of(&p));
        assert_eq!(words, &[1, 2, 3, 4, 5, 6, 7, 8]);
    }

    /// Cadences beyond N map to N (the same records); counts beyond u32 are refused.
    #[test]
    fn dispatch_counts_are_mapped_exactly_or_refused() {
        let grid = |steps: usize, record_every: usize| StepGrid {
            h: 0.1,
            steps,
            record_every,
        };
        for every in [1 << 32, (1 << 32) + 1, usize::MAX] {
            let p = DispatchParams::new(4, 0, 10, &grid(10, every), 64, 0).unwrap();
            assert_eq!(p.record_every, 10, "{every}");
        }
        let p = DispatchParams::new(4, 0, 10, &grid(10, 3), 64, 1).unwrap();
        assert_eq!((p.record_every, p.steps_total, p.sweep), (3, 10, 1));
        let error = DispatchParams::new(1, 0, 1, &grid(1 << 32, 1), 64, 0)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("scheme.t_end: "), "{error}");
        assert!(error.contains("4294967296 steps"), "{error}");
        let error = DispatchParams::new(1 << 32, 0, 1, &grid(10, 1), 64, 0)
            .unwrap_err()
            .to_string();
        assert!(error.contains("members per chunk = 4294967296"), "{error}");
    }

    #[test]
    fn bindings_are_declared_in_index_order() {
        let wgsl = wgsl_bindings();
        for (index, b) in BINDINGS.iter().enumerate() {
            assert!(
                wgsl.contains(&format!("@binding({index}) var")) && wgsl.contains(b.name),
                "{wgsl}"
            );
            assert_eq!(binding_index(b.name), index as u32);
        }
    }
}
