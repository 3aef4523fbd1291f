//! The host planner's coefficient tables: collocation Butcher tables with the mass matrix of
//! their Lagrange basis, the partitioned Lobatto pair, the energy-preserving projection's
//! quadrature tables, and the composition coefficients of splitting methods.

pub mod bch;
pub mod collocation;
pub mod double_double;
pub mod named;
pub mod partitioned;
pub mod polynomial;
pub mod projection;
pub mod scheme;
pub mod splitting;

pub use collocation::{Family, Tableau};
pub use named::NamedTableau;
pub use partitioned::LobattoPair;
pub use projection::ProjectionRule;
pub use scheme::{Scheme, SchemeFamily};
pub use splitting::Composition;
