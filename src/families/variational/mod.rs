//! The variational wing: Lagrangian systems of order 1 and 2 with holonomic and
//! higher-order constraints, written by the user as expressions (the seed 002, Colombo,
//! Martín de Diego et al., "Higher-order discrete variational problems with constraints"),
//! integrated by variational integrators: the discrete Euler–Lagrange equations of a
//! discrete Lagrangian with Lagrange multipliers.
//!
//! - [`model`]: L(q, q̇[, q̈], t) and the constraints compiled with exact symbolic
//!   derivatives (∇L, ∇²L, ∇φ, ∇²φ) into tapes;
//! - [`rule`]: discrete Lagrangians (midpoint and trapezoid for order 1, central for order
//!   2) and the chain rule that gives ∂L_d and ∂²L_d from ∇L and ∇²L;
//! - [`discrete`]: the terms of the discrete equations on a window and at a point;
//! - [`ivp`]: the step of initial-value problems, one new point by Newton; [`start`]: the
//!   first points of a second-order problem from q, q̇, q̈, q⃛ at t = 0; [`march`]: a
//!   member marched with its records (both orders);
//! - [`bvp`]: boundary-value problems, the whole path by Newton on the banded system
//!   ([`banded`]), with clamped ends and interpolation knots;
//! - [`spec`], [`plan`], [`kernel`]: the config sections, the plan and members, and the
//!   family as the engine runs it (CPU, all cores);
//! - [`gpu`], [`shape`], [`twin`]: the GPU kernel of first-order initial-value problems
//!   (`shaders/variational/step.wgsl`, the model's tapes and the rule generated into it),
//!   its variants and its CPU twin; [`second_order`], [`second_order_twin`]: the kernel of
//!   second-order initial-value problems, start and march
//!   (`shaders/variational/second_order.wgsl`), and its twin; [`boundary`],
//!   [`boundary_twin`]: the kernel of boundary-value problems
//!   (`shaders/variational/boundary.wgsl`) and its twin; [`path_quantities`]: the action,
//!   observables, energies and momentum maps of a solved boundary-value path.
//!
//! # The discrete equations
//!
//! With grid t_k = k h and the augmented discrete action
//!
//! ```text
//!   S = Σ_j [L_d(window j) + h λ_jᵀ φ_w(window j)] + Σ_k h μ_kᵀ φ_h(q_k, t_k),
//! ```
//!
//! (window j = (q_j, q_{j+1}) for order 1, (q_{j−1}, q_j, q_{j+1}) for order 2), the
//! discrete Euler–Lagrange equations are ∂S/∂q_k = 0 at every free point together with the
//! constraints (the seed's eqs. 1.5 and 3.4). For order 1 and L_d by the midpoint rule,
//! L_d(q₀, q₁) = h L(q̄, v, t̄) with q̄ = (q₀ + q₁)/2, v = (q₁ − q₀)/h, t̄ = t_k + h/2:
//!
//! ```text
//!   D₁L_d = (h/2) ∂L/∂q − ∂L/∂q̇,   D₂L_d = (h/2) ∂L/∂q + ∂L/∂q̇   (at (q̄, v, t̄)),
//!   D₂L_d(q_{k−1}, q_k) + D₁L_d(q_k, q_{k+1}) + h ∇φ_h(q_k)ᵀ μ_k + (λ terms) = 0.
//! ```
//!
//! For order 2 and the central rule, L_d(q₀, q₁, q₂) = h L(q₁, (q₂ − q₀)/2h,
//! (q₂ − 2q₁ + q₀)/h², t₁):
//!
//! ```text
//!   D₁L_d = −½ ∂L/∂q̇ + (1/h) ∂L/∂q̈,   D₂L_d = h ∂L/∂q − (2/h) ∂L/∂q̈,
//!   D₃L_d = ½ ∂L/∂q̇ + (1/h) ∂L/∂q̈,
//!   D₃L_d(w_{k−1}) + D₂L_d(w_k) + D₁L_d(w_{k+1}) + h ∇φ_h(q_k)ᵀ μ_k + (λ terms) = 0,
//! ```
//!
//! w_j being the window centred at t_j. For L = ½|q̈|² this is the fourth difference
//! (q_{k−2} − 4q_{k−1} + 6q_k − 4q_{k+1} + q_{k+2})/h³ = 0: the discrete cubic spline. Every
//! derivative is exact: the Newton matrices are the symbolic second derivatives. Energy
//! E = q̇ · ∂L/∂q̇ − L is recorded for order 1 (conserved up to a bounded oscillation when L
//! is autonomous), and with a symmetry ξ(q) the discrete momentum map J_k = p_k · ξ(q_k)
//! (conserved exactly by the discrete Noether theorem when L_d and the constraints are
//! invariant).

pub mod banded;
pub mod boundary;
pub mod boundary_twin;
pub mod bvp;
pub mod discrete;
pub mod gpu;
pub mod ivp;
pub mod kernel;
pub mod march;
pub mod model;
pub mod path_quantities;
pub mod plan;
pub mod rule;
pub mod second_order;
pub mod second_order_twin;
pub mod shape;
pub mod solve;
pub mod spec;
pub mod start;
pub mod twin;

pub use model::{LagrangianModel, LagrangianText};
pub use plan::{InitialData, MemberProblem, VariationalMember, VariationalPlan};
pub use spec::{VariationalSpec, plan_from_config};
