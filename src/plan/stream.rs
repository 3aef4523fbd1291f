//! Values shared by every member of an ensemble and sampled on the host at fixed fractions
//! of each step: the stage inputs u((k + c_i) h) of collocation schemes, the time-dependent
//! coefficients of a splitting method at its sub-step times. Backends upload them per
//! dispatch instead of evaluating them per member.
//!
//! A stream is sampled once and kept when it fits [`STREAM_CACHE_BYTES`]; a longer one is
//! sampled window by window as the backends ask for it, so host memory does not grow with
//! the number of steps. Both give the same values bit for bit: each value is the same
//! function evaluated at the same t = (k + offset_i) h.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Largest stream kept whole in host memory (64 MiB); longer streams are sampled per
/// window.
pub const STREAM_CACHE_BYTES: usize = 64 << 20;

/// Steps per window when a stream that is not kept is scanned end to end.
const SCAN_WINDOW_STEPS: usize = 1 << 14;

/// The function a stream samples: writes the `channels` values at t.
pub type StreamSource = Arc<dyn Fn(f64, &mut [f64]) + Send + Sync>;

/// Step k, point i, channel c holds channel c of the source at t = (k + offsets_i) h.
#[derive(Clone)]
pub struct SharedStream {
    offsets: Vec<f64>,
    channels: usize,
    h: f64,
    steps: usize,
    source: StreamSource,
    /// Every step, `(k · points + i) · channels + c`, when the stream fits the cache.
    cached: Option<Vec<f64>>,
}

impl fmt::Debug for SharedStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedStream")
            .field("offsets", &self.offsets)
            .field("channels", &self.channels)
            .field("h", &self.h)
            .field("steps", &self.steps)
            .field("cached", &self.cached.is_some())
            .finish()
    }
}

impl SharedStream {
    /// The stream of `source` at t = (k + offsets_i) h for k = 0…steps−1, sampled now when
    /// it fits [`STREAM_CACHE_BYTES`], else window by window on demand.
    pub fn sample(
        offsets: &[f64],
        channels: usize,
        h: f64,
        steps: usize,
        source: impl Fn(f64, &mut [f64]) + Send + Sync + 'static,
    ) -> Self {
        let mut stream = SharedStream {
            offsets: offsets.to_vec(),
            channels,
            h,
            steps,
            source: Arc::new(source),
            cached: None,
        };
        let bytes = (steps as u128) * (stream.width() as u128) * 8;
        if bytes <= STREAM_CACHE_BYTES as u128 {
            stream.cached = Some(stream.sample_window(0, steps));
        }
        stream
    }

    /// A stream of given values, `points · channels` per step (point-major), kept in memory
    /// whatever its size: values that are data rather than a function of time (measured
    /// outputs, quadrature weights).
    pub fn tabulated(points: usize, channels: usize, h: f64, values: Vec<f64>) -> Self {
        let width = points * channels;
        debug_assert!(width == 0 || values.len().is_multiple_of(width));
        SharedStream {
            offsets: vec![0.0; points],
            channels,
            h,
            steps: values.len().checked_div(width).unwrap_or(0),
            // Never sampled: a tabulated stream is always cached.
            source: Arc::new(|_, out: &mut [f64]| out.fill(f64::NAN)),
            cached: Some(values),
        }
    }

    /// Samples steps `first .. first + count`.
    fn sample_window(&self, first: usize, count: usize) -> Vec<f64> {
        let mut values = vec![0.0; count * self.width()];
        if self.channels > 0 {
            let mut slots = values.chunks_exact_mut(self.channels);
            for k in first..first + count {
                for &offset in &self.offsets {
                    let t = (k as f64 + offset) * self.h;
                    (self.source)(t, slots.next().expect("sized for every point"));
                }
            }
        }
        values
    }

    /// Sample points per step.
    pub fn points(&self) -> usize {
        self.offsets.len()
    }

    /// Values per sample point.
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Values per step, points · channels.
    pub fn width(&self) -> usize {
        self.points() * self.channels
    }

    /// Whether every value is kept in memory (the stream fits [`STREAM_CACHE_BYTES`]).
    pub fn is_cached(&self) -> bool {
        self.cached.is_some()
    }

    /// Host bytes the stream keeps (0 when it is sampled per window).
    pub fn cached_bytes(&self) -> usize {
        self.cached.as_ref().map_or(0, |v| 8 * v.len())
    }

    /// Steps `first .. first + count`, point-major within each step: borrowed from the
    /// cache, or sampled now.
    pub fn window(&self, first: usize, count: usize) -> Cow<'_, [f64]> {
        let width = self.width();
        match &self.cached {
            Some(values) => Cow::Borrowed(&values[first * width..(first + count) * width]),
            None => Cow::Owned(self.sample_window(first, count)),
        }
    }

    /// The values of step k, point-major: borrowed from the cache, or sampled into
    /// `scratch`.
    pub fn step<'a>(&'a self, k: usize, scratch: &'a mut Vec<f64>) -> &'a [f64] {
        let width = self.width();
        match &self.cached {
            Some(values) => &values[k * width..(k + 1) * width],
            None => {
                scratch.clear();
                scratch.resize(width, 0.0);
                if self.channels > 0 {
                    for (slot, &offset) in
                        scratch.chunks_exact_mut(self.channels).zip(&self.offsets)
                    {
                        (self.source)((k as f64 + offset) * self.h, slot);
                    }
                }
                scratch
            }
        }
    }

    /// Visits every step's values in order, window by window, until `visit` returns
    /// `Some`.
    fn scan<T>(&self, mut visit: impl FnMut(usize, &[f64]) -> Option<T>) -> Option<T> {
        let width = self.width();
        if width == 0 {
            return None;
        }
        for first in (0..self.steps).step_by(SCAN_WINDOW_STEPS) {
            let count = SCAN_WINDOW_STEPS.min(self.steps - first);
            let window = self.window(first, count);
            for (offset, values) in window.chunks_exact(width).enumerate() {
                if let Some(found) = visit(first + offset, values) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// max |value| over the whole stream (0 when it is empty), or its first value that is
    /// not finite as (step, point, channel, value): one pass either way.
    pub fn max_abs(&self) -> Result<f64, (usize, usize, usize, f64)> {
        let channels = self.channels;
        let mut largest = 0.0_f64;
        let first_nonfinite = self.scan(|step, values| {
            for (index, &v) in values.iter().enumerate() {
                if !v.is_finite() {
                    return Some((step, index / channels, index % channels, v));
                }
                largest = largest.max(v.abs());
            }
            None
        });
        first_nonfinite.map_or(Ok(largest), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(t: f64, out: &mut [f64]) {
        out[0] = t;
        out[1] = if t > 0.2 { f64::NAN } else { -t };
    }

    #[test]
    fn samples_every_point_of_every_step_and_finds_the_first_nonfinite_value() {
        let stream = SharedStream::sample(&[0.0, 0.5], 2, 0.1, 3, source);
        assert_eq!(stream.width(), 4);
        // step 1, point 1: t = 1.5 · 0.1
        let mut scratch = Vec::new();
        assert_eq!(
            stream.step(1, &mut scratch),
            &[0.1, -0.1, 1.5 * 0.1, -(1.5 * 0.1)]
        );
        let (step, point, channel, value) = stream.max_abs().unwrap_err();
        assert_eq!((step, point, channel), (2, 1, 1));
        assert!(value.is_nan());
    }

    /// A stream too long for the cache is sampled per window and gives the same values,
    /// bit for bit, as the cached one; its memory stays at one window.
    #[test]
    fn long_streams_are_sampled_per_window_with_the_same_values() {
        let offsets = [0.0, 0.5 - 0.5f64.sqrt() / 2.0, 1.0];
        let wave = |t: f64, out: &mut [f64]| {
            out[0] = (3.0 * t).sin();
            out[1] = (t * t).cos();
        };
        let steps_cached = 1000;
        let cached = SharedStream::sample(&offsets, 2, 0.01, steps_cached, wave);
        assert!(cached.cached_bytes() > 0);
        // 64 MiB / (3 · 2 · 8 B) steps fit; one more step does not.
        let long_steps = STREAM_CACHE_BYTES / (offsets.len() * 2 * 8) + 1;
        let long = SharedStream::sample(&offsets, 2, 0.01, long_steps, wave);
        assert_eq!(long.cached_bytes(), 0);
        let mut scratch = Vec::new();
        for k in [0, 1, 517, steps_cached - 1] {
            let a = cached.step(k, &mut Vec::new()).to_vec();
            assert_eq!(a, long.step(k, &mut scratch));
        }
        assert_eq!(cached.window(10, 20), long.window(10, 20));
        let largest = long.max_abs().unwrap();
        assert!(largest <= 1.0 && largest > 0.99);
    }
}
