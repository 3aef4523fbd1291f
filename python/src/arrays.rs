//! Arrays handed to Python: the library's flat buffers become NumPy arrays that own them
//! (no copy: the NumPy array's base is the Rust vector), small matrices are copied.

use harbor::io::simulation_arrays::FlatArray;
use nalgebra::{DMatrix, DVector};
use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{Element, IntoPyArray};
use pyo3::prelude::*;

/// `array` as a NumPy array of its shape that takes over its buffer.
pub fn into_numpy<T: Element>(py: Python<'_>, array: FlatArray<T>) -> PyResult<Py<PyAny>> {
    let values = ArrayD::from_shape_vec(IxDyn(&array.shape), array.values).map_err(|e| {
        crate::errors::error(
            crate::errors::Kind::Internal,
            format!("the {} array does not fit its shape: {e}", array.name),
        )
    })?;
    Ok(values.into_pyarray(py).into_any().unbind())
}

/// `values` of `shape` (C order) as a NumPy array that takes over the buffer.
pub fn shaped<T: Element>(
    py: Python<'_>,
    shape: Vec<usize>,
    values: Vec<T>,
) -> PyResult<Py<PyAny>> {
    into_numpy(
        py,
        FlatArray {
            name: "result".into(),
            shape,
            values,
        },
    )
}

/// A matrix as a 2-D NumPy array (rows × columns).
pub fn matrix(py: Python<'_>, m: &DMatrix<f64>) -> PyResult<Py<PyAny>> {
    let values = m
        .row_iter()
        .flat_map(|row| row.iter().copied().collect::<Vec<_>>())
        .collect();
    shaped(py, vec![m.nrows(), m.ncols()], values)
}

/// A vector as a 1-D NumPy array.
pub fn vector(py: Python<'_>, v: &DVector<f64>) -> PyResult<Py<PyAny>> {
    shaped(py, vec![v.len()], v.iter().copied().collect())
}
