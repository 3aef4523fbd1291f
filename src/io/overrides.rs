//! `--set key=value` overrides: the key is a dotted path into the config (array elements by
//! index, `input.0.amplitude`), the value is written as TOML; a bare word that does not
//! parse as TOML is taken as a string (`--set scheme.family=gauss`), but a value that starts
//! like an array, table, quoted string or number and does not parse is an error naming the
//! key.

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
    let value = parse_value(key, raw.trim())?;
    Ok((
        key.split('.').map(|s| s.trim().to_string()).collect(),
        value,
    ))
}

/// The TOML value of `raw`, a bare string when it is a bare word; `key` names it in errors.
fn parse_value(key: &str, raw: &str) -> Result<Value> {
    let parsed = toml::from_str::<Table>(&format!("value = {raw}"));
    let toml_error = match parsed {
        // Exactly one key: a value with a line break cannot smuggle in others.
        Ok(mut table) if table.len() == 1 => {
            if let Some(value) = table.remove("value") {
                return Ok(value);
            }
            None
        }
        Ok(_) => None,
        Err(e) => Some(e.message().to_string()),
    };
    if is_integer_literal(raw) {
        return Err(Error::invalid(
            key,
            format!(
                "the --set value {raw} is out of range for an integer: TOML integers are 64-bit, from {} to {}",
                i64::MIN,
                i64::MAX
            ),
        ));
    }
    if attempts_a_value(raw) || toml_error.is_none() {
        let why = toml_error.unwrap_or_else(|| "it holds more than one value".into());
        let hint = if raw.starts_with(['[', '{']) {
            String::new()
        } else {
            format!("; a string needs quotes: --set '{key}=\"…\"'")
        };
        return Err(Error::invalid(
            key,
            format!(
                "the --set value {:?} is not valid TOML ({why}){hint}",
                shortened(raw)
            ),
        ));
    }
    Ok(Value::String(raw.to_string()))
}

/// Longest value quoted whole in an error message.
const SHOWN_VALUE_CHARS: usize = 120;

/// `raw`, cut to its first [`SHOWN_VALUE_CHARS`] characters with the total length noted.
fn shortened(raw: &str) -> String {
    let count = raw.chars().count();
    if count <= SHOWN_VALUE_CHARS {
        return raw.to_string();
    }
    let head: String = raw.chars().take(SHOWN_VALUE_CHARS).collect();
    format!("{head}… ({count} characters)")
}

/// Whether `raw` is a decimal integer (optional sign, digits, `_` separators).
fn is_integer_literal(raw: &str) -> bool {
    let digits = raw.strip_prefix(['+', '-']).unwrap_or(raw);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// Whether `raw` starts like a TOML array, inline table, quoted string or number (rather
/// than a bare word such as `gauss` or `data/u.csv`).
fn attempts_a_value(raw: &str) -> bool {
    let unsigned = raw.strip_prefix(['+', '-']).unwrap_or(raw);
    let number_like = unsigned.starts_with(|c: char| c.is_ascii_digit())
        || unsigned
            .strip_prefix('.')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        || unsigned.starts_with("inf")
        || unsigned.starts_with("nan");
    raw.starts_with(['[', '{', '"', '\'']) || number_like || unsigned.len() < raw.len()
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

/// `error` with the `--set` argument named that set the value it is about, when there is
/// one: an error at config path P (`output.every`, `input[0].kind`) is blamed on the last
/// override whose key is P, lies under P (`--set input.0.amplitude=x` for an error at
/// `input[0]`) or above it (`--set system.x0=[1, "a"]` for one at `system.x0[1]`), and
/// then reads `--set KEY=VALUE: P: …` (the argument as typed) instead of blaming the config
/// file. Errors that already name `--set`, and errors of no override, are returned as they
/// are.
pub fn blame_override(error: Error, overrides: &[String]) -> Error {
    let (path, problem) = match &error {
        Error::Invalid { field, problem } => (field.as_str(), problem.as_str()),
        Error::Config { message, .. } => match message.split_once(": ") {
            Some((path, problem)) if !path.contains(char::is_whitespace) => (path, problem),
            _ => return error,
        },
        _ => return error,
    };
    if path.starts_with("--") || problem.contains("--set") {
        return error;
    }
    let at = segments(path);
    let Some(argument) = overrides.iter().rev().find(|text| {
        text.split_once('=').is_some_and(|(key, _)| {
            let key = segments(key);
            !at.is_empty() && (key.starts_with(&at) || at.starts_with(&key))
        })
    }) else {
        return error;
    };
    Error::invalid(
        format!("--set {}", as_typed(argument)),
        format!("{path}: {problem}"),
    )
}

/// The segments of a config path: `input[0].kind` and `input.0.kind` are both
/// `["input", "0", "kind"]`.
fn segments(path: &str) -> Vec<String> {
    path.split(['.', '['])
        .map(|segment| segment.trim().trim_end_matches(']').trim().to_string())
        .filter(|segment| !segment.is_empty())
        .collect()
}

/// A `--set` argument as the user typed it, quoted for a shell when it holds spaces or
/// quotes, and shortened when long.
fn as_typed(argument: &str) -> String {
    let shown = shortened(argument);
    if shown.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
        format!("'{shown}'")
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_at_an_overridden_path_name_the_set_argument() {
        let config_error = |message: &str| Error::Config {
            path: "examples/x.toml".into(),
            message: message.into(),
        };
        let sets = [
            "scheme.h=0.5".to_string(),
            "output.every=abc".to_string(),
            "input.0.amplitude=x".to_string(),
            "system.x0=[1, \"a\"]".to_string(),
        ];
        for (error, blamed) in [
            (
                config_error("output.every: expected a whole number ≥ 0, got the string \"abc\""),
                "--set output.every=abc: output.every: expected a whole number ≥ 0, got the string \"abc\"",
            ),
            (
                config_error("input[0]: expected a number, got the string \"x\""),
                "--set input.0.amplitude=x: input[0]: expected a number, got the string \"x\"",
            ),
            (
                config_error("system.x0[1]: expected a number, got the string \"a\""),
                "--set 'system.x0=[1, \"a\"]': system.x0[1]: expected a number, got the string \"a\"",
            ),
            (
                Error::invalid("scheme.h", "must be > 0, got -1"),
                "--set scheme.h=0.5: scheme.h: must be > 0, got -1",
            ),
            // Not overridden: the file is blamed as before.
            (
                config_error("scheme.t_end: expected a number, got true"),
                "config examples/x.toml: scheme.t_end: expected a number, got true",
            ),
            (
                Error::invalid("scheme", "is required"),
                "--set scheme.h=0.5: scheme: is required",
            ),
            // Already about the --set argument itself.
            (
                Error::invalid("scheme.h", "the --set value \"0.5.1\" is not valid TOML"),
                "scheme.h: the --set value \"0.5.1\" is not valid TOML",
            ),
            (Error::invalid("--out", "exists"), "--out: exists"),
        ] {
            assert_eq!(blame_override(error, &sets).to_string(), blamed);
        }
    }

    #[test]
    fn long_malformed_values_are_shown_shortened() {
        let raw = "[".repeat(50_000);
        let error = parse_value("system.x0", &raw).unwrap_err().to_string();
        assert!(error.len() < 400, "{} bytes", error.len());
        assert!(error.contains("(50000 characters)"), "{error}");
    }

    fn value(text: &str) -> Result<Value> {
        parse_override(text).map(|(_, v)| v)
    }

    #[test]
    fn bare_words_are_strings_and_toml_values_parse() {
        assert_eq!(
            value("scheme.family=gauss").unwrap(),
            Value::String("gauss".into())
        );
        assert_eq!(
            value("input.0.path=data/u.csv").unwrap(),
            Value::String("data/u.csv".into())
        );
        assert_eq!(value("scheme.h=0.5").unwrap(), Value::Float(0.5));
        assert_eq!(value("output.every=-3").unwrap(), Value::Integer(-3));
        assert_eq!(
            value("system.x0=[0.5, 1]").unwrap(),
            Value::Array(vec![Value::Float(0.5), Value::Integer(1)])
        );
    }

    #[test]
    fn a_broken_value_is_an_error_naming_the_key_and_the_value() {
        for (text, shown) in [
            ("system.x0=[0.5,", "\"[0.5,\""),
            ("input.0={kind = 'pulse'", "\"{kind = 'pulse'\""),
            ("scheme.h=0.5.1", "\"0.5.1\""),
            ("scheme.family='gauss", "\"'gauss\""),
            ("scheme.h=-x", "\"-x\""),
            ("scheme.h=1\nscheme = 2", "\"1\\nscheme = 2\""),
        ] {
            let e = value(text).unwrap_err().to_string();
            let key = text.split('=').next().unwrap();
            assert!(
                e.starts_with(&format!("{key}: the --set value {shown} is not valid TOML")),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn an_integer_beyond_i64_is_out_of_range_not_a_string() {
        let e = value("ensemble.members=18446744073709551615")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "ensemble.members: the --set value 18446744073709551615 is out of range for an integer: TOML integers are 64-bit, from -9223372036854775808 to 9223372036854775807"
        );
        assert!(value("ensemble.seed=-9_223_372_036_854_775_809").is_err());
    }
}
