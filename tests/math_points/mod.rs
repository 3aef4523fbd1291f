//! Sample points, reference values and ulp distances shared by the CPU and GPU tests of
//! the f64 math library (src/kernels/math.rs, shaders/shared/math_f64.wgsl).

#![allow(dead_code)]

use std::f64::consts::{FRAC_PI_2, PI};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// |x| up to which sin and cos reduce exactly: 2^20·π/2.
pub const TRIG_RANGE: f64 = 1_647_099.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Sin,
    Cos,
    Exp,
    Log,
}

impl Func {
    pub const ALL: [Func; 4] = [Func::Sin, Func::Cos, Func::Exp, Func::Log];

    pub fn name(self) -> &'static str {
        match self {
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Exp => "exp",
            Func::Log => "log",
        }
    }

    /// Rust's std (the platform libm), the reference.
    pub fn std(self, x: f64) -> f64 {
        match self {
            Func::Sin => x.sin(),
            Func::Cos => x.cos(),
            Func::Exp => x.exp(),
            Func::Log => x.ln(),
        }
    }

    /// The CPU twin.
    pub fn twin(self, x: f64) -> f64 {
        use harbor::kernels::math::*;
        match self {
            Func::Sin => math_sin(x),
            Func::Cos => math_cos(x),
            Func::Exp => math_exp(x),
            Func::Log => math_log(x),
        }
    }

    pub fn index(self) -> usize {
        Func::ALL.iter().position(|&f| f == self).unwrap()
    }
}

/// One row of the accuracy tables: a function on a range.
pub struct Case {
    pub func: Func,
    pub range: &'static str,
    pub points: Vec<f64>,
}

/// The seeded generator: fixed seed, or HARBOR_TEST_SEED to try another.
pub fn rng(test: &str) -> ChaCha8Rng {
    let seed = std::env::var("HARBOR_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6861_7262_6f72);
    eprintln!("{test}: seed {seed} (override with HARBOR_TEST_SEED)");
    ChaCha8Rng::seed_from_u64(seed)
}

/// Order-preserving map of an f64 onto the integers: adjacent floats differ by one, ±0
/// both map to 0.
pub fn ordinal(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    if bits < 0 { -(bits & i64::MAX) } else { bits }
}

/// Distance in ulps through the integer representation; two NaNs are 0 apart, a NaN and
/// a number u64::MAX.
pub fn ulps(a: f64, b: f64) -> u64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => 0,
        (false, false) => (ordinal(a) as i128 - ordinal(b) as i128).unsigned_abs() as u64,
        _ => u64::MAX,
    }
}

/// x moved by `steps` ulps.
pub fn nudge(x: f64, steps: i64) -> f64 {
    let o = ordinal(x) + steps;
    if o < 0 {
        -f64::from_bits((-o) as u64)
    } else {
        f64::from_bits(o as u64)
    }
}

fn uniform(rng: &mut ChaCha8Rng, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(lo..=hi)).collect()
}

/// |x| log-uniform in [lo, hi], random sign if `signed`.
fn log_uniform(rng: &mut ChaCha8Rng, n: usize, lo: f64, hi: f64, signed: bool) -> Vec<f64> {
    let (a, b) = (lo.ln(), hi.ln());
    (0..n)
        .map(|_| {
            let x = rng.random_range(a..=b).exp().clamp(lo, hi);
            if signed && rng.random::<bool>() {
                -x
            } else {
                x
            }
        })
        .collect()
}

/// Near multiples k·π/2, |k| ≤ kmax: the double nearest k·π/2 moved by up to ±1000 ulps
/// (a third of the points exactly on it).
fn near_pio2(rng: &mut ChaCha8Rng, n: usize, kmax: i64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let k = rng.random_range(-kmax..=kmax);
            let x = k as f64 * FRAC_PI_2;
            if i % 3 == 0 {
                x
            } else {
                nudge(x, rng.random_range(-1000..=1000))
            }
        })
        .collect()
}

/// The accuracy cases, `n` points each (a few get 2n).
pub fn cases(rng: &mut ChaCha8Rng, n: usize) -> Vec<Case> {
    let mut cases = Vec::new();
    for func in [Func::Sin, Func::Cos] {
        let rows: [(&'static str, Vec<f64>); 6] = [
            ("[-1e5, 1e5]", uniform(rng, 2 * n, -1e5, 1e5)),
            ("[-2pi, 2pi]", uniform(rng, 2 * n, -2.0 * PI, 2.0 * PI)),
            (
                "k*pi/2 +- 1000 ulp, |k| <= 63662",
                near_pio2(rng, n, 63_662),
            ),
            (
                "k*pi/2 +- 1000 ulp, |k| <= 2^20",
                near_pio2(rng, n, 1 << 20),
            ),
            (
                "|x| in [1e5, 2^20*pi/2]",
                log_uniform(rng, n, 1e5, TRIG_RANGE, true),
            ),
            (
                "|x| in [1e-300, 1] log",
                log_uniform(rng, n, 1e-300, 1.0, true),
            ),
        ];
        for (range, points) in rows {
            cases.push(Case {
                func,
                range,
                points,
            });
        }
    }
    let exp_rows: [(&'static str, Vec<f64>); 5] = [
        (
            "[-745.13, 709.78]",
            uniform(rng, 2 * n, -745.133_219_101_941, 709.782_712_893_384),
        ),
        (
            "[-745.13, -708.4] (subnormal results)",
            uniform(rng, n, -745.133_219_101_941, -708.396_418_532_264),
        ),
        ("[-1, 1]", uniform(rng, n, -1.0, 1.0)),
        ("[-1e-3, 1e-3]", uniform(rng, n, -1e-3, 1e-3)),
        (
            "|x| in [1e-300, 1e-3] log",
            log_uniform(rng, n, 1e-300, 1e-3, true),
        ),
    ];
    for (range, points) in exp_rows {
        cases.push(Case {
            func: Func::Exp,
            range,
            points,
        });
    }
    let log_rows: [(&'static str, Vec<f64>); 6] = [
        (
            "[1e-300, 1e300] log",
            log_uniform(rng, 2 * n, 1e-300, 1e300, false),
        ),
        (
            "all positive normals (random bits)",
            (0..n)
                .map(|_| {
                    f64::from_bits(rng.random_range(0x0010_0000_0000_0000..0x7ff0_0000_0000_0000))
                })
                .collect(),
        ),
        ("[0.5, 2]", uniform(rng, 2 * n, 0.5, 2.0)),
        ("1 +- 1e-6", uniform(rng, n, 1.0 - 1e-6, 1.0 + 1e-6)),
        (
            "1 +- 1000 ulp",
            (0..n)
                .map(|_| nudge(1.0, rng.random_range(-1000..=1000)))
                .collect(),
        ),
        (
            "subnormal x",
            (0..n)
                .map(|_| f64::from_bits(rng.random_range(1..0x0010_0000_0000_0000)))
                .collect(),
        ),
    ];
    for (range, points) in log_rows {
        cases.push(Case {
            func: Func::Log,
            range,
            points,
        });
    }
    cases
}

/// Special inputs evaluated by every function (compared with the twin).
pub fn specials() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        5e-324,
        -5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        709.782_712_893_384,
        709.79,
        710.0,
        -745.133_219_101_941,
        -745.14,
        -746.0,
        -740.0,
        1e300,
        -1e300,
        FRAC_PI_2,
        PI,
        1e-300,
        std::f64::consts::E,
        2.0,
        0.5,
        1e6,
        1e9,
        4e15,
        4503599627370496.0,
        1e20,
    ]
}
