//! Specialisation of the WGSL kernels: the planner prepends the real type and the sizes,
//! so private arrays have compile-time lengths and loops have constant trip counts. Every
//! variant is validated by naga with exactly the capabilities harbor requests.

use super::context::Precision;
use super::layout::KernelLayout;
use crate::error::{Error, Result};

/// Bindings, layouts and helpers shared by the ensemble kernels.
pub const ENSEMBLE_COMMON: &str = include_str!("../../shaders/ensemble_common.wgsl");

/// The ensemble step kernel, before specialisation.
pub const LINEAR_PH_STEP: &str = include_str!("../../shaders/linear_ph_step.wgsl");

/// The ensemble step kernel where a workgroup cooperates on one member.
pub const LINEAR_PH_STEP_COOPERATIVE: &str =
    include_str!("../../shaders/linear_ph_step_cooperative.wgsl");

/// Invocations per workgroup (one member each, or one member per workgroup).
pub const WORKGROUP_SIZE: u32 = 64;

/// Largest state size of the per-invocation kernel (private arrays of n reals).
pub const MAX_STATES_PER_INVOCATION: usize = 32;

/// Largest state size of the workgroup-cooperative kernel.
pub const MAX_STATES_COOPERATIVE: usize = 128;

/// What a specialised kernel depends on; pipelines are cached by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub precision: Precision,
    pub states: usize,
    pub stages: usize,
    pub inputs: usize,
    pub rank: usize,
    /// One workgroup per member instead of one invocation.
    pub cooperative: bool,
}

impl KernelKey {
    pub fn layout(&self) -> KernelLayout {
        KernelLayout {
            states: self.states,
            stages: self.stages,
            inputs: self.inputs,
            rank: self.rank,
        }
    }
}

/// The WGSL source of the kernel for `key`.
pub fn linear_ph_step_source(key: &KernelKey) -> String {
    let sm = key.stages * key.inputs;
    format!(
        "// Specialised by harbor: {key:?}\n\
         alias real = {real};\n\
         const N: u32 = {n}u;\n\
         const S: u32 = {s}u;\n\
         const M: u32 = {m}u;\n\
         const SM: u32 = {sm}u;\n\
         const SM_ARRAY: u32 = {sm_array}u;\n\
         const RANK: u32 = {rank}u;\n\
         const P: u32 = {p}u;\n\
         const WG: u32 = {wg}u;\n\n{common}\n{body}",
        real = key.precision.name(),
        n = key.states,
        s = key.stages,
        m = key.inputs,
        sm_array = sm.max(1),
        rank = key.rank,
        p = key.states + sm,
        wg = WORKGROUP_SIZE,
        common = ENSEMBLE_COMMON,
        body = if key.cooperative {
            LINEAR_PH_STEP_COOPERATIVE
        } else {
            LINEAR_PH_STEP
        },
    )
}

/// The naga capabilities harbor requests for `precision`.
pub fn capabilities(precision: Precision) -> naga::valid::Capabilities {
    match precision {
        Precision::F64 => naga::valid::Capabilities::FLOAT64,
        Precision::F32 => naga::valid::Capabilities::empty(),
    }
}

/// Parses and validates a kernel source with naga.
pub fn validate(
    source: &str,
    precision: Precision,
) -> Result<(naga::Module, naga::valid::ModuleInfo)> {
    let module = naga::front::wgsl::parse_str(source)
        .map_err(|e| Error::Gpu(format!("WGSL parse error:\n{}", e.emit_to_string(source))))?;
    let info =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities(precision))
            .validate(&module)
            .map_err(|e| {
                Error::Gpu(format!(
                    "WGSL validation error:\n{}",
                    e.emit_to_string(source)
                ))
            })?;
    Ok((module, info))
}

/// Translates a validated kernel to SPIR-V, as the Vulkan backend will; returns the
/// number of words.
pub fn to_spirv(source: &str, precision: Precision) -> Result<usize> {
    let (module, info) = validate(source, precision)?;
    let words =
        naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None)
            .map_err(|e| Error::Gpu(format!("SPIR-V generation failed: {e}")))?;
    Ok(words.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel variant harbor can generate passes naga and translates to SPIR-V (the
    /// Vulkan backend's path, where a naga backend bug would otherwise surface only on an
    /// adapter): both precisions, both kernels, every supported stage count, state sizes up
    /// to each kernel's limit, with and without inputs and dissipation.
    #[test]
    fn every_variant_validates() {
        let mut checked = 0;
        let sizes = [
            (1, false),
            (2, false),
            (3, false),
            (8, false),
            (17, false),
            (32, false),
            (2, true),
            (33, true),
            (100, true),
            (128, true),
        ];
        for precision in [Precision::F32, Precision::F64] {
            for (states, cooperative) in sizes {
                for stages in 1..=4 {
                    for inputs in [0, 1, 3] {
                        for rank in [0, 1, states] {
                            let key = KernelKey {
                                precision,
                                states,
                                stages,
                                inputs,
                                rank,
                                cooperative,
                            };
                            let source = linear_ph_step_source(&key);
                            if let Err(e) = to_spirv(&source, precision) {
                                panic!("{key:?}: {e}");
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 600);
    }

    /// The f64 variant needs the FLOAT64 capability: without it naga rejects it, so the
    /// validation above is not vacuous.
    #[test]
    fn f64_without_the_capability_is_rejected() {
        for cooperative in [false, true] {
            let key = KernelKey {
                precision: Precision::F64,
                states: 2,
                stages: 2,
                inputs: 1,
                rank: 1,
                cooperative,
            };
            let source = linear_ph_step_source(&key);
            assert!(validate(&source, Precision::F32).is_err());
        }
    }
}
