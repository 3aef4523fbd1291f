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
