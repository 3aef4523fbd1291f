//! Compensated (Neumaier) summation, so long sums of energy increments lose no more than a
//! rounding error or two whatever the number of steps, and a running maximum that keeps a
//! non-finite value once it arrives.

/// Running sum Σ xᵢ with Neumaier's correction term.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompensatedSum {
    sum: f64,
    correction: f64,
}

impl CompensatedSum {
    /// The running sum `sum` with the correction `correction` (as kernels keep them).
    pub fn from_parts(sum: f64, correction: f64) -> Self {
        CompensatedSum { sum, correction }
    }

    /// (sum, correction).
    pub fn parts(&self) -> (f64, f64) {
        (self.sum, self.correction)
    }

    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.correction += (self.sum - t) + x;
        } else {
            self.correction += (x - t) + self.sum;
        }
        self.sum = t;
    }

    pub fn value(&self) -> f64 {
        self.sum + self.correction
    }
}

/// One Kahan-compensated update x ← x + δ: `carry` holds the low-order part lost so far and
/// is fed back into the next update.
#[inline]
pub fn kahan_add(x: &mut f64, carry: &mut f64, delta: f64) {
    let y = delta - *carry;
    let t = *x + y;
    *carry = (t - *x) - y;
    *x = t;
}

/// The running maximum of |r| that keeps a NaN or an infinity once one arrives, where
/// `f64::max` would skip it (twin of `running_max` in shaders/shared/finite.wgsl).
#[expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "a NaN r must count as not below the maximum, as in the WGSL twin"
)]
pub fn running_max(current: f64, r: f64) -> f64 {
    if current.is_finite() && !(r <= current) {
        r
    } else {
        current
    }
}
