//! Values between the host (f64) and a device's precision: the conversion with the checks
//! f32 needs, and back.

use crate::error::{Error, Num, Result};
use crate::kernels::Precision;

/// What a buffer holds, for the errors of [`to_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contents {
    /// Run-wide constants (h, method coefficients): a non-zero one must stay non-zero.
    Constants,
    /// Per-member parameters, initial states, shared inputs: each must stay finite.
    Values(&'static str),
}

/// Converts f64 values to the run's precision as bytes. In f32 a finite value beyond the
/// largest f32 (3.4028235e38, where the conversion gives ±∞) is refused, as is a non-zero
/// constant that rounds to 0 (a step h that vanishes would silently freeze the run);
/// values already non-finite pass as they are (the kernels flag them).
pub fn to_bytes(values: &[f64], precision: Precision, contents: Contents) -> Result<Vec<u8>> {
    match precision {
        Precision::F64 => Ok(bytemuck::cast_slice(values).to_vec()),
        Precision::F32 => {
            let mut narrow = Vec::with_capacity(values.len());
            for (index, &v) in values.iter().enumerate() {
                let single = v as f32;
                let lost = match contents {
                    Contents::Constants => {
                        (v.is_finite() && !single.is_finite()) || (v != 0.0 && single == 0.0)
                    }
                    Contents::Values(_) => v.is_finite() && !single.is_finite(),
                };
                if lost {
                    let what = match contents {
                        Contents::Constants => "run constants (h, method coefficients)",
                        Contents::Values(what) => what,
                    };
                    return Err(Error::invalid(
                        "--precision",
                        format!(
                            "f32 cannot represent entry {index} of the {what}, {}: it is {} (f32 holds magnitudes from 1.4e-45 to 3.4028235e38); run with --precision f64",
                            Num(v),
                            if single.is_finite() {
                                "rounded to 0"
                            } else {
                                "beyond the largest f32"
                            }
                        ),
                    ));
                }
                narrow.push(single);
            }
            Ok(bytemuck::cast_slice(&narrow).to_vec())
        }
    }
}

/// The values of `bytes` (in the run's precision) as f64.
pub fn from_bytes(bytes: &[u8], precision: Precision) -> Vec<f64> {
    match precision {
        // Copies without assuming the mapping's alignment (an empty range may have none).
        Precision::F64 => bytemuck::pod_collect_to_vec::<u8, f64>(bytes),
        Precision::F32 => bytemuck::pod_collect_to_vec::<u8, f32>(bytes)
            .iter()
            .map(|&v| v as f64)
            .collect(),
    }
}
