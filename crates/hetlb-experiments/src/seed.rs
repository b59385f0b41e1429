//! Independent, reproducible random streams.
//!
//! Each trial of a Monte-Carlo experiment gets its own generator, seeded from the experiment
//! seed and the trial's coordinates through the SplitMix64 finaliser, so the stream of a trial
//! does not depend on which thread runs it or in what order.

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// SplitMix64's finaliser: a bijective mix of 64 bits.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator of stream `(experiment, index)` under `seed`.
///
/// # Example
/// ```
/// use hetlb_experiments::seed::stream;
/// use rand::RngExt;
/// let a: u64 = stream(7, 3, 11).random();
/// let b: u64 = stream(7, 3, 11).random();
/// let c: u64 = stream(7, 3, 12).random();
/// assert_eq!(a, b);
/// assert_ne!(a, c);
/// ```
pub fn stream(seed: u64, experiment: u64, index: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(mix(mix(mix(seed) ^ experiment) ^ index))
}
