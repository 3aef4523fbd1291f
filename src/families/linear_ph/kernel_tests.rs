//! Tests of the linear-PH GPU kernel's chunks (`kernel.rs`).

use super::*;
use crate::families::RunPlan;
use crate::io::config::Config;

/// A plan of `members` members of n = `states` (J canonical, Q diagonal, a sine input and
/// a silent one, 0 throughout): every part drawn (`drawn` = "all") or x0 alone, recording
/// `record` (final-state, outputs, energy or all).
fn plan(states: usize, drawn: &str, record: &str, members: usize) -> LinearPhPlan {
    let half = states / 2;
    let matrix = |cols: usize, f: &dyn Fn(usize, usize) -> f64| {
        let rows: Vec<String> = (0..states)
            .map(|i| {
                let row: Vec<String> = (0..cols).map(|k| format!("{:?}", f(i, k))).collect();
                format!("[{}]", row.join(", "))
            })
            .collect();
        format!("[{}]", rows.join(", "))
    };
    let j = matrix(states, &|i, k| match (i < half, k < half) {
        (true, false) if k - half == i => 1.0,
        (false, true) if i - half == k => -1.0,
        _ => 0.0,
    });
    let q = matrix(states, &|i, k| {
        if i == k { 1.0 + i as f64 / 4.0 } else { 0.0 }
    });
    let b = matrix(2, &|i, k| (i + k + 1) as f64 / 3.0);
    let parts = match drawn {
        "all" => {
            r#"J = { kind = "perturb", sigma = 0.05 }
            R = { kind = "random", scale = 0.02 }
            Q = { kind = "perturb", sigma = 0.05 }
            B = { kind = "perturb", sigma = 0.05 }
            x0 = { kind = "perturb", sigma = 0.05 }"#
        }
        _ => r#"x0 = { kind = "perturb", sigma = 0.05 }"#,
    };
    let (trajectory, energy, outputs) = match record {
        "final-state" => (false, false, false),
        "outputs" => (false, false, true),
        "energy" => (false, true, false),
        _ => (true, true, true),
    };
    let text = format!(
        r#"
[system]
kind = "linear-ph"
J = {j}
Q = {q}
B = {b}
x0 = {x0:?}

[[input]]
kind = "sine"
frequency = 0.5

[[input]]
kind = "constant"
value = 0.0

[scheme]
family = "gauss"
stages = 2
h = 0.01
t_end = 0.1

[output]
every = 5
trajectory = {trajectory}
energy = {energy}
outputs = {outputs}

[ensemble]
members = {members}
seed = 7
{parts}
"#,
        x0 = vec![0.5; states],
    );
    let config = Config::from_str_with(&text, &[], "test").unwrap();
    let RunPlan::LinearPh(plan) = config.run_plan().unwrap() else {
        panic!("a linear-PH config")
    };
    *plan
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The chunks the fast set-up builds, from member indices and from drawn members, are
/// the general path's (each member's `kernel_operators` packed by `pack_operators`)
/// bit for bit, over several blocks and a partial last group, for every kind of
/// ensemble and recording.
#[test]
fn stack_chunks_are_the_general_chunks() {
    for (states, drawn) in [(2, "all"), (2, "x0"), (4, "all"), (8, "all")] {
        for record in ["final-state", "outputs", "energy", "all"] {
            let count = 2 * 1024 + 13;
            let plan = plan(states, drawn, record, count);
            let members = plan.ensemble.members_in_order(0..count).unwrap();
            let operators: Vec<StepOperators> = members
                .iter()
                .map(|member| plan.kernel_operators(member, plan.recording()).unwrap())
                .collect();
            let rank = operators.iter().map(|o| o.rank).max().unwrap();
            let shape = plan.shape(rank, false);
            let kernel = shape.kernel();
            let params = pack_operators(&operators, &shape);
            let state = initial_states(&kernel.state, &members);
            let case = format!("n = {states}, {drawn} drawn, recording {record}");

            let from_members = plan.kernel_chunk(&members).unwrap();
            let spec = plan.record_spec().clone();
            let RangeChunk { chunk, starts } = plan
                .kernel_chunk_range(0..count, &spec)
                .expect("the stack set-up builds these");
            for built in [&from_members, &chunk] {
                assert_eq!(built.kernel, kernel, "{case}");
                assert_eq!(bits(&built.params), bits(&params), "{case}");
                assert_eq!(bits(&built.state), bits(&state), "{case}");
            }
            assert_eq!(starts.len(), count, "{case}");
            for (start, member) in starts.iter().zip(&members) {
                let mut expected = MemberResult::with_capacity(&spec, 0);
                plan.record_start(member, &mut expected);
                assert_eq!(
                    bits(&start.trajectory),
                    bits(&expected.trajectory),
                    "{case}"
                );
            }
        }
    }
}
