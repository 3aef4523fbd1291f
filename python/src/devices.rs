//! `harbor.devices`: every GPU adapter wgpu finds, best first, as `harbor devices --json`
//! lists them.

use harbor::backend::gpu::list_adapters;
use pyo3::prelude::*;

use crate::errors::guarded;
use crate::python_json::to_python;

/// Every adapter as a dict: name, backend, device_type, software, driver, driver_info,
/// shader_f64 and the limits harbor plans with; best first (the one `backend="gpu"`
/// takes).
#[pyfunction]
pub fn devices(py: Python<'_>) -> PyResult<Py<PyAny>> {
    guarded(|| {
        let adapters = py.detach(list_adapters);
        let json = serde_json::to_value(&adapters).map_err(|e| {
            crate::errors::error(crate::errors::Kind::Internal, format!("adapters: {e}"))
        })?;
        to_python(py, &json)
    })
}
