//! Sampled input signals: (time, value) rows read from a CSV file, the column chosen by
//! index or header name, interpolated piecewise-linearly, with a rule for times outside
//! the samples.

use std::path::Path;

use serde::Deserialize;

use crate::bounded_read::{CappedReadError, DATA_FILE_CAP, read_capped};
use crate::error::{Error, Num, Result};

/// Column 1, the first after the times.
pub(super) fn default_column() -> ColumnRef {
    ColumnRef::Index(1)
}

/// How a CSV signal behaves outside its sampled time range.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum Outside {
    /// The simulated interval must lie inside the samples (checked when the plan is built).
    #[default]
    Error,
    /// Hold the first / last sample.
    Hold,
    /// Zero outside the samples.
    Zero,
}

/// A CSV value column, by zero-based index or by header name.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnRef {
    Index(usize),
    Name(String),
}

impl<'de> Deserialize<'de> for ColumnRef {
    /// An integer ≥ 0 (an index) or a string (a header name); anything else is an error
    /// that says so and shows the value.
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ColumnRef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a zero-based column index (an integer ≥ 0) or a header name (a string)",
                )
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<ColumnRef, E> {
                usize::try_from(v).map(ColumnRef::Index).map_err(|_| {
                    E::custom(format!(
                        "column index {v} is negative: give a zero-based index (≥ 0) or a header name"
                    ))
                })
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<ColumnRef, E> {
                usize::try_from(v)
                    .map(ColumnRef::Index)
                    .map_err(|_| E::custom(format!("column index {v} is out of range")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<ColumnRef, E> {
                Ok(ColumnRef::Name(v.to_string()))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// Piecewise-linear interpolation of (times, values) at t.
pub(super) fn interpolate(times: &[f64], values: &[f64], outside: Outside, t: f64) -> f64 {
    let last = times.len() - 1;
    if t < times[0] || t > times[last] {
        return match outside {
            Outside::Zero => 0.0,
            Outside::Hold | Outside::Error => {
                if t < times[0] {
                    values[0]
                } else {
                    values[last]
                }
            }
        };
    }
    let upper = times.partition_point(|&s| s <= t).clamp(1, last);
    let (t0, t1) = (times[upper - 1], times[upper]);
    let w = (t - t0) / (t1 - t0);
    values[upper - 1] + w * (values[upper] - values[upper - 1])
}

/// Checks samples written in a config (`kind = "samples"` at `field`): as many values as
/// times, at least 2, every one finite, the times strictly increasing; errors name
/// `<field>.t` or `<field>.values`, the index and the value.
pub(super) fn check_samples(field: &str, times: &[f64], values: &[f64]) -> Result<()> {
    if values.len() != times.len() {
        return Err(Error::invalid(
            format!("{field}.values"),
            format!(
                "has {} value(s) but t has {} time(s): give one value per time",
                values.len(),
                times.len()
            ),
        ));
    }
    if times.len() < 2 {
        return Err(Error::invalid(
            format!("{field}.t"),
            format!("holds {} sample(s), at least 2 are needed", times.len()),
        ));
    }
    for (name, samples) in [("t", times), ("values", values)] {
        if let Some(i) = samples.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(
                format!("{field}.{name}"),
                format!(
                    "{name}[{i}] is {}, but samples must be finite",
                    Num(samples[i])
                ),
            ));
        }
    }
    if let Some(i) = times.windows(2).position(|pair| pair[1] <= pair[0]) {
        return Err(Error::invalid(
            format!("{field}.t"),
            format!(
                "times must increase strictly: t[{}] = {} follows t[{i}] = {}",
                i + 1,
                Num(times[i + 1]),
                Num(times[i])
            ),
        ));
    }
    Ok(())
}

/// Reads (time, value) samples; only the first row may be a header (a row whose first cell
/// is not a number). Errors name the file and its line, counted from 1 with the header and
/// `#` comments included.
pub(super) fn read_samples(
    field: &str,
    path: &Path,
    column: &ColumnRef,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let bytes = read_capped(path, DATA_FILE_CAP).map_err(|e| match e {
        CappedReadError::Io(e) => Error::invalid(
            format!("{field}.path"),
            format!("cannot open {}: {e}", path.display()),
        ),
        too_large => too_large.into_error(&format!("{field}.path"), path),
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(bytes.as_slice());
    let bad = |line: u64, what: String| {
        Error::invalid(
            format!("{field}.path"),
            format!("{} line {line}: {what}", path.display()),
        )
    };
    let mut index = match column {
        ColumnRef::Index(i) => Some(*i),
        ColumnRef::Name(_) => None,
    };
    let (mut times, mut values) = (Vec::new(), Vec::new());
    for (record_number, record) in reader.records().enumerate() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, csv::Position::line);
            bad(line, e.to_string())
        })?;
        let line = record.position().map_or(0, csv::Position::line);
        let is_header =
            record_number == 0 && record.get(0).is_some_and(|c| c.parse::<f64>().is_err());
        if is_header {
            if let ColumnRef::Name(name) = column {
                index = record.iter().position(|h| h == name);
                if index.is_none() {
                    return Err(bad(line, format!("no column named {name:?} in the header")));
                }
            }
            continue;
        }
        let col = index.ok_or_else(|| {
            bad(
                line,
                "column given by name but the file has no header".into(),
            )
        })?;
        let parse = |i: usize| -> Result<f64> {
            let cell = record.get(i).ok_or_else(|| {
                bad(
                    line,
                    format!("has {} columns, column {i} is missing", record.len()),
                )
            })?;
            let v: f64 = cell.parse().map_err(|_| {
                let hint = if i == 0 {
                    " (only the first row may be a header)"
                } else {
                    ""
                };
                bad(line, format!("{cell:?} is not a number{hint}"))
            })?;
            if v.is_finite() {
                Ok(v)
            } else {
                Err(bad(line, format!("value {} is not finite", Num(v))))
            }
        };
        let (t, u) = (parse(0)?, parse(col)?);
        if let Some(&previous) = times.last()
            && t <= previous
        {
            return Err(bad(
                line,
                format!(
                    "times must increase strictly: {} follows {}",
                    Num(t),
                    Num(previous)
                ),
            ));
        }
        times.push(t);
        values.push(u);
    }
    if times.len() < 2 {
        return Err(Error::invalid(
            format!("{field}.path"),
            format!(
                "{} holds {} samples, at least 2 are needed",
                path.display(),
                times.len()
            ),
        ));
    }
    Ok((times, values))
}
