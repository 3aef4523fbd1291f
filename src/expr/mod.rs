//! Expressions: a user's formula (a Hamiltonian, a dissipation law) read from text into a
//! shared DAG, differentiated exactly, and compiled both to a CPU tape and to WGSL, with
//! the crate's own f64 transcendental functions on both sides so the backends agree.
//!
//! - [`parse`] reads `text` over variable names into an [`ExprPool`]. Grammar: numbers
//!   (`2`, `0.5`, `.5`, `1e-3`, `2.5E+4`), names (ASCII letters, digits and `_`, not
//!   starting with a digit), `+ - * /` left-associative with the usual precedence, `^`
//!   right-associative and binding tighter than a sign on its left (`-x^2` = −(x²),
//!   `2^3^2` = 2⁹, `2^-1` = ½), unary `-` and `+`, parentheses, and calls of one argument
//!   of `sin cos tan exp log sqrt tanh sinh cosh atan abs` ([`Func`]). A mistake is an
//!   [`ExprError`]: its kind, the character position, a message naming what was found
//!   and a hint (the variable names, the functions) — never a panic.
//! - [`ExprPool`] (pool.rs) is hash-consed: a node is looked up before it is added, so
//!   equal subexpressions are one node; that is how common subexpressions are shared,
//!   within an expression, between an expression and its derivatives, and across
//!   outputs. Its constructors simplify locally and soundly: constant folding (when the
//!   result is finite, by the same f64 functions as evaluation), x + 0, x·1, x/1,
//!   x·(−1), −(−x), x¹, x⁰ = 1, x·0 = 0 and 0/x = 0 (these two assume a finite x, and x ≠ 0,
//!   as symbolic tools do), integer constant exponents as repeated multiplication, and
//!   a canonical operand order for + and ·.
//! - [`ExprPool::derivative`] (derivative.rs) builds ∂f/∂xᵥ in the same pool with the
//!   chain rule for every function, memoised per (node, variable), so gradients,
//!   Jacobians and Hessians ([`ExprPool::gradient`], [`ExprPool::jacobian`],
//!   [`ExprPool::hessian`]) share their nodes; derivatives of derivatives are ordinary.
//! - [`Tape`] (tape.rs) is the straight-line program of a list of outputs, each shared
//!   node computed once; [`Tape::eval`] runs it at one point and [`Tape::eval_lanes`] at
//!   many (one instruction over all lanes, a vectorisable loop), bit for bit alike.
//! - [`wgsl`] writes a tape as a WGSL function and the `expr_*` helpers it calls.
//! - The functions: `sin`, `cos`, `exp`, `log` are [`crate::kernels::math`]'s twins of
//!   `shaders/shared/math_f64.wgsl`; `sqrt` and `abs` are IEEE operations; tan, sinh,
//!   cosh, tanh, integer and general powers are built from those ([`functions`]), and
//!   atan from `+ − × ÷` and comparisons ([`atan`](mod@atan)), each with its WGSL twin.
//!
//! Why not a crate. `meval`, `evalexpr`, `fasteval` and `exmex` parse and evaluate
//! formulas (exmex also differentiates), but evaluate with `std`'s libm (so the CPU would
//! not match our WGSL), share no subexpressions between a function and its derivatives,
//! and emit no code for another target; bindings to `symengine` or `symbolica` bring a C++
//! or licensed dependency for far more algebra than we need. What we need is small: exact
//! derivatives that share nodes with the function, one tree that emits both the CPU tape
//! and WGSL with the crate's own transcendental twins, and errors positioned in the
//! user's text — under two thousand lines here, documentation included.
//!
//! # Example
//!
//! ```
//! use harbor::expr::{ExprPool, Tape, parse};
//!
//! // The pendulum: H(q, p) = p²/(2ml²) + mgl(1 − cos q), its gradient and Hessian.
//! let names = ["q", "p", "m", "l", "g"];
//! let mut pool = ExprPool::new();
//! let h = parse(&mut pool, "p^2/(2*m*l^2) + m*g*l*(1 - cos(q))", &names)?;
//! let gradient = pool.gradient(h, 2);
//! let hessian = pool.hessian(h, 2);
//! let outputs = [vec![h], gradient, hessian].concat();
//! let tape = Tape::new(&pool, names.len(), &outputs);
//!
//! let mut out = vec![0.0; outputs.len()];
//! tape.eval(&[0.0, 2.0, 1.0, 1.0, 9.81], &mut out, &mut Vec::new());
//! // H = 2, ∂H/∂q = mgl·sin q = 0, ∂H/∂p = p/(ml²) = 2, H_qq = mgl·cos q, H_pp = 1/(ml²).
//! assert_eq!(out, [2.0, 0.0, 2.0, 9.81, 0.0, 0.0, 1.0]);
//!
//! let err = parse(&mut pool, "m*g*l*(mm + q)", &names).unwrap_err();
//! assert_eq!(err.to_string(), "unknown name \"mm\" at 7; the names are q, p, m, l, g");
//! # Ok::<(), harbor::expr::ExprError>(())
//! ```

pub mod atan;
mod derivative;
mod error;
pub mod functions;
mod names;
mod parse;
mod pool;
mod tape;
#[cfg(test)]
mod testing;
pub mod wgsl;

pub use error::{ExprError, ExprErrorKind};
pub use functions::Func;
pub use names::check_variable_name;
pub use parse::{MAX_DEPTH, parse};
pub use pool::{ExprPool, Id, Node};
pub use tape::{Instr, Tape};
