//! `[[initial_guess]]` of an identify config: starting points given by the user
//! ([`crate::identify::initial_guess`]), one table each.
//!
//! ```toml
//! [[initial_guess]]
//! file = "runs/identify/model"   # an earlier run's model directory (J.npy, R.npy, Q.npy,
//!                                # B.npy, x0.npy) or its identification.json
//! x0 = [0.0, 0.0, 0.0, 0.0, 0.0] # values written here (J, R, Q, B as rows) override the file's
//! ```
//!
//! Every fitted part needs a value, from the table or the file; the fixed parts keep
//! `[model]`'s values (a file's values for them are not read, a table's are refused).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::identify::Guess;
use crate::linear_ph::Parts;
use crate::model::validate::{matrix_from_rows, vector_from_slice};

type Rows = Vec<Vec<f64>>;

/// One `[[initial_guess]]` table.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GuessSpec {
    /// A model from an earlier run: the `model` directory `harbor identify` writes (J.npy,
    /// R.npy, Q.npy, B.npy, x0.npy) or its `identification.json` (its `model`); relative to
    /// the config's directory. Values written in the table override the file's.
    #[serde(default)]
    file: Option<PathBuf>,
    /// J, n × n rows, skew-symmetric (only when J is fitted).
    #[serde(rename = "J", default)]
    j: Option<Rows>,
    /// R, n × n rows, symmetric positive semidefinite of rank ≤ model.dissipation_rank (only
    /// when R is fitted).
    #[serde(rename = "R", default)]
    r: Option<Rows>,
    /// Q, n × n rows, symmetric positive definite (only when Q is fitted).
    #[serde(rename = "Q", default)]
    q: Option<Rows>,
    /// B, n × m rows (only when B is fitted).
    #[serde(rename = "B", default)]
    b: Option<Rows>,
    /// x0, n entries (only when x0 is fitted).
    #[serde(default)]
    x0: Option<Vec<f64>>,
}

/// Where a guess's values came from, before they are shaped.
#[derive(Debug, Default)]
struct Raw {
    j: Option<Rows>,
    r: Option<Rows>,
    q: Option<Rows>,
    b: Option<Rows>,
    x0: Option<Vec<f64>>,
}

impl GuessSpec {
    /// The guess of table `index`, shaped for n states and m inputs; `base_dir` resolves
    /// `file`.
    pub(crate) fn guess(
        &self,
        index: usize,
        base_dir: &Path,
        fit: Parts,
        n: usize,
        m: usize,
    ) -> Result<Guess> {
        let field = format!("initial_guess[{index}]");
        for (name, fitted, given) in [
            ("J", fit.j, self.j.is_some()),
            ("R", fit.r, self.r.is_some()),
            ("Q", fit.q, self.q.is_some()),
            ("B", fit.b, self.b.is_some()),
            ("x0", fit.x0, self.x0.is_some()),
        ] {
            if given && !fitted {
                return Err(Error::invalid(
                    format!("{field}.{name}"),
                    format!(
                        "is given but {name} is fixed (not in model.fit): a guess gives values only for fitted parts ([model] holds the fixed ones)"
                    ),
                ));
            }
        }
        let mut raw = Raw {
            j: self.j.clone(),
            r: self.r.clone(),
            q: self.q.clone(),
            b: self.b.clone(),
            x0: self.x0.clone(),
        };
        if let Some(file) = &self.file {
            let path = base_dir.join(file);
            let from = read_model(&format!("{field}.file"), &path, fit)?;
            raw.j = raw.j.or(from.j);
            raw.r = raw.r.or(from.r);
            raw.q = raw.q.or(from.q);
            raw.b = raw.b.or(from.b);
            raw.x0 = raw.x0.or(from.x0);
        }
        let why = format!("n = model.order = {n}, m = {m} inputs");
        let matrix = |name: &str, rows: &Option<Rows>, cols: usize| {
            rows.as_ref()
                .map(|rows| matrix_from_rows(&format!("{field}.{name}"), rows, n, cols, &why))
                .transpose()
        };
        Ok(Guess {
            j: matrix("J", &raw.j, n)?.filter(|_| fit.j),
            r: matrix("R", &raw.r, n)?.filter(|_| fit.r),
            q: matrix("Q", &raw.q, n)?.filter(|_| fit.q),
            b: matrix("B", &raw.b, m)?.filter(|_| fit.b),
            x0: raw
                .x0
                .as_ref()
                .map(|x0| vector_from_slice(&format!("{field}.x0"), x0, n, &why))
                .transpose()?
                .filter(|_| fit.x0),
        })
    }
}

/// The fitted parts of the model at `path`: a directory of NPY files or an
/// identification.json.
fn read_model(field: &str, path: &Path, fit: Parts) -> Result<Raw> {
    if path.is_dir() {
        let matrix = |name: &str, wanted: bool| -> Result<Option<Rows>> {
            if !wanted {
                return Ok(None);
            }
            let file = path.join(format!("{name}.npy"));
            let array: ndarray::Array2<f64> = read_npy(field, &file)?;
            Ok(Some(array.outer_iter().map(|row| row.to_vec()).collect()))
        };
        let x0 = if fit.x0 {
            let array: ndarray::Array1<f64> = read_npy(field, &path.join("x0.npy"))?;
            Some(array.to_vec())
        } else {
            None
        };
        return Ok(Raw {
            j: matrix("J", fit.j)?,
            r: matrix("R", fit.r)?,
            q: matrix("Q", fit.q)?,
            b: matrix("B", fit.b)?,
            x0,
        });
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::invalid(
            field,
            format!(
                "{}: cannot be read ({e}); give a model directory or an identification.json of `harbor identify`",
                path.display()
            ),
        )
    })?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::invalid(field, format!("{}: not JSON: {e}", path.display())))?;
    let model = json.get("model").ok_or_else(|| {
        Error::invalid(
            field,
            format!(
                "{}: has no \"model\" object (is it an identification.json?)",
                path.display()
            ),
        )
    })?;
    let part = |name: &str| -> Result<Option<serde_json::Value>> {
        model.get(name).cloned().map(Some).ok_or_else(|| {
            Error::invalid(
                field,
                format!("{}: its model has no {name}", path.display()),
            )
        })
    };
    let parse = |name: &str, wanted: bool| -> Result<Option<Rows>> {
        if !wanted {
            return Ok(None);
        }
        let value = part(name)?.expect("present");
        serde_json::from_value(value).map(Some).map_err(|e| {
            Error::invalid(
                field,
                format!(
                    "{}: model.{name} is not rows of numbers: {e}",
                    path.display()
                ),
            )
        })
    };
    let x0 = if fit.x0 {
        let value = part("x0")?.expect("present");
        Some(serde_json::from_value(value).map_err(|e| {
            Error::invalid(
                field,
                format!("{}: model.x0 is not a list of numbers: {e}", path.display()),
            )
        })?)
    } else {
        None
    };
    Ok(Raw {
        j: parse("J", fit.j)?,
        r: parse("R", fit.r)?,
        q: parse("Q", fit.q)?,
        b: parse("B", fit.b)?,
        x0,
    })
}

fn read_npy<A: ndarray_npy::ReadableElement, D: ndarray::Dimension>(
    field: &str,
    file: &Path,
) -> Result<ndarray::Array<A, D>> {
    use ndarray_npy::ReadNpyExt;
    let handle = std::fs::File::open(file).map_err(|e| {
        Error::invalid(field, format!("{}: cannot be opened ({e})", file.display()))
    })?;
    ndarray::Array::<A, D>::read_npy(handle).map_err(|e| {
        Error::invalid(
            field,
            format!(
                "{}: not an f64 NPY array of the expected dimension: {e}",
                file.display()
            ),
        )
    })
}
