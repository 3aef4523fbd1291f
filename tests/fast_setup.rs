//! The fast engine's set-up straight from the plan (`FastBlock::of_range`: members drawn
//! on the stack, operators built in stack-sized buffers, one set of operators for members
//! that differ in x0 alone, built once per run or by each block) builds the block that
//! `FastBlock::new` builds from the materialised members, bit for bit, and refuses a bad
//! draw with the same error.

mod common;

use harbor::kernels::lanes::SimdLevel;
use harbor::linear_ph::chain::{chain_initial_state, mass_spring_damper_chain};
use harbor::linear_ph::ensemble::Draw;
use harbor::linear_ph::fast::{FastBlock, SharedOperators, block_members};
use harbor::linear_ph::{
    DrawnLinearPhEnsemble, LinearPhEnsembleSpec, LinearPhMember, LinearPhPlan,
};
use harbor::model::Signal;
use harbor::plan::{MemberResult, Recording};
use harbor::tableau::{Scheme, SchemeFamily};

const ALL: Recording = Recording {
    trajectory: true,
    energy: true,
    outputs: true,
};

const FINAL_STATE: Recording = Recording {
    trajectory: false,
    energy: false,
    outputs: false,
};

fn perturb(sigma: f64) -> Draw {
    Draw::Perturb { sigma }
}

/// A drawn ensemble of `members` around `nominal` under `scheme`, two inputs (the second
/// silent), recording every 7 steps.
fn plan(
    nominal: LinearPhMember,
    spec: LinearPhEnsembleSpec,
    scheme: Scheme,
    recording: Recording,
) -> LinearPhPlan {
    let split = (scheme.family == SchemeFamily::LobattoPair).then(|| nominal.x0.len() / 2);
    let ensemble = DrawnLinearPhEnsemble::new(nominal, spec, split).unwrap();
    let m = ensemble.nominal.system.inputs();
    let signals: Vec<Signal> = (0..m)
        .map(|k| {
            if k == 1 {
                Signal::Zero
            } else {
                Signal::Harmonic {
                    amplitude: 1.0,
                    omega: 1.0 + k as f64,
                    phase: 0.3,
                    offset: 0.1,
                }
            }
        })
        .collect();
    LinearPhPlan::new(scheme, 0.01, 0.5, ensemble, &signals, 7)
        .unwrap()
        .with_recording(recording)
}

fn spec(members: usize, all: bool) -> LinearPhEnsembleSpec {
    let drawn = |draw| if all { draw } else { Draw::Fixed };
    LinearPhEnsembleSpec {
        members,
        seed: 11,
        j: drawn(perturb(0.05)),
        r: drawn(Draw::Random { scale: 0.05 }),
        q: drawn(perturb(0.05)),
        b: drawn(perturb(0.05)),
        x0: perturb(0.1),
    }
}

fn random_nominal(n: usize, m: usize) -> LinearPhMember {
    let mut rng = common::fresh_rng(&format!("fast_setup {n} {m}"));
    let (system, x0) = common::random_linear_ph(&mut rng, n, m, 0.3);
    LinearPhMember { system, x0 }
}

/// The bits of everything a member recorded.
fn bits(results: &[MemberResult]) -> Vec<Vec<u64>> {
    results
        .iter()
        .map(|r| {
            let mut all: Vec<u64> = r.final_state.iter().map(|v| v.to_bits()).collect();
            all.extend(r.trajectory.iter().map(|v| v.to_bits()));
            for channel in &r.channels {
                all.extend(channel.iter().map(|v| v.to_bits()));
            }
            all.extend(r.totals.iter().map(|v| v.to_bits()));
            all.push(r.nonfinite_step.unwrap_or(0));
            all
        })
        .collect()
}

/// Every block of `plan` set up both ways and run: the same bits.
fn assert_same_blocks(plan: &LinearPhPlan, what: &str) {
    let block = block_members(plan);
    let total = plan.ensemble.len();
    for start in (0..total).step_by(block) {
        let range = start..(start + block).min(total);
        let members: Vec<LinearPhMember> = range
            .clone()
            .map(|i| plan.ensemble.member(i).unwrap())
            .collect();
        let level = SimdLevel::get();
        let expected = bits(
            &FastBlock::new(plan, &members)
                .unwrap()
                .run(plan, level)
                .into_members(),
        );
        // With the run's shared operators, and with none (each block builds its own).
        for shared in [SharedOperators::of(plan), SharedOperators::default()] {
            let from_plan = FastBlock::of_range(plan, &shared, range.clone()).unwrap();
            assert_eq!(
                bits(&from_plan.run(plan, level).into_members()),
                expected,
                "{what}, block at {start}"
            );
        }
    }
}

#[test]
fn set_up_from_the_plan_is_the_set_up_from_the_members() {
    for recording in [ALL, FINAL_STATE] {
        // Stack draws (n ≤ 5), heap draws with the stack set-up (n ≤ 8), the general
        // set-up (n > 8); every parameter drawn, or x0 alone (shared operators).
        for n in [1, 2, 3, 5, 6, 8, 10] {
            for all in [true, false] {
                for stages in [1, 2, 3] {
                    let scheme = Scheme::new(SchemeFamily::Gauss, stages).unwrap();
                    let plan = plan(random_nominal(n, 2), spec(21, all), scheme, recording);
                    assert_same_blocks(&plan, &format!("n = {n}, all drawn {all}, s = {stages}"));
                }
            }
        }
        // The Lobatto pair's block-diagonal draws.
        let chain = LinearPhMember {
            system: mass_spring_damper_chain(2, 1.0, 0.05).unwrap(),
            x0: chain_initial_state(2),
        };
        let mut lobatto = spec(19, true);
        lobatto.j = Draw::Fixed;
        let scheme = Scheme::new(SchemeFamily::LobattoPair, 3).unwrap();
        assert_same_blocks(&plan(chain, lobatto, scheme, recording), "lobatto pair");
    }
}

#[test]
fn a_bad_draw_is_refused_as_the_general_path_refuses_it() {
    // x0 drawn with a sigma that overflows its energy: member 0's draw fails first.
    for all in [true, false] {
        for n in [2, 10] {
            let mut spec = spec(9, all);
            spec.x0 = perturb(1e308);
            let plan = plan(
                random_nominal(n, 1),
                spec,
                Scheme::new(SchemeFamily::Gauss, 2).unwrap(),
                ALL,
            );
            let general = (0..9)
                .map(|i| plan.ensemble.member(i))
                .collect::<harbor::Result<Vec<_>>>()
                .unwrap_err()
                .to_string();
            for shared in [SharedOperators::of(&plan), SharedOperators::default()] {
                let from_plan = FastBlock::of_range(&plan, &shared, 0..9)
                    .unwrap_err()
                    .to_string();
                assert_eq!(from_plan, general, "n = {n}, all drawn {all}");
                assert!(from_plan.contains("member 0"), "{from_plan}");
            }
        }
    }
}
