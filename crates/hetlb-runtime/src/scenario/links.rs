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
    let mut p = Prober {
        tr,
        scenario,
        scale,
        timeout,
        deadline: Instant::now() + timeout,
        rng: stream(
            scenario.setup.seed ^ PROBE_STREAM,
            hetlb_sim::rng::Purpose::Links,
            me,
        ),
        held: Vec::new(),
        probed_from: vec![false; tr.size()],
        early,
    };
    let neighbors: Vec<usize> = scenario.links.table().neighbor_slice(me).to_vec();
    let mut results = Vec::new();
    for j in neighbors {
        if let Some(link) = scenario.links.table().link(me, j) {
            results.push(p.measure(j, link)?);
        }
    }
    p.until_start()?;
    Ok(results)
}

/// A rank measuring its links: its messages held by the emulated links until their time, the
/// ranks that said they have finished, and the run's messages that came early.
struct Prober<'a, T> {
    tr: &'a T,
    scenario: &'a Scenario,
    /// Real seconds per scenario second.
    scale: f64,
    timeout: Duration,
    deadline: Instant,
    /// The probes' own delay stream.
    rng: Pcg64,
    /// Messages held by the links: when each goes, to whom.
    held: Vec<(Instant, usize, Message)>,
    /// The ranks that said they have measured their links (rank 0 keeps count).
    probed_from: Vec<bool>,
    early: &'a mut Vec<(usize, Message)>,
}

impl<T: Transport<Message>> Prober<'_, T> {
    /// Measures `link` to neighbour `j`: empty probes for the delay, probes carrying a batch
    /// for the rate. A batch is worth a tenth of the file's delay or 20 ms of wire time,
    /// whichever is longer, at least one task.
    fn measure(&mut self, j: usize, link: usize) -> Result<LinkMeasure, ScenarioRunError> {
        let rate = self.scenario.links.rate(link);
        let mean_delay = self.scenario.links.mean_delay(link);
        let batch = if rate.is_infinite() {
            1
        } else {
            ((rate * (0.02f64).max(mean_delay / 10.0)).ceil() as usize).clamp(1, 100_000)
        };
        let mut rtt = [0.0f64; 2];
        for (kind, rtt_sum) in rtt.iter_mut().enumerate() {
            for k in 0..PROBES {
                let tasks = if kind == 0 { 0 } else { batch };
                let seq = (kind as u32) << 16 | k;
                *rtt_sum += self.round_trip(j, link, tasks, seq)? / f64::from(PROBES);
            }
        }
        let diff = rtt[1] - rtt[0];
        Ok(LinkMeasure {
            from: self.tr.rank(),
            to: j,
            file_rate: rate,
            file_delay: mean_delay,
            measured_rate: if rate.is_infinite() || diff <= 0.0 {
                f64::INFINITY
            } else {
                batch as f64 / diff
            },
            measured_delay: rtt[0] / 2.0,
        })
    }

    /// Sends probe `seq` of `tasks` tasks to `j` over `link` and waits for its reply, answering
    /// the others' probes meanwhile: the round trip in scenario seconds.
    fn round_trip(
        &mut self,
        j: usize,
        link: usize,
        tasks: usize,
        seq: u32,
    ) -> Result<f64, ScenarioRunError> {
        let h = hold(self.scenario, link, tasks, &mut self.rng, self.scale);
        let sent = Instant::now();
        // The link holds the message on the sender's side; then it goes.
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
        self.held.push((sent + Duration::from_secs_f64(h), j, msg));
        loop {
            flush(self.tr, &mut self.held)?;
            if Instant::now() > self.deadline {
                return Err(ScenarioRunError::Failed(format!(
                    "rank {}: no answer from rank {j} while measuring the link",
                    self.tr.rank()
                )));
            }
            let Some(env) = self.tr.recv(Some(self.next_release(5)))? else {
                continue;
            };
            match env.msg {
                Message::ProbeReply { seq: s, .. } if s == seq && env.from == j => {
                    return Ok(sent.elapsed().as_secs_f64() / self.scale);
                }
                Message::Start => {
                    return Err(ScenarioRunError::Failed(
                        "the run started before this rank had measured its links".into(),
                    ));
                }
                other => self.take(env.from, other)?,
            }
        }
    }

    /// Done: tells rank 0 and keeps answering until it says start (rank 0 says it once every
    /// rank is done).
    fn until_start(&mut self) -> Result<(), ScenarioRunError> {
        let (me, size) = (self.tr.rank(), self.tr.size());
        let mut probed_sent = false;
        loop {
            flush(self.tr, &mut self.held)?;
            if !probed_sent && self.held.is_empty() {
                self.tr.send(0, Message::Probed)?;
                probed_sent = true;
            }
            if Instant::now() > self.deadline {
                return Err(ScenarioRunError::Failed(format!(
                    "rank {me}: the link measurements did not finish within {:?}",
                    self.timeout
                )));
            }
            let Some(env) = self.tr.recv(Some(self.next_release(2)))? else {
                continue;
            };
            match env.msg {
                Message::Start => return Ok(()),
                other => self.take(env.from, other)?,
            }
            if me == 0 && self.probed_from.iter().all(|&p| p) {
                for r in 0..size {
                    self.tr.send(r, Message::Start)?;
                }
                self.probed_from.iter_mut().for_each(|p| *p = false);
            }
        }
    }

    /// When to look again: the next held message's time, or `ms` milliseconds from now if
    /// sooner.
    fn next_release(&self, ms: u64) -> Instant {
        let until = Instant::now() + Duration::from_millis(ms);
        self.held
            .iter()
            .map(|h| h.0)
            .min()
            .map_or(until, |n| n.min(until))
    }

    /// A message from `from` other than the one awaited: a neighbour's probe is answered over
    /// the link back, a rank's end of probing counted, and the run's own messages, from a rank
    /// that started first, kept.
    fn take(&mut self, from: usize, msg: Message) -> Result<(), ScenarioRunError> {
        match msg {
            Message::Probe { seq, .. } => {
                let me = self.tr.rank();
                let back = self.scenario.links.table().link(me, from).ok_or_else(|| {
                    ScenarioRunError::Failed(format!("rank {from} probed rank {me} over no link"))
                })?;
                let h = hold(self.scenario, back, 0, &mut self.rng, self.scale);
                self.held.push((
                    Instant::now() + Duration::from_secs_f64(h),
                    from,
                    Message::ProbeReply { seq, hold: h },
                ));
            }
            Message::Probed => self.probed_from[from] = true,
            other => self.early.push((from, other)),
        }
        Ok(())
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
