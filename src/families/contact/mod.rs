//! The contact wing: contact-Hamiltonian systems H(t, x, p, z) = ½ pᵀ P p + B(t, x) + C(t) z
//! advanced by compositions of the Strang splitting or of the Herglotz variational
//! integrator. Everything the family owns lives here: the model ([`model`], [`time`],
//! [`orbit`], terms written as expressions in [`expression`]), its `[system]` section
//! ([`spec`]), the plan ([`plan`]), the exact flows of the split parts ([`flows`]), their
//! fast CPU engine over blocks of members ([`fast`]) and the reference integrator's
//! recording loop ([`reference`](mod@reference)), the GPU kernel's host side ([`shape`],
//! [`kernel`], WGSL in `shaders/contact/`), its CPU twin ([`twin`]), the bench workload
//! ([`workloads`]), `harbor study contact-energy` ([`energy_study`]) and `harbor study
//! contact-spin-orbit` ([`spin_orbit_study`]). The engine core reaches it only
//! through the registry in [`crate::families`].

pub mod energy_study;
pub mod expression;
pub mod fast;
pub mod flows;
pub mod kernel;
pub mod member;
pub mod model;
pub mod orbit;
pub mod plan;
pub mod reference;
pub mod shape;
pub mod spec;
pub mod spin_orbit_study;
pub mod time;
pub mod twin;
pub mod workloads;

pub use model::{
    ContactMember, ContactSystem, Damping, DampingExpression, Potential, PotentialExpression,
    TimeChannels, TimeTerms,
};
pub use orbit::KeplerOrbit;
pub use plan::{ContactEnsembleSpec, ContactMethod, ContactPlan, ParameterDraw, TimeSampling};
pub use shape::ContactShape;
pub use spec::{ContactConfig, ContactSystemSpec, build_contact_member, plan_from_config};
pub use workloads::contact_chain_plan;
