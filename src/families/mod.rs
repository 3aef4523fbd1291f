//! The registry of model families: the one place that names them all. Each family is a
//! wing, `src/families/<family>/` with its WGSL in `shaders/<family>/`, holding its model,
//! `[system]` section, plan, method, kernel, CPU twin and workloads; the engine core
//! (plan grid/record/stream/budget, kernel ABI/layout/WGSL assembly, executor, backends)
//! is generic over [`Family`] and reaches a concrete plan through
//! [`RunPlan::visit`].
//!
//! Adding a family adds its wing and one line to each list of `registry!` (below): the plan it
//! runs (a [`RunPlan`] variant), the `[system]` kinds it reads (a [`SystemSpec`] variant,
//! whose spec type implements [`SystemKind`]) and its `harbor bench` workload (a
//! [`FamilyWorkload`] variant, implementing [`BenchWorkload`]).

pub mod contact;
pub mod linear_ph;
pub mod port_hamiltonian;
pub mod variational;

use crate::error::{Error, Result};
use crate::io::Config;
use crate::io::config::deserialize_section;
use crate::kernels::Family;
use crate::plan::Recording;
use crate::study::energy_order::EnergyOrderSubject;

/// A `[system]` kind's spec: the family's config section, turned into the plan of a run,
/// with what `harbor keys` lists for configs of this kind.
pub trait SystemKind {
    /// The `[ensemble]` table of this kind (members drawn around the system).
    type Ensemble: schemars::JsonSchema;
    /// The `[problem]` table of this kind, or [`NoProblem`] for kinds that pose none (a
    /// `[problem]` section is then refused).
    type Problem: schemars::JsonSchema;

    /// The starter config (`harbor keys --starter`): a small run that works, with every
    /// section and a comment on each key.
    const STARTER: &'static str;

    /// Top-level sections a config of this kind does not read, left out of its schema.
    const UNREAD_SECTIONS: &'static [&'static str] = &[];

    /// The plan of the configured run, exactly as configured (`[scheme]`, `[[input]]`,
    /// `[ensemble]`, `[output]` of `config`).
    fn run_plan(&self, config: &Config) -> Result<RunPlan>;

    /// What `harbor study energy-order` needs of this kind (schemes, a reference of the
    /// continuous system, one point's run); `None` where the kind has no such study.
    fn energy_order<'c>(
        &self,
        _config: &'c Config,
    ) -> Option<Result<Box<dyn EnergyOrderSubject + 'c>>> {
        None
    }
}

/// The `[problem]` of a kind that reads none: the section is refused.
#[derive(Debug, Clone, Copy, schemars::JsonSchema)]
pub struct NoProblem {}

/// What `harbor keys` needs of one `[system]` kind.
#[derive(Debug, Clone, Copy)]
pub struct KindKeys {
    /// The kind, as written in configs.
    pub kind: &'static str,
    /// The schema name of its `[ensemble]` table.
    pub ensemble: fn() -> std::borrow::Cow<'static, str>,
    /// The schema name of its `[problem]` table; `None` for kinds that read none.
    pub problem: fn() -> Option<std::borrow::Cow<'static, str>>,
    /// [`SystemKind::STARTER`].
    pub starter: &'static str,
    /// [`SystemKind::UNREAD_SECTIONS`].
    pub unread_sections: &'static [&'static str],
}

/// A family's `harbor bench` workload: ensembles of one benchmark system whose size n is
/// `--states`, built for any member and step count.
pub trait BenchWorkload: Sized {
    /// The plan the workload runs.
    type Plan: Family;
    /// The family, as `--family` and the benchmark rows name it.
    const FAMILY: &'static str;
    /// The workload with the user's options.
    fn new(options: &WorkloadOptions) -> Result<Self>;
    /// Checks a size n (`--states`).
    fn check_size(&self, n: usize) -> Result<()>;
    /// The plan of `members` members of size n over `steps` steps, recording what
    /// `recording` switches on (where the family has the choice) once, at the last step.
    fn plan(
        &self,
        members: usize,
        n: usize,
        steps: usize,
        recording: Recording,
    ) -> Result<Self::Plan>;
    /// The baseline outside harbor's engines that `harbor bench` measures beside them (the
    /// workload's model written by hand in Rust), as its table describes it; `None` where
    /// the workload has none.
    fn hand_written(&self) -> Option<&'static str> {
        None
    }
    /// Seconds the baseline ([`BenchWorkload::hand_written`]) takes for members
    /// `0..count` of `plan`, of size n, on all cores: the integration alone. `None` where
    /// it has none at this size.
    fn time_hand_written(
        &self,
        _plan: &Self::Plan,
        _n: usize,
        _count: usize,
    ) -> Option<Result<f64>> {
        None
    }
}

/// The options of `harbor bench` that shape a workload.
#[derive(Debug, Clone, Default)]
pub struct WorkloadOptions {
    /// The splitting composition (`--composition`), for families integrated by splitting.
    pub composition: String,
}

/// Code that runs on any benchmark workload: `visit` is called with the concrete one.
pub trait WorkloadVisitor {
    type Output;
    fn visit<W: BenchWorkload>(self, workload: &W) -> Self::Output;
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
        workloads { $($workload_variant:ident($workload:ty)),* $(,)? }
    ) => {
        /// The `harbor bench` workload of any registered family.
        #[derive(Debug, Clone)]
        pub enum FamilyWorkload {
            $($workload_variant($workload),)*
        }

        impl FamilyWorkload {
            /// The families with a workload, as `--family` names them.
            pub const FAMILIES: &[&str] = &[$(<$workload as BenchWorkload>::FAMILY),*];

            /// The workload of `family` with `options`; an unknown family is an error
            /// naming `--family`.
            pub fn new(family: &str, options: &WorkloadOptions) -> Result<Self> {
                $(if family == <$workload as BenchWorkload>::FAMILY {
                    return <$workload as BenchWorkload>::new(options).map(FamilyWorkload::$workload_variant);
                })*
                Err(Error::invalid(
                    "--family",
                    format!("unknown family {family:?}; expected one of {}", Self::FAMILIES.join(", ")),
                ))
            }

            /// The family's name.
            pub fn family(&self) -> &'static str {
                match self {
                    $(FamilyWorkload::$workload_variant(_) => <$workload as BenchWorkload>::FAMILY,)*
                }
            }

            /// Calls `visitor` with the concrete workload.
            pub fn visit<V: WorkloadVisitor>(&self, visitor: V) -> V::Output {
                match self {
                    $(FamilyWorkload::$workload_variant(workload) => visitor.visit(workload),)*
                }
            }
        }

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

        /// `[problem]` of a simulate config, whose keys depend on the `[system]` kind
        /// ([`SystemKind::Problem`]).
        #[derive(schemars::JsonSchema)]
        #[schemars(untagged)]
        #[expect(dead_code, reason = "describes the accepted tables; never built")]
        pub(crate) enum ProblemTable {
            $($variant(<$spec as SystemKind>::Problem),)*
        }

        /// `[ensemble]` of a simulate config, whose keys depend on the `[system]` kind
        /// ([`SystemKind::Ensemble`]); `harbor keys` keeps the one of its kind.
        #[derive(schemars::JsonSchema)]
        #[schemars(untagged)]
        #[expect(dead_code, reason = "describes the accepted tables; never built")]
        pub(crate) enum EnsembleTable {
            $($variant(<$spec as SystemKind>::Ensemble),)*
        }

        impl SystemSpec {
            /// The kinds, as written in configs.
            pub const KINDS: &[&str] = &[$($kind),*];

            /// What `harbor keys` lists for each kind, in the order of [`SystemSpec::KINDS`].
            pub const KEYS: &[KindKeys] = &[$(KindKeys {
                kind: $kind,
                ensemble: <<$spec as SystemKind>::Ensemble as schemars::JsonSchema>::schema_name,
                problem: problem_schema::<<$spec as SystemKind>::Problem>,
                starter: <$spec as SystemKind>::STARTER,
                unread_sections: <$spec as SystemKind>::UNREAD_SECTIONS,
            }),*];

            /// The `kind` as written in configs.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(SystemSpec::$variant(_) => $kind,)*
                }
            }

            /// The plan of the configured run; a `[problem]` section is refused for kinds
            /// that read none.
            pub fn run_plan(&self, config: &Config) -> Result<RunPlan> {
                let reads = match self {
                    $(SystemSpec::$variant(_) => problem_schema::<<$spec as SystemKind>::Problem>().is_some(),)*
                };
                if config.problem.is_some() && !reads {
                    return Err(Error::invalid(
                        "problem",
                        format!(
                            "{} systems pose no [problem] (initial and boundary values of variational systems are given there); remove the section",
                            self.kind()
                        ),
                    ));
                }
                match self {
                    $(SystemSpec::$variant(spec) => spec.run_plan(config),)*
                }
            }

            /// The energy-order study of the configured system; an error naming the kind
            /// where it has none.
            pub fn energy_order<'c>(
                &self,
                config: &'c Config,
            ) -> Result<Box<dyn EnergyOrderSubject + 'c>> {
                let subject = match self {
                    $(SystemSpec::$variant(spec) => spec.energy_order(config),)*
                };
                subject.unwrap_or_else(|| {
                    Err(Error::invalid(
                        "system.kind",
                        format!(
                            "is {}, which has no energy-order study (harbor study energy-order needs a reference of the continuous energy balance)",
                            self.kind()
                        ),
                    ))
                })
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
        PortHamiltonian(port_hamiltonian::PortHamiltonianPlan),
        Variational(variational::VariationalPlan),
    }
    kinds {
        "linear-ph" => LinearPh(linear_ph::spec::LinearPhSpec),
        "mechanical" => Mechanical(linear_ph::spec::MechanicalSpec),
        "contact" => Contact(contact::ContactSystemSpec),
        "port-hamiltonian" => PortHamiltonian(port_hamiltonian::PortHamiltonianSpec),
        "variational" => Variational(variational::VariationalSpec),
    }
    workloads {
        LinearPhChain(linear_ph::workloads::ChainWorkload),
        ContactChain(contact::workloads::ChainWorkload),
        PortHamiltonianChain(port_hamiltonian::workloads::PendulumChainWorkload),
    }
}

/// The schema name of a kind's `[problem]` table; `None` for [`NoProblem`].
fn problem_schema<P: schemars::JsonSchema>() -> Option<std::borrow::Cow<'static, str>> {
    let name = P::schema_name();
    (name != <NoProblem as schemars::JsonSchema>::schema_name()).then_some(name)
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
