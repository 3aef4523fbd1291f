//! A port-Hamiltonian model written as expressions,
//!
//! ```text
//!   ẋ = f(x, u) = (J(x) − R(x)) ∇H(x) + G(x) u,    y = G(x)ᵀ ∇H(x),
//! ```
//!
//! compiled once per run: every expression is parsed into one pool over the variables
//! `[x (states), θ (parameters), u (inputs)]`, ∇H and the Jacobian ∂f/∂x the Newton solves
//! need are derived symbolically in the same pool (so they share their subexpressions with
//! H, J, R and G), and two straight-line tapes evaluate them: the stage tape (f, ∂f/∂x, the
//! dissipation eᵀ R e and G(x)ᵀ e at a stage point) and the energy tape (H). The
//! energy-preserving scheme, whose efforts are projections ē of ∇H rather than ∇H at a
//! stage point, needs two more ([`ProjectedTapes`]), compiled only for it
//! ([`ExpressionModel::compile_projected`]).
//!
//! Structure is checked once, where it is written: J must be skew-symmetric as written —
//! the diagonal 0 and each `J[c][r]` the negation of `J[r][c]`, either the same pool node once
//! negated (the same expression with a minus) or an identity that holds at 16 probe points
//! of the states and parameters — and R symmetric as written, the same way; R ⪰ 0 is
//! checked numerically at each member's initial state.

use crate::error::{Error, Result};
use crate::expr::{ExprPool, Id, Tape, parse};

/// One matrix entry as written in the config: a number or an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Number(f64),
    Expression(String),
}

/// The model's text: names, expressions, nominal parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelText {
    pub states: Vec<String>,
    /// Parameter names with their nominal values, in the order members draw them.
    pub parameters: Vec<(String, f64)>,
    pub hamiltonian: String,
    /// n × n.
    pub j: Vec<Vec<Entry>>,
    /// n × n; absent: 0.
    pub r: Option<Vec<Vec<Entry>>>,
    /// n × m; absent: no inputs.
    pub g: Option<Vec<Vec<Entry>>>,
}

/// The compiled model.
#[derive(Debug, Clone)]
pub struct ExpressionModel {
    pub states: Vec<String>,
    pub parameters: Vec<(String, f64)>,
    /// m, the columns of G.
    pub inputs: usize,
    /// Outputs [f (n), ∂f/∂x (n × n, row-major), eᵀ R e, G(x)ᵀ e (m)] at variables
    /// [x, θ, u], with e = ∇H(x).
    pub stage: Tape,
    /// Output `[H]` at variables `[x, θ]`.
    pub energy: Tape,
    /// Output [R (n × n, row-major)] at [x, θ], to check R ⪰ 0.
    pub dissipation: Tape,
    /// Whether R is identically 0 as written.
    pub lossless: bool,
    /// The energy-preserving scheme's tapes; `None` unless compiled by
    /// [`ExpressionModel::compile_projected`].
    pub projected: Option<ProjectedTapes>,
}

/// The tapes of the energy-preserving scheme, where a stage's effort ē is an input (the
/// projection of ∇H along the step) rather than ∇H at the stage point.
#[derive(Debug, Clone)]
pub struct ProjectedTapes {
    /// Outputs [∇H (n), ∇²H (n × n, row-major)] at variables [x, θ]: the gradient at a
    /// quadrature node and its derivative for the Newton matrix.
    pub gradient: Tape,
    /// Outputs [F (n), ∂F/∂x at fixed ē (n × n, row-major), J − R (n × n, row-major),
    /// ēᵀ R ē, G(x)ᵀ ē (m)] at variables [x, θ, u, ē], with
    /// F = (J(x) − R(x)) ē + G(x) u.
    pub stage: Tape,
}

impl ExpressionModel {
    pub fn n(&self) -> usize {
        self.states.len()
    }

    /// The number of variables of the stage tape: n + parameters + m.
    pub fn stage_vars(&self) -> usize {
        self.n() + self.parameters.len() + self.inputs
    }

    /// The number of variables of the projected stage tape: n + parameters + m + n.
    pub fn projected_stage_vars(&self) -> usize {
        self.stage_vars() + self.n()
    }

    /// Compiles `text`; errors name the field under `prefix` (`system.J[0][1]`) and the
    /// position in its string.
    pub fn compile(prefix: &str, text: &ModelText) -> Result<Self> {
        Self::build(prefix, text, false)
    }

    /// [`Self::compile`] with the energy-preserving scheme's [`ProjectedTapes`].
    pub fn compile_projected(prefix: &str, text: &ModelText) -> Result<Self> {
        Self::build(prefix, text, true)
    }

    fn build(prefix: &str, text: &ModelText, projected: bool) -> Result<Self> {
        let n = text.states.len();
        if n == 0 {
            return Err(Error::invalid(
                format!("{prefix}.states"),
                "is empty; name at least one state",
            ));
        }
        let m = text.g.as_ref().and_then(|g| g.first()).map_or(0, Vec::len);
        let names = variable_names(prefix, text, m)?;
        let all: Vec<&str> = names.iter().map(String::as_str).collect();
        // H may use states and parameters only: the inputs come after them.
        let state_and_parameter = &all[..n + text.parameters.len()];
        let mut pool = ExprPool::new();
        let h = parse(&mut pool, &text.hamiltonian, state_and_parameter)
            .map_err(|e| Error::invalid(format!("{prefix}.H"), e.to_string()))?;
        let j = matrix(&mut pool, prefix, "J", &text.j, n, n, state_and_parameter)?;
        let r = match &text.r {
            Some(r) => matrix(&mut pool, prefix, "R", r, n, n, state_and_parameter)?,
            None => vec![pool.constant(0.0); n * n],
        };
        let lossless = r.iter().all(|&e| pool.constant_value(e) == Some(0.0));
        let g = match &text.g {
            Some(g) => matrix(&mut pool, prefix, "G", g, n, m, state_and_parameter)?,
            None => Vec::new(),
        };
        let points = probe_points(text);
        check_skew(&mut pool, prefix, &j, n, &points)?;
        check_symmetric(&pool, prefix, &r, n, &points)?;
        let e = pool.gradient(h, n);
        let u_base = n + text.parameters.len();
        let structure = Structure {
            j: &j,
            r: &r,
            g: &g,
            n,
            m,
            u_base,
        };
        let (f, dissipated, outputs) = port_terms(&mut pool, &structure, &e);
        let jacobian = pool.jacobian(&f, n);
        let stage_outputs: Vec<Id> = [f, jacobian, vec![dissipated], outputs].concat();
        Ok(ExpressionModel {
            states: text.states.clone(),
            parameters: text.parameters.clone(),
            inputs: m,
            stage: Tape::new(&pool, all.len(), &stage_outputs),
            energy: Tape::new(&pool, u_base, &[h]),
            dissipation: Tape::new(&pool, u_base, &r),
            lossless,
            projected: projected.then(|| projected_tapes(&mut pool, h, &structure)),
        })
    }
}

/// J, R (n × n) and G (n × m) in a pool, row-major; the inputs are variables u_base ….
struct Structure<'a> {
    j: &'a [Id],
    r: &'a [Id],
    g: &'a [Id],
    n: usize,
    m: usize,
    u_base: usize,
}

/// With efforts `e` (n ids): f = (J − R) e + G u, f_r = Σ_c (J_rc − R_rc) e_c + Σ_k G_rk u_k;
/// the dissipation eᵀ R e; and G(x)ᵀ e.
fn port_terms(pool: &mut ExprPool, structure: &Structure, e: &[Id]) -> (Vec<Id>, Id, Vec<Id>) {
    let Structure {
        j,
        r,
        g,
        n,
        m,
        u_base,
    } = *structure;
    let mut f = Vec::with_capacity(n);
    for row in 0..n {
        let mut sum = pool.constant(0.0);
        for c in 0..n {
            let structure = pool.sub(j[row * n + c], r[row * n + c]);
            let term = pool.mul(structure, e[c]);
            sum = pool.add(sum, term);
        }
        for k in 0..m {
            let u = pool.var(u_base + k);
            let term = pool.mul(g[row * m + k], u);
            sum = pool.add(sum, term);
        }
        f.push(sum);
    }
    let mut dissipated = pool.constant(0.0);
    for row in 0..n {
        for c in 0..n {
            let re = pool.mul(r[row * n + c], e[c]);
            let term = pool.mul(e[row], re);
            dissipated = pool.add(dissipated, term);
        }
    }
    let mut outputs = Vec::with_capacity(m);
    for k in 0..m {
        let mut sum = pool.constant(0.0);
        for row in 0..n {
            let term = pool.mul(g[row * m + k], e[row]);
            sum = pool.add(sum, term);
        }
        outputs.push(sum);
    }
    (f, dissipated, outputs)
}

/// The [`ProjectedTapes`] of H and `structure`: ∇H and ∇²H at [x, θ], and at [x, θ, u, ē]
/// (ē the variables u_base + m …) F = (J − R) ē + G u, ∂F/∂x, J − R, ēᵀ R ē and Gᵀ ē.
fn projected_tapes(pool: &mut ExprPool, h: Id, structure: &Structure) -> ProjectedTapes {
    let Structure {
        j, r, n, m, u_base, ..
    } = *structure;
    let gradient = pool.gradient(h, n);
    let hessian = pool.hessian(h, n);
    let e: Vec<Id> = (0..n).map(|c| pool.var(u_base + m + c)).collect();
    let (f, dissipated, outputs) = port_terms(pool, structure, &e);
    let jacobian = pool.jacobian(&f, n);
    let difference: Vec<Id> = (0..n * n).map(|i| pool.sub(j[i], r[i])).collect();
    let gradient_outputs = [gradient, hessian].concat();
    let stage_outputs = [f, jacobian, difference, vec![dissipated], outputs].concat();
    ProjectedTapes {
        gradient: Tape::new(pool, u_base, &gradient_outputs),
        stage: Tape::new(pool, u_base + m + n, &stage_outputs),
    }
}

/// The variable names `[states, parameters, u1 … um]` (m inputs), refusing duplicates and names that
/// collide with the inputs' or the functions'.
fn variable_names(prefix: &str, text: &ModelText, m: usize) -> Result<Vec<String>> {
    let mut names: Vec<String> = text.states.clone();
    names.extend(text.parameters.iter().map(|(name, _)| name.clone()));
    for (index, name) in names.iter().enumerate() {
        let field = if index < text.states.len() {
            format!("{prefix}.states[{index}]")
        } else {
            format!("{prefix}.parameters.{name}")
        };
        crate::expr::check_variable_name(&field, name)?;
        if names[..index].contains(name) {
            return Err(Error::invalid(
                field,
                format!("{name:?} is named twice among the states and parameters"),
            ));
        }
    }
    // The inputs are not names the user writes: they enter through G u only.
    names.extend((0..m).map(|k| format!("#u{k}")));
    Ok(names)
}

/// A rows × cols matrix of entries parsed into `pool`, row-major.
fn matrix(
    pool: &mut ExprPool,
    prefix: &str,
    name: &str,
    entries: &[Vec<Entry>],
    rows: usize,
    cols: usize,
    names: &[&str],
) -> Result<Vec<Id>> {
    if entries.len() != rows {
        return Err(Error::invalid(
            format!("{prefix}.{name}"),
            format!(
                "has {} rows, expected {rows} (one per state)",
                entries.len()
            ),
        ));
    }
    let mut ids = Vec::with_capacity(rows * cols);
    for (r, row) in entries.iter().enumerate() {
        if row.len() != cols {
            return Err(Error::invalid(
                format!("{prefix}.{name}[{r}]"),
                format!("has {} entries, expected {cols}", row.len()),
            ));
        }
        for (c, entry) in row.iter().enumerate() {
            let field = format!("{prefix}.{name}[{r}][{c}]");
            ids.push(match entry {
                Entry::Number(v) if v.is_finite() => pool.constant(*v),
                Entry::Number(v) => {
                    return Err(Error::invalid(field, format!("must be finite, got {v}")));
                }
                Entry::Expression(text) => {
                    parse(pool, text, names).map_err(|e| Error::invalid(field, e.to_string()))?
                }
            });
        }
    }
    Ok(ids)
}

/// Points at which identities of the written structure are checked: the variables
/// [x, θ] drawn in [−3, 3] from a fixed stream, with the parameters at their nominal values
/// at the first point.
fn probe_points(text: &ModelText) -> Vec<Vec<f64>> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
    let n = text.states.len();
    (0..16)
        .map(|point| {
            let mut vars: Vec<f64> = (0..n).map(|_| rng.random_range(-3.0..3.0)).collect();
            vars.extend(text.parameters.iter().map(|(_, nominal)| {
                if point == 0 {
                    *nominal
                } else {
                    rng.random_range(-3.0..3.0)
                }
            }));
            vars
        })
        .collect()
}

/// Whether a + b = 0 (`negation`) or a = b holds at every probe point where both are
/// finite, up to rounding of the two expressions (4e-15 relative).
fn identity_holds(pool: &ExprPool, a: Id, b: Id, negation: bool, points: &[Vec<f64>]) -> bool {
    points.iter().all(|vars| {
        let (x, y) = (pool.eval(a, vars), pool.eval(b, vars));
        let y = if negation { -y } else { y };
        !(x.is_finite() && y.is_finite()) || (x - y).abs() <= 4e-15 * x.abs().max(y.abs())
    })
}

/// J skew-symmetric as written: the diagonal is 0 and each J[c][r] is the negation of
/// J[r][c] — the same node of the hash-consed pool once negated, or, written another way
/// (`-c*q` against `c*q`), an identity that holds at every probe point.
fn check_skew(
    pool: &mut ExprPool,
    prefix: &str,
    j: &[Id],
    n: usize,
    points: &[Vec<f64>],
) -> Result<()> {
    for r in 0..n {
        if pool.constant_value(j[r * n + r]) != Some(0.0) {
            return Err(Error::invalid(
                format!("{prefix}.J[{r}][{r}]"),
                "must be 0: J is skew-symmetric (J = −Jᵀ)",
            ));
        }
        for c in r + 1..n {
            let (upper, lower) = (j[r * n + c], j[c * n + r]);
            if pool.neg(upper) != lower && !identity_holds(pool, upper, lower, true, points) {
                return Err(Error::invalid(
                    format!("{prefix}.J[{c}][{r}]"),
                    format!("must be the negation of J[{r}][{c}] (J = −Jᵀ as written)"),
                ));
            }
        }
    }
    Ok(())
}

/// R symmetric as written: R[c][r] is R[r][c] (the same node, or an identity that holds at
/// every probe point).
fn check_symmetric(
    pool: &ExprPool,
    prefix: &str,
    r: &[Id],
    n: usize,
    points: &[Vec<f64>],
) -> Result<()> {
    for row in 0..n {
        for c in row + 1..n {
            let (upper, lower) = (r[row * n + c], r[c * n + row]);
            if upper != lower && !identity_holds(pool, upper, lower, false, points) {
                return Err(Error::invalid(
                    format!("{prefix}.R[{c}][{row}]"),
                    format!("must equal R[{row}][{c}] (R = Rᵀ as written)"),
                ));
            }
        }
    }
    Ok(())
}
