//! One processor: the code every rank runs. See `README.md` beside this file for the design.
//!
//! Every rank starts as a worker waiting for messages. Rank 0 first *launches* the run: it has
//! every processor run a sample task for a moment (calibration) unless capacities are given, picks
//! the fastest as the master (Aldasht, Ortega & Puntonet, §3) and tells it to lead. The master
//! drives the run ([`master`]); the others compute the batches it sends until it ends the run.
//! Liveness is the transport's: on threads a rank's state is shared memory, on MPI the progress
//! thread beats while the rank computes, so silence — never a long task — is what makes a rank give
//! up on another.

pub(crate) mod master;

use crate::config::RunConfig;
use crate::error::{RuntimeError, TaskError};
use crate::faults::ProcessorFaults;
use crate::job::Job;
use crate::message::{Batch, Msg, Totals};
use crate::report::RunOutcome;
use crate::slowdown::Slowdown;
use hetlb_core::rules::self_scheduling::Observation;
use hetlb_transport::{Envelope, Transport};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// A processor's compute side: the job, its emulated slowdown, its injected faults and its
/// clock. The slowdown is private to it; the master only ever sees measured times.
pub(crate) struct Cpu<'j, J: Job> {
    rank: usize,
    job: &'j J,
    slowdown: Slowdown,
    faults: ProcessorFaults,
    started: u64,
    completed: u64,
    t0: Option<Instant>,
}

/// The panic message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}

impl<'j, J: Job> Cpu<'j, J> {
    pub(crate) fn new(rank: usize, job: &'j J, cfg: &RunConfig) -> Self {
        Self {
            rank,
            job,
            slowdown: cfg.slowdown(rank),
            faults: cfg.faults(rank),
            started: 0,
            completed: 0,
            t0: None,
        }
    }

    pub(crate) fn job(&self) -> &'j J {
        self.job
    }

    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    /// Starts this processor's clock (the master's start, as it knows it).
    pub(crate) fn start_clock(&mut self, t0: Instant) {
        self.t0.get_or_insert(t0);
    }

    /// Seconds this processor has been blocked on the master until `now` (a reading of the
    /// clock): since its last message when it sent one, otherwise since the master's start
    /// (`since_start` seconds before `now`, which also starts this processor's clock).
    fn blocked_since(&mut self, last_sent: Option<Instant>, since_start: f64, now: Instant) -> f64 {
        match last_sent {
            Some(s) => now.saturating_duration_since(s).as_secs_f64(),
            None => {
                let t0 = now
                    .checked_sub(Duration::from_secs_f64(since_start.max(0.0)))
                    .unwrap_or(now);
                self.start_clock(t0);
                since_start
            }
        }
    }

    /// This processor's time since the start of the run at `now` (a reading of the clock).
    fn elapsed_at(&self, now: Instant) -> Duration {
        self.t0
            .map(|t| now.saturating_duration_since(t))
            .unwrap_or_default()
    }

    /// True once an injected hang has struck.
    fn hung(&self) -> bool {
        self.faults.hang_after.is_some_and(|k| self.completed >= k)
    }

    /// Runs one task of the run, started at `now` (a reading of the clock, which decides the
    /// slowdown in force): faults first, then the kernel `slowdown` times. A panic (injected
    /// or from the job) is caught and returned as `Err(message)`.
    pub(crate) fn execute(
        &mut self,
        task: &J::Task,
        now: Instant,
    ) -> Result<Result<J::Output, TaskError>, String> {
        self.started += 1;
        let n = self.started;
        let reps = self.slowdown.factor_at(self.elapsed_at(now));
        let (job, faults, rank) = (self.job, self.faults, self.rank);
        let out = catch_unwind(AssertUnwindSafe(|| {
            if faults.panic_on_task == Some(n) {
                panic!("injected panic on processor {rank} at its task {n}");
            }
            if faults
                .error_every
                .is_some_and(|k| k > 0 && n.is_multiple_of(k))
            {
                return Err(TaskError::new(format!(
                    "injected error on processor {rank} at its task {n}"
                )));
            }
            let mut out = job.run(std::hint::black_box(task));
            for _ in 1..reps {
                out = std::hint::black_box(job.run(std::hint::black_box(task)));
            }
            out
        }))
        .map_err(|p| panic_message(p.as_ref()))?;
        self.completed += 1;
        Ok(out)
    }

    /// Runs `task` repeatedly for about `seconds` (at least [`CALIBRATION_RUNS`] times) and
    /// returns the rate of the fastest run, in tasks per second. Faults do not apply.
    ///
    /// The fastest run, not the average: on a shared machine most runs are interrupted by
    /// other work, and the least interrupted one is the best estimate of what the processor
    /// itself can do.
    fn calibrate(&self, task: &J::Task, seconds: f64) -> Result<f64, String> {
        let reps = self.slowdown.factor_at(Duration::ZERO);
        let job = self.job;
        let start = Instant::now();
        let mut runs = 0u64;
        let mut fastest = f64::INFINITY;
        loop {
            let run = Instant::now();
            catch_unwind(AssertUnwindSafe(|| {
                for _ in 0..reps {
                    std::hint::black_box(job.run(std::hint::black_box(task)))
                        .map_err(|e| e.to_string())?;
                }
                Ok::<(), String>(())
            }))
            .map_err(|p| panic_message(p.as_ref()))??;
            fastest = fastest.min(run.elapsed().as_secs_f64());
            runs += 1;
            if runs >= CALIBRATION_RUNS && start.elapsed().as_secs_f64() >= seconds {
                return Ok(1.0 / fastest.max(1e-9));
            }
        }
    }
}

/// The fewest runs of the calibration task.
const CALIBRATION_RUNS: u64 = 5;

/// How a processor's part of the run ended.
pub(crate) enum Ending<O> {
    /// A worker that was stopped (or a master that handed its outcome to rank 0).
    Stopped,
    /// Rank 0's end: the run's outcome.
    Finished(Box<RunOutcome<O>>),
}

/// How long `peer` has been silent, as the transport knows it.
pub(crate) fn silence<M, Tr: Transport<M>>(tr: &Tr, peer: usize) -> Duration {
    tr.liveness(peer).silence()
}

/// When `peer` becomes silent for `timeout`, at the earliest.
pub(crate) fn silent_deadline<M, Tr: Transport<M>>(
    tr: &Tr,
    peer: usize,
    timeout: Duration,
) -> Instant {
    Instant::now() + timeout.saturating_sub(silence(tr, peer))
}

/// Runs processor `tr.rank()` until the run is over. Rank 0 launches the run and returns the
/// outcome; the others return [`Ending::Stopped`].
pub(crate) fn run<J, Tr>(
    tr: &Tr,
    job: &J,
    cfg: &RunConfig,
) -> Result<Ending<J::Output>, RuntimeError>
where
    J: Job,
    Tr: Transport<Msg<J::Task, J::Output>>,
{
    let mut cpu = Cpu::new(tr.rank(), job, cfg);
    if tr.rank() != 0 {
        return worker(tr, &mut cpu, cfg, 0);
    }
    let (capacities, calibrated) = launch(tr, &cpu, cfg)?;
    let master = hetlb_core::rules::self_scheduling::Roles::from_capacities(&capacities)?.master;
    if master == 0 {
        return master::run(tr, &mut cpu, cfg, capacities, calibrated)
            .map(|o| Ending::Finished(Box::new(o)));
    }
    tr.send(
        master,
        Msg::Lead {
            capacities,
            calibrated,
        },
    )?;
    worker(tr, &mut cpu, cfg, master)
}

/// Waits for the next message from anyone while `peer` is not silent for the timeout.
/// Returns the message with the clock's reading when it was taken in; `Ok(None)` when `peer`
/// has fallen silent.
fn recv_while_heard<M, Tr: Transport<M>>(
    tr: &Tr,
    timeout: Duration,
    peer: usize,
) -> Result<Option<(Envelope<M>, Instant)>, RuntimeError> {
    loop {
        let got = tr.recv_until(|| Some(silent_deadline(tr, peer, timeout)))?;
        let now = Instant::now();
        match got {
            Some(env) => return Ok(Some((env, now))),
            None if silence(tr, peer) >= timeout => return Ok(None),
            None => {}
        }
    }
}

/// Rank 0's launch: the capacities, given or measured by calibration.
fn launch<J, Tr>(
    tr: &Tr,
    cpu: &Cpu<'_, J>,
    cfg: &RunConfig,
) -> Result<(Vec<f64>, bool), RuntimeError>
where
    J: Job,
    Tr: Transport<Msg<J::Task, J::Output>>,
{
    let size = tr.size();
    if let Some(c) = &cfg.capacities {
        return Ok((c.clone(), false));
    }
    if size == 1 || cpu.job.tasks() == 0 || cfg.calibration.is_zero() {
        return Ok((vec![1.0; size], false));
    }
    // One processor at a time, so that each runs alone: on a machine with fewer cores than
    // processors, concurrent calibrations would measure how the cores happened to be shared
    // (the first to start and the first to finish look faster) instead of the processors.
    let seconds = cfg.calibration.as_secs_f64();
    let mut rates = vec![0.0; size];
    rates[0] = cpu
        .calibrate(&cpu.job.task(0), seconds)
        .map_err(|message| RuntimeError::Calibration {
            processor: 0,
            message,
        })?;
    for (r, rate) in rates.iter_mut().enumerate().skip(1) {
        tr.send(
            r,
            Msg::Calibrate {
                task: cpu.job.task(0),
                seconds,
            },
        )?;
        loop {
            let Some((env, _)) = recv_while_heard(tr, cfg.timeout, r)? else {
                return Err(RuntimeError::Unresponsive {
                    processor: r,
                    seconds: silence(tr, r).as_secs_f64(),
                    tasks: 1,
                    timeout: cfg.timeout.as_secs_f64(),
                });
            };
            match env.msg {
                Msg::Alive { .. } => continue,
                Msg::Calibrated { rate: x } if env.from == r && x.is_finite() && x > 0.0 => {
                    *rate = x;
                    break;
                }
                Msg::Calibrated { rate: x } => {
                    return Err(RuntimeError::Calibration {
                        processor: env.from,
                        message: format!("measured rate {x}"),
                    });
                }
                Msg::CalibrationFailed { message } => {
                    return Err(RuntimeError::Calibration {
                        processor: env.from,
                        message,
                    });
                }
                Msg::Gone { reason } => {
                    return Err(RuntimeError::Calibration {
                        processor: env.from,
                        message: reason,
                    });
                }
                _ => {
                    return Err(RuntimeError::Protocol(format!(
                        "unexpected message from processor {} during calibration",
                        env.from
                    )));
                }
            }
        }
    }
    Ok((rates, true))
}

/// Sends `Gone` to the coordinator if the worker's thread unwinds past the task guard.
struct GoneGuard<'a, J: Job, Tr: Transport<Msg<J::Task, J::Output>>> {
    tr: &'a Tr,
    coordinator: usize,
    _job: std::marker::PhantomData<fn(&J)>,
}

impl<J: Job, Tr: Transport<Msg<J::Task, J::Output>>> Drop for GoneGuard<'_, J, Tr> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.tr.send(
                self.coordinator,
                Msg::Gone {
                    reason: format!("processor {} ended unexpectedly", self.tr.rank()),
                },
            );
        }
    }
}

/// Sends a worker's report to the master, `now` being the clock's reading when it was made.
/// If the master has already ended the run (its end of the connection is closed), the reason
/// it left in this rank's inbox is returned instead of the bare transport error.
fn report_to<J, Tr>(
    tr: &Tr,
    master: usize,
    msg: Msg<J::Task, J::Output>,
    now: Instant,
) -> Result<(), RuntimeError>
where
    J: Job,
    Tr: Transport<Msg<J::Task, J::Output>>,
{
    match tr.send_at(master, msg, now) {
        Ok(_) => Ok(()),
        Err(e) => {
            while let Ok(Some(env)) = tr.try_recv() {
                if let Msg::Failed { message } = env.msg {
                    return Err(RuntimeError::Remote {
                        processor: env.from,
                        message,
                    });
                }
            }
            Err(e.into())
        }
    }
}

/// The worker loop: calibrate on request, compute batches, report, stop; or become the
/// master. It follows its coordinator (rank 0, then the master) and gives up when that one
/// falls silent for the timeout. Rank 0 ends with the master's outcome.
fn worker<J, Tr>(
    tr: &Tr,
    cpu: &mut Cpu<'_, J>,
    cfg: &RunConfig,
    first_coordinator: usize,
) -> Result<Ending<J::Output>, RuntimeError>
where
    J: Job,
    Tr: Transport<Msg<J::Task, J::Output>>,
{
    let me = tr.rank();
    let mut guard = GoneGuard::<J, Tr> {
        tr,
        coordinator: first_coordinator,
        _job: std::marker::PhantomData,
    };
    let mut coordinator = first_coordinator;
    let mut state = Worker::default();
    loop {
        let Some((env, now)) = recv_while_heard(tr, cfg.timeout, coordinator)? else {
            if cpu.hung() {
                // A hung processor waits to be ended, silently.
                let _ = tr.recv(Some(Instant::now() + cfg.timeout));
                continue;
            }
            return Err(RuntimeError::MasterSilent {
                processor: coordinator,
                seconds: silence(tr, coordinator).as_secs_f64(),
                timeout: cfg.timeout.as_secs_f64(),
            });
        };
        let from = env.from;
        // The master makes itself known by leading, or by sending work.
        let from_master = matches!(
            env.msg,
            Msg::Alive { leading: true } | Msg::Tasks { .. } | Msg::Stop { .. }
        );
        if from_master && from != coordinator && from != me && (from != 0 || coordinator == 0) {
            coordinator = from;
            guard.coordinator = from;
        }
        match env.msg {
            Msg::Alive { .. } => {}
            Msg::Calibrate { task, seconds } => {
                let reply = match cpu.calibrate(&task, seconds) {
                    Ok(rate) => Msg::Calibrated { rate },
                    Err(message) => Msg::CalibrationFailed { message },
                };
                tr.send(from, reply)?;
            }
            Msg::Lead {
                capacities,
                calibrated,
            } => return lead(tr, cpu, cfg, capacities, calibrated),
            Msg::Tasks {
                tasks,
                queued_for,
                since_start,
            } => state.compute(tr, cpu, from, &tasks, (queued_for, since_start), now)?,
            Msg::Stop {
                queued_for,
                since_start,
            } => state.stop(tr, cpu, from, (queued_for, since_start), now)?,
            Msg::End if me != 0 => return Ok(Ending::Stopped),
            Msg::Finished(outcome) if me == 0 => return Ok(Ending::Finished(outcome)),
            Msg::Failed { message } => {
                return Err(RuntimeError::Remote {
                    processor: from,
                    message,
                });
            }
            _ => {}
        }
    }
}

/// A worker told to lead: it runs as the master; rank 0 ends with the outcome, another rank
/// hands it (or the failure) to rank 0.
fn lead<J, Tr>(
    tr: &Tr,
    cpu: &mut Cpu<'_, J>,
    cfg: &RunConfig,
    capacities: Vec<f64>,
    calibrated: bool,
) -> Result<Ending<J::Output>, RuntimeError>
where
    J: Job,
    Tr: Transport<Msg<J::Task, J::Output>>,
{
    let result = master::run(tr, cpu, cfg, capacities, calibrated);
    if tr.rank() == 0 {
        return result.map(|o| Ending::Finished(Box::new(o)));
    }
    match result {
        Ok(outcome) => {
            tr.send(0, Msg::Finished(Box::new(outcome)))?;
            Ok(Ending::Stopped)
        }
        Err(e) => {
            let _ = tr.send(
                0,
                Msg::Failed {
                    message: e.to_string(),
                },
            );
            Err(e)
        }
    }
}

/// What a worker keeps from one message of the master to the next.
#[derive(Default)]
struct Worker {
    /// Its times and tasks over the run.
    totals: Totals,
    /// When this processor last sent the master a message. The time until the next message
    /// from the master (the send included) is the time blocked on the master.
    last_sent: Option<Instant>,
    /// A task panicked: the processor runs no more tasks.
    dead: bool,
    /// Stopped by the master and not woken since.
    stopped: bool,
}

/// A batch computed: the results, the tasks that succeeded, a panic's message, and the clock's
/// reading when the last task ended.
type Computed<O> = (Batch<Result<O, String>>, u64, Option<String>, Instant);

impl Worker {
    /// Computes the batch `tasks` that the master `from` sent (the request it answers queued
    /// for `queued_for` seconds, sent `since_start` seconds into the run), taken in at `now`,
    /// and reports the results.
    fn compute<J, Tr>(
        &mut self,
        tr: &Tr,
        cpu: &mut Cpu<'_, J>,
        from: usize,
        tasks: &Batch<J::Task>,
        (queued_for, since_start): (f64, f64),
        now: Instant,
    ) -> Result<(), RuntimeError>
    where
        J: Job,
        Tr: Transport<Msg<J::Task, J::Output>>,
    {
        if cpu.hung() {
            return Ok(()); // an injected hang: say nothing ever again
        }
        // Woken after a stop: the time stopped was not spent on this run.
        let blocked = if std::mem::take(&mut self.stopped) {
            0.0
        } else {
            cpu.blocked_since(self.last_sent, since_start, now)
        };
        let (wait, comm) = self.blocked(blocked, queued_for);
        let (results, ok, panic, clock) = self.run_tasks(cpu, tasks, now);
        let comp = clock.saturating_duration_since(now).as_secs_f64();
        self.totals.t_comp += comp;
        if cpu.hung() && panic.is_none() {
            tr.pause(None);
            return Ok(()); // the results are never sent
        }
        let obs = Observation {
            tasks: ok,
            t_comp: comp,
            t_comm: comm,
            t_wait: wait,
        };
        let msg = Msg::Results {
            results,
            obs,
            panic,
        };
        report_to::<J, Tr>(tr, from, msg, clock)?;
        // The send itself is counted in the next `blocked`, as communication.
        self.last_sent = Some(clock);
        Ok(())
    }

    /// Splits `blocked` seconds on the master into waiting for it to attend (at most the
    /// `queued_for` seconds the master reported) and communicating; both are added to the
    /// totals and returned.
    fn blocked(&mut self, blocked: f64, queued_for: f64) -> (f64, f64) {
        let wait = queued_for.clamp(0.0, blocked.max(0.0));
        let comm = (blocked - wait).max(0.0);
        self.totals.t_wait += wait;
        self.totals.t_comm += comm;
        (wait, comm)
    }

    /// Runs `tasks` in order from `now` until one panics or an injected hang strikes.
    fn run_tasks<J: Job>(
        &mut self,
        cpu: &mut Cpu<'_, J>,
        tasks: &Batch<J::Task>,
        now: Instant,
    ) -> Computed<J::Output> {
        let mut results = Batch::with_capacity(tasks.len());
        let mut panic = None;
        let mut ok = 0;
        // One reading of the clock per task, when it ends: the next task starts there.
        let mut clock = now;
        for (id, task) in tasks.as_slice() {
            if self.dead {
                break;
            }
            let out = cpu.execute(task, clock);
            clock = Instant::now();
            self.totals.tasks_run += 1;
            match out {
                Ok(Ok(o)) => {
                    ok += 1;
                    results.push((*id, Ok(o)));
                }
                Ok(Err(e)) => results.push((*id, Err(e.to_string()))),
                Err(message) => {
                    panic = Some(message);
                    self.dead = true;
                }
            }
            if cpu.hung() {
                break;
            }
        }
        (results, ok, panic, clock)
    }

    /// Stopped by the master `from` (the request it answers queued for `queued_for` seconds,
    /// sent `since_start` seconds into the run), taken in at `now`: reports the totals.
    /// Stopped, not ended: the master may still wake this processor for a task that failed
    /// elsewhere.
    fn stop<J, Tr>(
        &mut self,
        tr: &Tr,
        cpu: &mut Cpu<'_, J>,
        from: usize,
        (queued_for, since_start): (f64, f64),
        now: Instant,
    ) -> Result<(), RuntimeError>
    where
        J: Job,
        Tr: Transport<Msg<J::Task, J::Output>>,
    {
        if cpu.hung() {
            return Ok(());
        }
        let blocked = cpu.blocked_since(self.last_sent, since_start, now);
        self.blocked(blocked, queued_for);
        self.totals.t_exec = cpu.elapsed_at(now).as_secs_f64();
        report_to::<J, Tr>(
            tr,
            from,
            Msg::Bye {
                totals: self.totals,
            },
            now,
        )?;
        self.stopped = true;
        Ok(())
    }
}
