//! A config as the Python functions take it — a path, TOML text or a dict — read into the
//! TOML table the library parses, with the `overrides` applied.
//!
//! - a `pathlib.Path` (any `os.PathLike`) is a file; a `str` is TOML text when it holds a
//!   newline or an `=`, else the path of a file. Relative paths inside a file (CSV inputs,
//!   data files) are resolved against its folder;
//! - a `dict` is the config's tables (NumPy arrays wherever a matrix, a signal or data
//!   goes, [`crate::toml_values`]); relative paths inside text or a dict are resolved
//!   against `base_dir`, the working directory unless given;
//! - `overrides` is a dict of dotted paths to values (`{"scheme.h": 0.005}`; None removes
//!   the key, `{"data.reference": None, "data.values": rows}`) or a list of `"key=value"`
//!   strings written as for the CLI's `--set`.

use std::path::{Path, PathBuf};

use harbor::bounded_read::read_config_text;
use harbor::io::config::parse_with_overrides;
use harbor::io::overrides::{apply_override, parse_override};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::errors::{Kind, error, from_harbor};
use crate::toml_values::{dict_to_table, to_toml};

/// A config read from Python: its table, its name for errors and the folder relative paths
/// are resolved against.
#[derive(Debug, Clone)]
pub struct ConfigSource {
    pub table: toml::Table,
    pub origin: String,
    pub base_dir: PathBuf,
}

impl ConfigSource {
    /// Reads `config` (a path, TOML text or a dict); `base_dir`, when given, resolves the
    /// relative paths of text and dicts (else the working directory).
    pub fn read(config: &Bound<'_, PyAny>, base_dir: Option<PathBuf>) -> PyResult<Self> {
        let working_dir = || {
            base_dir
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_default()
        };
        if let Ok(dict) = config.cast::<PyDict>() {
            return Ok(ConfigSource {
                table: dict_to_table(dict, "")?,
                origin: "<dict>".into(),
                base_dir: working_dir(),
            });
        }
        let text = match config.cast::<PyString>() {
            Ok(text) => Some(text.extract::<String>()?),
            Err(_) => None,
        };
        match text {
            Some(text) if text.contains(['\n', '=']) => Ok(ConfigSource {
                table: parse_with_overrides(&text, &[], "<toml text>").map_err(from_harbor)?,
                origin: "<toml text>".into(),
                base_dir: working_dir(),
            }),
            Some(path) => Self::file(Path::new(&path)),
            None if config.hasattr("__fspath__")? => {
                let path: PathBuf = config.extract()?;
                Self::file(&path)
            }
            None => Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "config: expected a path, TOML text or a dict, got {}",
                config.get_type().name()?
            ))),
        }
    }

    /// The config file at `path`.
    fn file(path: &Path) -> PyResult<Self> {
        let origin = path.display().to_string();
        let text = read_config_text(path).map_err(from_harbor)?;
        Ok(ConfigSource {
            table: parse_with_overrides(&text, &[], &origin).map_err(from_harbor)?,
            origin,
            base_dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        })
    }

    /// Applies `overrides` in order: a dict of dotted paths to values (None removes the
    /// key), or a list of `"key=value"` strings (the value written as TOML).
    pub fn apply_overrides(&mut self, overrides: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let Some(overrides) = overrides.filter(|o| !o.is_none()) else {
            return Ok(());
        };
        if let Ok(dict) = overrides.cast::<PyDict>() {
            for (key, value) in dict.iter() {
                let Ok(key) = key.cast::<PyString>() else {
                    return Err(error(
                        Kind::Config,
                        format!("overrides: the key {} is not a dotted path", key.repr()?),
                    ));
                };
                let key: String = key.extract()?;
                let key = key.as_str();
                let path: Vec<String> = key.split('.').map(|s| s.trim().to_string()).collect();
                if path.iter().any(String::is_empty) {
                    return Err(error(
                        Kind::Config,
                        format!("overrides: empty segment in key {key:?}"),
                    ));
                }
                if value.is_none() {
                    remove(&mut self.table, &path);
                    continue;
                }
                let value = to_toml(&value, key)?;
                apply_override(&mut self.table, &path, value).map_err(from_harbor)?;
            }
            return Ok(());
        }
        if overrides.is_instance_of::<PyList>() || overrides.is_instance_of::<PyTuple>() {
            for item in overrides.try_iter()? {
                let text: String = item?.extract().map_err(|_| {
                    error(
                        Kind::Config,
                        "overrides: a list of overrides holds \"key=value\" strings",
                    )
                })?;
                let (path, value) = parse_override(&text).map_err(from_harbor)?;
                apply_override(&mut self.table, &path, value).map_err(from_harbor)?;
            }
            return Ok(());
        }
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "overrides: expected a dict of dotted paths to values or a list of \"key=value\" strings, got {}",
            overrides.get_type().name()?
        )))
    }

    /// Sets the value at the dotted `path` (as an override does).
    pub fn set(&mut self, path: &str, value: toml::Value) -> PyResult<()> {
        let path: Vec<String> = path.split('.').map(str::to_string).collect();
        apply_override(&mut self.table, &path, value).map_err(from_harbor)
    }
}

/// Removes the key at the dotted `path` of `table` (a path through tables), if it is
/// there.
fn remove(table: &mut toml::Table, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = table;
    for segment in parents {
        match node.get_mut(segment) {
            Some(toml::Value::Table(inner)) => node = inner,
            _ => return,
        }
    }
    node.remove(last);
}
