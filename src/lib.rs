//! harbor: structure-preserving ensembles of port-Hamiltonian and contact-Hamiltonian
//! systems on the GPU, with an f64 CPU reference for every result.
//!
//! The engine core is horizontal and names no family: [`tableau`] (coefficients),
//! [`model`] (signals, structure checks), [`plan`] (plain data: grid, shared streams, what
//! to record, the memory budget), [`kernels`] (the [`kernels::Family`] trait, kernel ABI,
//! layouts, WGSL assembly, f64 math, SIMD lanes), [`results`] and [`backend`] (CPU, the one
//! GPU executor, [`backend::Backend`]). The families are vertical wings in [`families`],
//! registered in [`families::RunPlan`] and [`families::SystemSpec`]: [`linear_ph`] (linear
//! port-Hamiltonian systems under collocation, with the discrete adjoint) and [`contact`]
//! (contact-Hamiltonian systems by splitting or Herglotz), [`port_hamiltonian`] (nonlinear
//! models written as expressions). [`io`] (config, files) sits on
//! them; [`identify`] (cost and adjoint gradients of candidate models), [`study`] and
//! [`bench`](mod@bench) are applications; the `harbor` binary and the Python package
//! (`python/`, a workspace member) are the two front ends on top. [`error`] and
//! [`compensated`] sit below everything; [`reference`](mod@reference) (independent
//! high-accuracy solutions) is used by studies and tests, never by the integrators it
//! checks.
//!
//! # Example
//!
//! Plan the 2-stage Gauss method (order 4) for a damped oscillator driven by a constant
//! force, run an ensemble of two members on the fast CPU engine, and check the discrete
//! energy balance that Gauss collocation keeps exactly: per member, the stored energy
//! ΔH̄ = H(x_N) − H(x_0) equals the supplied energy ΔH̃ = port − dissipated up to round-off.
//!
//! ```
//! use harbor::backend::Backend;
//! use harbor::kernels::CpuPath;
//! use harbor::linear_ph::LinearPh;
//! use harbor::model::Signal;
//! use harbor::linear_ph::{EnergyTotals, LinearPhPlan, LinearPhMember};
//! use harbor::tableau::{Scheme, SchemeFamily, Tableau};
//! use nalgebra::{DMatrix, dmatrix, dvector};
//!
//! // The Butcher table behind the scheme: c = ½ ∓ √3/6, b = (½, ½).
//! let gauss = Tableau::gauss(2)?;
//! assert_eq!(gauss.order, 4);
//! assert!((gauss.c[0] - (0.5 - 3f64.sqrt() / 6.0)).abs() <= 1e-16);
//!
//! // ẋ = (J − R) Q x + B u, H(x) = ½ xᵀ Q x: a unit oscillator damped in its momentum.
//! let oscillator = LinearPh::new(
//!     "system",
//!     dmatrix![0.0, 1.0; -1.0, 0.0], // J, skew
//!     dmatrix![0.0, 0.0; 0.0, 0.1],  // R, positive semidefinite
//!     DMatrix::identity(2, 2),       // Q, positive definite
//!     dmatrix![0.0; 1.0],            // B: the force acts on the momentum
//! )?;
//! let members = vec![
//!     LinearPhMember { system: oscillator.clone(), x0: dvector![1.0, 0.0] },
//!     LinearPhMember { system: oscillator, x0: dvector![0.0, -1.0] },
//! ];
//! // h = 0.01 up to t = 5 (500 steps) with u(t) = 1, recorded every 10 steps.
//! let scheme = Scheme::new(SchemeFamily::Gauss, 2)?;
//! let plan = LinearPhPlan::new(scheme, 0.01, 5.0, members, &[Signal::Constant(1.0)], 10)?;
//! let results = Backend::Cpu(CpuPath::Fast).run(&plan)?;
//!
//! assert_eq!((results.steps, results.members.len()), (500, 2));
//! for (member, x0) in results.members.iter().zip([[1.0, 0.0], [0.0, -1.0]]) {
//!     let energy = EnergyTotals::of(member);
//!     let hamiltonian = |x: &[f64]| 0.5 * (x[0] * x[0] + x[1] * x[1]);
//!     let stored = hamiltonian(&member.final_state) - hamiltonian(&x0);
//!     assert!(energy.dissipated > 0.0);
//!     assert!((energy.stored - stored).abs() <= 1e-12);
//!     assert!((energy.stored - energy.supplied).abs() <= 1e-12);
//! }
//! # Ok::<(), harbor::Error>(())
//! ```

pub mod backend;
pub mod bench;
pub mod bounded_read;
pub mod compensated;
pub mod error;
pub mod expr;
pub mod families;
pub mod identify;
pub mod io;
pub mod kernels;
pub mod model;
pub mod plan;
pub mod reference;
pub mod results;
pub mod shard;
pub mod study;
pub mod tableau;

pub use error::{Error, Result};
pub use families::{contact, linear_ph, port_hamiltonian, variational};
