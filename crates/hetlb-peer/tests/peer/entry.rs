//! Every collective entry is bounded: a rank that does not reach a call within the entry
//! timeout is named by every rank that did, which return at once holding what they held; the
//! late rank finds the call given up; the group has lost it, and says so at every later call.
//! A rank whose own arguments fail refuses the call: every rank returns at once naming it,
//! and the group goes on. On the simulated transport (virtual time, several seeds) and on
//! threads.

use hetlb_peer::{Balancer, BalancerConfig, PeerError, PeerFailure};
use hetlb_transport::{Group, Transport, simulated, threads};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_millis(200);

fn config() -> BalancerConfig {
    BalancerConfig::new("oem").unwrap().timeout(TIMEOUT)
}

/// What one rank saw: its first call's error (if any), the virtual seconds it took, and its
/// second call's error.
type Seen = (Option<PeerError>, f64, Option<PeerError>, usize);

/// Four ranks of `group`; rank 2 reaches the first call `late` after the others (never, for
/// `None`: it only waits, then leaves).
fn skip_or_late<G>(members: Vec<G>, late: Option<Duration>) -> Vec<Seen>
where
    G: Group + Send + 'static,
{
    let handles: Vec<_> = members
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let rank = member.rank();
                let mut b = Balancer::new(&member, config()).unwrap();
                let mut items: Vec<u64> = if rank == 0 { (0..40).collect() } else { vec![] };
                if rank == 2 {
                    match late {
                        None => {
                            member.sleep(TIMEOUT * 20);
                            return (None, 0.0, None, items.len());
                        }
                        Some(d) => member.sleep(d),
                    }
                }
                let t = std::time::Instant::now();
                let first = b.rebalance(&mut items).err();
                let took = t.elapsed().as_secs_f64();
                let second = b.rebalance(&mut items).err();
                (first, took, second, items.len())
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn check_named(seen: &[Seen], late: bool) {
    for (rank, (first, _, second, held)) in seen.iter().enumerate() {
        if rank == 2 && !late {
            continue;
        }
        let first = first.as_ref().expect("the call fails");
        assert_eq!(first.culprit(), Some(2), "rank {rank}: {first}");
        // Nothing moved: every rank holds what it held.
        assert_eq!(*held, if rank == 0 { 40 } else { 0 }, "rank {rank}");
        let second = second.as_ref().expect("the group is lost");
        if rank == 2 {
            assert!(matches!(second, PeerError::Excluded { .. }), "{second}");
        } else {
            assert!(
                matches!(second, PeerError::GroupLost { rank: 2, .. }),
                "rank {rank}: {second}"
            );
        }
    }
}

#[test]
fn a_rank_that_skips_the_call_is_named_by_every_other_in_virtual_time() {
    for seed in 0..12 {
        let seen = skip_or_late(simulated::group(4, seed), None);
        check_named(&seen, false);
        for (rank, (first, ..)) in seen.iter().enumerate().filter(|&(r, _)| r != 2) {
            let named_here = matches!(
                first,
                Some(PeerError::PeerFailed {
                    rank: 2,
                    failure: PeerFailure::NotArrived { .. }
                })
            );
            let told = matches!(
                first,
                Some(PeerError::Aborted {
                    culprit: Some(2),
                    ..
                })
            );
            assert!(named_here || told, "seed {seed} rank {rank}: {first:?}");
        }
    }
}

#[test]
fn a_rank_that_arrives_after_the_entry_timeout_finds_the_call_given_up() {
    for seed in 0..12 {
        let seen = skip_or_late(simulated::group(4, seed), Some(TIMEOUT * 5));
        check_named(&seen, true);
    }
}

#[test]
fn every_rank_names_the_missing_one_within_three_entry_timeouts_of_virtual_time() {
    // The simulated clock: the others' calls end within 3 × (entry timeout = timeout).
    let handles: Vec<_> = simulated::group(8, 3)
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let rank = member.rank();
                let mut b = Balancer::<u64, _>::new(&member, config()).unwrap();
                if rank == 5 {
                    member.sleep(TIMEOUT * 50);
                    return None;
                }
                let ep = member.open::<u8>().unwrap();
                let start = ep.now();
                let e = b.rebalance(&mut vec![rank as u64]).unwrap_err();
                Some((e.culprit(), ep.now() - start))
            })
        })
        .collect();
    for (rank, h) in handles.into_iter().enumerate() {
        if let Some((culprit, took)) = h.join().unwrap() {
            assert_eq!(culprit, Some(5), "rank {rank}");
            assert!(took <= TIMEOUT * 3, "rank {rank} took {took:?}");
        }
    }
}

#[test]
fn on_threads_a_rank_that_skips_the_call_is_named_by_every_other() {
    let seen = skip_or_late(threads::group(4), None);
    check_named(&seen, false);
}

/// A rank whose own argument fails refuses the call: every rank returns at once naming it,
/// nothing moves, and the next call goes ahead.
fn refusal<G: Group + Send + 'static>(members: Vec<G>) {
    let handles: Vec<_> = members
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let rank = member.rank();
                let mut b = Balancer::new(&member, config()).unwrap();
                let mut items: Vec<u64> = if rank == 0 { (0..40).collect() } else { vec![] };
                let first = if rank == 1 {
                    b.refuse("load: value 3 (-1) is negative").unwrap();
                    None
                } else {
                    Some(b.rebalance(&mut items).unwrap_err())
                };
                let held = items.len();
                b.rebalance(&mut items).expect("the group goes on");
                (first, held, items.len())
            })
        })
        .collect();
    for (rank, h) in handles.into_iter().enumerate() {
        let (first, held, after) = h.join().unwrap();
        if rank != 1 {
            let e = first.unwrap();
            assert!(
                matches!(&e, PeerError::Refused { rank: 1, reason } if reason.contains("negative")),
                "rank {rank}: {e}"
            );
        }
        assert_eq!(held, if rank == 0 { 40 } else { 0 });
        assert_eq!(after, 10);
    }
}

#[test]
fn a_refusal_stops_every_rank_at_once_and_the_group_goes_on() {
    for seed in 0..8 {
        refusal(simulated::group(4, seed));
        refusal(simulated::group_without_ledger(4, seed));
    }
    refusal(threads::group(4));
}

/// `all_gather_values`: every rank gets every rank's numbers in rank order; a rank that
/// refuses instead is named by every other rank, and the next call goes on; ranks giving
/// different counts are told so.
#[test]
fn gathered_values_agree_and_a_refusal_is_named() {
    let handles: Vec<_> = threads::group(4)
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let rank = member.rank();
                let mut b: Balancer<u64, _> = Balancer::new(&member, config()).unwrap();
                let all = b.all_gather_values(&[rank as f64, 1.5]).unwrap();
                let refused = if rank == 1 {
                    b.refuse("bad cost").unwrap();
                    None
                } else {
                    b.all_gather_values(&[0.0]).err()
                };
                let uneven = b
                    .all_gather_values(&vec![1.0; 1 + usize::from(rank == 3)])
                    .err();
                let mut items: Vec<u64> = if rank == 0 { (0..40).collect() } else { vec![] };
                let after = b.rebalance(&mut items).map(|r| r.loads_after);
                (all, refused, uneven, after)
            })
        })
        .collect();
    for (rank, h) in handles.into_iter().enumerate() {
        let (all, refused, uneven, after) = h.join().unwrap();
        let want: Vec<Vec<f64>> = (0..4).map(|r| vec![r as f64, 1.5]).collect();
        assert_eq!(all, want, "rank {rank}");
        if rank != 1 {
            match refused {
                Some(PeerError::Refused { rank: 1, .. }) => {}
                other => panic!("rank {rank}: expected rank 1's refusal, got {other:?}"),
            }
        }
        assert!(
            uneven
                .as_ref()
                .is_some_and(|e| e.to_string().contains("numbers to gather")),
            "rank {rank}: {uneven:?}"
        );
        assert_eq!(after.unwrap(), vec![10, 10, 10, 10], "rank {rank}");
    }
}

/// `exchange_bytes`: every part reaches its rank, in the order of `from`, pieces of a long
/// part joined; a rank that refuses instead is named by every rank waiting for it (and by
/// the others at their next call), and the group goes on.
#[test]
fn exchanged_bytes_arrive_whole_and_a_refusal_is_named() {
    let handles: Vec<_> = threads::group(4)
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let rank = member.rank();
                // a long timeout: building and copying 64 MiB is slow in a debug build
                let config = BalancerConfig::new("oem")
                    .unwrap()
                    .timeout(Duration::from_secs(30));
                let mut b: Balancer<u64, _> = Balancer::new(&member, config).unwrap();
                // Every rank sends `rank + 1` copies of its rank's byte to every other; the
                // part from 3 to 0 is longer than a message (several pieces).
                let part = |to: usize| {
                    let n = if (rank, to) == (3, 0) {
                        (64 << 20) + 1
                    } else {
                        rank + 1
                    };
                    vec![rank as u8; n]
                };
                let others: Vec<usize> = (0..4).filter(|&r| r != rank).collect();
                let send = others.iter().map(|&to| (to, part(to))).collect();
                let from: Vec<usize> = others.iter().rev().copied().collect();
                let got = b.exchange_bytes(send, &from).unwrap();
                let lens: Vec<usize> = got.iter().map(Vec::len).collect();
                let whole = got
                    .iter()
                    .zip(&from)
                    .all(|(g, &r)| g.iter().all(|&x| x == r as u8));
                // rank 2 refuses the next exchange, in which rank 0 expects bytes from it
                let refused = if rank == 2 {
                    b.refuse("no room").unwrap();
                    None
                } else {
                    let from: &[usize] = if rank == 0 { &[2] } else { &[] };
                    b.exchange_bytes(Vec::new(), from).err()
                };
                let next = b.barrier().err();
                (from, lens, whole, refused, next)
            })
        })
        .collect();
    for (rank, h) in handles.into_iter().enumerate() {
        let (from, lens, whole, refused, next) = h.join().unwrap();
        let want: Vec<usize> = from
            .iter()
            .map(|&r| {
                if (r, rank) == (3, 0) {
                    (64 << 20) + 1
                } else {
                    r + 1
                }
            })
            .collect();
        assert_eq!(lens, want, "rank {rank}");
        assert!(whole, "rank {rank}: bytes of another rank");
        if rank == 0 {
            assert!(
                matches!(&refused, Some(PeerError::Refused { rank: 2, reason }) if reason.contains("no room")),
                "rank {rank}: {refused:?}"
            );
        }
        assert!(next.is_none(), "rank {rank}: the group goes on: {next:?}");
    }
}

/// Four ranks of `group`: rank 2 stops (it falls silent, like a process stopped with
/// `SIGSTOP`) before the call; rank 0 leaves the group half a timeout later without calling
/// (as a rank does that gave the run up at a barrier after finding rank 2 stopped); ranks 1
/// and 3 call. What ranks 1 and 3 name as the cause of their failed call.
fn stopped_and_left<G>(members: Vec<G>) -> Vec<(usize, Option<usize>)>
where
    G: Group + Send + 'static,
{
    let callers_done = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let handles: Vec<_> = members
        .into_iter()
        .map(|member| {
            let callers_done = callers_done.clone();
            std::thread::spawn(move || {
                let rank = member.rank();
                let mut b = Balancer::<u64, _>::new(&member, config()).unwrap();
                match rank {
                    2 => {
                        // Silent until both callers have returned.
                        let ep = member.open::<u8>().unwrap();
                        ep.pause(None);
                        while callers_done.load(std::sync::atomic::Ordering::SeqCst) < 2 {
                            member.sleep(TIMEOUT / 10);
                        }
                        None
                    }
                    0 => {
                        member.sleep(TIMEOUT / 2);
                        drop(b);
                        None
                    }
                    _ => {
                        let e = b.rebalance(&mut vec![rank as u64]).unwrap_err();
                        callers_done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        Some((rank, e.culprit()))
                    }
                }
            })
        })
        .collect();
    handles
        .into_iter()
        .filter_map(|h| h.join().unwrap())
        .collect()
}

#[test]
fn a_rank_that_leaves_while_another_is_stopped_lets_the_stopped_one_be_named() {
    for seed in 0..6 {
        for (rank, culprit) in stopped_and_left(simulated::group(4, seed)) {
            assert_eq!(
                culprit,
                Some(2),
                "seed {seed}: rank {rank} named {culprit:?}"
            );
        }
    }
    for (rank, culprit) in stopped_and_left(threads::group(4)) {
        assert_eq!(culprit, Some(2), "threads: rank {rank} named {culprit:?}");
    }
}

/// Four ranks of `group` balance 40 items, then call again (nothing to move): rank 2 reaches
/// that call `TIMEOUT * 5` late. What each rank's second call returned.
fn late_to_an_idle_call<G>(members: Vec<G>) -> Vec<Result<(), PeerError>>
where
    G: Group + Send + 'static,
{
    let handles: Vec<_> = members
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let rank = member.rank();
                let mut b = Balancer::new(&member, config()).unwrap();
                let mut items: Vec<u64> = if rank == 0 { (0..40).collect() } else { vec![] };
                b.rebalance(&mut items).expect("a first call with everyone");
                if rank == 2 {
                    member.sleep(TIMEOUT * 5);
                }
                b.rebalance(&mut items).map(|_| ())
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn a_rank_late_to_a_call_that_moves_nothing_finds_it_given_up() {
    // The others sent their values before they gave the call up: the late rank's gather
    // completes, and the rule moves nothing; it must still return the give-up.
    for seed in 0..6 {
        for (rank, second) in late_to_an_idle_call(simulated::group(4, seed))
            .into_iter()
            .enumerate()
        {
            let e = second.expect_err("the call without rank 2 fails");
            assert_eq!(e.culprit(), Some(2), "seed {seed} rank {rank}: {e}");
        }
    }
}
