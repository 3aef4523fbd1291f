//! Identification of linear port-Hamiltonian models from input/output data (Günther, Jacob
//! & Totzeck 2023), on the engine: the cost of a candidate w = (J, R, Q, B, x0) and its
//! exact discrete gradient, for whole batches of candidates in one pass
//! ([`gradient`]); Monte-Carlo initialisation ([`monte_carlo`]) and Riemannian conjugate
//! gradients ([`conjugate_gradient`]) on the structured parameter manifold
//! ([`manifold`]), put together in [`identification`].
//!
//! # The gradient of the discrete cost
//!
//! The seed derives the continuous adjoint and discretises it separately, so its gradient
//! matches finite differences to about 1e-2. Here the cost is the discrete one
//! (`linear_ph::gradient_plan`: 𝒥 = ½ Σ_k ω_k |C x_k − d_k|² + (λ/2) ‖w − w_ref‖², C = Bᵀ Q) of the
//! discrete trajectory x_{k+1} = x_k + Δ(w) [x_k; U_k], and its gradient is exact up to
//! rounding. With r_k = C x_k − d_k:
//!
//! ```text
//!   λ_N = ω_N Cᵀ r_N,   λ_k = λ_{k+1} + Δ_xᵀ λ_{k+1} + ω_k Cᵀ r_k     (k = N−1 … 0)
//!   ∂𝒥/∂x0 = λ_0,   Ḡ_Δ = ∂𝒥/∂Δ = Σ_{k<N} λ_{k+1} [x_k; U_k]ᵀ,   Ḡ_C = ∂𝒥/∂C = Σ_k ω_k r_k x_kᵀ
//! ```
//!
//! (d𝒥 = Σ_k ω_k r_kᵀ (dC x_k + C dx_k) with dx_{k+1} = dx_k + Δ_x dx_k + dΔ [x_k; U_k];
//! the λ_k collect the sensitivities of all later residuals to x_k.) The kernels compute
//! the cost, λ_0, Ḡ_Δ and Ḡ_C per candidate (`linear_ph::adjoint`); the host pulls Ḡ_Δ and
//! Ḡ_C back through the stage solve to (J, R, Q, B) (`linear_ph::step_pullback`) and adds the
//! regularisation's λ (w − w_ref), for Q optionally that of the log distance
//! ([`regularization`]). Every gradient lies in the tangent space of the
//! structure: J's part is skew, R's and Q's symmetric.

pub mod conjugate_gradient;
pub mod data;
mod descent_live;
pub mod descent_log;
mod descent_loop;
pub mod gradient;
pub mod identification;
pub mod initial_guess;
pub mod manifold;
pub mod monte_carlo;
pub mod output_error;
pub mod records;
pub mod regularization;
pub mod staged;
pub mod stopping;
mod walker;

pub use conjugate_gradient::{CgSettings, Progress, StartResult, Stop};
pub use data::{Noise, simulate_outputs};
pub use gradient::{Evaluation, evaluate, evaluate_range, evaluate_reporting, evaluate_trials};
pub use identification::{
    Outcome, Setup, Status, best_candidates, check_setup, descend, evaluate_points, identify,
};
pub use initial_guess::{Guess, guess_point};
pub use manifold::{Geometry, Point, Tangent};
pub use monte_carlo::MonteCarlo;
pub use output_error::OutputError;
