//! Every bad contact-system input gets a clear error naming the field, the violated
//! property and the measured value; `harbor simulate` exits non-zero and writes nothing.
//! The base config is examples/contact_damped_oscillator.toml (n = 1, harmonic K = [[1]],
//! constant α = 0.1, Strang, h = 0.01, t_end = 10), changed by `--set` overrides or
//! replaced by a config written here.

mod common;

use harbor::contact::ContactConfig;
use harbor::io::Config;

use common::{assert_mentions, simulate_fails_with, simulate_outcome};

/// The damped-oscillator example with overrides.
fn simulate_fails(overrides: &[&str]) -> String {
    simulate_fails_with(
        &common::example_path("contact_damped_oscillator.toml"),
        overrides,
    )
}

/// A config written from `text`, with overrides.
fn simulate_fails_text(text: &str, overrides: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contact.toml");
    std::fs::write(&path, text).unwrap();
    simulate_fails_with(&path, overrides)
}

/// Every composition of the registry (`harbor splitting --list`).
const COMPOSITIONS: [&str; 11] = [
    "strang",
    "triple-jump-4",
    "triple-jump-6",
    "triple-jump-8",
    "suzuki-4",
    "yoshida-6a",
    "yoshida-6b",
    "yoshida-6c",
    "kahan-li-6",
    "mclachlan-8",
    "kahan-li-8",
];

/// The example without its `composition` line.
const NO_COMPOSITION: &str = r#"
[system]
kind = "contact"
x0 = [0.5]
p0 = [0.5]
potential = [{ kind = "harmonic", K = [[1.0]] }]
damping = { kind = "constant", alpha = 0.1 }

[scheme]
family = "splitting"
h = 0.01
t_end = 10.0
"#;

#[test]
fn unknown_composition_lists_the_available_ones() {
    let e = simulate_fails(&["scheme.composition=strange"]);
    assert_mentions(
        &e,
        &[
            "scheme.composition",
            "unknown composition \"strange\"",
            "available: ",
        ],
    );
    assert_mentions(&e, &COMPOSITIONS);
    let e = simulate_fails(&["scheme.composition=\"Strang\""]);
    assert_mentions(&e, &["scheme.composition", "\"Strang\"", "strang"]);
}

#[test]
fn missing_composition_for_splitting() {
    let e = simulate_fails_text(NO_COMPOSITION, &[]);
    assert_mentions(
        &e,
        &[
            "scheme.composition",
            "is required for splitting",
            "available: ",
        ],
    );
    assert_mentions(&e, &COMPOSITIONS);
}

/// Herglotz takes a composition of its steps from the same registry, and refuses an
/// unknown one the same way.
#[test]
fn unknown_composition_with_herglotz() {
    let e = simulate_fails(&["scheme.family=herglotz", "scheme.composition=strange"]);
    assert_mentions(
        &e,
        &[
            "scheme.composition",
            "unknown composition \"strange\"",
            "available: ",
        ],
    );
    assert_mentions(&e, &COMPOSITIONS);
}

/// `system.time_sampling` takes "endpoints" or "midpoint"; anything else is refused naming
/// the field and the two values, and herglotz (whose discrete Lagrangian fixes its times)
/// refuses the key.
#[test]
fn bad_time_sampling_names_the_field() {
    for bad in ["\"middle\"", "\"Midpoint\"", "1", "true"] {
        let e = simulate_fails(&[&format!("system.time_sampling={bad}")]);
        assert_mentions(&e, &["system.time_sampling"]);
        if bad.starts_with('"') {
            assert_mentions(&e, &["endpoints", "midpoint"]);
        }
    }
    let e = simulate_fails_text(
        NO_COMPOSITION,
        &[
            "scheme.family=\"herglotz\"",
            "system.time_sampling=\"endpoints\"",
        ],
    );
    assert_mentions(
        &e,
        &[
            "system.time_sampling",
            "is \"endpoints\", but it applies to splitting schemes",
            "herglotz",
        ],
    );
    // Both values are accepted by a splitting scheme.
    for good in ["endpoints", "midpoint"] {
        let overrides = [format!("system.time_sampling=\"{good}\"")];
        let config = Config::load(
            &common::example_path("contact_damped_oscillator.toml"),
            &overrides,
        )
        .unwrap();
        assert!(config.contact_plan().is_ok(), "{good}");
    }
}

#[test]
fn non_positive_and_non_finite_step() {
    for (h, shown) in [
        ("0.0", "got 0"),
        ("-0.01", "got -0.01"),
        ("nan", "got NaN"),
        ("inf", "got inf"),
        ("-inf", "got -inf"),
    ] {
        let e = simulate_fails(&[&format!("scheme.h={h}")]);
        assert_mentions(&e, &["scheme.h", "must be a finite number > 0", shown]);
    }
    for (t_end, shown) in [("0.0", "got 0"), ("-1.0", "got -1"), ("nan", "got NaN")] {
        let e = simulate_fails(&[&format!("scheme.t_end={t_end}")]);
        assert_mentions(&e, &["scheme.t_end", "must be a finite number > 0", shown]);
    }
}

#[test]
fn t_end_not_a_whole_number_of_steps() {
    let e = simulate_fails(&["scheme.h=0.03"]);
    assert_mentions(
        &e,
        &["scheme.h", "whole number of steps", "10 / 0.03 = 333.3"],
    );
    let e = simulate_fails(&["scheme.t_end=10.005"]);
    assert_mentions(&e, &["scheme.h", "whole number of steps", "10.005 / 0.01"]);
    let e = simulate_fails(&["scheme.h=20.0"]);
    assert_mentions(&e, &["scheme.h", "whole number of steps", "10 / 20 = 0.5"]);
}

#[test]
fn output_every_zero() {
    let e = simulate_fails(&["output.every=0"]);
    assert_mentions(&e, &["output.every", "must be ≥ 1, got 0"]);
}

#[test]
fn kepler_at_the_origin_and_non_positive_gamma() {
    let kepler = "system.potential=[{kind = \"kepler\", gamma = 1.0}]";
    let e = simulate_fails(&[kepler, "system.x0=[0.0, 0.0]", "system.p0=[0.0, 1.0]"]);
    assert_mentions(
        &e,
        &["system.x0", "Kepler", "undefined at x = 0", "|x0| = 0"],
    );
    let e = simulate_fails(&[kepler, "system.x0=[0.0]"]);
    assert_mentions(&e, &["system.x0", "Kepler", "|x0| = 0"]);
    for (gamma, shown) in [("0.0", "got 0"), ("-1.0", "got -1"), ("nan", "got NaN")] {
        let e = simulate_fails(&[&format!(
            "system.potential=[{{kind = \"kepler\", gamma = {gamma}}}]"
        )]);
        assert_mentions(
            &e,
            &[
                "system.potential[0].gamma",
                "must be a finite number > 0",
                shown,
            ],
        );
    }
}

#[test]
fn eccentricity_outside_zero_one() {
    for (e, shown) in [
        ("1.0", "got 1"),
        ("1.5", "got 1.5"),
        ("-0.2", "got -0.2"),
        ("nan", "got NaN"),
    ] {
        let err = simulate_fails(&[&format!(
            "system.potential=[{{kind = \"spin-orbit\", epsilon = 0.1, eccentricity = {e}}}]"
        )]);
        assert_mentions(
            &err,
            &["system.potential[0].eccentricity", "0 ≤ e < 1", shown],
        );
        let err = simulate_fails(&[&format!(
            "system.damping={{kind = \"tidal\", eta = 0.01, eccentricity = {e}}}"
        )]);
        assert_mentions(&err, &["system.damping.eccentricity", "0 ≤ e < 1", shown]);
    }
}

/// The spin–orbit term and the tidal damping describe one orbit: their eccentricities must
/// agree.
#[test]
fn spin_orbit_and_tide_share_one_orbit() {
    let err = simulate_fails(&[
        "system.potential=[{kind = \"spin-orbit\", epsilon = 0.1, eccentricity = 0.2}]",
        "system.damping={kind = \"tidal\", eta = 0.01, eccentricity = 0.1}",
    ]);
    assert_mentions(
        &err,
        &[
            "system.damping.eccentricity",
            "share one orbit",
            "0.2",
            "got 0.1",
        ],
    );
}

const TWO_DOF: [&str; 3] = [
    "system.x0=[0.5, 0.1]",
    "system.p0=[0.5, 0.0]",
    "system.potential=[{kind = \"harmonic\", K = [[1.0, 0.0], [0.0, 1.0]]}]",
];

#[test]
fn kinetic_not_symmetric_positive_definite() {
    let with = |extra: &str| {
        let mut o = TWO_DOF.to_vec();
        o.push(extra);
        simulate_fails(&o)
    };
    let e = with("system.kinetic=[[1.0, 0.0], [0.0, -1.0]]");
    assert_mentions(
        &e,
        &[
            "system.kinetic",
            "not positive definite",
            "smallest eigenvalue -1.000e0",
        ],
    );
    let e = with("system.kinetic=[[1.0, 0.0], [0.0, 0.0]]");
    assert_mentions(
        &e,
        &[
            "system.kinetic",
            "not positive definite",
            "smallest eigenvalue 0.000e0",
        ],
    );
    let e = with("system.kinetic=[[1.0, 0.5], [0.0, 1.0]]");
    assert_mentions(&e, &["system.kinetic", "not symmetric", "5.000e-1"]);
}

#[test]
fn harmonic_k_not_symmetric() {
    let e = simulate_fails(&[
        TWO_DOF[0],
        TWO_DOF[1],
        "system.potential=[{kind = \"harmonic\", K = [[1.0, 0.5], [0.0, 1.0]]}]",
    ]);
    assert_mentions(&e, &["system.potential[0].K", "not symmetric", "5.000e-1"]);
}

#[test]
fn wrong_vector_lengths_and_shapes() {
    let e = simulate_fails(&["system.p0=[0.5, 0.1]"]);
    assert_mentions(
        &e,
        &[
            "system.p0",
            "wrong length",
            "expected 1",
            "n = 1 from system.x0",
            "found 2",
        ],
    );
    let e = simulate_fails(&["system.x0=[0.5, 0.1]"]);
    assert_mentions(&e, &["system.p0", "expected 2", "found 1"]);
    let e = simulate_fails(&["system.kinetic=[[1.0, 0.0], [0.0, 1.0]]"]);
    assert_mentions(
        &e,
        &[
            "system.kinetic",
            "wrong shape",
            "expected 1×1",
            "found 2 rows",
        ],
    );
    let e = simulate_fails(&["system.potential.0.K=[[1.0, 0.0]]"]);
    assert_mentions(
        &e,
        &[
            "system.potential[0].K",
            "wrong shape",
            "row 0 has 2 entries",
        ],
    );
    let e = simulate_fails(&[
        "system.potential=[{kind = \"harmonic\", K = [[1.0]]}, {kind = \"forcing\", amplitude = [0.1, 0.2], signal = {kind = \"cosine\", frequency = 0.2}}]",
    ]);
    assert_mentions(
        &e,
        &["system.potential[1].amplitude", "has length 2", "n = 1"],
    );
    let e = simulate_fails(&["system.x0=[]", "system.p0=[]"]);
    assert_mentions(&e, &["system.x0", "at least one entry"]);
}

#[test]
fn nan_and_infinite_parameters() {
    let cases: [(&[&str], &[&str]); 11] = [
        (
            &["system.damping.alpha=nan"],
            &["system.damping.alpha", "finite", "NaN"],
        ),
        (&["system.z0=nan"], &["system.z0", "finite", "NaN"]),
        (&["system.x0=[nan]"], &["system.x0[0]", "not finite", "NaN"]),
        (&["system.p0=[inf]"], &["system.p0[0]", "not finite", "inf"]),
        (
            &["system.potential.0.K=[[nan]]"],
            &["system.potential[0].K[0][0]", "not finite", "NaN"],
        ),
        (
            &["system.kinetic=[[inf]]"],
            &["system.kinetic[0][0]", "not finite", "inf"],
        ),
        (
            &[
                "system.potential=[{kind = \"harmonic\", K = [[1.0]]}, {kind = \"quartic\", beta = nan}]",
            ],
            &["system.potential[1].beta", "finite", "NaN"],
        ),
        (
            &["system.potential=[{kind = \"pendulum\", omega = inf}]"],
            &["system.potential[0].omega", "finite", "inf"],
        ),
        (
            &["system.potential=[{kind = \"spin-orbit\", epsilon = nan, eccentricity = 0.1}]"],
            &["system.potential[0].epsilon", "finite", "NaN"],
        ),
        (
            &["system.damping={kind = \"tidal\", eta = nan, eccentricity = 0.1}"],
            &["system.damping.eta", "finite", "NaN"],
        ),
        (
            &[
                "system.damping={kind = \"signal\", alpha = 0.1, signal = {kind = \"sine\", frequency = nan}}",
            ],
            &["system.damping.signal.frequency", "finite", "NaN"],
        ),
    ];
    for (overrides, parts) in cases {
        let e = simulate_fails(overrides);
        assert_mentions(&e, parts);
    }
    let e = simulate_fails(&[
        "system.potential=[{kind = \"harmonic\", K = [[1.0]]}, {kind = \"forcing\", amplitude = [nan], signal = {kind = \"cosine\", frequency = 0.2}}]",
    ]);
    assert_mentions(&e, &["system.potential[1].amplitude", "finite", "NaN"]);
    let e = simulate_fails(&[
        "system.potential=[{kind = \"harmonic\", K = [[1.0]]}, {kind = \"forcing\", amplitude = [0.1], signal = {kind = \"cosine\", frequency = inf}}]",
    ]);
    assert_mentions(
        &e,
        &["system.potential[1].signal.frequency", "finite", "inf"],
    );
}

#[test]
fn two_terms_of_the_same_kind() {
    let e = simulate_fails(&[
        "system.potential=[{kind = \"harmonic\", K = [[1.0]]}, {kind = \"harmonic\", K = [[2.0]]}]",
    ]);
    assert_mentions(
        &e,
        &["system.potential", "at most one harmonic term", "found 2"],
    );
    let e = simulate_fails(&[
        "system.potential=[{kind = \"kepler\", gamma = 1.0}, {kind = \"quartic\", beta = 1.0}, {kind = \"kepler\", gamma = 2.0}]",
    ]);
    assert_mentions(
        &e,
        &["system.potential", "at most one kepler term", "found 2"],
    );
}

/// Unknown keys at the top of `[system]` and anywhere in `[ensemble]`.
#[test]
fn unknown_keys_of_system_and_ensemble() {
    let e = simulate_fails(&["system.mass=1.0"]);
    assert_mentions(
        &e,
        &["system", "unknown field `mass`", "potential", "damping"],
    );
    let e = simulate_fails(&["ensemble.members=4", "ensemble.delta=1.0"]);
    assert_mentions(
        &e,
        &["ensemble.delta", "unknown field `delta`", "amplitude"],
    );
    let e = simulate_fails(&[
        "ensemble.members=4",
        "ensemble.alpha={kind = \"perturb\", sigma = 0.1, mu = 0.0}",
    ]);
    assert_mentions(&e, &["ensemble.alpha", "unknown field `mu`", "sigma"]);
    let e = simulate_fails(&[
        "ensemble.members=4",
        "ensemble.alpha={kind = \"gaussian\", sigma = 0.1}",
    ]);
    assert_mentions(
        &e,
        &[
            "ensemble.alpha",
            "unknown variant `gaussian`",
            "perturb",
            "uniform",
        ],
    );
    // A linear-PH ensemble key on a contact system.
    let e = simulate_fails(&[
        "ensemble.members=4",
        "ensemble.J={kind = \"perturb\", sigma = 0.1}",
    ]);
    assert_mentions(&e, &["ensemble", "unknown field `J`"]);
}

/// Unknown kinds, unknown keys and wrongly typed values inside `[system]`'s potential terms
/// and damping: the message names the term by its dotted path (`system.potential[0]`,
/// `system.damping`), not just `system`.
#[test]
fn unknown_kinds_and_keys_inside_system_name_their_dotted_path() {
    let cases: [(&str, &[&str]); 6] = [
        (
            "system.potential=[{kind = \"cubic\", c = 1.0}]",
            &[
                "system.potential[0]",
                "unknown variant `cubic`",
                "harmonic",
                "spin-orbit",
            ],
        ),
        (
            "system.potential.0.stiffness=2.0",
            &["system.potential[0]", "unknown field `stiffness`"],
        ),
        (
            "system.potential.0.K=[[\"a\"]]",
            &["system.potential[0]", "got the string \"a\""],
        ),
        (
            "system.damping={kind = \"viscous\", alpha = 0.1}",
            &["system.damping", "unknown variant `viscous`", "tidal"],
        ),
        (
            "system.damping.beta=0.1",
            &["system.damping", "unknown field `beta`"],
        ),
        (
            "system.x0=\"abc\"",
            &["system.x0", "got the string \"abc\""],
        ),
    ];
    let mut unclear = Vec::new();
    for (set, parts) in cases {
        let e = simulate_fails(&[set]);
        if let Some(missing) = parts.iter().find(|p| !e.contains(*p)) {
            unclear.push(format!("--set {set}: {:?} lacks {missing:?}", e.trim()));
        }
    }
    assert!(
        unclear.is_empty(),
        "unclear messages:\n{}",
        unclear.join("\n")
    );
}

#[test]
fn method_family_must_match_the_system() {
    for family in ["gauss", "lobatto-iiia", "lobatto-pair"] {
        let e = simulate_fails(&[&format!("scheme.family={family}")]);
        assert_mentions(
            &e,
            &[
                "scheme.family",
                &format!("{family} integrates linear-ph"),
                "contact systems take splitting or herglotz",
            ],
        );
    }
    let pulse = common::example_path("oscillator_pulse.toml");
    for family in ["splitting", "herglotz"] {
        let e = simulate_fails_with(&pulse, &[&format!("scheme.family={family}")]);
        assert_mentions(
            &e,
            &[
                "scheme.family",
                &format!("{family} integrates contact systems"),
                "a linear-ph system takes gauss, lobatto-iiia or lobatto-pair",
            ],
        );
    }
    let e = simulate_fails_with(&pulse, &["scheme.composition=strang"]);
    assert_mentions(
        &e,
        &[
            "scheme.composition",
            "applies to splitting schemes, not gauss",
        ],
    );
}

#[test]
fn stages_with_a_contact_scheme() {
    let e = simulate_fails(&["scheme.stages=2"]);
    assert_mentions(
        &e,
        &[
            "scheme.stages",
            "applies to collocation schemes",
            "contact schemes take scheme.composition",
        ],
    );
    let e = simulate_fails(&["scheme.family=herglotz", "scheme.stages=2"]);
    assert_mentions(&e, &["scheme.stages", "applies to collocation schemes"]);
}

#[test]
fn input_ports_on_a_contact_system() {
    let e = simulate_fails(&["input=[{kind = \"sine\", frequency = 1.0}]"]);
    assert_mentions(
        &e,
        &[
            "input",
            "contact systems have no input ports",
            "system.potential",
        ],
    );
}

#[test]
fn bad_ensemble_draws() {
    let e = simulate_fails(&[
        "ensemble.members=4",
        "ensemble.alpha={kind = \"perturb\", sigma = -0.1}",
    ]);
    assert_mentions(
        &e,
        &[
            "ensemble.alpha.sigma",
            "must be a finite number ≥ 0",
            "got -0.1",
        ],
    );
    let e = simulate_fails(&[
        "ensemble.members=4",
        "ensemble.p0={kind = \"perturb\", sigma = nan}",
    ]);
    assert_mentions(&e, &["ensemble.p0.sigma", "got NaN"]);
    let e = simulate_fails(&[
        "ensemble.members=4",
        "ensemble.x0={kind = \"uniform\", low = 1.0, high = 0.0}",
    ]);
    assert_mentions(&e, &["ensemble.x0", "low ≤ high", "got low = 1, high = 0"]);
    let e = simulate_fails(&[
        "ensemble.members=4",
        "ensemble.z0={kind = \"uniform\", low = -inf, high = 0.0}",
    ]);
    assert_mentions(&e, &["ensemble.z0", "finite low ≤ high", "low = -inf"]);
    let e = simulate_fails(&["ensemble.members=0"]);
    assert_mentions(&e, &["ensemble.members", "must be ≥ 1, got 0"]);
    let e = simulate_fails(&["ensemble.members=-3"]);
    assert_mentions(
        &e,
        &["ensemble.members", "expected a whole number ≥ 0, got -3"],
    );
}

/// The Kepler system with γ drawn uniformly from [−1, 1]: about half the members leave the
/// domain γ > 0. Whether member 0 (checked when the plan is built) or a later member (met
/// while the run is under way) is the first bad one, the error names the member and the
/// drawn value, and nothing is written.
#[test]
fn drawn_members_outside_the_domain() {
    let overrides = |seed: u64| {
        vec![
            "system.x0=[1.0, 0.0]".to_string(),
            "system.p0=[0.0, 1.0]".to_string(),
            "system.potential=[{kind = \"kepler\", gamma = 1.0}]".to_string(),
            "scheme.t_end=0.5".to_string(),
            "ensemble.members=64".to_string(),
            format!("ensemble.seed={seed}"),
            "ensemble.gamma={kind = \"uniform\", low = -1.0, high = 1.0}".to_string(),
        ]
    };
    let config = common::example_path("contact_damped_oscillator.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    // One seed whose member 0 is valid (the error comes from a later member, during the
    // run) and one whose member 0 is not (the plan fails up front).
    let mut later = None;
    let mut first = None;
    for seed in 0..64u64 {
        let plan = Config::from_str_with(&text, &overrides(seed), "contact example")
            .unwrap()
            .contact_plan();
        match plan {
            Ok(_) if later.is_none() => later = Some(seed),
            Err(_) if first.is_none() => first = Some(seed),
            _ => {}
        }
    }
    let (later, first) = (
        later.expect("some seed draws a valid member 0"),
        first.expect("some seed draws an invalid member 0"),
    );
    for seed in [later, first] {
        let set = overrides(seed);
        let set: Vec<&str> = set.iter().map(String::as_str).collect();
        let e = simulate_fails_with(&config, &set);
        assert_mentions(
            &e,
            &[
                "ensemble member ",
                "system.potential[0].gamma",
                "must be a finite number > 0",
                "got -",
            ],
        );
        // The named member really is one that left the domain.
        let index: usize = e
            .split("ensemble member ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|i| i.trim().parse().ok())
            .unwrap_or_else(|| panic!("no member index in {e:?}"));
        if seed == later {
            assert!(
                index > 0,
                "member 0 of seed {seed} is valid, yet named: {e}"
            );
            let plan = Config::from_str_with(&text, &overrides(seed), "contact example")
                .unwrap()
                .contact_plan()
                .unwrap();
            let member = plan.member(index);
            assert!(
                member.is_err(),
                "member {index} of seed {seed} is valid, yet named: {e}"
            );
        } else {
            assert_eq!(index, 0, "member 0 of seed {seed} is the invalid one: {e}");
        }
    }
    // All members at x0 = 0 by the x0 draw, though the nominal x0 is valid.
    let e = simulate_fails(&[
        "system.x0=[1.0, 0.0]",
        "system.p0=[0.0, 1.0]",
        "system.potential=[{kind = \"kepler\", gamma = 1.0}]",
        "ensemble.members=8",
        "ensemble.x0={kind = \"uniform\", low = 0.0, high = 0.0}",
    ]);
    assert_mentions(
        &e,
        &["ensemble member 0", "system.x0", "Kepler", "|x0| = 0"],
    );
}

/// A draw of a parameter the system does not have (β without a quartic term, α without
/// damping, γ without Kepler, the amplitude without a forcing term) changes nothing; it
/// is a mistake in the config like an unknown key and should be rejected by name.
#[test]
fn draws_of_absent_parameters_are_rejected() {
    let mut accepted = Vec::new();
    for (key, term) in [
        ("beta", "quartic"),
        ("omega", "pendulum"),
        ("gamma", "kepler"),
        ("epsilon", "spin-orbit"),
        ("amplitude", "forcing"),
    ] {
        let set = format!("ensemble.{key}={{kind = \"perturb\", sigma = 0.1}}");
        match simulate_outcome(
            &common::example_path("contact_damped_oscillator.toml"),
            &["ensemble.members=4", &set],
        ) {
            Ok(_) => accepted.push(format!("{set} (no {term} term)")),
            Err(e) => assert_mentions(&e, &[&format!("ensemble.{key}"), term]),
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let undamped = dir.path().join("undamped.toml");
    std::fs::write(
        &undamped,
        NO_COMPOSITION
            .replace("damping = { kind = \"constant\", alpha = 0.1 }\n", "")
            .replace("family = \"splitting\"", "family = \"herglotz\""),
    )
    .unwrap();
    let set = "ensemble.alpha={kind = \"uniform\", low = 0.0, high = 0.5}";
    match simulate_outcome(&undamped, &["ensemble.members=4", set]) {
        Ok(_) => accepted.push(format!("{set} (no damping)")),
        Err(e) => assert_mentions(&e, &["ensemble.alpha", "damping"]),
    }
    assert!(
        accepted.is_empty(),
        "draws of parameters the system lacks were accepted (every member identical):\n{}",
        accepted.join("\n")
    );
}

/// A CSV forcing signal that does not cover [0, t_end] (with `outside = "error"`, the
/// default) is rejected before the run.
#[test]
fn csv_forcing_signal_must_cover_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    std::fs::write(&csv, "t,s\n0.0,1.0\n5.0,0.0\n").unwrap();
    let e = simulate_fails(&[&format!(
        "system.potential=[{{kind = \"harmonic\", K = [[1.0]]}}, {{kind = \"forcing\", amplitude = [0.3], signal = {{kind = \"csv\", path = \"{}\"}}}}]",
        csv.display()
    )]);
    assert_mentions(
        &e,
        &[
            "system.potential[1].signal",
            "cover [0, 5]",
            "needs [0, 10]",
        ],
    );
    let e = simulate_fails(&[&format!(
        "system.damping={{kind = \"signal\", alpha = 0.1, signal = {{kind = \"csv\", path = \"{}\"}}}}",
        csv.display()
    )]);
    assert_mentions(
        &e,
        &["system.damping.signal", "cover [0, 5]", "needs [0, 10]"],
    );
}

/// A million degrees of freedom (a long x0) is refused before its dense n × n kinetic
/// matrix is allocated, rather than aborting on the allocation.
#[test]
fn degrees_of_freedom_beyond_the_dense_limit_are_refused() {
    let n = 1_000_000;
    let zeros = vec!["0.0"; n].join(",");
    let text = format!(
        "[system]\nkind = \"contact\"\nx0 = [{zeros}]\np0 = [{zeros}]\npotential = [{{kind = \"quartic\", beta = 1.0}}]\n[scheme]\nfamily = \"splitting\"\ncomposition = \"strang\"\nh = 0.01\nt_end = 0.1\n"
    );
    let e = simulate_fails_text(&text, &[]);
    assert_mentions(
        &e,
        &["system.x0", "n = 1000000", "at most n = 4096", "7.28 TiB"],
    );
}
