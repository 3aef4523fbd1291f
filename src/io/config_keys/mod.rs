//! The keys of every config harbor reads, listed from the types the parser deserialises.
//!
//! Each kind of config ([`ConfigKind`]) has a JSON Schema derived (schemars) from the same
//! serde types, attributes and doc comments that `Config::load`, `GradientConfig::load` and
//! `IdentifyConfig::load` deserialise: renames, defaults (the values of the parser's own
//! default functions), `deny_unknown_fields`, tagged variants and each field's doc comment
//! as its meaning. The sections the parser keeps as raw tables until their kind is known
//! (`[system]`, `[ensemble]`, model tables) are described by the types in
//! `schema_types`; the simulate kinds keep their own `[system]` variant and `[ensemble]`.
//! [`key_table`] flattens a schema into dotted keys; each kind has a starter config with
//! comments (`examples/starters/<kind>.toml`).

pub mod key_table;
pub(crate) mod schema_types;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

pub use self::key_table::{ConfigKey, keys_of, table};
pub(crate) use self::schema_types::{EnsembleTable, ModelTable};
use super::config::ConfigFile;
use super::gradient_spec::GradientFile;
use super::identify_spec::IdentifyFile;
use crate::error::{Error, Result};
use crate::families::contact::ContactEnsembleSpec;
use crate::linear_ph::LinearPhEnsembleSpec;

/// A kind of config file: a simulate config of one `[system]` kind, a gradient problem or
/// an identification config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigKind {
    /// `harbor simulate` (and the studies) with `[system] kind = "linear-ph"`.
    LinearPh,
    /// `harbor simulate` (and the studies) with `[system] kind = "mechanical"`.
    Mechanical,
    /// `harbor simulate` and `harbor study contact-energy` with `[system] kind = "contact"`.
    Contact,
    /// `harbor gradient`.
    Gradient,
    /// `harbor identify`.
    Identify,
}

impl ConfigKind {
    /// Every kind, in the order the CLI lists them.
    pub const ALL: [ConfigKind; 5] = [
        ConfigKind::LinearPh,
        ConfigKind::Mechanical,
        ConfigKind::Contact,
        ConfigKind::Gradient,
        ConfigKind::Identify,
    ];

    /// The names of [`ConfigKind::ALL`]: the system kinds as `[system] kind` spells them,
    /// then the commands.
    pub const NAMES: [&'static str; 5] =
        ["linear-ph", "mechanical", "contact", "gradient", "identify"];

    /// The name of this kind (`linear-ph`, …, `identify`).
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The kind called `name`; an unknown name is an error listing the kinds.
    pub fn by_name(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| {
                Error::invalid(
                    "kind",
                    format!(
                        "unknown config kind {name:?}; expected one of {}",
                        Self::NAMES.join(", ")
                    ),
                )
            })
    }

    /// The command that reads this kind of config.
    pub fn command(self) -> &'static str {
        match self {
            ConfigKind::LinearPh | ConfigKind::Mechanical | ConfigKind::Contact => "simulate",
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
            simulate => {
                let mut schema = generator.into_root_schema_for::<ConfigFile>();
                simulate.narrow_simulate(&mut schema);
                schema
            }
        }
    }

    /// Keeps the `[system]` variant and the `[ensemble]` of this simulate kind (as
    /// `SystemSpec::parse` and `Config::run_plan` choose them); contact configs have no
    /// `[[input]]` and no `[study]`.
    fn narrow_simulate(self, schema: &mut Schema) {
        let root = schema.as_value().clone();
        let system_ref = format!("/$defs/{}", crate::io::config::SystemSpec::schema_name());
        let variant = root
            .pointer(&format!("{system_ref}/oneOf"))
            .and_then(Value::as_array)
            .and_then(|variants| {
                variants.iter().find(|v| {
                    v.pointer("/properties/kind/const") == Some(&Value::from(self.name()))
                })
            })
            .cloned()
            .expect("every simulate kind is a variant of SystemSpec");
        let ensemble = match self {
            ConfigKind::Contact => ContactEnsembleSpec::schema_name(),
            _ => LinearPhEnsembleSpec::schema_name(),
        };
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
        if self == ConfigKind::Contact {
            properties.remove("input");
            properties.remove("study");
        }
        prune_definitions(schema);
    }

    /// Every key of this kind of config.
    pub fn keys(self) -> Vec<ConfigKey> {
        keys_of(self.schema().as_value())
    }

    /// The starter config: a small run that works, with every section and a comment on
    /// each key.
    pub fn starter(self) -> &'static str {
        match self {
            ConfigKind::LinearPh => include_str!("../../../examples/starters/linear-ph.toml"),
            ConfigKind::Mechanical => include_str!("../../../examples/starters/mechanical.toml"),
            ConfigKind::Contact => include_str!("../../../examples/starters/contact.toml"),
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
