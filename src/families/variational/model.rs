//! A Lagrangian system written as expressions, compiled once per run:
//!
//! ```text
//!   L(q, q̇[, q̈], t; θ),   constraints φ_j(q, q̇[, q̈], t; θ) = 0,
//! ```
//!
//! over the jet z = (q, q̇[, q̈]) ∈ R^{(r+1)·d} of a Lagrangian of order r ∈ {1, 2} in d
//! coordinates. Each coordinate `x` names its velocity `xd` and (order 2) acceleration
//! `xdd`; `t` is the time (or the base coordinate of a field such as a beam). A constraint
//! that uses the coordinates (and t) only is **holonomic**: it is imposed at every grid
//! point. One that uses velocities or accelerations is imposed per discrete Lagrangian,
//! at the rule's constraint point ([`super::rule`]).
//!
//! Everything the discrete equations and their Newton solves need is derived symbolically in
//! one pool ([`crate::expr`]), sharing subexpressions: the Lagrangian tape gives
//! [L, ∇_z L, ∇²_z L]; the holonomic tape [φ_h, ∂φ_h/∂q, ∂²φ_h/∂q²]; the window tape
//! [φ_w, ∂φ_w/∂z, ∂²φ_w/∂z²]; the energy tape E = q̇ · ∂L/∂q̇ − L (order 1); the symmetry
//! tape the generator ξ(q) of a one-parameter symmetry, whose momentum map is p · ξ(q);
//! the observables tape the user's named expressions (a control, a force) recorded along
//! the path.
//! All tapes read the variables [z, t, θ].

use crate::error::{Error, Result};
use crate::expr::{ExprPool, Id, Tape, parse};

/// The model's text.
#[derive(Debug, Clone, PartialEq)]
pub struct LagrangianText {
    pub coordinates: Vec<String>,
    /// 1 or 2.
    pub order: usize,
    /// Names and nominal values, in the order members draw them.
    pub parameters: Vec<(String, f64)>,
    pub lagrangian: String,
    pub constraints: Vec<String>,
    /// ξ(q), one expression per coordinate, for the momentum map p · ξ(q).
    pub symmetry: Option<Vec<String>>,
    /// Named expressions recorded along the path (a control, a force), in name order.
    pub observables: Vec<(String, String)>,
    /// Generalised forces f(q, q̇, t), one per coordinate (order 1; empty: none).
    pub forces: Vec<String>,
}

/// The compiled model.
#[derive(Debug, Clone)]
pub struct LagrangianModel {
    pub coordinates: Vec<String>,
    pub order: usize,
    pub parameters: Vec<(String, f64)>,
    /// The constraints as written.
    pub constraints: Vec<String>,
    /// Outputs [L, ∇_z L (m), ∇²_z L (m × m, row-major)], m = (r + 1)·d.
    pub lagrangian: Tape,
    /// The holonomic constraints' indices in the config's list.
    pub holonomic_indices: Vec<usize>,
    /// Outputs [φ_h (c_h), ∂φ_h/∂q (c_h × d), ∂²φ_h/∂q² (c_h × d × d)].
    pub holonomic: Tape,
    /// The other constraints' indices.
    pub window_indices: Vec<usize>,
    /// Outputs [φ_w (c_w), ∂φ_w/∂z (c_w × m), ∂²φ_w/∂z² (c_w × m × m)].
    pub window: Tape,
    /// Output [q̇ · ∂L/∂q̇ − L] (order 1; empty tape for order 2).
    pub energy: Option<Tape>,
    /// Whether L depends on t (then the energy is not conserved).
    pub time_dependent: bool,
    /// Outputs ξ(q) (d).
    pub symmetry: Option<Tape>,
    /// Outputs [f (d), ∂f/∂z (d × m)] of the generalised forces (order 1), when the
    /// model has them.
    pub forces: Option<Tape>,
    /// The observables' names.
    pub observable_names: Vec<String>,
    /// Outputs the observables at [z, t, θ].
    pub observables: Tape,
}

impl LagrangianModel {
    /// d, the number of coordinates.
    pub fn d(&self) -> usize {
        self.coordinates.len()
    }

    /// m = (r + 1)·d, the size of the jet z = (q, q̇[, q̈]).
    pub fn jet(&self) -> usize {
        (self.order + 1) * self.d()
    }

    /// The number of variables of every tape: m + 1 (t) + parameters.
    pub fn vars(&self) -> usize {
        self.jet() + 1 + self.parameters.len()
    }

    pub fn holonomic_count(&self) -> usize {
        self.holonomic_indices.len()
    }

    pub fn window_count(&self) -> usize {
        self.window_indices.len()
    }

    /// Compiles `text`; errors name the field under `prefix` and the position in its string.
    pub fn compile(prefix: &str, text: &LagrangianText) -> Result<Self> {
        let d = text.coordinates.len();
        if d == 0 {
            return Err(Error::invalid(
                format!("{prefix}.coordinates"),
                "is empty; name at least one coordinate",
            ));
        }
        if !(1..=2).contains(&text.order) {
            return Err(Error::invalid(
                format!("{prefix}.order"),
                format!("must be 1 or 2, got {}", text.order),
            ));
        }
        let names = variable_names(prefix, text)?;
        let all: Vec<&str> = names.iter().map(String::as_str).collect();
        let m = (text.order + 1) * d;
        let vars = all.len();
        let mut pool = ExprPool::new();
        let lagrangian = parse(&mut pool, &text.lagrangian, &all)
            .map_err(|e| Error::invalid(format!("{prefix}.lagrangian"), e.to_string()))?;
        let gradient = pool.gradient(lagrangian, m);
        let hessian = pool.hessian(lagrangian, m);
        let time_dependent = pool_derivative_is_nonzero(&mut pool, lagrangian, m);
        let mut holonomic = Vec::new();
        let mut holonomic_indices = Vec::new();
        let mut window = Vec::new();
        let mut window_indices = Vec::new();
        for (i, text) in text.constraints.iter().enumerate() {
            let phi = parse(&mut pool, text, &all)
                .map_err(|e| Error::invalid(format!("{prefix}.constraints[{i}]"), e.to_string()))?;
            let uses_derivatives = (d..m).any(|v| pool_derivative_is_nonzero(&mut pool, phi, v));
            if uses_derivatives {
                window.push(phi);
                window_indices.push(i);
            } else {
                holonomic.push(phi);
                holonomic_indices.push(i);
            }
        }
        let lagrangian_outputs: Vec<Id> = [vec![lagrangian], gradient.clone(), hessian].concat();
        let holonomic_outputs = constraint_outputs(&mut pool, &holonomic, d);
        let window_outputs = constraint_outputs(&mut pool, &window, m);
        let energy = (text.order == 1).then(|| {
            // E = q̇ · ∂L/∂q̇ − L.
            let mut e = pool.neg(lagrangian);
            for c in 0..d {
                let v = pool.var(d + c);
                let term = pool.mul(v, gradient[d + c]);
                e = pool.add(e, term);
            }
            Tape::new(&pool, vars, &[e])
        });
        let symmetry = match &text.symmetry {
            None => None,
            Some(generator) => {
                if generator.len() != d {
                    return Err(Error::invalid(
                        format!("{prefix}.symmetry"),
                        format!(
                            "has {} entries; the generator ξ(q) needs one per coordinate (d = {d})",
                            generator.len()
                        ),
                    ));
                }
                let mut ids = Vec::with_capacity(d);
                for (c, text) in generator.iter().enumerate() {
                    let xi = parse(&mut pool, text, &all).map_err(|e| {
                        Error::invalid(format!("{prefix}.symmetry[{c}]"), e.to_string())
                    })?;
                    if (d..vars).any(|v| pool_derivative_is_nonzero(&mut pool, xi, v)) {
                        return Err(Error::invalid(
                            format!("{prefix}.symmetry[{c}]"),
                            "may use the coordinates only: ξ(q) generates a symmetry of the configuration space",
                        ));
                    }
                    ids.push(xi);
                }
                Some(Tape::new(&pool, vars, &ids))
            }
        };
        let forces = if text.forces.is_empty() {
            None
        } else {
            if text.order != 1 {
                return Err(Error::invalid(
                    format!("{prefix}.forces"),
                    "apply to first-order Lagrangians (Lagrange–d'Alembert); a second-order problem writes its controls into L and the constraints",
                ));
            }
            if text.forces.len() != d {
                return Err(Error::invalid(
                    format!("{prefix}.forces"),
                    format!(
                        "has {} entries; one generalised force per coordinate is needed (d = {d})",
                        text.forces.len()
                    ),
                ));
            }
            let mut ids = Vec::with_capacity(d);
            for (c, expression) in text.forces.iter().enumerate() {
                let id = parse(&mut pool, expression, &all)
                    .map_err(|e| Error::invalid(format!("{prefix}.forces[{c}]"), e.to_string()))?;
                ids.push(id);
            }
            let jacobian = pool.jacobian(&ids, m);
            Some(Tape::new(&pool, vars, &[ids, jacobian].concat()))
        };
        let mut observable_ids = Vec::with_capacity(text.observables.len());
        for (name, expression) in &text.observables {
            let id = parse(&mut pool, expression, &all).map_err(|e| {
                Error::invalid(format!("{prefix}.observables.{name}"), e.to_string())
            })?;
            observable_ids.push(id);
        }
        Ok(LagrangianModel {
            forces,
            observable_names: text.observables.iter().map(|(n, _)| n.clone()).collect(),
            observables: Tape::new(&pool, vars, &observable_ids),
            coordinates: text.coordinates.clone(),
            order: text.order,
            parameters: text.parameters.clone(),
            constraints: text.constraints.clone(),
            lagrangian: Tape::new(&pool, vars, &lagrangian_outputs),
            holonomic_indices,
            holonomic: Tape::new(&pool, vars, &holonomic_outputs),
            window_indices,
            window: Tape::new(&pool, vars, &window_outputs),
            energy,
            time_dependent,
            symmetry,
        })
    }
}

/// Whether ∂f/∂x_v is not the constant 0.
fn pool_derivative_is_nonzero(pool: &mut ExprPool, f: Id, v: usize) -> bool {
    let derivative = pool.derivative(f, v);
    pool.constant_value(derivative) != Some(0.0)
}

/// [φ (c), ∂φ/∂x (c × n), ∂²φ/∂x² (c × n × n)] over the first n variables.
fn constraint_outputs(pool: &mut ExprPool, phi: &[Id], n: usize) -> Vec<Id> {
    let jacobian = pool.jacobian(phi, n);
    let hessians: Vec<Id> = phi.iter().flat_map(|&f| pool.hessian(f, n)).collect();
    [phi.to_vec(), jacobian, hessians].concat()
}

/// The names of the variables, in the tapes' order: q (d), q̇ (`xd`), q̈ (`xdd`, order 2),
/// `t`, then the parameters; every name checked (letters, digits, _; not a function; not
/// twice).
fn variable_names(prefix: &str, text: &LagrangianText) -> Result<Vec<String>> {
    let mut names: Vec<String> = text.coordinates.clone();
    names.extend(text.coordinates.iter().map(|c| format!("{c}d")));
    if text.order == 2 {
        names.extend(text.coordinates.iter().map(|c| format!("{c}dd")));
    }
    names.push("t".into());
    let jet = names.len();
    names.extend(text.parameters.iter().map(|(name, _)| name.clone()));
    for (index, name) in names.iter().enumerate() {
        let d = text.coordinates.len();
        let field = if index < d {
            format!("{prefix}.coordinates[{index}]")
        } else if index < jet {
            format!("{prefix}.coordinates[{}]", index % d.max(1))
        } else {
            format!("{prefix}.parameters.{name}")
        };
        crate::expr::check_variable_name(&field, name)?;
        if let Some(first) = names[..index].iter().position(|n| n == name) {
            return Err(Error::invalid(
                field,
                format!(
                    "{name:?} is also the name of variable {} ({}); coordinates name their velocities (`{{x}}d`) and accelerations (`{{x}}dd`), and `t` is the time",
                    first, names[first]
                ),
            ));
        }
    }
    Ok(names)
}
