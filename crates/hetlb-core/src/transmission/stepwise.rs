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
use super::{Burst, Schedule, Togo, TransmissionError};

/// Returns `(steps, steps, bursts)`.
pub(crate) fn run(
    initial: &[u64],
    mut togo: Togo,
) -> Result<(u64, u64, Vec<Burst>), TransmissionError> {
    let n = togo.n as usize;
    let nodes = initial.len();
    let mut current = initial.to_vec();
    let mut incoming = vec![0u64; nodes];
    let mut last = vec![n.saturating_sub(1); nodes];
    let mut pending = togo.total();
    // waiting[k]: bit m set while node k still has units to send over dimension m.
    let mut waiting: Vec<u64> = (0..nodes)
        .map(|k| {
            togo.units[k * n..(k + 1) * n]
                .iter()
                .enumerate()
                .filter(|&(_, &u)| u > 0)
                .fold(0u64, |mask, (m, _)| mask | (1 << m))
        })
        .collect();
    let mut active: Vec<usize> = (0..nodes).filter(|&k| waiting[k] != 0).collect();
    // open[k * n + m]: the burst on link (k, dimension m) still being extended, if any.
    let mut open: Vec<Option<usize>> = vec![None; nodes * n];
    let mut bursts: Vec<Burst> = Vec::new();
    let mut step = 0u64;
    while pending > 0 {
        let mut sent_any = false;
        for &k in &active {
            let mut held = current[k];
            if held == 0 {
                continue;
            }
            for m in round_robin(waiting[k], last[k]) {
                if held == 0 {
                    break;
                }
                let slot = k * n + m;
                togo.units[slot] -= 1;
                if togo.units[slot] == 0 {
                    waiting[k] &= !(1 << m);
                }
                held -= 1;
                pending -= 1;
                sent_any = true;
                let to = k ^ (1 << m);
                incoming[to] += 1;
                last[k] = m;
                match open[slot] {
                    Some(b) if bursts[b].start + bursts[b].len == step => bursts[b].len += 1,
                    _ => {
                        open[slot] = Some(bursts.len());
                        bursts.push(Burst {
                            from: k,
                            to,
                            start: step,
                            len: 1,
                        });
                    }
                }
            }
            current[k] = held;
        }
        if !sent_any {
            return Err(TransmissionError::Stalled {
                schedule: Schedule::Pipeline,
                step,
                pending,
            });
        }
        for (held, inc) in current.iter_mut().zip(incoming.iter_mut()) {
            *held += std::mem::take(inc);
        }
        active.retain(|&k| waiting[k] != 0);
        step += 1;
    }
    Ok((step, step, bursts))
}
