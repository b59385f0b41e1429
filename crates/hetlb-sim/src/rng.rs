//! Seeded random streams: one independent PCG stream per node and purpose.
//!
//! Every random draw of a run comes from a [`Pcg64`] built from the run's seed and a stream
//! number (PCG's increment, as with `set_stream`), so node 7's service times do not change when
//! node 3 draws more or fewer numbers, and a run's output depends only on its seed.

use rand::Rng;
use rand_distr::{Distribution, Exp1};
use rand_pcg::Pcg64;

/// What a stream is used for; part of its stream number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Purpose {
    /// A node's service times.
    Service = 0,
    /// A node's external arrivals.
    Arrivals = 1,
    /// The delays of a node's outgoing links.
    Links = 2,
}

/// SplitMix64: spreads a small seed over all bits.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The stream of `node` for `purpose` in a run seeded with `seed`.
///
/// # Example
/// ```
/// use hetlb_sim::rng::{stream, Purpose};
/// use rand::Rng;
/// let mut a = stream(1, Purpose::Service, 0);
/// let mut b = stream(1, Purpose::Service, 0);
/// let mut c = stream(1, Purpose::Service, 1);
/// let (x, y, z) = (a.next_u64(), b.next_u64(), c.next_u64());
/// assert_eq!(x, y);
/// assert_ne!(x, z);
/// ```
pub fn stream(seed: u64, purpose: Purpose, node: usize) -> Pcg64 {
    let hi = splitmix(seed);
    let lo = splitmix(hi ^ 0x5851_F42D_4C95_7F2D);
    let state = (u128::from(hi) << 64) | u128::from(lo);
    let id = ((node as u128) << 8) | purpose as u128;
    Pcg64::new(state, id)
}

/// An exponential draw with the given mean.
///
/// # Example
/// ```
/// use hetlb_sim::rng::{exponential, stream, Purpose};
/// let mut r = stream(3, Purpose::Arrivals, 0);
/// let n = 20_000;
/// let mean = (0..n).map(|_| exponential(&mut r, 2.0)).sum::<f64>() / n as f64;
/// assert!((mean - 2.0).abs() < 0.1);
/// ```
pub fn exponential<R: Rng + ?Sized>(rng: &mut R, mean: f64) -> f64 {
    let e: f64 = Exp1.sample(rng);
    mean * e
}
