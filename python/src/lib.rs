//! `harbor._harbor`, the extension module of the `harbor` Python package: harbor's runs,
//! gradients, identifications, tables and adapters with NumPy arrays in and out.
//!
//! A thin layer over the library: configs come in as a path, TOML text or a dict
//! (`config_source`, NumPy arrays written as config values by `toml_values`), the
//! library does the work with the GIL released while `watcher` checks for Ctrl-C and
//! reports progress, and results go out as NumPy arrays that own the library's buffers
//! (`arrays`). Errors are the package's exception classes (`errors`); the `log`
//! records of the library go to Python's `logging` under the `harbor` logger.

mod arrays;
mod config_source;
mod device_choice;
mod devices;
mod errors;
mod gradient;
mod identify;
mod python_json;
mod simulate;
mod tableau;
mod toml_values;
mod watcher;

use pyo3::prelude::*;

/// The extension module: the functions and result classes `harbor/__init__.py` exports.
#[pymodule]
fn _harbor(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Records go to Python's `logging` (logger `harbor`), whose level is asked at every
    // record, so that a level set after the import applies; only INFO and above cross over
    // (the library logs rarely: notices, and what `auto` chose).
    let _ = pyo3_log::Logger::new(m.py(), pyo3_log::Caching::Loggers)?
        .filter(log::LevelFilter::Info)
        .install();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(gradient::gradient, m)?)?;
    m.add_function(wrap_pyfunction!(identify::identify, m)?)?;
    m.add_function(wrap_pyfunction!(tableau::tableau, m)?)?;
    m.add_function(wrap_pyfunction!(devices::devices, m)?)?;
    m.add_class::<simulate::SimulationResult>()?;
    m.add_class::<gradient::GradientResult>()?;
    m.add_class::<identify::IdentifyResult>()?;
    m.add_class::<tableau::Tableau>()?;
    Ok(())
}
