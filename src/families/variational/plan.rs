//! The plan of a variational run: the compiled model, the rule at the step size, the grid,
//! the problem (initial or boundary values) and the members drawn around it, each checked
//! before any work.

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::bvp::BoundaryData;
use super::discrete::{PointTerms, Scratch};
use super::model::{LagrangianModel, LagrangianText};
use super::rule::{DiscreteRule, RuleName};
use super::solve::{NewtonSettings, project};
use super::spec::{ProblemSpec, VariationalEnsembleSpec, VariationalSpec};
use crate::error::{Error, Num, Result};
use crate::model::Draw;
use crate::plan::{Channel, RecordSpec, SharedStream, StepGrid};

/// A member's problem data.
#[derive(Debug, Clone, PartialEq)]
pub enum MemberProblem {
    InitialValue(InitialData),
    BoundaryValue(BoundaryData),
}

/// The data of an initial-value problem at t = 0: q, q̇ and, for a second-order
/// Lagrangian (a fourth-order equation), q̈ and q⃛ (empty for order 1).
#[derive(Debug, Clone, PartialEq)]
pub struct InitialData {
    pub q0: Vec<f64>,
    pub qd0: Vec<f64>,
    pub qdd0: Vec<f64>,
    pub qddd0: Vec<f64>,
}

/// One member: parameter values (in the model's order) and its problem.
#[derive(Debug, Clone, PartialEq)]
pub struct VariationalMember {
    pub parameters: Vec<f64>,
    pub problem: MemberProblem,
}

/// Everything a backend needs to run a variational ensemble.
#[derive(Debug, Clone)]
pub struct VariationalPlan {
    pub model: Arc<LagrangianModel>,
    pub rule: DiscreteRule,
    pub grid: StepGrid,
    pub nominal: VariationalMember,
    pub ensemble: Option<VariationalEnsembleSpec>,
    draws: Vec<Draw>,
    pub newton: NewtonSettings,
    records: RecordSpec,
    stream: SharedStream,
}

/// The most memory one boundary-value solve may take (its banded Newton matrix, vectors
/// and the returned path); the CPU path runs one solve per thread.
pub const MAX_SOLVE_BYTES: u64 = 256 << 20;

/// Bytes a boundary-value solve of `steps` steps takes, bounded above: P = N + 3 point
/// slots of B = d + c unknowns, a band of at most 3 (2r + 2) B + 1 entries per row plus six
/// vectors, and the path and multipliers returned per point.
pub fn solve_bytes(model: &LagrangianModel, steps: usize) -> u64 {
    let points = steps as u64 + 3;
    let block = (model.d() + model.holonomic_count() + model.window_count()) as u64;
    let band = 3 * (2 * model.order as u64 + 2) * block + 1;
    8 * points * block * (band + 6) + points * (3 * 24 + 8 * (model.d() as u64 + block))
}

/// A prescribed point of a problem, as checked: its field, time, q and (initial values) q̇.
type PrescribedPoint<'a> = (String, f64, &'a [f64], Option<&'a [f64]>);

/// Relative tolerance of the checks that data satisfies the holonomic constraints.
pub const CONSISTENCY_TOLERANCE: f64 = 1e-10;

impl VariationalPlan {
    /// Compiles the model and checks the problem against it and the grid.
    pub fn new(
        spec: &VariationalSpec,
        problem: &ProblemSpec,
        h: f64,
        t_end: f64,
        ensemble: Option<VariationalEnsembleSpec>,
        record_every: usize,
        newton: NewtonSettings,
    ) -> Result<Self> {
        let text = LagrangianText {
            coordinates: spec.coordinates.clone(),
            order: spec.order,
            parameters: spec
                .parameters
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
            lagrangian: spec.lagrangian.clone(),
            constraints: spec.constraints.clone(),
            symmetry: spec.symmetry.clone(),
            forces: spec.forces.clone(),
            observables: spec
                .observables
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        let model = LagrangianModel::compile("system", &text)?;
        let grid = StepGrid::new(h, t_end, record_every)?;
        let rule_name = match problem {
            ProblemSpec::InitialValue { rule, .. } | ProblemSpec::BoundaryValue { rule, .. } => {
                rule.unwrap_or_else(|| RuleName::default_for(model.order))
            }
        };
        if rule_name.lagrangian_order() != model.order {
            return Err(Error::invalid(
                "problem.rule",
                format!(
                    "{} discretizes Lagrangians of order {}, but system.order is {}",
                    rule_name.name(),
                    rule_name.lagrangian_order(),
                    model.order
                ),
            ));
        }
        let rule = DiscreteRule::new(rule_name, h);
        let d = model.d();
        let vector = |field: &str, v: &[f64]| -> Result<Vec<f64>> {
            if v.len() != d {
                return Err(Error::invalid(
                    field,
                    format!("has {} entries, the model has d = {d} coordinates", v.len()),
                ));
            }
            if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
                return Err(Error::invalid(field, format!("must be finite, got {bad}")));
            }
            Ok(v.to_vec())
        };
        let member_problem = match problem {
            ProblemSpec::InitialValue {
                q0,
                qd0,
                qdd0,
                qddd0,
                ..
            } => {
                let higher = |field: &str, v: &Option<Vec<f64>>| -> Result<Vec<f64>> {
                    match (model.order, v) {
                        (2, Some(v)) => vector(field, v),
                        (2, None) => Err(Error::invalid(
                            field,
                            "is required: a second-order Lagrangian's Euler–Lagrange equation is of fourth order, fixed by q, q̇, q̈ and q⃛ at t = 0",
                        )),
                        (_, Some(_)) => Err(Error::invalid(
                            field,
                            "applies to second-order Lagrangians; a first-order initial-value problem is fixed by q0 and qd0",
                        )),
                        (_, None) => Ok(Vec::new()),
                    }
                };
                if model.order == 2 && model.window_count() > 0 {
                    let j = model.window_indices[0];
                    return Err(Error::invalid(
                        format!("system.constraints[{j}]"),
                        format!(
                            "{:?} uses derivatives: an initial-value problem of a second-order Lagrangian with higher-order constraints needs its multipliers' initial values, which q0 … qddd0 do not give; pose it as a boundary-value problem (as the seed's optimal-control examples are)",
                            model.constraints[j]
                        ),
                    ));
                }
                MemberProblem::InitialValue(InitialData {
                    q0: vector("problem.q0", q0)?,
                    qd0: vector("problem.qd0", qd0)?,
                    qdd0: higher("problem.qdd0", qdd0)?,
                    qddd0: higher("problem.qddd0", qddd0)?,
                })
            }
            ProblemSpec::BoundaryValue {
                start, end, knots, ..
            } => {
                let velocity = |field: &str, qd: &Option<Vec<f64>>| -> Result<Vec<f64>> {
                    match (model.order, qd) {
                        (2, Some(v)) => vector(field, v),
                        (2, None) => Err(Error::invalid(
                            field,
                            "is required: a second-order Lagrangian's path is clamped by q and q̇ at both ends",
                        )),
                        (_, Some(_)) => Err(Error::invalid(
                            field,
                            "applies to second-order Lagrangians; a first-order path is fixed by q at both ends",
                        )),
                        (_, None) => Ok(Vec::new()),
                    }
                };
                let mut placed: Vec<(usize, Vec<f64>)> = Vec::new();
                for (i, knot) in knots.iter().enumerate() {
                    let field = format!("problem.knots[{i}]");
                    let ratio = knot.t / h;
                    let k = ratio.round();
                    if !(knot.t.is_finite() && (ratio - k).abs() <= 1e-9 * ratio.abs().max(1.0)) {
                        return Err(Error::invalid(
                            format!("{field}.t"),
                            format!(
                                "{} is not a grid point: t / h = {} is not a whole number (h = {h})",
                                Num(knot.t),
                                Num(ratio)
                            ),
                        ));
                    }
                    let k = k as i64;
                    if k <= 0 || k >= grid.steps as i64 {
                        return Err(Error::invalid(
                            format!("{field}.t"),
                            format!(
                                "{} is not inside (0, t_end = {t_end}): the ends are given by problem.start and problem.end",
                                Num(knot.t)
                            ),
                        ));
                    }
                    if let Some(j) = placed.iter().position(|(p, _)| *p == k as usize) {
                        return Err(Error::invalid(
                            format!("{field}.t"),
                            format!("{} repeats problem.knots[{j}]", Num(knot.t)),
                        ));
                    }
                    placed.push((k as usize, vector(&format!("{field}.q"), &knot.q)?));
                }
                placed.sort_by_key(|(k, _)| *k);
                let bytes = solve_bytes(&model, grid.steps);
                if bytes > MAX_SOLVE_BYTES {
                    return Err(Error::invalid(
                        "scheme.h",
                        format!(
                            "a boundary-value solve over {} steps would take up to {} (the banded Newton system of the whole path), above the cap of {} per member (variational::plan::MAX_SOLVE_BYTES); use a larger h or a shorter t_end",
                            grid.steps,
                            crate::plan::budget::format_bytes(bytes),
                            crate::plan::budget::format_bytes(MAX_SOLVE_BYTES)
                        ),
                    ));
                }
                MemberProblem::BoundaryValue(BoundaryData {
                    start_q: vector("problem.start.q", &start.q)?,
                    start_qd: velocity("problem.start.qd", &start.qd)?,
                    end_q: vector("problem.end.q", &end.q)?,
                    end_qd: velocity("problem.end.qd", &end.qd)?,
                    knots: placed,
                })
            }
        };
        let draws = match &ensemble {
            Some(spec) => draws_of(&model, spec)?,
            None => vec![Draw::Fixed; model.parameters.len()],
        };
        let nominal = VariationalMember {
            parameters: model.parameters.iter().map(|(_, v)| *v).collect(),
            problem: member_problem,
        };
        let records = record_spec(&model, &nominal.problem);
        let plan = VariationalPlan {
            model: Arc::new(model),
            rule,
            grid,
            nominal,
            ensemble,
            draws,
            newton,
            records,
            stream: SharedStream::sample(&[], 0, h, 0, |_, _| {}),
        };
        plan.check_member("problem", &plan.nominal)?;
        Ok(plan)
    }

    pub fn member_count(&self) -> usize {
        self.ensemble.as_ref().map_or(1, |e| e.members)
    }

    /// Member `index`: the nominal problem with its draws from stream `index` of the seed:
    /// the parameters, then q0 and qd0 (initial value) or every knot's entries
    /// (boundary value; projected back onto the holonomic constraints).
    pub fn member(&self, index: usize) -> Result<VariationalMember> {
        let Some(spec) = &self.ensemble else {
            return Ok(self.nominal.clone());
        };
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        rng.set_stream(index as u64);
        let mut member = self.nominal.clone();
        for (v, d) in member.parameters.iter_mut().zip(&self.draws) {
            *v = d.sample(*v, &mut rng);
        }
        match &mut member.problem {
            MemberProblem::InitialValue(data) => {
                for (values, draw) in [
                    (&mut data.q0, &spec.q0),
                    (&mut data.qd0, &spec.qd0),
                    (&mut data.qdd0, &spec.qdd0),
                    (&mut data.qddd0, &spec.qddd0),
                ] {
                    for v in values.iter_mut() {
                        *v = draw.sample(*v, &mut rng);
                    }
                }
            }
            MemberProblem::BoundaryValue(data) => {
                let mut scratch = Scratch::default();
                for (k, q) in &mut data.knots {
                    for v in q.iter_mut() {
                        *v = spec.knots.sample(*v, &mut rng);
                    }
                    if spec.knots != Draw::Fixed {
                        let t = *k as f64 * self.grid.h;
                        project(&mut scratch, &self.model, &member.parameters, t, q);
                    }
                }
            }
        }
        self.check_member(&format!("member[{index}]"), &member)?;
        Ok(member)
    }

    /// A member's numbers are finite and its prescribed points satisfy the holonomic
    /// constraints (and, for clamped ends, their velocities are tangent to them).
    fn check_member(&self, prefix: &str, member: &VariationalMember) -> Result<()> {
        let model = &self.model;
        if let Some(((name, _), value)) = model
            .parameters
            .iter()
            .zip(&member.parameters)
            .find(|(_, v)| !v.is_finite())
        {
            return Err(Error::invalid(
                format!("{prefix}.parameters.{name}"),
                format!("must be finite, got {value}"),
            ));
        }
        let mut points: Vec<PrescribedPoint> = Vec::new();
        match &member.problem {
            MemberProblem::InitialValue(data) => {
                points.push((format!("{prefix}.q0"), 0.0, &data.q0, Some(&data.qd0)));
                for (field, values) in [("qdd0", &data.qdd0), ("qddd0", &data.qddd0)] {
                    if let Some(bad) = values.iter().find(|v| !v.is_finite()) {
                        return Err(Error::invalid(
                            format!("{prefix}.{field}"),
                            format!("must be finite, got {bad}"),
                        ));
                    }
                }
            }
            MemberProblem::BoundaryValue(data) => {
                let qd = |v: &[f64]| (!v.is_empty()).then(|| v.to_vec());
                let (start_qd, end_qd) = (qd(&data.start_qd), qd(&data.end_qd));
                points.push((format!("{prefix}.start.q"), 0.0, &data.start_q, None));
                points.push((
                    format!("{prefix}.end.q"),
                    self.grid.steps as f64 * self.grid.h,
                    &data.end_q,
                    None,
                ));
                for (i, (k, q)) in data.knots.iter().enumerate() {
                    points.push((
                        format!("{prefix}.knots[{i}].q"),
                        *k as f64 * self.grid.h,
                        q,
                        None,
                    ));
                }
                // Clamped velocities are checked against their points below.
                if let (Some(a), Some(b)) = (start_qd, end_qd) {
                    let t_end = self.grid.steps as f64 * self.grid.h;
                    self.check_tangent(
                        &format!("{prefix}.start.qd"),
                        member,
                        0.0,
                        &data.start_q,
                        &a,
                    )?;
                    self.check_tangent(
                        &format!("{prefix}.end.qd"),
                        member,
                        t_end,
                        &data.end_q,
                        &b,
                    )?;
                }
            }
        }
        let mut scratch = Scratch::default();
        let mut terms = PointTerms::default();
        let zeros = vec![0.0; model.holonomic_count()];
        for (field, t, q, qd) in points {
            if let Some(bad) = q.iter().find(|v| !v.is_finite()) {
                return Err(Error::invalid(field, format!("must be finite, got {bad}")));
            }
            scratch.point(model, &member.parameters, t, q, &zeros, &mut terms);
            let scale = q.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
            for (j, &phi) in terms.constraints.iter().enumerate() {
                let consistent = phi.abs() <= CONSISTENCY_TOLERANCE * scale * scale;
                if !consistent {
                    return Err(Error::invalid(
                        field,
                        format!(
                            "violates system.constraints[{}] = {:?}: φ = {} (inconsistent data: the constraint must hold to {CONSISTENCY_TOLERANCE:e} relative)",
                            model.holonomic_indices[j],
                            model.constraints[model.holonomic_indices[j]],
                            Num(phi)
                        ),
                    ));
                }
            }
            if let Some(qd) = qd {
                let field = field.replace(".q0", ".qd0");
                self.check_tangent(&field, member, t, q, qd)?;
            }
        }
        Ok(())
    }

    /// ∇φ_h(q) · q̇ = 0 to [`CONSISTENCY_TOLERANCE`] relative.
    fn check_tangent(
        &self,
        field: &str,
        member: &VariationalMember,
        t: f64,
        q: &[f64],
        qd: &[f64],
    ) -> Result<()> {
        let model = &self.model;
        let d = model.d();
        if let Some(bad) = qd.iter().find(|v| !v.is_finite()) {
            return Err(Error::invalid(field, format!("must be finite, got {bad}")));
        }
        let mut scratch = Scratch::default();
        let mut terms = PointTerms::default();
        let zeros = vec![0.0; model.holonomic_count()];
        scratch.point(model, &member.parameters, t, q, &zeros, &mut terms);
        for j in 0..model.holonomic_count() {
            let row = &terms.jacobian[j * d..(j + 1) * d];
            let rate: f64 = row.iter().zip(qd).map(|(a, b)| a * b).sum();
            let scale: f64 = row.iter().zip(qd).map(|(a, b)| (a * b).abs()).sum();
            let tangent = rate == 0.0 || rate.abs() <= CONSISTENCY_TOLERANCE * scale.max(1e-300);
            if !tangent {
                return Err(Error::invalid(
                    field,
                    format!(
                        "is not tangent to system.constraints[{}]: ∇φ · q̇ = {} (inconsistent data)",
                        model.holonomic_indices[j],
                        Num(rate)
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn record_spec(&self) -> &RecordSpec {
        &self.records
    }

    pub fn stream(&self) -> &SharedStream {
        &self.stream
    }

    /// Whether the plan solves boundary-value problems.
    pub fn is_boundary_value(&self) -> bool {
        matches!(self.nominal.problem, MemberProblem::BoundaryValue(_))
    }
}

/// Each parameter's draw in the model's order; a draw of an unknown parameter is an error
/// naming it.
fn draws_of(model: &LagrangianModel, spec: &VariationalEnsembleSpec) -> Result<Vec<Draw>> {
    crate::model::draw::check_members(spec.members)?;
    spec.q0.check("ensemble.q0")?;
    spec.qd0.check("ensemble.qd0")?;
    spec.qdd0.check("ensemble.qdd0")?;
    spec.qddd0.check("ensemble.qddd0")?;
    spec.knots.check("ensemble.knots")?;
    crate::model::draw::parameter_draws(&model.parameters, &spec.parameters)
}

/// The totals of every member, in order, then the energy's (order 1) and the momentum's
/// (a symmetry, initial-value problems); boundary-value problems add `action`, the discrete
/// action Σ_j w_j L_d(window j), with w_j = 1 except ½ for the two windows centred on the
/// ends of an order-2 path (so that it approximates ∫ L dt at second order).
pub const TOTALS: [&str; 5] = [
    "status",
    "failed_step",
    "newton_iterations",
    "constraint_residual_max",
    "equation_residual_max",
];

/// The energy totals (first-order Lagrangians).
pub const ENERGY_TOTALS: [&str; 3] = ["energy_first", "energy_last", "energy_max_abs_change"];

/// The momentum-map totals (a symmetry named).
pub const MOMENTUM_TOTALS: [&str; 3] =
    ["momentum_first", "momentum_last", "momentum_max_abs_change"];

/// The channels: `path` (d, from t = 0), `multipliers` (λ then μ, where there are
/// constraints: per point for boundary values, per step for initial values), `energy`
/// (order 1: of the step ending at the record point) and `momentum` (from t = 0).
fn record_spec(model: &LagrangianModel, problem: &MemberProblem) -> RecordSpec {
    let boundary = matches!(problem, MemberProblem::BoundaryValue(_));
    let mut channels = vec![Channel {
        name: "path",
        shape: vec![model.d()],
        at_start: true,
        description: "the discrete path q_k at the record points (from t = 0)".into(),
    }];
    let c = model.window_count() + model.holonomic_count();
    if c > 0 {
        channels.push(Channel {
            name: "multipliers",
            shape: vec![c],
            at_start: boundary,
            description: if boundary {
                "per point: λ of the discrete Lagrangian at the point (higher-order constraints), then μ of the holonomic constraints (0 at prescribed points)".into()
            } else {
                "per record point: λ then μ of the step that ends there".into()
            },
        });
    }
    if boundary && model.observables.n_outputs() > 0 {
        // Order 2: the window centred at each point, from t = 0; order 1: the step ending at
        // each record point.
        let centred = model.order == 2;
        channels.push(Channel {
            name: "observables",
            shape: vec![model.observables.n_outputs()],
            at_start: centred,
            description: format!(
                "{} at the {} (system.observables, in name order)",
                model.observable_names.join(", "),
                if centred {
                    "discrete Lagrangian centred at each record point"
                } else {
                    "midpoint jet of the step ending at each record point"
                }
            ),
        });
    }
    let mut totals = TOTALS.to_vec();
    if boundary {
        totals.push("action");
    }
    if model.energy.is_some() {
        channels.push(Channel {
            name: "energy",
            shape: vec![],
            at_start: false,
            description: "E = q̇ · ∂L/∂q̇ − L at the rule's midpoint jet of the step ending at the record point".into(),
        });
        totals.extend(ENERGY_TOTALS);
    } else if model.order == 2 {
        channels.push(Channel {
            name: "energy",
            shape: vec![],
            at_start: false,
            description: "the Ostrogradsky energy E = p₀ · q̇ + p₁ · q̈ − L (p₁ = ∂L/∂q̈, p₀ = ∂L/∂q̇ − d/dt ∂L/∂q̈) of the step ending at the record point, from the windows centred at its ends".into(),
        });
        totals.extend(ENERGY_TOTALS);
    }
    if model.symmetry.is_some() {
        channels.push(Channel {
            name: "momentum",
            shape: vec![],
            at_start: !boundary,
            description: match (model.order, boundary) {
                (1, false) => "the discrete momentum map J_k = p_k · ξ(q_k)",
                (1, true) => "the discrete momentum map J_k = D₂L_d(q_{k−1}, q_k) · ξ(q_k) of the step ending at the record point (constant between knots)",
                (_, false) => "the discrete momentum map of the path ending at q_{k+1}, J_k = p_k · ξ(q_k) + π_{k+1} · ξ(q_{k+1})",
                (_, true) => "the discrete momentum map of the path ending at q_{k+1}, J_k = p_k · ξ(q_k) + π_{k+1} · ξ(q_{k+1}), from the record point (constant between knots)",
            }
            .into(),
        });
        totals.extend(MOMENTUM_TOTALS);
    }
    RecordSpec {
        state_width: model.d(),
        trajectory: false,
        channels,
        totals,
        totals_group: "variational",
    }
}
