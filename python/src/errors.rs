//! harbor's errors as Python exceptions: each [`harbor::Error`] becomes the class of its
//! kind from `harbor._errors` (where they are defined, so that they can derive from both
//! `harbor.HarborError` and the built-in class Python code expects), with the library's
//! message — the field, the violated property and the measured value. A Rust panic becomes
//! `harbor.InternalError`, never PyO3's `PanicException`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::prelude::*;
use pyo3::types::PyType;

/// The exception classes of `harbor._errors`.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A config, argument or value that violates a documented property (`ValueError`).
    Config,
    /// A NumPy array of a dtype or shape harbor cannot take (`ConfigError`, `ValueError`).
    Array,
    /// A computation that failed on valid input (`RuntimeError`).
    Numerical,
    /// The GPU could not run (`RuntimeError`).
    Device,
    /// A file that could not be read or written (`OSError`).
    File,
    /// A bug in harbor (`RuntimeError`).
    Internal,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Config => "ConfigError",
            Kind::Array => "ArrayError",
            Kind::Numerical => "NumericalError",
            Kind::Device => "DeviceError",
            Kind::File => "FileError",
            Kind::Internal => "InternalError",
        }
    }
}

/// The exception `kind` with `message`.
pub fn error(kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let class = py
            .import("harbor._errors")
            .and_then(|module| module.getattr(kind.class_name()))
            .and_then(|class| class.cast_into::<PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, message),
            // Only when the package's own Python files are missing.
            Err(missing) => missing,
        }
    })
}

/// The exception for a library error, its message in Python's words (`keep_nonfinite`
/// where the CLI would say `--keep-nonfinite`).
pub fn from_harbor(e: harbor::Error) -> PyErr {
    let kind = match &e {
        harbor::Error::Invalid { .. } | harbor::Error::Config { .. } => Kind::Config,
        harbor::Error::Io { .. } => Kind::File,
        harbor::Error::Gpu(_) => Kind::Device,
        harbor::Error::Numerical { .. } | harbor::Error::Stopped(_) => Kind::Numerical,
    };
    error(kind, in_python_words(&e.to_string()))
}

/// What a library message may say about the command line, and what it means from Python:
/// the flags become the keyword arguments that set the same thing (the Python functions
/// read no `HARBOR_*` variable).
const FLAGS: [(&str, &str); 8] = [
    (" (or HARBOR_MEMORY_BUDGET)", ""),
    (" (--memory-budget)", " (memory_budget)"),
    ("--memory-budget", "memory_budget"),
    ("--keep-nonfinite", "keep_nonfinite=True"),
    ("--precision", "precision"),
    ("--backend", "backend"),
    ("--adapter", "adapter"),
    ("--set", "overrides"),
];

/// `message` (an error's, or a notice's) with the CLI's flags replaced by the keyword
/// arguments that set the same thing from Python.
pub fn in_python_words(message: &str) -> String {
    FLAGS
        .iter()
        .fold(message.to_string(), |text, (flag, argument)| {
            text.replace(flag, argument)
        })
}

/// Runs `f`; a panic in it (a bug in harbor, never a reaction to input) becomes
/// `harbor.InternalError` with the panic's message.
pub fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(error(
                Kind::Internal,
                format!("internal error (a bug in harbor, please report it): {what}"),
            ))
        }
    }
}
