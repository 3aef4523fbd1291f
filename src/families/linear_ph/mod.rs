//! The linear port-Hamiltonian wing: ẋ = (J − R) Q x + B u, y = Bᵀ Q x (and mechanical systems q̇ =
//! P p, ṗ = −K q − D P p + G u in that form) under Gauss and Lobatto collocation, with its discrete
//! adjoint. Everything the family owns lives here: the model ([`model`], [`mechanical`],
//! [`chain`]), its `[system]` sections ([`spec`]) and how a config becomes its plan ([`config`]),
//! the plan and its ensembles ([`plan`], [`ensemble`]), the method (the collocation stage solve
//! [`collocation_step`] on the in-place LU [`lu_in_place`], the per-member [`step_operators`] and
//! their pull-back [`step_pullback`], in reused buffers [`pullback_workspace`] with
//! [`product_in_place`]),
//! the GPU kernels' host side ([`kernel`], [`shape`], WGSL in `shaders/linear_ph/`), their CPU twin
//! ([`twin`]), the reference integrator ([`reference`](mod@reference)), the fast SIMD engine
//! ([`fast`]), the adjoint sweep ([`adjoint`], its twin [`adjoint_twin`], reference
//! [`adjoint_reference`] and fast engine [`adjoint_fast`], planned by [`gradient_plan`]) and the
//! member export ([`export`]). Identification and the studies build on its public API.

pub mod adjoint;
pub mod adjoint_fast;
pub mod adjoint_reference;
pub mod adjoint_twin;
pub mod chain;
pub mod collocation_step;
pub mod config;
pub(crate) mod drawn_checks;
pub mod energy_order;
pub mod ensemble;
pub mod export;
pub mod fast;
pub mod gradient_plan;
pub mod kernel;
pub mod lu_in_place;
pub mod mechanical;
pub mod model;
pub mod parts;
pub mod plan;
pub mod product_in_place;
pub mod pullback_workspace;
pub mod reference;
pub mod reference_flow;
pub mod regularization;
pub mod shape;
pub mod spec;
pub mod step_operators;
pub mod step_pullback;
pub mod twin;
pub mod workloads;

pub use collocation_step::{CollocationStepper, StepScratch};
pub use config::{LinearPhConfig, build_member};
pub use ensemble::{Draw, DrawnLinearPhEnsemble, LinearPhEnsemble, LinearPhEnsembleSpec};
pub use gradient_plan::{GradientPlan, OutputData, Parameters, Quadrature, check_scheme};
pub use mechanical::mechanical_system;
pub use model::LinearPh;
pub use parts::{PART_NAMES, Parts};
pub use plan::{EnergyTotals, LinearPhMember, LinearPhPlan, StepEnergy};
pub use reference_flow::LinearFlow;
pub use regularization::{QDistance, Regularization};
pub use step_operators::{OperatorWorkspace, StepOperators};
