//! The first words of many ChaCha8 streams of one seed at once, the streams side by side
//! in SIMD lanes, bit for bit those of `rand_chacha`'s `ChaCha8Rng`, and a generator
//! ([`PrefetchedStream`]) that reads one stream's words and, past them, goes on as
//! `ChaCha8Rng` would.
//!
//! An ensemble member i draws from `ChaCha8Rng::seed_from_u64(seed)` set to stream i. Its
//! generator computes four blocks (64 words) at each refill, one stream at a time; a member
//! that needs 34 words wastes half of them. [`LaneKeystream::fill`] computes just the blocks
//! asked for, of 4 (SSE2), 8 (AVX2) or 16 (AVX-512) streams per vector instruction (so fill
//! at least 16 streams a call), and a [`PrefetchedStream`] per member draws from them.
//!
//! The ChaCha8 state of `ChaCha8Rng` (`rand_chacha` 0.9) is 16 words x₀ … x₁₅:
//!
//! ```text
//! x₀  x₁  x₂  x₃    0x61707865 0x3320646e 0x79622d32 0x6b206574   ("expand 32-byte k")
//! x₄  …   x₁₁       the 32-byte seed as eight little-endian words
//! x₁₂ x₁₃           the block counter, a u64: low word, high word
//! x₁₄ x₁₅           the stream (`set_stream`), a u64: low word, high word
//! ```
//!
//! Block k of stream s is the state with counter k and stream s after 8 rounds (4 double
//! rounds: the quarter rounds on the columns (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14),
//! (3, 7, 11, 15), then on the diagonals (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13),
//! (3, 4, 9, 14)), plus the initial state word by word (mod 2³²). Word w of the stream is
//! word w mod 16 of block ⌊w / 16⌋. `next_u32` returns the next word, `next_u64` the next two
//! (the first one low), and `fill_bytes` the next ⌈len / 4⌉ words in little-endian order
//! (the unused bytes of a last partial word are lost).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernels::lanes::SimdLevel;

/// Words in a ChaCha block.
pub const BLOCK_WORDS: usize = 16;

/// "expand 32-byte k" as four little-endian words: state words 0 … 3.
const CONSTANTS: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Double rounds of ChaCha8.
const DOUBLE_ROUNDS: usize = 4;

/// The eight key words of a seed, state words 4 … 11.
type Key = [u32; 8];

/// A [`LaneKeystream::fill`] compiled for one instruction set.
type FillFn = fn(&Key, u64, usize, usize, &mut [u32]);

/// The keystreams of consecutive streams of one `ChaCha8Rng` seed, computed with the
/// streams in SIMD lanes.
#[derive(Debug, Clone)]
pub struct LaneKeystream {
    key: Key,
    fill: FillFn,
}

impl LaneKeystream {
    /// The keystreams of `seed` (`ChaCha8Rng::get_seed()`), computed with the instruction set
    /// of [`SimdLevel::get`].
    pub fn new(seed: &[u8; 32]) -> Self {
        Self::with_fill(seed, fill_for(SimdLevel::get()))
    }

    fn with_fill(seed: &[u8; 32], fill: FillFn) -> Self {
        let mut key = [0; 8];
        for (word, bytes) in key.iter_mut().zip(seed.chunks_exact(4)) {
            *word = u32::from_le_bytes(bytes.try_into().expect("4 bytes"));
        }
        LaneKeystream { key, fill }
    }

    /// Writes the words 0 … 16·`blocks` − 1 (blocks 0 … `blocks` − 1) of the streams
    /// `first` + l (mod 2⁶⁴), l = 0 … `count` − 1, stream by stream: stream `first` + l
    /// fills `out[l·16·blocks .. (l + 1)·16·blocks]`; `out` may be longer. These are the
    /// words `next_u32` returns from `ChaCha8Rng::from_seed(seed)` after
    /// `set_stream(first + l)`.
    ///
    /// # Panics
    ///
    /// If `out` is shorter than `count`·16·`blocks` words.
    pub fn fill(&self, first: u64, count: usize, blocks: usize, out: &mut [u32]) {
        let words = (blocks.checked_mul(BLOCK_WORDS))
            .and_then(|stride| stride.checked_mul(count))
            .expect("LaneKeystream::fill: count·16·blocks overflows");
        assert!(
            out.len() >= words,
            "LaneKeystream::fill: {} words for {count} streams of {blocks} blocks, {words} needed",
            out.len()
        );
        (self.fill)(&self.key, first, count, blocks, &mut out[..words]);
    }
}

/// The [`FillFn`] for `level`: x86-64 has at least SSE2.
#[cfg(target_arch = "x86_64")]
fn fill_for(level: SimdLevel) -> FillFn {
    match level {
        SimdLevel::Avx512 => x86::fill_avx512,
        SimdLevel::Avx2 => x86::fill_avx2,
        SimdLevel::Portable => x86::fill_sse2,
    }
}

/// The [`FillFn`] for `level`: plain arrays off x86-64.
#[cfg(not(target_arch = "x86_64"))]
fn fill_for(_level: SimdLevel) -> FillFn {
    fill_portable
}

/// [`fill_groups`] with plain arrays of four words (whatever the build targets makes of
/// them; scalar code on x86-64, where the SSE2 of the baseline does better).
#[cfg(any(not(target_arch = "x86_64"), test))]
fn fill_portable(key: &Key, first: u64, count: usize, blocks: usize, out: &mut [u32]) {
    fill_groups(PortableWords, key, first, count, blocks, out);
}

/// Vector operations on one u32 per stream of a group of `WIDTH` streams, for one
/// instruction set. An implementation is a zero-sized token that exists only where the CPU
/// has its instructions.
trait StreamLanes: Copy {
    /// Streams in a group: lanes of a vector.
    const WIDTH: usize;
    /// One u32 per stream of a group.
    type Words: Copy;

    /// `word` in every lane.
    fn splat(self, word: u32) -> Self::Words;
    /// Lane l holds `words[l]` (`words` has `WIDTH` words).
    fn load(self, words: &[u32]) -> Self::Words;
    /// p + q mod 2³², lane by lane.
    fn add(self, p: Self::Words, q: Self::Words) -> Self::Words;
    /// (p ⊕ q) ⋘ 16, lane by lane; likewise below with 12, 8 and 7.
    fn xor_rotate16(self, p: Self::Words, q: Self::Words) -> Self::Words;
    fn xor_rotate12(self, p: Self::Words, q: Self::Words) -> Self::Words;
    fn xor_rotate8(self, p: Self::Words, q: Self::Words) -> Self::Words;
    fn xor_rotate7(self, p: Self::Words, q: Self::Words) -> Self::Words;
    /// Transposes: writes lane l's 16 words (word j in `words[j]`) to
    /// `out[l·stride .. l·stride + 16]`, for the lanes l < `count`.
    fn store_streams(self, words: &[Self::Words; 16], out: &mut [u32], stride: usize, count: usize);
}

/// [`LaneKeystream::fill`] with the streams in groups of `S::WIDTH` lanes (`out` holds
/// exactly `count`·16·`blocks` words).
#[inline(always)]
fn fill_groups<S: StreamLanes>(
    s: S,
    key: &Key,
    first: u64,
    count: usize,
    blocks: usize,
    out: &mut [u32],
) {
    let stride = blocks * BLOCK_WORDS;
    if stride == 0 {
        return;
    }
    debug_assert_eq!(out.len(), count * stride);
    let mut state = [s.splat(0); 16];
    for (j, &word) in CONSTANTS.iter().chain(key).enumerate() {
        state[j] = s.splat(word);
    }
    for (group, group_out) in out.chunks_mut(S::WIDTH * stride).enumerate() {
        let streams_here = group_out.len() / stride;
        let group_first = first.wrapping_add((group * S::WIDTH) as u64);
        let streams: [u64; 16] = std::array::from_fn(|l| group_first.wrapping_add(l as u64));
        state[14] = s.load(&streams.map(|stream| stream as u32)[..S::WIDTH]);
        state[15] = s.load(&streams.map(|stream| (stream >> 32) as u32)[..S::WIDTH]);
        for block in 0..blocks {
            state[12] = s.splat(block as u32);
            state[13] = s.splat((block as u64 >> 32) as u32);
            let words = chacha8_block(s, &state);
            s.store_streams(
                &words,
                &mut group_out[block * BLOCK_WORDS..],
                stride,
                streams_here,
            );
        }
    }
}

/// The ChaCha8 block of each lane of `state` (word j of lane l is lane l of `state[j]`):
/// the state after 4 double rounds, plus `state` word by word.
#[inline(always)]
fn chacha8_block<S: StreamLanes>(s: S, state: &[S::Words; 16]) -> [S::Words; 16] {
    let mut x = *state;
    for _ in 0..DOUBLE_ROUNDS {
        quarter_round(s, &mut x, [0, 4, 8, 12]);
        quarter_round(s, &mut x, [1, 5, 9, 13]);
        quarter_round(s, &mut x, [2, 6, 10, 14]);
        quarter_round(s, &mut x, [3, 7, 11, 15]);
        quarter_round(s, &mut x, [0, 5, 10, 15]);
        quarter_round(s, &mut x, [1, 6, 11, 12]);
        quarter_round(s, &mut x, [2, 7, 8, 13]);
        quarter_round(s, &mut x, [3, 4, 9, 14]);
    }
    std::array::from_fn(|j| s.add(x[j], state[j]))
}

/// The ChaCha quarter round on the state words a, b, c, d, lane by lane (+ mod 2³², ⊕ xor,
/// ⋘ rotate left):
/// a += b; d = (d ⊕ a) ⋘ 16; c += d; b = (b ⊕ c) ⋘ 12;
/// a += b; d = (d ⊕ a) ⋘ 8;  c += d; b = (b ⊕ c) ⋘ 7.
#[inline(always)]
fn quarter_round<S: StreamLanes>(s: S, x: &mut [S::Words; 16], [a, b, c, d]: [usize; 4]) {
    x[a] = s.add(x[a], x[b]);
    x[d] = s.xor_rotate16(x[d], x[a]);
    x[c] = s.add(x[c], x[d]);
    x[b] = s.xor_rotate12(x[b], x[c]);
    x[a] = s.add(x[a], x[b]);
    x[d] = s.xor_rotate8(x[d], x[a]);
    x[c] = s.add(x[c], x[d]);
    x[b] = s.xor_rotate7(x[b], x[c]);
}

/// Four streams in a plain array, lane-by-lane loops.
#[cfg(any(not(target_arch = "x86_64"), test))]
#[derive(Debug, Clone, Copy)]
struct PortableWords;

/// Four words, one per stream.
#[cfg(any(not(target_arch = "x86_64"), test))]
type Words4 = [u32; 4];

#[cfg(any(not(target_arch = "x86_64"), test))]
impl StreamLanes for PortableWords {
    const WIDTH: usize = 4;
    type Words = Words4;

    #[inline(always)]
    fn splat(self, word: u32) -> Words4 {
        [word; 4]
    }
    #[inline(always)]
    fn load(self, words: &[u32]) -> Words4 {
        std::array::from_fn(|l| words[l])
    }
    #[inline(always)]
    fn add(self, p: Words4, q: Words4) -> Words4 {
        std::array::from_fn(|l| p[l].wrapping_add(q[l]))
    }
    #[inline(always)]
    fn xor_rotate16(self, p: Words4, q: Words4) -> Words4 {
        std::array::from_fn(|l| (p[l] ^ q[l]).rotate_left(16))
    }
    #[inline(always)]
    fn xor_rotate12(self, p: Words4, q: Words4) -> Words4 {
        std::array::from_fn(|l| (p[l] ^ q[l]).rotate_left(12))
    }
    #[inline(always)]
    fn xor_rotate8(self, p: Words4, q: Words4) -> Words4 {
        std::array::from_fn(|l| (p[l] ^ q[l]).rotate_left(8))
    }
    #[inline(always)]
    fn xor_rotate7(self, p: Words4, q: Words4) -> Words4 {
        std::array::from_fn(|l| (p[l] ^ q[l]).rotate_left(7))
    }
    #[inline(always)]
    fn store_streams(self, words: &[Words4; 16], out: &mut [u32], stride: usize, count: usize) {
        for l in 0..count {
            for (j, word) in out[l * stride..][..BLOCK_WORDS].iter_mut().enumerate() {
                *word = words[j][l];
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{BLOCK_WORDS, Key, StreamLanes, fill_groups};

    /// [`fill_groups`] four streams at a time, one SSE2 register (x86-64's baseline) per
    /// state word.
    pub(super) fn fill_sse2(key: &Key, first: u64, count: usize, blocks: usize, out: &mut [u32]) {
        fill_groups(Sse2Words, key, first, count, blocks, out);
    }

    /// [`fill_groups`] eight streams at a time, one AVX2 register per state word.
    pub(super) fn fill_avx2(key: &Key, first: u64, count: usize, blocks: usize, out: &mut [u32]) {
        #[target_feature(enable = "avx2")]
        fn with_avx2(key: &Key, first: u64, count: usize, blocks: usize, out: &mut [u32]) {
            fill_groups(Avx2Words(()), key, first, count, blocks, out);
        }
        // SAFETY: chosen only where `SimdLevel::get` found AVX2 (or AVX-512, which implies it).
        unsafe { with_avx2(key, first, count, blocks, out) }
    }

    /// [`fill_groups`] sixteen streams at a time, one AVX-512 register per state word.
    pub(super) fn fill_avx512(key: &Key, first: u64, count: usize, blocks: usize, out: &mut [u32]) {
        #[target_feature(enable = "avx2,avx512f")]
        fn with_avx512(key: &Key, first: u64, count: usize, blocks: usize, out: &mut [u32]) {
            fill_groups(Avx512Words(()), key, first, count, blocks, out);
        }
        // SAFETY: chosen only where `SimdLevel::get` found AVX-512 (F, DQ, VL).
        unsafe { with_avx512(key, first, count, blocks, out) }
    }

    /// Four streams in an SSE2 register.
    #[derive(Debug, Clone, Copy)]
    struct Sse2Words;

    // SAFETY (every `unsafe` in this impl): SSE2 is part of the x86-64 baseline; slices are
    // checked to hold the words read or written.

    impl StreamLanes for Sse2Words {
        const WIDTH: usize = 4;
        type Words = __m128i;

        #[inline(always)]
        fn splat(self, word: u32) -> __m128i {
            unsafe { _mm_set1_epi32(word as i32) }
        }
        #[inline(always)]
        fn load(self, words: &[u32]) -> __m128i {
            let words = &words[..4];
            unsafe { _mm_loadu_si128(words.as_ptr().cast()) }
        }
        #[inline(always)]
        fn add(self, p: __m128i, q: __m128i) -> __m128i {
            unsafe { _mm_add_epi32(p, q) }
        }
        #[inline(always)]
        fn xor_rotate16(self, p: __m128i, q: __m128i) -> __m128i {
            // Swaps the 16-bit halves of each word.
            unsafe { _mm_shufflehi_epi16::<0xb1>(_mm_shufflelo_epi16::<0xb1>(_mm_xor_si128(p, q))) }
        }
        #[inline(always)]
        fn xor_rotate12(self, p: __m128i, q: __m128i) -> __m128i {
            unsafe {
                let x = _mm_xor_si128(p, q);
                _mm_or_si128(_mm_slli_epi32::<12>(x), _mm_srli_epi32::<20>(x))
            }
        }
        #[inline(always)]
        fn xor_rotate8(self, p: __m128i, q: __m128i) -> __m128i {
            unsafe {
                let x = _mm_xor_si128(p, q);
                _mm_or_si128(_mm_slli_epi32::<8>(x), _mm_srli_epi32::<24>(x))
            }
        }
        #[inline(always)]
        fn xor_rotate7(self, p: __m128i, q: __m128i) -> __m128i {
            unsafe {
                let x = _mm_xor_si128(p, q);
                _mm_or_si128(_mm_slli_epi32::<7>(x), _mm_srli_epi32::<25>(x))
            }
        }
        /// Four 4 × 4 transposes (words 0 … 3, 4 … 7, 8 … 11, 12 … 15): interleave pairs of
        /// rows by words, then by word pairs.
        #[inline(always)]
        fn store_streams(
            self,
            words: &[__m128i; 16],
            out: &mut [u32],
            stride: usize,
            count: usize,
        ) {
            for quarter in 0..4 {
                let [r0, r1, r2, r3] = [0, 1, 2, 3].map(|i| words[4 * quarter + i]);
                let columns = unsafe {
                    let (low01, high01) = (_mm_unpacklo_epi32(r0, r1), _mm_unpackhi_epi32(r0, r1));
                    let (low23, high23) = (_mm_unpacklo_epi32(r2, r3), _mm_unpackhi_epi32(r2, r3));
                    [
                        _mm_unpacklo_epi64(low01, low23),
                        _mm_unpackhi_epi64(low01, low23),
                        _mm_unpacklo_epi64(high01, high23),
                        _mm_unpackhi_epi64(high01, high23),
                    ]
                };
                for (l, column) in columns.iter().enumerate().take(count) {
                    let dest = &mut out[l * stride + 4 * quarter..][..4];
                    unsafe { _mm_storeu_si128(dest.as_mut_ptr().cast(), *column) }
                }
            }
        }
    }

    /// Eight streams in an AVX2 register. Made only in `fill_avx2`'s `with_avx2`.
    #[derive(Debug, Clone, Copy)]
    struct Avx2Words(());

    // SAFETY (every `unsafe` in the impls below): an `Avx2Words` exists only inside a function
    // compiled with AVX2 and run where the CPU has it, and an `Avx512Words` only inside one
    // compiled with AVX-512 F; slices are checked to hold the words read or written.

    /// `pshufb` indices that rotate each 32-bit word left by 16 bits (bytes 2, 3, 0, 1).
    const ROTATE16: [u8; 32] = [
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, //
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
    ];
    /// `pshufb` indices that rotate each 32-bit word left by 8 bits (bytes 3, 0, 1, 2).
    const ROTATE8: [u8; 32] = [
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, //
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
    ];

    impl StreamLanes for Avx2Words {
        const WIDTH: usize = 8;
        type Words = __m256i;

        #[inline(always)]
        fn splat(self, word: u32) -> __m256i {
            unsafe { _mm256_set1_epi32(word as i32) }
        }
        #[inline(always)]
        fn load(self, words: &[u32]) -> __m256i {
            let words = &words[..8];
            unsafe { _mm256_loadu_si256(words.as_ptr().cast()) }
        }
        #[inline(always)]
        fn add(self, p: __m256i, q: __m256i) -> __m256i {
            unsafe { _mm256_add_epi32(p, q) }
        }
        #[inline(always)]
        fn xor_rotate16(self, p: __m256i, q: __m256i) -> __m256i {
            unsafe {
                let indices = _mm256_loadu_si256(ROTATE16.as_ptr().cast());
                _mm256_shuffle_epi8(_mm256_xor_si256(p, q), indices)
            }
        }
        #[inline(always)]
        fn xor_rotate12(self, p: __m256i, q: __m256i) -> __m256i {
            unsafe {
                let x = _mm256_xor_si256(p, q);
                _mm256_or_si256(_mm256_slli_epi32::<12>(x), _mm256_srli_epi32::<20>(x))
            }
        }
        #[inline(always)]
        fn xor_rotate8(self, p: __m256i, q: __m256i) -> __m256i {
            unsafe {
                let indices = _mm256_loadu_si256(ROTATE8.as_ptr().cast());
                _mm256_shuffle_epi8(_mm256_xor_si256(p, q), indices)
            }
        }
        #[inline(always)]
        fn xor_rotate7(self, p: __m256i, q: __m256i) -> __m256i {
            unsafe {
                let x = _mm256_xor_si256(p, q);
                _mm256_or_si256(_mm256_slli_epi32::<7>(x), _mm256_srli_epi32::<25>(x))
            }
        }
        /// Two 8 × 8 transposes (words 0 … 7, words 8 … 15): interleave pairs of rows by
        /// words, then by word pairs, then join the 128-bit halves.
        #[inline(always)]
        fn store_streams(
            self,
            words: &[__m256i; 16],
            out: &mut [u32],
            stride: usize,
            count: usize,
        ) {
            for half in 0..2 {
                let rows: &[__m256i; 8] = words[8 * half..][..8].try_into().unwrap();
                let columns = transpose8(rows);
                for (l, column) in columns.iter().enumerate().take(count) {
                    let dest = &mut out[l * stride + 8 * half..][..8];
                    unsafe { _mm256_storeu_si256(dest.as_mut_ptr().cast(), *column) }
                }
            }
        }
    }

    /// The 8 × 8 transpose of 32-bit words: lane l of `rows[j]` becomes lane j of the
    /// result's row l.
    #[inline(always)]
    fn transpose8(rows: &[__m256i; 8]) -> [__m256i; 8] {
        unsafe {
            // Within each 128-bit half: pairs[2i] = r2i₀ r2i+1₀ r2i₁ r2i+1₁, pairs[2i+1] the
            // same for words 2, 3.
            let pairs: [__m256i; 8] = std::array::from_fn(|k| {
                let (i, high) = (k / 2, k % 2 == 1);
                let (p, q) = (rows[2 * i], rows[2 * i + 1]);
                if high {
                    _mm256_unpackhi_epi32(p, q)
                } else {
                    _mm256_unpacklo_epi32(p, q)
                }
            });
            // quads[4i + m], half h: rows 4i … 4i + 3 at lane 4h + m.
            let quads: [__m256i; 8] = std::array::from_fn(|k| {
                let (i, m) = (k / 4, k % 4);
                let (p, q) = (pairs[4 * i + m / 2], pairs[4 * i + 2 + m / 2]);
                if m % 2 == 1 {
                    _mm256_unpackhi_epi64(p, q)
                } else {
                    _mm256_unpacklo_epi64(p, q)
                }
            });
            std::array::from_fn(|l| {
                let (h, m) = (l / 4, l % 4);
                if h == 0 {
                    _mm256_permute2x128_si256::<0x20>(quads[m], quads[4 + m])
                } else {
                    _mm256_permute2x128_si256::<0x31>(quads[m], quads[4 + m])
                }
            })
        }
    }

    /// Sixteen streams in an AVX-512 register. Made only in `fill_avx512`'s `with_avx512`.
    #[derive(Debug, Clone, Copy)]
    struct Avx512Words(());

    impl StreamLanes for Avx512Words {
        const WIDTH: usize = 16;
        type Words = __m512i;

        #[inline(always)]
        fn splat(self, word: u32) -> __m512i {
            unsafe { _mm512_set1_epi32(word as i32) }
        }
        #[inline(always)]
        fn load(self, words: &[u32]) -> __m512i {
            let words = &words[..16];
            unsafe { _mm512_loadu_si512(words.as_ptr().cast()) }
        }
        #[inline(always)]
        fn add(self, p: __m512i, q: __m512i) -> __m512i {
            unsafe { _mm512_add_epi32(p, q) }
        }
        #[inline(always)]
        fn xor_rotate16(self, p: __m512i, q: __m512i) -> __m512i {
            unsafe { _mm512_rol_epi32::<16>(_mm512_xor_si512(p, q)) }
        }
        #[inline(always)]
        fn xor_rotate12(self, p: __m512i, q: __m512i) -> __m512i {
            unsafe { _mm512_rol_epi32::<12>(_mm512_xor_si512(p, q)) }
        }
        #[inline(always)]
        fn xor_rotate8(self, p: __m512i, q: __m512i) -> __m512i {
            unsafe { _mm512_rol_epi32::<8>(_mm512_xor_si512(p, q)) }
        }
        #[inline(always)]
        fn xor_rotate7(self, p: __m512i, q: __m512i) -> __m512i {
            unsafe { _mm512_rol_epi32::<7>(_mm512_xor_si512(p, q)) }
        }
        /// A 16 × 16 transpose: interleave pairs of rows by words, then by word pairs, then
        /// transpose the 4 × 4 grids of 128-bit blocks.
        #[inline(always)]
        fn store_streams(
            self,
            words: &[__m512i; 16],
            out: &mut [u32],
            stride: usize,
            count: usize,
        ) {
            let columns = transpose16(words);
            for (l, column) in columns.iter().enumerate().take(count) {
                let dest = &mut out[l * stride..][..BLOCK_WORDS];
                unsafe { _mm512_storeu_si512(dest.as_mut_ptr().cast(), *column) }
            }
        }
    }

    /// The 16 × 16 transpose of 32-bit words: lane l of `rows[j]` becomes lane j of the
    /// result's row l.
    #[inline(always)]
    fn transpose16(rows: &[__m512i; 16]) -> [__m512i; 16] {
        unsafe {
            // Within each 128-bit block: pairs[2i] = r2i₀ r2i+1₀ r2i₁ r2i+1₁, pairs[2i+1] the
            // same for words 2, 3.
            let pairs: [__m512i; 16] = std::array::from_fn(|k| {
                let (i, high) = (k / 2, k % 2 == 1);
                let (p, q) = (rows[2 * i], rows[2 * i + 1]);
                if high {
                    _mm512_unpackhi_epi32(p, q)
                } else {
                    _mm512_unpacklo_epi32(p, q)
                }
            });
            // quads[4i + m], block b: rows 4i … 4i + 3 at lane 4b + m.
            let quads: [__m512i; 16] = std::array::from_fn(|k| {
                let (i, m) = (k / 4, k % 4);
                let (p, q) = (pairs[4 * i + m / 2], pairs[4 * i + 2 + m / 2]);
                if m % 2 == 1 {
                    _mm512_unpackhi_epi64(p, q)
                } else {
                    _mm512_unpacklo_epi64(p, q)
                }
            });
            // For each m, the blocks b of quads[m], quads[4 + m], quads[8 + m], quads[12 + m]
            // (A, B, C, D) regrouped: lane 4b + m is A_b B_b C_b D_b.
            let mut columns = [_mm512_setzero_si512(); 16];
            for m in 0..4 {
                let (a, b, c, d) = (quads[m], quads[4 + m], quads[8 + m], quads[12 + m]);
                let ab_low = _mm512_shuffle_i32x4::<0x44>(a, b); // A0 A1 B0 B1
                let ab_high = _mm512_shuffle_i32x4::<0xee>(a, b); // A2 A3 B2 B3
                let cd_low = _mm512_shuffle_i32x4::<0x44>(c, d); // C0 C1 D0 D1
                let cd_high = _mm512_shuffle_i32x4::<0xee>(c, d); // C2 C3 D2 D3
                columns[m] = _mm512_shuffle_i32x4::<0x88>(ab_low, cd_low);
                columns[4 + m] = _mm512_shuffle_i32x4::<0xdd>(ab_low, cd_low);
                columns[8 + m] = _mm512_shuffle_i32x4::<0x88>(ab_high, cd_high);
                columns[12 + m] = _mm512_shuffle_i32x4::<0xdd>(ab_high, cd_high);
            }
            columns
        }
    }
}

/// A `ChaCha8Rng` stream that starts with words computed beforehand (by
/// [`LaneKeystream::fill`]): it returns them in order and, once they run out, builds the
/// stream's generator at the word it reached and draws from it. Any sequence of calls
/// returns what the same calls on `ChaCha8Rng::from_seed(seed)` after `set_stream(stream)`
/// return.
#[derive(Debug, Clone)]
pub struct PrefetchedStream<'a> {
    /// The stream's words 0 … `words.len()` − 1.
    words: &'a [u32],
    /// The next word of `words` to return; `words.len()` once they are used up.
    next: usize,
    seed: &'a [u8; 32],
    stream: u64,
    /// The stream's generator, from word `words.len()` on, once needed.
    beyond: Option<ChaCha8Rng>,
}

impl<'a> PrefetchedStream<'a> {
    /// Stream `stream` of `seed` (`ChaCha8Rng::get_seed()`), whose first words are `words`
    /// (those [`LaneKeystream::fill`] wrote for it, or any prefix of them).
    pub fn new(seed: &'a [u8; 32], stream: u64, words: &'a [u32]) -> Self {
        PrefetchedStream {
            words,
            next: 0,
            seed,
            stream,
            beyond: None,
        }
    }

    /// The next u64 that [`RngCore::next_u64`] would return, where it lies in the prefetched
    /// words (`None` where fewer than two are left: `next_u64` then goes on into the
    /// generator); the stream does not move.
    #[inline]
    pub fn peek_u64(&self) -> Option<u64> {
        let pair = self.words.get(self.next..self.next + 2)?;
        Some((u64::from(pair[1]) << 32) | u64::from(pair[0]))
    }

    /// Moves past the u64 of [`PrefetchedStream::peek_u64`] (which returned one).
    #[inline]
    pub fn skip_u64(&mut self) {
        debug_assert!(self.next + 2 <= self.words.len());
        self.next += 2;
    }

    /// The generator at word `words.len()`: built at the first call.
    #[cold]
    fn beyond(&mut self) -> &mut ChaCha8Rng {
        debug_assert_eq!(self.next, self.words.len());
        let (seed, stream, word_pos) = (self.seed, self.stream, self.words.len() as u128);
        self.beyond.get_or_insert_with(|| {
            let mut rng = ChaCha8Rng::from_seed(*seed);
            rng.set_stream(stream);
            rng.set_word_pos(word_pos);
            rng
        })
    }

    /// [`RngCore::next_u64`] with fewer than two words left: the last one (if any) low and
    /// the generator's first one high, or the generator's next two.
    #[cold]
    #[inline(never)]
    fn next_u64_beyond(&mut self) -> u64 {
        if self.next + 1 == self.words.len() {
            let low = self.words[self.next];
            self.next += 1;
            let high = self.beyond().next_u32();
            return (u64::from(high) << 32) | u64::from(low);
        }
        self.beyond().next_u64()
    }
}

impl RngCore for PrefetchedStream<'_> {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        match self.words.get(self.next) {
            Some(&word) => {
                self.next += 1;
                word
            }
            None => self.beyond().next_u32(),
        }
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        let next = self.next;
        if next + 1 < self.words.len() {
            self.next = next + 2;
            (u64::from(self.words[next + 1]) << 32) | u64::from(self.words[next])
        } else {
            self.next_u64_beyond()
        }
    }

    /// Bytes 4i … 4i + 3 of `dest` are the next word i, little-endian; a last partial word
    /// uses up a whole word, as `ChaCha8Rng` does. Words past the prefetched ones come from
    /// the generator's `fill_bytes`, which continues the same way.
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        let left = &self.words[self.next..];
        for (chunk, word) in dest.chunks_mut(4).zip(left) {
            chunk.copy_from_slice(&word.to_le_bytes()[..chunk.len()]);
            self.next += 1;
        }
        let filled = dest.len().min(4 * left.len());
        if filled < dest.len() {
            self.beyond().fill_bytes(&mut dest[filled..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::Rng;
    use rand_distr::{Distribution, StandardNormal};

    use super::*;

    /// Seeds of `ChaCha8Rng::seed_from_u64`, extremes and arbitrary ones.
    const SEEDS: [u64; 6] = [
        0,
        1,
        u64::MAX,
        0x2545_f491_4f6c_dd1d,
        42,
        0x9e37_79b9_7f4a_7c15,
    ];

    /// First streams: 0, odd, across the 32-bit boundary, at the top of the u64 range (the
    /// last group wraps around to stream 0).
    const FIRSTS: [u64; 5] = [0, 7, (1 << 32) - 3, u64::MAX - 9, u64::MAX - 2];

    fn seed_of(seed: u64) -> [u8; 32] {
        ChaCha8Rng::seed_from_u64(seed).get_seed()
    }

    /// The generator of stream `stream` of `seed`, as the ensemble draw builds it.
    fn reference(seed: u64, stream: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        rng
    }

    /// Every compiled [`FillFn`] this CPU runs, with its name.
    fn fills() -> Vec<(&'static str, FillFn)> {
        let mut fills: Vec<(&'static str, FillFn)> = vec![("portable", fill_portable)];
        #[cfg(target_arch = "x86_64")]
        {
            fills.push(("sse2", x86::fill_sse2));
            if is_x86_feature_detected!("avx2") {
                fills.push(("avx2", x86::fill_avx2));
            }
            if SimdLevel::detect() == SimdLevel::Avx512 {
                fills.push(("avx512", x86::fill_avx512));
            }
        }
        fills
    }

    /// Prefetched words of stream `stream`: `blocks` blocks from [`LaneKeystream::new`].
    fn prefetch(seed: &[u8; 32], stream: u64, blocks: usize) -> Vec<u32> {
        let mut words = vec![0; blocks * BLOCK_WORDS];
        LaneKeystream::new(seed).fill(stream, 1, blocks, &mut words);
        words
    }

    #[test]
    fn lane_words_equal_chacha8rng_words() {
        for (name, fill) in fills() {
            for &seed in &SEEDS {
                let keystream = LaneKeystream::with_fill(&seed_of(seed), fill);
                for &first in &FIRSTS {
                    for count in [1, 3, 8, 13, 16, 21, 40] {
                        for blocks in 1..=5 {
                            let stride = blocks * BLOCK_WORDS;
                            let mut out = vec![0xdead_beef; count * stride + 5];
                            keystream.fill(first, count, blocks, &mut out);
                            for l in 0..count {
                                let stream = first.wrapping_add(l as u64);
                                let mut rng = reference(seed, stream);
                                for (w, &word) in out[l * stride..][..stride].iter().enumerate() {
                                    assert_eq!(
                                        word,
                                        rng.next_u32(),
                                        "{name}: seed {seed}, stream {stream}, blocks {blocks}, \
                                         word {w}"
                                    );
                                }
                            }
                            assert!(out[count * stride..].iter().all(|&w| w == 0xdead_beef));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn no_streams_or_no_blocks_write_nothing() {
        let keystream = LaneKeystream::new(&seed_of(3));
        let mut out = [7u32; 4];
        keystream.fill(0, 0, 3, &mut out);
        keystream.fill(0, 5, 0, &mut out);
        assert_eq!(out, [7; 4]);
    }

    #[test]
    #[should_panic(expected = "needed")]
    fn a_short_buffer_panics() {
        let mut out = [0u32; 47];
        LaneKeystream::new(&seed_of(3)).fill(0, 1, 3, &mut out);
    }

    /// A small deterministic generator of call patterns (independent of the one tested).
    fn pattern(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *state >> 33
    }

    #[test]
    fn mixed_calls_equal_chacha8rng() {
        let mut calls = 0x1234_5678;
        for &seed in &SEEDS {
            let bytes = seed_of(seed);
            for &stream in &FIRSTS {
                for blocks in 1..=3 {
                    let words = prefetch(&bytes, stream, blocks);
                    // Every prefix, odd lengths included, so that each call kind meets the
                    // prefetched end at every offset.
                    for len in 0..=words.len() {
                        let mut fast = PrefetchedStream::new(&bytes, stream, &words[..len]);
                        let mut rng = reference(seed, stream);
                        for call in 0..60 {
                            match pattern(&mut calls) % 3 {
                                0 => assert_eq!(fast.next_u32(), rng.next_u32(), "call {call}"),
                                1 => assert_eq!(fast.next_u64(), rng.next_u64(), "call {call}"),
                                _ => {
                                    let n = (pattern(&mut calls) % 23) as usize;
                                    let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
                                    fast.fill_bytes(&mut a);
                                    rng.fill_bytes(&mut b);
                                    assert_eq!(a, b, "call {call}, {n} bytes");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn next_u64_straddling_the_prefetched_end_equals_chacha8rng() {
        let bytes = seed_of(5);
        let words = prefetch(&bytes, 11, 2);
        for skip in [1, 3, 31] {
            let mut fast = PrefetchedStream::new(&bytes, 11, &words);
            let mut rng = reference(5, 11);
            for _ in 0..skip {
                assert_eq!(fast.next_u32(), rng.next_u32());
            }
            for _ in 0..(40 - skip) / 2 {
                assert_eq!(fast.next_u64(), rng.next_u64());
            }
        }
    }

    #[test]
    fn sampling_well_past_the_prefetched_words_equals_chacha8rng() {
        for &seed in &SEEDS {
            let bytes = seed_of(seed);
            for stream in [0, 1, 9, 1 << 40] {
                let words = prefetch(&bytes, stream, 3);
                for odd_start in [false, true] {
                    let mut fast = PrefetchedStream::new(&bytes, stream, &words);
                    let mut rng = reference(seed, stream);
                    if odd_start {
                        // An odd word position, so the u64s straddle the prefetched end.
                        assert_eq!(fast.next_u32(), rng.next_u32());
                    }
                    for i in 0..200 {
                        let (a, b): (f64, f64) = if i % 7 == 3 {
                            (fast.random(), rng.random())
                        } else {
                            (
                                StandardNormal.sample(&mut fast),
                                StandardNormal.sample(&mut rng),
                            )
                        };
                        assert_eq!(
                            a.to_bits(),
                            b.to_bits(),
                            "seed {seed}, stream {stream}, {i}"
                        );
                    }
                    assert_eq!(fast.next_u64(), rng.next_u64());
                }
            }
        }
    }

    #[test]
    fn standard_normals_equal_chacha8rng_bit_for_bit() {
        let bytes = seed_of(2024);
        let words = prefetch(&bytes, 3, 5);
        let mut fast = PrefetchedStream::new(&bytes, 3, &words);
        let mut rng = reference(2024, 3);
        for i in 0..100_000 {
            let a: f64 = StandardNormal.sample(&mut fast);
            let b: f64 = StandardNormal.sample(&mut rng);
            assert_eq!(a.to_bits(), b.to_bits(), "normal {i}");
        }
    }

    /// Time per stream of 16 standard normals for 2¹⁶ streams: the generator set to each
    /// stream, against 3 prefetched blocks per stream computed in lanes (and those blocks
    /// alone), for each compiled [`FillFn`], best of 7.
    /// `cargo test --release --lib chacha_lanes -- --ignored --nocapture`
    #[test]
    #[ignore = "timing"]
    fn time_sixteen_normals_per_stream() {
        use std::hint::black_box;
        use std::time::Instant;

        const STREAMS: usize = 1 << 16;
        const BLOCKS: usize = 3;
        const NORMALS: usize = 16;
        let seeded = ChaCha8Rng::seed_from_u64(17);
        let bytes = seeded.get_seed();
        let stride = BLOCKS * BLOCK_WORDS;
        let best_of = |run: &mut dyn FnMut() -> f64| {
            let mut best = f64::INFINITY;
            let mut sum = 0.0;
            for _ in 0..7 {
                let start = Instant::now();
                sum = black_box(run());
                best = best.min(start.elapsed().as_secs_f64() * 1e9 / STREAMS as f64);
            }
            (best, sum)
        };

        let (reference_ns, reference_sum) = best_of(&mut || {
            let mut sum = 0.0;
            for i in 0..STREAMS {
                let mut rng = seeded.clone();
                rng.set_stream(i as u64);
                for _ in 0..NORMALS {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    sum += z;
                }
            }
            sum
        });
        println!("ChaCha8Rng, set_stream: {reference_ns:.1} ns per stream");
        for (name, fill) in fills() {
            let keystream = LaneKeystream::with_fill(&bytes, fill);
            for group in [8, 16] {
                let mut words = vec![0u32; group * stride];
                let (fill_ns, _) = best_of(&mut || {
                    for first in (0..STREAMS).step_by(group) {
                        keystream.fill(first as u64, group, BLOCKS, &mut words);
                    }
                    f64::from(words[5])
                });
                let (ns, sum) = best_of(&mut || {
                    let mut sum = 0.0;
                    for first in (0..STREAMS).step_by(group) {
                        keystream.fill(first as u64, group, BLOCKS, &mut words);
                        for (l, member) in words.chunks_exact(stride).enumerate() {
                            let stream = (first + l) as u64;
                            let mut rng = PrefetchedStream::new(&bytes, stream, member);
                            for _ in 0..NORMALS {
                                let z: f64 = StandardNormal.sample(&mut rng);
                                sum += z;
                            }
                        }
                    }
                    sum
                });
                println!(
                    "LaneKeystream ({name}, {group} streams a call) + PrefetchedStream: \
                     {ns:.1} ns per stream, of which the fill {fill_ns:.1}"
                );
                assert_eq!(sum.to_bits(), reference_sum.to_bits());
            }
        }
    }
}
