//! A TOML document model for the fuzzer: unlike `toml::Value` it also holds text that TOML
//! cannot represent as a value (integers beyond i64, deliberately malformed snippets), which
//! is written verbatim; and its writer, which puts tables under `[section]` headers and
//! arrays of tables under `[[section]]` headers as a person would.

use std::fmt::Write as _;

/// A value of the document.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Arr(Vec<V>),
    /// Keys in order; duplicates are possible (and written as such).
    Tab(Vec<(String, V)>),
    /// Written verbatim: `18446744073709551615`, `1979-05-27T07:32:00Z`, `[1.0,`.
    Raw(String),
}

/// One step of a path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Idx(usize),
}

pub type Path = Vec<Seg>;

pub fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// `system.J.0.1`, the form `--set` takes.
pub fn dotted(path: &[Seg]) -> String {
    path.iter()
        .map(|s| match s {
            Seg::Key(k) => k.clone(),
            Seg::Idx(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// `system.J[0][1]`, the form error messages take.
pub fn display(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Idx(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

impl V {
    pub fn from_toml(value: &toml::Value) -> V {
        match value {
            toml::Value::String(s) => V::Str(s.clone()),
            toml::Value::Integer(i) => V::Int(*i),
            toml::Value::Float(f) => V::Float(*f),
            toml::Value::Boolean(b) => V::Bool(*b),
            toml::Value::Datetime(d) => V::Raw(d.to_string()),
            toml::Value::Array(items) => V::Arr(items.iter().map(V::from_toml).collect()),
            toml::Value::Table(t) => V::Tab(
                t.iter()
                    .map(|(k, v)| (k.clone(), V::from_toml(v)))
                    .collect(),
            ),
        }
    }

    pub fn table() -> V {
        V::Tab(Vec::new())
    }

    /// A table from `(key, value)` pairs.
    pub fn tab(entries: Vec<(&str, V)>) -> V {
        V::Tab(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    pub fn floats(values: &[f64]) -> V {
        V::Arr(values.iter().map(|&x| V::Float(x)).collect())
    }

    pub fn matrix(rows: &[Vec<f64>]) -> V {
        V::Arr(rows.iter().map(|r| V::floats(r)).collect())
    }

    pub fn str(s: &str) -> V {
        V::Str(s.to_string())
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            V::Str(_) => "string",
            V::Int(_) => "integer",
            V::Float(_) => "float",
            V::Bool(_) => "bool",
            V::Arr(_) => "array",
            V::Tab(_) => "table",
            V::Raw(_) => "raw",
        }
    }

    /// The number a float field would read (integers convert).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            V::Float(x) => Some(*x),
            V::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn is_number(&self) -> bool {
        matches!(self, V::Float(_) | V::Int(_))
    }

    pub fn get_key(&self, k: &str) -> Option<&V> {
        match self {
            V::Tab(entries) => entries.iter().find(|(name, _)| name == k).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_key_mut(&mut self, k: &str) -> Option<&mut V> {
        match self {
            V::Tab(entries) => entries
                .iter_mut()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `k` in a table, replacing the first entry of that name or appending.
    pub fn set_key(&mut self, k: &str, value: V) {
        if let V::Tab(entries) = self {
            match entries.iter_mut().find(|(name, _)| name == k) {
                Some((_, v)) => *v = value,
                None => entries.push((k.to_string(), value)),
            }
        }
    }

    pub fn remove_key(&mut self, k: &str) -> Option<V> {
        match self {
            V::Tab(entries) => {
                let i = entries.iter().position(|(name, _)| name == k)?;
                Some(entries.remove(i).1)
            }
            _ => None,
        }
    }

    pub fn get(&self, path: &[Seg]) -> Option<&V> {
        let mut node = self;
        for seg in path {
            node = match (seg, node) {
                (Seg::Key(k), V::Tab(_)) => node.get_key(k)?,
                (Seg::Idx(i), V::Arr(items)) => items.get(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    pub fn get_mut(&mut self, path: &[Seg]) -> Option<&mut V> {
        let mut node = self;
        for seg in path {
            node = match seg {
                Seg::Key(k) => node.get_key_mut(k)?,
                Seg::Idx(i) => match node {
                    V::Arr(items) => items.get_mut(*i)?,
                    _ => return None,
                },
            };
        }
        Some(node)
    }

    /// Sets the value at `path`, creating tables on the way as `--set` does; false when the
    /// path runs through a scalar or past the end of an array.
    pub fn set(&mut self, path: &[Seg], value: V) -> bool {
        let Some((last, parents)) = path.split_last() else {
            *self = value;
            return true;
        };
        let mut node = self;
        for seg in parents {
            node = match (seg, node) {
                (Seg::Key(k), node @ V::Tab(_)) => {
                    if node.get_key(k).is_none() {
                        node.set_key(k, V::table());
                    }
                    node.get_key_mut(k).expect("just inserted")
                }
                (Seg::Idx(i), V::Arr(items)) if *i < items.len() => &mut items[*i],
                _ => return false,
            };
        }
        match (last, node) {
            (Seg::Key(k), node @ V::Tab(_)) => {
                node.set_key(k, value);
                true
            }
            (Seg::Idx(i), V::Arr(items)) if *i < items.len() => {
                items[*i] = value;
                true
            }
            _ => false,
        }
    }

    /// Removes the value at `path`; false when there is none.
    pub fn remove(&mut self, path: &[Seg]) -> bool {
        let Some((last, parents)) = path.split_last() else {
            return false;
        };
        match (last, self.get_mut(parents)) {
            (Seg::Key(k), Some(node)) => node.remove_key(k).is_some(),
            (Seg::Idx(i), Some(V::Arr(items))) if *i < items.len() => {
                items.remove(*i);
                true
            }
            _ => false,
        }
    }

    /// Every path below this value, parents before children.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        let children: Vec<(Seg, &V)> = match self {
            V::Tab(entries) => entries.iter().map(|(k, v)| (key(k), v)).collect(),
            V::Arr(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (Seg::Idx(i), v))
                .collect(),
            _ => Vec::new(),
        };
        for (seg, child) in children {
            prefix.push(seg);
            out.push(prefix.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }
}

/// A key as TOML writes it: bare when it can be.
pub fn write_key(k: &str, out: &mut String) {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        out.push_str(k);
    } else {
        write_string(k, out);
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A float as TOML writes it (`nan`, `-inf`, `1e308`, `-0.0`).
pub fn float_text(x: f64) -> String {
    if x.is_nan() {
        if x.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        // Debug prints the shortest text that reads back exactly, always with a `.` or an
        // exponent, which TOML accepts.
        format!("{x:?}")
    }
}

/// `value` on one line.
pub fn write_inline(value: &V, out: &mut String) {
    match value {
        V::Str(s) => write_string(s, out),
        V::Int(i) => {
            let _ = write!(out, "{i}");
        }
        V::Float(x) => out.push_str(&float_text(*x)),
        V::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        V::Raw(r) => out.push_str(r),
        V::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_inline(item, out);
            }
            out.push(']');
        }
        V::Tab(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                out.push_str(if i > 0 { ", " } else { " " });
                write_key(k, out);
                out.push_str(" = ");
                write_inline(v, out);
            }
            out.push_str(if entries.is_empty() { "}" } else { " }" });
        }
    }
}

pub fn inline_text(value: &V) -> String {
    let mut out = String::new();
    write_inline(value, &mut out);
    out
}

fn is_table_array(value: &V) -> bool {
    matches!(value, V::Arr(items) if !items.is_empty() && items.iter().all(|i| matches!(i, V::Tab(_))))
}

fn write_entries(entries: &[(String, V)], out: &mut String) {
    for (k, v) in entries {
        write_key(k, out);
        out.push_str(" = ");
        write_inline(v, out);
        out.push('\n');
    }
}

/// The whole document: top-level scalars first, then `[table]` and `[[array]]` sections.
pub fn write_document(root: &V) -> String {
    let V::Tab(entries) = root else {
        let mut out = "value = ".to_string();
        write_inline(root, &mut out);
        out.push('\n');
        return out;
    };
    let mut out = String::new();
    let plain: Vec<(String, V)> = entries
        .iter()
        .filter(|(_, v)| !matches!(v, V::Tab(_)) && !is_table_array(v))
        .cloned()
        .collect();
    write_entries(&plain, &mut out);
    for (k, v) in entries {
        match v {
            V::Tab(inner) => {
                out.push_str("\n[");
                write_key(k, &mut out);
                out.push_str("]\n");
                write_entries(inner, &mut out);
            }
            V::Arr(items) if is_table_array(v) => {
                for item in items {
                    let V::Tab(inner) = item else { unreachable!() };
                    out.push_str("\n[[");
                    write_key(k, &mut out);
                    out.push_str("]]\n");
                    write_entries(inner, &mut out);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_read_back() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/oscillator_ensemble.toml"
        ))
        .unwrap();
        let table: toml::Table = text.parse().unwrap();
        let doc = V::from_toml(&toml::Value::Table(table.clone()));
        let again: toml::Table = write_document(&doc).parse().unwrap();
        assert_eq!(again, table);
    }
}
