//! Python values as config values: what a config dict (or an `overrides` dict) holds,
//! written as the TOML the library reads. Dicts become tables, lists and tuples arrays, and
//! NumPy arrays nested arrays along their shape — wherever a config takes a matrix, a
//! signal or data, an array can stand. Every value is checked here for what TOML can hold,
//! and errors name its config path (`system.J`, `input[0].values`).

use numpy::{PyArrayDescrMethods, ndarray::ArrayViewD};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods, dtype};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::{Kind, error};

/// `value`, found at config path `at`, as a TOML value; errors name `at`.
pub fn to_toml(value: &Bound<'_, PyAny>, at: &str) -> PyResult<toml::Value> {
    if let Ok(array) = value.cast::<PyUntypedArray>() {
        return array_to_toml(array, at);
    }
    if value.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return value
            .extract::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| {
                error(
                    Kind::Config,
                    format!("{at}: the integer {value} does not fit a 64-bit integer"),
                )
            });
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(value.extract()?));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(toml::Value::String(text.extract()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        return dict_to_table(dict, at).map(toml::Value::Table);
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .enumerate()
            .map(|(i, item)| to_toml(&item?, &format!("{at}[{i}]")))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(toml::Value::Array(items));
    }
    if is_numpy_scalar(value)? {
        // np.float32(0.5), np.int64(3), np.bool_(True): their Python number.
        return to_toml(&value.call_method0("item")?, at);
    }
    if value.is_none() {
        return Err(error(
            Kind::Config,
            format!("{at}: is None, which a config cannot hold: leave the key out instead"),
        ));
    }
    Err(error(
        Kind::Config,
        format!(
            "{at}: a value of type {} cannot be written in a config; give a number, a string, a bool, a list, a dict or a NumPy array",
            value.get_type().name()?
        ),
    ))
}

/// A dict with string keys as a TOML table (the keys under `at`).
pub fn dict_to_table(dict: &Bound<'_, PyDict>, at: &str) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (key, value) in dict.iter() {
        let Ok(key) = key.cast::<PyString>() else {
            return Err(error(
                Kind::Config,
                format!(
                    "{}: the key {} is not a string; config keys are strings",
                    if at.is_empty() { "config" } else { at },
                    key.repr()?
                ),
            ));
        };
        let key: String = key.extract()?;
        let path = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        table.insert(key, to_toml(&value, &path)?);
    }
    Ok(table)
}

/// Whether `value` is a NumPy scalar (`numpy.generic`).
fn is_numpy_scalar(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = value.py();
    let Ok(numpy) = py.import("numpy") else {
        return Ok(false);
    };
    value.is_instance(&numpy.getattr("generic")?)
}

/// A NumPy array as nested TOML arrays along its shape (a 0-d array as its one value):
/// floats of up to 64 bits as floats, integers as integers, booleans as booleans. Other
/// dtypes (complex, object, strings, dates, extended precision) are refused.
fn array_to_toml(array: &Bound<'_, PyUntypedArray>, at: &str) -> PyResult<toml::Value> {
    let py = array.py();
    let descr = array.dtype();
    let (kind, size) = (descr.kind(), descr.itemsize());
    let refuse = |why: &str| {
        Ok::<_, PyErr>(error(
            Kind::Array,
            format!(
                "{at}: a NumPy array of dtype {} cannot be a config value ({why}); give float64, integer or bool arrays",
                descr.str()?
            ),
        ))
    };
    match kind {
        b'f' if size <= 8 => {
            let values = array.call_method1("astype", ("float64",))?;
            let values = values.cast::<PyArrayDyn<f64>>()?.readonly();
            Ok(nested(values.as_array(), &|v: &f64| toml::Value::Float(*v)))
        }
        b'i' | b'u' => {
            if kind == b'u' && size == 8 {
                // uint64 values above 2⁶³ − 1 would not survive int64.
                let largest: u64 = array.call_method0("max")?.extract().unwrap_or(0);
                if largest > i64::MAX as u64 {
                    return Err(refuse("a value exceeds the largest 64-bit signed integer")?);
                }
            }
            let values = array.call_method1("astype", ("int64",))?;
            let values = values.cast::<PyArrayDyn<i64>>()?.readonly();
            Ok(nested(values.as_array(), &|v: &i64| {
                toml::Value::Integer(*v)
            }))
        }
        b'b' => {
            let values = array.call_method1("astype", (dtype::<bool>(py),))?;
            let values = values.cast::<PyArrayDyn<bool>>()?.readonly();
            Ok(nested(values.as_array(), &|v: &bool| {
                toml::Value::Boolean(*v)
            }))
        }
        b'f' => Err(refuse("extended precision would be rounded to float64")?),
        b'c' => Err(refuse("complex numbers")?),
        b'O' => Err(refuse("Python objects")?),
        b'U' | b'S' => Err(refuse("strings")?),
        _ => Err(refuse("not a number")?),
    }
}

/// `view` as nested arrays along its axes, each element written by `element`.
fn nested<T>(view: ArrayViewD<'_, T>, element: &dyn Fn(&T) -> toml::Value) -> toml::Value {
    if view.ndim() == 0 {
        return element(view.iter().next().expect("a 0-d array holds one value"));
    }
    toml::Value::Array(
        view.outer_iter()
            .map(|inner| nested(inner, element))
            .collect(),
    )
}
