//! Values shared by every member of an ensemble and sampled on the host at fixed fractions
//! of each step: the stage inputs u((k + c_i) h) of collocation schemes, the time-dependent
//! coefficients of a splitting method at its sub-step times. Backends upload them once per
//! dispatch instead of evaluating them per member.

/// `values[(k · points + i) · channels + c]` = channel c at t = (k + offsets_i) h.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedStream {
    /// Sample points per step.
    pub points: usize,
    /// Values per sample point.
    pub channels: usize,
    pub values: Vec<f64>,
}

impl SharedStream {
    /// Samples `value(channel, t)` at t = (k + offsets_i) h for k = 0…steps−1.
    pub fn sample(
        offsets: &[f64],
        channels: usize,
        h: f64,
        steps: usize,
        value: impl Fn(usize, f64) -> f64,
    ) -> Self {
        let mut values = Vec::with_capacity(steps * offsets.len() * channels);
        for k in 0..steps {
            for &offset in offsets {
                let t = (k as f64 + offset) * h;
                values.extend((0..channels).map(|c| value(c, t)));
            }
        }
        SharedStream {
            points: offsets.len(),
            channels,
            values,
        }
    }

    /// Values per step, points · channels.
    pub fn width(&self) -> usize {
        self.points * self.channels
    }

    /// The values of step k, point-major.
    pub fn step(&self, k: usize) -> &[f64] {
        let width = self.width();
        &self.values[k * width..(k + 1) * width]
    }
}
