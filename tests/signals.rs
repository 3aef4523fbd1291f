//! Input signals against independent values. Chirp and square reference values were
//! computed with scipy 1.17.1: `scipy.signal.chirp(t, f0, t1, f1, method='linear', phi)` and
//! `scipy.signal.square(2π f t + phase, duty)`.

use std::f64::consts::PI;
use std::path::Path;

use harbor::model::{Signal, SignalSpec};

fn signal(toml_text: &str) -> Signal {
    let spec: SignalSpec = toml::from_str(toml_text).unwrap();
    Signal::from_spec("input[0]", &spec, Path::new(".")).unwrap()
}

fn close(found: f64, expected: f64, what: &str) {
    assert!(
        (found - expected).abs() <= 1e-14,
        "{what}: found {found:.17e}, expected {expected:.17e}"
    );
}

#[test]
fn chirp_matches_scipy() {
    let ts = [0.0, 0.37, 1.0, 2.5, 7.3];
    let a = signal("kind = 'chirp'\nf0 = 0.5\nf1 = 3.0\nt1 = 4.0\nphi = 30.0");
    let scipy_a = [
        0.8660254037844387,
        -0.3746268213405523,
        0.7933533402912355,
        -0.2270762630343711,
        -0.7561390817803093,
    ];
    let b = signal("kind = 'chirp'\nf0 = 2.0\nf1 = 0.1\nt1 = 10.0");
    let scipy_b = [
        1.0,
        -0.14404497976196293,
        0.8270805742745615,
        -0.8314696123025438,
        -0.9724432114359504,
    ];
    for (i, &t) in ts.iter().enumerate() {
        close(a.value(t), scipy_a[i], &format!("chirp a at t = {t}"));
        close(b.value(t), scipy_b[i], &format!("chirp b at t = {t}"));
    }
}

#[test]
fn square_matches_scipy() {
    let ts = [0.0, 0.1, 0.29, 0.31, 0.5, 0.99, 1.05, -0.2];
    let a = signal("kind = 'square'\nfrequency = 1.0\nduty = 0.3");
    let scipy_a = [1.0, 1.0, 1.0, -1.0, -1.0, -1.0, 1.0, -1.0];
    let b = signal("kind = 'square'\nfrequency = 2.0\nphase = 1.0");
    let scipy_b = [1.0, 1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0];
    for (i, &t) in ts.iter().enumerate() {
        assert_eq!(a.value(t), scipy_a[i], "square a at t = {t}");
        assert_eq!(b.value(t), scipy_b[i], "square b at t = {t}");
    }
    // Edges: rises at t = k, falls at t = k + 0.3.
    let edges = a.breakpoints(2.5);
    let expected = [0.3, 1.0, 1.3, 2.0, 2.3];
    assert_eq!(edges.len(), expected.len(), "{edges:?}");
    for (e, x) in edges.iter().zip(expected) {
        close(*e, x, "square edge");
    }
}

#[test]
fn harmonic_pulse_constant_zero() {
    let sine =
        signal("kind = 'sine'\namplitude = 2.0\nfrequency = 0.5\nphase = 0.25\noffset = 1.0");
    let cosine = signal("kind = 'cosine'\nfrequency = 0.5");
    let pulse = signal("kind = 'pulse'\nstart = 8.0\nend = 10.0");
    for t in [0.0, 0.3, 1.7, 8.0, 8.5, 9.0, 9.99, 10.0, 12.0] {
        close(sine.value(t), 1.0 + 2.0 * (PI * t + 0.25).sin(), "sine");
        close(cosine.value(t), (PI * t).cos(), "cosine");
        let expected = if (8.0..=10.0).contains(&t) {
            (PI * (t - 8.0) / 2.0).sin().powi(2)
        } else {
            0.0
        };
        close(pulse.value(t), expected, "pulse");
    }
    close(pulse.value(9.0), 1.0, "pulse peak");
    assert_eq!(pulse.breakpoints(18.0), vec![8.0, 10.0]);
    assert_eq!(signal("kind = 'constant'\nvalue = -2.5").value(3.0), -2.5);
    assert_eq!(signal("kind = 'zero'").value(3.0), 0.0);
}

#[test]
fn csv_samples_are_interpolated_linearly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("u.csv"),
        "# measured input\ntime,force,torque\n0,0,10\n1,2,20\n3,-2,30\n",
    )
    .unwrap();
    let spec = |extra: &str| -> SignalSpec {
        toml::from_str(&format!("kind = 'csv'\npath = 'u.csv'\n{extra}")).unwrap()
    };
    let by_index = Signal::from_spec("input[0]", &spec(""), dir.path()).unwrap();
    let by_name = Signal::from_spec("input[0]", &spec("column = 'torque'"), dir.path()).unwrap();
    for (t, force, torque) in [
        (0.0, 0.0, 10.0),
        (0.5, 1.0, 15.0),
        (1.0, 2.0, 20.0),
        (2.0, 0.0, 25.0),
        (3.0, -2.0, 30.0),
    ] {
        close(by_index.value(t), force, "force");
        close(by_name.value(t), torque, "torque");
    }
    let hold = Signal::from_spec("input[0]", &spec("outside = 'hold'"), dir.path()).unwrap();
    let zero = Signal::from_spec("input[0]", &spec("outside = 'zero'"), dir.path()).unwrap();
    assert_eq!(hold.value(5.0), -2.0);
    assert_eq!(zero.value(5.0), 0.0);
    assert!(by_index.check_covers("input[0]", 3.0).is_ok());
    assert!(by_index.check_covers("input[0]", 3.5).is_err());
    assert!(hold.check_covers("input[0]", 3.5).is_ok());
    assert_eq!(by_index.breakpoints(3.0), vec![1.0]);
}
