//! Floating-point precision of a kernel run.

/// The real type of a kernel: WGSL `f32`, or `f64` where the adapter has SHADER_F64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F32,
    F64,
}

impl Precision {
    /// The precision called `name` (`f32`, `f64`); anything else is an error on `field`.
    pub fn from_name(field: &str, name: &str) -> crate::error::Result<Self> {
        match name {
            "f32" => Ok(Precision::F32),
            "f64" => Ok(Precision::F64),
            other => Err(crate::error::Error::invalid(
                field,
                format!("unknown precision {other:?}: expected f32 or f64"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// Unit roundoff u = 2^−p of the format (half the machine epsilon).
    pub fn unit_roundoff(self) -> f64 {
        match self {
            Precision::F32 => f32::EPSILON as f64 / 2.0,
            Precision::F64 => f64::EPSILON / 2.0,
        }
    }

    /// Bytes per real.
    pub fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}
