//! exploratory
use harbor::method::contact_flows;
use harbor::model::{ContactMember, ContactSystem, Damping, KeplerOrbit, Potential, Signal};
use harbor::plan::ContactMethod;
use harbor::reference::ode;
use harbor::tableau::Composition;
use nalgebra::{DMatrix, DVector};

struct Case {
    name: &'static str,
    member: ContactMember,
    t_end: f64,
}

fn member(system: ContactSystem, x0: &[f64], p0: &[f64], z0: f64) -> ContactMember {
    ContactMember::new(
        "test",
        system,
        DVector::from_column_slice(x0),
        DVector::from_column_slice(p0),
        z0,
    )
    .unwrap()
}

fn cases() -> Vec<Case> {
    let orbit = KeplerOrbit::new("test", 0.2).unwrap();
    vec![
        Case {
            name: "damped oscillator",
            member: member(
                ContactSystem::new(
                    "t",
                    DMatrix::identity(1, 1),
                    vec![Potential::Harmonic {
                        k: DMatrix::identity(1, 1),
                    }],
                    Damping::Constant { alpha: 0.1 },
                )
                .unwrap(),
                &[0.5],
                &[0.5],
                0.0,
            ),
            t_end: 10.0,
        },
        Case {
            name: "forced Duffing",
            member: member(
                ContactSystem::new(
                    "t",
                    DMatrix::identity(1, 1),
                    vec![
                        Potential::Harmonic {
                            k: DMatrix::identity(1, 1),
                        },
                        Potential::Quartic { beta: 1.0 },
                        Potential::Forcing {
                            amplitude: DVector::from_column_slice(&[0.3]),
                            signal: Signal::Harmonic {
                                amplitude: 1.0,
                                omega: 1.2,
                                phase: std::f64::consts::FRAC_PI_2,
                                offset: 0.0,
                            },
                        },
                    ],
                    Damping::Constant { alpha: 0.15 },
                )
                .unwrap(),
                &[0.8],
                &[-0.3],
                0.1,
            ),
            t_end: 10.0,
        },
        Case {
            name: "spin-orbit tidal",
            member: member(
                ContactSystem::new(
                    "t",
                    DMatrix::identity(1, 1),
                    vec![Potential::SpinOrbit {
                        epsilon: 0.3,
                        orbit,
                    }],
                    Damping::Tidal { eta: 0.05, orbit },
                )
                .unwrap(),
                &[0.3],
                &[1.2],
                0.0,
            ),
            t_end: 10.0,
        },
        Case {
            name: "coupled signal damping",
            member: member(
                ContactSystem::new(
                    "t",
                    DMatrix::from_row_slice(2, 2, &[1.5, 0.4, 0.4, 0.9]),
                    vec![
                        Potential::Harmonic {
                            k: DMatrix::from_row_slice(2, 2, &[2.0, -0.5, -0.5, 1.0]),
                        },
                        Potential::Pendulum { omega: 0.8 },
                    ],
                    Damping::Signal {
                        alpha: 0.2,
                        signal: Signal::Harmonic {
                            amplitude: 0.5,
                            omega: 0.9,
                            phase: 0.3,
                            offset: 1.0,
                        },
                    },
                )
                .unwrap(),
                &[0.4, -0.2],
                &[0.3, 0.5],
                0.0,
            ),
            t_end: 10.0,
        },
    ]
}

fn integrate(method: &ContactMethod, m: &ContactMember, t_end: f64, steps: usize) -> Vec<f64> {
    let h = t_end / steps as f64;
    let mut y = m.initial_state();
    let mut g = vec![0.0; m.system.dof()];
    for k in 0..steps {
        contact_flows::step(method, &m.system, k as f64 * h, h, &mut y, &mut g);
    }
    y
}

#[test]
fn explore() {
    let mut methods: Vec<ContactMethod> = Composition::all()
        .into_iter()
        .map(ContactMethod::Splitting)
        .collect();
    methods.push(ContactMethod::Herglotz);
    let counts: Vec<usize> = (0..21)
        .map(|i| (10.0 * 2f64.powf(i as f64 / 2.0)).round() as usize)
        .collect();
    for case in cases() {
        let sys = &case.member.system;
        let y0 = case.member.initial_state();
        let est = ode::converge(
            |t, y, dy| sys.vector_field(t, y, dy),
            0.0,
            &y0,
            case.t_end,
            1e-14,
        )
        .unwrap();
        eprintln!("{}: ref err {:e} steps {}", case.name, est.error, est.steps);
        for m in &methods {
            let mut line = format!("{:24} {:16}", case.name, m.label());
            for &n in &counts {
                let y = integrate(m, &case.member, case.t_end, n);
                let e = y
                    .iter()
                    .zip(&est.y)
                    .fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
                line += &format!(" {n}:{e:.1e}");
            }
            eprintln!("{line}");
        }
    }
}
