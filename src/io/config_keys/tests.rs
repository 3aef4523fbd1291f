//! Every default the key listing shows is the one the parser takes: for each schema
//! definition with defaults, a minimal table without the key and the same table with the
//! shown default parse to the same value.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ConfigKind;
use crate::families::contact::{ContactEnsembleSpec, ContactSystemSpec};
use crate::identify::{CgSettings, MonteCarlo};
use crate::io::Config;
use crate::io::config::{OutputSpec, SchemeSpec};
use crate::io::cost_spec::CostSpec;
use crate::io::gradient_spec::GradientFile;
use crate::io::identify_spec::IdentifyFile;
use crate::io::problem_spec::{DataSpec, NoiseSpec, RandomModelSpec, SpecContext};
use crate::io::study_spec::StudySpec;
use crate::linear_ph::LinearPhEnsembleSpec;
use crate::model::SignalSpec;
use crate::port_hamiltonian::spec::{NewtonSpec, PortHamiltonianEnsembleSpec, PortHamiltonianSpec};
use crate::variational::spec::{VariationalEnsembleSpec, VariationalSpec};

/// Parses `table` as `T` and shows the result (value or error) for comparison.
fn parsed<T: DeserializeOwned + std::fmt::Debug>(table: toml::Value) -> String {
    format!("{:?}", T::deserialize(table).map_err(|e| e.to_string()))
}

/// A simulate config as `Config::from_str_with` reads it (`[system]` parsed by its kind).
fn simulate_config(table: toml::Value) -> String {
    let text = toml::to_string(&table).expect("a table writes as TOML");
    format!("{:?}", Config::from_str_with(&text, &[], "test"))
}

/// A model table as `SpecContext::model` builds it (its `kind` defaults in code).
fn model_table(table: toml::Value) -> String {
    let context = SpecContext {
        origin: "test".into(),
        base_dir: PathBuf::new(),
        work_limit: crate::plan::gradient_resources::DEFAULT_WORK_LIMIT,
    };
    let table = table.as_table().cloned().unwrap_or_default();
    format!("{:?}", context.model("candidate", &table, 1))
}

/// The parser of each schema definition (by its schema name) that has defaults.
fn parsers() -> BTreeMap<&'static str, fn(toml::Value) -> String> {
    BTreeMap::from([
        ("ConfigFile", simulate_config as fn(toml::Value) -> String),
        ("GradientFile", parsed::<GradientFile>),
        ("IdentifyFile", parsed::<IdentifyFile>),
        ("OutputSpec", parsed::<OutputSpec>),
        ("SchemeSpec", parsed::<SchemeSpec>),
        ("StudySpec", parsed::<StudySpec>),
        ("SignalSpec", parsed::<SignalSpec>),
        ("ContactSystemSpec", parsed::<ContactSystemSpec>),
        ("LinearPhEnsembleSpec", parsed::<LinearPhEnsembleSpec>),
        ("ContactEnsembleSpec", parsed::<ContactEnsembleSpec>),
        ("PortHamiltonianSpec", parsed::<PortHamiltonianSpec>),
        (
            "PortHamiltonianEnsembleSpec",
            parsed::<PortHamiltonianEnsembleSpec>,
        ),
        ("NewtonSpec", parsed::<NewtonSpec>),
        ("VariationalSpec", parsed::<VariationalSpec>),
        ("VariationalEnsembleSpec", parsed::<VariationalEnsembleSpec>),
        (
            "VariationalNewtonSpec",
            parsed::<crate::families::variational::spec::NewtonSpec>,
        ),
        ("DataSpec", parsed::<DataSpec>),
        ("NoiseSpec", parsed::<NoiseSpec>),
        ("RandomModelSpec", parsed::<RandomModelSpec>),
        ("CostSpec", parsed::<CostSpec>),
        ("MonteCarlo", parsed::<MonteCarlo>),
        ("CgSettings", parsed::<CgSettings>),
        ("ModelTable", model_table),
    ])
}

/// `schema` with `$ref`s followed.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => resolve(root, root.pointer(&r[1..]).expect("a $ref that resolves")),
        None => schema,
    }
}

/// A value of `schema` with only its required keys, each a small sample value.
fn sample(root: &Value, schema: &Value) -> Value {
    let schema = resolve(root, schema);
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values[0].clone();
    }
    for combinator in ["oneOf", "anyOf"] {
        if let Some(alternatives) = schema.get(combinator).and_then(Value::as_array) {
            let first = alternatives
                .iter()
                .find(|a| resolve(root, a).get("type") != Some(&Value::from("null")))
                .expect("a non-null alternative");
            return sample(root, first);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().find(|t| *t != "null").cloned(),
        other => other.cloned(),
    };
    match kind.as_ref().and_then(Value::as_str) {
        Some("number") => Value::from(1.0),
        Some("integer") => Value::from(1),
        Some("boolean") => Value::from(true),
        Some("string") => Value::from("x"),
        Some("array") => Value::Array(vec![sample(root, &schema["items"])]),
        _ => Value::Object(minimal(root, schema)),
    }
}

/// The required keys of an object schema, each sampled.
fn minimal(root: &Value, schema: &Value) -> Map<String, Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    properties
        .into_iter()
        .flatten()
        .filter(|(name, _)| required.contains(&name.as_str()))
        .map(|(name, property)| (name.clone(), sample(root, property)))
        .collect()
}

/// The object schemas of a definition with their paths inside it: the definition (or its
/// variants) and the tables written inline in it, such as a simulate config's `[system]`.
fn objects(root: &Value, definition: &Value, path: &[String]) -> Vec<(Vec<String>, Value)> {
    let definition = resolve(root, definition);
    let mut found = vec![];
    if let Some(properties) = definition.get("properties").and_then(Value::as_object) {
        found.push((path.to_vec(), definition.clone()));
        for (name, property) in properties {
            if property.get("$ref").is_none() {
                let mut inner = path.to_vec();
                inner.push(name.clone());
                found.extend(objects(root, property, &inner));
            }
        }
    }
    for combinator in ["oneOf", "anyOf"] {
        for alternative in definition
            .get(combinator)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if alternative.get("$ref").is_none() {
                found.extend(objects(root, alternative, path));
            }
        }
    }
    found
}

/// `table` with `value` at the dotted `path`.
fn put(table: &mut Map<String, Value>, path: &[String], value: Map<String, Value>) {
    match path {
        [] => *table = value,
        [first, rest @ ..] => {
            let inner = table
                .entry(first.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if !inner.is_object() {
                *inner = Value::Object(Map::new());
            }
            put(inner.as_object_mut().unwrap(), rest, value);
        }
    }
}

/// `value` as TOML; a `null` (an omitted `Option`) is left out.
fn toml_of(value: &Map<String, Value>) -> toml::Value {
    fn without_nulls(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), without_nulls(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
            other => other.clone(),
        }
    }
    toml::Value::try_from(without_nulls(&Value::Object(value.clone())))
        .expect("JSON without nulls is TOML")
}

#[test]
fn every_listed_default_is_the_parsers_default() {
    let parsers = parsers();
    let mut checked = 0;
    for kind in ConfigKind::all() {
        let schema = kind.schema();
        let root = schema.as_value();
        let mut definitions: Vec<(String, Value)> = root
            .get("$defs")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, d)| (name.clone(), d.clone()))
            .collect();
        definitions.push((root["title"].as_str().unwrap().to_string(), root.clone()));
        for (name, definition) in definitions {
            let base = match definition.get("properties") {
                Some(_) => minimal(root, &definition),
                None => Map::new(),
            };
            for (path, object) in objects(root, &definition, &[]) {
                let properties = object["properties"].as_object().unwrap();
                for (key, property) in properties {
                    let Some(default) = property
                        .get("default")
                        .or_else(|| resolve(root, property).get("default"))
                        .filter(|d| !d.is_null())
                    else {
                        continue;
                    };
                    let parse = parsers.get(name.as_str()).unwrap_or_else(|| {
                        panic!(
                            "{}: {name}.{key} has a default; add {name}'s parser to this test",
                            kind.name()
                        )
                    });
                    let mut without = base.clone();
                    put(&mut without, &path, minimal(root, &object));
                    let mut with = without.clone();
                    let mut inner = minimal(root, &object);
                    inner.insert(key.clone(), default.clone());
                    put(&mut with, &path, inner);
                    let (omitted, given) = (parse(toml_of(&without)), parse(toml_of(&with)));
                    let shown = [path.clone(), vec![key.clone()]].concat().join(".");
                    assert!(
                        !omitted.starts_with("Err") || name == "ModelTable",
                        "{}: {name} without {shown} does not parse: {omitted}",
                        kind.name()
                    );
                    assert_eq!(
                        omitted,
                        given,
                        "{}: {name}: {shown}: the listed default {default} is not what the parser takes",
                        kind.name()
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} defaults checked");
}

#[test]
fn a_default_the_parser_does_not_take_is_caught() {
    // The check above, on a default that is wrong on purpose: output.every = 2.
    let schema = ConfigKind::by_name("linear-ph").unwrap().schema();
    let root = schema.as_value();
    let output = &root["$defs"]["OutputSpec"];
    let without = minimal(root, output);
    let mut with = without.clone();
    with.insert("every".into(), Value::from(2));
    assert_ne!(
        parsed::<OutputSpec>(toml_of(&without)),
        parsed::<OutputSpec>(toml_of(&with))
    );
}
