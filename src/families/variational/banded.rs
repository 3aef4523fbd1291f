//! A banded linear solve: Gaussian elimination with partial pivoting on a matrix whose
//! entries a_ij vanish outside i − kl ≤ j ≤ i + ku, in O(n kl (kl + ku)) time and
//! O(n (2 kl + ku + 1)) memory (LAPACK's `dgbsv` layout: row interchanges let the upper
//! band grow to kl + ku). The boundary-value problems' Newton matrices are of this form:
//! each discrete Euler–Lagrange equation couples a point with its r neighbours on each
//! side.

/// An n × n banded matrix with kl sub- and ku super-diagonals, stored by rows: row i holds
/// columns i − kl … i + kl + ku (the extra kl for fill-in).
#[derive(Debug, Clone)]
pub struct Banded {
    n: usize,
    kl: usize,
    ku: usize,
    width: usize,
    values: Vec<f64>,
}

impl Banded {
    /// The zero matrix.
    pub fn zeros(n: usize, kl: usize, ku: usize) -> Self {
        let width = 2 * kl + ku + 1;
        Banded {
            n,
            kl,
            ku,
            width,
            values: vec![0.0; n * width],
        }
    }

    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether (i, j) lies in the band (kl below, ku above the diagonal).
    pub fn in_band(&self, i: usize, j: usize) -> bool {
        j + self.kl >= i && j <= i + self.ku
    }

    fn slot(&self, i: usize, j: usize) -> usize {
        i * self.width + (j + self.kl - i)
    }

    /// Adds `value` to a_ij, which must lie in the band.
    ///
    /// # Panics
    ///
    /// If (i, j) is outside the band: the assembly's bandwidth is wrong.
    pub fn add(&mut self, i: usize, j: usize, value: f64) {
        assert!(
            self.in_band(i, j),
            "entry ({i}, {j}) outside the band (kl = {}, ku = {})",
            self.kl,
            self.ku
        );
        let slot = self.slot(i, j);
        self.values[slot] += value;
    }

    /// a_ij (0 outside the band).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        if j + self.kl >= i && j <= i + self.kl + self.ku {
            self.values[self.slot(i, j)]
        } else {
            0.0
        }
    }

    /// Solves A x = b in place (A is destroyed); `None` when a pivot is exactly zero or
    /// not finite (A singular to working precision, or not finite).
    pub fn solve(mut self, b: &mut [f64]) -> Option<()> {
        let (n, kl, ku) = (self.n, self.kl, self.ku);
        assert_eq!(b.len(), n, "right-hand side of the banded solve");
        let upper = kl + ku;
        for k in 0..n {
            // Pivot: the largest |a_ik| among rows k … k + kl.
            let last = (k + kl).min(n - 1);
            let mut pivot = k;
            let mut best = self.get(k, k).abs();
            for i in k + 1..=last {
                let v = self.get(i, k).abs();
                if v > best {
                    best = v;
                    pivot = i;
                }
            }
            if !(best > 0.0 && best.is_finite()) {
                return None;
            }
            let end = (k + upper).min(n - 1);
            if pivot != k {
                for j in k..=end {
                    let (a, c) = (self.slot(k, j), self.slot(pivot, j));
                    self.values.swap(a, c);
                }
                b.swap(k, pivot);
            }
            let diagonal = self.get(k, k);
            for i in k + 1..=last {
                let factor = self.get(i, k) / diagonal;
                if factor == 0.0 {
                    continue;
                }
                let slot = self.slot(i, k);
                self.values[slot] = 0.0;
                for j in k + 1..=end {
                    let v = self.get(k, j);
                    if v != 0.0 {
                        let slot = self.slot(i, j);
                        self.values[slot] -= factor * v;
                    }
                }
                b[i] -= factor * b[k];
            }
        }
        for k in (0..n).rev() {
            let end = (k + upper).min(n - 1);
            let mut sum = b[k];
            for (j, &x) in b.iter().enumerate().take(end + 1).skip(k + 1) {
                sum -= self.get(k, j) * x;
            }
            b[k] = sum / self.get(k, k);
        }
        b.iter().all(|v| v.is_finite()).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random banded system against nalgebra's dense LU, with a zero on the diagonal
    /// so that pivoting is needed.
    #[test]
    fn agrees_with_a_dense_solve() {
        let (n, kl, ku) = (40, 3, 5);
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut banded = Banded::zeros(n, kl, ku);
        let mut dense = nalgebra::DMatrix::<f64>::zeros(n, n);
        for i in 0..n {
            for j in i.saturating_sub(kl)..=(i + ku).min(n - 1) {
                let v = if i == j && i % 7 == 3 { 0.0 } else { next() };
                banded.add(i, j, v);
                dense[(i, j)] = v;
            }
        }
        let b: Vec<f64> = (0..n).map(|_| next()).collect();
        let expected = dense
            .lu()
            .solve(&nalgebra::DVector::from_vec(b.clone()))
            .unwrap();
        let mut x = b;
        banded.solve(&mut x).unwrap();
        for i in 0..n {
            assert!((x[i] - expected[i]).abs() <= 1e-10 * expected.amax(), "{i}");
        }
    }

    #[test]
    fn a_singular_matrix_is_reported() {
        let mut banded = Banded::zeros(3, 1, 1);
        banded.add(0, 0, 1.0);
        banded.add(1, 0, 1.0);
        let mut b = vec![1.0, 2.0, 3.0];
        assert!(banded.solve(&mut b).is_none());
    }
}
