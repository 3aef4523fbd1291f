//! The host planner's coefficient tables: collocation Butcher tables with the mass matrix of
//! their Lagrange basis, and the partitioned Lobatto pair.

pub mod collocation;
pub mod double_double;
pub mod partitioned;
pub mod polynomial;
pub mod scheme;

pub use collocation::{Family, Tableau};
pub use partitioned::LobattoPair;
pub use scheme::{Scheme, SchemeFamily};
