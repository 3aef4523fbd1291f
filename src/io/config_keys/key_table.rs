//! The keys of a config schema as a flat list: one row per dotted key path (`[]` marks the
//! entries of an array of tables), with its type, default and one-line meaning, and the
//! `kind` each key depends on.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// The widest default shown in its own column.
pub const DEFAULT_WIDTH: usize = 24;

/// The widest type shown in its own column; a longer one (a list of values) goes into the
/// meaning.
pub const TYPE_WIDTH: usize = 28;

/// A key that applies only when a tag key has a value: `input[].kind = "sine"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// Dotted path of the tag key.
    pub tag: String,
    /// The value the tag must have.
    pub value: String,
}

/// One key of a config.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigKey {
    /// Dotted path from the top of the file; `[]` marks the entries of an array.
    pub path: String,
    /// The tag values this key applies under, outermost first (empty: always).
    pub when: Vec<Condition>,
    /// What the value is, in TOML terms (`number`, `[[number]]`, `"gauss" | …`, `table`).
    pub type_name: String,
    /// Whether the key must be given (when its table and conditions apply).
    pub required: bool,
    /// The value the parser takes when the key is omitted, where it is a fixed value.
    pub default: Option<Value>,
    /// One line on what the key means.
    pub meaning: String,
}

impl ConfigKey {
    /// The default column: `required`, the default as TOML, `optional` for a table whose
    /// keys have their own defaults, or `—` (optional, no fixed value: the meaning says
    /// what omitting it does). A default longer than [`DEFAULT_WIDTH`] is `see meaning`.
    pub fn default_text(&self) -> String {
        match (&self.default, self.required) {
            (_, true) => "required".into(),
            (Some(value), false) => {
                let text = toml_text(value);
                if text.chars().count() <= DEFAULT_WIDTH {
                    text
                } else if value.is_object() {
                    "optional".into()
                } else {
                    "see meaning".into()
                }
            }
            (None, false) => "—".into(),
        }
    }

    /// The type column: the type, or `string` / `see meaning` when it is longer than
    /// [`TYPE_WIDTH`].
    pub fn type_text(&self) -> String {
        if self.type_name.chars().count() <= TYPE_WIDTH {
            self.type_name.clone()
        } else if self.type_name.starts_with('"') {
            "string".into()
        } else {
            "see meaning".into()
        }
    }

    /// The meaning column: the conditions, the meaning, and a type or default too long for
    /// its column.
    pub fn meaning_text(&self) -> String {
        let mut text = format!("{}{}", self.when_text(), self.meaning);
        if self.type_text() != self.type_name {
            let label = if self.type_name.starts_with('"') {
                "One of"
            } else {
                "Type:"
            };
            let _ = write!(text, " {label} {}.", self.type_name);
        }
        if let Some(value) = &self.default
            && !value.is_object()
            && self.default_text() == "see meaning"
        {
            let _ = write!(text, " Default: {}.", toml_text(value));
        }
        text
    }

    /// The conditions as written before the meaning: `(kind = sine)` for a tag beside the
    /// key, full tag paths otherwise.
    pub fn when_text(&self) -> String {
        let parent = self.path.rsplit_once('.').map_or("", |(parent, _)| parent);
        let parts: Vec<String> = self
            .when
            .iter()
            .map(|c| {
                let tag = match c.tag.rsplit_once('.') {
                    Some((tag_parent, name)) if tag_parent == parent => name,
                    _ => &c.tag,
                };
                format!("{tag} = {}", c.value)
            })
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("({}) ", parts.join("; "))
        }
    }
}

/// The keys of `root` (a JSON Schema with `$defs`), in the order the schema lists them.
pub fn keys_of(root: &Value) -> Vec<ConfigKey> {
    let mut walker = Walker { root, keys: vec![] };
    walker.children(root, "", &[]);
    walker.keys
}

/// The keys as an aligned table: key, type, default, meaning.
pub fn table(keys: &[ConfigKey]) -> String {
    let header = ("key", "type", "default");
    let rows: Vec<(String, String, String, String)> = keys
        .iter()
        .map(|k| {
            (
                k.path.clone(),
                k.type_text(),
                k.default_text(),
                k.meaning_text(),
            )
        })
        .collect();
    let width = |column: fn(&(String, String, String, String)) -> &String, title: &str| {
        rows.iter()
            .map(|r| column(r).chars().count())
            .chain([title.chars().count()])
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (
        width(|r| &r.0, header.0),
        width(|r| &r.1, header.1),
        width(|r| &r.2, header.2),
    );
    let mut out = String::new();
    let mut line = |a: &str, b: &str, c: &str, d: &str| {
        let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w - s.chars().count()));
        let text = format!("{}  {}  {}  {d}", pad(a, w0), pad(b, w1), pad(c, w2));
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(header.0, header.1, header.2, "meaning");
    for (a, b, c, d) in &rows {
        line(a, b, c, d);
    }
    out
}

struct Walker<'a> {
    root: &'a Value,
    keys: Vec<ConfigKey>,
}

impl Walker<'_> {
    /// `schema` with `$ref`s followed into `$defs` (the referring schema's own keys, such as
    /// a field's description and default, win).
    fn resolve(&self, schema: &Value) -> Map<String, Value> {
        let mut merged = Map::new();
        let mut current = schema.as_object().cloned().unwrap_or_default();
        loop {
            let reference = current.remove("$ref");
            for (key, value) in std::mem::take(&mut current) {
                merged.entry(key).or_insert(value);
            }
            let Some(Value::String(reference)) = reference else {
                return merged;
            };
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer));
            match target.and_then(Value::as_object) {
                Some(target) => current = target.clone(),
                None => return merged,
            }
        }
    }

    /// `schema` without its `null` alternative (an `Option`).
    fn without_null(&self, schema: &Value) -> Map<String, Value> {
        let mut map = self.resolve(schema);
        if let Some(Value::Array(types)) = map.get("type") {
            let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            let kept = if kept.len() == 1 {
                kept[0].clone()
            } else {
                Value::Array(kept)
            };
            map.insert("type".into(), kept);
        }
        for combinator in ["anyOf", "oneOf"] {
            let Some(Value::Array(alternatives)) = map.get(combinator) else {
                continue;
            };
            let kept: Vec<Value> = alternatives
                .iter()
                .filter(|a| self.resolve(a).get("type") != Some(&Value::from("null")))
                .cloned()
                .collect();
            if kept.len() == 1 {
                map.remove(combinator);
                for (key, value) in self.resolve(&kept[0]) {
                    map.entry(key).or_insert(value);
                }
            } else {
                map.insert(combinator.into(), Value::Array(kept));
            }
        }
        map
    }

    /// The alternatives of a `oneOf`/`anyOf`, resolved.
    fn alternatives(&self, map: &Map<String, Value>) -> Vec<Map<String, Value>> {
        ["oneOf", "anyOf"]
            .iter()
            .filter_map(|c| map.get(*c).and_then(Value::as_array))
            .flatten()
            .map(|a| self.without_null(a))
            .collect()
    }

    /// The name of the property that tags a variant: the one with a `const` value.
    fn tag_of(&self, variant: &Map<String, Value>) -> Option<(String, Value)> {
        let properties = variant.get("properties")?.as_object()?;
        properties.iter().find_map(|(name, schema)| {
            let value = self.resolve(schema).get("const")?.clone();
            Some((name.clone(), value))
        })
    }

    /// The TOML type of a schema.
    fn type_name(&self, schema: &Value) -> String {
        let map = self.without_null(schema);
        if let Some(value) = map.get("const") {
            return toml_text(value);
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return values.iter().map(toml_text).collect::<Vec<_>>().join(" | ");
        }
        let alternatives = self.alternatives(&map);
        if !alternatives.is_empty() {
            if alternatives.iter().all(|a| a.contains_key("const")) {
                return alternatives
                    .iter()
                    .map(|a| toml_text(&a["const"]))
                    .collect::<Vec<_>>()
                    .join(" | ");
            }
            let mut names: Vec<String> = alternatives
                .iter()
                .map(|a| self.type_name(&Value::Object(a.clone())))
                .collect();
            names.dedup();
            return names.join(" | ");
        }
        match map.get("type").and_then(Value::as_str) {
            Some("array") => match map.get("items") {
                Some(items) => format!("[{}]", self.type_name(items)),
                None => "array".into(),
            },
            Some("object") => "table".into(),
            Some("integer") if is_unsigned(&map) => "integer ≥ 0".into(),
            Some(name) => name.into(),
            None => "any".into(),
        }
    }

    /// Pushes the rows of the properties (and variants) of `schema`, a table at `path`.
    fn children(&mut self, schema: &Value, path: &str, when: &[Condition]) {
        let map = self.without_null(schema);
        if map.get("type").and_then(Value::as_str) == Some("array") {
            if let Some(items) = map.get("items") {
                self.children(items, &format!("{path}[]"), when);
            }
            return;
        }
        self.properties(&map, path, when, None);
        self.named_entries(&map, path, when);
        let alternatives = self.alternatives(&map);
        let tagged: Vec<(String, Value, &Map<String, Value>)> = alternatives
            .iter()
            .filter_map(|a| self.tag_of(a).map(|(tag, value)| (tag, value, a)))
            .collect();
        if !tagged.is_empty() && tagged.len() == alternatives.len() {
            for (tag, value, variant) in tagged {
                let tag_path = join(path, &tag);
                let tag_schema = &variant["properties"][&tag];
                let required = is_required(variant, &tag);
                self.keys.push(ConfigKey {
                    path: tag_path.clone(),
                    when: when.to_vec(),
                    type_name: toml_text(&value),
                    required,
                    default: self.resolve(tag_schema).get("default").cloned(),
                    meaning: one_line(variant.get("description")),
                });
                let mut inner = when.to_vec();
                inner.push(Condition {
                    tag: tag_path,
                    value: value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_string),
                });
                self.properties(variant, path, &inner, Some(&tag));
            }
        } else {
            for alternative in alternatives {
                self.children(&Value::Object(alternative), path, when);
            }
        }
    }

    /// A table whose keys the user names (`system.parameters`, `ensemble.parameters`): one
    /// row `<path>.<name>` for any of its entries, and the entry's own keys below it.
    fn named_entries(&mut self, map: &Map<String, Value>, path: &str, when: &[Condition]) {
        let Some(entry) = map.get("additionalProperties").filter(|v| v.is_object()) else {
            return;
        };
        let key_path = join(path, NAMED_ENTRY);
        let resolved = self.resolve(entry);
        let meaning = match resolved.get("description") {
            Some(description) => one_line(Some(description)),
            None => "an entry named by the user".to_string(),
        };
        self.keys.push(ConfigKey {
            path: key_path.clone(),
            when: when.to_vec(),
            type_name: self.type_name(entry),
            required: false,
            default: None,
            meaning,
        });
        self.children(entry, &key_path, when);
    }

    /// Pushes a row for each property of `map` (but `skip`, a variant's tag) and recurses.
    fn properties(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        when: &[Condition],
        skip: Option<&str>,
    ) {
        let Some(properties) = map.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (name, property) in properties {
            if Some(name.as_str()) == skip {
                continue;
            }
            let key_path = join(path, name);
            let resolved = self.resolve(property);
            let default = resolved.get("default").filter(|v| !v.is_null()).cloned();
            self.keys.push(ConfigKey {
                path: key_path.clone(),
                when: when.to_vec(),
                type_name: self.type_name(property),
                required: is_required(map, name),
                default,
                meaning: one_line(resolved.get("description")),
            });
            self.children(property, &key_path, when);
        }
    }
}

/// The path segment of a table's entries whose keys the user names.
pub const NAMED_ENTRY: &str = "<name>";

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn is_required(map: &Map<String, Value>, name: &str) -> bool {
    map.get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|n| n == name))
}

fn is_unsigned(map: &Map<String, Value>) -> bool {
    map.get("minimum").and_then(Value::as_f64) == Some(0.0)
        || map
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("uint"))
}

/// The first paragraph of a description on one line, intra-doc links as plain code.
fn one_line(description: Option<&Value>) -> String {
    let text = description.and_then(Value::as_str).unwrap_or_default();
    let paragraph = text.split("\n\n").next().unwrap_or_default();
    let line = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    line.replace("[`", "`").replace("`]", "`")
}

/// A JSON value written as TOML: strings quoted, arrays and inline tables as TOML.
pub fn toml_text(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_text).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{k} = {}", toml_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e16 => format!("{f:.1}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}
