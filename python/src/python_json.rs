//! JSON documents of the library (summary.json's content, identification.json, the
//! adapters) as Python dicts and lists, through Python's own `json` module: numbers keep
//! every bit (the library writes the shortest text that reads back as the same double).

use pyo3::prelude::*;

/// `value` as the Python object `json.loads` makes of it.
pub fn to_python(py: Python<'_>, value: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| crate::errors::error(crate::errors::Kind::Internal, format!("JSON: {e}")))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}
