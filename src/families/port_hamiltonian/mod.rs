//! The port-Hamiltonian wing: nonlinear models ẋ = (J(x) − R(x)) ∇H(x) + G(x) u,
//! y = G(x)ᵀ ∇H(x) written by the user as expressions (any H; state-dependent J, R, G),
//! compiled once per run with exact symbolic derivatives ([`crate::expr`]), and integrated
//! by Gauss–Legendre collocation as a discrete-time PH system (Kotyczka & Lefèvre 2019,
//! Definition 1) or by the energy-preserving collocation (Hairer 2010, Cohen & Hairer 2011)
//! extended to ports, with Newton stage solves. Everything the family owns lives here: the
//! compiled model ([`model`]), its `[system]` and `[ensemble]` sections ([`spec`]), the
//! stage rule ([`method`]), the plan ([`plan`]), the steps ([`gauss_step`],
//! [`energy_preserving_step`]), the family as the engine runs it ([`kernel`]), its GPU
//! kernel ([`gpu`]: the variants of [`shape`], WGSL generated from the model, and the CPU
//! [`twin`]), its fast CPU engine ([`fast`]: the step on blocks of members side by side,
//! bit for bit the reference's results) and its `harbor bench` workload ([`workloads`])
//! with the benchmark's baseline, the workload's model written by hand ([`hand_written`]).
//! Gauss runs on the GPU, the twin, the fast engine and the reference; the
//! energy-preserving scheme on the reference. `harbor study energy-order` measures the
//! orders of both against a reference of the continuous system ([`energy_order`]).

pub mod energy_order;
pub mod energy_preserving_step;
pub mod fast;
pub mod gauss_step;
pub mod gpu;
pub mod hand_written;
pub mod kernel;
pub mod method;
pub mod model;
pub mod plan;
pub mod shape;
pub mod spec;
pub mod twin;
pub mod workloads;

pub use gauss_step::NewtonSettings;
pub use method::PortHamiltonianMethod;
pub use model::{Entry, ExpressionModel, ModelText, ProjectedTapes};
pub use plan::{PortHamiltonianMember, PortHamiltonianPlan};
pub use spec::{PortHamiltonianConfig, PortHamiltonianSpec, plan_from_config};
