//! `--set key=value` overrides: the key is a dotted path into the config (array elements by
//! index, `input.0.amplitude`), the value is written as TOML; a value that does not parse as
//! TOML is taken as a bare string (`--set scheme.family=gauss`).

use toml::{Table, Value};

use crate::error::{Error, Result};

/// Parses `key=value` into the path segments and the TOML value.
pub fn parse_override(text: &str) -> Result<(Vec<String>, Value)> {
    let (key, raw) = text
        .split_once('=')
        .ok_or_else(|| Error::invalid("--set", format!("expected key=value, got {text:?}")))?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|s| s.trim().is_empty()) {
        return Err(Error::invalid(
            "--set",
            format!("empty segment in key {key:?}"),
        ));
    }
    let raw = raw.trim();
    let value = toml::from_str::<Table>(&format!("value = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("value"))
        .unwrap_or_else(|| Value::String(raw.to_string()));
    Ok((
        key.split('.').map(|s| s.trim().to_string()).collect(),
        value,
    ))
}

/// Sets `value` at `path` in `table`, creating intermediate tables; numeric segments index
/// into arrays.
pub fn apply_override(table: &mut Table, path: &[String], value: Value) -> Result<()> {
    let dotted = path.join(".");
    let (first, rest) = path
        .split_first()
        .expect("parse_override gives a non-empty path");
    let Some((last, middle)) = rest.split_last() else {
        table.insert(first.clone(), value);
        return Ok(());
    };
    let mut node = table
        .entry(first.clone())
        .or_insert_with(|| Value::Table(Table::new()));
    for segment in middle {
        node = child(node, segment, &dotted)?;
    }
    match node {
        Value::Table(t) => {
            t.insert(last.clone(), value);
        }
        Value::Array(items) => {
            let index = parse_index(last, items.len(), &dotted)?;
            items[index] = value;
        }
        other => {
            return Err(Error::invalid(
                "--set",
                format!("{dotted}: cannot set a key inside a {}", other.type_str()),
            ));
        }
    }
    Ok(())
}

fn parse_index(segment: &str, len: usize, dotted: &str) -> Result<usize> {
    let index: usize = segment.parse().map_err(|_| {
        Error::invalid(
            "--set",
            format!("{dotted}: {segment:?} indexes an array and must be a number"),
        )
    })?;
    if index >= len {
        return Err(Error::invalid(
            "--set",
            format!("{dotted}: index {index} is out of range, the array has {len} element(s)"),
        ));
    }
    Ok(index)
}

fn child<'a>(node: &'a mut Value, segment: &str, dotted: &str) -> Result<&'a mut Value> {
    match node {
        Value::Table(t) => Ok(t
            .entry(segment.to_string())
            .or_insert_with(|| Value::Table(Table::new()))),
        Value::Array(items) => {
            let index = parse_index(segment, items.len(), dotted)?;
            Ok(&mut items[index])
        }
        other => Err(Error::invalid(
            "--set",
            format!(
                "{dotted}: {segment:?} is inside a {}, not a table",
                other.type_str()
            ),
        )),
    }
}
