//! The port-Hamiltonian wing: nonlinear models ẋ = (J(x) − R(x)) ∇H(x) + G(x) u,
//! y = G(x)ᵀ ∇H(x) written by the user as expressions (any H; state-dependent J, R, G),
//! compiled once per run with exact symbolic derivatives ([`crate::expr`]), and integrated
//! by Gauss–Legendre collocation as a discrete-time PH system (Kotyczka & Lefèvre 2019,
//! Definition 1) with Newton stage solves. Everything the family owns lives here: the
//! compiled model ([`model`]), its `[system]` and `[ensemble]` sections ([`spec`]), the plan
//! ([`plan`]), the step ([`gauss_step`]), the family as the engine runs it ([`kernel`]), its
//! fast CPU engine ([`fast`]: the step on blocks of members side by side, bit for bit the
//! reference's results) and its `harbor bench` workload ([`workloads`]) with the
//! benchmark's baseline, the workload's model written by hand ([`hand_written`]).
//! It runs on the CPU (all cores); a GPU kernel is still to come.

pub mod fast;
pub mod gauss_step;
pub mod hand_written;
pub mod kernel;
pub mod model;
pub mod plan;
pub mod spec;
pub mod workloads;

pub use gauss_step::NewtonSettings;
pub use model::{Entry, ExpressionModel, ModelText};
pub use plan::{PortHamiltonianMember, PortHamiltonianPlan};
pub use spec::{PortHamiltonianConfig, PortHamiltonianSpec, plan_from_config};
