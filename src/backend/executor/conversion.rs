//! Values between the host (f64) and a device's precision: the conversion with the checks
//! f32 needs, and back.

use rayon::prelude::*;

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
///
/// Large buffers (a chunk's parameters: tens of megabytes) are converted in pieces of
/// `PIECE_VALUES` on all cores, each piece written by the thread that converts it; the
/// error named is the first in index order either way.
pub fn to_bytes(values: &[f64], precision: Precision, contents: Contents) -> Result<Vec<u8>> {
    let size = precision.size();
    let mut bytes = vec![0u8; values.len() * size];
    let pieces: Vec<Result<()>> = bytes
        .par_chunks_mut(PIECE_VALUES * size)
        .zip(values.par_chunks(PIECE_VALUES))
        .enumerate()
        .map(|(piece, (out, values))| {
            convert(values, out, precision, contents, piece * PIECE_VALUES)
        })
        .collect();
    pieces.into_iter().collect::<Result<()>>()?;
    Ok(bytes)
}

/// Values converted by one thread at a time in [`to_bytes`].
const PIECE_VALUES: usize = 1 << 18;

/// Writes `values`, the entries from `first` on, into `out` in the run's precision, with
/// [`to_bytes`]' checks.
fn convert(
    values: &[f64],
    out: &mut [u8],
    precision: Precision,
    contents: Contents,
    first: usize,
) -> Result<()> {
    match precision {
        Precision::F64 => out.copy_from_slice(bytemuck::cast_slice(values)),
        Precision::F32 => {
            for (offset, (&v, out)) in values.iter().zip(out.chunks_exact_mut(4)).enumerate() {
                let index = first + offset;
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
                out.copy_from_slice(&single.to_ne_bytes());
            }
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer of several pieces converts as one: every value in place, and in f32 the
    /// first value that does not fit is the one named, whichever piece a thread finished
    /// first.
    #[test]
    fn pieces_convert_as_one_buffer() {
        let values: Vec<f64> = (0..3 * PIECE_VALUES + 5)
            .map(|i| (i as f64).sqrt() - 7.25)
            .collect();
        let contents = Contents::Values("per-member parameters");
        let wide = to_bytes(&values, Precision::F64, contents).unwrap();
        assert_eq!(from_bytes(&wide, Precision::F64), values);
        let narrow = to_bytes(&values, Precision::F32, contents).unwrap();
        let expected: Vec<f64> = values.iter().map(|&v| v as f32 as f64).collect();
        assert_eq!(from_bytes(&narrow, Precision::F32), expected);

        let mut too_large = values.clone();
        let (first, later) = (2 * PIECE_VALUES + 3, PIECE_VALUES + 1);
        too_large[first] = 1e300;
        too_large[3 * PIECE_VALUES] = -1e300;
        let error = to_bytes(&too_large, Precision::F32, contents).unwrap_err();
        assert!(
            error.to_string().contains(&format!("entry {first} ")),
            "{error}"
        );
        too_large[later] = 1e39;
        let error = to_bytes(&too_large, Precision::F32, contents).unwrap_err();
        assert!(
            error.to_string().contains(&format!("entry {later} ")),
            "{error}"
        );
        assert!(to_bytes(&[], Precision::F32, contents).unwrap().is_empty());
    }
}
