//! Contact terms written as expressions (`{ kind = "expression", B = … }` in the potential,
//! `{ kind = "expression", C = … }` as damping): random expressions over the names a term
//! may use (the positions `x` or `x1 … xn`, and `t`), most of them valid, some singular
//! where the run starts or later (2/t, 1/(t − 1), log(x), sqrt(1 − t)), some with names a
//! term may not use (momenta, z, x beyond n), and some malformed text (unbalanced, a
//! dangling operator, an unknown function, a number that overflows, deep nesting, a
//! character outside the grammar). A valid one must run or be refused by a named error;
//! nothing may panic.

use rand::Rng;

use super::cases::Gen;
use super::doc::V;

/// Expressions in t that are not finite where a run evaluates them.
const SINGULAR_RATES: [&str; 6] = [
    "2/t",
    "1/(t - 1)",
    "log(t)",
    "sqrt(1 - t)",
    "1/(t - 0.5)^2",
    "tan(t)^-1",
];

/// Text that is not a valid expression, or names what a term may not use.
const BAD_TEXT: [&str; 16] = [
    "", " ", "x^", "(x + 1", "x + 1)", "2 x", "sinn(x)", "sin x", "x(2)", "1e400*x", "p^2/2", "z",
    "x²", "x1 + x99", "x;1", "∞",
];

impl Gen {
    /// A random valid expression of the names, nested at most `depth` deep.
    pub(super) fn expression_of(&mut self, names: &[String], depth: u32) -> String {
        if depth == 0 || self.rng.random_bool(0.3) {
            return if self.rng.random_bool(0.6) {
                self.pick(names)
            } else {
                format!("{}", self.nice())
            };
        }
        let a = self.expression_of(names, depth - 1);
        match self.rng.random_range(0..8) {
            0 => format!("{a} + {}", self.expression_of(names, depth - 1)),
            1 => format!("{a} - {}", self.expression_of(names, depth - 1)),
            2 => format!("({a})*({})", self.expression_of(names, depth - 1)),
            3 => format!("({a})/({})", self.expression_of(names, depth - 1)),
            4 => format!("({a})^{}", self.rng.random_range(-3..=6)),
            5 => format!("-({a})"),
            _ => {
                let f = self.pick(&[
                    "sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh", "atan",
                    "abs",
                ]);
                format!("{f}({a})")
            }
        }
    }

    /// The names B(t, x) of an n-dimensional system may use.
    fn position_names(n: usize) -> Vec<String> {
        let mut names: Vec<String> = if n == 1 {
            vec!["x".into()]
        } else {
            (1..=n).map(|i| format!("x{i}")).collect()
        };
        names.push("t".into());
        names
    }

    /// Text for B(t, x) of an n-dimensional system: mostly valid, sometimes not.
    fn potential_text(&mut self, n: usize) -> String {
        match self.rng.random_range(0..10) {
            0 => self.pick(&BAD_TEXT).to_string(),
            1 => format!(
                "{}x{}",
                "(".repeat(self.log_int(1, 5000) as usize),
                ")".repeat(3)
            ),
            2 => {
                let names = Self::position_names(n);
                format!("log({}) + x{}", self.pick(&names), n + 1)
            }
            3 => {
                // A double well in every position, as the example.
                let names = Self::position_names(n);
                names[..n]
                    .iter()
                    .map(|x| format!("{x}^4/4 - {x}^2/2"))
                    .collect::<Vec<_>>()
                    .join(" + ")
            }
            _ => {
                let depth = self.rng.random_range(1..=5);
                self.expression_of(&Self::position_names(n), depth)
            }
        }
    }

    /// Text for C(t): mostly valid, sometimes singular or malformed.
    fn rate_text(&mut self) -> String {
        match self.rng.random_range(0..8) {
            0 => self.pick(&SINGULAR_RATES).to_string(),
            1 => self.pick(&BAD_TEXT).to_string(),
            2 => "2/(t + 1)".into(),
            _ => {
                let depth = self.rng.random_range(1..=4);
                self.expression_of(&["t".to_string()], depth)
            }
        }
    }

    /// `{ kind = "expression", B = … }` for an n-dimensional system.
    pub(super) fn expression_potential(&mut self, n: usize) -> V {
        let text = self.potential_text(n);
        V::tab(vec![("kind", V::str("expression")), ("B", V::Str(text))])
    }

    /// `{ kind = "expression", C = … }`.
    pub(super) fn expression_damping(&mut self) -> V {
        let text = self.rate_text();
        V::tab(vec![("kind", V::str("expression")), ("C", V::Str(text))])
    }
}
