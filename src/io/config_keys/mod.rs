//! The keys of every config harbor reads, listed from the types the parser deserialises.
//!
//! Each kind of config ([`ConfigKind`]) has a JSON Schema derived (schemars) from the same
//! serde types, attributes and doc comments that `Config::load`, `GradientConfig::load` and
//! `IdentifyConfig::load` deserialise: renames, defaults (the values of the parser's own
//! default functions), `deny_unknown_fields`, tagged variants and each field's doc comment
//! as its meaning. The sections the parser keeps as raw tables until their kind is known
//! (`[system]`, `[ensemble]`, model tables) are described by the types in
//! `schema_types` and the registry (`crate::families`); the simulate kinds keep their own
//! `[system]` variant and `[ensemble]`.
//! [`key_table`] flattens a schema into dotted keys; each kind has a starter config with
//! comments (`examples/starters/<kind>.toml`).

pub mod key_table;
pub(crate) mod schema_types;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

pub use self::key_table::{ConfigKey, keys_of, table};
pub(crate) use self::schema_types::ModelTable;
use super::config::ConfigFile;
use super::gradient_spec::GradientFile;
use super::identify_spec::IdentifyFile;
use crate::error::{Error, Result};
use crate::families::{KindKeys, SystemSpec};

/// A kind of config file: a simulate config of one `[system]` kind (as the registry,
/// `crate::families`, lists them), a gradient problem or an identification config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigKind {
    /// `harbor simulate` (and the studies) with `[system] kind` this one.
    System(&'static KindKeys),
    /// `harbor gradient`.
    Gradient,
    /// `harbor identify`.
    Identify,
}

impl PartialEq for KindKeys {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

impl Eq for KindKeys {}

impl ConfigKind {
    /// Every kind, in the order the CLI lists them: the system kinds, then the commands.
    pub fn all() -> Vec<ConfigKind> {
        SystemSpec::KEYS
            .iter()
            .map(ConfigKind::System)
            .chain([ConfigKind::Gradient, ConfigKind::Identify])
            .collect()
    }

    /// The names of [`ConfigKind::all`]: the system kinds as `[system] kind` spells them,
    /// then the commands.
    pub fn names() -> Vec<&'static str> {
        Self::all().into_iter().map(ConfigKind::name).collect()
    }

    /// The name of this kind (`linear-ph`, …, `identify`).
    pub fn name(self) -> &'static str {
        match self {
            ConfigKind::System(keys) => keys.kind,
            ConfigKind::Gradient => "gradient",
            ConfigKind::Identify => "identify",
        }
    }

    /// The kind called `name`; an unknown name is an error listing the kinds.
    pub fn by_name(name: &str) -> Result<Self> {
        Self::all()
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "kind",
                    format!(
                        "unknown config kind {name:?}; expected one of {}",
                        Self::names().join(", ")
                    ),
                )
            })
    }

    /// The command that reads this kind of config.
    pub fn command(self) -> &'static str {
        match self {
            ConfigKind::System(_) => "simulate",
            ConfigKind::Gradient => "gradient",
            ConfigKind::Identify => "identify",
        }
    }

    /// The JSON Schema (draft 2020-12) of this kind of config.
    pub fn schema(self) -> Schema {
        let generator = SchemaSettings::draft2020_12().into_generator();
        match self {
            ConfigKind::Gradient => generator.into_root_schema_for::<GradientFile>(),
            ConfigKind::Identify => generator.into_root_schema_for::<IdentifyFile>(),
            ConfigKind::System(keys) => {
                let mut schema = generator.into_root_schema_for::<ConfigFile>();
                narrow_simulate(keys, &mut schema);
                schema
            }
        }
    }
}

/// Keeps the `[system]` variant and the `[ensemble]` of the simulate kind `keys` (as
/// `SystemSpec::parse` and `Config::run_plan` choose them), without the sections it does
/// not read.
fn narrow_simulate(keys: &KindKeys, schema: &mut Schema) {
    let root = schema.as_value().clone();
    let system_ref = format!("/$defs/{}", crate::io::config::SystemSpec::schema_name());
    let variant = root
        .pointer(&format!("{system_ref}/oneOf"))
        .and_then(Value::as_array)
        .and_then(|variants| {
            variants
                .iter()
                .find(|v| v.pointer("/properties/kind/const") == Some(&Value::from(keys.kind)))
        })
        .cloned()
        .expect("every simulate kind is a variant of SystemSpec");
    let ensemble = (keys.ensemble)();
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(Value::Object(system)) = properties.get_mut("system") {
        let description = system.get("description").cloned();
        let mut narrowed = variant.as_object().cloned().unwrap_or_default();
        let kind_meaning = narrowed.get("description").cloned();
        if let Some(description) = description {
            narrowed.insert("description".into(), description);
        }
        if let (Some(Value::Object(kind)), Some(meaning)) = (
            narrowed
                .get_mut("properties")
                .and_then(|p| p.get_mut("kind")),
            kind_meaning,
        ) {
            kind.insert("description".into(), meaning);
        }
        *system = narrowed;
    }
    if let Some(Value::Object(table)) = properties.get_mut("ensemble") {
        let description = table.get("description").cloned();
        table.clear();
        table.insert("$ref".into(), format!("#/$defs/{ensemble}").into());
        if let Some(description) = description {
            table.insert("description".into(), description);
        }
    }
    match (keys.problem)() {
        Some(problem) => {
            if let Some(Value::Object(table)) = properties.get_mut("problem") {
                let description = table.get("description").cloned();
                table.clear();
                table.insert("$ref".into(), format!("#/$defs/{problem}").into());
                if let Some(description) = description {
                    table.insert("description".into(), description);
                }
            }
        }
        None => {
            properties.remove("problem");
        }
    }
    for section in keys.unread_sections {
        properties.remove(*section);
    }
    prune_definitions(schema);
}

impl ConfigKind {
    /// Every key of this kind of config.
    pub fn keys(self) -> Vec<ConfigKey> {
        keys_of(self.schema().as_value())
    }

    /// The starter config: a small run that works, with every section and a comment on
    /// each key.
    pub fn starter(self) -> &'static str {
        match self {
            ConfigKind::System(keys) => keys.starter,
            ConfigKind::Gradient => include_str!("../../../examples/starters/gradient.toml"),
            ConfigKind::Identify => include_str!("../../../examples/starters/identify.toml"),
        }
    }
}

/// Drops the `$defs` entries that nothing outside them refers to any more (transitively).
fn prune_definitions(schema: &mut Schema) {
    fn references(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref")
                    && let Some(name) = r.strip_prefix("#/$defs/")
                {
                    found.push(name.to_string());
                }
                map.values().for_each(|v| references(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| references(v, found)),
            _ => {}
        }
    }
    let Some(Value::Object(definitions)) = schema.remove("$defs") else {
        return;
    };
    let mut pending = vec![];
    references(schema.as_value(), &mut pending);
    let mut kept = serde_json::Map::new();
    while let Some(name) = pending.pop() {
        if kept.contains_key(&name) {
            continue;
        }
        if let Some(definition) = definitions.get(&name) {
            references(definition, &mut pending);
            kept.insert(name, definition.clone());
        }
    }
    // Keep the schema's own order of definitions.
    let ordered: serde_json::Map<String, Value> = definitions
        .into_iter()
        .filter(|(name, _)| kept.contains_key(name))
        .collect();
    schema.insert("$defs".into(), Value::Object(ordered));
}

#[cfg(test)]
mod tests;
