//! Input signals u(t), one per input channel. Conventions follow scipy.signal where a
//! counterpart exists (`chirp(method='linear')`, `square`).

use std::f64::consts::PI;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use super::sampled::{ColumnRef, Outside};
use super::sampled::{check_samples, default_column, interpolate, read_samples};
use crate::error::{Error, Num, Result};

fn one() -> f64 {
    1.0
}

fn half() -> f64 {
    0.5
}

/// An input signal as written in a config (`[[input]]` tables, selected by `kind`).
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SignalSpec {
    /// u(t) = 0.
    Zero,
    /// u(t) = value.
    Constant {
        /// The constant value of u(t).
        value: f64,
    },
    /// u(t) = offset + amplitude · sin(2π f t + phase), f in Hz, phase in radians.
    ///
    /// Like every signal it is evaluated on the host in f64 (std's correctly reduced sin)
    /// at the times t = (k + offset_i) h of the shared stream, by every backend alike, so
    /// the GPU and the CPU see the same values at any frequency. Where 2π f t reaches 2⁵³
    /// (f t ≳ 1.4e15) an ulp of the phase is a radian or more: the values are still equal
    /// across backends but no longer resolve the wave.
    Sine {
        /// Amplitude of the wave.
        #[serde(default = "one")]
        amplitude: f64,
        /// Frequency f in Hz.
        frequency: f64,
        /// Phase in radians.
        #[serde(default)]
        phase: f64,
        /// Constant added to the wave.
        #[serde(default)]
        offset: f64,
    },
    /// u(t) = offset + amplitude · cos(2π f t + phase).
    Cosine {
        /// Amplitude of the wave.
        #[serde(default = "one")]
        amplitude: f64,
        /// Frequency f in Hz.
        frequency: f64,
        /// Phase in radians.
        #[serde(default)]
        phase: f64,
        /// Constant added to the wave.
        #[serde(default)]
        offset: f64,
    },
    /// Linear chirp, scipy.signal.chirp(method='linear'):
    /// u(t) = amplitude · cos(2π (f0 t + (f1 − f0) t² / (2 t1)) + phi·π/180), phi in degrees.
    Chirp {
        /// Amplitude of the wave.
        #[serde(default = "one")]
        amplitude: f64,
        /// Frequency f0 in Hz at t = 0.
        f0: f64,
        /// Frequency f1 in Hz at t = t1.
        f1: f64,
        /// Time t1 at which the frequency reaches f1.
        t1: f64,
        /// Phase phi in degrees.
        #[serde(default)]
        phi: f64,
    },
    /// Square wave, scipy.signal.square(2π f t + phase, duty): +amplitude while
    /// (2π f t + phase) mod 2π < 2π·duty, −amplitude otherwise.
    Square {
        /// Amplitude of the wave.
        #[serde(default = "one")]
        amplitude: f64,
        /// Frequency f in Hz.
        frequency: f64,
        /// Fraction of each period at +amplitude, in [0, 1].
        #[serde(default = "half")]
        duty: f64,
        /// Phase in radians.
        #[serde(default)]
        phase: f64,
    },
    /// The sin² pulse of Kotyczka & Lefèvre §5.1:
    /// u(t) = amplitude · sin²(π (t − start)/(end − start)) on [start, end], 0 elsewhere.
    Pulse {
        /// Time the pulse starts.
        start: f64,
        /// Time the pulse ends, > start.
        end: f64,
        /// Peak value of the pulse.
        #[serde(default = "one")]
        amplitude: f64,
    },
    /// Piecewise-linear interpolation of samples (t, u) from a CSV file: time in column 0,
    /// values in `column` (index or header name; default 1). A header row is optional.
    Csv {
        /// The CSV file, relative to the config's folder.
        path: PathBuf,
        /// The value column: a zero-based index or a header name.
        #[serde(default = "default_column")]
        column: ColumnRef,
        /// What u(t) is outside the sampled times.
        #[serde(default)]
        outside: Outside,
    },
    /// Piecewise-linear interpolation of samples written in the config (or handed over as
    /// NumPy arrays by the Python package): `values[i]` at time `t[i]`.
    Samples {
        /// The sample times, strictly increasing, at least 2.
        t: Vec<f64>,
        /// The value at each sample time, as many as `t`.
        values: Vec<f64>,
        /// What u(t) is outside the sampled times.
        #[serde(default)]
        outside: Outside,
    },
}

/// A validated, ready-to-evaluate input signal.
#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    Zero,
    Constant(f64),
    Harmonic {
        amplitude: f64,
        omega: f64,
        phase: f64,
        offset: f64,
    },
    Chirp {
        amplitude: f64,
        f0: f64,
        f1: f64,
        t1: f64,
        phi_rad: f64,
    },
    Square {
        amplitude: f64,
        omega: f64,
        duty: f64,
        phase: f64,
    },
    Pulse {
        start: f64,
        end: f64,
        amplitude: f64,
    },
    Samples {
        times: Vec<f64>,
        values: Vec<f64>,
        outside: Outside,
        /// Where the samples came from, for errors: the CSV file, or the config field.
        source: String,
    },
}

fn require_finite(field: &str, name: &str, v: f64) -> Result<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Error::invalid(
            format!("{field}.{name}"),
            format!("must be finite, got {}", Num(v)),
        ))
    }
}

impl Signal {
    /// Validates a spec; `field` names it in errors (`input[0]`), relative CSV paths are
    /// resolved against `base_dir`.
    pub fn from_spec(field: &str, spec: &SignalSpec, base_dir: &Path) -> Result<Signal> {
        let f = |name: &str, v: f64| require_finite(field, name, v);
        Ok(match spec {
            SignalSpec::Zero => Signal::Zero,
            SignalSpec::Constant { value } => Signal::Constant(f("value", *value)?),
            SignalSpec::Sine {
                amplitude,
                frequency,
                phase,
                offset,
            } => Signal::Harmonic {
                amplitude: f("amplitude", *amplitude)?,
                omega: 2.0 * PI * f("frequency", *frequency)?,
                phase: f("phase", *phase)?,
                offset: f("offset", *offset)?,
            },
            SignalSpec::Cosine {
                amplitude,
                frequency,
                phase,
                offset,
            } => Signal::Harmonic {
                amplitude: f("amplitude", *amplitude)?,
                omega: 2.0 * PI * f("frequency", *frequency)?,
                phase: f("phase", *phase)? + PI / 2.0,
                offset: f("offset", *offset)?,
            },
            SignalSpec::Chirp {
                amplitude,
                f0,
                f1,
                t1,
                phi,
            } => {
                let t1 = f("t1", *t1)?;
                if t1 <= 0.0 {
                    return Err(Error::invalid(
                        format!("{field}.t1"),
                        format!("must be > 0, got {}", Num(t1)),
                    ));
                }
                Signal::Chirp {
                    amplitude: f("amplitude", *amplitude)?,
                    f0: f("f0", *f0)?,
                    f1: f("f1", *f1)?,
                    t1,
                    phi_rad: f("phi", *phi)? * PI / 180.0,
                }
            }
            SignalSpec::Square {
                amplitude,
                frequency,
                duty,
                phase,
            } => {
                let duty = f("duty", *duty)?;
                if !(0.0..=1.0).contains(&duty) {
                    return Err(Error::invalid(
                        format!("{field}.duty"),
                        format!("must lie in [0, 1], got {}", Num(duty)),
                    ));
                }
                let frequency = f("frequency", *frequency)?;
                if frequency <= 0.0 {
                    return Err(Error::invalid(
                        format!("{field}.frequency"),
                        format!("must be > 0, got {}", Num(frequency)),
                    ));
                }
                Signal::Square {
                    amplitude: f("amplitude", *amplitude)?,
                    omega: 2.0 * PI * frequency,
                    duty,
                    phase: f("phase", *phase)?,
                }
            }
            SignalSpec::Pulse {
                start,
                end,
                amplitude,
            } => {
                let (start, end) = (f("start", *start)?, f("end", *end)?);
                if end <= start {
                    return Err(Error::invalid(
                        format!("{field}.end"),
                        format!(
                            "must be greater than start = {}, got {}",
                            Num(start),
                            Num(end)
                        ),
                    ));
                }
                Signal::Pulse {
                    start,
                    end,
                    amplitude: f("amplitude", *amplitude)?,
                }
            }
            SignalSpec::Csv {
                path,
                column,
                outside,
            } => {
                let source = base_dir.join(path);
                let (times, values) = read_samples(field, &source, column)?;
                Signal::Samples {
                    times,
                    values,
                    outside: *outside,
                    source: source.display().to_string(),
                }
            }
            SignalSpec::Samples { t, values, outside } => {
                check_samples(field, t, values)?;
                Signal::Samples {
                    times: t.clone(),
                    values: values.clone(),
                    outside: *outside,
                    source: format!("{field}.t"),
                }
            }
        })
    }

    /// u(t).
    pub fn value(&self, t: f64) -> f64 {
        match self {
            Signal::Zero => 0.0,
            Signal::Constant(v) => *v,
            Signal::Harmonic {
                amplitude,
                omega,
                phase,
                offset,
            } => offset + amplitude * (omega * t + phase).sin(),
            Signal::Chirp {
                amplitude,
                f0,
                f1,
                t1,
                phi_rad,
            } => {
                let phase = 2.0 * PI * (f0 * t + 0.5 * (f1 - f0) * t * t / t1);
                amplitude * (phase + phi_rad).cos()
            }
            Signal::Square {
                amplitude,
                omega,
                duty,
                phase,
            } => {
                let w = (omega * t + phase).rem_euclid(2.0 * PI);
                if w < 2.0 * PI * duty {
                    *amplitude
                } else {
                    -amplitude
                }
            }
            Signal::Pulse {
                start,
                end,
                amplitude,
            } => {
                if t < *start || t > *end {
                    0.0
                } else {
                    let s = (PI * (t - start) / (end - start)).sin();
                    amplitude * s * s
                }
            }
            Signal::Samples {
                times,
                values,
                outside,
                ..
            } => interpolate(times, values, *outside, t),
        }
    }

    /// Whether u(t) = 0 at every t: a `zero` signal, a constant 0, a signal of amplitude 0
    /// (with offset 0), or samples that are all 0. Its term B u vanishes exactly, whatever B.
    pub fn is_identically_zero(&self) -> bool {
        match self {
            Signal::Zero => true,
            Signal::Constant(value) => *value == 0.0,
            Signal::Harmonic {
                amplitude, offset, ..
            } => *amplitude == 0.0 && *offset == 0.0,
            Signal::Chirp { amplitude, .. }
            | Signal::Square { amplitude, .. }
            | Signal::Pulse { amplitude, .. } => *amplitude == 0.0,
            Signal::Samples { values, .. } => values.iter().all(|&v| v == 0.0),
        }
    }

    /// Times in (0, t_end) where the signal or one of its low derivatives jumps; a
    /// high-accuracy reference integrates between them.
    pub fn breakpoints(&self, t_end: f64) -> Vec<f64> {
        let inside = |t: &f64| *t > 0.0 && *t < t_end;
        match self {
            Signal::Pulse { start, end, .. } => [*start, *end].into_iter().filter(inside).collect(),
            Signal::Samples { times, .. } => times.iter().copied().filter(inside).collect(),
            Signal::Square {
                omega, duty, phase, ..
            } => {
                let period = 2.0 * PI / omega;
                let mut edges = Vec::new();
                let first = ((phase / (2.0 * PI)).floor() - 1.0) as i64;
                let mut k = first;
                loop {
                    let rise = (2.0 * PI * k as f64 - phase) / omega;
                    if rise > t_end {
                        break;
                    }
                    edges.push(rise);
                    edges.push(rise + duty * period);
                    k += 1;
                }
                edges.into_iter().filter(inside).collect()
            }
            _ => Vec::new(),
        }
    }

    /// An upper bound of the signal's instantaneous frequency in Hz on [0, t_end]
    /// (0 for piecewise-polynomial signals), used to resolve it in reference integrations.
    pub fn max_frequency(&self, t_end: f64) -> f64 {
        match self {
            Signal::Harmonic { omega, .. } => omega.abs() / (2.0 * PI),
            Signal::Chirp { f0, f1, t1, .. } => (f0.abs()).max((f0 + (f1 - f0) * t_end / t1).abs()),
            Signal::Pulse { start, end, .. } => 1.0 / (end - start),
            _ => 0.0,
        }
    }

    /// The time range the signal is defined on, if limited (CSV samples with `outside =
    /// "error"`).
    pub fn check_covers(&self, field: &str, t_end: f64) -> Result<()> {
        if let Signal::Samples {
            times,
            outside: Outside::Error,
            source,
            ..
        } = self
        {
            let (first, last) = (times[0], times[times.len() - 1]);
            if first > 0.0 || last < t_end {
                return Err(Error::invalid(
                    field,
                    format!(
                        "samples in {source} cover [{}, {}] but the run needs [0, {}] (set outside = \"hold\" or \"zero\" to extend)",
                        Num(first),
                        Num(last),
                        Num(t_end)
                    ),
                ));
            }
        }
        Ok(())
    }
}
