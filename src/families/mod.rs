//! The registry of model families: the one place that names them all. Each family is a
//! wing, `src/families/<family>/` with its WGSL in `shaders/<family>/`, holding its model,
//! `[system]` section, plan, method, kernel, CPU twin and workloads; the engine core
//! (plan grid/record/stream/budget, kernel ABI/layout/WGSL assembly, executor, backends)
//! is generic over [`Family`] and reaches a concrete plan through
//! [`RunPlan::visit`].
//!
//! Adding a family adds its wing and one line to each list of `registry!` (below): the plan it
//! runs (a [`RunPlan`] variant) and the `[system]` kinds it reads (a [`SystemSpec`] variant,
//! whose spec type implements [`SystemKind`]).

pub mod contact;
pub mod linear_ph;

use crate::error::{Error, Result};
use crate::io::Config;
use crate::io::config::deserialize_section;
use crate::kernels::Family;

/// A `[system]` kind's spec: the family's config section, turned into the plan of a run.
pub trait SystemKind {
    /// The plan of the configured run, exactly as configured (`[scheme]`, `[[input]]`,
    /// `[ensemble]`, `[output]` of `config`).
    fn run_plan(&self, config: &Config) -> Result<RunPlan>;
}

/// Code that runs on any family: `visit` is called with the concrete plan.
pub trait FamilyVisitor {
    type Output;
    fn visit<F: Family>(self, family: &F) -> Self::Output;
}

/// Declares the registry: `plans` lists each family's plan type, `kinds` each `[system]`
/// kind (as written in configs; the variant's kebab-case name) with its spec type.
macro_rules! registry {
    (
        plans { $($family:ident($plan:ty)),* $(,)? }
        kinds { $($kind:literal => $variant:ident($spec:ty)),* $(,)? }
    ) => {
        /// The plan of any registered family.
        #[derive(Debug, Clone)]
        pub enum RunPlan {
            $($family(Box<$plan>),)*
        }

        impl RunPlan {
            /// Calls `visitor` with the concrete family.
            pub fn visit<V: FamilyVisitor>(&self, visitor: V) -> V::Output {
                match self {
                    $(RunPlan::$family(plan) => visitor.visit(plan.as_ref()),)*
                }
            }
        }

        /// `[system]`, selected by `kind`.
        #[derive(Debug, Clone, schemars::JsonSchema)]
        #[schemars(tag = "kind", rename_all = "kebab-case")]
        pub enum SystemSpec {
            $($variant($spec),)*
        }

        impl SystemSpec {
            /// The kinds, as written in configs.
            pub const KINDS: &[&str] = &[$($kind),*];

            /// The `kind` as written in configs.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(SystemSpec::$variant(_) => $kind,)*
                }
            }

            /// The plan of the configured run.
            pub fn run_plan(&self, config: &Config) -> Result<RunPlan> {
                match self {
                    $(SystemSpec::$variant(spec) => spec.run_plan(config),)*
                }
            }

            /// `rest` (the table without `kind`) as the spec of `kind`; `None` for an
            /// unknown kind.
            fn of_kind(kind: &str, rest: toml::Value, origin: &str) -> Option<Result<Self>> {
                Some(match kind {
                    $($kind => deserialize_section(rest, "system", origin).map(SystemSpec::$variant),)*
                    _ => return None,
                })
            }
        }
    };
}

registry! {
    plans {
        LinearPh(linear_ph::LinearPhPlan),
        Contact(contact::ContactPlan),
    }
    kinds {
        "linear-ph" => LinearPh(linear_ph::spec::LinearPhSpec),
        "mechanical" => Mechanical(linear_ph::spec::MechanicalSpec),
        "contact" => Contact(contact::ContactSystemSpec),
    }
}

impl SystemSpec {
    /// Reads `[system]`: its `kind` first, then the rest as that kind's spec, so errors
    /// name the dotted path inside the table (`system.potential[0]: unknown field …`).
    pub(crate) fn parse(mut table: toml::Table, origin: &str) -> Result<Self> {
        let kinds = match Self::KINDS.split_last() {
            Some((last, [])) => format!("expected {last}"),
            Some((last, rest)) => format!("expected {} or {last}", rest.join(", ")),
            None => "no kind is registered".to_string(),
        };
        let kind = match table.remove("kind") {
            Some(toml::Value::String(kind)) => kind,
            Some(other) => {
                return Err(Error::invalid(
                    "system.kind",
                    format!("must be a string ({kinds}), got {other}"),
                ));
            }
            None => {
                return Err(Error::invalid(
                    "system.kind",
                    format!("is missing; {kinds}"),
                ));
            }
        };
        Self::of_kind(&kind, toml::Value::Table(table), origin).unwrap_or_else(|| {
            Err(Error::invalid(
                "system.kind",
                format!("unknown kind {kind:?}; {kinds}"),
            ))
        })
    }
}
