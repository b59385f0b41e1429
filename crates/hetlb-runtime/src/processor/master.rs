//! The master: EFP's central processor (Aldasht, Ortega & Puntonet, §3, steps 1–5), which also
//! computes.
//!
//! It holds the task queue, sends the first round, then alternates between its own tasks and
//! the requests that arrived meanwhile (the paper's "periodic check for interrupting
//! messages"), asking the [`Scheduler`] how many tasks each requester gets. Results are kept
//! by task number, so each appears exactly once whatever fails: a task that returns an error
//! goes back to the queue, to be run by another live processor (the master included, a
//! stopped worker woken for it if need be), and a processor that panics, vanishes or falls
//! silent has all its unfinished tasks put back.

use super::{Cpu, silence, silent_deadline};
use crate::config::RunConfig;
use crate::error::RuntimeError;
use crate::job::Job;
use crate::message::{Batch, Msg, Totals};
use crate::report::{Dispatch, Failure, FailureKind, ProcessorReport, RunOutcome, RunReport};
use hetlb_core::rules::self_scheduling::{Observation, Scheduler};
use hetlb_transport::{Envelope, Transport};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Where a processor stands, as the master sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Holds no task and is waiting for the master (never served, or parked).
    Waiting,
    /// Holds tasks.
    Busy,
    /// Sent `Stop`; its totals are expected. It can still be woken with tasks.
    Stopped,
    /// Its totals arrived. It can still be woken with tasks.
    Done,
    /// Its thread is gone, or it fell silent: nothing more is expected from it.
    Gone,
}

/// The master's own measurements are folded into the speed table in chunks, so one task
/// interrupted by the operating system does not swing the reference speed.
const MASTER_CHUNK_TASKS: u64 = 4;
const MASTER_CHUNK_SECONDS: f64 = 0.02;

/// How often the master judges its workers' silences while messages keep coming.
const TIMEOUT_CHECK_EVERY: Duration = Duration::from_millis(1);

struct Master<'a, 'j, J: Job, Tr> {
    tr: &'a Tr,
    cpu: &'a mut Cpu<'j, J>,
    cfg: &'a RunConfig,
    sched: Scheduler,
    capacities: Vec<f64>,
    calibrated: bool,
    me: usize,
    total: u64,
    queue: VecDeque<u64>,
    /// Tasks put back, with the processor they failed on (avoided if possible).
    retry: VecDeque<(u64, usize)>,
    attempts: Vec<u32>,
    results: Vec<Option<J::Output>>,
    done: u64,
    state: Vec<State>,
    outstanding: Vec<Vec<u64>>,
    heard: Vec<Instant>,
    rows: Vec<u64>,
    tasks_done: Vec<u64>,
    batches: Vec<u64>,
    totals: Vec<Option<Totals>>,
    failed: Vec<Option<String>>,
    timeline: Vec<Dispatch>,
    failures: Vec<Failure>,
    requeued: u64,
    duplicates: u64,
    t0: Instant,
    /// The clock's last reading, taken when a message is taken in (the end of a wait, or a
    /// message found waiting), when it has been handled, and around the master's own tasks.
    /// A wait starts from the reading that ended the handling of the previous message.
    now: Instant,
    /// Silences are judged again once the clock passes this, or after a wait that ended
    /// without a message (see [`Master::check_timeouts`]).
    next_timeout_check: Instant,
    /// Task numbers being handed out (kept to reuse its memory).
    picked: Vec<u64>,
    own: Totals,
    chunk: Observation,
    computes: bool,
}

/// Runs the master on `tr.rank()` until every task's result is in and every worker has been
/// stopped. On failure every worker still running is stopped before the error is returned.
pub(crate) fn run<J, Tr>(
    tr: &Tr,
    cpu: &mut Cpu<'_, J>,
    cfg: &RunConfig,
    capacities: Vec<f64>,
    calibrated: bool,
) -> Result<RunOutcome<J::Output>, RuntimeError>
where
    J: Job,
    Tr: Transport<Msg<J::Task, J::Output>>,
{
    let size = tr.size();
    if capacities.len() != size {
        return Err(RuntimeError::Protocol(format!(
            "{} capacities for {size} processors",
            capacities.len()
        )));
    }
    // The other ranks learn who the master is.
    for w in (0..size).filter(|&w| w != cpu.rank()) {
        let _ = tr.send(w, Msg::Alive { leading: true });
    }
    let sched = Scheduler::new(cfg.policy, cfg.params, &capacities)?;
    let total = cpu.job().tasks();
    let now = Instant::now();
    let mut m = Master {
        tr,
        me: cpu.rank(),
        cpu,
        cfg,
        sched,
        capacities,
        calibrated,
        total,
        queue: (0..total).collect(),
        retry: VecDeque::new(),
        attempts: vec![0; total as usize],
        results: (0..total).map(|_| None).collect(),
        done: 0,
        state: vec![State::Waiting; size],
        outstanding: vec![Vec::new(); size],
        heard: vec![now; size],
        rows: vec![0; size],
        tasks_done: vec![0; size],
        batches: vec![0; size],
        totals: vec![None; size],
        failed: vec![None; size],
        timeline: Vec::new(),
        failures: Vec::new(),
        requeued: 0,
        duplicates: 0,
        t0: now,
        now,
        next_timeout_check: now,
        picked: Vec::new(),
        own: Totals::default(),
        chunk: Observation::default(),
        computes: true,
    };
    match m.drive() {
        Ok(makespan) => m.finish(makespan),
        Err(e) => {
            m.release_all();
            Err(e)
        }
    }
}

impl<J, Tr> Master<'_, '_, J, Tr>
where
    J: Job,
    Tr: Transport<Msg<J::Task, J::Output>>,
{
    fn since_start(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    /// Reads the clock and returns the seconds since its previous reading.
    fn tick(&mut self) -> f64 {
        let before = self.now;
        self.now = Instant::now();
        self.now.saturating_duration_since(before).as_secs_f64()
    }

    fn left(&self) -> u64 {
        (self.queue.len() + self.retry.len()) as u64
    }

    /// Steps 1–5: first round, then own tasks and requests until every result is in.
    /// Returns the makespan.
    fn drive(&mut self) -> Result<f64, RuntimeError> {
        self.t0 = Instant::now();
        self.now = self.t0;
        self.cpu.start_clock(self.t0);
        self.state[self.me] = State::Done;
        if !self.cfg.master_computes {
            self.computes = false;
            self.sched.remove(self.me);
        }
        for (w, k) in self.sched.first_round(self.left()) {
            let since = self.since_start();
            let sf = self.sched.speed_factor(w);
            self.send_batch(w, k, since, sf)?;
        }
        // As before the loop, the first round is counted in no part of the master's time.
        self.now = Instant::now();
        while self.done < self.total {
            while let Some(env) = self.tr.try_recv()? {
                // Taken in now: it may have waited while the master was not running, which
                // counts in `queued_for` (the gap since the previous reading counts nowhere).
                self.now = Instant::now();
                self.attend(env)?;
            }
            if self.done >= self.total {
                break;
            }
            if self.now >= self.next_timeout_check {
                self.check_timeouts();
                self.next_timeout_check = self.now + TIMEOUT_CHECK_EVERY;
            }
            if self.place_leftovers()? {
                // Counted in no part of the master's time, as the first round.
                self.now = Instant::now();
            }
            if self.computes {
                let mut ids = std::mem::take(&mut self.picked);
                self.take_for(self.me, 1, &mut ids);
                let id = ids.pop();
                self.picked = ids;
                if let Some(id) = id {
                    self.compute_own(id)?;
                    continue;
                }
            }
            if !self.state.contains(&State::Busy) {
                return Err(RuntimeError::NoProcessorLeft {
                    left: self.total - self.done,
                });
            }
            let got = self.tr.recv_until(|| Some(self.deadline()))?;
            self.own.t_wait += self.tick();
            match got {
                Some(env) => self.attend(env)?,
                // the wait ended at the first silent deadline: judge the silences at once
                None => self.next_timeout_check = self.now,
            }
        }
        let makespan = self.since_start();
        self.flush_chunk();
        Ok(makespan)
    }

    /// Handles one message, counting the time as the master's communication. The message
    /// counts as taken in at the clock's last reading (which ended the wait for it, or was
    /// taken when it was found waiting), and the clock is read once when it has been handled.
    fn attend(&mut self, env: Envelope<Msg<J::Task, J::Output>>) -> Result<(), RuntimeError> {
        let from = env.from;
        let now = self.now;
        if let Some(heard) = self.heard.get_mut(from) {
            *heard = now;
        }
        let r = match env.msg {
            Msg::Results {
                results,
                obs,
                panic,
            } => self.on_results(from, results, obs, panic, env.arrived),
            Msg::Bye { totals } => {
                if from < self.totals.len() {
                    self.totals[from] = Some(totals);
                    // A worker woken again after its stop stays busy.
                    if self.state[from] == State::Stopped {
                        self.state[from] = State::Done;
                    }
                }
                Ok(())
            }
            Msg::Gone { reason } => {
                self.on_death(from, reason, FailureKind::Lost);
                Ok(())
            }
            _ => Ok(()),
        };
        self.own.t_comm += self.tick();
        r
    }

    fn on_results(
        &mut self,
        w: usize,
        results: Batch<Result<J::Output, String>>,
        obs: Observation,
        panic: Option<String>,
        arrived: Instant,
    ) -> Result<(), RuntimeError> {
        if w >= self.state.len() {
            return Err(RuntimeError::Protocol(format!(
                "results from unknown processor {w}"
            )));
        }
        // Results come back in the order the tasks were sent: taken from the back, each is
        // found at the end of the outstanding list (O(1), not O(batch)).
        for (id, _) in results.as_slice().iter().rev() {
            if let Some(pos) = self.outstanding[w].iter().rposition(|t| t == id) {
                self.outstanding[w].swap_remove(pos);
            }
        }
        for (id, r) in results {
            match r {
                Ok(o) => self.accept(w, id, o),
                Err(e) => self.on_task_error(w, id, e)?,
            }
        }
        if let Some(message) = panic {
            self.on_death(w, message, FailureKind::Panic);
            return Ok(());
        }
        if self.state[w] != State::Busy {
            return Ok(()); // late results from a processor already given up on
        }
        if !self.outstanding[w].is_empty() {
            return Ok(()); // still holds tasks: not a request
        }
        let queued_for = self.now.saturating_duration_since(arrived).as_secs_f64();
        let d = self.sched.on_report(w, &obs, self.left(), self.computes);
        if d.tasks > 0 && self.send_batch(w, d.tasks, queued_for, d.speed_factor)? {
            return Ok(());
        }
        if self.done >= self.total || self.computes {
            self.timeline.push(Dispatch {
                at: self.since_start(),
                processor: w,
                tasks: 0,
                speed_factor: d.speed_factor,
                queue: self.left(),
            });
            self.stop(w, queued_for)
        } else {
            // The master cannot compute any more: keep the worker for tasks that may come
            // back from a failure.
            self.state[w] = State::Waiting;
            Ok(())
        }
    }

    fn accept(&mut self, p: usize, id: u64, output: J::Output) {
        let Some(slot) = self.results.get_mut(id as usize) else {
            self.duplicates += 1;
            return;
        };
        if slot.is_some() {
            self.duplicates += 1;
            return;
        }
        *slot = Some(output);
        self.done += 1;
        self.rows[p] += self.cpu.job().units(id);
        self.tasks_done[p] += 1;
        if let Some(progress) = &self.cfg.progress {
            progress(self.done, self.total);
        }
    }

    fn on_task_error(&mut self, p: usize, id: u64, error: String) -> Result<(), RuntimeError> {
        let Some(tries) = self.attempts.get_mut(id as usize) else {
            return Ok(());
        };
        *tries += 1;
        if *tries >= self.cfg.max_attempts {
            return Err(RuntimeError::TaskFailed {
                task: id,
                attempts: *tries,
                error,
            });
        }
        self.failures.push(Failure {
            processor: p,
            kind: FailureKind::TaskError,
            task: Some(id),
            message: error,
        });
        if self
            .results
            .get(id as usize)
            .is_some_and(|slot| slot.is_none())
        {
            self.retry.push_back((id, p));
            self.requeued += 1;
        }
        Ok(())
    }

    /// A processor died or fell silent: put its tasks back and take it out of the shares.
    fn on_death(&mut self, p: usize, message: String, kind: FailureKind) {
        if p >= self.state.len() || matches!(self.state[p], State::Gone) {
            return;
        }
        let lost = std::mem::take(&mut self.outstanding[p]);
        self.failures.push(Failure {
            processor: p,
            kind,
            task: lost.first().copied(),
            message: message.clone(),
        });
        self.failed[p] = Some(message);
        for id in lost {
            if self.results[id as usize].is_none() {
                self.retry.push_back((id, p));
                self.requeued += 1;
            }
        }
        self.sched.remove(p);
        if matches!(kind, FailureKind::Lost | FailureKind::Silent) {
            self.state[p] = State::Gone;
        } else {
            let since = self.since_start();
            let _ = self.tr.send(
                p,
                Msg::Stop {
                    queued_for: 0.0,
                    since_start: since,
                },
            );
            self.state[p] = State::Stopped;
        }
    }

    /// True when `p` is a live processor that can take tasks: the master while it computes,
    /// or a worker that has not failed or fallen silent.
    fn can_work(&self, p: usize) -> bool {
        if p == self.me {
            self.computes
        } else {
            self.state[p] != State::Gone && self.failed[p].is_none()
        }
    }

    /// Takes up to `k` tasks for processor `p` into `out` (emptied first): first those put
    /// back by other processors, then fresh ones. A task that failed on `p` goes back to `p`
    /// only when no other live processor is left to run it.
    fn take_for(&mut self, p: usize, k: u64, out: &mut Vec<u64>) {
        out.clear();
        let mut i = 0;
        while (out.len() as u64) < k && i < self.retry.len() {
            if self.retry[i].1 != p {
                if let Some((id, _)) = self.retry.remove(i) {
                    out.push(id);
                }
            } else {
                i += 1;
            }
        }
        while (out.len() as u64) < k {
            match self.queue.pop_front() {
                Some(id) => out.push(id),
                None => break,
            }
        }
        if (out.len() as u64) < k
            && !self.retry.is_empty()
            && !(0..self.state.len()).any(|q| q != p && self.can_work(q))
        {
            while (out.len() as u64) < k {
                match self.retry.pop_front() {
                    Some((id, _)) => out.push(id),
                    None => break,
                }
            }
        }
    }

    /// Sends `w` up to `k` tasks; false when none could be given to it.
    fn send_batch(
        &mut self,
        w: usize,
        k: u64,
        queued_for: f64,
        speed_factor: f64,
    ) -> Result<bool, RuntimeError> {
        let mut ids = std::mem::take(&mut self.picked);
        self.take_for(w, k, &mut ids);
        if ids.is_empty() {
            self.picked = ids;
            return Ok(false);
        }
        let job = self.cpu.job();
        let tasks: Batch<J::Task> = ids.iter().map(|&id| (id, job.task(id))).collect();
        self.outstanding[w].extend_from_slice(&ids);
        let given = ids.len() as u64;
        self.picked = ids;
        // One task to a worker already running, the common case of self-scheduling, is sent
        // at the clock's last reading (when the request was taken in): building one task
        // takes no time worth a reading. A batch, and the first message to a worker (which
        // sets the worker's clock from `since_start`), read the clock again.
        let at = if given > 1 || self.batches[w] == 0 {
            Instant::now()
        } else {
            self.now
        };
        self.state[w] = State::Busy;
        self.heard[w] = at;
        self.batches[w] += 1;
        let since_start = at.saturating_duration_since(self.t0).as_secs_f64();
        self.timeline.push(Dispatch {
            at: since_start,
            processor: w,
            tasks: given,
            speed_factor,
            queue: self.left(),
        });
        self.tr.send_at(
            w,
            Msg::Tasks {
                tasks,
                queued_for,
                since_start,
            },
            at,
        )?;
        Ok(true)
    }

    fn stop(&mut self, w: usize, queued_for: f64) -> Result<(), RuntimeError> {
        self.state[w] = State::Stopped;
        let since_start = self.since_start();
        self.tr.send(
            w,
            Msg::Stop {
                queued_for,
                since_start,
            },
        )?;
        Ok(())
    }

    /// Tasks the master will not run itself: all that are left when it no longer computes,
    /// otherwise those that failed on it.
    fn leftovers(&self) -> u64 {
        if self.computes {
            self.retry.iter().filter(|&&(_, on)| on == self.me).count() as u64
        } else {
            self.left()
        }
    }

    /// Hands the tasks the master will not run to other processors: workers waiting for
    /// work first, then workers already stopped, woken for it. True when it sent any.
    fn place_leftovers(&mut self) -> Result<bool, RuntimeError> {
        // The workers tried so far (few: kept in a list that allocates only when one is).
        let mut tried: Vec<usize> = Vec::new();
        while self.leftovers() > 0 {
            // Busy workers will ask again: they take what is left, unless the master idles
            // and waiting workers could start at once.
            let busy = self.state.contains(&State::Busy);
            let free = |w: usize, states: &[State]| {
                w != self.me && !tried.contains(&w) && self.failed[w].is_none() && {
                    match states[w] {
                        State::Waiting => !self.computes || !busy,
                        State::Stopped | State::Done => !busy,
                        _ => false,
                    }
                }
            };
            let candidate = (0..self.state.len())
                .filter(|&w| free(w, &self.state))
                .min_by_key(|&w| self.state[w] != State::Waiting);
            let Some(w) = candidate else {
                return Ok(!tried.is_empty());
            };
            tried.push(w);
            let k = if self.computes {
                self.leftovers()
            } else {
                self.sched
                    .on_report(w, &Observation::default(), self.left(), false)
                    .tasks
                    .max(1)
            };
            let since = self.since_start();
            let sf = self.sched.speed_factor(w);
            self.send_batch(w, k, since, sf)?;
        }
        Ok(!tried.is_empty())
    }

    fn compute_own(&mut self, id: u64) -> Result<(), RuntimeError> {
        let job = self.cpu.job();
        let start = Instant::now();
        let task = job.task(id);
        let out = self.cpu.execute(&task, start);
        if self.cpu.hung() {
            return Err(self.play_dead());
        }
        self.now = start;
        let dt = self.tick();
        self.own.t_comp += dt;
        self.own.tasks_run += 1;
        match out {
            Ok(Ok(o)) => {
                self.chunk.tasks += 1;
                self.chunk.t_comp += dt;
                if self.chunk.tasks >= MASTER_CHUNK_TASKS
                    || self.chunk.t_comp >= MASTER_CHUNK_SECONDS
                {
                    self.flush_chunk();
                }
                self.accept(self.me, id, o);
                Ok(())
            }
            Ok(Err(e)) => self.on_task_error(self.me, id, e.to_string()),
            Err(message) => {
                self.computes = false;
                self.failed[self.me] = Some(message.clone());
                self.failures.push(Failure {
                    processor: self.me,
                    kind: FailureKind::Panic,
                    task: Some(id),
                    message,
                });
                self.retry.push_back((id, self.me));
                self.requeued += 1;
                self.sched.remove(self.me);
                self.place_leftovers()?;
                self.now = Instant::now();
                Ok(())
            }
        }
    }

    /// An injected hang of the master: it says nothing any more, until the run is ended
    /// around it (or, on rank 0, until the others must have given up).
    fn play_dead(&self) -> RuntimeError {
        self.tr.pause(None);
        let until = Instant::now() + 2 * self.cfg.timeout + Duration::from_secs(1);
        while Instant::now() < until {
            match self.tr.recv(Some(until)) {
                Ok(Some(env)) if matches!(env.msg, Msg::End) => break,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        RuntimeError::Protocol(format!(
            "processor {} (the master) hung: an injected fault",
            self.me
        ))
    }

    fn flush_chunk(&mut self) {
        if self.chunk.tasks > 0 {
            self.sched.observe_master(&self.chunk);
            self.chunk = Observation::default();
        }
    }

    /// When the first busy worker would become silent for the timeout (in a second when
    /// none is busy).
    fn deadline(&self) -> Instant {
        (0..self.state.len())
            .filter(|&w| self.state[w] == State::Busy)
            .map(|w| silent_deadline(self.tr, w, self.cfg.timeout))
            .min()
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(1))
    }

    /// Gives up on every busy worker that has been silent for the timeout: it is reported
    /// and its tasks go to the others. Results already waiting are read first, and silence is
    /// counted from when the master itself last resumed from a pause at the earliest.
    ///
    /// Judged at the clock's last reading: a wait for messages, which ends at the earliest
    /// deadline, reads the clock when it ends, and the silences are judged right after it.
    /// While messages keep coming the master judges them every [`TIMEOUT_CHECK_EVERY`] only
    /// (each judgement asks the transport about every busy worker), so a worker is reported
    /// at most that much after its timeout.
    fn check_timeouts(&mut self) {
        for w in 0..self.state.len() {
            if self.state[w] != State::Busy {
                continue;
            }
            let silent = silence(self.tr, w);
            if silent >= self.cfg.timeout {
                let message = RuntimeError::Unresponsive {
                    processor: w,
                    seconds: silent.as_secs_f64(),
                    tasks: self.outstanding[w].len(),
                    timeout: self.cfg.timeout.as_secs_f64(),
                }
                .to_string();
                self.on_death(w, message, FailureKind::Silent);
            }
        }
    }

    /// Ends the run for every other processor (rank 0, waiting for the outcome, ignores it).
    fn end_all(&self) {
        for w in (0..self.state.len()).filter(|&w| w != self.me) {
            let _ = self.tr.send(w, Msg::End);
        }
    }

    /// After a failure: end the run for everyone so that threads can end.
    fn release_all(&mut self) {
        self.end_all();
    }

    /// Stops the waiting workers, collects every worker's totals and builds the report.
    fn finish(mut self, makespan: f64) -> Result<RunOutcome<J::Output>, RuntimeError> {
        for w in 0..self.state.len() {
            if w != self.me && self.state[w] == State::Waiting {
                self.stop(w, 0.0)?;
            }
        }
        let deadline = Instant::now() + self.cfg.timeout;
        while self.state.contains(&State::Stopped) {
            let Some(env) = self.tr.recv(Some(deadline))? else {
                // A wake-up (a peer's end closed) is not the deadline.
                if Instant::now() < deadline {
                    continue;
                }
                break;
            };
            // The run is over: waiting for the totals is counted in no part of its time.
            self.now = Instant::now();
            self.attend(env)?;
        }
        self.end_all();
        for w in 0..self.state.len() {
            if self.state[w] == State::Stopped {
                self.failures.push(Failure {
                    processor: w,
                    kind: FailureKind::NoTotals,
                    task: None,
                    message: format!(
                        "processor {w} sent no totals within {:.1} s of being stopped",
                        self.cfg.timeout.as_secs_f64()
                    ),
                });
            }
        }
        self.own.t_exec = makespan;
        self.totals[self.me] = Some(self.own);
        let roles = self.sched.roles().clone();
        let processors: Vec<ProcessorReport> = (0..self.state.len())
            .map(|p| {
                let t = self.totals[p].unwrap_or_default();
                ProcessorReport {
                    processor: p,
                    role: roles.label(p),
                    rows: self.rows[p],
                    tasks: self.tasks_done[p],
                    batches: self.batches[p],
                    t_exec: t.t_exec,
                    t_comp: t.t_comp,
                    t_comm: t.t_comm,
                    t_wait: t.t_wait,
                    capacity: self.capacities[p],
                    failed: self.failed[p].clone(),
                }
            })
            .collect();
        let ideal = RunReport::ideal_makespan(&processors);
        let units: u64 = (0..self.total).map(|id| self.cpu.job().units(id)).sum();
        let outputs: Vec<J::Output> = self.results.into_iter().flatten().collect();
        if outputs.len() as u64 != self.total {
            return Err(RuntimeError::Protocol(format!(
                "{} results for {} tasks",
                outputs.len(),
                self.total
            )));
        }
        let report = RunReport {
            policy: self.sched.policy(),
            backend: self.tr.backend().to_string(),
            processors,
            tasks: self.total,
            units,
            unit: self.cpu.job().unit_name().to_string(),
            master: self.me,
            calibrated: self.calibrated,
            makespan,
            ideal,
            efficiency: if makespan > 0.0 {
                ideal / makespan
            } else {
                1.0
            },
            timeline: self.timeline,
            failures: self.failures,
            requeued: self.requeued,
            duplicates_dropped: self.duplicates,
        };
        Ok(RunOutcome { report, outputs })
    }
}
