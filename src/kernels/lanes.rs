//! SIMD lanes for the fast CPU engines: members side by side in groups of [`LANES`] f64
//! values, so that each arithmetic operation on a [`Lanes`] value is one vector instruction
//! over [`LANES`] members (the compiler vectorises the fixed-size loops), and the instruction
//! set chosen once per process at run time ([`SimdLevel`]).
//!
//! A member's arithmetic never mixes lanes, so its result does not depend on which lane or
//! block it runs in, nor on the thread count. It does depend on the [`SimdLevel`]: with FMA
//! ([`Avx512`], [`Avx2`]) a multiply-add is rounded once, without it ([`Portable`]) twice,
//! as the twin rounds it.

use std::sync::OnceLock;

use crate::compensated::running_max;
use crate::error::{Error, Result};

/// Members per SIMD group: one 512-bit register of f64, two 256-bit ones.
pub const LANES: usize = 8;

/// One f64 per member of a group.
pub type Lanes = [f64; LANES];

/// The zero of [`Lanes`].
pub const ZERO: Lanes = [0.0; LANES];

/// Vector arithmetic on [`Lanes`] for one instruction set. The engines are written once
/// against this trait; each implementation is a zero-sized token that exists only where
/// the CPU has its instructions, so calling its methods is safe.
pub trait Simd: Copy {
    /// [`LANES`] f64 values in registers.
    type V: Copy;
    /// Whether `mul_add` rounds once (FMA).
    const FUSED: bool;
    /// Independent accumulators a matrix–vector product keeps in registers: enough to
    /// cover the FMA latency times the FMA pipes where the registers allow.
    const ACCUMULATORS: usize;

    fn load(self, lanes: &Lanes) -> Self::V;
    fn store(self, lanes: &mut Lanes, v: Self::V);
    fn splat(self, value: f64) -> Self::V;
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// a·b + c.
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// Lane by lane: `if |a| >= |b| { x } else { y }`.
    fn select_abs_ge(self, a: Self::V, b: Self::V, x: Self::V, y: Self::V) -> Self::V;
    /// Lane by lane `running_max(current, |r|)`: |r| replaces a finite `current` unless it
    /// is below it (so a NaN or an infinity, once there, stays).
    fn running_max_abs(self, current: Self::V, r: Self::V) -> Self::V;

    #[inline(always)]
    fn zero(self) -> Self::V {
        self.splat(0.0)
    }
}

/// Plain arrays, multiply-adds rounded twice (the twin's and the reference's rounding):
/// whatever the build targets vectorises them.
#[derive(Debug, Clone, Copy)]
pub struct Portable;

impl Simd for Portable {
    type V = Lanes;
    const FUSED: bool = false;
    const ACCUMULATORS: usize = 4;

    #[inline(always)]
    fn load(self, lanes: &Lanes) -> Lanes {
        *lanes
    }
    #[inline(always)]
    fn store(self, lanes: &mut Lanes, v: Lanes) {
        *lanes = v;
    }
    #[inline(always)]
    fn splat(self, value: f64) -> Lanes {
        [value; LANES]
    }
    #[inline(always)]
    fn add(self, a: Lanes, b: Lanes) -> Lanes {
        std::array::from_fn(|l| a[l] + b[l])
    }
    #[inline(always)]
    fn sub(self, a: Lanes, b: Lanes) -> Lanes {
        std::array::from_fn(|l| a[l] - b[l])
    }
    #[inline(always)]
    fn mul(self, a: Lanes, b: Lanes) -> Lanes {
        std::array::from_fn(|l| a[l] * b[l])
    }
    #[inline(always)]
    fn mul_add(self, a: Lanes, b: Lanes, c: Lanes) -> Lanes {
        std::array::from_fn(|l| a[l] * b[l] + c[l])
    }
    #[inline(always)]
    fn select_abs_ge(self, a: Lanes, b: Lanes, x: Lanes, y: Lanes) -> Lanes {
        std::array::from_fn(|l| if a[l].abs() >= b[l].abs() { x[l] } else { y[l] })
    }
    #[inline(always)]
    fn running_max_abs(self, current: Lanes, r: Lanes) -> Lanes {
        std::array::from_fn(|l| running_max(current[l], r[l].abs()))
    }
}

#[cfg(target_arch = "x86_64")]
pub use x86::{Avx2, Avx512};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{LANES, Lanes, Simd};

    /// AVX-512 (F, DQ, VL) with FMA: one register per [`Lanes`].
    #[derive(Debug, Clone, Copy)]
    pub struct Avx512(());

    impl Avx512 {
        /// The token, where the CPU has the instructions.
        pub fn new() -> Option<Self> {
            (is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("fma"))
            .then_some(Avx512(()))
        }
    }

    // SAFETY (every `unsafe` below): an `Avx512` exists only where `Avx512::new` found the
    // instructions, and `Lanes` holds LANES = 8 f64 (unaligned loads and stores).
    const _: () = assert!(LANES == 8);

    impl Simd for Avx512 {
        type V = __m512d;
        const FUSED: bool = true;
        const ACCUMULATORS: usize = 8;

        #[inline(always)]
        fn load(self, lanes: &Lanes) -> __m512d {
            unsafe { _mm512_loadu_pd(lanes.as_ptr()) }
        }
        #[inline(always)]
        fn store(self, lanes: &mut Lanes, v: __m512d) {
            unsafe { _mm512_storeu_pd(lanes.as_mut_ptr(), v) }
        }
        #[inline(always)]
        fn splat(self, value: f64) -> __m512d {
            unsafe { _mm512_set1_pd(value) }
        }
        #[inline(always)]
        fn add(self, a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_add_pd(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_sub_pd(a, b) }
        }
        #[inline(always)]
        fn mul(self, a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_mul_pd(a, b) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m512d, b: __m512d, c: __m512d) -> __m512d {
            unsafe { _mm512_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        fn select_abs_ge(self, a: __m512d, b: __m512d, x: __m512d, y: __m512d) -> __m512d {
            unsafe {
                let ge = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(_mm512_abs_pd(a), _mm512_abs_pd(b));
                _mm512_mask_blend_pd(ge, y, x)
            }
        }
        #[inline(always)]
        fn running_max_abs(self, current: __m512d, r: __m512d) -> __m512d {
            unsafe {
                let r = _mm512_abs_pd(r);
                let finite = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(
                    _mm512_abs_pd(current),
                    _mm512_set1_pd(f64::INFINITY),
                );
                // !(r <= current): true for a NaN r.
                let not_below = _mm512_cmp_pd_mask::<_CMP_NLE_UQ>(r, current);
                _mm512_mask_blend_pd(finite & not_below, current, r)
            }
        }
    }

    /// AVX2 with FMA: two registers per [`Lanes`].
    #[derive(Debug, Clone, Copy)]
    pub struct Avx2(());

    impl Avx2 {
        /// The token, where the CPU has the instructions.
        pub fn new() -> Option<Self> {
            (is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
                .then_some(Avx2(()))
        }
    }

    /// Applies a two-register operation half by half.
    macro_rules! halves {
        ($f:ident, $($v:expr),*) => {
            unsafe { [$f($($v[0]),*), $f($($v[1]),*)] }
        };
    }

    // SAFETY (every `unsafe` below): an `Avx2` exists only where `Avx2::new` found the
    // instructions; `Lanes` holds 8 f64, two registers of 4 (unaligned loads and stores).
    impl Simd for Avx2 {
        type V = [__m256d; 2];
        const FUSED: bool = true;
        const ACCUMULATORS: usize = 4;

        #[inline(always)]
        fn load(self, lanes: &Lanes) -> [__m256d; 2] {
            unsafe {
                [
                    _mm256_loadu_pd(lanes.as_ptr()),
                    _mm256_loadu_pd(lanes.as_ptr().add(4)),
                ]
            }
        }
        #[inline(always)]
        fn store(self, lanes: &mut Lanes, v: [__m256d; 2]) {
            unsafe {
                _mm256_storeu_pd(lanes.as_mut_ptr(), v[0]);
                _mm256_storeu_pd(lanes.as_mut_ptr().add(4), v[1]);
            }
        }
        #[inline(always)]
        fn splat(self, value: f64) -> [__m256d; 2] {
            unsafe { [_mm256_set1_pd(value); 2] }
        }
        #[inline(always)]
        fn add(self, a: [__m256d; 2], b: [__m256d; 2]) -> [__m256d; 2] {
            halves!(_mm256_add_pd, a, b)
        }
        #[inline(always)]
        fn sub(self, a: [__m256d; 2], b: [__m256d; 2]) -> [__m256d; 2] {
            halves!(_mm256_sub_pd, a, b)
        }
        #[inline(always)]
        fn mul(self, a: [__m256d; 2], b: [__m256d; 2]) -> [__m256d; 2] {
            halves!(_mm256_mul_pd, a, b)
        }
        #[inline(always)]
        fn mul_add(self, a: [__m256d; 2], b: [__m256d; 2], c: [__m256d; 2]) -> [__m256d; 2] {
            halves!(_mm256_fmadd_pd, a, b, c)
        }
        #[inline(always)]
        fn select_abs_ge(
            self,
            a: [__m256d; 2],
            b: [__m256d; 2],
            x: [__m256d; 2],
            y: [__m256d; 2],
        ) -> [__m256d; 2] {
            unsafe {
                let sign = _mm256_set1_pd(-0.0);
                let half = |i: usize| {
                    let ge = _mm256_cmp_pd::<_CMP_GE_OQ>(
                        _mm256_andnot_pd(sign, a[i]),
                        _mm256_andnot_pd(sign, b[i]),
                    );
                    _mm256_blendv_pd(y[i], x[i], ge)
                };
                [half(0), half(1)]
            }
        }
        #[inline(always)]
        fn running_max_abs(self, current: [__m256d; 2], r: [__m256d; 2]) -> [__m256d; 2] {
            unsafe {
                let sign = _mm256_set1_pd(-0.0);
                let infinity = _mm256_set1_pd(f64::INFINITY);
                let half = |i: usize| {
                    let r = _mm256_andnot_pd(sign, r[i]);
                    let finite =
                        _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_andnot_pd(sign, current[i]), infinity);
                    let not_below = _mm256_cmp_pd::<_CMP_NLE_UQ>(r, current[i]);
                    _mm256_blendv_pd(current[i], r, _mm256_and_pd(finite, not_below))
                };
                [half(0), half(1)]
            }
        }
    }
}

/// The instruction set the fast engines run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimdLevel {
    /// AVX-512 (F, DQ, VL) with FMA: one register per [`Lanes`].
    Avx512,
    /// AVX2 with FMA: two registers per [`Lanes`].
    Avx2,
    /// Whatever the build targets (SSE2 on x86-64), without FMA.
    Portable,
}

impl SimdLevel {
    /// The level the fast engines run with: the one [`SimdLevel::select`] chose, else the
    /// best this CPU supports; fixed once the first engine runs.
    pub fn get() -> SimdLevel {
        *Self::chosen().get_or_init(Self::detect)
    }

    /// Chooses the level by name (`avx512`, `avx2`, `portable`; "" for the best this CPU
    /// supports) before the first run of a fast engine; `field` names the setting in
    /// errors (the CLI passes `HARBOR_SIMD`). An unknown name, a level this CPU lacks, or a
    /// choice after the level was fixed to another one is an error naming `field`, the
    /// value and the levels this CPU supports.
    pub fn select(field: &str, setting: &str) -> Result<SimdLevel> {
        let level = Self::from_setting(setting, Self::detect())
            .map_err(|problem| Error::invalid(field, problem))?;
        let fixed = *Self::chosen().get_or_init(|| level);
        if fixed != level {
            return Err(Error::invalid(
                field,
                format!(
                    "{setting:?} comes too late: the fast engines already run with {}",
                    fixed.name()
                ),
            ));
        }
        Ok(level)
    }

    /// The level of this process, once fixed.
    fn chosen() -> &'static OnceLock<SimdLevel> {
        static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
        &LEVEL
    }

    /// The level a setting (`HARBOR_SIMD` in the CLI) selects on a CPU whose best level is
    /// `best` ("" selects `best`), or the problem with it.
    pub fn from_setting(setting: &str, best: SimdLevel) -> std::result::Result<SimdLevel, String> {
        if setting.is_empty() {
            return Ok(best);
        }
        let all = [SimdLevel::Avx512, SimdLevel::Avx2, SimdLevel::Portable];
        let supported: Vec<&str> = all
            .iter()
            .filter(|level| level.rank() <= best.rank())
            .map(|level| level.name())
            .collect();
        match all.iter().find(|level| level.name() == setting) {
            Some(&level) if level.rank() <= best.rank() => Ok(level),
            Some(_) => Err(format!(
                "{setting:?} is not supported by this CPU; it supports {}",
                supported.join(", ")
            )),
            None => Err(format!(
                "unknown value {setting:?}; accepted values are avx512, avx2 and portable (this CPU supports {}), or leave it unset for the best",
                supported.join(", ")
            )),
        }
    }

    /// Order of capability: a CPU with a level also runs every lower one.
    fn rank(self) -> u8 {
        match self {
            SimdLevel::Portable => 0,
            SimdLevel::Avx2 => 1,
            SimdLevel::Avx512 => 2,
        }
    }

    /// The best level this CPU supports.
    pub fn detect() -> SimdLevel {
        #[cfg(target_arch = "x86_64")]
        {
            if Avx512::new().is_some() {
                return SimdLevel::Avx512;
            }
            if Avx2::new().is_some() {
                return SimdLevel::Avx2;
            }
        }
        SimdLevel::Portable
    }

    /// The name printed with results (`avx512`, `avx2`, `portable`).
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Avx512 => "avx512",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Portable => "portable",
        }
    }

    /// Whether multiply-adds are fused (rounded once).
    pub fn fused(self) -> bool {
        self != SimdLevel::Portable
    }
}

#[cfg(test)]
mod tests {
    use super::SimdLevel::{self, Avx2, Avx512, Portable};

    /// Once the fast engines run with a level, choosing it again is accepted and choosing
    /// another is refused, naming the setting and the level in use.
    #[test]
    fn a_level_is_chosen_once_per_process() {
        let fixed = SimdLevel::get();
        assert_eq!(
            SimdLevel::select("HARBOR_SIMD", fixed.name()).unwrap(),
            fixed
        );
        for other in [Avx512, Avx2, Portable] {
            if other == fixed || other.rank() > SimdLevel::detect().rank() {
                continue;
            }
            let refused = SimdLevel::select("HARBOR_SIMD", other.name())
                .unwrap_err()
                .to_string();
            assert!(refused.starts_with("HARBOR_SIMD: "), "{refused}");
            assert!(
                refused.contains("too late") && refused.contains(fixed.name()),
                "{refused}"
            );
        }
    }

    #[test]
    fn harbor_simd_names_a_supported_level_or_is_refused() {
        assert_eq!(SimdLevel::from_setting("", Avx2), Ok(Avx2));
        assert_eq!(SimdLevel::from_setting("portable", Avx512), Ok(Portable));
        assert_eq!(SimdLevel::from_setting("avx2", Avx512), Ok(Avx2));
        assert_eq!(SimdLevel::from_setting("avx512", Avx512), Ok(Avx512));
        let unsupported = SimdLevel::from_setting("avx512", Avx2).unwrap_err();
        assert!(
            unsupported.contains("\"avx512\" is not supported"),
            "{unsupported}"
        );
        assert!(
            unsupported.contains("supports avx2, portable"),
            "{unsupported}"
        );
        let unknown = SimdLevel::from_setting("bogus", Portable).unwrap_err();
        assert!(unknown.contains("unknown value \"bogus\""), "{unknown}");
        assert!(unknown.contains("avx512, avx2 and portable"), "{unknown}");
    }
}
