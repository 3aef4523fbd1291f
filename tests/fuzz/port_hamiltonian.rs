//! Port-Hamiltonian models written as expressions (`[system] kind = "port-hamiltonian"`):
//! random H, J, R and G over the model's states and parameters — most of them valid (J
//! skew as written, R symmetric and ⪰ 0), some with the structure broken (J not skew, R
//! not symmetric or indefinite at x0), names that do not exist, malformed text (the same
//! grammar errors as the contact terms), H singular where the run starts or on its way
//! (log, 1/x, sqrt of a negative), G of the wrong width for the inputs — with the
//! `gauss` and `energy-preserving` schemes, Newton settings and ensembles that draw
//! parameters and x0. A valid model must run (a failed stage solve is a per-member flag)
//! or be refused by a named error; nothing may panic.

use rand::Rng;

use super::cases::Gen;
use super::doc::{V, key};

/// Text that is not a valid expression, or names what a model does not have.
const BAD_TEXT: [&str; 14] = [
    "", "x1^", "(x1 + 1", "x1 + 1)", "2 x1", "sinn(x1)", "sin x1", "x1(2)", "1e400*x1", "t", "u",
    "x1 + x99", "x1;1", "∞",
];

/// Hamiltonians (of x1 … xn) that are not finite at some states a run may reach.
const SINGULAR_H: [&str; 5] = ["log(x1)", "1/x1", "sqrt(x1)", "x1^-2", "exp(exp(exp(x1)))"];

/// One matrix entry: a number or an expression's text.
#[derive(Debug, Clone)]
enum Entry {
    Number(f64),
    Text(String),
}

impl Entry {
    fn value(&self) -> V {
        match self {
            Entry::Number(v) => V::Float(*v),
            Entry::Text(t) => V::Str(t.clone()),
        }
    }

    fn negated(&self) -> Entry {
        match self {
            Entry::Number(v) => Entry::Number(-v),
            Entry::Text(t) => Entry::Text(format!("-({t})")),
        }
    }
}

fn matrix(rows: &[Vec<Entry>]) -> V {
    V::Arr(
        rows.iter()
            .map(|row| V::Arr(row.iter().map(Entry::value).collect()))
            .collect(),
    )
}

impl Gen {
    /// The names a model of n states with `parameters` may use.
    fn model_names(n: usize, parameters: &[String]) -> Vec<String> {
        (1..=n)
            .map(|i| format!("x{i}"))
            .chain(parameters.iter().cloned())
            .collect()
    }

    /// A matrix entry over `names`: mostly a number, sometimes an expression.
    fn entry(&mut self, names: &[String]) -> Entry {
        if self.rng.random_bool(0.7) {
            Entry::Number(self.nice())
        } else {
            let depth = self.rng.random_range(1..=3);
            Entry::Text(self.expression_of(names, depth))
        }
    }

    /// H: a valid sum of squares with a quartic or periodic term (mostly), a random
    /// expression, a singular one, or malformed text.
    fn hamiltonian_text(&mut self, n: usize, names: &[String]) -> String {
        match self.rng.random_range(0..10) {
            0 => self.pick(&BAD_TEXT).to_string(),
            1 => self.pick(&SINGULAR_H).to_string(),
            2 | 3 => {
                let depth = self.rng.random_range(1..=4);
                self.expression_of(names, depth)
            }
            _ => (1..=n)
                .map(|i| match self.rng.random_range(0..3) {
                    0 => format!("x{i}^2/2"),
                    1 => format!("x{i}^2/2 + x{i}^4/4"),
                    _ => format!("(1 - cos(x{i}))"),
                })
                .collect::<Vec<_>>()
                .join(" + "),
        }
    }

    /// An n × n J: skew as written (entries and their negations) in most cases; now and
    /// then a broken diagonal or a pair that is not negated.
    fn skew_entries(&mut self, n: usize, names: &[String]) -> Vec<Vec<Entry>> {
        let mut j = vec![vec![Entry::Number(0.0); n]; n];
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|r| (r + 1..n).map(move |c| (r, c)))
            .collect();
        for (r, c) in pairs {
            let e = self.entry(names);
            j[c][r] = e.negated();
            j[r][c] = e;
        }
        if self.rng.random_bool(0.1) {
            let (r, c) = (self.rng.random_range(0..n), self.rng.random_range(0..n));
            j[r][c] = self.entry(names);
            self.note(
                "ph-structure",
                format!("J[{r}][{c}] replaced: J may not be skew"),
            );
        }
        j
    }

    /// An n × n R: diagonal of non-negative numbers or squares of expressions (⪰ 0 by
    /// construction), or now and then negative or asymmetric.
    fn dissipation_entries(&mut self, n: usize, names: &[String]) -> Vec<Vec<Entry>> {
        let mut r = vec![vec![Entry::Number(0.0); n]; n];
        for (i, row) in r.iter_mut().enumerate() {
            row[i] = if self.rng.random_bool(0.7) {
                Entry::Number(self.positive() * f64::from(self.rng.random_bool(0.7)))
            } else {
                let depth = self.rng.random_range(1..=2);
                Entry::Text(format!("({})^2", self.expression_of(names, depth)))
            };
        }
        if n > 1 && self.rng.random_bool(0.1) {
            r[0][1] = Entry::Number(1.0);
            self.note(
                "ph-structure",
                "R[0][1] = 1, R[1][0] = 0: R not symmetric".into(),
            );
        } else if self.rng.random_bool(0.05) {
            r[0][0] = Entry::Number(-1.0);
            self.note("ph-structure", "R[0][0] = −1: R indefinite".into());
        }
        r
    }

    /// A random port-Hamiltonian `[system]` with n ≤ 3 states, 0–3 parameters and m ≤ 2
    /// inputs; returns it with m.
    pub(super) fn port_hamiltonian_system(&mut self) -> (V, usize) {
        let n = self.rng.random_range(1..=3);
        let m = self.rng.random_range(0..=2);
        let parameters: Vec<String> = ["a", "b", "c"][..self.rng.random_range(0..=3)]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let names = Self::model_names(n, &parameters);
        let states: Vec<V> = (1..=n).map(|i| V::Str(format!("x{i}"))).collect();
        let mut values = V::table();
        for p in &parameters {
            let v = self.positive();
            values.set_key(p, V::Float(v));
        }
        let h = self.hamiltonian_text(n, &names);
        let j = self.skew_entries(n, &names);
        let mut system = V::tab(vec![
            ("kind", V::str("port-hamiltonian")),
            ("states", V::Arr(states)),
            ("parameters", values),
            ("H", V::Str(h)),
            ("J", matrix(&j)),
        ]);
        if self.rng.random_bool(0.7) {
            let r = self.dissipation_entries(n, &names);
            system.set_key("R", matrix(&r));
        }
        if m > 0 {
            let g: Vec<Vec<Entry>> = (0..n)
                .map(|_| (0..m).map(|_| self.entry(&names)).collect())
                .collect();
            system.set_key("G", matrix(&g));
        }
        let x0: Vec<f64> = (0..n).map(|_| self.nice() + 0.25).collect();
        system.set_key("x0", V::floats(&x0));
        if self.rng.random_bool(0.3) {
            let tolerance = self.pick(&[1e-14, 1e-10, 1e-6, 1e-20, 0.0]);
            let iterations = self.pick(&[1i64, 2, 5, 50, 0]);
            system.set_key(
                "newton",
                V::tab(vec![
                    ("tolerance", V::Float(tolerance)),
                    ("max_iterations", V::Int(iterations)),
                ]),
            );
        }
        (system, m)
    }

    /// `[scheme]` for a port-Hamiltonian model: gauss or energy-preserving, s = 1…8 (now
    /// and then 0 or 9), an explicit quadrature sometimes.
    pub(super) fn port_hamiltonian_scheme(&mut self) {
        let family = self.pick(&["gauss", "energy-preserving"]);
        let stages = self.weighted(&[(1i64, 3), (2, 4), (3, 3), (5, 1), (8, 1), (0, 1), (9, 1)]);
        let quadrature = (family == "energy-preserving" && self.rng.random_bool(0.3))
            .then(|| self.pick(&[1i64, 2, 6, 20, 200]));
        if let Some(scheme) = self.doc.get_key_mut("scheme") {
            scheme.set_key("family", V::str(family));
            scheme.set_key("stages", V::Int(stages));
            scheme.remove_key("composition");
            scheme.remove_key("quadrature");
            if let Some(q) = quadrature {
                scheme.set_key("quadrature", V::Int(q));
            }
        }
    }

    /// `[ensemble]` drawing x0 and the model's parameters (now and then one it lacks).
    pub(super) fn port_hamiltonian_ensemble(&mut self) -> V {
        let members = self.log_int(1, 8) as i64;
        let seed = self.rng.random_range(0..1_i64 << 40);
        let mut e = V::tab(vec![("members", V::Int(members)), ("seed", V::Int(seed))]);
        if self.rng.random_bool(0.6) {
            let sigma = self.positive() * 0.1;
            e.set_key(
                "x0",
                V::tab(vec![
                    ("kind", V::str("perturb")),
                    ("sigma", V::Float(sigma)),
                ]),
            );
        }
        let mut names: Vec<String> = match self.doc.get(&[key("system"), key("parameters")]) {
            Some(V::Tab(entries)) => entries.iter().map(|(k, _)| k.clone()).collect(),
            _ => Vec::new(),
        };
        if self.rng.random_bool(0.1) {
            names.push("missing".into());
        }
        let mut draws = V::table();
        for name in names {
            let draw = match self.rng.random_range(0..4) {
                0 => continue,
                1 => {
                    let low = self.positive();
                    let high = low + self.positive();
                    V::tab(vec![
                        ("kind", V::str("uniform")),
                        ("low", V::Float(low)),
                        ("high", V::Float(high)),
                    ])
                }
                2 => {
                    let mean = self.nice();
                    let std = self.positive();
                    V::tab(vec![
                        ("kind", V::str("normal")),
                        ("mean", V::Float(mean)),
                        ("std", V::Float(std)),
                    ])
                }
                _ => {
                    let mu = self.nice() * 0.1;
                    let sigma = self.positive() * 0.1;
                    V::tab(vec![
                        ("kind", V::str("lognormal")),
                        ("mu", V::Float(mu)),
                        ("sigma", V::Float(sigma)),
                    ])
                }
            };
            draws.set_key(&name, draw);
        }
        e.set_key("parameters", draws);
        e
    }

    /// One expression of the model replaced: H, an entry of J, R or G, by valid, singular
    /// or malformed text.
    pub(super) fn port_hamiltonian_expression(&mut self) {
        let n = match self.doc.get(&[key("system"), key("states")]) {
            Some(V::Arr(items)) => items.len().max(1),
            _ => 1,
        };
        let states: Vec<String> = match self.doc.get(&[key("system"), key("states")]) {
            Some(V::Arr(items)) => items
                .iter()
                .filter_map(|v| match v {
                    V::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
            _ => vec!["x1".into()],
        };
        let parameters: Vec<String> = match self.doc.get(&[key("system"), key("parameters")]) {
            Some(V::Tab(entries)) => entries.iter().map(|(k, _)| k.clone()).collect(),
            _ => Vec::new(),
        };
        let names: Vec<String> = states.iter().chain(&parameters).cloned().collect();
        let depth = self.rng.random_range(1..=5);
        let text = match self.rng.random_range(0..6) {
            0 => self.pick(&BAD_TEXT).to_string(),
            1 => self.pick(&SINGULAR_H).replace("x1", &states[0]),
            _ => self.expression_of(&names, depth),
        };
        let (r, c) = (self.rng.random_range(0..n), self.rng.random_range(0..n));
        let (path, what) = match self.rng.random_range(0..4) {
            0 | 1 => (vec![key("system"), key("H")], "H".to_string()),
            2 => (
                vec![
                    key("system"),
                    key("J"),
                    super::doc::Seg::Idx(r),
                    super::doc::Seg::Idx(c),
                ],
                format!("J[{r}][{c}]"),
            ),
            _ => (
                vec![
                    key("system"),
                    key("R"),
                    super::doc::Seg::Idx(r),
                    super::doc::Seg::Idx(c),
                ],
                format!("R[{r}][{c}]"),
            ),
        };
        self.doc.set(&path, V::Str(text.clone()));
        self.note("ph-expression", format!("system.{what} = {text:?}"));
    }
}

impl Gen {
    /// Valid values that overflow: a parameter, x0, a constant input or the step size of
    /// magnitude `huge`; returns what was done.
    pub(super) fn port_hamiltonian_nonfinite(&mut self, huge: f64) -> String {
        match self.rng.random_range(0..4) {
            0 => {
                let names: Vec<String> = match self.doc.get(&[key("system"), key("parameters")]) {
                    Some(V::Tab(entries)) => entries.iter().map(|(k, _)| k.clone()).collect(),
                    _ => Vec::new(),
                };
                if names.is_empty() {
                    self.doc.set(
                        &[key("system"), key("parameters"), key("k")],
                        V::Float(huge),
                    );
                    self.doc
                        .set(&[key("system"), key("H")], V::str("k * x1^2 / 2"));
                    format!("H = k x1²/2 with k = {huge:e}")
                } else {
                    let name = self.pick(&names);
                    self.doc.set(
                        &[key("system"), key("parameters"), key(&name)],
                        V::Float(huge),
                    );
                    format!("parameter {name} = {huge:e}")
                }
            }
            1 => {
                let n = match self.doc.get(&[key("system"), key("x0")]) {
                    Some(V::Arr(items)) => items.len(),
                    _ => 1,
                };
                self.doc
                    .set(&[key("system"), key("x0")], V::floats(&vec![huge; n]));
                format!("x0 entries {huge:e}")
            }
            2 => {
                let m = match self
                    .doc
                    .get(&[key("system"), key("G"), super::doc::Seg::Idx(0)])
                {
                    Some(V::Arr(row)) => row.len(),
                    _ => 0,
                };
                let signal = V::tab(vec![
                    ("kind", V::str("constant")),
                    ("value", V::Float(huge)),
                ]);
                if m > 0 {
                    self.doc.set_key("input", V::Arr(vec![signal; m]));
                }
                format!("{m} constant input(s) {huge:e}")
            }
            _ => {
                let h = self.pick(&[10.0, 1e3, 1e6, 1e100]);
                let steps = self.log_int(1, 100);
                self.set_steps(h, steps);
                format!("h = {h:e}, {steps} steps")
            }
        }
    }
}
