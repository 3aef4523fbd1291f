//! The random streams of consecutive ensemble members, their first words computed side by
//! side ([`LaneKeystream`]). Member i of an ensemble of seed s draws from
//! `ChaCha8Rng::seed_from_u64(s)` set to stream i; [`MemberStreams::stream`] returns the same
//! numbers, from words computed beforehand for a whole block of members, and a stream that
//! needs more words than were computed goes on as `ChaCha8Rng` would.

use std::cell::Cell;
use std::ops::Range;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::chacha_lanes::{BLOCK_WORDS, LaneKeystream, PrefetchedStream};

/// Words of a member's prefetched stream beyond two per standard normal: four of the
/// ziggurat's rejections (each takes a u64), about one member in 10⁶ needing more at 16
/// normals.
pub const REJECTION_WORDS: usize = 8;

thread_local! {
    /// The words of the thread's last dropped [`MemberStreams`], for its next one: a thread
    /// prepares blocks one after another, and a fresh buffer would be zeroed (and its pages
    /// faulted in) only to be overwritten.
    static SPARE_WORDS: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
}

/// The streams of consecutive members of one seed, each with its first words computed.
pub struct MemberStreams {
    seed: [u8; 32],
    members: Range<usize>,
    /// Words per member.
    stride: usize,
    words: Vec<u32>,
}

impl MemberStreams {
    /// The streams of `members` for the ensemble seed `seed`, each with its first `words`
    /// words (rounded up to whole ChaCha blocks) computed side by side.
    pub fn new(seed: u64, members: Range<usize>, words: usize) -> Self {
        let seed = ChaCha8Rng::seed_from_u64(seed).get_seed();
        let blocks = words.div_ceil(BLOCK_WORDS);
        let stride = blocks * BLOCK_WORDS;
        let len = members.len() * stride;
        // Every word is written by `fill`, so a reused buffer keeps its old words until then.
        let mut words = SPARE_WORDS.take();
        if words.len() < len {
            words.resize(len, 0);
        }
        words.truncate(len);
        LaneKeystream::new(&seed).fill(members.start as u64, members.len(), blocks, &mut words);
        MemberStreams {
            seed,
            members,
            stride,
            words,
        }
    }

    /// Member `index`'s stream (in the range the streams were made for), from its first
    /// word: the numbers of `ChaCha8Rng` seeded with the ensemble's seed, stream `index`.
    pub fn stream(&self, index: usize) -> PrefetchedStream<'_> {
        assert!(
            self.members.contains(&index),
            "member {index} outside the streams of {:?}",
            self.members
        );
        let at = (index - self.members.start) * self.stride;
        PrefetchedStream::new(&self.seed, index as u64, &self.words[at..at + self.stride])
    }
}

impl Drop for MemberStreams {
    fn drop(&mut self) {
        SPARE_WORDS.set(std::mem::take(&mut self.words));
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, RngCore, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};

    use super::MemberStreams;

    /// Each member's stream gives `ChaCha8Rng`'s numbers, past its computed words too.
    #[test]
    fn streams_are_the_members_chacha_streams() {
        assert_chacha_streams(&MemberStreams::new(42, 5..23, 20), 42, 5..23);
    }

    /// Streams made in a buffer left by larger streams of another seed (the thread's spare)
    /// hold none of its words.
    #[test]
    fn a_reused_buffer_gives_the_same_streams() {
        drop(MemberStreams::new(7, 0..64, 100));
        assert_chacha_streams(&MemberStreams::new(42, 5..23, 20), 42, 5..23);
        drop(MemberStreams::new(9, 3..5, 10));
        assert_chacha_streams(&MemberStreams::new(42, 0..40, 36), 42, 0..40);
    }

    fn assert_chacha_streams(streams: &MemberStreams, seed: u64, members: std::ops::Range<usize>) {
        for index in members {
            let mut expected = ChaCha8Rng::seed_from_u64(seed);
            expected.set_stream(index as u64);
            let mut stream = streams.stream(index);
            for _ in 0..40 {
                let normal: f64 = StandardNormal.sample(&mut stream);
                let want: f64 = StandardNormal.sample(&mut expected);
                assert_eq!(normal.to_bits(), want.to_bits(), "member {index}");
                let unit: f64 = stream.random();
                assert_eq!(unit.to_bits(), expected.random::<f64>().to_bits());
                assert_eq!(stream.next_u32(), expected.next_u32());
            }
        }
    }
}
