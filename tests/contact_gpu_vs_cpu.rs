//! The contact kernel (`shaders/contact/step.wgsl`) against its CPU twin and the CPU
//! reference integrator on a real adapter (lavapipe in CI). A missing adapter fails these
//! tests: they never skip.
//!
//! Ensembles are drawn from a fresh seed per run (printed; replay with HARBOR_TEST_SEED)
//! over every potential and damping kind, several compositions and the Herglotz
//! integrator, and several record cadences. Run with `--nocapture` to see the measured
//! gaps.

mod common;

use std::fmt::Write as _;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, GpuContext, Precision, run};
use harbor::contact::{ContactConfig, ContactPlan};
use harbor::io::Config;
use harbor::kernels::CpuPath;
use harbor::results::Results;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

fn context(precision: Precision) -> &'static GpuContext {
    common::gpu_context(precision)
}

fn gpu(plan: &ContactPlan, precision: Precision, options: &ExecutorOptions) -> Results {
    run(context(precision), plan, options).unwrap_or_else(|e| panic!("GPU run failed: {e}"))
}

fn cpu(plan: &ContactPlan, path: CpuPath) -> Results {
    Backend::Cpu(path)
        .run(plan)
        .unwrap_or_else(|e| panic!("CPU {path:?} run failed: {e}"))
}

fn plan_from(text: &str) -> ContactPlan {
    Config::from_str_with(text, &[], "contact test config")
        .and_then(|c| c.contact_plan())
        .unwrap_or_else(|e| panic!("bad test config: {e}\n{text}"))
}

// ---------------------------------------------------------------------------------------
// Random configurations.

/// A TOML float that reads back as the same f64 (Debug prints `1.0`, not `1`).
fn num(v: f64) -> String {
    format!("{v:?}")
}

fn vector(v: &[f64]) -> String {
    let entries: Vec<String> = v.iter().map(|&e| num(e)).collect();
    format!("[{}]", entries.join(", "))
}

fn matrix(rows: &[Vec<f64>]) -> String {
    let rows: Vec<String> = rows.iter().map(|r| vector(r)).collect();
    format!("[{}]", rows.join(", "))
}

/// A random SPD matrix AᵀA/n + shift·I; exactly symmetric, since Σ_k a_ki a_kj is
/// evaluated in the same order for (i, j) and (j, i).
fn spd(rng: &mut ChaCha8Rng, n: usize, spread: f64, shift: f64) -> Vec<Vec<f64>> {
    let a: Vec<Vec<f64>> = (0..n)
        .map(|_| (0..n).map(|_| rng.random_range(-spread..spread)).collect())
        .collect();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let dot: f64 = (0..n).map(|k| a[k][i] * a[k][j]).sum();
                    dot / n as f64 + if i == j { shift } else { 0.0 }
                })
                .collect()
        })
        .collect()
}

fn uniform_vec(rng: &mut ChaCha8Rng, n: usize, low: f64, high: f64) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(low..high)).collect()
}

/// A system and ensemble (everything but `[scheme]` and `[output]`).
struct Case {
    label: String,
    n: usize,
    system_and_ensemble: String,
}

fn ensemble(rng: &mut ChaCha8Rng, members: usize, draws: &[(&str, String)]) -> String {
    let mut text = format!(
        "[ensemble]\nmembers = {members}\nseed = {}\n",
        rng.random::<u32>()
    );
    for (key, draw) in draws {
        writeln!(text, "{key} = {draw}").unwrap();
    }
    text
}

fn perturb(sigma: f64) -> String {
    format!("{{ kind = \"perturb\", sigma = {} }}", num(sigma))
}

fn uniform(low: f64, high: f64) -> String {
    format!(
        "{{ kind = \"uniform\", low = {}, high = {} }}",
        num(low),
        num(high)
    )
}

fn system(
    x0: &[f64],
    p0: &[f64],
    z0: f64,
    kinetic: &[Vec<f64>],
    potential: &[String],
    damping: Option<String>,
) -> String {
    let mut text = format!(
        "[system]\nkind = \"contact\"\nx0 = {}\np0 = {}\nz0 = {}\nkinetic = {}\npotential = [\n",
        vector(x0),
        vector(p0),
        num(z0),
        matrix(kinetic)
    );
    for term in potential {
        writeln!(text, "  {term},").unwrap();
    }
    text.push_str("]\n");
    if let Some(d) = damping {
        writeln!(text, "damping = {d}").unwrap();
    }
    text
}

/// Every potential kind and damping kind, in the combinations of the brief, with random
/// n, coefficients and ensemble draws.
fn random_cases(rng: &mut ChaCha8Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    let members = |rng: &mut ChaCha8Rng| rng.random_range(1..=24usize);

    // Duffing-like: harmonic + quartic + forcing, constant damping.
    let n = rng.random_range(1..=6);
    let m = members(rng);
    let text = system(
        &uniform_vec(rng, n, -1.0, 1.0),
        &uniform_vec(rng, n, -1.0, 1.0),
        rng.random_range(-0.5..0.5),
        &spd(rng, n, 0.5, 0.5),
        &[
            format!(
                "{{ kind = \"harmonic\", K = {} }}",
                matrix(&spd(rng, n, 1.0, 0.5))
            ),
            format!(
                "{{ kind = \"quartic\", beta = {} }}",
                num(rng.random_range(0.1..1.0))
            ),
            format!(
                "{{ kind = \"forcing\", amplitude = {}, signal = {{ kind = \"cosine\", frequency = {}, phase = {} }} }}",
                vector(&uniform_vec(rng, n, -0.5, 0.5)),
                num(rng.random_range(0.05..0.5)),
                num(rng.random_range(0.0..3.0)),
            ),
        ],
        Some(format!(
            "{{ kind = \"constant\", alpha = {} }}",
            num(rng.random_range(0.05..0.3))
        )),
    ) + &ensemble(
        rng,
        m,
        &[
            ("x0", perturb(0.1)),
            ("p0", perturb(0.1)),
            ("z0", uniform(-0.5, 0.5)),
            ("alpha", uniform(0.0, 0.3)),
            ("beta", perturb(0.05)),
            ("amplitude", perturb(0.1)),
        ],
    );
    cases.push(Case {
        label: format!("harmonic+quartic+forcing, constant damping, n = {n}, {m} members"),
        n,
        system_and_ensemble: text,
    });

    // Pendulum with signal damping.
    let n = rng.random_range(1..=6);
    let m = members(rng);
    let text = system(
        &uniform_vec(rng, n, -2.0, 2.0),
        &uniform_vec(rng, n, -1.0, 1.0),
        0.0,
        &spd(rng, n, 0.5, 0.5),
        &[format!(
            "{{ kind = \"pendulum\", omega = {} }}",
            num(rng.random_range(0.5..1.5))
        )],
        Some(format!(
            "{{ kind = \"signal\", alpha = {}, signal = {{ kind = \"sine\", frequency = {}, amplitude = 0.5, offset = 1.0 }} }}",
            num(rng.random_range(0.05..0.2)),
            num(rng.random_range(0.1..0.5)),
        )),
    ) + &ensemble(
        rng,
        m,
        &[
            ("x0", uniform(-2.5, 2.5)),
            ("p0", perturb(0.3)),
            ("alpha", perturb(0.02)),
            ("omega", uniform(0.8, 1.2)),
        ],
    );
    cases.push(Case {
        label: format!("pendulum, signal damping, n = {n}, {m} members"),
        n,
        system_and_ensemble: text,
    });

    // Kepler, x0 well away from 0, near-circular orbits, light constant damping.
    let n = rng.random_range(2..=4);
    let m = members(rng);
    let mut x0 = vec![0.0; n];
    x0[0] = rng.random_range(0.9..1.1);
    let mut p0 = vec![0.0; n];
    p0[1] = rng.random_range(0.85..1.05);
    let text = system(
        &x0,
        &p0,
        0.0,
        &spd(rng, n, 0.1, 0.95),
        &[format!(
            "{{ kind = \"kepler\", gamma = {} }}",
            num(rng.random_range(0.9..1.1))
        )],
        Some(format!(
            "{{ kind = \"constant\", alpha = {} }}",
            num(rng.random_range(0.0..0.05))
        )),
    ) + &ensemble(
        rng,
        m,
        &[
            ("x0", perturb(0.05)),
            ("p0", perturb(0.05)),
            ("gamma", uniform(0.8, 1.2)),
        ],
    );
    cases.push(Case {
        label: format!("kepler, constant damping, n = {n}, {m} members"),
        n,
        system_and_ensemble: text,
    });

    // Spin–orbit coupling with tidal damping (its forcing channel and (a/r)⁶ rate).
    let n = rng.random_range(1..=3);
    let m = members(rng);
    let e = rng.random_range(0.0..0.3);
    let text = system(
        &uniform_vec(rng, n, -1.0, 1.0),
        &uniform_vec(rng, n, 0.8, 1.2),
        0.0,
        &spd(rng, n, 0.2, 0.9),
        &[format!(
            "{{ kind = \"spin-orbit\", epsilon = {}, eccentricity = {} }}",
            num(rng.random_range(0.05..0.3)),
            num(e)
        )],
        Some(format!(
            "{{ kind = \"tidal\", eta = {}, eccentricity = {} }}",
            num(rng.random_range(0.001..0.05)),
            num(e)
        )),
    ) + &ensemble(
        rng,
        m,
        &[
            ("x0", uniform(-1.5, 1.5)),
            ("p0", perturb(0.1)),
            ("alpha", uniform(0.0, 0.05)),
            ("epsilon", perturb(0.02)),
        ],
    );
    cases.push(Case {
        label: format!("spin-orbit, tidal damping (e = {e:.3}), n = {n}, {m} members"),
        n,
        system_and_ensemble: text,
    });

    // Harmonic with two forcing terms (sine, chirp) and signal damping (cosine).
    let n = rng.random_range(1..=6);
    let m = members(rng);
    let text = system(
        &uniform_vec(rng, n, -1.0, 1.0),
        &uniform_vec(rng, n, -1.0, 1.0),
        rng.random_range(-1.0..1.0),
        &spd(rng, n, 0.5, 0.5),
        &[
            format!(
                "{{ kind = \"harmonic\", K = {} }}",
                matrix(&spd(rng, n, 1.0, 0.2))
            ),
            format!(
                "{{ kind = \"forcing\", amplitude = {}, signal = {{ kind = \"sine\", frequency = {} }} }}",
                vector(&uniform_vec(rng, n, -0.5, 0.5)),
                num(rng.random_range(0.1..0.6)),
            ),
            format!(
                "{{ kind = \"forcing\", amplitude = {}, signal = {{ kind = \"chirp\", f0 = 0.1, f1 = 0.8, t1 = 5.0 }} }}",
                vector(&uniform_vec(rng, n, -0.5, 0.5)),
            ),
        ],
        Some(format!(
            "{{ kind = \"signal\", alpha = {}, signal = {{ kind = \"cosine\", frequency = {} }} }}",
            num(rng.random_range(0.05..0.3)),
            num(rng.random_range(0.1..0.5)),
        )),
    ) + &ensemble(
        rng,
        m,
        &[
            ("p0", uniform(-1.0, 1.0)),
            ("alpha", perturb(0.05)),
            ("amplitude", uniform(-0.5, 0.5)),
        ],
    );
    cases.push(Case {
        label: format!("harmonic+2 forcings, signal damping, n = {n}, {m} members"),
        n,
        system_and_ensemble: text,
    });

    // Everything that can be combined: harmonic, quartic, pendulum, forcing, spin–orbit
    // and tidal damping, no ensemble (a single member).
    let n = rng.random_range(1..=6);
    let e = rng.random_range(0.0..0.2);
    let text = system(
        &uniform_vec(rng, n, -1.0, 1.0),
        &uniform_vec(rng, n, -1.0, 1.0),
        0.25,
        &spd(rng, n, 0.5, 0.5),
        &[
            format!(
                "{{ kind = \"harmonic\", K = {} }}",
                matrix(&spd(rng, n, 1.0, 0.5))
            ),
            format!(
                "{{ kind = \"quartic\", beta = {} }}",
                num(rng.random_range(0.1..0.5))
            ),
            format!(
                "{{ kind = \"pendulum\", omega = {} }}",
                num(rng.random_range(0.5..1.0))
            ),
            format!(
                "{{ kind = \"forcing\", amplitude = {}, signal = {{ kind = \"cosine\", frequency = 0.3 }} }}",
                vector(&uniform_vec(rng, n, -0.3, 0.3)),
            ),
            format!(
                "{{ kind = \"spin-orbit\", epsilon = {}, eccentricity = {} }}",
                num(rng.random_range(0.05..0.2)),
                num(e)
            ),
        ],
        Some(format!(
            "{{ kind = \"tidal\", eta = {}, eccentricity = {} }}",
            num(rng.random_range(0.01..0.1)),
            num(e)
        )),
    );
    cases.push(Case {
        label: format!("all terms + tidal damping, n = {n}, 1 member"),
        n,
        system_and_ensemble: text,
    });

    // No damping at all (C = 0: no damping channel), harmonic + quartic.
    let n = rng.random_range(1..=6);
    let m = members(rng);
    let text = system(
        &uniform_vec(rng, n, -1.0, 1.0),
        &uniform_vec(rng, n, -1.0, 1.0),
        0.0,
        &spd(rng, n, 0.5, 0.5),
        &[
            format!(
                "{{ kind = \"harmonic\", K = {} }}",
                matrix(&spd(rng, n, 1.0, 0.5))
            ),
            format!(
                "{{ kind = \"quartic\", beta = {} }}",
                num(rng.random_range(0.1..1.0))
            ),
        ],
        None,
    ) + &ensemble(rng, m, &[("x0", perturb(0.2)), ("beta", uniform(0.1, 0.6))]);
    cases.push(Case {
        label: format!("harmonic+quartic, no damping, n = {n}, {m} members"),
        n,
        system_and_ensemble: text,
    });
    cases
}

/// The methods every case runs under: `[scheme]` family and composition.
const METHODS: [(&str, Option<&str>); 8] = [
    ("splitting", Some("strang")),
    ("splitting", Some("suzuki-4")),
    ("splitting", Some("yoshida-6b")),
    ("splitting", Some("triple-jump-8")),
    ("splitting", Some("kahan-li-8")),
    ("herglotz", None),
    ("herglotz", Some("suzuki-4")),
    ("herglotz", Some("yoshida-6a")),
];

/// Record cadences: every step, every 7 steps (the last sample off the cadence), and
/// only the final state (`every` = the step count).
#[derive(Debug, Clone, Copy)]
enum Cadence {
    EveryStep,
    Seven,
    FinalOnly,
}

const CADENCES: [Cadence; 3] = [Cadence::EveryStep, Cadence::Seven, Cadence::FinalOnly];

fn with_scheme(
    case: &Case,
    method: (&str, Option<&str>),
    cadence: Cadence,
    steps: usize,
) -> String {
    let h = 0.01;
    let every = match cadence {
        Cadence::EveryStep => 1,
        Cadence::Seven => 7,
        Cadence::FinalOnly => steps,
    };
    let composition = method
        .1
        .map(|c| format!("composition = \"{c}\"\n"))
        .unwrap_or_default();
    format!(
        "{}\n[scheme]\nfamily = \"{}\"\n{composition}h = {}\nt_end = {}\n\n[output]\nevery = {every}\n",
        case.system_and_ensemble,
        method.0,
        num(h),
        num(steps as f64 * h),
    )
}

// ---------------------------------------------------------------------------------------
// Layout and comparison.

/// Asserts that `results` has exactly the shape `plan` prescribes, before anything is
/// compared entry by entry: one result per member, (records + 1) samples of width 2n + 1,
/// one `hamiltonian` channel with one value per sample, the totals [H initial, H final],
/// the final state equal to the last sample, and the first sample equal to member i's
/// initial state (so members are not permuted or shifted).
fn assert_layout(plan: &ContactPlan, results: &Results, what: &str) {
    if let Err(problem) = layout_problem(plan, results) {
        panic!("{what}: {problem}");
    }
}

/// The first way `results` departs from the layout `plan` prescribes (see
/// [`assert_layout`]), checked in an order that never indexes out of range.
fn layout_problem(plan: &ContactPlan, results: &Results) -> Result<(), String> {
    let n = plan.dof();
    let width = 2 * n + 1;
    let samples = plan.grid().records() + 1;
    let expect = |what: String, found: usize, expected: usize| {
        if found == expected {
            Ok(())
        } else {
            Err(format!("{what}: found {found}, the plan needs {expected}"))
        }
    };
    expect("member count".into(), results.members.len(), plan.len())?;
    expect("step count".into(), results.steps, plan.grid().steps)?;
    expect("sample times".into(), results.sample_times.len(), samples)?;
    for (i, m) in results.members.iter().enumerate() {
        expect(
            format!("member {i} final state"),
            m.final_state.len(),
            width,
        )?;
        expect(
            format!("member {i} trajectory (samples × (2n + 1))"),
            m.trajectory.len(),
            samples * width,
        )?;
        expect(format!("member {i} channels"), m.channels.len(), 1)?;
        expect(
            format!("member {i} hamiltonian samples"),
            m.channels[0].len(),
            samples,
        )?;
        expect(format!("member {i} totals"), m.totals.len(), 2)?;
        if m.trajectory[(samples - 1) * width..] != m.final_state[..] {
            return Err(format!("member {i}: final state is not the last sample"));
        }
        if m.totals != [m.channels[0][0], m.channels[0][samples - 1]] {
            return Err(format!(
                "member {i}: totals are not the first and last H samples"
            ));
        }
        let member = plan.member(i).map_err(|e| e.to_string())?;
        if m.trajectory[..width] != member.initial_state()[..] {
            return Err(format!(
                "member {i}: first sample is not the plan's member {i} initial state"
            ));
        }
    }
    Ok(())
}

/// Natural scales of a member's quantities, from a reference run recorded at every step:
/// the largest |x_j| and |p_j| over the run; for H the largest |A| + |B| + |C z| (H is a
/// sum of terms that may cancel, and decays to 0 under damping, so |H| itself is no
/// scale); for z the larger of its largest |z| and that energy scale times t_end, since
/// z = z₀ + ∫ (A − B − C z) dt accumulates terms of the energy's size and may pass near 0.
struct Scales {
    x: f64,
    p: f64,
    z: f64,
    energy: f64,
}

/// Per-member scales from `reference`, a CPU reference run of `plan`.
fn member_scales(plan: &ContactPlan, reference: &Results) -> Vec<Scales> {
    assert_layout(plan, reference, "the reference run of the scales");
    let n = plan.dof();
    let width = 2 * n + 1;
    let mut gradient = vec![0.0; n];
    (0..plan.len())
        .map(|i| {
            let member = plan.member(i).unwrap();
            let system = &member.system;
            let mut s = Scales {
                x: f64::MIN_POSITIVE,
                p: f64::MIN_POSITIVE,
                z: f64::MIN_POSITIVE,
                energy: f64::MIN_POSITIVE,
            };
            for (row, &t) in reference.members[i]
                .trajectory
                .chunks(width)
                .zip(&reference.sample_times)
            {
                let (x, rest) = row.split_at(n);
                let (p, z) = rest.split_at(n);
                s.x = x.iter().fold(s.x, |m, v| m.max(v.abs()));
                s.p = p.iter().fold(s.p, |m, v| m.max(v.abs()));
                s.z = s.z.max(z[0].abs());
                let terms = system.kinetic_energy(p).abs()
                    + system.potential(t, x, &mut gradient).abs()
                    + (system.damping_rate(t) * z[0]).abs();
                s.energy = s.energy.max(terms);
            }
            s.z = s.z.max(s.energy * plan.grid().t_end());
            s
        })
        .collect()
}

/// The scales of `case` under `method`, from a reference run that records every step.
fn dense_scales(case: &Case, method: (&str, Option<&str>), steps: usize) -> Vec<Scales> {
    let dense = plan_from(&with_scheme(case, method, Cadence::EveryStep, steps));
    member_scales(&dense, &cpu(&dense, CpuPath::Reference))
}

/// |a − b| / max(|a|, |b|, scale); 0 when a == b (also for equal infinities).
fn rel(a: f64, b: f64, scale: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs()).max(scale)
    }
}

/// The worst relative gap of a kind, and where it is.
#[derive(Debug, Clone, Default)]
struct Worst {
    gap: f64,
    at: String,
}

impl Worst {
    fn update(&mut self, gap: f64, at: impl FnOnce() -> String) {
        // NaN gaps count as infinitely bad.
        let gap = if gap.is_nan() { f64::INFINITY } else { gap };
        if gap > self.gap || (self.at.is_empty() && gap == self.gap) {
            self.gap = gap;
            self.at = at();
        }
    }

    fn merge(&mut self, other: &Worst) {
        if other.gap > self.gap || self.at.is_empty() {
            *self = other.clone();
        }
    }
}

/// The worst gaps between two runs: trajectory and final state (x, p, z against their
/// scales), and H (samples and totals against the energy scale).
#[derive(Debug, Clone, Default)]
struct Gaps {
    state: Worst,
    hamiltonian: Worst,
}

impl Gaps {
    fn merge(&mut self, other: &Gaps) {
        self.state.merge(&other.state);
        self.hamiltonian.merge(&other.hamiltonian);
    }
}

fn gaps(plan: &ContactPlan, scales: &[Scales], a: &Results, b: &Results, what: &str) -> Gaps {
    assert_eq!(scales.len(), plan.len(), "{what}: scales");
    assert_layout(plan, a, what);
    assert_layout(plan, b, what);
    let n = plan.dof();
    let width = 2 * n + 1;
    let mut out = Gaps::default();
    for (i, (ma, mb)) in a.members.iter().zip(&b.members).enumerate() {
        let s = &scales[i];
        let scale_of = |j: usize| {
            if j < n {
                s.x
            } else if j < 2 * n {
                s.p
            } else {
                s.z
            }
        };
        let name = |j: usize| {
            if j < n {
                format!("x[{j}]")
            } else if j < 2 * n {
                format!("p[{}]", j - n)
            } else {
                "z".to_string()
            }
        };
        for (k, (va, vb)) in ma.trajectory.iter().zip(&mb.trajectory).enumerate() {
            let (sample, j) = (k / width, k % width);
            out.state.update(rel(*va, *vb, scale_of(j)), || {
                format!(
                    "{what}: member {i} sample {sample} {}: {va:.17e} vs {vb:.17e}",
                    name(j)
                )
            });
        }
        for (j, (va, vb)) in ma.final_state.iter().zip(&mb.final_state).enumerate() {
            out.state.update(rel(*va, *vb, scale_of(j)), || {
                format!(
                    "{what}: member {i} final {}: {va:.17e} vs {vb:.17e}",
                    name(j)
                )
            });
        }
        for (k, (va, vb)) in ma.channels[0].iter().zip(&mb.channels[0]).enumerate() {
            out.hamiltonian.update(rel(*va, *vb, s.energy), || {
                format!("{what}: member {i} H sample {k}: {va:.17e} vs {vb:.17e}")
            });
        }
        for (k, (va, vb)) in ma.totals.iter().zip(&mb.totals).enumerate() {
            out.hamiltonian.update(rel(*va, *vb, s.energy), || {
                format!(
                    "{what}: member {i} H {}: {va:.17e} vs {vb:.17e}",
                    ["initial", "final"][k]
                )
            });
        }
    }
    out
}

fn assert_within(gaps: &Gaps, tol: f64, what: &str) {
    assert!(
        gaps.state.gap <= tol,
        "{what}: state gap {:.3e} > {tol:e} at {}",
        gaps.state.gap,
        gaps.state.at
    );
    assert!(
        gaps.hamiltonian.gap <= tol,
        "{what}: H gap {:.3e} > {tol:e} at {}",
        gaps.hamiltonian.gap,
        gaps.hamiltonian.at
    );
}

fn report(what: &str, gaps: &Gaps) {
    eprintln!(
        "{what}: worst state gap {:.3e} ({}); worst H gap {:.3e} ({})",
        gaps.state.gap, gaps.state.at, gaps.hamiltonian.gap, gaps.hamiltonian.at
    );
}

/// The f64 criterion: GPU, twin and reference agree to 1e-12 relative.
const F64_TOLERANCE: f64 = 1e-12;

/// Steps of the random runs.
const STEPS: usize = 300;

// ---------------------------------------------------------------------------------------
// Tests.

/// Random ensembles over every term kind, six methods and three record cadences: the f64
/// GPU kernel against its CPU twin and against the CPU reference, member by member, to
/// ≤ 1e-12 relative (x, p, z against their largest magnitude over the run, H against the
/// largest |A| + |B| + |C z|).
///
/// On lavapipe the GPU and the twin agree bit for bit except where Mesa's shader compiler
/// applies value-changing algebraic rewrites that naga's SPIR-V does not forbid: it turns
/// √s·√s into s (the Kepler term's (√s)³ becomes s·√s) and a·b + a·c into a·(b + c) (seen
/// in Herglotz's z). Those 1-ulp differences grow to at most ~1.3e-13 over 300 steps
/// (Kepler, 12 seeds), well within the 1e-12 criterion.
#[test]
fn random_ensembles_match_twin_and_reference_in_f64() {
    let mut rng = common::fresh_rng("random_ensembles_match_twin_and_reference_in_f64");
    let cases = random_cases(&mut rng);
    let (mut vs_twin, mut vs_reference, mut twin_vs_reference) =
        (Gaps::default(), Gaps::default(), Gaps::default());
    let mut runs = 0;
    for case in &cases {
        let mut case_twin = Gaps::default();
        let mut case_reference = Gaps::default();
        for (m, &method) in METHODS.iter().enumerate() {
            let cadence = CADENCES[(m + runs) % CADENCES.len()];
            let text = with_scheme(case, method, cadence, STEPS);
            let plan = plan_from(&text);
            assert_eq!(plan.dof(), case.n);
            let what = format!(
                "{} under {} {}, {cadence:?}",
                case.label,
                method.0,
                method.1.unwrap_or("")
            );
            let reference = cpu(&plan, CpuPath::Reference);
            let twin = cpu(&plan, CpuPath::Twin);
            let device = gpu(&plan, Precision::F64, &ExecutorOptions::default());
            assert_layout(&plan, &reference, &format!("{what}, reference"));
            let scales = dense_scales(case, method, STEPS);
            let g_twin = gaps(
                &plan,
                &scales,
                &device,
                &twin,
                &format!("{what}, gpu vs twin"),
            );
            let g_reference = gaps(
                &plan,
                &scales,
                &device,
                &reference,
                &format!("{what}, gpu vs reference"),
            );
            let g_cpu = gaps(
                &plan,
                &scales,
                &twin,
                &reference,
                &format!("{what}, twin vs reference"),
            );
            assert_within(&g_twin, F64_TOLERANCE, &what);
            assert_within(&g_reference, F64_TOLERANCE, &what);
            assert_within(&g_cpu, F64_TOLERANCE, &what);
            case_twin.merge(&g_twin);
            case_reference.merge(&g_reference);
            twin_vs_reference.merge(&g_cpu);
            runs += 1;
        }
        eprintln!(
            "{}: gpu vs twin state {:.2e} H {:.2e}; gpu vs reference state {:.2e} H {:.2e}",
            case.label,
            case_twin.state.gap,
            case_twin.hamiltonian.gap,
            case_reference.state.gap,
            case_reference.hamiltonian.gap
        );
        if case_twin.state.gap > 0.0 {
            eprintln!("  gpu vs twin worst at {}", case_twin.state.at);
        }
        vs_twin.merge(&case_twin);
        vs_reference.merge(&case_reference);
    }
    eprintln!("{runs} runs of {STEPS} steps");
    report("f64 gpu vs cpu twin", &vs_twin);
    report("f64 gpu vs cpu reference", &vs_reference);
    report("f64 cpu twin vs cpu reference", &twin_vs_reference);
}

/// Chunking is transparent: small member chunks and short dispatches (which cut the shared
/// stream and the record windows at odd places) give bit-identical results to one chunk.
#[test]
fn chunked_runs_are_bit_identical() {
    let mut rng = common::fresh_rng("chunked_runs_are_bit_identical");
    let cases = random_cases(&mut rng);
    for (c, case) in cases.iter().enumerate() {
        let method = METHODS[c % METHODS.len()];
        let cadence = CADENCES[c % CADENCES.len()];
        // Enough members to need several chunks.
        let text = with_scheme(case, method, cadence, 120)
            .replace("[ensemble]\nmembers = ", "[ensemble]\nmembers = 2");
        let plan = plan_from(&text);
        let whole = gpu(&plan, Precision::F64, &ExecutorOptions::default());
        assert_layout(&plan, &whole, &case.label);
        for (chunk, dispatch) in [(1, 1), (3, 7), (7, 5), (13, 9)] {
            let options = ExecutorOptions {
                max_chunk_members: Some(chunk),
                max_steps_per_dispatch: Some(dispatch),
                ..Default::default()
            };
            let chunked = gpu(&plan, Precision::F64, &options);
            assert_layout(&plan, &chunked, &case.label);
            assert!(
                whole == chunked,
                "{} under {method:?}, {cadence:?}: chunks of {chunk} members and {dispatch} steps per dispatch differ from one chunk",
                case.label
            );
        }
    }
}

/// The f32 unit roundoff u = 2⁻²⁴.
const F32_UNIT_ROUNDOFF: f64 = 5.960_464_477_539_063e-8;

/// f32 on the same random ensembles, against the f64 reference. Bound, per Strang
/// sub-step S(γ_i h) (Herglotz: one step counts as one sub-step, it has about as many
/// operations): the f32 kernel rounds its inputs once (parameters, initial state, h, γ_i,
/// the stream: relative u/2 each) and every operation of a sub-step once more; along the
/// longest dependency chain of one component (φ_C, φ_B, φ_A, φ_B, φ_C) that is about 10
/// roundings, the f32 builtin sin/cos/exp counted as a few ulps each, so the local error is
/// ≲ 10 u of the state's scale. The tangent map of the remaining steps carries these
/// errors; for the linear and damped cases it does not expand them, but for the nonlinear
/// oscillators (Kepler, Duffing, pendulum) the frequency depends on the energy, so an
/// energy error δ turns into a phase error growing like (3/2) ω t δ (Kepler), a factor
/// 1 + (3/2) ω t_end ≈ 5.5 at t_end = 3, ω ≈ 1. Hence c ≈ 10 × 5.5 → c = 64 u per
/// sub-step: |error| ≤ 64 · N · s · u of the quantity's scale (the scales of
/// [`member_scales`]). Measured over 12 seeds: at most 15 u per sub-step (Kepler, under
/// Strang, Suzuki and the triple jump), at most 2.5 u for every other case.
#[test]
fn f32_drift_of_random_ensembles_is_bounded() {
    let mut rng = common::fresh_rng("f32_drift_of_random_ensembles_is_bounded");
    let cases = random_cases(&mut rng);
    let mut all = Gaps::default();
    for case in &cases {
        for (m, &method) in METHODS.iter().enumerate() {
            let cadence = CADENCES[m % CADENCES.len()];
            let plan = plan_from(&with_scheme(case, method, cadence, STEPS));
            let stages = plan.method().offsets().len() - 1;
            let stages = if method.0 == "herglotz" { 1 } else { stages };
            let reference = cpu(&plan, CpuPath::Reference);
            let device = gpu(&plan, Precision::F32, &ExecutorOptions::default());
            let what = format!(
                "{} under {} {}, f32 vs f64 reference",
                case.label,
                method.0,
                method.1.unwrap_or("")
            );
            let scales = dense_scales(case, method, STEPS);
            let g = gaps(&plan, &scales, &device, &reference, &what);
            let bound = 64.0 * (STEPS * stages) as f64 * F32_UNIT_ROUNDOFF;
            eprintln!(
                "{what}: state {:.2e}, H {:.2e} (bound {bound:.2e})",
                g.state.gap, g.hamiltonian.gap
            );
            assert_within(&g, bound, &what);
            all.merge(&g);
        }
    }
    assert!(
        all.state.gap > 1e-9,
        "f32 runs agree with f64 to {:.2e}: was the run really f32?",
        all.state.gap
    );
    report("f32 gpu vs f64 cpu reference (random ensembles)", &all);
}

/// The damped oscillator example (α lowered to 0.01 so that H ∝ e^{−α t} stays a normal
/// f32 number over t = 1000) in f32 for 10³ and 10⁵ Strang steps against the f64
/// reference. Error model: the f32 step applies the same rounded coefficients every step
/// (h, e^{−α h/2} from the f32 exp, the products with P and K), so it is the exact step of
/// a map perturbed by a few u, and its error is systematic: it grows linearly in N, not
/// like √N. Along the chain of p a step rounds about 10 times (φ_C twice with an f32 exp
/// of ≤ 3 ulps, φ_B twice, φ_A), x and z fewer; the oscillator's step map is a rotation
/// times e^{−αh/2}, which carries errors without amplifying them relative to the decaying
/// state. So the final state's relative error is at most ≈ 16 · N · u (every rounding
/// coherent), H's (quadratic in the state, plus the z term) twice that. Measured: about
/// 1.1 u per step at 10³ steps and 1.2 u per step at 10⁵ steps for the state, 2.3 u for H
/// (linear growth, as the model says).
#[test]
fn f32_drift_of_the_damped_oscillator_short_and_long() {
    let mut measured = Vec::new();
    for (t_end, steps) in [("10.0", 1_000usize), ("1000.0", 100_000)] {
        let cfg = common::example(
            "contact_damped_oscillator.toml",
            &[
                "system.damping.alpha=0.01",
                &format!("scheme.t_end={t_end}"),
                &format!("output.every={}", steps / 10),
            ],
        );
        let plan = cfg.contact_plan().unwrap();
        assert_eq!(plan.grid().steps, steps);
        let reference = cpu(&plan, CpuPath::Reference);
        let device = gpu(&plan, Precision::F32, &ExecutorOptions::default());
        let what = format!("damped oscillator, {steps} steps, f32 vs f64 reference");
        let g = gaps(
            &plan,
            &member_scales(&plan, &reference),
            &device,
            &reference,
            &what,
        );
        // Final state and final H alone, relative to the final magnitudes.
        let (r, d) = (&reference.members[0], &device.members[0]);
        let norm = |v: &[f64]| v.iter().map(|e| e * e).sum::<f64>().sqrt();
        let diff: Vec<f64> = r
            .final_state
            .iter()
            .zip(&d.final_state)
            .map(|(a, b)| a - b)
            .collect();
        let final_state = norm(&diff) / norm(&r.final_state);
        let final_h = (r.totals[1] - d.totals[1]).abs() / r.totals[1].abs();
        let bound = 16.0 * steps as f64 * F32_UNIT_ROUNDOFF;
        eprintln!(
            "{what}: final state |Δy|/|y| = {final_state:.3e}, final H |ΔH|/|H| = {final_h:.3e}, worst sample: state {:.3e}, H {:.3e} (bound {bound:.3e} state, {:.3e} H; {:.1} u per step on the state)",
            g.state.gap,
            g.hamiltonian.gap,
            2.0 * bound,
            final_state / (steps as f64 * F32_UNIT_ROUNDOFF)
        );
        assert!(
            final_state <= bound && g.state.gap <= bound,
            "{what}: state drift {final_state:.3e} / {:.3e} exceeds 16 N u = {bound:.3e} ({})",
            g.state.gap,
            g.state.at
        );
        assert!(
            final_h <= 2.0 * bound && g.hamiltonian.gap <= 2.0 * bound,
            "{what}: H drift {final_h:.3e} / {:.3e} exceeds 32 N u = {:.3e} ({})",
            g.hamiltonian.gap,
            2.0 * bound,
            g.hamiltonian.at
        );
        measured.push((steps, final_state, final_h));
    }
    assert!(
        measured[0].1 > 1e-9,
        "f32 agrees with f64 to {:.2e}: was the run really f32?",
        measured[0].1
    );
}

/// The layout check catches a missing member, a shifted member, a short trajectory, a
/// missing H sample and a wrong final state: it is what guards every zip above.
#[test]
fn layout_mismatches_are_caught() {
    let mut rng = common::fresh_rng("layout_mismatches_are_caught");
    let case = &random_cases(&mut rng)[0];
    let plan = plan_from(
        &with_scheme(case, METHODS[0], Cadence::Seven, 30)
            .replace("[ensemble]\nmembers = ", "[ensemble]\nmembers = 1"),
    );
    assert!(plan.len() >= 10);
    let good = gpu(&plan, Precision::F64, &ExecutorOptions::default());
    assert_layout(&plan, &good, "unchanged");
    type Corruption = (&'static str, &'static str, fn(&mut Results));
    let corruptions: [Corruption; 8] = [
        ("a member dropped", "member count: found", |r| {
            r.members.pop();
        }),
        ("an extra member", "member count: found", |r| {
            let first = r.members[0].clone();
            r.members.push(first);
        }),
        ("members swapped", "member 0: first sample", |r| {
            r.members.swap(0, 1)
        }),
        ("a trajectory sample short", "member 0 trajectory", |r| {
            let w = r.members[0].final_state.len();
            let len = r.members[0].trajectory.len();
            r.members[0].trajectory.truncate(len - w);
        }),
        ("an H sample missing", "member 1 hamiltonian samples", |r| {
            r.members[1].channels[0].pop();
        }),
        ("a total missing", "member 2 totals", |r| {
            r.members[2].totals.pop();
        }),
        (
            "the final state off the last sample",
            "member 3: final state",
            |r| {
                r.members[3].final_state[0] += 1.0;
            },
        ),
        ("a sample time missing", "sample times", |r| {
            r.sample_times.pop();
        }),
    ];
    for (what, named, corrupt) in corruptions {
        let mut bad = good.clone();
        corrupt(&mut bad);
        match layout_problem(&plan, &bad) {
            Ok(()) => panic!("the layout check missed {what}"),
            Err(problem) => assert!(
                problem.contains(named),
                "{what}: the layout check says {problem:?}, not {named:?}"
            ),
        }
    }
    // Results of one plan checked against another plan with a different member count.
    let other = plan_from(
        &with_scheme(case, METHODS[0], Cadence::Seven, 30)
            .replace("[ensemble]\nmembers = ", "[ensemble]\nmembers = 3"),
    );
    let problem = layout_problem(&other, &good).unwrap_err();
    assert!(
        problem.contains(&format!(
            "member count: found {}, the plan needs {}",
            plan.len(),
            other.len()
        )),
        "{problem}"
    );
}

/// n > 32 exceeds the kernel's private arrays: a clear GPU error naming the limit, while
/// the CPU runs it.
#[test]
fn more_than_32_degrees_of_freedom_is_a_clear_gpu_error() {
    for n in [33usize, 40] {
        let ones = vec![0.1; n];
        let identity: Vec<Vec<f64>> = (0..n)
            .map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
            .collect();
        let text = format!(
            "[system]\nkind = \"contact\"\nx0 = {}\np0 = {}\npotential = [{{ kind = \"harmonic\", K = {} }}]\ndamping = {{ kind = \"constant\", alpha = 0.1 }}\n\n[scheme]\nfamily = \"splitting\"\ncomposition = \"strang\"\nh = 0.1\nt_end = 1.0\n",
            vector(&ones),
            vector(&ones),
            matrix(&identity)
        );
        let plan = plan_from(&text);
        let e = run(context(Precision::F64), &plan, &ExecutorOptions::default())
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("n = {n} degrees of freedom"))
                && e.contains("exceed the contact kernel's limit of 32")
                && e.contains("--backend cpu"),
            "{e}"
        );
        assert_layout(&plan, &cpu(&plan, CpuPath::Reference), "n > 32 on the CPU");
    }
    // n = 32 itself runs on the GPU.
    let n = 32;
    let text = format!(
        "[system]\nkind = \"contact\"\nx0 = {}\np0 = {}\npotential = [{{ kind = \"quartic\", beta = 0.5 }}]\n\n[scheme]\nfamily = \"herglotz\"\nh = 0.1\nt_end = 1.0\n",
        vector(&vec![0.3; n]),
        vector(&vec![-0.2; n]),
    );
    let plan = plan_from(&text);
    let reference = cpu(&plan, CpuPath::Reference);
    let device = gpu(&plan, Precision::F64, &ExecutorOptions::default());
    assert_within(
        &gaps(
            &plan,
            &member_scales(&plan, &reference),
            &device,
            &reference,
            "n = 32",
        ),
        F64_TOLERANCE,
        "n = 32",
    );
}

/// Both time samplings (`[system] time_sampling`, the stage's closing half at stream point
/// i + 1 or i, read by the kernel from its constants): on the random ensembles, every case
/// under a fourth- and a sixth-order composition, the f64 GPU kernel, its CPU twin and the
/// CPU reference agree to the f64 criterion (1e-12 relative); the twin gives the same bits
/// whatever the chunks of members and steps, and so does the GPU; and the two samplings
/// differ where a time function changes within a step, so the setting reaches every
/// backend (and agree bit for bit where none does).
#[test]
fn both_time_samplings_match_twin_and_reference_in_f64() {
    let mut rng = common::fresh_rng("both_time_samplings_match_twin_and_reference_in_f64");
    let cases = random_cases(&mut rng);
    let mut worst = [Gaps::default(), Gaps::default()];
    for (c, case) in cases.iter().enumerate() {
        let method = [
            ("splitting", Some("suzuki-4")),
            ("splitting", Some("yoshida-6a")),
        ][c % 2];
        let cadence = CADENCES[c % CADENCES.len()];
        let mut finals = Vec::new();
        for (s, sampling) in ["endpoints", "midpoint"].into_iter().enumerate() {
            let text = with_scheme(case, method, cadence, 120).replacen(
                "kind = \"contact\"\n",
                &format!("kind = \"contact\"\ntime_sampling = \"{sampling}\"\n"),
                1,
            );
            let plan = plan_from(&text);
            let what = format!(
                "{} under {method:?}, {sampling} time, {cadence:?}",
                case.label
            );
            let reference = cpu(&plan, CpuPath::Reference);
            let twin = cpu(&plan, CpuPath::Twin);
            let device = gpu(&plan, Precision::F64, &ExecutorOptions::default());
            assert_layout(&plan, &device, &what);
            let scales = member_scales(&plan, &reference);
            let g_twin = gaps(
                &plan,
                &scales,
                &device,
                &twin,
                &format!("{what}, gpu vs twin"),
            );
            let g_reference = gaps(
                &plan,
                &scales,
                &device,
                &reference,
                &format!("{what}, gpu vs reference"),
            );
            assert_within(&g_twin, F64_TOLERANCE, &what);
            assert_within(&g_reference, F64_TOLERANCE, &what);
            worst[s].merge(&g_reference);
            for (chunk, dispatch) in [(1, 1), (3, 7), (13, 9)] {
                let options = ExecutorOptions {
                    max_chunk_members: Some(chunk),
                    max_steps_per_dispatch: Some(dispatch),
                    ..Default::default()
                };
                let chunked_twin = harbor::backend::twin::run(&plan, &options).unwrap();
                common::assert_same_bits(
                    &twin.members,
                    &chunked_twin.members,
                    &format!("{what}: twin in chunks of {chunk} members, {dispatch} steps"),
                );
                assert!(
                    device == gpu(&plan, Precision::F64, &options),
                    "{what}: GPU in chunks of {chunk} members, {dispatch} steps differs from one chunk"
                );
            }
            // Whether a time function changes within the first step (not for the
            // autonomous cases: constant damping and no forcing).
            let stream = plan.stream();
            let (points, channels) = (stream.points(), stream.channels());
            let first = stream.window(0, 1);
            let varies =
                (0..channels).any(|ch| (1..points).any(|p| first[p * channels + ch] != first[ch]));
            finals.push((varies, reference.members[0].final_state.clone()));
        }
        if finals[0].0 {
            assert_ne!(
                finals[0].1, finals[1].1,
                "{}: endpoints and midpoint sampling gave the same final state",
                case.label
            );
        } else {
            assert_eq!(finals[0].1, finals[1].1, "{}: autonomous", case.label);
        }
    }
    report("f64 gpu vs cpu reference, endpoint time", &worst[0]);
    report("f64 gpu vs cpu reference, midpoint time", &worst[1]);
}
