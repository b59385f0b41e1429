//! `--trace FILE` of every command: the checks made before a run (the file can be written,
//! its size is within --max-output) and the traces the simulator's report gives.

use anyhow::{Result, anyhow};
use hetlb_sim::Report;
use hetlb_trace::{EVENT_BYTES, Span, Trace, TraceFile};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// Refuses, before anything runs, a trace of up to `events` events (`copies` files) above
/// --max-output, and a path that cannot be written (a directory, a full device, no
/// permission). A file created by the check is removed again.
pub fn check_target(path: &Path, events: usize, copies: usize) -> Result<()> {
    crate::limits::check_output(
        "--trace",
        &format!("{copies} trace file(s) of up to {events} events (lower --trace-events)"),
        events as u128 * u128::from(EVENT_BYTES) * copies.max(1) as u128,
    )?;
    let existed = path.exists();
    let file = TraceFile::create(path).map_err(|e| anyhow!("--trace: {e}"))?;
    drop(file);
    if !existed && path.is_file() {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Writes `trace` to `path`.
pub fn write(path: &Path, trace: &Trace) -> Result<()> {
    TraceFile::create(path)
        .and_then(|f| f.finish(trace))
        .map_err(|e| anyhow!("--trace: {e}"))
}

/// Microseconds of simulated seconds.
fn us(seconds: f64) -> f64 {
    seconds * 1e6
}

/// The trace of a simulator run (simulated time): per node a process with its run as a span
/// (busy, idle and waiting seconds in its arguments) and its queue length as a counter; the
/// group's imbalance (max ÷ mean queue length) as a counter; every delay-aware decision as an
/// instant with an arrow per transfer, from the sender at the decision to the receiver at
/// the tasks' arrival.
pub fn simulated(report: &Report, limit: usize, scenario: &str) -> Trace {
    let mut t = Trace::new(limit);
    let n = report.nodes.len();
    t.set_other("clock", json!("simulated"));
    t.set_other("source", json!("hetlb simulate"));
    t.set_other("scenario", json!(scenario));
    t.set_other("policy", json!(report.policy));
    t.set_other("seed", json!(report.seed));
    t.set_other("ranks", json!(n));
    t.process_name(n as u64, "group");
    let end = report.horizon.max(report.makespan);
    for node in &report.nodes {
        let pid = node.node as u64;
        t.process_name(pid, &format!("node {}", node.node));
        t.thread_name(pid, 0, "node");
        t.span(Span::new(pid, 0, "run", 0.0, us(end)).cat("compute").args(
            json!({ "busy_s": node.busy, "idle_s": node.idle, "waiting_s": node.waiting,
                    "executed": node.executed, "sent": node.sent, "received": node.received }),
        ));
    }
    queue_counters(&mut t, report);
    for (k, d) in report.policy_stats.decisions.iter().enumerate() {
        t.instant(
            d.centre as u64,
            0,
            "decision",
            "decision",
            us(d.time),
            json!({ "transfers": d.transfers.len() }),
        );
        for (j, x) in d.transfers.iter().enumerate() {
            if x.tasks == 0 || x.from == x.to || x.from >= n || x.to >= n {
                continue;
            }
            let id = ((k as u64) << 20) | j as u64;
            let args = json!({ "from": x.from, "to": x.to, "units": x.tasks, "bytes": 0,
                "planned": x.planned });
            let arrive = (d.time + x.arrival).min(end);
            t.flow(x.from as u64, 0, id, true, us(d.time), args.clone());
            t.flow(x.to as u64, 0, id, false, us(arrive), args);
        }
    }
    t
}

/// Every node's queue length, and the group's imbalance at every change.
fn queue_counters(t: &mut Trace, report: &Report) {
    let n = report.nodes.len();
    let mut samples: Vec<(f64, usize, u64)> = report
        .series
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.iter().map(move |&(time, q)| (time, i, q)))
        .collect();
    samples.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut loads = vec![0u64; n];
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    counts.insert(0, n);
    let mut total: u128 = 0;
    for (k, &(time, i, q)) in samples.iter().enumerate() {
        t.counter(i as u64, "load", us(time), "tasks", q as f64);
        let old = std::mem::replace(&mut loads[i], q);
        if let Some(c) = counts.get_mut(&old) {
            *c -= 1;
            if *c == 0 {
                counts.remove(&old);
            }
        }
        *counts.entry(q).or_insert(0) += 1;
        total = total - u128::from(old) + u128::from(q);
        let last_at_time = samples.get(k + 1).is_none_or(|next| next.0 > time);
        if last_at_time && n > 0 {
            let max = counts.keys().next_back().copied().unwrap_or(0);
            let mean = total as f64 / n as f64;
            let imbalance = if mean > 0.0 { max as f64 / mean } else { 1.0 };
            t.counter(n as u64, "imbalance", us(time), "max/mean", imbalance);
        }
    }
}

/// Rank 0 of an MPI run: waits (up to `timeout`, at least 10 s) until every rank's part of
/// the trace `path` is complete, merges them into `path` and removes the parts. Parts that do
/// not come (no shared file system) are left for `hetlb trace merge`, with a note.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn merge_parts(
    path: &Path,
    ranks: usize,
    limit: usize,
    timeout: std::time::Duration,
) -> Result<()> {
    let parts: Vec<std::path::PathBuf> = (0..ranks)
        .map(|r| hetlb_peer::trace::rank_path(path, r))
        .collect();
    let deadline = std::time::Instant::now() + timeout.max(std::time::Duration::from_secs(10));
    let mut texts = Vec::with_capacity(ranks);
    for p in &parts {
        loop {
            match std::fs::read_to_string(p) {
                Ok(t) if hetlb_trace::check_part(&t).is_ok() => {
                    texts.push(t);
                    break;
                }
                _ if std::time::Instant::now() > deadline => {
                    eprintln!(
                        "note: --trace: {} is missing or incomplete; the parts are left as they \
                         are (merge them with hetlb trace merge)",
                        p.display()
                    );
                    return Ok(());
                }
                _ => std::thread::sleep(std::time::Duration::from_millis(50)),
            }
        }
    }
    let merged = hetlb_trace::merge(&texts, limit).map_err(|e| anyhow!("--trace: {e}"))?;
    write(path, &merged)?;
    for p in &parts {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// Microseconds a round of a plan lasts in its trace.
const ROUND_US: f64 = 1000.0;

/// The trace of `hetlb balance`'s plan, a round a millisecond (rounds, not seconds): per
/// node a process with every node's load as a counter after each round, a span for each
/// round in which it sends or receives, and an arrow per transfer; the group's imbalance
/// (max ÷ mean of load ÷ capacity) after each round.
pub fn plan(
    plan: &hetlb_core::plan::Plan,
    capacities: Option<&[f64]>,
    limit: usize,
    about: &str,
) -> Trace {
    let n = plan.initial.len();
    let mut t = Trace::new(limit);
    t.set_other("clock", json!("rounds: one round a millisecond"));
    t.set_other("source", json!("hetlb balance"));
    t.set_other("rule", json!(about));
    t.set_other("ranks", json!(n));
    t.process_name(n as u64, "group");
    for i in 0..n {
        t.process_name(i as u64, &format!("node {i}"));
    }
    let share = |i: usize, l: i128| {
        l.max(0) as f64 / capacities.and_then(|c| c.get(i)).copied().unwrap_or(1.0)
    };
    let mut loads: Vec<i128> = plan.initial.iter().map(|&l| i128::from(l)).collect();
    // The shares as a multiset (non-negative doubles order as their bits), and their sum:
    // the imbalance after each round in time proportional to the round's transfers.
    let mut shares: BTreeMap<u64, usize> = BTreeMap::new();
    let mut sum = 0.0;
    for (i, &l) in loads.iter().enumerate() {
        t.counter(i as u64, "load", 0.0, "units", l as f64);
        *shares.entry(share(i, l).to_bits()).or_insert(0) += 1;
        sum += share(i, l);
    }
    let imbalance = |shares: &BTreeMap<u64, usize>, sum: f64| {
        let max = shares
            .keys()
            .next_back()
            .map_or(0.0, |&b| f64::from_bits(b));
        let mean = sum / n.max(1) as f64;
        if mean > 0.0 { max / mean } else { 1.0 }
    };
    t.counter(
        n as u64,
        "imbalance",
        0.0,
        "max/mean",
        imbalance(&shares, sum),
    );
    let mut id = 0u64;
    for (k, phase) in plan.phases.iter().enumerate() {
        let start = k as f64 * ROUND_US;
        let mut busy = std::collections::BTreeSet::new();
        for x in &phase.transfers {
            busy.insert(x.from);
            busy.insert(x.to);
        }
        for &i in &busy {
            t.span(
                Span::new(i as u64, 0, format!("round {}", k + 1), start, ROUND_US)
                    .cat("balance")
                    .args(json!({ "dimension": phase.dimension })),
            );
        }
        for x in &phase.transfers {
            let args = json!({ "from": x.from, "to": x.to, "units": x.units, "bytes": 0 });
            t.flow(
                x.from as u64,
                0,
                id,
                true,
                start + ROUND_US * 0.25,
                args.clone(),
            );
            t.flow(x.to as u64, 0, id, false, start + ROUND_US * 0.75, args);
            id += 1;
            for (node, delta) in [(x.from, -i128::from(x.units)), (x.to, i128::from(x.units))] {
                let Some(old) = loads.get(node).copied() else {
                    continue;
                };
                let (before, after) = (share(node, old), share(node, old + delta));
                if let Some(c) = shares.get_mut(&before.to_bits()) {
                    *c -= 1;
                    if *c == 0 {
                        shares.remove(&before.to_bits());
                    }
                }
                *shares.entry(after.to_bits()).or_insert(0) += 1;
                sum += after - before;
                loads[node] = old + delta;
            }
        }
        let end = start + ROUND_US;
        for &i in &busy {
            t.counter(i as u64, "load", end, "units", loads[i] as f64);
        }
        t.counter(
            n as u64,
            "imbalance",
            end,
            "max/mean",
            imbalance(&shares, sum),
        );
    }
    t
}
