//! Measuring the emulated links before the run, for the delay-aware policy (Mirtaheri & Grandinetti
//! 2017, eq. 25 on measured delays and rates).
//!
//! Each rank probes each neighbour over the emulated link and back: an empty probe measures
//! the round trip `2·d`, a probe carrying `m` tasks measures `m/μ + 2·d`, so
//! `d ≈ RTT₀ / 2` and `μ ≈ m / (RTT_m − RTT₀)`. Three probes of each, averaged. The probes
//! draw their delays from a stream of their own, so that the run's links draw exactly what the
//! simulator's do.

use super::ScenarioRunError;
use super::messages::{LinkMeasure, Message, Task};
use hetlb_sim::Scenario;
use hetlb_sim::model::LinkModel;
use hetlb_sim::rng::stream;
use hetlb_transport::Transport;
use rand_pcg::Pcg64;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Probes of each kind per link.
const PROBES: u32 = 3;
/// A purpose number for the probes' delay streams, apart from the simulator's.
const PROBE_STREAM: u64 = 0x5052_4F42;

/// What the ranks measured of their outgoing links: `(rate, delay)` by `(from, to)`.
#[derive(Debug, Clone, Default)]
pub struct LinkEstimates {
    map: BTreeMap<(usize, usize), LinkMeasure>,
}

impl LinkEstimates {
    /// The measured `(rate, delay)` of `from → to`, if it was measured.
    pub fn get(&self, from: usize, to: usize) -> Option<(f64, f64)> {
        self.map
            .get(&(from, to))
            .map(|m| (m.measured_rate, m.measured_delay))
    }

    /// Every measured link leaving `node`.
    pub fn of(&self, node: usize) -> Vec<LinkMeasure> {
        self.map
            .values()
            .filter(|m| m.from == node)
            .copied()
            .collect()
    }

    pub(crate) fn insert(&mut self, m: LinkMeasure) {
        self.map.insert((m.from, m.to), m);
    }
}

/// The real seconds a link holds a message of `tasks` tasks (wire time, then delay).
fn hold(scenario: &Scenario, link: usize, tasks: usize, rng: &mut Pcg64, scale: f64) -> f64 {
    let rate = scenario.links.rate(link);
    let wire = if rate.is_infinite() || tasks == 0 {
        0.0
    } else {
        tasks as f64 / rate
    };
    (wire + scenario.links.delay(link, rng)) * scale
}

/// Probes this rank's links to its neighbours and answers the neighbours' probes, until every
/// rank has finished (rank 0 then sends `Start`). Returns this rank's measurements.
pub(crate) fn probe<T: Transport<Message>>(
    tr: &T,
    scenario: &Scenario,
    scale: f64,
    timeout: Duration,
    early: &mut Vec<(usize, Message)>,
) -> Result<Vec<LinkMeasure>, ScenarioRunError> {
    let me = tr.rank();
    let size = tr.size();
    let table = scenario.links.table();
    let mut rng = stream(
        scenario.setup.seed ^ PROBE_STREAM,
        hetlb_sim::rng::Purpose::Links,
        me,
    );
    let neighbors: Vec<usize> = table.neighbor_slice(me).to_vec();
    // For each neighbour, the probes: (empty, loaded) pairs; a probe's batch is worth a tenth
    // of the file's delay or 20 ms of wire time, whichever is longer, at least one task.
    let mut results = Vec::new();
    let mut held: Vec<(Instant, usize, Message)> = Vec::new();
    let mut probed_sent = false;
    let mut probed_from = vec![false; size];
    let deadline = Instant::now() + timeout;
    let answer = |held: &mut Vec<(Instant, usize, Message)>,
                  rng: &mut Pcg64,
                  from: usize,
                  msg: Message|
     -> Result<(), ScenarioRunError> {
        if let Message::Probe { seq, .. } = msg {
            let back = table.link(me, from).ok_or_else(|| {
                ScenarioRunError::Failed(format!("rank {from} probed rank {me} over no link"))
            })?;
            let h = hold(scenario, back, 0, rng, scale);
            held.push((
                Instant::now() + Duration::from_secs_f64(h),
                from,
                Message::ProbeReply { seq, hold: h },
            ));
        }
        Ok(())
    };
    for &j in &neighbors {
        let Some(link) = table.link(me, j) else {
            continue;
        };
        let rate = scenario.links.rate(link);
        let mean_delay = scenario.links.mean_delay(link);
        let batch = if rate.is_infinite() {
            1
        } else {
            ((rate * (0.02f64).max(mean_delay / 10.0)).ceil() as usize).clamp(1, 100_000)
        };
        let mut rtt = [0.0f64; 2];
        for (kind, rtt_sum) in rtt.iter_mut().enumerate() {
            for k in 0..PROBES {
                let tasks = if kind == 0 { 0 } else { batch };
                let h = hold(scenario, link, tasks, &mut rng, scale);
                let seq = (kind as u32) << 16 | k;
                let sent = Instant::now();
                // The link holds the message on the sender's side; then it goes.
                let release = sent + Duration::from_secs_f64(h);
                let msg = Message::Probe {
                    seq,
                    tasks: vec![
                        Task {
                            id: 0,
                            entered: 0.0
                        };
                        tasks
                    ],
                    hold: h,
                };
                held.push((release, j, msg));
                // Wait for the reply, answering others meanwhile.
                loop {
                    flush(tr, &mut held)?;
                    if Instant::now() > deadline {
                        return Err(ScenarioRunError::Failed(format!(
                            "rank {me}: no answer from rank {j} while measuring the link"
                        )));
                    }
                    let next = held.iter().map(|h| h.0).min();
                    let until = next.map_or(Instant::now() + Duration::from_millis(5), |n| {
                        n.min(Instant::now() + Duration::from_millis(5))
                    });
                    let Some(env) = tr.recv(Some(until))? else {
                        continue;
                    };
                    match env.msg {
                        Message::ProbeReply { seq: s, .. } if s == seq && env.from == j => {
                            *rtt_sum += sent.elapsed().as_secs_f64() / scale / f64::from(PROBES);
                            break;
                        }
                        m @ Message::Probe { .. } => answer(&mut held, &mut rng, env.from, m)?,
                        Message::Probed => probed_from[env.from] = true,
                        Message::Start => {
                            return Err(ScenarioRunError::Failed(
                                "the run started before this rank had measured its links".into(),
                            ));
                        }
                        // The run's own messages, from a rank that started first: kept.
                        other => early.push((env.from, other)),
                    }
                }
            }
        }
        let measured_delay = rtt[0] / 2.0;
        let diff = rtt[1] - rtt[0];
        let measured_rate = if rate.is_infinite() || diff <= 0.0 {
            f64::INFINITY
        } else {
            batch as f64 / diff
        };
        results.push(LinkMeasure {
            from: me,
            to: j,
            file_rate: rate,
            file_delay: mean_delay,
            measured_rate,
            measured_delay,
        });
    }
    // Done: tell rank 0, keep answering until it says start.
    loop {
        flush(tr, &mut held)?;
        if !probed_sent && held.is_empty() {
            tr.send(0, Message::Probed)?;
            probed_sent = true;
        }
        if Instant::now() > deadline {
            return Err(ScenarioRunError::Failed(format!(
                "rank {me}: the link measurements did not finish within {timeout:?}"
            )));
        }
        let until = Instant::now() + Duration::from_millis(2);
        let until = held
            .iter()
            .map(|h| h.0)
            .min()
            .map_or(until, |n| n.min(until));
        let Some(env) = tr.recv(Some(until))? else {
            continue;
        };
        match env.msg {
            m @ Message::Probe { .. } => answer(&mut held, &mut rng, env.from, m)?,
            Message::Probed => probed_from[env.from] = true,
            Message::Start => return Ok(results),
            other => early.push((env.from, other)),
        }
        if me == 0 && probed_from.iter().all(|&p| p) {
            for r in 0..size {
                tr.send(r, Message::Start)?;
            }
            probed_from.iter_mut().for_each(|p| *p = false);
        }
    }
}

/// Sends the held messages whose time has come.
fn flush<T: Transport<Message>>(
    tr: &T,
    held: &mut Vec<(Instant, usize, Message)>,
) -> Result<(), ScenarioRunError> {
    let now = Instant::now();
    let mut i = 0;
    while i < held.len() {
        if held[i].0 <= now {
            let (_, to, msg) = held.swap_remove(i);
            tr.send(to, msg)?;
        } else {
            i += 1;
        }
    }
    Ok(())
}
