//! Schemas of the config sections that the parser reads as raw tables first (model tables;
//! `[system]` and `[ensemble]` come from the registry, `crate::families`) and of the values with a hand-written `Deserialize`: types
//! used only to describe what the parser accepts, each naming the parser code it mirrors.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::Value;

use crate::io::problem_spec::{MsdChainSpec, RandomModelSpec};
use crate::linear_ph::spec::LinearPhSpec;
use crate::model::input::ColumnRef;

/// A model table (`[candidate]`, `[data.reference]`), as `SpecContext::model` reads it:
/// selected by `kind`, which defaults to `linear-ph`.
#[derive(JsonSchema)]
#[schemars(tag = "kind", rename_all = "kebab-case", transform = kind_defaults_to_linear_ph)]
#[expect(dead_code, reason = "describes the accepted tables; never built")]
pub(crate) enum ModelTable {
    /// J, R, Q, B, x0 given (the default kind).
    LinearPh(LinearPhSpec),
    /// J, R, Q, B, x0 drawn at random: J = s (A − Aᵀ)/√(2n), R = s C Cᵀ/n,
    /// Q = s (I + D Dᵀ/n), B = s ξ, x0 = s ξ with s = `scale`.
    Random(RandomModelSpec),
    /// The benchmark collection's single mass–spring–damper chain at rest, forces on
    /// masses 1 and 2.
    MsdChain(MsdChainSpec),
}

/// Marks `kind` of the `linear-ph` variant optional with that default, as
/// `SpecContext::model` treats a table without `kind`.
fn kind_defaults_to_linear_ph(schema: &mut Schema) {
    let Some(Value::Array(variants)) = schema.get_mut("oneOf") else {
        return;
    };
    for variant in variants {
        let is_linear_ph =
            variant.pointer("/properties/kind/const") == Some(&Value::String("linear-ph".into()));
        if !is_linear_ph {
            continue;
        }
        if let Some(Value::Array(required)) = variant.get_mut("required") {
            required.retain(|name| name != "kind");
        }
        if let Some(Value::Object(kind)) = variant.pointer_mut("/properties/kind") {
            kind.insert("default".into(), Value::String("linear-ph".into()));
        }
    }
}

/// What `ColumnRef`'s `Deserialize` accepts: an integer ≥ 0 or a string.
impl JsonSchema for ColumnRef {
    fn schema_name() -> Cow<'static, str> {
        "ColumnRef".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A CSV value column: a zero-based index or a header name.",
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "string" }
            ]
        })
    }
}

/// The value `ColumnRef`'s `Deserialize` reads back: the index as an integer, the name as a
/// string.
impl serde::Serialize for ColumnRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ColumnRef::Index(index) => serializer.serialize_u64(*index as u64),
            ColumnRef::Name(name) => serializer.serialize_str(name),
        }
    }
}
