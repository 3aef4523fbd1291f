//! Double-double arithmetic: an unevaluated sum hi + lo of two f64 with |lo| ≤ ½ ulp(hi),
//! about 32 significant digits. Only what the table computations need: +, −, ×, ÷.
//! Algorithms: Dekker's TwoSum, FMA-based TwoProd, and the accurate double-double sum and
//! product of Joldes, Muller & Popescu (ACM TOMS 2017, Alg. 6 and 12); division by two
//! Newton corrections of the f64 quotient.
//!
//! (The `twofloat` crate was tried first; its 0.8.4 division drops the residual term —
//! 1/3 comes back with a zero low word — so harbor keeps this small, tested type.)

use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// hi + lo with |lo| ≤ ½ ulp(hi).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Dd {
    hi: f64,
    lo: f64,
}

/// s + e = a + b exactly (any magnitudes).
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// s + e = a + b exactly, for |a| ≥ |b|.
#[inline]
fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// p + e = a · b exactly.
#[inline]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

impl Dd {
    pub const fn new(value: f64) -> Self {
        Dd { hi: value, lo: 0.0 }
    }

    /// The leading word, which is the value correctly rounded to f64.
    pub fn hi(self) -> f64 {
        self.hi
    }

    /// The trailing word.
    pub fn lo(self) -> f64 {
        self.lo
    }

    fn normalized(hi: f64, lo: f64) -> Self {
        let (hi, lo) = fast_two_sum(hi, lo);
        Dd { hi, lo }
    }
}

impl From<f64> for Dd {
    fn from(value: f64) -> Self {
        Dd::new(value)
    }
}

impl From<Dd> for f64 {
    fn from(value: Dd) -> f64 {
        value.hi
    }
}

impl Neg for Dd {
    type Output = Dd;
    fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
}

impl Add for Dd {
    type Output = Dd;
    fn add(self, rhs: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, rhs.hi);
        let (t, f) = two_sum(self.lo, rhs.lo);
        let (s, e) = fast_two_sum(s, e + t);
        Dd::normalized(s, e + f)
    }
}

impl Sub for Dd {
    type Output = Dd;
    fn sub(self, rhs: Dd) -> Dd {
        self + (-rhs)
    }
}

impl Mul for Dd {
    type Output = Dd;
    fn mul(self, rhs: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, rhs.hi);
        let e = e + (self.hi * rhs.lo + self.lo * rhs.hi);
        Dd::normalized(p, e)
    }
}

impl Div for Dd {
    type Output = Dd;
    fn div(self, rhs: Dd) -> Dd {
        let q1 = self.hi / rhs.hi;
        let r = self - rhs * Dd::new(q1);
        let q2 = r.hi / rhs.hi;
        let r = r - rhs * Dd::new(q2);
        let q3 = r.hi / rhs.hi;
        let (q1, q2) = fast_two_sum(q1, q2);
        Dd { hi: q1, lo: q2 } + Dd::new(q3)
    }
}

macro_rules! with_f64 {
    ($($trait:ident $method:ident),*) => {$(
        impl $trait<f64> for Dd {
            type Output = Dd;
            fn $method(self, rhs: f64) -> Dd {
                self.$method(Dd::new(rhs))
            }
        }
    )*};
}
with_f64!(Add add, Sub sub, Mul mul, Div div);

impl AddAssign for Dd {
    fn add_assign(&mut self, rhs: Dd) {
        *self = *self + rhs;
    }
}

impl SubAssign for Dd {
    fn sub_assign(&mut self, rhs: Dd) {
        *self = *self - rhs;
    }
}

impl MulAssign for Dd {
    fn mul_assign(&mut self, rhs: Dd) {
        *self = *self * rhs;
    }
}

#[cfg(test)]
mod tests {
    use super::Dd;

    /// |a − b| in double-double, as f64.
    fn gap(a: Dd, b: Dd) -> f64 {
        (a - b).hi().abs()
    }

    #[test]
    fn thirds_and_sevenths_round_trip_to_double_double_precision() {
        for d in [3.0, 7.0, 10.0, 49.0] {
            let q = Dd::new(1.0) / Dd::new(d);
            assert!(q.lo() != 0.0, "1/{d} has no low word");
            assert!(
                gap(q * d, Dd::new(1.0)) < 1e-31,
                "1/{d}·{d} − 1 = {:e}",
                gap(q * d, Dd::new(1.0))
            );
        }
    }

    #[test]
    fn sums_keep_what_f64_loses() {
        let tiny = Dd::new(1e-20);
        let s = (Dd::new(1.0) + tiny) - Dd::new(1.0);
        assert_eq!(s.hi(), 1e-20);
    }

    #[test]
    fn square_root_of_two_by_newton_is_exact_to_32_digits() {
        // x ← (x + 2/x)/2 from the f64 root; check x² − 2 to 1e-31.
        let mut x = Dd::new(2f64.sqrt());
        for _ in 0..2 {
            x = (x + Dd::new(2.0) / x) * 0.5;
        }
        assert!(gap(x * x, Dd::new(2.0)) < 1e-31);
        // The correctly rounded √2 is the leading word.
        assert_eq!(x.hi(), std::f64::consts::SQRT_2);
    }
}
