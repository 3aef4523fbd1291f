//! The Baker–Campbell–Hausdorff machinery of composition methods: a truncated free associative
//! algebra in which the logarithm of a composition of symmetric second-order steps is
//! computed exactly (up to the arithmetic of the scalar type).
//!
//! A symmetric second-order one-step map has a modified vector field that is odd in h,
//! Φ_h = exp(hX + h³Y₃ + h⁵Y₅ + h⁷Y₇ + …), with X the exact field and Y₃, Y₅, … its error
//! terms. In the free setting X, Y₃, Y₅, … are noncommuting letters of weight 1, 3, 5, …
//! and the weight of a word is the power of h it carries, so h can be set to 1: a word of
//! weight n holds the coefficient of hⁿ. The composition
//! Ψ = Φ_{γ_s h} ∘ … ∘ Φ_{γ_1 h} (γ₁ applied first) is, as an operator product,
//! exp(Z(γ_s)) ⋯ exp(Z(γ₁)) with Z(γ) = γX + γ³Y₃ + γ⁵Y₅ + …, and by the BCH theorem its
//! logarithm is a Lie series. Ψ has order p iff log Ψ = X + (terms of weight > p).
//!
//! Elements are dense coefficient vectors over all words of weight ≤ `max_weight`
//! (for `max_weight` = 9: 89 words), generic in the scalar so that the same code runs in
//! f64 and in double-double ([`super::double_double::Dd`]).
//!
//! Lyndon words index a basis of the free Lie algebra (Chen–Fox–Lyndon; Reutenauer, *Free
//! Lie Algebras*, Thm. 5.1: the bracketed Lyndon word P_w equals w plus lexicographically
//! larger words of the same multidegree). A Lie element therefore vanishes iff its
//! coefficients on the Lyndon words vanish, which turns the order conditions into a square
//! system: weight 3: Y₃; weight 5: Y₅, XXY₃; weight 7: Y₇, XXY₅, XXXXY₃, XY₃Y₃ — the
//! 1 + 2 + 4 conditions of symmetric compositions of orders 4, 6, 8.

use std::collections::HashMap;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// The scalar of the algebra: f64 or double-double. Division by an f64 must be accurate
/// (not a multiplication by a rounded reciprocal), since the exponential and logarithm
/// series divide by integers.
pub trait Scalar:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<f64, Output = Self>
    + Neg<Output = Self>
    + From<f64>
    + Into<f64>
{
}

impl<T> Scalar for T where
    T: Copy
        + Add<Output = T>
        + Sub<Output = T>
        + Mul<Output = T>
        + Div<f64, Output = T>
        + Neg<Output = T>
        + From<f64>
        + Into<f64>
{
}

/// The free associative algebra on X (letter 0, weight 1) and Y_{2k+1} (letter k, weight
/// 2k + 1), truncated above `max_weight`. Word 0 is the empty word (the unit).
#[derive(Debug, Clone)]
pub struct FreeAlgebra {
    max_weight: usize,
    words: Vec<Vec<u8>>,
    weights: Vec<usize>,
    /// (i, j, k) with word_i · word_j = word_k, for every pair whose weight fits.
    products: Vec<(usize, usize, usize)>,
}

/// The weight of a letter: X = 0 → 1, Y_{2k+1} = k → 2k + 1.
fn letter_weight(letter: u8) -> usize {
    2 * letter as usize + 1
}

impl FreeAlgebra {
    /// All words of weight ≤ `max_weight`, ordered by weight, then lexicographically.
    pub fn new(max_weight: usize) -> Self {
        let letters: Vec<u8> = (0..)
            .take_while(|&k| letter_weight(k) <= max_weight)
            .collect();
        let mut by_weight: Vec<Vec<Vec<u8>>> = vec![vec![vec![]]];
        for w in 1..=max_weight {
            let mut level = Vec::new();
            for &letter in &letters {
                let lw = letter_weight(letter);
                if lw > w {
                    continue;
                }
                for prefix in &by_weight[w - lw] {
                    let mut word = prefix.clone();
                    word.push(letter);
                    level.push(word);
                }
            }
            level.sort();
            by_weight.push(level);
        }
        let mut words = Vec::new();
        let mut weights = Vec::new();
        for (w, level) in by_weight.into_iter().enumerate() {
            for word in level {
                words.push(word);
                weights.push(w);
            }
        }
        let index: HashMap<&[u8], usize> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.as_slice(), i))
            .collect();
        let mut products = Vec::new();
        for (i, a) in words.iter().enumerate() {
            for (j, b) in words.iter().enumerate() {
                if weights[i] + weights[j] <= max_weight {
                    let ab: Vec<u8> = a.iter().chain(b).copied().collect();
                    products.push((i, j, index[ab.as_slice()]));
                }
            }
        }
        FreeAlgebra {
            max_weight,
            words,
            weights,
            products,
        }
    }

    pub fn max_weight(&self) -> usize {
        self.max_weight
    }

    /// Number of words (the dimension of the truncated algebra).
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Always false: the empty word is there.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The letters of word `i` (0 = X, k = Y_{2k+1}).
    pub fn word(&self, i: usize) -> &[u8] {
        &self.words[i]
    }

    /// The weight (power of h) of word `i`.
    pub fn weight(&self, i: usize) -> usize {
        self.weights[i]
    }

    /// Word `i` spelled out, e.g. `X X Y3`; the empty word is `1`.
    pub fn word_name(&self, i: usize) -> String {
        if self.words[i].is_empty() {
            return "1".into();
        }
        self.words[i]
            .iter()
            .map(|&l| match l {
                0 => "X".to_string(),
                k => format!("Y{}", letter_weight(k)),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Index of a word given by its letters, if its weight fits.
    pub fn index_of(&self, letters: &[u8]) -> Option<usize> {
        self.words.iter().position(|w| w == letters)
    }

    /// Whether word `i` is a Lyndon word: nonempty and strictly smaller than each of its
    /// proper suffixes.
    pub fn is_lyndon(&self, i: usize) -> bool {
        let w = &self.words[i];
        !w.is_empty() && (1..w.len()).all(|k| w.as_slice() < &w[k..])
    }

    /// The Lyndon words of the given weight, in lexicographic order.
    pub fn lyndon_words(&self, weight: usize) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.weights[i] == weight && self.is_lyndon(i))
            .collect()
    }

    /// The zero element.
    pub fn zero<T: Scalar>(&self) -> Vec<T> {
        vec![T::from(0.0); self.len()]
    }

    /// The unit 1 (the empty word).
    pub fn one<T: Scalar>(&self) -> Vec<T> {
        let mut e = self.zero();
        e[0] = T::from(1.0);
        e
    }

    /// The truncated product a · b.
    pub fn mul<T: Scalar>(&self, a: &[T], b: &[T]) -> Vec<T> {
        let mut out = self.zero();
        for &(i, j, k) in &self.products {
            out[k] = out[k] + a[i] * b[j];
        }
        out
    }

    /// exp(z) = Σ zᵏ/k! for z without constant term (zᵏ vanishes for k > `max_weight`).
    pub fn exp<T: Scalar>(&self, z: &[T]) -> Vec<T> {
        assert!(
            z[0].into() == 0.0,
            "exp needs an element without constant term"
        );
        // Horner: 1 + z(1 + z/2(1 + z/3(…(1 + z/N))))
        let mut acc = self.one();
        for k in (1..=self.max_weight).rev() {
            let zk: Vec<T> = z.iter().map(|&c| c / k as f64).collect();
            acc = self.mul(&zk, &acc);
            acc[0] = acc[0] + T::from(1.0);
        }
        acc
    }

    /// log(g) = Σ (−1)^{k+1} wᵏ/k with w = g − 1, for g with constant term 1.
    pub fn log<T: Scalar>(&self, g: &[T]) -> Vec<T> {
        let mut w = g.to_vec();
        w[0] = w[0] - T::from(1.0);
        assert!(
            w[0].into() == 0.0,
            "log needs an element with constant term 1"
        );
        // Horner: w(1 − w(1/2 − w(1/3 − …)))
        let n = self.max_weight;
        let mut acc = self.zero::<T>();
        for k in (1..=n).rev() {
            // acc ← 1/k − w · acc
            let mut inner = self.mul(&w, &acc);
            for c in inner.iter_mut() {
                *c = -*c;
            }
            inner[0] = inner[0] + T::from(1.0) / k as f64;
            acc = inner;
        }
        self.mul(&w, &acc)
    }

    /// Z(γ) = γX + γ³Y₃ + γ⁵Y₅ + …: the modified field of the symmetric base step of size γh
    /// (h = 1; the weight carries the power of h).
    pub fn base_exponent<T: Scalar>(&self, gamma: T) -> Vec<T> {
        let mut z = self.zero();
        let gamma2 = gamma * gamma;
        let mut power = gamma;
        let mut letter = 0u8;
        while letter_weight(letter) <= self.max_weight {
            let i = self
                .index_of(&[letter])
                .expect("single letters of fitting weight are words");
            z[i] = power;
            power = power * gamma2;
            letter += 1;
        }
        z
    }

    /// log(exp(Z(γ_s)) ⋯ exp(Z(γ₁))): the modified field of the composition with γ₁ applied
    /// first.
    pub fn composition_log<T: Scalar>(&self, gammas: &[T]) -> Vec<T> {
        let mut acc = self.one();
        for &g in gammas {
            let step = self.exp(&self.base_exponent(g));
            acc = self.mul(&step, &acc);
        }
        self.log(&acc)
    }
}

#[cfg(test)]
mod tests {
    use super::FreeAlgebra;
    use crate::tableau::double_double::Dd;

    #[test]
    fn word_counts_follow_the_weight_recursion() {
        // c(n) = c(n−1) + c(n−3) + c(n−5) + c(n−7) + c(n−9), c(0) = 1.
        let algebra = FreeAlgebra::new(9);
        let mut c = [0usize; 10];
        c[0] = 1;
        for n in 1..10 {
            c[n] = [1, 3, 5, 7, 9]
                .iter()
                .filter(|&&w| w <= n)
                .map(|&w| c[n - w])
                .sum();
        }
        for (n, &count) in c.iter().enumerate() {
            let found = (0..algebra.len())
                .filter(|&i| algebra.weight(i) == n)
                .count();
            assert_eq!(found, count, "words of weight {n}");
        }
        assert_eq!(algebra.len(), c.iter().sum::<usize>());
    }

    #[test]
    fn lyndon_words_of_odd_weight_are_the_order_conditions() {
        let algebra = FreeAlgebra::new(9);
        let names = |w: usize| -> Vec<String> {
            algebra
                .lyndon_words(w)
                .into_iter()
                .map(|i| algebra.word_name(i))
                .collect()
        };
        assert_eq!(names(1), ["X"]);
        assert!(names(2).is_empty());
        assert_eq!(names(3), ["Y3"]);
        assert_eq!(names(4), ["X Y3"]);
        assert_eq!(names(5), ["X X Y3", "Y5"]);
        assert_eq!(names(7), ["X X X X Y3", "X X Y5", "X Y3 Y3", "Y7"]);
    }

    #[test]
    fn log_inverts_exp() {
        let algebra = FreeAlgebra::new(9);
        let z: Vec<Dd> = (0..algebra.len())
            .map(|i| {
                if i == 0 {
                    Dd::new(0.0)
                } else {
                    Dd::new(((i * 37 % 11) as f64 - 5.0) / 7.0)
                }
            })
            .collect();
        let back = algebra.log(&algebra.exp(&z));
        for i in 0..algebra.len() {
            let gap = (back[i] - z[i]).hi().abs();
            assert!(gap < 1e-28, "{}: {gap:e}", algebra.word_name(i));
        }
    }

    #[test]
    fn two_factor_bch_matches_the_classical_series() {
        // log(e^{aX} e^{bY3}) = aX + bY3 + ab/2 [X, Y3] + a²b/12 [X,[X,Y3]] + … : check the
        // weight-4 and weight-5 words against the commutator expansion.
        let algebra = FreeAlgebra::new(9);
        let (a, b) = (0.7, -1.3);
        let mut za = algebra.zero::<f64>();
        za[algebra.index_of(&[0]).unwrap()] = a;
        let mut zb = algebra.zero::<f64>();
        zb[algebra.index_of(&[1]).unwrap()] = b;
        let log = algebra.log(&algebra.mul(&algebra.exp(&za), &algebra.exp(&zb)));
        let at = |w: &[u8]| log[algebra.index_of(w).unwrap()];
        assert!((at(&[0]) - a).abs() < 1e-15);
        assert!((at(&[1]) - b).abs() < 1e-15);
        assert!((at(&[0, 1]) - a * b / 2.0).abs() < 1e-15);
        assert!((at(&[1, 0]) + a * b / 2.0).abs() < 1e-15);
        // [X,[X,Y]] = XXY − 2XYX + YXX with coefficient a²b/12.
        assert!((at(&[0, 0, 1]) - a * a * b / 12.0).abs() < 1e-15);
        assert!((at(&[0, 1, 0]) + a * a * b / 6.0).abs() < 1e-15);
        assert!((at(&[1, 0, 0]) - a * a * b / 12.0).abs() < 1e-15);
    }

    #[test]
    fn a_single_step_is_its_own_modified_field() {
        let algebra = FreeAlgebra::new(9);
        let log = algebra.composition_log(&[0.5f64]);
        let z = algebra.base_exponent(0.5f64);
        for i in 0..algebra.len() {
            assert!((log[i] - z[i]).abs() < 1e-16, "{}", algebra.word_name(i));
        }
    }
}
