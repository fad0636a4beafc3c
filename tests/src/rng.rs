//! The tests' random choices.

/// SplitMix64: a small deterministic generator for the tests' random choices (the same on
/// every rank and every run for one seed; no dependency).
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// One step from `seed`: a well-mixed 64-bit value derived from it.
    pub fn mix(seed: u64) -> u64 {
        SplitMix64(seed).next_u64()
    }
}
