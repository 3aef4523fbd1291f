//! The step operators reproduce the reference stepper: the kernel's CPU twin and the stage
//! solver agree on random systems for every kernel scheme.

mod common;

use harbor::backend::Backend;
use harbor::kernels::CpuPath;
use harbor::linear_ph::mechanical_system;
use harbor::linear_ph::{EnergyTotals, LinearPhMember, LinearPhPlan};
use harbor::model::Signal;
use harbor::tableau::{Scheme, SchemeFamily};
use nalgebra::{DMatrix, DVector};
use rand::Rng;

fn relative_gap(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(1e-300)
}

fn compare(plan: &LinearPhPlan, tolerance: f64) {
    let reference = Backend::Cpu(CpuPath::Reference).run(plan).unwrap();
    let twin = Backend::Cpu(CpuPath::Twin).run(plan).unwrap();
    assert_eq!(reference.members.len(), plan.ensemble.len());
    assert_eq!(twin.members.len(), plan.ensemble.len());
    for (i, (a, b)) in reference.members.iter().zip(&twin.members).enumerate() {
        assert_eq!(a.final_state.len(), b.final_state.len(), "member {i}");
        assert_eq!(a.channels.len(), b.channels.len(), "member {i}");
        for (channel, (ca, cb)) in a.channels.iter().zip(&b.channels).enumerate() {
            assert_eq!(ca.len(), cb.len(), "member {i} channel {channel} rows");
        }
        let scale = a.final_state.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        for (r, (x, y)) in a.final_state.iter().zip(&b.final_state).enumerate() {
            assert!(
                (x - y).abs() <= tolerance * scale,
                "member {i} x[{r}]: {x:e} vs {y:e}"
            );
        }
        for (what, x, y) in [
            (
                "stored",
                EnergyTotals::of(a).stored,
                EnergyTotals::of(b).stored,
            ),
            (
                "supplied",
                EnergyTotals::of(a).supplied,
                EnergyTotals::of(b).supplied,
            ),
            ("port", EnergyTotals::of(a).port, EnergyTotals::of(b).port),
            (
                "dissipated",
                EnergyTotals::of(a).dissipated,
                EnergyTotals::of(b).dissipated,
            ),
        ] {
            assert!(
                relative_gap(x, y) <= tolerance || (x - y).abs() < 1e-15,
                "member {i} {what}: {x:e} vs {y:e}"
            );
        }
        for (w, (ea, eb)) in a.channels[0]
            .chunks(4)
            .zip(b.channels[0].chunks(4))
            .enumerate()
        {
            for c in 0..4 {
                assert!(
                    (ea[c] - eb[c]).abs() <= tolerance * ea[c].abs().max(1e-3),
                    "member {i} window {w} energy {c}"
                );
            }
        }
        for (ya, yb) in a.channels[1].iter().zip(&b.channels[1]) {
            assert!((ya - yb).abs() <= tolerance * ya.abs().max(1.0));
        }
    }
}

#[test]
fn twin_matches_reference_for_gauss() {
    let mut rng = common::fresh_rng("twin_matches_reference_for_gauss");
    for s in 1..=4 {
        let members: Vec<LinearPhMember> = (0..6)
            .map(|k| {
                let (system, x0) = common::random_linear_ph(&mut rng, 1 + 2 * k, 2, 0.3);
                LinearPhMember { system, x0 }
            })
            .collect();
        for member in members {
            let signals = vec![
                Signal::Harmonic {
                    amplitude: 1.0,
                    omega: rng.random_range(0.5..3.0),
                    phase: 0.1,
                    offset: 0.0,
                },
                Signal::Pulse {
                    start: 0.5,
                    end: 1.5,
                    amplitude: 2.0,
                },
            ];
            let plan = LinearPhPlan::new(
                Scheme::new(SchemeFamily::Gauss, s).unwrap(),
                0.02,
                4.0,
                vec![member],
                &signals,
                13,
            )
            .unwrap();
            compare(&plan, 1e-12);
        }
    }
}

#[test]
fn twin_matches_reference_for_the_lobatto_pair() {
    let mut rng = common::fresh_rng("twin_matches_reference_for_the_lobatto_pair");
    for s in 2..=4 {
        for half in [1, 3, 5] {
            let k = DMatrix::from_fn(half, half, |_, _| rng.random_range(-1.0..1.0));
            let k = k.transpose() * &k / half as f64 + DMatrix::identity(half, half);
            let d = DMatrix::from_fn(half, half, |_, _| rng.random_range(-1.0..1.0));
            let d = d.transpose() * &d * (0.2 / half as f64);
            let g = DMatrix::from_fn(half, 1, |_, _| rng.random_range(-1.0..1.0));
            let system =
                mechanical_system("random", k, DMatrix::identity(half, half), d, g).unwrap();
            let x0 = DVector::from_fn(2 * half, |_, _| rng.random_range(-1.0..1.0));
            let signals = [Signal::Harmonic {
                amplitude: 1.0,
                omega: 1.3,
                phase: 0.0,
                offset: 0.2,
            }];
            let plan = LinearPhPlan::new(
                Scheme::new(SchemeFamily::LobattoPair, s).unwrap(),
                0.05,
                5.0,
                vec![LinearPhMember { system, x0 }],
                &signals,
                9,
            )
            .unwrap();
            compare(&plan, 1e-12);
        }
    }
}
