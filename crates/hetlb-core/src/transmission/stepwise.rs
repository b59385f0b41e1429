//! Overlapping and pipelining with interleaving (Rim, Jang & Kim 2003, §6.2), simulated step by
//! step: the reference the event-driven [`super::pipeline`] is tested against.
//!
//! In every step each node sends one unit on every link that still has units to carry, as long
//! as it holds units; a unit that arrives in a step can leave in the next. A node that holds
//! fewer units than it has links waiting serves them in turn, starting after the dimension it
//! served last ("interleaving"), so that every receiver can start forwarding early.
//!
//! Each node keeps a bit mask of the dimensions it still has to serve, so a step costs the
//! number of busy links, not `N log N`.

use super::pipeline::round_robin;
use super::steps::Steps;
use super::{Burst, Schedule, Togo, TransmissionError};

/// Returns `(steps, steps, bursts)`.
pub(crate) fn run(
    initial: &[u64],
    togo: Togo,
) -> Result<(u64, u64, Vec<Burst>), TransmissionError> {
    // waiting[k]: bit m set while node k still has units to send over dimension m.
    let mut waiting = togo.masks();
    let mut s = Steps::new(initial, togo);
    let mut active: Vec<usize> = (0..initial.len()).filter(|&k| waiting[k] != 0).collect();
    while s.pending > 0 {
        for &k in &active {
            for m in round_robin(waiting[k], s.last[k]) {
                if s.current[k] == 0 {
                    break;
                }
                if s.send(k, m) {
                    waiting[k] &= !(1 << m);
                }
            }
        }
        s.end_step(Schedule::Pipeline)?;
        active.retain(|&k| waiting[k] != 0);
    }
    Ok(s.finish())
}
