//! The expression pool: a hash-consed arena of nodes, so equal subexpressions are one node.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::functions::{Func, pow, powi};

/// A node of an [`ExprPool`]: its index in the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(u32);

impl Id {
    /// The index of the node in its pool (ids are dense from 0).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One operation of an expression, over the ids of its operands.
#[derive(Debug, Clone, Copy)]
pub enum Node {
    /// A finite constant (equal constants are those with the same bits: 0 and −0 differ).
    Const(f64),
    /// Variable i: `names[i]` of the parse.
    Var(u32),
    Add(Id, Id),
    Mul(Id, Id),
    Neg(Id),
    Div(Id, Id),
    /// aⁿ for an integer n ∉ {0, 1, i32::MIN}, by binary powering ([`powi`]).
    Powi(Id, i32),
    /// aᵇ = exp(b·log a) ([`pow`]), for an exponent that is not a constant integer.
    Pow(Id, Id),
    /// f(a) for one of the functions of [`Func`].
    Call(Func, Id),
}

impl Node {
    /// The node as plain integers for hashing and equality: constants by their bits.
    fn key(&self) -> (u8, u64, u64) {
        let id = |a: Id| u64::from(a.0);
        match *self {
            Node::Const(c) => (0, c.to_bits(), 0),
            Node::Var(i) => (1, u64::from(i), 0),
            Node::Add(a, b) => (2, id(a), id(b)),
            Node::Mul(a, b) => (3, id(a), id(b)),
            Node::Neg(a) => (4, id(a), 0),
            Node::Div(a, b) => (5, id(a), id(b)),
            Node::Powi(a, n) => (6, id(a), u64::from(n as u32)),
            Node::Pow(a, b) => (7, id(a), id(b)),
            Node::Call(f, a) => (8 + f as u8, id(a), 0),
        }
    }

    /// The operands, first to last.
    pub fn operands(&self) -> impl Iterator<Item = Id> + use<> {
        let (a, b) = match *self {
            Node::Const(_) | Node::Var(_) => (None, None),
            Node::Neg(a) | Node::Powi(a, _) | Node::Call(_, a) => (Some(a), None),
            Node::Add(a, b) | Node::Mul(a, b) | Node::Div(a, b) | Node::Pow(a, b) => {
                (Some(a), Some(b))
            }
        };
        a.into_iter().chain(b)
    }

    /// The node's value, given its operands' values `a` and `b` (those it has) and the
    /// variables: the one definition of every operation, shared by [`ExprPool::eval`]
    /// and the tape.
    #[inline]
    pub fn apply(&self, a: f64, b: f64, vars: &[f64]) -> f64 {
        match *self {
            Node::Const(c) => c,
            Node::Var(i) => vars[i as usize],
            Node::Add(..) => a + b,
            Node::Mul(..) => a * b,
            Node::Neg(_) => -a,
            Node::Div(..) => a / b,
            Node::Powi(_, n) => powi(a, n),
            Node::Pow(..) => pow(a, b),
            Node::Call(f, _) => f.eval(a),
        }
    }
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Node {}

impl Hash for Node {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

/// A hash-consed arena of expression nodes: every distinct subexpression is stored once
/// and equal subexpressions are one [`Id`] (common-subexpression sharing).
///
/// Nodes are created only through the constructors ([`ExprPool::add`], …), which
/// simplify locally and then look the node up before adding it. A node's operands always
/// exist before it, so ids are a topological order of the DAG: every operand has a
/// smaller id than its user. Evaluation, differentiation and compilation rely on that and
/// sweep ids upwards, with no recursion (an expression may be as deep as it is long).
///
/// The simplifications are those a symbolic tool makes (each keeps the value exactly,
/// under the assumption stated):
///
/// - constant folding, when the result is finite, with the same f64 functions every
///   backend evaluates ([`Func::eval`], [`powi`], [`pow`]), so folding never changes a
///   value;
/// - x + 0 = x (exact but for −0 + 0 = +0), x·1 = x, x/1 = x, x·(−1) = −x, x/(−1) = −x,
///   −(−x) = x, x¹ = x (exact);
/// - x·0 = 0 and 0/x = 0 (assume x finite, and x ≠ 0 for the quotient), x⁰ = 1 (exact:
///   [`powi`] gives 1 for every x);
/// - aᵇ with b a constant integer in i32 (but not i32::MIN) becomes [`powi`]; otherwise
///   exp(b·log a) ([`pow`]);
/// - commutative operands in a canonical order (the smaller id first), so a·b and b·a,
///   a + b and b + a are one node (IEEE addition and multiplication commute exactly).
///
/// Subtraction is a + (−b); there is no reassociation, so (a + b) + c and a + (b + c)
/// stay distinct, as their rounded values are.
#[derive(Debug, Clone, Default)]
pub struct ExprPool {
    nodes: Vec<Node>,
    index: HashMap<Node, Id>,
    /// ∂(node)/∂(variable), memoised by [`ExprPool::derivative`].
    pub(super) derivatives: HashMap<(Id, u32), Id>,
}

impl ExprPool {
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of distinct nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node `id` names.
    pub fn node(&self, id: Id) -> Node {
        self.nodes[id.index()]
    }

    /// The value of `id` if it is a constant.
    pub fn constant_value(&self, id: Id) -> Option<f64> {
        match self.node(id) {
            Node::Const(c) => Some(c),
            _ => None,
        }
    }

    /// The node's id, added if new (no simplification).
    fn intern(&mut self, node: Node) -> Id {
        if let Some(&id) = self.index.get(&node) {
            return id;
        }
        let id =
            Id(u32::try_from(self.nodes.len()).expect("an expression pool holds < 2^32 nodes"));
        self.nodes.push(node);
        self.index.insert(node, id);
        id
    }

    fn is_value(&self, id: Id, value: f64) -> bool {
        self.constant_value(id) == Some(value)
    }

    /// A constant.
    ///
    /// # Panics
    ///
    /// If `value` is not finite: the WGSL backend has no literal for it, and the parser
    /// and the constructors never make one.
    pub fn constant(&mut self, value: f64) -> Id {
        assert!(
            value.is_finite(),
            "expression constants are finite, not {value}"
        );
        self.intern(Node::Const(value))
    }

    /// Variable `index`.
    pub fn var(&mut self, index: usize) -> Id {
        let index = u32::try_from(index).expect("variable indices fit in u32");
        self.intern(Node::Var(index))
    }

    /// A folded constant if `value` is finite.
    fn folded(&mut self, value: f64) -> Option<Id> {
        value.is_finite().then(|| self.constant(value))
    }

    /// a + b.
    pub fn add(&mut self, a: Id, b: Id) -> Id {
        if let (Some(x), Some(y)) = (self.constant_value(a), self.constant_value(b))
            && let Some(c) = self.folded(x + y)
        {
            return c;
        }
        if self.is_value(a, 0.0) {
            return b;
        }
        if self.is_value(b, 0.0) {
            return a;
        }
        self.intern(Node::Add(a.min(b), a.max(b)))
    }

    /// a − b, as a + (−b).
    pub fn sub(&mut self, a: Id, b: Id) -> Id {
        let minus_b = self.neg(b);
        self.add(a, minus_b)
    }

    /// a·b.
    pub fn mul(&mut self, a: Id, b: Id) -> Id {
        if let (Some(x), Some(y)) = (self.constant_value(a), self.constant_value(b))
            && let Some(c) = self.folded(x * y)
        {
            return c;
        }
        if self.is_value(a, 0.0) || self.is_value(b, 0.0) {
            return self.constant(0.0);
        }
        if self.is_value(a, 1.0) {
            return b;
        }
        if self.is_value(b, 1.0) {
            return a;
        }
        if self.is_value(a, -1.0) {
            return self.neg(b);
        }
        if self.is_value(b, -1.0) {
            return self.neg(a);
        }
        self.intern(Node::Mul(a.min(b), a.max(b)))
    }

    /// −a.
    pub fn neg(&mut self, a: Id) -> Id {
        match self.node(a) {
            Node::Const(x) => self.constant(-x),
            Node::Neg(inner) => inner,
            _ => self.intern(Node::Neg(a)),
        }
    }

    /// a/b.
    pub fn div(&mut self, a: Id, b: Id) -> Id {
        if let (Some(x), Some(y)) = (self.constant_value(a), self.constant_value(b))
            && let Some(c) = self.folded(x / y)
        {
            return c;
        }
        if self.is_value(b, 1.0) {
            return a;
        }
        if self.is_value(b, -1.0) {
            return self.neg(a);
        }
        if self.is_value(a, 0.0) {
            return self.constant(0.0);
        }
        self.intern(Node::Div(a, b))
    }

    /// aⁿ for an integer n, by binary powering ([`powi`]).
    ///
    /// # Panics
    ///
    /// If n = i32::MIN (its magnitude is not an i32).
    pub fn powi(&mut self, a: Id, n: i32) -> Id {
        assert!(n != i32::MIN, "integer exponents are at least −(2³¹ − 1)");
        match n {
            0 => return self.constant(1.0),
            1 => return a,
            _ => {}
        }
        if let Some(x) = self.constant_value(a)
            && let Some(c) = self.folded(powi(x, n))
        {
            return c;
        }
        self.intern(Node::Powi(a, n))
    }

    /// aᵇ: [`powi`](Self::powi) if b is a constant integer of magnitude < 2³¹, else
    /// exp(b·log a) ([`pow`]).
    pub fn pow(&mut self, a: Id, b: Id) -> Id {
        if let Some(y) = self.constant_value(b)
            && y.fract() == 0.0
            && y.abs() <= f64::from(i32::MAX)
        {
            return self.powi(a, y as i32);
        }
        if let (Some(x), Some(y)) = (self.constant_value(a), self.constant_value(b))
            && let Some(c) = self.folded(pow(x, y))
        {
            return c;
        }
        self.intern(Node::Pow(a, b))
    }

    /// f(a).
    pub fn call(&mut self, f: Func, a: Id) -> Id {
        if let Some(x) = self.constant_value(a)
            && let Some(c) = self.folded(f.eval(x))
        {
            return c;
        }
        self.intern(Node::Call(f, a))
    }

    /// Every node `roots` depend on (themselves included), in increasing id order, which
    /// is a topological order: operands before their users.
    pub fn reachable(&self, roots: &[Id]) -> Vec<Id> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = roots.to_vec();
        let mut out = Vec::new();
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id.index()], true) {
                continue;
            }
            out.push(id);
            stack.extend(self.node(id).operands().filter(|c| !seen[c.index()]));
        }
        out.sort_unstable();
        out
    }

    /// The value of `id` at the variables `vars` (`vars[i]` is variable i), each node
    /// computed once in id order by [`Node::apply`]. The reference that compiled tapes are
    /// tested against; for many points compile a [`Tape`](super::Tape).
    ///
    /// # Panics
    ///
    /// If a variable of the expression has no value in `vars`.
    pub fn eval(&self, id: Id, vars: &[f64]) -> f64 {
        let mut values = vec![0.0; id.index() + 1];
        for node_id in self.reachable(&[id]) {
            let node = self.node(node_id);
            let mut operands = node.operands().map(|o| values[o.index()]);
            let a = operands.next().unwrap_or(0.0);
            let b = operands.next().unwrap_or(0.0);
            values[node_id.index()] = node.apply(a, b, vars);
        }
        values[id.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_subexpressions_are_one_node() {
        let mut pool = ExprPool::new();
        let (x, y) = (pool.var(0), pool.var(1));
        let xy = pool.mul(x, y);
        let yx = pool.mul(y, x);
        assert_eq!(xy, yx);
        let s1 = pool.call(Func::Sin, xy);
        let s2 = pool.call(Func::Sin, yx);
        assert_eq!(s1, s2);
        let n = pool.len();
        let _ = pool.add(s1, x);
        let _ = pool.add(x, s2);
        assert_eq!(pool.len(), n + 1);
        // 0 and −0 are different constants.
        let zero = pool.constant(0.0);
        let minus_zero = pool.constant(-0.0);
        assert_ne!(zero, minus_zero);
    }

    #[test]
    fn constructors_simplify_locally() {
        let mut pool = ExprPool::new();
        let x = pool.var(0);
        let (zero, one, two, minus_one) = (
            pool.constant(0.0),
            pool.constant(1.0),
            pool.constant(2.0),
            pool.constant(-1.0),
        );
        assert_eq!(pool.add(x, zero), x);
        assert_eq!(pool.add(zero, x), x);
        assert_eq!(pool.mul(x, one), x);
        assert_eq!(pool.mul(x, zero), zero);
        assert_eq!(pool.div(x, one), x);
        assert_eq!(pool.div(zero, x), zero);
        let minus_x = pool.neg(x);
        assert_eq!(pool.mul(minus_one, x), minus_x);
        assert_eq!(pool.neg(minus_x), x);
        assert_eq!(pool.powi(x, 1), x);
        assert_eq!(pool.powi(x, 0), one);
        assert_eq!(pool.pow(x, one), x);
        let x2 = pool.pow(x, two);
        assert!(matches!(pool.node(x2), Node::Powi(_, 2)));
        let half = pool.constant(0.5);
        let root = pool.pow(x, half);
        assert!(matches!(pool.node(root), Node::Pow(..)));
        // Folding: 2 + 2 = 4, −(2) = −2, sin(0) = 0, 2^10 = 1024, 2^0.5 = exp(0.5·log 2).
        let four = pool.add(two, two);
        assert_eq!(pool.constant_value(four), Some(4.0));
        let m2 = pool.neg(two);
        assert_eq!(pool.constant_value(m2), Some(-2.0));
        let s = pool.call(Func::Sin, zero);
        assert_eq!(s, zero);
        let ten = pool.constant(10.0);
        let p = pool.pow(two, ten);
        assert_eq!(pool.constant_value(p), Some(1024.0));
        let r = pool.pow(two, half);
        assert_eq!(pool.constant_value(r), Some(pow(2.0, 0.5)));
        // Not folded where the result is not finite: 1/0, log 0.
        let inf = pool.div(one, zero);
        assert!(matches!(pool.node(inf), Node::Div(..)));
        let log0 = pool.call(Func::Log, zero);
        assert!(matches!(pool.node(log0), Node::Call(Func::Log, _)));
        assert_eq!(pool.eval(log0, &[]), f64::NEG_INFINITY);
    }

    #[test]
    fn ids_are_a_topological_order() {
        let mut pool = ExprPool::new();
        let x = pool.var(0);
        let c = pool.call(Func::Cos, x);
        let e = pool.mul(c, x);
        for id in pool.reachable(&[e]) {
            for o in pool.node(id).operands() {
                assert!(o < id);
            }
        }
        assert_eq!(pool.reachable(&[e]), vec![x, c, e]);
        assert_eq!(
            pool.eval(e, &[0.5]),
            crate::kernels::math::math_cos(0.5) * 0.5
        );
    }
}
