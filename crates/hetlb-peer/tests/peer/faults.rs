//! The fault harness: random faults in random rebalances on threads, and after every trial
//! the two promises of the peer balancer checked across the group:
//!
//! 1. **exactly once** — no item is held by two ranks that are still running, and every item
//!    missing was held by a rank that crashed (its share before the call if the call was
//!    rolled back, after it if the call committed);
//! 2. **each result says what its rank holds** — `Ok` means the move committed (the rank
//!    holds its new share, as its report says), an error means the call was rolled back
//!    (the rank holds exactly what it held before), and all running ranks agree.
//!
//! Faults: a panic (a crash), giving up, and a freeze longer or shorter than the timeout,
//! after `k` item messages or right after the vote; one or two victims; every rule, every
//! schedule, unit and weighted items, 2 to 8 ranks. The same trials run four times: with the
//! items in a `Vec` of an `Item` type, and as byte records in one buffer (`Records`, the
//! path of the C interface); each with the agreement in the group's ledger (as threads
//! agree) and by messages (a group without a ledger: the tree-shaped two-phase commit that
//! MPI processes run). `HETLB_FAULT_TRIALS` sets the number of trials of each (150 on
//! threads, 500 on the simulated flavour by default: a trial on threads waits out real
//! timeouts and one on the simulated flavour takes milliseconds in a debug build, so the quick
//! `cargo test --workspace` runs few of them; CI runs 600 on threads, with
//! `HETLB_FAULT_TRIALS=600 cargo test -p hetlb-peer --test peer faults:: -- --skip
//! simulated`, and 2,000 on the simulated flavour), `HETLB_FAULT_SEED` the first seed,
//! `HETLB_FAULT_CONCURRENCY` how many trials run at once (4 on threads, 2 on the simulated
//! flavour), and `HETLB_FAULT_DEBUG` (set to anything) prints every rank a call left in doubt,
//! with the trial's faults.
//!
//! The same trials run on two flavours of the transport: threads (real time, the machine's
//! interleavings) and the simulated flavour (`hetlb_transport::simulated`: virtual time, one
//! rank at a time, message order drawn from the trial's seed), where a trial is a function of
//! its seed: `HETLB_FAULT_TRANSPORT=simulated HETLB_FAULT_SEED=S HETLB_FAULT_TRIALS=1 cargo
//! test -p hetlb-peer --test peer faults:: -- --nocapture` prints the digest of trial `S`'s
//! outcome, the same on every run, and replays it exactly. `HETLB_FAULT_TRANSPORT` chooses the flavour
//! of the four trial tests (threads by default); the `simulated_…` tests always run on it.
//!
//! By messages a rank may end a call in doubt (`PeerError::InDoubt`) when the coordinator
//! falls silent after its vote; it then tries `Balancer::resolve` for a while, and if the
//! decision cannot arrive any more (the coordinator's thread has ended), the harness settles
//! it with the coordinator's own result. Either way what it holds afterwards must be what
//! the outcome gives it.
//!
//! One more harness runs the trigger `auto` over ten calls per trial: the ranks skip calls
//! after checks that find nothing to move, new items arrive between calls, and a fault on
//! one rank strikes at a later move; the ranks must skip the same calls and keep every item
//! exactly once (`HETLB_FAULT_TRIALS / 5` trials, 40 by default).
//!
//! Nothing here depends on timing: a freeze that happens to outlast the timeout on a loaded
//! machine turns a call that would have committed into one that rolls back, and both must
//! keep the promises.

use hetlb_core::algorithm::Algorithm;
use hetlb_core::transmission::Schedule;
use hetlb_peer::{
    Balancer, BalancerConfig, Bytes, Fault, Item, PeerError, Records, Report, Speeds,
};
use hetlb_transport::{Group, simulated, threads};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Once;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Job {
    id: u64,
    cost: u64,
    /// Where it lies, in the trials whose items give positions.
    at: Option<[f64; 2]>,
}

impl Item for Job {
    fn id(&self) -> u64 {
        self.id
    }
    fn load(&self) -> u64 {
        self.cost
    }
    fn position(&self) -> Option<[f64; 3]> {
        self.at.map(|[x, y]| [x, y, 0.0])
    }
}

const TIMEOUT: Duration = Duration::from_millis(120);

/// Injected panics are expected: keep them off the test output.
fn quiet_injected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let injected = info
                .payload()
                .downcast_ref::<String>()
                .is_some_and(|m| m.contains("injected fault"));
            if !injected {
                default(info);
            }
        }));
    });
}

#[derive(Debug, Clone)]
struct Trial {
    #[allow(dead_code)] // printed with the trial
    seed: u64,
    ranks: usize,
    algorithm: Algorithm,
    schedule: Schedule,
    capacities: Option<Vec<f64>>,
    items: Vec<Vec<Job>>,
    faults: BTreeMap<usize, Fault>,
    /// A rank that does not take part as asked: it skips the call, or refuses it.
    absent: Option<(usize, Absence)>,
}

/// How a rank stays out of a call.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Absence {
    /// It never reaches the call (it computes for longer than the entry timeout and the
    /// timeout together, then leaves): the others must name it. Simulated flavour only (a
    /// long computation costs virtual time there); on threads it refuses instead.
    Skip,
    /// Its own argument fails a check: it refuses the call (`Balancer::refuse`).
    Refuse,
}

fn random_fault(rng: &mut Pcg64) -> Fault {
    let long = TIMEOUT + Duration::from_millis(rng.random_range(30..150));
    let short = Duration::from_millis(rng.random_range(1..10));
    let k = rng.random_range(1..4);
    let after_vote = rng.random_bool(0.4);
    match (rng.random_range(0..4), after_vote) {
        (0, false) => Fault::PanicAfterSends(k),
        (0, true) => Fault::PanicAfterVote,
        (1, false) => Fault::LeaveAfterSends(k),
        (1, true) => Fault::LeaveAfterVote,
        (2, false) => Fault::FreezeAfterSends(k, long),
        (2, true) => Fault::FreezeAfterVote(long),
        (_, false) => Fault::FreezeAfterSends(k, short),
        (_, true) => Fault::FreezeAfterVote(short),
    }
}

fn trial(seed: u64) -> Trial {
    let mut rng = Pcg64::seed_from_u64(seed);
    // Half the trials on a hypercube, half on any count from 3 to 7 ranks (the hypercube
    // rules embedded in a cube, hetlb_core::embedding).
    let ranks = if rng.random_bool(0.5) {
        1usize << rng.random_range(1..4u32)
    } else {
        rng.random_range(3..8usize)
    };
    let rules: Vec<Algorithm> = Algorithm::all().collect();
    let algorithm = rules[rng.random_range(0..rules.len())];
    let schedule = Schedule::ALL[rng.random_range(0..Schedule::ALL.len())];
    let capacities = rng.random_bool(0.3).then(|| {
        (0..ranks)
            .map(|_| f64::from(rng.random_range(1..5u32)))
            .collect()
    });
    let weighted = rng.random_bool(0.5);
    let positioned = rng.random_bool(0.3);
    let count = rng.random_range(0..200u64);
    let mut items: Vec<Vec<Job>> = vec![Vec::new(); ranks];
    // Skewed: a few ranks hold most of the items, so that something moves.
    let heavy = rng.random_range(0..ranks);
    for id in 0..count {
        let owner = if rng.random_bool(0.6) {
            heavy
        } else {
            rng.random_range(0..ranks)
        };
        let cost = if weighted { rng.random_range(0..9) } else { 1 };
        let at = positioned.then(|| [rng.random::<f64>(), rng.random::<f64>()]);
        items[owner].push(Job { id, cost, at });
    }
    let victims = if rng.random_bool(0.2) { 2 } else { 1 };
    let mut faults = BTreeMap::new();
    for _ in 0..victims {
        faults.insert(rng.random_range(0..ranks), random_fault(&mut rng));
    }
    let absent = rng.random_bool(0.15).then(|| {
        let kind = if rng.random_bool(0.5) {
            Absence::Skip
        } else {
            Absence::Refuse
        };
        (rng.random_range(0..ranks), kind)
    });
    if let Some((r, _)) = absent {
        faults.remove(&r);
    }
    Trial {
        seed,
        ranks,
        algorithm,
        schedule,
        capacities,
        items,
        faults,
        absent,
    }
}

type Outcome = Option<(Result<Report, PeerError>, Vec<Job>)>;

/// How the trial's ranks agree on the outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Agreement {
    /// In the group's ledger (threads share memory).
    Ledger,
    /// By messages: a group without a ledger, as MPI processes.
    Messages,
}

/// The transport the trial's ranks run on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Flavour {
    /// Threads: real time, the machine's interleavings.
    Threads,
    /// The simulated flavour: virtual time, interleavings drawn from the trial's seed.
    Simulated,
}

impl Flavour {
    /// `HETLB_FAULT_TRANSPORT` (`threads` or `simulated`), threads by default.
    fn from_env() -> Self {
        match std::env::var("HETLB_FAULT_TRANSPORT").as_deref() {
            Ok("simulated") => Flavour::Simulated,
            _ => Flavour::Threads,
        }
    }
}

/// A rank still in doubt when its thread ends: its balancer and what it holds, settled by
/// the harness with the coordinator's result.
enum Leftover<G: Group> {
    Items(Balancer<Job, G>, Vec<Job>),
    Records(Balancer<Bytes, G>, Vec<u8>),
}

/// How long an in-doubt rank keeps trying `resolve`.
const RESOLVE_TRIES: u32 = 20;

/// How the trial's ranks hold their items.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Storage {
    /// A `Vec<Job>`.
    Items,
    /// Byte records of 24 bytes: the id, the cost, and a word derived from the id (checked
    /// when the records are read back, so that a record torn in transit is caught).
    Records,
}

/// A record: the id, the cost, the id's complement (a record torn in transit is caught),
/// and two coordinates (used by the trials whose items give positions).
const RECORD: usize = 40;

fn to_records(jobs: &[Job]) -> Vec<u8> {
    jobs.iter()
        .flat_map(|j| {
            let [x, y] = j.at.unwrap_or([0.0; 2]);
            [j.id, j.cost, !j.id, x.to_bits(), y.to_bits()]
        })
        .flat_map(u64::to_ne_bytes)
        .collect()
}

fn from_records(bytes: &[u8]) -> Vec<Job> {
    bytes
        .chunks_exact(RECORD)
        .map(|r| {
            let w = |k: usize| u64::from_ne_bytes(r[8 * k..8 * k + 8].try_into().expect("8"));
            assert_eq!(w(2), !w(0), "a record arrived torn");
            Job {
                id: w(0),
                cost: w(1),
                at: None,
            }
        })
        .collect()
}

fn record_cost(r: &[u8]) -> u64 {
    u64::from_ne_bytes(r[8..16].try_into().expect("8"))
}

/// A hypercube on a power of two, the complete network otherwise.
fn topology(ranks: usize) -> String {
    if ranks.is_power_of_two() {
        format!("hypercube:{}", ranks.trailing_zeros())
    } else {
        format!("complete:{ranks}")
    }
}

fn config(t: &Trial, rank: usize) -> BalancerConfig {
    let mut cfg = BalancerConfig::for_algorithm(t.algorithm)
        .topology(&topology(t.ranks))
        .expect("a topology")
        .schedule(t.schedule)
        .timeout(TIMEOUT);
    // Capacity-blind rules refuse capacities (they would ignore them).
    if let Some(c) = t
        .capacities
        .as_ref()
        .filter(|_| t.algorithm.uses_capacities())
    {
        cfg = cfg.speeds(Speeds::Fixed(c.clone()));
    }
    if let Some(&f) = t.faults.get(&rank) {
        cfg = cfg.fault(f);
    }
    cfg
}

fn records_of<'a>(buffer: &'a mut Vec<u8>, kind: RecordKind) -> Records<'a, Vec<u8>> {
    let mut records = Records::new(buffer, RECORD, 0).expect("records");
    if kind.positioned {
        records = records
            .with_positions(24, 2)
            .expect("coordinates in the record");
    }
    if kind.weighted {
        records.with_loads(&record_cost)
    } else {
        records
    }
}

/// How a trial's records are read.
#[derive(Debug, Clone, Copy)]
struct RecordKind {
    weighted: bool,
    positioned: bool,
}

/// Runs the trial on `flavour`; `None` for a rank that panicked. By messages, a rank left in
/// doubt is settled with the coordinator's result (see the module documentation).
fn run(t: &Trial, storage: Storage, agreement: Agreement, flavour: Flavour) -> Vec<Outcome> {
    let ledger = agreement == Agreement::Ledger;
    let mut t = t.clone();
    if flavour == Flavour::Threads
        && let Some((_, a @ Absence::Skip)) = &mut t.absent
    {
        *a = Absence::Refuse;
    }
    let t = &t;
    match (flavour, ledger) {
        (Flavour::Threads, true) => run_on(t, storage, threads::group(t.ranks)),
        (Flavour::Threads, false) => run_on(t, storage, threads::group_without_ledger(t.ranks)),
        (Flavour::Simulated, true) => run_on(t, storage, simulated::group(t.ranks, t.seed)),
        (Flavour::Simulated, false) => {
            run_on(t, storage, simulated::group_without_ledger(t.ranks, t.seed))
        }
    }
}

/// A rank that stays out of the call: it refuses it, or computes for far longer than the
/// entry timeout and then leaves.
fn stay_out<K: hetlb_peer::ItemKind, G: Group>(member: &G, cfg: BalancerConfig, absence: Absence) {
    let mut b = Balancer::<K, G>::new(member, cfg).expect("a valid configuration");
    match absence {
        Absence::Skip => member.sleep(TIMEOUT * 10),
        Absence::Refuse => b.refuse("an argument failed its check").expect("refused"),
    }
}

/// One rank's part of a trial: its call, then `resolve` for a while if it is left in doubt.
fn rank_part<G: Group>(
    member: &G,
    cfg: BalancerConfig,
    mut mine: Vec<Job>,
    storage: Storage,
    kind: RecordKind,
    absence: Option<Absence>,
) -> (Result<Report, PeerError>, Vec<Job>, Option<Leftover<G>>) {
    let pause = Duration::from_millis(10);
    let me = member.rank();
    let not_called = || PeerError::Refused {
        rank: me,
        reason: "not called".into(),
    };
    if let Some(absence) = absence {
        match storage {
            Storage::Items => stay_out::<Job, G>(member, cfg, absence),
            Storage::Records => stay_out::<Bytes, G>(member, cfg, absence),
        }
        return (Err(not_called()), mine, None);
    }
    match storage {
        Storage::Items => {
            let mut b = Balancer::new(member, cfg).expect("a valid configuration");
            let r = b.rebalance(&mut mine);
            for _ in 0..RESOLVE_TRIES {
                if !b.in_doubt() || b.resolve(&mut mine).is_ok() {
                    break;
                }
                member.sleep(pause);
            }
            if b.in_doubt() {
                (r, Vec::new(), Some(Leftover::Items(b, mine)))
            } else {
                (r, mine, None)
            }
        }
        Storage::Records => {
            let mut b: Balancer<Bytes, _> =
                Balancer::new(member, cfg).expect("a valid configuration");
            let mut buffer = to_records(&mine);
            let r = b.rebalance(&mut records_of(&mut buffer, kind));
            for _ in 0..RESOLVE_TRIES {
                if !b.in_doubt() || b.resolve(&mut records_of(&mut buffer, kind)).is_ok() {
                    break;
                }
                member.sleep(pause);
            }
            if b.in_doubt() {
                (r, Vec::new(), Some(Leftover::Records(b, buffer)))
            } else {
                (r, from_records(&buffer), None)
            }
        }
    }
}

fn run_on<G>(t: &Trial, storage: Storage, members: Vec<G>) -> Vec<Outcome>
where
    G: Group + Send + 'static,
    Balancer<Job, G>: Send,
    Balancer<Bytes, G>: Send,
{
    let kind = RecordKind {
        weighted: t.items.iter().flatten().any(|j| j.cost != 1),
        positioned: t.items.iter().flatten().any(|j| j.at.is_some()),
    };
    let handles: Vec<_> = members
        .into_iter()
        .zip(t.items.clone())
        .enumerate()
        .map(|(rank, (member, mine))| {
            let cfg = config(t, rank);
            let absence = t.absent.filter(|&(r, _)| r == rank).map(|(_, a)| a);
            std::thread::spawn(move || rank_part(&member, cfg, mine, storage, kind, absence))
        })
        .collect();
    let ended: Vec<_> = join_within(handles, &format!("{t:?}"))
        .into_iter()
        .map(Result::ok)
        .collect();
    // The coordinator is never in doubt: its result is the outcome. Dead, it never decided
    // (its injected panics strike before it decides): the call was rolled back.
    let committed = match &ended[0] {
        Some((Ok(rep), _, _)) => rep.balanced,
        _ => false,
    };
    ended
        .into_iter()
        .map(|end| {
            end.map(|(r, held, leftover)| match leftover {
                None => (r, held),
                Some(Leftover::Items(mut b, mut mine)) => {
                    b.settle_in_doubt(&mut mine, committed).expect("settled");
                    (r, mine)
                }
                Some(Leftover::Records(mut b, mut buffer)) => {
                    b.settle_in_doubt(&mut records_of(&mut buffer, kind), committed)
                        .expect("settled");
                    (r, from_records(&buffer))
                }
            })
        })
        .collect()
}

/// A digest of a trial's outcome: every rank's result (its report's group vectors, or its
/// error) and the items it holds. On the simulated flavour it is a function of the seed.
fn digest(out: &[Outcome]) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    for o in out {
        match o {
            None => "dead".hash(&mut h),
            Some((result, held)) => {
                match result {
                    Ok(rep) => {
                        (rep.balanced, &rep.loads_after, &rep.items_after_all).hash(&mut h);
                        rep.move_seconds.to_bits().hash(&mut h);
                    }
                    Err(e) => e.to_string().hash(&mut h),
                }
                ids(held).hash(&mut h);
            }
        }
    }
    h.finish()
}

/// Joins every rank's thread. A hang would be a defect of the protocol: the trial is
/// reported (`what`) after two minutes rather than waited for.
fn join_within<T>(
    handles: Vec<std::thread::JoinHandle<T>>,
    what: &str,
) -> Vec<std::thread::Result<T>> {
    let watchdog = Instant::now() + Duration::from_secs(120);
    handles
        .into_iter()
        .map(|h| {
            while !h.is_finished() {
                assert!(Instant::now() < watchdog, "trial hung: {what}");
                std::thread::sleep(Duration::from_millis(1));
            }
            h.join()
        })
        .collect()
}

/// How many trials run at once: `HETLB_FAULT_CONCURRENCY`, or 4 on threads (a trial there
/// mostly waits out timeouts) and 2 on the simulated flavour (a trial there computes).
fn concurrency(flavour: Flavour) -> usize {
    std::env::var("HETLB_FAULT_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(match flavour {
            Flavour::Threads => 4,
            Flavour::Simulated => 2,
        })
        .max(1)
}

/// `trial(seed)` for every seed, `workers` at a time, the results in the order of the seeds
/// (so that what is checked and printed from them does not depend on which ended first).
fn run_trials<R: Send>(
    seeds: std::ops::Range<u64>,
    workers: usize,
    trial: impl Fn(u64) -> R + Sync,
) -> Vec<R> {
    let next = std::sync::atomic::AtomicU64::new(seeds.start);
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if seed >= seeds.end {
                        break;
                    }
                    let result = trial(seed);
                    done.lock().expect("no trial panics").push((seed, result));
                }
            });
        }
    });
    let mut done = done.into_inner().expect("no trial panics");
    done.sort_unstable_by_key(|(seed, _)| *seed);
    done.into_iter().map(|(_, result)| result).collect()
}

fn ids(v: &[Job]) -> Vec<u64> {
    let mut ids: Vec<u64> = v.iter().map(|j| j.id).collect();
    ids.sort_unstable();
    ids
}

/// Checks that every error names a rank with an injected fault as the one that failed: a
/// healthy rank that left, or gave up, because of another's failure is never blamed. Only on
/// the simulated flavour, where a healthy rank is never starved past the timeout.
fn check_blame(t: &Trial, out: &[Outcome]) -> Result<(), String> {
    for (r, o) in out.iter().enumerate() {
        let Some((Err(e), _)) = o else { continue };
        if matches!(e, PeerError::InDoubt { .. }) {
            continue; // it names the rank that decides, not a culprit
        }
        if let Some(c) = e.culprit()
            && !t.faults.contains_key(&c)
            && t.absent.is_none_or(|(a, _)| a != c)
        {
            return Err(format!("rank {r} blames healthy rank {c}: {e}"));
        }
    }
    Ok(())
}

/// Checks both promises; returns whether the call committed. By messages (`doubt_allowed`)
/// a rank in doubt must hold, once settled, what the outcome gives it.
fn check(t: &Trial, out: &[Outcome], doubt_allowed: bool) -> Result<bool, String> {
    let live: Vec<usize> = (0..t.ranks).filter(|&r| out[r].is_some()).collect();
    let dead: Vec<usize> = (0..t.ranks).filter(|&r| out[r].is_none()).collect();
    for &r in &dead {
        if !matches!(
            t.faults.get(&r),
            Some(Fault::PanicAfterSends(_) | Fault::PanicAfterVote)
        ) {
            return Err(format!("rank {r} died without an injected panic"));
        }
    }
    // 2. Every live rank's result matches what it holds, and they agree.
    let mut committed: Option<bool> = None;
    let mut report: Option<&Report> = None;
    let mut in_doubt = Vec::new();
    for &r in &live {
        let Some((result, held)) = &out[r] else {
            continue;
        };
        if doubt_allowed && matches!(result, Err(PeerError::InDoubt { .. })) {
            if r == 0 {
                return Err("the coordinator was in doubt".into());
            }
            in_doubt.push(r);
            continue;
        }
        let this = match result {
            Ok(rep) => {
                if rep.items_after != held.len() as u64
                    || rep.units_after != held.iter().map(Item::load).sum::<u64>()
                    || rep.loads_after[r] != rep.units_after
                {
                    return Err(format!("rank {r}'s report does not match what it holds"));
                }
                report.get_or_insert(rep);
                rep.balanced
            }
            Err(e) => {
                if e.holding() != hetlb_peer::Holding::Before {
                    return Err(format!(
                        "rank {r}: threads never leave a call in doubt: {e}"
                    ));
                }
                if ids(held) != ids(&t.items[r]) {
                    return Err(format!(
                        "rank {r} returned an error ({e}) but does not hold what it held before"
                    ));
                }
                false
            }
        };
        // A call that moved nothing commits nothing: it agrees with either.
        let moved = matches!(result, Ok(rep) if rep.balanced);
        if moved || result.is_err() {
            if committed.is_some_and(|c| c != this) {
                return Err("live ranks disagree on the outcome".into());
            }
            committed = Some(this);
        }
    }
    let committed = committed.unwrap_or(false);
    // Ranks that were in doubt hold, once settled, what the outcome gives them.
    for &r in &in_doubt {
        let Some((_, held)) = &out[r] else { continue };
        if committed {
            let rep = report.ok_or("committed without a report")?;
            let units: u64 = held.iter().map(Item::load).sum();
            if held.len() as u64 != rep.items_after_all[r] || units != rep.loads_after[r] {
                return Err(format!(
                    "rank {r}, settled after doubt, lacks its new share"
                ));
            }
        } else if ids(held) != ids(&t.items[r]) {
            return Err(format!(
                "rank {r}, settled after doubt, does not hold what it held before"
            ));
        }
    }
    // 1. Exactly once among the live ranks; what is missing was held by the dead.
    let mut seen = std::collections::BTreeSet::new();
    for &r in &live {
        if let Some((_, held)) = &out[r] {
            for j in held {
                if !seen.insert(j.id) {
                    return Err(format!("item {} is held twice", j.id));
                }
            }
        }
    }
    let all: Vec<&Job> = t.items.iter().flatten().collect();
    let missing: Vec<&Job> = all
        .iter()
        .copied()
        .filter(|j| !seen.contains(&j.id))
        .collect();
    if !committed {
        let mut expected: Vec<u64> = dead.iter().flat_map(|&r| ids(&t.items[r])).collect();
        expected.sort_unstable();
        let got = ids(&missing.iter().map(|&j| j.clone()).collect::<Vec<_>>());
        if got != expected {
            return Err(format!(
                "rolled back, but the missing items {got:?} are not the dead ranks' {expected:?}"
            ));
        }
    } else {
        let rep = report.ok_or("committed without a report")?;
        let dead_units: u64 = dead.iter().map(|&r| rep.loads_after[r]).sum();
        let missing_units: u64 = missing.iter().map(|j| j.cost).sum();
        let dead_items: u64 = dead.iter().map(|&r| rep.items_after_all[r]).sum();
        if dead_units != missing_units || dead_items != missing.len() as u64 {
            return Err(format!(
                "committed, but {} items ({missing_units} units) are missing where the dead \
                 ranks held {dead_items} ({dead_units} units)",
                missing.len()
            ));
        }
    }
    Ok(committed)
}

fn fault_trials(storage: Storage, agreement: Agreement, flavour: Flavour) -> u64 {
    quiet_injected_panics();
    // The simulated flavour runs a trial in milliseconds of real time: it runs more of them.
    let default = match flavour {
        Flavour::Threads => 150,
        Flavour::Simulated => 500,
    };
    let trials: u64 = std::env::var("HETLB_FAULT_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let first: u64 = std::env::var("HETLB_FAULT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut committed = 0u64;
    let mut rolled_back = 0u64;
    let mut doubts = 0u64;
    let mut failures = Vec::new();
    let doubt_allowed = agreement == Agreement::Messages;
    let mut all = 0u64;
    let mut misblamed = 0u64;
    let (mut skipped, mut refused, mut positioned) = (0u64, 0u64, 0u64);
    let runs = run_trials(first..first + trials, concurrency(flavour), |seed| {
        let t = trial(seed);
        let out = run(&t, storage, agreement, flavour);
        (t, out)
    });
    for (seed, (t, out)) in (first..).zip(runs) {
        positioned += u64::from(t.items.iter().flatten().any(|j| j.at.is_some()));
        match t.absent {
            Some((_, Absence::Skip)) if flavour == Flavour::Simulated => skipped += 1,
            Some(_) => refused += 1,
            None => {}
        }
        let d = digest(&out);
        all = all.rotate_left(5) ^ d;
        if flavour == Flavour::Simulated && trials <= 20 {
            eprintln!("seed {seed} ({storage:?}, {agreement:?}, simulated): digest {d:016x}");
        }
        doubts += out
            .iter()
            .flatten()
            .filter(|(r, _)| matches!(r, Err(PeerError::InDoubt { .. })))
            .count() as u64;
        if std::env::var("HETLB_FAULT_DEBUG").is_ok() {
            for (r, o) in out.iter().enumerate() {
                if let Some((Err(e @ PeerError::InDoubt { .. }), _)) = o {
                    eprintln!(
                        "DOUBT seed {seed} rank {r}/{} faults {:?}: {e}",
                        t.ranks, t.faults
                    );
                }
            }
        }
        // On threads a healthy rank starved past the timeout by a loaded machine may be
        // named: counted, not failed.
        let blame = match (flavour, check_blame(&t, &out)) {
            (Flavour::Threads, Err(_)) => {
                misblamed += 1;
                Ok(())
            }
            (_, blame) => blame,
        };
        match blame.and_then(|()| check(&t, &out, doubt_allowed)) {
            Ok(true) => committed += 1,
            Ok(false) => rolled_back += 1,
            Err(e) => {
                if std::env::var("HETLB_FAULT_DEBUG").is_ok() {
                    eprintln!("VIOLATION seed {seed}: {e}; faults {:?}", t.faults);
                    for (r, o) in out.iter().enumerate() {
                        let said = o.as_ref().map(|(r, _)| match r {
                            Ok(rep) => format!("ok, moved: {}", rep.balanced),
                            Err(e) => format!("error: {e}"),
                        });
                        eprintln!("  rank {r}: {}", said.unwrap_or_else(|| "dead".into()));
                    }
                }
                failures.push(format!("seed {seed}: {e}\n  {t:?}"))
            }
        }
    }
    eprintln!(
        "{trials} fault trials ({storage:?}, {agreement:?}, {flavour:?}): {committed} \
         committed, {rolled_back} rolled back or moved nothing, {doubts} ranks in doubt, \
         {positioned} with positioned items, {skipped} with a rank skipping the call, \
         {refused} with a rank refusing it, {} \
         violations, {misblamed} trials naming a rank without a fault; digest {all:016x}",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The harness exercises both outcomes.
    assert!(trials < 50 || (committed > 0 && rolled_back > 0));
    all
}

#[test]
fn every_fault_keeps_every_item_exactly_once_and_every_result_true() {
    fault_trials(Storage::Items, Agreement::Ledger, Flavour::from_env());
}

#[test]
fn every_fault_keeps_every_record_exactly_once_and_every_result_true() {
    fault_trials(Storage::Records, Agreement::Ledger, Flavour::from_env());
}

#[test]
fn by_messages_every_fault_keeps_every_item_exactly_once_and_every_result_true() {
    fault_trials(Storage::Items, Agreement::Messages, Flavour::from_env());
}

#[test]
fn by_messages_every_fault_keeps_every_record_exactly_once_and_every_result_true() {
    fault_trials(Storage::Records, Agreement::Messages, Flavour::from_env());
}

#[test]
fn simulated_every_fault_keeps_every_item_exactly_once_by_messages() {
    fault_trials(Storage::Items, Agreement::Messages, Flavour::Simulated);
}

#[test]
fn simulated_every_fault_keeps_every_record_exactly_once_in_the_ledger() {
    fault_trials(Storage::Records, Agreement::Ledger, Flavour::Simulated);
}

/// On the simulated flavour a trial is a function of its seed: two runs of the same seeds
/// give the same outcomes, and other seeds give other ones.
#[test]
fn simulated_trials_replay_exactly_from_their_seed() {
    quiet_injected_panics();
    for agreement in [Agreement::Ledger, Agreement::Messages] {
        for storage in [Storage::Items, Storage::Records] {
            let digests = |seeds: std::ops::Range<u64>| -> Vec<u64> {
                seeds
                    .map(|s| digest(&run(&trial(s), storage, agreement, Flavour::Simulated)))
                    .collect()
            };
            let first = digests(500..540);
            assert_eq!(first, digests(500..540), "{storage:?}, {agreement:?}");
            let distinct: std::collections::BTreeSet<_> = first.iter().collect();
            assert!(distinct.len() > 20, "{storage:?}, {agreement:?}: {first:?}");
        }
    }
}

#[test]
fn a_freeze_far_below_the_timeout_is_never_a_failure() {
    quiet_injected_panics();
    // A timeout of a minute and pauses of a few milliseconds: no machine is that late.
    for seed in 0..48u64 {
        let mut t = trial(10_000 + seed % 24);
        for f in t.faults.values_mut() {
            *f = if seed % 2 == 0 {
                Fault::FreezeAfterSends(1, Duration::from_millis(5))
            } else {
                Fault::FreezeAfterVote(Duration::from_millis(5))
            };
        }
        // Half the trials agree by messages.
        let members = if seed < 24 {
            threads::group(t.ranks)
        } else {
            threads::group_without_ledger(t.ranks)
        };
        let handles: Vec<_> = members
            .into_iter()
            .zip(t.items.clone())
            .enumerate()
            .map(|(rank, (member, mut mine))| {
                let mut cfg = BalancerConfig::for_algorithm(t.algorithm)
                    .topology(&topology(t.ranks))
                    .unwrap()
                    .schedule(t.schedule)
                    .timeout(Duration::from_secs(60));
                if let Some(&f) = t.faults.get(&rank) {
                    cfg = cfg.fault(f);
                }
                std::thread::spawn(move || {
                    let mut b = Balancer::new(&member, cfg).unwrap();
                    b.rebalance(&mut mine).map(|_| mine)
                })
            })
            .collect();
        let mut held: Vec<u64> = Vec::new();
        for h in handles {
            let mine = h.join().unwrap().expect("a short pause is not a failure");
            held.extend(mine.iter().map(|j| j.id));
        }
        held.sort_unstable();
        let all: Vec<u64> = ids(&t.items.concat());
        assert_eq!(held, all);
    }
}

/// Calls of the trigger `auto` over several steps: a balanced start (the first checks find
/// nothing, so the ranks skip calls, at the same calls), new items on one rank between calls
/// (so that later checks move), and a fault on one rank that strikes at the first call that
/// moves enough. After every trial: every item created is held exactly once, every rank that
/// failed holds what it held before that call, and the ranks skipped the same calls.
#[test]
fn trigger_auto_skips_calls_alike_and_keeps_every_item_exactly_once() {
    quiet_injected_panics();
    const CALLS: usize = 10;
    let trials: u64 = std::env::var("HETLB_FAULT_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(40, |n: u64| n / 5)
        .max(1);
    let mut skipped = 0usize;
    let mut failed = 0usize;
    let runs = run_trials(0..trials, concurrency(Flavour::Threads), |seed| {
        let mut rng = Pcg64::seed_from_u64(70_000 + seed);
        let ranks = rng.random_range(2..9usize);
        let rules: Vec<Algorithm> = Algorithm::all().collect();
        let algorithm = rules[rng.random_range(0..rules.len())];
        let horizon = rng.random_range(2..17u64);
        let per_rank = rng.random_range(0..20u64);
        // Who adds how many new items before each call (none before the first).
        let additions: Vec<(usize, u64)> = (0..CALLS)
            .map(|k| {
                let n = if k == 0 { 0 } else { rng.random_range(0..40) };
                (rng.random_range(0..ranks), n)
            })
            .collect();
        let victim = rng.random_range(0..ranks);
        // No crash here: a rank that dies takes its items with it, which the single-call
        // harness above accounts for.
        let fault = match random_fault(&mut rng) {
            Fault::PanicAfterSends(k) => Fault::LeaveAfterSends(k),
            Fault::PanicAfterVote => Fault::LeaveAfterVote,
            f => f,
        };
        let speed_of: Vec<u64> = (0..ranks).map(|_| rng.random_range(1..4)).collect();
        let handles: Vec<_> = threads::group(ranks)
            .into_iter()
            .enumerate()
            .map(|(rank, member)| {
                let additions = additions.clone();
                let speed = speed_of[rank];
                let mut cfg = BalancerConfig::for_algorithm(algorithm)
                    .topology(&topology(ranks))
                    .expect("a topology")
                    .speeds(Speeds::Measured { window: 1 })
                    .trigger(hetlb_core::advice::Trigger::Auto {
                        horizon,
                        margin: 1.0,
                    })
                    .timeout(TIMEOUT);
                if rank == victim {
                    cfg = cfg.fault(fault);
                }
                std::thread::spawn(move || {
                    let mut b = Balancer::new(&member, cfg).expect("a valid configuration");
                    let base = rank as u64 * 1_000;
                    let mut mine: Vec<Job> = (0..per_rank)
                        .map(|i| Job {
                            at: None,
                            id: base + i,
                            cost: 1,
                        })
                        .collect();
                    let mut created: Vec<u64> = mine.iter().map(|j| j.id).collect();
                    let mut checked = Vec::new();
                    let mut error = None;
                    for (k, &(adder, n)) in additions.iter().enumerate() {
                        if adder == rank {
                            let first = 1_000_000 + (k as u64) * 1_000;
                            mine.extend((first..first + n).map(|id| Job {
                                id,
                                cost: 1,
                                at: None,
                            }));
                            created.extend(first..first + n);
                        }
                        // Short steps: a check costs more than 1% of one, so the trigger
                        // skips calls after checks that find nothing to move.
                        b.record(speed * 100, 1e-4);
                        let before = ids(&mine);
                        match b.rebalance(&mut mine) {
                            Ok(r) => checked.push(r.checked),
                            Err(e) => {
                                error = Some((k, e.to_string(), before == ids(&mine)));
                                break;
                            }
                        }
                    }
                    (checked, error, ids(&mine), created)
                })
            })
            .collect();
        join_within(handles, &format!("trigger-auto trial {seed}"))
            .into_iter()
            .map(|r| r.expect("no rank panics"))
            .collect::<Vec<_>>()
    });
    for (seed, out) in (0..).zip(runs) {
        let mut held: Vec<u64> = out.iter().flat_map(|o| o.2.iter().copied()).collect();
        let mut created: Vec<u64> = out.iter().flat_map(|o| o.3.iter().copied()).collect();
        held.sort_unstable();
        created.sort_unstable();
        assert_eq!(held, created, "trial {seed}: every item exactly once");
        for (rank, (_, error, _, _)) in out.iter().enumerate() {
            if let Some((k, e, unchanged)) = error {
                failed += 1;
                assert!(
                    unchanged,
                    "trial {seed}: rank {rank} failed in call {k} ({e}) but lost or gained items"
                );
            }
        }
        // The calls every rank completed were skipped alike.
        let common = out.iter().map(|o| o.0.len()).min().unwrap_or(0);
        for k in 0..common {
            let first = out[0].0[k];
            assert!(
                out.iter().all(|o| o.0[k] == first),
                "trial {seed}: ranks disagree on skipping call {k}"
            );
            skipped += usize::from(!first);
        }
    }
    eprintln!(
        "{trials} trigger-auto trials: {skipped} calls skipped alike, {failed} failed calls \
         left every item where it was"
    );
    assert!(
        trials < 20 || skipped > 0,
        "the trials exercise skipped calls"
    );
}
