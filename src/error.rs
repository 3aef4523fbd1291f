//! The one error type of the library: every failure names what was wrong, where, and the
//! measured value.

use std::path::PathBuf;

/// Everything that can go wrong in harbor, from bad user input to a failed write.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A value that violates a documented property: `field` names it by its config path
    /// (`system.R`, `scheme.h`), `problem` states the property and the measured value.
    #[error("{field}: {problem}")]
    Invalid { field: String, problem: String },

    /// A configuration file that cannot be read as the expected structure.
    #[error("config {path}: {message}")]
    Config { path: String, message: String },

    /// A file that could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The GPU path could not run: no adapter, a failed device request, a lost device.
    #[error("gpu: {0}")]
    Gpu(String),

    /// A numerical step that failed although its inputs were valid (a singular stage matrix).
    #[error("numerical failure in {context}: {problem}")]
    Numerical { context: String, problem: String },

    /// A run stopped by its caller before it finished (a progress report that asked to
    /// stop, [`crate::plan::ResultSink::progress`]: Ctrl-C in Python); the text says why.
    #[error("stopped: {0}")]
    Stopped(String),
}

/// Result with harbor's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::Invalid {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// Shorthand for [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// An f64 as error messages show it: the shortest text that reads back as the same value,
/// in exponent form outside 1e-5 ≤ |v| < 1e16 (`1e300`, not 301 digits), `inf` and `NaN`
/// as themselves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num(pub f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0;
        let magnitude = v.abs();
        if v == 0.0 || !v.is_finite() || (1e-5..1e16).contains(&magnitude) {
            write!(f, "{v}")
        } else {
            write!(f, "{v:e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Num;

    #[test]
    fn numbers_in_messages_stay_short_and_exact() {
        assert_eq!(Num(1e300).to_string(), "1e300");
        assert_eq!(Num(-2.5e-12).to_string(), "-2.5e-12");
        assert_eq!(Num(1.5).to_string(), "1.5");
        assert_eq!(Num(10.0).to_string(), "10");
        assert_eq!(Num(-0.05).to_string(), "-0.05");
        assert_eq!(Num(0.0).to_string(), "0");
        assert_eq!(Num(f64::INFINITY).to_string(), "inf");
        assert_eq!(Num(f64::NAN).to_string(), "NaN");
        assert_eq!(Num(1e16).to_string(), "1e16");
        assert_eq!(Num(0.1 + 0.2).to_string(), "0.30000000000000004");
    }
}
