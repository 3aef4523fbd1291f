//! A straight-line program compiled from pool expressions.

use super::atan::atan;
use super::functions::{Func, cosh, pow, powi, sinh, tan, tanh};
use super::pool::{ExprPool, Id, Node};
use crate::kernels::math::{math_cos_inline, math_exp_inline, math_log_inline, math_sin_inline};

/// One instruction; operands are registers (earlier instructions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Instr {
    Const(f64),
    Var(u32),
    Add(u32, u32),
    Mul(u32, u32),
    Neg(u32),
    Div(u32, u32),
    Powi(u32, i32),
    Pow(u32, u32),
    Call(Func, u32),
}

impl Instr {
    /// The arithmetic operations it performs: one per `+ − × ÷`, the multiplications (and
    /// the division, for n < 0) of binary powering, three for aᵇ (log, ×, exp), and one
    /// per function call (however many operations the function takes inside); loads of
    /// constants and variables are free.
    pub fn flops(&self) -> usize {
        match *self {
            Instr::Const(_) | Instr::Var(_) => 0,
            Instr::Add(..) | Instr::Mul(..) | Instr::Neg(_) | Instr::Div(..) => 1,
            Instr::Powi(_, n) => {
                let e = n.unsigned_abs();
                if e == 0 {
                    return 0;
                }
                // One multiplication per set bit, one squaring per bit above the lowest.
                let multiplies = e.count_ones() + (31 - e.leading_zeros());
                multiplies as usize + usize::from(n < 0)
            }
            Instr::Pow(..) => 3,
            Instr::Call(..) => 1,
        }
    }
}

/// A straight-line program compiled from pool expressions, evaluated at one point or at
/// many points side by side ("lanes").
///
/// [`Tape::new`] takes every node the outputs depend on, in increasing id order (a
/// topological order, see [`ExprPool`]), and makes it one instruction writing one
/// register: a subexpression shared by several outputs, or several times inside one, is
/// computed once. Register i holds instruction i's result (no reuse: clarity first; the
/// scratch memory is one f64 per instruction and lane).
///
/// [`Tape::eval`] runs the instructions at one point; [`Tape::eval_lanes`] runs each
/// instruction over all lanes before the next, so the dispatch on the instruction kind is
/// paid once per instruction and the loop over lanes is plain arithmetic on slices, which
/// the compiler vectorises. Both evaluate every operation with [`Node::apply`]'s
/// definitions (the crate's own transcendental functions), in the same order, so they
/// agree to the last bit, with each other and with [`ExprPool::eval`].
#[derive(Debug, Clone)]
pub struct Tape {
    instrs: Vec<Instr>,
    outputs: Vec<u32>,
    n_vars: usize,
}

impl Tape {
    /// Compiles `outputs` of `pool`, functions of `n_vars` variables.
    ///
    /// # Panics
    ///
    /// If an output depends on a variable index ≥ `n_vars`.
    pub fn new(pool: &ExprPool, n_vars: usize, outputs: &[Id]) -> Tape {
        let order = pool.reachable(outputs);
        let register = |id: Id| order.binary_search(&id).expect("operands precede users") as u32;
        let instrs = order
            .iter()
            .map(|&id| match pool.node(id) {
                Node::Const(c) => Instr::Const(c),
                Node::Var(i) => {
                    assert!(
                        (i as usize) < n_vars,
                        "the expression uses variable {i}, but the tape has {n_vars} variables"
                    );
                    Instr::Var(i)
                }
                Node::Add(a, b) => Instr::Add(register(a), register(b)),
                Node::Mul(a, b) => Instr::Mul(register(a), register(b)),
                Node::Neg(a) => Instr::Neg(register(a)),
                Node::Div(a, b) => Instr::Div(register(a), register(b)),
                Node::Powi(a, n) => Instr::Powi(register(a), n),
                Node::Pow(a, b) => Instr::Pow(register(a), register(b)),
                Node::Call(f, a) => Instr::Call(f, register(a)),
            })
            .collect();
        Tape {
            instrs,
            outputs: outputs.iter().map(|&id| register(id)).collect(),
            n_vars,
        }
    }

    /// The instructions, in execution order; instruction i writes register i.
    pub fn instructions(&self) -> &[Instr] {
        &self.instrs
    }

    /// The register of each output.
    pub fn output_registers(&self) -> &[u32] {
        &self.outputs
    }

    /// The number of instructions (constant and variable loads included).
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// The arithmetic operations of one evaluation ([`Instr::flops`] summed).
    pub fn flops(&self) -> usize {
        self.instrs.iter().map(Instr::flops).sum()
    }

    pub fn n_vars(&self) -> usize {
        self.n_vars
    }

    pub fn n_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Evaluates the outputs at one point: `out[o]` is output o at the variables `vars`.
    /// `scratch` is resized to one f64 per instruction (keep it between calls to avoid
    /// allocating).
    ///
    /// # Panics
    ///
    /// If `vars.len() != self.n_vars()` or `out.len() != self.n_outputs()`.
    pub fn eval(&self, vars: &[f64], out: &mut [f64], scratch: &mut Vec<f64>) {
        assert_eq!(vars.len(), self.n_vars, "variables of the tape");
        assert_eq!(out.len(), self.outputs.len(), "outputs of the tape");
        scratch.clear();
        scratch.reserve(self.instrs.len());
        for instr in &self.instrs {
            let r = |i: u32| scratch[i as usize];
            let value = match *instr {
                Instr::Const(c) => c,
                Instr::Var(v) => vars[v as usize],
                Instr::Add(a, b) => r(a) + r(b),
                Instr::Mul(a, b) => r(a) * r(b),
                Instr::Neg(a) => -r(a),
                Instr::Div(a, b) => r(a) / r(b),
                Instr::Powi(a, n) => powi(r(a), n),
                Instr::Pow(a, b) => pow(r(a), r(b)),
                Instr::Call(f, a) => f.eval(r(a)),
            };
            scratch.push(value);
        }
        for (o, &reg) in out.iter_mut().zip(&self.outputs) {
            *o = scratch[reg as usize];
        }
    }

    /// Evaluates the outputs at `lanes` points at once, variable-major:
    /// `vars[v * lanes + l]` is variable v at point l and `out[o * lanes + l]` receives
    /// output o at point l. Each instruction runs over all lanes before the next; the
    /// results equal [`Tape::eval`]'s at each point to the last bit. `scratch` is resized
    /// to `len() * lanes` f64 (a few hundred lanes keep it in cache).
    ///
    /// # Panics
    ///
    /// If `vars.len() != n_vars() * lanes` or `out.len() != n_outputs() * lanes`.
    pub fn eval_lanes(&self, vars: &[f64], lanes: usize, out: &mut [f64], scratch: &mut Vec<f64>) {
        self.eval_lanes_inline(vars, lanes, out, scratch);
    }

    /// [`Tape::eval_lanes`], inlined into its caller: a caller compiled for a wider
    /// instruction set (`#[target_feature]`) runs the lane loops at that width. The
    /// results are the same at every width (each lane's operations are the same IEEE
    /// operations in the same order; nothing is fused).
    ///
    /// # Panics
    ///
    /// As [`Tape::eval_lanes`].
    #[inline(always)]
    pub fn eval_lanes_inline(
        &self,
        vars: &[f64],
        lanes: usize,
        out: &mut [f64],
        scratch: &mut Vec<f64>,
    ) {
        assert_eq!(vars.len(), self.n_vars * lanes, "variables × lanes");
        assert_eq!(out.len(), self.outputs.len() * lanes, "outputs × lanes");
        // Every register is written before it is read: a scratch of the right length is
        // used as it is, without clearing it.
        scratch.resize(self.instrs.len() * lanes, 0.0);
        for (i, instr) in self.instrs.iter().enumerate() {
            let (done, rest) = scratch.split_at_mut(i * lanes);
            let dst = &mut rest[..lanes];
            let r = |reg: u32| &done[reg as usize * lanes..][..lanes];
            match *instr {
                Instr::Const(c) => dst.fill(c),
                Instr::Var(v) => dst.copy_from_slice(&vars[v as usize * lanes..][..lanes]),
                Instr::Add(a, b) => binary(dst, r(a), r(b), |x, y| x + y),
                Instr::Mul(a, b) => binary(dst, r(a), r(b), |x, y| x * y),
                Instr::Neg(a) => unary(dst, r(a), |x| -x),
                Instr::Div(a, b) => binary(dst, r(a), r(b), |x, y| x / y),
                Instr::Powi(a, n) => unary(dst, r(a), |x| powi(x, n)),
                #[expect(clippy::redundant_closure, reason = "inlined, as in `call`")]
                Instr::Pow(a, b) => binary(
                    dst,
                    r(a),
                    r(b),
                    #[inline(always)]
                    |x, y| pow(x, y),
                ),
                Instr::Call(f, a) => call(f, dst, r(a)),
            }
        }
        for (o, &reg) in out.chunks_exact_mut(lanes.max(1)).zip(&self.outputs) {
            o.copy_from_slice(&scratch[reg as usize * lanes..][..lanes]);
        }
    }
}

/// dst[l] = f(a[l]) over the lanes, the function chosen once for all lanes: each loop
/// is one function's, inlined into it so that the loop vectorises at the caller's width.
#[inline(always)]
#[expect(
    clippy::redundant_closure,
    reason = "an #[inline(always)] closure puts the function's body into the lane loop"
)]
fn call(f: Func, dst: &mut [f64], a: &[f64]) {
    match f {
        Func::Sin => unary(
            dst,
            a,
            #[inline(always)]
            |x| math_sin_inline(x),
        ),
        Func::Cos => unary(
            dst,
            a,
            #[inline(always)]
            |x| math_cos_inline(x),
        ),
        Func::Tan => unary(
            dst,
            a,
            #[inline(always)]
            |x| tan(x),
        ),
        Func::Exp => unary(
            dst,
            a,
            #[inline(always)]
            |x| math_exp_inline(x),
        ),
        Func::Log => unary(
            dst,
            a,
            #[inline(always)]
            |x| math_log_inline(x),
        ),
        Func::Sqrt => unary(
            dst,
            a,
            #[inline(always)]
            |x| x.sqrt(),
        ),
        Func::Tanh => unary(
            dst,
            a,
            #[inline(always)]
            |x| tanh(x),
        ),
        Func::Sinh => unary(
            dst,
            a,
            #[inline(always)]
            |x| sinh(x),
        ),
        Func::Cosh => unary(
            dst,
            a,
            #[inline(always)]
            |x| cosh(x),
        ),
        Func::Atan => unary(
            dst,
            a,
            #[inline(always)]
            |x| atan(x),
        ),
        Func::Abs => unary(
            dst,
            a,
            #[inline(always)]
            |x| x.abs(),
        ),
    }
}

/// dst[l] = op(a[l]) over the lanes.
#[inline(always)]
fn unary(dst: &mut [f64], a: &[f64], op: impl Fn(f64) -> f64) {
    for (d, &x) in dst.iter_mut().zip(a) {
        *d = op(x);
    }
}

/// dst[l] = op(a[l], b[l]) over the lanes.
#[inline(always)]
fn binary(dst: &mut [f64], a: &[f64], b: &[f64], op: impl Fn(f64, f64) -> f64) {
    for ((d, &x), &y) in dst.iter_mut().zip(a).zip(b) {
        *d = op(x, y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_nodes_are_computed_once() {
        let mut pool = ExprPool::new();
        let x = pool.var(0);
        let c = pool.call(Func::Cos, x);
        let two = pool.constant(2.0);
        let f = pool.mul(c, two);
        let g = pool.add(c, x);
        let tape = Tape::new(&pool, 1, &[f, g, c]);
        // x, cos x, 2, 2·cos x, cos x + x.
        assert_eq!(tape.len(), 5);
        assert_eq!(tape.flops(), 3);
        let mut out = [0.0; 3];
        tape.eval(&[0.3], &mut out, &mut Vec::new());
        let cos = crate::kernels::math::math_cos(0.3);
        assert_eq!(out, [cos * 2.0, cos + 0.3, cos]);
    }

    #[test]
    fn powi_flops_count_the_multiplications() {
        assert_eq!(Instr::Powi(0, 2).flops(), 2); // 1·x, then x·x: acc = 1·(x·x)
        assert_eq!(Instr::Powi(0, 5).flops(), 4);
        assert_eq!(Instr::Powi(0, -1).flops(), 2);
    }

    #[test]
    fn zero_lanes_and_zero_variables() {
        let mut pool = ExprPool::new();
        let c = pool.constant(1.5);
        let tape = Tape::new(&pool, 0, &[c]);
        let mut out = [0.0; 1];
        tape.eval(&[], &mut out, &mut Vec::new());
        assert_eq!(out, [1.5]);
        tape.eval_lanes(&[], 0, &mut [], &mut Vec::new());
        let mut out = [0.0; 3];
        tape.eval_lanes(&[], 3, &mut out, &mut Vec::new());
        assert_eq!(out, [1.5; 3]);
    }
}
