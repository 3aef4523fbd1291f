//! Exact symbolic partial derivatives of pool expressions.

use super::functions::Func;
use super::pool::{ExprPool, Id, Node};

impl ExprPool {
    /// ∂f/∂x_var, exact, built in this pool, so derivatives share every subexpression with
    /// the function and with each other.
    ///
    /// ∂f/∂xᵥ is built by one upward sweep over the nodes f depends on (ids are a topological
    /// order), applying to each node the rule below to its operands' derivatives, which are
    /// memoised in the pool per (node, variable): a second derivative, a gradient or a
    /// Hessian reuses every derivative already built. With u′ = ∂u/∂xᵥ and f the node itself:
    ///
    /// | node        | derivative                              |
    /// |-------------|-----------------------------------------|
    /// | a + b       | a′ + b′                                 |
    /// | a·b         | a′·b + a·b′                             |
    /// | −a          | −a′                                     |
    /// | a/b         | (a′ − f·b′)/b                           |
    /// | aⁿ          | n·aⁿ⁻¹·a′                               |
    /// | aᵇ          | f·(b′·log a + b·a′/a)                   |
    /// | sin a       | cos a · a′                              |
    /// | cos a       | −sin a · a′                             |
    /// | tan a       | (1 + f²)·a′                             |
    /// | exp a       | f·a′                                    |
    /// | log a       | a′/a                                    |
    /// | sqrt a      | a′/(2f)                                 |
    /// | tanh a      | (1 − f²)·a′                             |
    /// | sinh a      | cosh a · a′                             |
    /// | cosh a      | sinh a · a′                             |
    /// | atan a      | a′/(1 + a²)                             |
    /// | abs a       | (a/f)·a′, the sign of a                 |
    ///
    /// The derivative of |a| is taken as a/|a|, which is NaN where a = 0 (0/0): |a| has no
    /// derivative at its kink, and a NaN there is seen rather than a subgradient chosen
    /// silently. A rule is not applied where a′ is the constant 0 (the derivative is 0 and no
    /// node is made), so derivatives of expressions free of xᵥ cost nothing.
    pub fn derivative(&mut self, f: Id, var: usize) -> Id {
        let v = u32::try_from(var).expect("variable indices fit in u32");
        // The nodes f depends on whose derivative is not known yet, operands first.
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![f];
        let mut todo = Vec::new();
        while let Some(id) = stack.pop() {
            if self.derivatives.contains_key(&(id, v)) || !seen.insert(id) {
                continue;
            }
            todo.push(id);
            stack.extend(self.node(id).operands());
        }
        todo.sort_unstable();
        for id in todo {
            let d = self.derivative_of_node(id, v);
            self.derivatives.insert((id, v), d);
        }
        self.derivatives[&(f, v)]
    }

    /// The gradient (∂f/∂x₀, …, ∂f/∂x_{n−1}).
    pub fn gradient(&mut self, f: Id, n_vars: usize) -> Vec<Id> {
        (0..n_vars).map(|v| self.derivative(f, v)).collect()
    }

    /// The Jacobian of `outputs` in row-major order: entry `i * n_vars + j` is
    /// ∂`outputs[i]`/∂x_j.
    pub fn jacobian(&mut self, outputs: &[Id], n_vars: usize) -> Vec<Id> {
        let mut out = Vec::with_capacity(outputs.len() * n_vars);
        for &f in outputs {
            out.extend(self.gradient(f, n_vars));
        }
        out
    }

    /// The Hessian of f in row-major order: entry `i * n_vars + j` is ∂²f/∂x_i∂x_j, built
    /// as ∂/∂x_j of ∂f/∂x_i for j ≥ i and mirrored, so it is symmetric node for node.
    pub fn hessian(&mut self, f: Id, n_vars: usize) -> Vec<Id> {
        let gradient = self.gradient(f, n_vars);
        let mut out = vec![f; n_vars * n_vars];
        for i in 0..n_vars {
            for j in i..n_vars {
                let d = self.derivative(gradient[i], j);
                out[i * n_vars + j] = d;
                out[j * n_vars + i] = d;
            }
        }
        out
    }

    /// The derivative of node `id` from its operands' memoised derivatives.
    fn derivative_of_node(&mut self, id: Id, v: u32) -> Id {
        let zero = self.constant(0.0);
        let d = |pool: &Self, a: Id| pool.derivatives[&(a, v)];
        match self.node(id) {
            Node::Const(_) => zero,
            Node::Var(i) => {
                if i == v {
                    self.constant(1.0)
                } else {
                    zero
                }
            }
            Node::Add(a, b) => {
                let (da, db) = (d(self, a), d(self, b));
                self.add(da, db)
            }
            Node::Mul(a, b) => {
                let (da, db) = (d(self, a), d(self, b));
                let left = self.mul(da, b);
                let right = self.mul(a, db);
                self.add(left, right)
            }
            Node::Neg(a) => {
                let da = d(self, a);
                self.neg(da)
            }
            Node::Div(a, b) => {
                let (da, db) = (d(self, a), d(self, b));
                let f_db = self.mul(id, db);
                let numerator = self.sub(da, f_db);
                self.div(numerator, b)
            }
            Node::Powi(a, n) => {
                let da = d(self, a);
                if da == zero {
                    return zero;
                }
                let n_f = self.constant(f64::from(n));
                let exponent = self.constant(f64::from(n) - 1.0);
                let power = self.pow(a, exponent);
                let factor = self.mul(n_f, power);
                self.mul(factor, da)
            }
            Node::Pow(a, b) => {
                let (da, db) = (d(self, a), d(self, b));
                let from_b = if db == zero {
                    zero
                } else {
                    let log_a = self.call(Func::Log, a);
                    self.mul(db, log_a)
                };
                let from_a = if da == zero {
                    zero
                } else {
                    let da_over_a = self.div(da, a);
                    self.mul(b, da_over_a)
                };
                let sum = self.add(from_b, from_a);
                self.mul(id, sum)
            }
            Node::Call(func, a) => {
                let da = d(self, a);
                if da == zero {
                    return zero;
                }
                let one = self.constant(1.0);
                let factor = match func {
                    Func::Sin => self.call(Func::Cos, a),
                    Func::Cos => {
                        let sin = self.call(Func::Sin, a);
                        self.neg(sin)
                    }
                    Func::Tan => {
                        let f2 = self.powi(id, 2);
                        self.add(one, f2)
                    }
                    Func::Exp => id,
                    Func::Log => return self.div(da, a),
                    Func::Sqrt => {
                        let two = self.constant(2.0);
                        let twice = self.mul(two, id);
                        return self.div(da, twice);
                    }
                    Func::Tanh => {
                        let f2 = self.powi(id, 2);
                        self.sub(one, f2)
                    }
                    Func::Sinh => self.call(Func::Cosh, a),
                    Func::Cosh => self.call(Func::Sinh, a),
                    Func::Atan => {
                        let a2 = self.powi(a, 2);
                        let denominator = self.add(one, a2);
                        return self.div(da, denominator);
                    }
                    Func::Abs => self.div(a, id),
                };
                self.mul(factor, da)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_of_simple_expressions_are_the_expected_nodes() {
        let mut pool = ExprPool::new();
        let (x, y) = (pool.var(0), pool.var(1));
        let xy = pool.mul(x, y);
        assert_eq!(pool.derivative(xy, 0), y);
        assert_eq!(pool.derivative(xy, 1), x);
        assert_eq!(pool.derivative(xy, 2), pool.constant(0.0));
        let sin = pool.call(Func::Sin, x);
        let cos = pool.call(Func::Cos, x);
        assert_eq!(pool.derivative(sin, 0), cos);
        // d/dx cos x = −sin x, d/dx −sin x = −cos x.
        let d_cos = pool.derivative(cos, 0);
        assert_eq!(pool.node(d_cos).operands().next(), Some(sin));
        let dd_cos = pool.derivative(d_cos, 0);
        let minus_cos = pool.neg(cos);
        assert_eq!(dd_cos, minus_cos);
        // x³ → 3x², → 6x.
        let x3 = pool.powi(x, 3);
        let d = pool.derivative(x3, 0);
        assert_eq!(pool.eval(d, &[2.0]), 12.0);
        let dd = pool.derivative(d, 0);
        assert_eq!(pool.eval(dd, &[2.0]), 12.0);
    }

    #[test]
    fn derivatives_are_memoised() {
        let mut pool = ExprPool::new();
        let x = pool.var(0);
        let e = pool.call(Func::Exp, x);
        let f = pool.call(Func::Atan, e);
        let d = pool.derivative(f, 0);
        let n = pool.len();
        assert_eq!(pool.derivative(f, 0), d);
        assert_eq!(pool.len(), n);
        let h = pool.hessian(f, 1);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0], pool.derivative(d, 0));
    }

    /// The derivative of |x| is its sign, NaN at the kink.
    #[test]
    fn abs_differentiates_to_the_sign() {
        let mut pool = ExprPool::new();
        let x = pool.var(0);
        let a = pool.call(Func::Abs, x);
        let d = pool.derivative(a, 0);
        assert_eq!(pool.eval(d, &[-3.0]), -1.0);
        assert_eq!(pool.eval(d, &[0.25]), 1.0);
        assert!(pool.eval(d, &[0.0]).is_nan());
    }
}
