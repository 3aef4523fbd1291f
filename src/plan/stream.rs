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
    /// Samples `fill(t, values)`, which writes the `channels` values at t, at
    /// t = (k + offsets_i) h for k = 0…steps−1.
    pub fn sample(
        offsets: &[f64],
        channels: usize,
        h: f64,
        steps: usize,
        mut fill: impl FnMut(f64, &mut [f64]),
    ) -> Self {
        let mut values = vec![0.0; steps * offsets.len() * channels];
        if channels > 0 {
            let mut chunks = values.chunks_exact_mut(channels);
            for k in 0..steps {
                for &offset in offsets {
                    let t = (k as f64 + offset) * h;
                    fill(t, chunks.next().expect("sized for every point"));
                }
            }
        }
        SharedStream {
            points: offsets.len(),
            channels,
            values,
        }
    }

    /// The first value that is not finite, as (step, point, channel, value).
    pub fn first_nonfinite(&self) -> Option<(usize, usize, usize, f64)> {
        let index = self.values.iter().position(|v| !v.is_finite())?;
        let (step, within) = (index / self.width(), index % self.width());
        Some((
            step,
            within / self.channels,
            within % self.channels,
            self.values[index],
        ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_every_point_of_every_step_and_finds_the_first_nonfinite_value() {
        let stream = SharedStream::sample(&[0.0, 0.5], 2, 0.1, 3, |t, out| {
            out[0] = t;
            out[1] = if t > 0.2 { f64::NAN } else { -t };
        });
        assert_eq!(stream.width(), 4);
        // step 1, point 1: t = 1.5 · 0.1
        assert_eq!(stream.step(1), &[0.1, -0.1, 1.5 * 0.1, -(1.5 * 0.1)]);
        let (step, point, channel, value) = stream.first_nonfinite().unwrap();
        assert_eq!((step, point, channel), (2, 1, 1));
        assert!(value.is_nan());
    }
}
