//! The simulator's only source of choices: the load generator's SplitMix64
//! ([`Seeded`]) from one seed, so a seed names one run on every machine. Every draw goes
//! through [`Rng`]; nothing else (no wall clock, no thread timing, no hash-map order) decides
//! anything.

use flotilla_cli::loadgen::seeded::Seeded;

/// The simulation's draws over one seeded generator.
#[derive(Debug, Clone)]
pub struct Rng(Seeded);

impl Rng {
    /// A generator for `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(Seeded::new(seed))
    }

    /// An independent generator for one part of the simulation, so that adding draws in one
    /// part does not shift another's.
    #[must_use]
    pub fn fork(&mut self, salt: u64) -> Self {
        Self::new(self.next_u64() ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0.below(bound)
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below(high.saturating_sub(low) + 1)
    }

    /// True with probability `per_mille` / 1000.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1_000) < per_mille
    }

    /// An index into a collection of `len` items (0 when empty).
    pub fn index(&mut self, len: usize) -> usize {
        usize::try_from(self.below(len as u64)).unwrap_or(0)
    }

    /// 16 bytes for an event id.
    pub fn id(&mut self) -> uuid::Uuid {
        let high = u128::from(self.next_u64()) << 64;
        let bytes = (high | u128::from(self.next_u64())).to_be_bytes();
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn one_seed_gives_one_sequence_and_draws_stay_in_range() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
            let n = a.between(3, 20);
            assert_eq!(n, b.between(3, 20));
            assert!((3..=20).contains(&n));
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }
}
