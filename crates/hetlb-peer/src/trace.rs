//! The balancer's trace (option `trace`): what each call did, in the Trace Event format
//! (`hetlb_trace`). Balancers of one process writing the same path share one trace (the
//! ranks of a threads group); the file is created when the first is built (so that a path
//! that cannot be written is refused then) and written when the last is dropped. On MPI each
//! rank writes its own part, `NAME.rankR.json`.
//!
//! Threads of each rank's process: 0 the balancer's calls and their phases, 1 the steps the
//! application reports ([`Balancer::record`](crate::Balancer::record)). A rank may hold
//! several balancers writing one trace (the C interface holds two): the k-th of a rank
//! writes its calls on thread 2k and its arrows with ids of its own, and only the first
//! records the steps. The group's imbalance is a counter of its own process, numbered after
//! the last rank.

use crate::error::{ConfigError, PeerError};
use crate::options::Options;
use hetlb_trace::{Span, Trace, TraceFile};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The balancer's thread of a rank (its first balancer's).
const CALLS: u64 = 0;
/// The application's steps.
const STEPS: u64 = 1;

/// One trace and its file, shared by the balancers that write it.
struct Shared {
    trace: Trace,
    file: Option<TraceFile>,
    users: usize,
    origin: Instant,
    /// Balancers opened so far per rank.
    lanes: HashMap<u64, u64>,
}

/// The traces open in this process, by path.
static OPEN: Mutex<Vec<(PathBuf, Weak<Mutex<Shared>>)>> = Mutex::new(Vec::new());

/// One rank's handle on its trace.
pub(crate) struct Recorder {
    shared: Arc<Mutex<Shared>>,
    rank: u64,
    size: u64,
    origin: Instant,
    /// This balancer's number among the rank's balancers writing the trace.
    lane: u64,
    /// Where the last step reported ended (µs), so that steps never overlap.
    last_step_end: f64,
}

/// The path rank `rank` writes on MPI: `NAME.rankR.EXT`.
///
/// # Example
/// ```
/// use std::path::Path;
/// let p = hetlb_peer::trace::rank_path(Path::new("out/run.json"), 3);
/// assert_eq!(p, Path::new("out/run.rank3.json"));
/// ```
pub fn rank_path(path: &Path, rank: usize) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("json");
    path.with_file_name(format!("{stem}.rank{rank}.{ext}"))
}

/// Why `path` cannot name a trace file, when it is a directory or, on MPI, a device (each
/// rank writes a file beside the path then, which would be beside `/dev/full`).
fn not_a_file(path: &Path) -> Option<&'static str> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Some("it is a directory"),
        Ok(m) if !m.is_file() => Some("it is not a regular file"),
        _ => None,
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Recorder {
    /// The recorder of rank `rank` of `size`, when `options` ask for a trace.
    pub(crate) fn open(
        options: &Options,
        rank: usize,
        size: usize,
        backend: &str,
        about: (&str, &str),
    ) -> Result<Option<Self>, PeerError> {
        let Some(path) = &options.trace else {
            return Ok(None);
        };
        if let Some(why) = not_a_file(path) {
            let reason = format!("cannot write the trace '{}': {why}", path.display());
            return Err(PeerError::Config(ConfigError::option("trace", reason)));
        }
        let path = if backend == "mpi" {
            rank_path(path, rank)
        } else {
            path.clone()
        };
        let mut open = lock(&OPEN);
        open.retain(|(_, w)| w.strong_count() > 0);
        let found = open
            .iter()
            .find(|(p, _)| *p == path)
            .and_then(|(_, w)| w.upgrade());
        let shared = match found {
            Some(s) => s,
            None => {
                let file = TraceFile::create(&path)
                    .map_err(|e| PeerError::Config(ConfigError::option("trace", e.to_string())))?;
                let mut trace = Trace::new(options.trace_events);
                let unix_us = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64() * 1e6);
                trace.set_other("origin_unix_us", json!(unix_us));
                trace.set_other("clock", json!("wall"));
                trace.set_other("backend", json!(backend));
                trace.set_other("ranks", json!(size));
                trace.set_other("rule", json!(about.0));
                trace.set_other("topology", json!(about.1));
                if rank == 0 || backend != "mpi" {
                    trace.process_name(size as u64, "group");
                }
                let s = Arc::new(Mutex::new(Shared {
                    trace,
                    file: Some(file),
                    users: 0,
                    origin: Instant::now(),
                    lanes: HashMap::new(),
                }));
                open.push((path, Arc::downgrade(&s)));
                s
            }
        };
        let (origin, lane) = {
            let mut s = lock(&shared);
            s.users += 1;
            let lanes = s.lanes.entry(rank as u64).or_insert(0);
            let lane = *lanes;
            *lanes += 1;
            let pid = rank as u64;
            if lane == 0 {
                s.trace.process_name(pid, &format!("rank {rank}"));
                s.trace.thread_name(pid, CALLS, "balancer");
                s.trace.thread_name(pid, STEPS, "steps");
            } else {
                let name = format!("balancer {}", lane + 1);
                s.trace.thread_name(pid, CALLS + 2 * lane, &name);
            }
            (s.origin, lane)
        };
        Ok(Some(Self {
            shared,
            rank: rank as u64,
            size: size as u64,
            origin,
            lane,
            last_step_end: 0.0,
        }))
    }

    /// Microseconds from the trace's origin to `t`.
    pub(crate) fn us(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64() * 1e6
    }

    /// Records with the trace locked.
    fn with(&self, f: impl FnOnce(&mut Trace)) {
        f(&mut lock(&self.shared).trace);
    }

    /// This balancer's thread of calls.
    fn calls(&self) -> u64 {
        CALLS + 2 * self.lane
    }

    /// A step the application reported: `units` in `seconds`, ending now (recorded by the
    /// rank's first balancer only: the others are told the same steps).
    pub(crate) fn step(&mut self, units: u64, seconds: f64, speed: Option<f64>) {
        if self.lane > 0 {
            return;
        }
        let end = self.us(Instant::now());
        let start = (end - seconds.max(0.0) * 1e6)
            .max(self.last_step_end)
            .min(end);
        self.last_step_end = end;
        let rank = self.rank;
        self.with(|t| {
            t.span(
                Span::new(rank, STEPS, "compute", start, end - start)
                    .cat("compute")
                    .args(json!({ "units": units, "seconds": seconds })),
            );
            if let Some(s) = speed {
                t.counter(rank, "speed", end, "units/s", s);
            }
        });
    }

    /// A span of this rank's calls from `start` to `end`.
    pub(crate) fn span(&self, name: &str, start: Instant, end: Instant, args: Value) {
        let (ts, end) = (self.us(start), self.us(end));
        let (rank, calls) = (self.rank, self.calls());
        self.with(|t| {
            t.span(
                Span::new(rank, calls, name, ts, end - ts)
                    .cat("balance")
                    .args(args),
            );
        });
    }

    /// An instant of this rank's calls, now.
    pub(crate) fn instant(&self, name: &str, cat: &str, args: Value) {
        let ts = self.us(Instant::now());
        let (rank, calls) = (self.rank, self.calls());
        self.with(|t| t.instant(rank, calls, name, cat, ts, args));
    }

    /// A sample of this rank's counter `name`, now.
    pub(crate) fn counter(&self, name: &str, series: &str, value: f64) {
        let ts = self.us(Instant::now());
        let rank = self.rank;
        self.with(|t| t.counter(rank, name, ts, series, value));
    }

    /// A sample of the group's imbalance (recorded by rank 0), at `at`.
    pub(crate) fn imbalance(&self, at: Instant, value: f64) {
        if self.rank == 0 {
            let (ts, group) = (self.us(at), self.size);
            self.with(|t| t.counter(group, "imbalance", ts, "max/mean", value));
        }
    }

    /// The ends of this rank's transfers of a committed move: an arrow's tail at the move's
    /// start for each one it sent, its head at the move's end for each one it received (ids
    /// told apart by the balancer's number among the rank's).
    pub(crate) fn flows(&self, start: Instant, end: Instant, ends: &[(u64, bool, Value)]) {
        let (ts, end) = (self.us(start), self.us(end));
        // Strictly inside the move's span, which they bind to.
        let (tail, head) = (ts + (end - ts) * 0.25, ts + (end - ts) * 0.75);
        let (rank, calls, lane) = (self.rank, self.calls(), self.lane);
        self.with(|t| {
            for (id, sent, args) in ends {
                t.flow(
                    rank,
                    calls,
                    id ^ (lane << 56),
                    *sent,
                    if *sent { tail } else { head },
                    args.clone(),
                );
            }
        });
    }
}

impl Drop for Recorder {
    /// The last balancer sharing the trace writes it; an error is reported on stderr (a drop
    /// cannot return one).
    fn drop(&mut self) {
        let mut s = lock(&self.shared);
        s.users = s.users.saturating_sub(1);
        if s.users == 0
            && let Some(file) = s.file.take()
            && let Err(e) = file.finish(&s.trace)
        {
            eprintln!("warning: trace: {e}");
        }
    }
}
