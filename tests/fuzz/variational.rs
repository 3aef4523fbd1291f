//! Variational systems (`[system] kind = "variational"` with a `[problem]`): random
//! Lagrangians of order 1 and 2 over 1–3 coordinates — a kinetic term plus a potential
//! (mostly), random or singular expressions, malformed text, names that do not exist —
//! with holonomic constraints (a sphere, a plane, random ones) and higher-order ones,
//! symmetries and observables; initial-value problems (order 1) and boundary-value
//! problems with knots on and off the grid, data on and off the constraints; rules that
//! match the order or not; Newton settings; ensembles drawing parameters, q0, qd0 and
//! knots. A valid problem must run (a failed solve is a per-member flag) or be refused by
//! a named error; nothing may panic.

use rand::Rng;

use super::cases::Gen;
use super::doc::{V, key};

/// Text that is not a valid expression, or names what the model does not have.
const BAD_TEXT: [&str; 10] = [
    "", "x^", "(x + 1", "2 x", "sinn(x)", "xddd", "u", "x1 + q9", "1e400*x", "∞",
];

impl Gen {
    /// A random Lagrangian's text over `coordinates` of `order`.
    fn lagrangian_text(&mut self, coordinates: &[String], order: usize) -> String {
        let derivative = if order == 2 { "dd" } else { "d" };
        match self.rng.random_range(0..10) {
            0 => self.pick(&BAD_TEXT).to_string(),
            1 => {
                let mut names: Vec<String> = coordinates.to_vec();
                names.extend(coordinates.iter().map(|c| format!("{c}d")));
                if order == 2 {
                    names.extend(coordinates.iter().map(|c| format!("{c}dd")));
                }
                names.push("t".into());
                let depth = self.rng.random_range(1..=4);
                self.expression_of(&names, depth)
            }
            _ => {
                let kinetic: Vec<String> = coordinates
                    .iter()
                    .map(|c| format!("{c}{derivative}^2/2"))
                    .collect();
                let potential = match self.rng.random_range(0..4) {
                    0 => String::new(),
                    1 => format!(" - {}^2/2", coordinates[0]),
                    2 => format!(
                        " + k/sqrt({} + 1)",
                        coordinates
                            .iter()
                            .map(|c| format!("{c}^2"))
                            .collect::<Vec<_>>()
                            .join(" + ")
                    ),
                    _ => format!(" + F*{}*cos(t)", coordinates[0]),
                };
                format!("{}{potential}", kinetic.join(" + "))
            }
        }
    }

    /// A random variational `[system]` with its `[problem]`.
    pub(super) fn variational_system(&mut self) -> (V, V) {
        let d = self.rng.random_range(1..=3);
        let order = if self.rng.random_bool(0.5) { 1 } else { 2 };
        let coordinates: Vec<String> = ["x", "y", "z"][..d].iter().map(|s| s.to_string()).collect();
        let lagrangian = self.lagrangian_text(&coordinates, order);
        let mut system = V::tab(vec![
            ("kind", V::str("variational")),
            (
                "coordinates",
                V::Arr(coordinates.iter().map(|c| V::Str(c.clone())).collect()),
            ),
            ("order", V::Int(order as i64)),
            (
                "parameters",
                V::tab(vec![("k", V::Float(1.0)), ("F", V::Float(0.5))]),
            ),
            ("lagrangian", V::Str(lagrangian)),
        ]);
        let sphere = self.rng.random_bool(0.4);
        let mut constraints = Vec::new();
        if sphere {
            let squares: Vec<String> = coordinates.iter().map(|c| format!("{c}^2")).collect();
            constraints.push(V::Str(format!("{} - 1", squares.join(" + "))));
        }
        match self.rng.random_range(0..8) {
            0 => constraints.push(V::Str(self.pick(&BAD_TEXT).to_string())),
            1 if order == 2 => constraints.push(V::Str(format!("{c}dd + {c}", c = coordinates[0]))),
            2 => constraints.push(V::Str(format!("{}d", coordinates[0]))),
            _ => {}
        }
        if !constraints.is_empty() {
            system.set_key("constraints", V::Arr(constraints));
        }
        if d >= 2 && self.rng.random_bool(0.3) {
            let mut generator = vec![V::str("-y"), V::str("x")];
            if d == 3 {
                generator.push(V::str("0"));
            }
            system.set_key("symmetry", V::Arr(generator));
        }
        if self.rng.random_bool(0.2) {
            let name = format!("{}d", coordinates[0]);
            system.set_key("observables", V::tab(vec![("v", V::Str(name))]));
        }
        if self.rng.random_bool(0.2) {
            let tolerance = self.pick(&[1e-13, 1e-6, 1e-20, 0.0]);
            let iterations = self.pick(&[1i64, 3, 50, 0]);
            system.set_key(
                "newton",
                V::tab(vec![
                    ("tolerance", V::Float(tolerance)),
                    ("max_iterations", V::Int(iterations)),
                ]),
            );
        }
        // A point on the unit sphere (when constrained) and a tangent velocity.
        let point: Vec<f64> = (0..d).map(|i| if i == 0 { 1.0 } else { 0.0 }).collect();
        let tangent: Vec<f64> = (0..d)
            .map(|i| if i == 1 || d == 1 { 0.5 } else { 0.0 })
            .collect();
        let tangent = if sphere && d == 1 { vec![0.0] } else { tangent };
        let off = self.rng.random_bool(0.1);
        let q0 = if off { vec![0.5; d] } else { point.clone() };
        let boundary = order == 2 || self.rng.random_bool(0.4);
        let problem = if boundary {
            let end: Vec<f64> = if sphere {
                point.iter().map(|v| -v).collect()
            } else {
                vec![1.0; d]
            };
            let end_spec = |q: &[f64], qd: &[f64]| {
                let mut t = V::tab(vec![("q", V::floats(q))]);
                if order == 2 {
                    t.set_key("qd", V::floats(qd));
                }
                t
            };
            let mut p = V::tab(vec![
                ("kind", V::str("boundary-value")),
                ("start", end_spec(&q0, &tangent)),
                ("end", end_spec(&end, &tangent)),
            ]);
            if self.rng.random_bool(0.4) {
                let t = self.pick(&[0.5, 0.25, 0.33, 0.0, 1.5]);
                p.set_key(
                    "knots",
                    V::Arr(vec![V::tab(vec![
                        ("t", V::Float(t)),
                        ("q", V::floats(&point)),
                    ])]),
                );
            }
            p
        } else {
            V::tab(vec![
                ("kind", V::str("initial-value")),
                ("q0", V::floats(&q0)),
                ("qd0", V::floats(&tangent)),
            ])
        };
        let mut problem = problem;
        if self.rng.random_bool(0.15) {
            let rule = self.pick(&["midpoint", "trapezoid", "central", "simpson"]);
            problem.set_key("rule", V::str(rule));
        }
        self.note(
            "variational",
            format!(
                "order {order}, d = {d}, {} problem{}",
                if boundary {
                    "boundary-value"
                } else {
                    "initial-value"
                },
                if sphere { " on the sphere" } else { "" }
            ),
        );
        (system, problem)
    }

    /// `[scheme]` of a variational run: h dividing t_end = 1, a few dozen steps.
    pub(super) fn variational_scheme(&mut self) {
        let h = self.pick(&[0.1, 0.05, 0.025, 0.02, 0.3]);
        self.doc.set_key(
            "scheme",
            V::tab(vec![
                ("family", V::str("variational")),
                ("h", V::Float(h)),
                ("t_end", V::Float(1.0)),
            ]),
        );
    }

    /// `[ensemble]` drawing the parameters and the problem's data.
    pub(super) fn variational_ensemble(&mut self) -> V {
        let members = self.log_int(1, 8) as i64;
        let seed = self.rng.random_range(0..1_i64 << 40);
        let mut e = V::tab(vec![("members", V::Int(members)), ("seed", V::Int(seed))]);
        let perturb = |g: &mut Gen| {
            let sigma = g.positive() * 0.05;
            V::tab(vec![
                ("kind", V::str("perturb")),
                ("sigma", V::Float(sigma)),
            ])
        };
        for name in ["q0", "qd0", "knots"] {
            if self.rng.random_bool(0.3) {
                let draw = perturb(self);
                e.set_key(name, draw);
            }
        }
        if self.rng.random_bool(0.5) {
            let name = self.pick(&["k", "F", "missing"]);
            let low = self.positive();
            e.set(
                &[key("parameters"), key(name)],
                V::tab(vec![
                    ("kind", V::str("uniform")),
                    ("low", V::Float(low)),
                    ("high", V::Float(low + 1.0)),
                ]),
            );
        }
        e
    }

    /// Valid values that overflow: a parameter, the data or the step.
    pub(super) fn variational_nonfinite(&mut self, huge: f64) -> String {
        match self.rng.random_range(0..3) {
            0 => {
                self.doc.set(
                    &[key("system"), key("parameters"), key("k")],
                    V::Float(huge),
                );
                format!("parameter k = {huge:e}")
            }
            1 => {
                let path = if self.doc.get(&[key("problem"), key("q0")]).is_some() {
                    vec![key("problem"), key("qd0")]
                } else {
                    vec![key("problem"), key("end"), key("q")]
                };
                let n = match self.doc.get(&path) {
                    Some(V::Arr(items)) => items.len(),
                    _ => 1,
                };
                self.doc.set(&path, V::floats(&vec![huge; n]));
                format!("problem data {huge:e}")
            }
            _ => {
                let h = self.pick(&[10.0, 1e3, 1e100]);
                self.set_steps(h, 1);
                format!("h = {h:e}")
            }
        }
    }
}
