//! Rim et al.'s overlapping algorithm (§6.1).
//!
//! ```text
//! while Σ_k Togo(P_k) > 0:
//!     for every P_k in parallel:
//!         find the largest i with Σ_{m=0..i} Togo(P_k, m) ≤ Current(P_k)
//!         send Togo(P_k, m) over dimension m for every m ≤ i
//!     Current(P_k) += units received
//! ```
//! A round lasts as long as the largest amount it puts on one link.

use super::{Burst, Schedule, Togo, TransmissionError};

/// Returns `(steps, rounds, bursts)`.
pub(super) fn run(
    initial: &[u64],
    mut togo: Togo,
) -> Result<(u64, u64, Vec<Burst>), TransmissionError> {
    let n = togo.n as usize;
    let mut current = initial.to_vec();
    let mut incoming = vec![0u64; initial.len()];
    let mut pending = togo.total();
    let (mut step, mut rounds) = (0u64, 0u64);
    let mut bursts = Vec::new();
    while pending > 0 {
        let mut longest = 0u64;
        for (k, held) in current.iter_mut().enumerate() {
            let row = &mut togo.units[k * n..(k + 1) * n];
            // longest prefix of dimensions whose transfers the holdings cover
            let mut covered = 0u64;
            let mut prefix = 0;
            for &units in row.iter() {
                if covered.checked_add(units).is_none_or(|c| c > *held) {
                    break;
                }
                covered += units;
                prefix += 1;
            }
            for (m, units) in row[..prefix].iter_mut().enumerate() {
                if *units > 0 {
                    let to = k ^ (1 << m);
                    bursts.push(Burst {
                        from: k,
                        to,
                        start: step,
                        len: *units,
                    });
                    incoming[to] += *units;
                    longest = longest.max(*units);
                    *units = 0;
                }
            }
            *held -= covered;
            pending -= u128::from(covered);
        }
        if longest == 0 {
            return Err(TransmissionError::Stalled {
                schedule: Schedule::Overlap,
                step,
                pending,
            });
        }
        for (held, inc) in current.iter_mut().zip(incoming.iter_mut()) {
            *held += std::mem::take(inc);
        }
        step = step.saturating_add(longest);
        rounds += 1;
    }
    Ok((step, rounds, bursts))
}
