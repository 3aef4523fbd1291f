//! WGSL from tapes: each tape becomes one function of straight-line `let` bindings, the
//! same instructions in the same order as [`Tape::eval`], calling the same functions'
//! WGSL twins, so a GPU that performs each operation as written, rounded to f64, computes
//! the CPU's values to the last bit. Shader compilers may rewrite float code: Mesa's NIR
//! (lavapipe, RADV, ANV) applies inexact algebraic rules that naga gives no way to forbid,
//! such as (p + q) + c → (p + c) + q for products p, q used once and c·(a·c) → (c·c)·a
//! for constants c. On lavapipe, 99.4 % of the outputs of the test expressions and their
//! derivatives equal the CPU's bit for bit and the rest are within 2 ulps of
//! max(|value|, 1) (`tests/expr.rs`, `wgsl_on_the_gpu_equals_the_tape`).
//!
//! A module that uses the functions is assembled as
//!
//! ```text
//! alias real = f64;                    // or f32; the engine prepends it
//! <crate::kernels::math::wgsl_library(precision)>   // math_sin, math_cos, math_exp, math_log
//! <helpers()>                          // expr_tan, expr_sinh, …, expr_atan, expr_powi, expr_pow
//! <function(&tape, "hamiltonian")> …   // one per tape
//! ```
//!
//! Constants are written as the shortest decimal that reads back as the same f64, so with
//! `real = f64` they are exact; with `real = f32` they are rounded to f32 by the WGSL
//! compiler, which rejects a constant outside f32's range.

use std::fmt::Write;

use super::tape::{Instr, Tape};

/// The `expr_*` helper functions and their `EXPR_*` constants, to be included once per
/// module, after `alias real` and the engine's math library.
pub fn helpers() -> String {
    let mut out = String::from("// ---- harbor expression helpers (src/expr)\n");
    out.push_str(&super::functions::wgsl());
    out.push('\n');
    out.push_str(&super::atan::wgsl());
    out
}

/// `tape` as the WGSL function `fn <name>(v: array<real, NV>) -> array<real, NO>`, where
/// `v[i]` is variable i and the result's element o is output o (NV and NO are at least 1;
/// a tape without variables ignores `v`, one without outputs returns a single 0).
/// `name` must be a WGSL identifier not used otherwise in the module.
pub fn function(tape: &Tape, name: &str) -> String {
    let nv = tape.n_vars().max(1);
    let no = tape.n_outputs().max(1);
    let mut out = format!(
        "// {} instructions, {} outputs\nfn {name}(v: array<real, {nv}>) -> array<real, {no}> {{\n",
        tape.len(),
        tape.n_outputs()
    );
    for (i, instr) in tape.instructions().iter().enumerate() {
        let value = match *instr {
            Instr::Const(c) => format!("{c:e}"),
            Instr::Var(k) => format!("v[{k}]"),
            Instr::Add(a, b) => format!("t{a} + t{b}"),
            Instr::Mul(a, b) => format!("t{a} * t{b}"),
            Instr::Neg(a) => format!("-t{a}"),
            Instr::Div(a, b) => format!("t{a} / t{b}"),
            Instr::Powi(a, n) => format!("expr_powi(t{a}, {n})"),
            Instr::Pow(a, b) => format!("expr_pow(t{a}, t{b})"),
            Instr::Call(f, a) => format!("{}(t{a})", f.wgsl_name()),
        };
        writeln!(out, "    let t{i}: real = {value};").unwrap();
    }
    let results: Vec<String> = if tape.n_outputs() == 0 {
        vec!["0.0".into()]
    } else {
        tape.output_registers()
            .iter()
            .map(|r| format!("t{r}"))
            .collect()
    };
    writeln!(
        out,
        "    return array<real, {no}>({});\n}}",
        results.join(", ")
    )
    .unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{ExprPool, parse};
    use crate::kernels::Precision;
    use crate::kernels::math::wgsl_library;
    use crate::kernels::wgsl::{to_spirv, validate};

    /// A module with the library, the helpers, `tape` as `f`, and an entry point that
    /// reads the variables from a buffer and writes the outputs after them.
    fn module(tape: &Tape, precision: Precision) -> String {
        let nv = tape.n_vars().max(1);
        let no = tape.n_outputs().max(1);
        let loads: Vec<String> = (0..nv).map(|i| format!("data[{i}]")).collect();
        let mut entry = format!(
            "@group(0) @binding(0) var<storage, read_write> data: array<real>;\n\
             @compute @workgroup_size(1)\n\
             fn main() {{\n    let r = f(array<real, {nv}>({}));\n",
            loads.join(", ")
        );
        for o in 0..no {
            writeln!(entry, "    data[{}] = r[{o}];", nv + o).unwrap();
        }
        entry.push_str("}\n");
        format!(
            "alias real = {};\n{}\n{}\n{}\n{entry}",
            precision.name(),
            wgsl_library(precision),
            helpers(),
            function(tape, "f"),
        )
    }

    fn check(text: &str, names: &[&str], derivatives: bool) {
        let mut pool = ExprPool::new();
        let f = parse(&mut pool, text, names).unwrap();
        let n = names.len();
        let mut outputs = vec![f];
        if derivatives {
            outputs.extend(pool.gradient(f, n));
            outputs.extend(pool.hessian(f, n));
        }
        let tape = Tape::new(&pool, n, &outputs);
        for precision in [Precision::F64, Precision::F32] {
            let source = module(&tape, precision);
            if let Err(e) = to_spirv(&source, precision) {
                panic!("{text} ({}):\n{e}\n{source}", precision.name());
            }
        }
    }

    /// The pendulum's H with its gradient and Hessian, and every function and operation
    /// once, validate with naga and translate to SPIR-V in both precisions.
    #[test]
    fn emitted_functions_validate_in_both_precisions() {
        check(
            "p^2/(2*m*l^2) + m*g*l*(1 - cos(q))",
            &["q", "p", "m", "l", "g"],
            true,
        );
        check(
            "sin(x) + cos(y) * tan(x) - exp(-y) / log(2 + x^2) + sqrt(1 + y^2) \
             + tanh(x) * sinh(y) - cosh(x)^-3 + atan(x*y) + abs(x - y) + (1 + x^2)^y",
            &["x", "y"],
            true,
        );
        check("2.5", &[], false);
        check("x", &["x"], false);
    }

    /// The f64 helpers need the FLOAT64 capability, so the f64 check above is not vacuous.
    #[test]
    fn f64_modules_need_float64() {
        let mut pool = ExprPool::new();
        let f = parse(&mut pool, "atan(x)", &["x"]).unwrap();
        let tape = Tape::new(&pool, 1, &[f]);
        assert!(validate(&module(&tape, Precision::F64), Precision::F32).is_err());
    }

    #[test]
    fn straight_line_code_names_each_instruction_once() {
        let mut pool = ExprPool::new();
        let f = parse(&mut pool, "cos(q) * cos(q) + 2^q + q^3", &["q"]).unwrap();
        let tape = Tape::new(&pool, 1, &[f]);
        let text = function(&tape, "energy");
        assert_eq!(text.matches("math_cos(").count(), 1);
        assert!(text.contains("fn energy(v: array<real, 1>) -> array<real, 1>"));
        assert!(text.contains("expr_pow("), "{text}");
        assert!(text.contains("expr_powi("), "{text}");
    }
}
