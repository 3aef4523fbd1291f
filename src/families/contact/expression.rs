//! Contact terms written as expressions: a potential term B(t, x) and a damping rate C(t)
//! given as text (`src/expr` grammar), compiled once per run.
//!
//! - [`PotentialExpression`]: `{ kind = "expression", B = "x^4/4 - x^2/2" }` in the
//!   positions (`x` when n = 1, else `x1 … xn`) and the time `t`. Its gradient ∇ₓB is
//!   derived symbolically in the same pool (`ExprPool::gradient`, sharing subexpressions
//!   with B), and one tape computes [B, ∂B/∂x₁, …, ∂B/∂xₙ] at the variables
//!   [x₁, …, xₙ, t]. The reference integrator, the kernel's CPU twin ([`Tape::eval`]) and
//!   the GPU kernel (the same tape as a WGSL function, [`PotentialExpression::wgsl_module`])
//!   evaluate that one tape. The time t, when B uses it, reaches the kernel as a channel
//!   of the shared stream, sampled on the host at the same f64 times the reference uses.
//! - [`DampingExpression`]: `{ kind = "expression", C = "2/(t + 1)" }` in `t` only. C(t)
//!   is shared by every member, so it is evaluated by its tape in f64 on the host, into
//!   the shared stream's damping channel c(t) of C = α c(t) with α = 1; the kernel only
//!   reads it.
//!
//! Both take numbers only, no named parameters: an expression is the same for every member
//! of an ensemble, and `[ensemble]` draws none of its constants (write them into the text).

use std::cell::RefCell;
use std::fmt::Write as _;

use crate::error::{Error, Num, Result};
use crate::expr::{ExprError, ExprErrorKind, ExprPool, Instr, Tape, parse, wgsl};

/// The WGSL module and function of a potential expression in the contact kernel.
pub const POTENTIAL_MODULE: &str = "potential_expression";

/// Work buffers of [`Tape::eval`], one set per thread, so that the reference integrator
/// evaluates expressions without allocating per call.
#[derive(Default)]
struct Buffers {
    vars: Vec<f64>,
    out: Vec<f64>,
    registers: Vec<f64>,
}

thread_local! {
    static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::default());
}

/// The position names of a system with n degrees of freedom: `x` when n = 1, else
/// `x1 … xn`.
pub fn position_names(n: usize) -> Vec<String> {
    if n == 1 {
        vec!["x".into()]
    } else {
        (1..=n).map(|i| format!("x{i}")).collect()
    }
}

/// A parse error of `field`, with `scope` appended when the text names a variable the term
/// cannot depend on.
fn parse_error(field: &str, error: ExprError, scope: &str) -> Error {
    let mut problem = error.to_string();
    if error.kind == ExprErrorKind::UnknownName {
        write!(problem, " ({scope})").unwrap();
    }
    Error::invalid(field, problem)
}

/// A term B(t, x) of the potential, written as an expression, with its symbolic gradient.
#[derive(Debug, Clone)]
pub struct PotentialExpression {
    text: String,
    dof: usize,
    /// Outputs [B, ∂B/∂x₁, …, ∂B/∂xₙ] at the variables [x₁, …, xₙ, t].
    tape: Tape,
    uses_time: bool,
}

/// Equal when they compile to the same tape (the same instructions and outputs).
impl PartialEq for PotentialExpression {
    fn eq(&self, other: &Self) -> bool {
        self.dof == other.dof
            && self.tape.instructions() == other.tape.instructions()
            && self.tape.output_registers() == other.tape.output_registers()
    }
}

impl PotentialExpression {
    /// Parses `text` over the positions of an n-dimensional system and t, derives ∇ₓB and
    /// compiles both into one tape. `field` names the text in errors
    /// (`system.potential[0].B`); a parse error gives its position in the text and the
    /// names that exist.
    pub fn compile(field: &str, text: &str, dof: usize) -> Result<Self> {
        let mut names = position_names(dof);
        names.push("t".into());
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut pool = ExprPool::new();
        let b = parse(&mut pool, text, &names).map_err(|e| {
            parse_error(
                field,
                e,
                "B(t, x) depends on the positions and t only: the momenta enter through `kinetic`, z through `damping`",
            )
        })?;
        let mut outputs = vec![b];
        outputs.extend(pool.gradient(b, dof));
        let tape = Tape::new(&pool, dof + 1, &outputs);
        let time = dof as u32;
        let uses_time = tape.instructions().contains(&Instr::Var(time));
        Ok(PotentialExpression {
            text: text.to_string(),
            dof,
            tape,
            uses_time,
        })
    }

    /// The text as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The degrees of freedom n it was compiled for.
    pub fn dof(&self) -> usize {
        self.dof
    }

    /// Outputs [B, ∂B/∂x₁, …, ∂B/∂xₙ] at the variables [x₁, …, xₙ, t].
    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    /// Whether B depends on t (then the kernel reads t from the shared stream).
    pub fn uses_time(&self) -> bool {
        self.uses_time
    }

    /// Floating-point operations of one evaluation of the tape in the kernel, counted as
    /// the contact kernel counts them: a transcendental function call as 30, aᵇ (log, ×,
    /// exp) as 61, an integer power by its multiplications ([`Instr::flops`]).
    pub fn kernel_flops(&self) -> usize {
        self.tape
            .instructions()
            .iter()
            .map(|instr| match instr {
                Instr::Call(..) => 30,
                Instr::Pow(..) => 61,
                other => other.flops(),
            })
            .sum()
    }

    /// B(t, x), adding ∇ₓB(t, x) into `gradient`: `gradient[r] += ∂B/∂x_r`.
    pub fn add_to(&self, t: f64, x: &[f64], gradient: &mut [f64]) -> f64 {
        BUFFERS.with_borrow_mut(|b| {
            b.vars.clear();
            b.vars.extend_from_slice(x);
            b.vars.push(t);
            b.out.resize(self.dof + 1, 0.0);
            self.tape.eval(&b.vars, &mut b.out, &mut b.registers);
            for (g, d) in gradient.iter_mut().zip(&b.out[1..]) {
                *g += d;
            }
            b.out[0]
        })
    }

    /// The WGSL module of the contact kernel that holds the expression helpers and the
    /// tape as `fn potential_expression(v: array<real, n + 1>) -> array<real, n + 1>`
    /// (v = [x, t], result [B, ∇ₓB]); without an expression (`None`), a function of that
    /// signature returning zeros, which the kernel never calls (its
    /// `POTENTIAL_EXPRESSION` is 0).
    pub fn wgsl_module(expression: Option<&Self>, dof: usize) -> String {
        match expression {
            Some(e) => format!(
                "#import math\n{}\n{}",
                wgsl::helpers(),
                wgsl::function(&e.tape, POTENTIAL_MODULE)
            ),
            None => {
                let size = dof + 1;
                format!(
                    "// No potential expression: never called (POTENTIAL_EXPRESSION = 0).\n\
                     fn {POTENTIAL_MODULE}(v: array<real, {size}>) -> array<real, {size}> {{\n    \
                     return array<real, {size}>();\n}}\n"
                )
            }
        }
    }

    /// Checks that B and ∇ₓB are finite at t = 0 and x = x0; `field` names the text.
    pub fn check_start(&self, field: &str, x0: &[f64]) -> Result<()> {
        let mut gradient = vec![0.0; self.dof];
        let value = self.add_to(0.0, x0, &mut gradient);
        let names = position_names(self.dof);
        let bad = std::iter::once((None, value))
            .chain(
                names
                    .iter()
                    .zip(&gradient)
                    .map(|(name, &g)| (Some(name), g)),
            )
            .find(|(_, v)| !v.is_finite());
        let at = format!("at t = 0, x = x0 = {x0:?}, where the run starts");
        match bad {
            None => Ok(()),
            Some((None, v)) => Err(Error::invalid(
                field,
                format!("B(t, x) = {} is {} {at}", self.text, Num(v)),
            )),
            Some((Some(name), v)) => Err(Error::invalid(
                field,
                format!("∂B/∂{name} of B(t, x) = {} is {} {at}", self.text, Num(v)),
            )),
        }
    }
}

/// A damping rate C(t) written as an expression in t.
#[derive(Debug, Clone)]
pub struct DampingExpression {
    text: String,
    /// Output \[C\] at the variable \[t\].
    tape: Tape,
}

impl DampingExpression {
    /// Parses `text` over t; `field` names it in errors (`system.damping.C`).
    pub fn compile(field: &str, text: &str) -> Result<Self> {
        let mut pool = ExprPool::new();
        let c = parse(&mut pool, text, &["t"]).map_err(|e| {
            parse_error(
                field,
                e,
                "C(t) depends on t only: it is shared by every member and sampled on the host",
            )
        })?;
        Ok(DampingExpression {
            text: text.to_string(),
            tape: Tape::new(&pool, 1, &[c]),
        })
    }

    /// The text as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Output \[C\] at the variable \[t\].
    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    /// C(t), by the tape in f64.
    pub fn rate(&self, t: f64) -> f64 {
        BUFFERS.with_borrow_mut(|b| {
            let mut out = [0.0];
            self.tape.eval(&[t], &mut out, &mut b.registers);
            out[0]
        })
    }

    /// Checks that C is finite at t = 0, where every run starts; `field` names the text.
    pub fn check_start(&self, field: &str) -> Result<()> {
        let value = self.rate(0.0);
        if value.is_finite() {
            return Ok(());
        }
        Err(Error::invalid(
            field,
            format!(
                "C(t) = {} is {} at t = 0, where every run starts (write C in a shifted time, e.g. 2/(t + 1) for 2/t: the equation started at t = 1)",
                self.text,
                Num(value)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gradient_is_symbolic_and_shares_the_tape() {
        let e = PotentialExpression::compile("f", "x1^4/4 - x1^2/2 + x1*x2 + t*x2", 2).unwrap();
        assert!(e.uses_time());
        let mut g = [1.0, 2.0];
        let b = e.add_to(0.5, &[2.0, 3.0], &mut g);
        // B = 4 − 2 + 6 + 1.5; ∂B/∂x1 = x1³ − x1 + x2 = 9, ∂B/∂x2 = x1 + t = 2.5, added.
        assert_eq!(b, 9.5);
        assert_eq!(g, [10.0, 4.5]);
        let e = PotentialExpression::compile("f", "x^2/2", 1).unwrap();
        assert!(!e.uses_time());
    }

    #[test]
    fn momenta_and_unknown_names_are_refused_with_the_names() {
        let e = PotentialExpression::compile("system.potential[0].B", "x^2 + p^2", 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "system.potential[0].B: unknown name \"p\" at 6; the names are x, t (B(t, x) depends on the positions and t only"
            ),
            "{e}"
        );
        let e = DampingExpression::compile("system.damping.C", "2/t + x")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("system.damping.C: unknown name \"x\" at 6; the names are t (C(t)"),
            "{e}"
        );
    }

    #[test]
    fn a_rate_singular_at_the_start_is_refused() {
        let c = DampingExpression::compile("system.damping.C", "2/t").unwrap();
        let e = c.check_start("system.damping.C").unwrap_err().to_string();
        assert!(
            e.starts_with("system.damping.C: C(t) = 2/t is inf at t = 0, where every run starts"),
            "{e}"
        );
        assert_eq!(c.rate(0.5), 4.0);
    }

    #[test]
    fn modules_with_and_without_an_expression_validate() {
        use crate::kernels::Precision;
        use crate::kernels::math::wgsl_library;
        use crate::kernels::wgsl::validate;
        let e = PotentialExpression::compile("f", "x1^4/4 - cos(x2) * t", 2).unwrap();
        for precision in [Precision::F32, Precision::F64] {
            for module in [
                PotentialExpression::wgsl_module(Some(&e), 2),
                PotentialExpression::wgsl_module(None, 2),
            ] {
                let source = format!(
                    "alias real = {};\n{}\n{}",
                    precision.name(),
                    wgsl_library(precision),
                    module.replace("#import math\n", "")
                );
                if let Err(err) = validate(&source, precision) {
                    panic!("{err}\n{source}");
                }
            }
        }
    }
}
