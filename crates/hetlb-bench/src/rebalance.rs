//! Peer rebalancing on threads against its floors, side by side (the MPI counterparts are in
//! `examples/rebalance_mpi.rs`):
//!
//! * **Moving items.** Half the ranks hold all the items; `cwa` moves half of them, each to
//!   its partner across the cube's highest dimension. The floor moves the same items between
//!   the same ranks with direct channel sends (split off, send, append).
//! * **Nothing to do.** Every rank holds the same count; a `rebalance` then costs its
//!   all-gather and the rule. The floor is an all-reduce of one `u64` by recursive doubling
//!   over the same channels.
//! * **Schedules.** Rim, Jang & Kim's Figs. 18–19 on 8 threads, scaled: the measured move
//!   under each transmission schedule beside the model's prediction.
//!
//! Every figure is the wall time of rank 0 between two barriers that every rank passes; each
//! repetition runs the kernel and the floor one after the other.

use crate::BenchError;
use crate::timing::{Progress, available_parallelism, median};
use crossbeam::channel;
use hetlb_core::transmission::Schedule;
use hetlb_peer::{Balancer, BalancerConfig, Item};
use hetlb_transport::threads;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// The most ranks (threads) timed.
pub const MAX_RANKS: usize = 1024;

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

/// Items `lo..hi`, each carrying its id in its payload.
///
/// # Example
/// ```
/// let items = hetlb_bench::rebalance::items(3, 5);
/// assert_eq!(items[1].id, 4);
/// assert_eq!(items[1].data, [4; 7]);
/// ```
pub fn items(lo: u64, hi: u64) -> Vec<Item64> {
    (lo..hi).map(|id| Item64 { id, data: [id; 7] }).collect()
}

/// What [`run`] times.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RebalanceConfig {
    /// Ranks (threads), a power of two from 2 to [`MAX_RANKS`].
    pub ranks: usize,
    /// Items of 64 bytes that cwa moves (half the ranks send to the other half), 1 to
    /// 50,000,000.
    pub items: u64,
    /// Calls per timing of the balanced case, 1 to 1,000,000.
    pub calls: usize,
    /// Items per unit of Rim et al.'s Figs. 18–19 (15 units on one rank, 1 on each other),
    /// moved by dem under each schedule, 1 to 1,000,000.
    pub unit_items: u64,
    /// Timed repetitions (kernel and floor interleaved), 1 to 1000.
    pub runs: usize,
    /// Rank counts of the scale sweep ([`scale`]), each a power of two from 2 to
    /// [`MAX_RANKS`]; empty: no sweep.
    pub procs: Vec<usize>,
}

impl Default for RebalanceConfig {
    fn default() -> Self {
        Self {
            ranks: 8,
            items: 1_000_000,
            calls: 2000,
            unit_items: 20_000,
            runs: 5,
            procs: Vec::new(),
        }
    }
}

crate::setters!(RebalanceConfig {
    ranks: usize,
    items: u64,
    calls: usize,
    unit_items: u64,
    runs: usize,
    procs: Vec<usize>
});

impl RebalanceConfig {
    /// An estimate of the bytes [`run`] holds at its peak: the items moved (about 256 bytes
    /// an item of 64 with its copies in messages and at the receiver, and 128 MiB of room the
    /// ranks' buffers keep), the 22 units of the schedules' figures (4 KiB an item of a
    /// unit), and 256 KiB a rank.
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::rebalance::RebalanceConfig;
    /// let cfg = RebalanceConfig::default().items(50_000_000);
    /// assert!(cfg.memory_needed() > 12 << 30);
    /// ```
    pub fn memory_needed(&self) -> u128 {
        let items = u128::from(self.items) * 256 + (128 << 20);
        let units = u128::from(self.unit_items) * (4 << 10);
        let ranks = self.procs.iter().copied().fold(self.ranks, usize::max) as u128;
        items.max(units) + ranks * (256 << 10)
    }
}

/// One schedule's move on real workers beside the model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ScheduleTiming {
    /// The schedule.
    pub schedule: Schedule,
    /// The model's steps (one unit over one link per step).
    pub predicted_steps: u64,
    /// Median seconds of the slowest rank's move.
    pub measured_seconds: f64,
    /// `predicted_steps × seconds per unit`, the unit time measured in the same run.
    pub predicted_seconds: f64,
}

/// What the rebalance benchmark measured: medians, floors and ratios.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RebalanceReport {
    /// Ranks (threads).
    pub ranks: usize,
    /// Hardware threads the operating system offers.
    pub available_parallelism: usize,
    /// Items moved.
    pub items: u64,
    /// Bytes per item.
    pub item_bytes: usize,
    /// Timed repetitions.
    pub runs: usize,
    /// Median seconds of cwa moving the items (bytes counted).
    pub move_seconds: f64,
    /// The same without counting the bytes.
    pub move_uncounted_seconds: f64,
    /// Median seconds of direct channel sends of the same items (over both kinds of run).
    pub move_floor_seconds: f64,
    /// `move_seconds / move_floor_seconds`.
    pub move_ratio: f64,
    /// `move_uncounted_seconds / move_floor_seconds`.
    pub move_uncounted_ratio: f64,
    /// Median seconds per call of a rebalance with nothing to do.
    pub balanced_seconds: f64,
    /// Median seconds per all-reduce of a `u64`.
    pub balanced_floor_seconds: f64,
    /// `balanced_seconds / balanced_floor_seconds`.
    pub balanced_ratio: f64,
    /// Each schedule's measured move beside the model.
    pub schedules: Vec<ScheduleTiming>,
    /// The scale sweep, one row per rank count of [`RebalanceConfig::procs`].
    pub scale: Vec<ScaleRow>,
}

/// One rank count of the scale sweep: a cwa rebalance of a few unit items per rank (random
/// loads, so every dimension moves something) beside an all-reduce of a `u64` by recursive
/// doubling (⌈log₂ P⌉ messages per rank: the floor of any agreement).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ScaleRow {
    /// Ranks (threads).
    pub ranks: usize,
    /// `log₂ ranks`.
    pub log2_ranks: u32,
    /// Median seconds of one rebalance call (rank 0, between barriers).
    pub seconds: f64,
    /// Median seconds of one all-reduce.
    pub floor_seconds: f64,
    /// `seconds / floor_seconds`.
    pub ratio: f64,
    /// The most messages one rank sent in the call (median over runs).
    pub max_messages_per_rank: u64,
    /// Messages per rank, on average over ranks (median over runs).
    pub mean_messages_per_rank: f64,
}

/// Runs one thread per element of `per_rank`: `prepare(rank, resource)` sets the rank up and
/// returns its work; every rank passes a barrier, does its work (unless some rank could not
/// be prepared), and passes a second barrier. Returns rank 0's output and its seconds
/// between the barriers, or the first rank's error.
fn on_ranks<R, F, W, T>(per_rank: Vec<R>, prepare: F) -> Result<(T, f64), BenchError>
where
    R: Send + 'static,
    F: Fn(usize, R) -> Result<W, BenchError> + Send + Sync + 'static,
    W: FnOnce() -> Result<T, BenchError>,
    T: Send + 'static,
{
    let barrier = Arc::new(Barrier::new(per_rank.len()));
    let unprepared = Arc::new(AtomicBool::new(false));
    let prepare = Arc::new(prepare);
    let handles: Vec<_> = per_rank
        .into_iter()
        .enumerate()
        .map(|(r, resource)| {
            let barrier = Arc::clone(&barrier);
            let unprepared = Arc::clone(&unprepared);
            let prepare = Arc::clone(&prepare);
            std::thread::spawn(move || {
                let work = prepare(r, resource);
                if work.is_err() {
                    unprepared.store(true, Ordering::SeqCst);
                }
                barrier.wait();
                let t = Instant::now();
                let out = match work {
                    Ok(w) if !unprepared.load(Ordering::SeqCst) => w(),
                    Ok(_) => Err(BenchError::Check("another rank could not start".into())),
                    Err(e) => Err(e),
                };
                barrier.wait();
                out.map(|o| (o, t.elapsed().as_secs_f64()))
            })
        })
        .collect();
    let mut results = Vec::with_capacity(handles.len());
    for (r, h) in handles.into_iter().enumerate() {
        results.push(
            h.join()
                .unwrap_or_else(|_| Err(BenchError::Check(format!("rank {r} panicked")))),
        );
    }
    let mut first = None;
    for r in results {
        match r {
            Ok(x) => {
                first.get_or_insert(Ok(x));
            }
            // A rank's own error is the news, not that it could not start for another's.
            Err(BenchError::Check(m)) if m == "another rank could not start" => {}
            Err(e) => return Err(e),
        }
    }
    first.unwrap_or_else(|| Err(BenchError::Check("no rank ran".into())))
}

/// Checks the count a rank holds after a move.
fn holds(rank: usize, held: usize, expected: u64) -> Result<(), BenchError> {
    if held as u64 == expected {
        Ok(())
    } else {
        Err(BenchError::Check(format!(
            "rank {rank} holds {held} items after the move, expected {expected}"
        )))
    }
}

/// Checks `ranks` is a power of two from 2 to [`MAX_RANKS`].
fn check_ranks(ranks: usize) -> Result<(), BenchError> {
    if ranks < 2 || !ranks.is_power_of_two() || ranks > MAX_RANKS {
        return Err(BenchError::setting(
            "ranks",
            format!("{ranks} is not a power of two from 2 to 1024"),
        ));
    }
    Ok(())
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

/// Seconds to move `moved` items of 64 bytes between `ranks` threads (a power of two ≥ 2):
/// `(rebalance with cwa, direct channel sends)`; `count_bytes` as
/// [`BalancerConfig::count_bytes`].
///
/// # Errors
/// [`BenchError::Setting`] for a rank count that is not a power of two from 2;
/// [`BenchError::Peer`] when a rebalance fails; [`BenchError::Check`] when a rank does not
/// hold what it should after the move.
pub fn move_items(ranks: usize, moved: u64, count_bytes: bool) -> Result<(f64, f64), BenchError> {
    check_ranks(ranks)?;
    let per_sender = moved / (ranks / 2) as u64;
    Ok((
        time_cwa(ranks, per_sender, count_bytes)?,
        time_direct(ranks, per_sender)?,
    ))
}

fn time_cwa(ranks: usize, per_sender: u64, count_bytes: bool) -> Result<f64, BenchError> {
    on_ranks(threads::group(ranks), move |r, member| {
        let mut mine = initial(r, ranks, per_sender);
        let cfg = BalancerConfig::new("cwa")?.count_bytes(count_bytes);
        let mut b = Balancer::new(&member, cfg)?;
        Ok(move || {
            b.rebalance(&mut mine)?;
            holds(r, mine.len(), per_sender)
        })
    })
    .map(|((), secs)| secs)
}

fn time_direct(ranks: usize, per_sender: u64) -> Result<f64, BenchError> {
    let half = ranks / 2;
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..ranks)
        .map(|_| channel::unbounded::<Vec<Item64>>())
        .unzip();
    let gone = || BenchError::Check("a rank of the floor is gone".into());
    on_ranks(receivers, move |r, inbox| {
        let mut mine = initial(r, ranks, per_sender);
        let senders = senders.clone();
        Ok(move || {
            if r < half {
                let out = mine.split_off(mine.len() - per_sender as usize);
                senders[r + half].send(out).map_err(|_| gone())?;
            } else {
                let got = inbox.recv().map_err(|_| gone())?;
                mine.extend(got);
            }
            holds(r, mine.len(), per_sender)
        })
    })
    .map(|((), secs)| secs)
}

/// One run of the scale sweep on `ranks` threads: `(seconds of one cwa rebalance, the most
/// messages a rank sent, the mean)`; every item is checked to be held exactly once.
///
/// # Errors
/// As [`move_items`]; [`BenchError::Check`] when an item is lost or held twice.
pub fn spread(ranks: usize) -> Result<(f64, u64, f64), BenchError> {
    check_ranks(ranks)?;
    let loads: Vec<u64> = (0..ranks as u64).map(|r| (r * 7919 + 13) % 23).collect();
    let total: u64 = loads.iter().sum();
    let starts: Vec<u64> = loads
        .iter()
        .scan(0, |acc, &l| {
            let s = *acc;
            *acc += l;
            Some(s)
        })
        .collect();
    let held = Arc::new(std::sync::Mutex::new(Vec::<(u64, Vec<u64>)>::new()));
    let sink = Arc::clone(&held);
    let (_, secs) = on_ranks(threads::group(ranks), move |r, member| {
        let mut mine: Vec<u64> = (starts[r]..starts[r] + loads[r]).collect();
        let mut b = Balancer::new(&member, BalancerConfig::new("cwa")?)?;
        let sink = Arc::clone(&sink);
        Ok(move || {
            let report = b.rebalance(&mut mine)?;
            sink.lock()
                .map_err(|_| BenchError::Check("a rank panicked".into()))?
                .push((report.messages_sent, mine));
            Ok(())
        })
    })?;
    let held = std::mem::take(
        &mut *held
            .lock()
            .map_err(|_| BenchError::Check("a rank panicked".into()))?,
    );
    if held.len() != ranks {
        return Err(BenchError::Check(format!(
            "{} of {ranks} ranks reported",
            held.len()
        )));
    }
    let mut ids: Vec<u64> = held.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    ids.sort_unstable();
    if ids != (0..total).collect::<Vec<_>>() {
        return Err(BenchError::Check(format!(
            "{ranks} ranks: {} items held after the call, {total} before (or some twice)",
            ids.len()
        )));
    }
    let most = held.iter().map(|(m, _)| *m).max().unwrap_or(0);
    let mean = held.iter().map(|(m, _)| *m as f64).sum::<f64>() / ranks as f64;
    Ok((secs, most, mean))
}

/// The scale sweep at `ranks` threads: medians over `runs` of [`spread`] and of one
/// all-reduce, interleaved.
///
/// # Errors
/// As [`spread`].
pub fn scale(ranks: usize, runs: usize) -> Result<ScaleRow, BenchError> {
    let (mut secs, mut floors, mut most, mut mean) = (vec![], vec![], vec![], vec![]);
    for _ in 0..runs.max(1) {
        let (s, m, a) = spread(ranks)?;
        secs.push(s);
        most.push(m as f64);
        mean.push(a);
        floors.push(time_allreduce(ranks, 1)?);
    }
    let (seconds, floor_seconds) = (median(&secs), median(&floors));
    Ok(ScaleRow {
        ranks,
        log2_ranks: ranks.trailing_zeros(),
        seconds,
        floor_seconds,
        ratio: seconds / floor_seconds,
        max_messages_per_rank: median(&most) as u64,
        mean_messages_per_rank: median(&mean),
    })
}

/// Seconds per call, averaged over `calls` calls, of a `rebalance` that finds nothing to do
/// on `ranks` threads, and of an all-reduce of a `u64` over channels.
///
/// # Errors
/// As [`move_items`]; [`BenchError::Check`] when the all-reduce's sum is wrong.
pub fn nothing_to_do(ranks: usize, calls: usize) -> Result<(f64, f64), BenchError> {
    check_ranks(ranks)?;
    let calls = calls.max(1);
    Ok((
        time_balanced(ranks, calls)? / calls as f64,
        time_allreduce(ranks, calls)? / calls as f64,
    ))
}

fn time_balanced(ranks: usize, calls: usize) -> Result<f64, BenchError> {
    on_ranks(threads::group(ranks), move |r, member| {
        let mut mine: Vec<u64> = (r as u64 * 100..(r as u64 + 1) * 100).collect();
        let cfg = BalancerConfig::new("cwa")?;
        let mut b = Balancer::new(&member, cfg)?;
        Ok(move || {
            for _ in 0..calls {
                b.rebalance(&mut mine)?;
            }
            holds(r, mine.len(), 100)
        })
    })
    .map(|((), secs)| secs)
}

fn time_allreduce(ranks: usize, calls: usize) -> Result<f64, BenchError> {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..ranks)
        .map(|_| channel::unbounded::<(u32, u64)>())
        .unzip();
    let gone = || BenchError::Check("a rank of the all-reduce is gone".into());
    on_ranks(receivers, move |r, inbox| {
        let senders = senders.clone();
        Ok(move || {
            let mut early: Vec<(u32, u64)> = Vec::new();
            let mut total = 0u64;
            for call in 0..calls as u32 {
                // Recursive doubling; a message is tagged with its call and round.
                let mut value = r as u64 + 1;
                let mut k = 0u32;
                while (1usize << k) < ranks {
                    let tag = call * 64 + k;
                    senders[r ^ (1 << k)]
                        .send((tag, value))
                        .map_err(|_| gone())?;
                    let got = match early.iter().position(|&(t, _)| t == tag) {
                        Some(i) => early.swap_remove(i).1,
                        None => loop {
                            let (t, v) = inbox.recv().map_err(|_| gone())?;
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
            let expected = (ranks * (ranks + 1) / 2) as u64;
            if total == expected {
                Ok(())
            } else {
                Err(BenchError::Check(format!(
                    "the all-reduce gave {total} on rank {r}, expected {expected}"
                )))
            }
        })
    })
    .map(|((), secs)| secs)
}

/// Rim et al.'s Figs. 18–19 on 8 threads, scaled: one rank holds `15·k` items, the others `k`
/// each; `dem` moves them under each schedule. Returns, per schedule, the model's steps, the
/// measured move (median of `repeats`) and the model's prediction from the measured time per
/// unit.
///
/// # Errors
/// [`BenchError::Peer`] when a rebalance fails.
pub fn schedules(k: u64, repeats: usize) -> Result<Vec<ScheduleTiming>, BenchError> {
    const RANKS: usize = 8;
    let mut out = Vec::new();
    for schedule in Schedule::ALL {
        let mut moves = Vec::new();
        let mut predicted = Vec::new();
        let mut steps = 0;
        for _ in 0..repeats.max(1) {
            let (report, _) = on_ranks(threads::group(RANKS), move |r, member| {
                let n = if r == 0 { 15 * k } else { k };
                let lo = if r == 0 {
                    0
                } else {
                    15 * k + (r as u64 - 1) * k
                };
                let mut mine = items(lo, lo + n);
                let cfg = BalancerConfig::new("dem")?
                    .schedule(schedule)
                    .count_bytes(false);
                let mut b = Balancer::new(&member, cfg)?;
                Ok(move || Ok(b.rebalance(&mut mine)?))
            })?;
            steps = report.predicted_steps.unwrap_or(0);
            moves.push(report.slowest_move_seconds);
            predicted.push(report.predicted_move_seconds.unwrap_or(0.0));
        }
        out.push(ScheduleTiming {
            schedule,
            predicted_steps: steps,
            measured_seconds: median(&moves),
            predicted_seconds: median(&predicted),
        });
    }
    Ok(out)
}

/// Times peer rebalancing against its floors (see the module's description) and returns the
/// medians and ratios; `progress(done, total)` is told after every repetition's kernel or
/// floor pair.
///
/// # Errors
/// [`BenchError::Setting`] for a setting out of its range (checked in the order ranks,
/// items, runs, unit_items, calls); otherwise as [`move_items`], [`nothing_to_do`] and
/// [`schedules`].
///
/// # Example
/// ```
/// use hetlb_bench::rebalance::{self, RebalanceConfig};
/// let cfg = RebalanceConfig::default()
///     .ranks(4)
///     .items(400)
///     .calls(3)
///     .unit_items(10)
///     .runs(1);
/// let r = rebalance::run(&cfg, &mut |_, _| {}).unwrap();
/// assert!(r.move_seconds > 0.0 && r.move_floor_seconds > 0.0);
/// assert_eq!(r.schedules.len(), 3);
/// ```
pub fn run(cfg: &RebalanceConfig, progress: Progress<'_>) -> Result<RebalanceReport, BenchError> {
    check_ranks(cfg.ranks)?;
    if cfg.items == 0 || cfg.items > 50_000_000 {
        return Err(BenchError::setting(
            "items",
            format!("{} is not between 1 and 50000000", cfg.items),
        ));
    }
    if cfg.runs == 0 || cfg.runs > 1000 {
        return Err(BenchError::setting(
            "runs",
            format!("{} is not between 1 and 1000", cfg.runs),
        ));
    }
    if cfg.unit_items == 0 || cfg.unit_items > 1_000_000 {
        return Err(BenchError::setting(
            "unit_items",
            format!("{} is not between 1 and 1000000", cfg.unit_items),
        ));
    }
    if cfg.calls == 0 || cfg.calls > 1_000_000 {
        return Err(BenchError::setting(
            "calls",
            format!("{} is not between 1 and 1000000", cfg.calls),
        ));
    }
    if let Some(&p) = cfg.procs.iter().find(|&&p| check_ranks(p).is_err()) {
        return Err(BenchError::setting(
            "procs",
            format!("{p} is not a power of two from 2 to {MAX_RANKS}"),
        ));
    }
    let total = cfg.runs as u64 * (3 + cfg.procs.len() as u64);
    let mut done = 0;
    let mut tick = || {
        done += 1;
        progress(done, total);
    };
    let (mut moved, mut uncounted, mut balanced) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..cfg.runs {
        moved.push(move_items(cfg.ranks, cfg.items, true)?);
        tick();
        uncounted.push(move_items(cfg.ranks, cfg.items, false)?);
        tick();
        balanced.push(nothing_to_do(cfg.ranks, cfg.calls)?);
        tick();
    }
    let schedules = schedules(cfg.unit_items, cfg.runs)?;
    let mut scale_rows = Vec::new();
    for &p in &cfg.procs {
        scale_rows.push(scale(p, cfg.runs)?);
        for _ in 0..cfg.runs {
            tick();
        }
    }
    let med = |v: &[(f64, f64)], second: bool| {
        let x: Vec<f64> = v.iter().map(|p| if second { p.1 } else { p.0 }).collect();
        median(&x)
    };
    let floor = {
        let all: Vec<f64> = moved.iter().chain(&uncounted).map(|p| p.1).collect();
        median(&all)
    };
    Ok(RebalanceReport {
        ranks: cfg.ranks,
        available_parallelism: available_parallelism(),
        items: cfg.items,
        item_bytes: 64,
        runs: cfg.runs,
        move_seconds: med(&moved, false),
        move_uncounted_seconds: med(&uncounted, false),
        move_floor_seconds: floor,
        move_ratio: med(&moved, false) / floor,
        move_uncounted_ratio: med(&uncounted, false) / floor,
        balanced_seconds: med(&balanced, false),
        balanced_floor_seconds: med(&balanced, true),
        balanced_ratio: med(&balanced, false) / med(&balanced, true),
        schedules,
        scale: scale_rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measurements_run_and_check_their_results() {
        let m = move_items(4, 1000, true).unwrap();
        assert!(m.0 > 0.0 && m.1 > 0.0);
        let n = nothing_to_do(4, 3).unwrap();
        assert!(n.0 > 0.0 && n.1 > 0.0);
        assert!(matches!(
            move_items(3, 10, true),
            Err(BenchError::Setting {
                setting: "ranks",
                ..
            })
        ));
    }

    #[test]
    fn settings_are_checked_in_order() {
        let mut cfg = RebalanceConfig {
            ranks: 6,
            items: 0,
            ..RebalanceConfig::default()
        };
        let setting = |cfg: &RebalanceConfig| match run(cfg, &mut |_, _| {}) {
            Err(BenchError::Setting { setting, .. }) => setting,
            other => panic!("{other:?}"),
        };
        assert_eq!(setting(&cfg), "ranks");
        cfg.ranks = 4;
        assert_eq!(setting(&cfg), "items");
        cfg.items = 10;
        cfg.runs = 0;
        cfg.unit_items = 0;
        assert_eq!(setting(&cfg), "runs");
        cfg.runs = 1;
        assert_eq!(setting(&cfg), "unit_items");
        cfg.unit_items = 1;
        cfg.calls = 0;
        assert_eq!(setting(&cfg), "calls");
    }

    #[test]
    fn a_rank_that_cannot_start_stops_the_others_without_a_hang() {
        let e = on_ranks(vec![0u8, 1, 2], |r, _| {
            if r == 1 {
                Err(BenchError::Check("rank 1 refused".into()))
            } else {
                Ok(|| Ok(()))
            }
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "rank 1 refused");
    }
}
