//! The load generator's seeded numbers: SplitMix64, so one seed gives the same fleet and the same
//! delays on every machine and every run. (A few lines; the load generator needs no more from a
//! random-number crate.)

/// A SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct Seeded(u64);

impl Seeded {
    /// A generator for `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`0` when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        // Multiply-shift: unbiased enough for delays and labels, and branch-free.
        let wide = u128::from(self.next_u64()) * u128::from(bound);
        u64::try_from(wide >> 64).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_seed_gives_one_sequence() {
        let first: Vec<u64> = (0..4).map(|_| Seeded::new(7).below(100)).collect();
        let mut a = Seeded::new(7);
        let mut b = Seeded::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
        assert!(first.iter().all(|n| *n < 100));
        assert_ne!(Seeded::new(7).next_u64(), Seeded::new(8).next_u64());
    }
}
