//! Vectors of [`Lanes`] values whose every value starts a 64-byte cache line, so that a
//! vector load or store of one never straddles two lines (a `Vec<Lanes>` is only as
//! aligned as an f64).

use std::fmt;
use std::ops::{Deref, DerefMut};

use crate::kernels::lanes::Lanes;

/// One [`Lanes`] value on a cache line of its own.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line(Lanes);

// A slice of lines is a slice of lanes: same size, and no padding between lines.
const _: () = assert!(size_of::<Line>() == size_of::<Lanes>());

/// A `Vec<Lanes>` aligned to 64 bytes, used as a slice of [`Lanes`].
#[derive(Clone, Default)]
pub struct LaneVec(Vec<Line>);

impl LaneVec {
    /// `len` copies of `value`.
    pub fn filled(value: Lanes, len: usize) -> Self {
        LaneVec(vec![Line(value); len])
    }
}

impl Deref for LaneVec {
    type Target = [Lanes];

    #[inline(always)]
    fn deref(&self) -> &[Lanes] {
        // SAFETY: `Line` is `repr(C)` around one `Lanes` and of its size, so `len` lines
        // are `len` lanes values laid out one after the other (more aligned than needed).
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<Lanes>(), self.0.len()) }
    }
}

impl DerefMut for LaneVec {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Lanes] {
        // SAFETY: as in `deref`, the vector borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<Lanes>(), self.0.len()) }
    }
}

impl FromIterator<Lanes> for LaneVec {
    fn from_iter<I: IntoIterator<Item = Lanes>>(values: I) -> Self {
        LaneVec(values.into_iter().map(Line).collect())
    }
}

impl fmt::Debug for LaneVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_start_cache_lines_and_keep_their_order() {
        let v: LaneVec = (0..5).map(|i| [i as f64; 8]).collect();
        assert_eq!(v.len(), 5);
        assert_eq!(v.as_ptr() as usize % 64, 0);
        assert_eq!(v[3], [3.0; 8]);
        let mut w = LaneVec::filled([1.0; 8], 3);
        w[1][2] = 4.0;
        assert_eq!(w[1], [1.0, 1.0, 4.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(&w[..1], &[[1.0; 8]]);
    }
}
