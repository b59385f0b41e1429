//! Side-by-side timings of peer rebalancing and its floors, on threads (used by
//! `hetlb bench rebalance`; the MPI counterparts are in `examples/rebalance_mpi.rs`).
//!
//! * **Moving items.** Half the ranks hold all the items; `cwa` moves half of them, each to
//!   its partner across the cube's highest dimension. The floor moves the same items between
//!   the same ranks with direct channel sends (split off, send, append).
//! * **Nothing to do.** Every rank holds the same count; a `rebalance` then costs its
//!   all-gather and the rule. The floor is an all-reduce of one `u64` by recursive doubling
//!   over the same channels.
//!
//! Every figure is the wall time of rank 0 between two barriers that every rank passes; each
//! repetition runs the kernel and the floor one after the other.

use super::Balancer;
use super::config::BalancerConfig;
use super::item::Item;
use crate::transport::threads;
use crossbeam::channel;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// An item of 64 bytes: an id and 56 bytes of data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item64 {
    /// The id.
    pub id: u64,
    /// The payload.
    pub data: [u64; 7],
}

impl Item for Item64 {
    fn id(&self) -> u64 {
        self.id
    }
}

fn items(lo: u64, hi: u64) -> Vec<Item64> {
    (lo..hi).map(|id| Item64 { id, data: [id; 7] }).collect()
}

/// Seconds to move `moved` items of 64 bytes between `ranks` threads (a power of two ≥ 2):
/// `(rebalance with cwa, direct channel sends)`, one pair per repetition.
///
/// # Panics
/// When `ranks` is not a power of two of at least 2 (a benchmark's fixed setting).
pub fn move_items(ranks: usize, moved: u64, repeats: usize, count_bytes: bool) -> Vec<(f64, f64)> {
    assert!(
        ranks >= 2 && ranks.is_power_of_two(),
        "ranks: a power of two ≥ 2"
    );
    let half = ranks / 2;
    let per_sender = moved / half as u64;
    (0..repeats)
        .map(|_| {
            (
                time_cwa(ranks, per_sender, count_bytes),
                time_direct(ranks, per_sender),
            )
        })
        .collect()
}

/// Initial items of rank `r`: the lower half of the ranks hold `2 × per_sender` each.
fn initial(r: usize, ranks: usize, per_sender: u64) -> Vec<Item64> {
    if r < ranks / 2 {
        let lo = r as u64 * 2 * per_sender;
        items(lo, lo + 2 * per_sender)
    } else {
        Vec::new()
    }
}

/// Runs one thread per element of `per_rank`: `prepare(rank, resource)` sets the rank up and
/// returns its work; the work is timed between two barriers that every rank passes. Returns
/// rank 0's seconds.
fn timed<R, F, W>(per_rank: Vec<R>, prepare: F) -> f64
where
    R: Send + 'static,
    F: Fn(usize, R) -> W + Send + Sync + 'static,
    W: FnOnce(),
{
    let barrier = Arc::new(Barrier::new(per_rank.len()));
    let prepare = Arc::new(prepare);
    let handles: Vec<_> = per_rank
        .into_iter()
        .enumerate()
        .map(|(r, resource)| {
            let barrier = Arc::clone(&barrier);
            let prepare = Arc::clone(&prepare);
            std::thread::spawn(move || {
                let work = prepare(r, resource);
                barrier.wait();
                let t = Instant::now();
                work();
                barrier.wait();
                t.elapsed().as_secs_f64()
            })
        })
        .collect();
    let times: Vec<f64> = handles
        .into_iter()
        .map(|h| h.join().expect("rank"))
        .collect();
    times[0]
}

fn time_cwa(ranks: usize, per_sender: u64, count_bytes: bool) -> f64 {
    timed(threads::group(ranks), move |r, member| {
        let mut mine = initial(r, ranks, per_sender);
        let cfg = BalancerConfig::new("cwa")
            .expect("cwa")
            .count_bytes(count_bytes);
        let mut b = Balancer::new(&member, cfg).expect("config");
        move || {
            b.rebalance(&mut mine).expect("rebalance");
            assert_eq!(mine.len() as u64, per_sender);
        }
    })
}

fn time_direct(ranks: usize, per_sender: u64) -> f64 {
    let half = ranks / 2;
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..ranks)
        .map(|_| channel::unbounded::<Vec<Item64>>())
        .unzip();
    timed(receivers, move |r, inbox| {
        let mut mine = initial(r, ranks, per_sender);
        let senders = senders.clone();
        move || {
            if r < half {
                let out = mine.split_off(mine.len() - per_sender as usize);
                senders[r + half].send(out).expect("send");
            } else {
                let got = inbox.recv().expect("recv");
                mine.extend(got);
            }
            assert_eq!(mine.len() as u64, per_sender);
        }
    })
}

/// Seconds per call, averaged over `calls` calls, of a `rebalance` that finds nothing to do
/// on `ranks` threads, and of an all-reduce of a `u64` over channels: one pair per repetition.
pub fn nothing_to_do(ranks: usize, calls: usize, repeats: usize) -> Vec<(f64, f64)> {
    (0..repeats)
        .map(|_| {
            (
                time_balanced(ranks, calls) / calls as f64,
                time_allreduce(ranks, calls) / calls as f64,
            )
        })
        .collect()
}

fn time_balanced(ranks: usize, calls: usize) -> f64 {
    timed(threads::group(ranks), move |r, member| {
        let mut mine: Vec<u64> = (r as u64 * 100..(r as u64 + 1) * 100).collect();
        let cfg = BalancerConfig::new("cwa").expect("cwa");
        let mut b = Balancer::new(&member, cfg).expect("config");
        move || {
            for _ in 0..calls {
                let report = b.rebalance(&mut mine).expect("rebalance");
                debug_assert!(!report.balanced);
            }
        }
    })
}

fn time_allreduce(ranks: usize, calls: usize) -> f64 {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..ranks)
        .map(|_| channel::unbounded::<(u32, u64)>())
        .unzip();
    timed(receivers, move |r, inbox| {
        let senders = senders.clone();
        move || {
            let mut early: Vec<(u32, u64)> = Vec::new();
            let mut total = 0u64;
            for call in 0..calls as u32 {
                // Recursive doubling; a message is tagged with its call and round.
                let mut value = r as u64 + 1;
                let mut k = 0u32;
                while (1usize << k) < ranks {
                    let tag = call * 64 + k;
                    senders[r ^ (1 << k)].send((tag, value)).expect("send");
                    let got = match early.iter().position(|&(t, _)| t == tag) {
                        Some(i) => early.swap_remove(i).1,
                        None => loop {
                            let (t, v) = inbox.recv().expect("recv");
                            if t == tag {
                                break v;
                            }
                            early.push((t, v));
                        },
                    };
                    value += got;
                    k += 1;
                }
                total = value;
            }
            assert_eq!(total, (ranks * (ranks + 1) / 2) as u64);
        }
    })
}

/// The median of `xs` (0 for none).
pub fn median(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measurements_run_and_check_their_results() {
        let m = move_items(4, 1000, 1, true);
        assert!(m[0].0 > 0.0 && m[0].1 > 0.0);
        let n = nothing_to_do(4, 3, 1);
        assert!(n[0].0 > 0.0 && n[0].1 > 0.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
    }
}

/// One schedule's move on real workers beside the model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScheduleTiming {
    /// The schedule.
    pub schedule: hetlb_core::transmission::Schedule,
    /// The model's steps (one unit over one link per step).
    pub predicted_steps: u64,
    /// Median seconds of the slowest rank's move.
    pub measured_seconds: f64,
    /// `predicted_steps × seconds per unit`, the unit time measured in the same run.
    pub predicted_seconds: f64,
}

/// Rim et al.'s Figs. 18–19 on 8 threads, scaled: one rank holds `15·k` items, the others `k`
/// each; `dem` moves them under each schedule. Returns, per schedule, the model's steps, the
/// measured move (median of `repeats`) and the model's prediction from the measured time per
/// unit.
pub fn schedules(k: u64, repeats: usize) -> Vec<ScheduleTiming> {
    use hetlb_core::transmission::Schedule;
    let ranks = 8;
    Schedule::ALL
        .into_iter()
        .map(|schedule| {
            let mut moves = Vec::new();
            let mut predicted = Vec::new();
            let mut steps = 0;
            for _ in 0..repeats {
                let barrier = Arc::new(Barrier::new(ranks));
                let handles: Vec<_> = threads::group(ranks)
                    .into_iter()
                    .enumerate()
                    .map(|(r, member)| {
                        let barrier = Arc::clone(&barrier);
                        std::thread::spawn(move || {
                            let n = if r == 0 { 15 * k } else { k };
                            let lo = if r == 0 {
                                0
                            } else {
                                15 * k + (r as u64 - 1) * k
                            };
                            let mut mine = items(lo, lo + n);
                            let cfg = BalancerConfig::new("dem")
                                .expect("dem")
                                .schedule(schedule)
                                .count_bytes(false);
                            let mut b = Balancer::new(&member, cfg).expect("config");
                            barrier.wait();
                            b.rebalance(&mut mine).expect("rebalance")
                        })
                    })
                    .collect();
                let reports: Vec<_> = handles
                    .into_iter()
                    .map(|h| h.join().expect("rank"))
                    .collect();
                let r = &reports[0];
                steps = r.predicted_steps.unwrap_or(0);
                moves.push(r.slowest_move_seconds);
                predicted.push(r.predicted_move_seconds.unwrap_or(0.0));
            }
            ScheduleTiming {
                schedule,
                predicted_steps: steps,
                measured_seconds: median(&mut moves),
                predicted_seconds: median(&mut predicted),
            }
        })
        .collect()
}
