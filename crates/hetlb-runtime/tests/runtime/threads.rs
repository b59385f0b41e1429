//! The runtime on threads: correct results under every policy, exactly-once results under
//! injected failures, a clear error for a silent processor, and EFP's decisions following
//! what it measured.
//!
//! Nothing here depends on how fast the machine is or how busy: the assertions are about
//! conservation, exactly-once results, who is named, and the decisions given the speeds the
//! master recorded. How close a run comes to its ideal is a benchmark figure
//! (`cargo bench -p hetlb-runtime --features criterion --bench policies`), never a test verdict.

use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{
    ClosureJob, FailureKind, FnJob, Job, ProcessorFaults, RunConfig, RunConfigError, RuntimeError,
    Slowdown, TaskError, run_threads,
};
use std::sync::Arc;
use std::time::Duration;

fn slowdowns(factors: &[u32]) -> Vec<Slowdown> {
    factors.iter().map(|&f| Slowdown::constant(f)).collect()
}

#[test]
fn matmul_is_right_under_every_policy() {
    let job = Arc::new(MatmulJob::new(96, 24, 5));
    let reference = job.reference();
    for policy in Policy::ALL {
        let mut cfg = RunConfig::new(policy);
        cfg.slowdowns = slowdowns(&[1, 2, 2, 2]);
        cfg.calibration = Duration::from_millis(5);
        let out = run_threads(Arc::clone(&job), 4, &cfg).unwrap();
        let c = job.assemble(&out.outputs).unwrap();
        assert!(c.max_abs_diff(&reference) < 1e-9, "{policy}");
        let r = &out.report;
        assert_eq!(
            r.processors.iter().map(|p| p.rows).sum::<u64>(),
            96,
            "{policy}"
        );
        assert_eq!(
            r.processors.iter().map(|p| p.tasks).sum::<u64>(),
            24,
            "{policy}"
        );
        assert!(r.failures.is_empty(), "{policy}: {:?}", r.failures);
        assert!(r.makespan > 0.0 && r.efficiency > 0.0 && r.efficiency <= 1.0 + 1e-9);
        for p in &r.processors {
            let parts = p.t_comp + p.t_comm + p.t_wait;
            assert!(parts <= p.t_exec * 1.05 + 0.01, "{policy}: {p:?}");
        }
    }
}

#[test]
fn one_processor_and_more_processors_than_tasks_work() {
    let job = Arc::new(MatmulJob::new(5, 5, 1));
    for p in [1, 9] {
        let out = run_threads(Arc::clone(&job), p, &RunConfig::new(Policy::Efp)).unwrap();
        let c = job.assemble(&out.outputs).unwrap();
        assert!(c.max_abs_diff(&job.reference()) < 1e-12);
    }
    let empty = Arc::new(ClosureJob::new(Vec::<u64>::new(), |x: &u64| {
        Ok::<_, String>(*x)
    }));
    let out = run_threads(empty, 3, &RunConfig::new(Policy::Efp)).unwrap();
    assert!(out.outputs.is_empty());
}

#[test]
fn user_closures_and_registered_functions_run() {
    let words: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
    let job = Arc::new(ClosureJob::new(words, |w: &String| {
        Ok::<_, String>(w.len())
    }));
    let out = run_threads(job, 3, &RunConfig::new(Policy::SelfScheduling)).unwrap();
    assert_eq!(out.outputs[5], 2);
    assert_eq!(out.outputs[150], 4);

    fn digits(x: &u64) -> Result<u32, TaskError> {
        Ok(x.to_string().len() as u32)
    }
    let job = Arc::new(FnJob::new((0..300u64).collect(), digits));
    let out = run_threads(job, 4, &RunConfig::new(Policy::Efp)).unwrap();
    assert_eq!(out.outputs[99], 2);
    assert_eq!(out.outputs[299], 3);
}

/// Every task's output appears exactly once and is the right one.
fn assert_exactly_once(outputs: &[u64], tasks: u64, cost: u64) {
    assert_eq!(outputs.len() as u64, tasks);
    for (id, o) in outputs.iter().enumerate() {
        assert_eq!(*o, Synthetic::expected(id as u64, cost), "task {id}");
    }
}

#[test]
fn failures_lose_and_duplicate_nothing() {
    // Tasks long enough that every worker starts several.
    let (tasks, cost) = (300, 60_000);
    let job = Arc::new(Synthetic::new(tasks, cost));
    for policy in Policy::ALL {
        let mut cfg = RunConfig::new(policy);
        // Processor 0 is the master (given capacities fix the roles).
        cfg.capacities = Some(vec![2.0, 1.0, 1.0, 1.0]);
        cfg.faults = vec![
            ProcessorFaults::default(),
            ProcessorFaults {
                panic_on_task: Some(2),
                ..ProcessorFaults::default()
            },
            ProcessorFaults {
                error_every: Some(3),
                ..ProcessorFaults::default()
            },
            ProcessorFaults::default(),
        ];
        let out = run_threads(Arc::clone(&job), 4, &cfg).unwrap();
        assert_exactly_once(&out.outputs, tasks, cost);
        let r = &out.report;
        assert_eq!(
            r.processors.iter().map(|p| p.tasks).sum::<u64>(),
            tasks,
            "{policy}"
        );
        assert!(
            r.failures
                .iter()
                .any(|f| f.processor == 1 && f.kind == FailureKind::Panic),
            "{policy}: {:?}",
            r.failures
        );
        assert!(
            r.processors[1]
                .failed
                .as_deref()
                .unwrap_or("")
                .contains("injected panic")
        );
        assert!(
            r.processors[1].tasks <= 1,
            "{policy}: a dead processor kept working"
        );
        assert!(r.requeued >= 1, "{policy}");
        if r.processors[2].tasks >= 3 {
            assert!(
                r.failures
                    .iter()
                    .any(|f| f.processor == 2 && f.kind == FailureKind::TaskError),
                "{policy}: {:?}",
                r.failures
            );
        }
    }
}

#[test]
fn the_run_survives_a_master_that_panics() {
    let (tasks, cost) = (120, 2_000);
    let job = Arc::new(Synthetic::new(tasks, cost));
    for policy in [Policy::Efp, Policy::StaticEqual] {
        let mut cfg = RunConfig::new(policy);
        cfg.capacities = Some(vec![2.0, 1.0, 1.0]);
        cfg.faults = vec![
            ProcessorFaults {
                panic_on_task: Some(2),
                ..ProcessorFaults::default()
            },
            ProcessorFaults::default(),
            ProcessorFaults::default(),
        ];
        let out = run_threads(Arc::clone(&job), 3, &cfg).unwrap();
        assert_exactly_once(&out.outputs, tasks, cost);
        assert_eq!(out.report.processors[0].tasks, 1, "{policy}");
        assert!(out.report.processors[0].failed.is_some());
    }
}

#[test]
fn a_task_that_always_fails_fails_the_run_after_its_attempts() {
    let job = Arc::new(ClosureJob::new((0..20u64).collect(), |x: &u64| {
        if *x == 13 {
            Err(format!("{x} is unlucky"))
        } else {
            Ok(*x)
        }
    }));
    // Master on processor 0: the error comes back as it is.
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.capacities = Some(vec![2.0, 1.0, 1.0]);
    let err = run_threads(Arc::clone(&job), 3, &cfg).unwrap_err();
    assert_eq!(
        err,
        RuntimeError::TaskFailed {
            task: 13,
            attempts: 3,
            error: "13 is unlucky".into()
        }
    );
    // Master elsewhere: processor 0 reports the master's error.
    cfg.capacities = Some(vec![1.0, 2.0, 1.0]);
    match run_threads(job, 3, &cfg).unwrap_err() {
        RuntimeError::Remote { processor, message } => {
            assert_eq!(processor, 1);
            assert_eq!(message, "task 13 failed 3 times; last error: 13 is unlucky");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_silent_worker_is_reported_and_its_tasks_done_elsewhere() {
    // Tasks long enough that the worker starts one before the master has done them all.
    let (tasks, cost) = (400, 100_000);
    let job = Arc::new(Synthetic::new(tasks, cost));
    let mut cfg = RunConfig::new(Policy::SelfScheduling);
    cfg.capacities = Some(vec![1.0; 3]);
    cfg.timeout = Duration::from_secs(1);
    cfg.faults = vec![
        ProcessorFaults::default(),
        ProcessorFaults::default(),
        ProcessorFaults {
            hang_after: Some(1),
            ..ProcessorFaults::default()
        },
    ];
    let out = run_threads(job, 3, &cfg).unwrap();
    assert_exactly_once(&out.outputs, tasks, cost);
    let silent: Vec<_> = out
        .report
        .failures
        .iter()
        .filter(|f| f.kind == FailureKind::Silent)
        .collect();
    assert_eq!(silent.len(), 1, "{:?}", out.report.failures);
    assert_eq!(silent[0].processor, 2);
    assert!(silent[0].message.contains("stopped answering"));
}

/// A silent processor 0 that is only a worker is named as silent, and processor 0 still
/// returns the master's outcome.
#[test]
fn a_silent_processor_zero_is_named_and_the_outcome_kept() {
    let (tasks, cost) = (300, 100_000);
    let job = Arc::new(Synthetic::new(tasks, cost));
    let mut cfg = RunConfig::new(Policy::SelfScheduling);
    cfg.capacities = Some(vec![1.0, 2.0, 1.0]); // processor 1 is the master
    cfg.timeout = Duration::from_secs(1);
    cfg.faults = vec![
        ProcessorFaults {
            hang_after: Some(1),
            ..ProcessorFaults::default()
        },
        ProcessorFaults::default(),
        ProcessorFaults::default(),
    ];
    let out = run_threads(job, 3, &cfg).unwrap();
    assert_exactly_once(&out.outputs, tasks, cost);
    assert_eq!(out.report.master, 1);
    assert!(
        out.report
            .failures
            .iter()
            .any(|f| f.processor == 0 && f.kind == FailureKind::Silent),
        "{:?}",
        out.report.failures
    );
}

/// A master that falls silent makes every other processor give up, naming it.
#[test]
fn a_silent_master_is_named() {
    let job = Arc::new(Synthetic::new(400, 100_000));
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.capacities = Some(vec![1.0, 2.0, 1.0]); // processor 1 is the master
    cfg.timeout = Duration::from_secs(1);
    cfg.faults = vec![
        ProcessorFaults::default(),
        ProcessorFaults {
            hang_after: Some(3),
            ..ProcessorFaults::default()
        },
        ProcessorFaults::default(),
    ];
    let err = run_threads(job, 3, &cfg).unwrap_err();
    match &err {
        RuntimeError::MasterSilent { processor, .. } => assert_eq!(*processor, 1),
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("stopped answering"), "{err}");
}

/// Heartbeats: a task that takes longer than the timeout is not silence. (Heartbeats go out
/// every quarter of the timeout, so a busy machine has four chances to deliver one.)
#[test]
fn tasks_longer_than_the_timeout_are_not_silence() {
    let job = Arc::new(ClosureJob::new((0..3u64).collect(), |x: &u64| {
        std::thread::sleep(Duration::from_millis(800));
        Ok::<_, String>(*x * 2)
    }));
    for policy in [Policy::StaticEqual, Policy::Efp] {
        let mut cfg = RunConfig::new(policy);
        cfg.capacities = Some(vec![1.0; 3]);
        cfg.timeout = Duration::from_millis(500);
        let out = run_threads(Arc::clone(&job), 3, &cfg).unwrap();
        assert_eq!(out.outputs, vec![0, 2, 4], "{policy}");
        assert!(
            out.report.failures.is_empty(),
            "{policy}: {:?}",
            out.report.failures
        );
    }
}

/// A worker whose every task fails: the tasks go to the other processors and the run
/// completes, each result once.
#[test]
fn a_worker_whose_every_task_fails_does_not_fail_the_run() {
    let (tasks, cost) = (120, 20_000);
    let job = Arc::new(Synthetic::new(tasks, cost));
    for policy in Policy::ALL {
        let mut cfg = RunConfig::new(policy);
        cfg.capacities = Some(vec![2.0, 1.0, 1.0]);
        cfg.faults = vec![
            ProcessorFaults::default(),
            ProcessorFaults::default(),
            ProcessorFaults {
                error_every: Some(1),
                ..ProcessorFaults::default()
            },
        ];
        let out =
            run_threads(Arc::clone(&job), 3, &cfg).unwrap_or_else(|e| panic!("{policy}: {e}"));
        assert_exactly_once(&out.outputs, tasks, cost);
        assert_eq!(out.report.processors[2].tasks, 0, "{policy}");
    }
}

/// The master panics late in its own share, after the workers were stopped: a stopped
/// worker is woken for the task it left.
#[test]
fn a_master_that_panics_after_the_workers_stopped_recalls_one() {
    let (tasks, cost) = (120, 20_000);
    let job = Arc::new(Synthetic::new(tasks, cost));
    for policy in [Policy::StaticEqual, Policy::StaticProportional] {
        let mut cfg = RunConfig::new(policy);
        cfg.capacities = Some(vec![8.0, 1.0, 1.0]);
        let share = if policy == Policy::StaticEqual {
            40
        } else {
            96
        };
        cfg.faults = vec![
            ProcessorFaults {
                panic_on_task: Some(share),
                ..ProcessorFaults::default()
            },
            ProcessorFaults::default(),
            ProcessorFaults::default(),
        ];
        let out =
            run_threads(Arc::clone(&job), 3, &cfg).unwrap_or_else(|e| panic!("{policy}: {e}"));
        assert_exactly_once(&out.outputs, tasks, cost);
        assert_eq!(out.report.processors[0].tasks, share - 1, "{policy}");
        assert!(out.report.processors[0].failed.is_some());
    }
}

#[test]
fn bad_settings_are_refused_before_anything_runs() {
    let job = Arc::new(Synthetic::new(10, 1));
    let cfg = RunConfig::new(Policy::Efp);
    assert_eq!(
        run_threads(Arc::clone(&job), 0, &cfg).unwrap_err(),
        RuntimeError::Config(RunConfigError::NoWorkers)
    );
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.slowdowns = slowdowns(&[1, 3]);
    assert!(matches!(
        run_threads(Arc::clone(&job), 3, &cfg).unwrap_err(),
        RuntimeError::Config(RunConfigError::Length {
            setting: "slowdown",
            ..
        })
    ));
    cfg.slowdowns = slowdowns(&[1, 0, 1]);
    assert!(matches!(
        run_threads(job, 3, &cfg).unwrap_err(),
        RuntimeError::Config(RunConfigError::ZeroSlowdown { worker: 1 })
    ));
}

/// A job of `tasks` tasks that each wait `micros` microseconds.
fn waiting_job(tasks: u64, micros: u64) -> Arc<impl Job<Task = u64, Output = u64> + 'static> {
    Arc::new(ClosureJob::new((0..tasks).collect(), move |&x: &u64| {
        std::thread::sleep(Duration::from_micros(micros));
        Ok::<_, String>(x)
    }))
}

/// What holds of every EFP run whatever the machine: each task once, the staggered first
/// round (`P_i` gets `i` tasks, Aldasht et al. §3), and every later batch between one task and the
/// worker's fair share of the queue given the speed factor the master had measured for it:
/// `⌈queue · S / ΣS⌉ ≤ ⌈queue · S / (1 + S)⌉`, since `ΣS` counts the master (1) and the worker.
fn check_efp_decisions(report: &hetlb_runtime::RunReport, tasks: u64) {
    assert_eq!(
        report.processors.iter().map(|p| p.tasks).sum::<u64>(),
        tasks
    );
    let workers = report.processors.len() - 1;
    let first: Vec<(usize, u64)> = report
        .timeline
        .iter()
        .take(workers)
        .map(|d| (d.processor, d.tasks))
        .collect();
    // Every processor is declared equal: P_i is processor i (the master is processor 0).
    let mut expected: Vec<(usize, u64)> = (1..=workers).map(|w| (w, w as u64)).collect();
    let mut got = first.clone();
    got.sort_unstable();
    expected.sort_unstable();
    assert_eq!(got, expected, "the staggered first round");
    for d in report.timeline.iter().skip(workers).filter(|d| d.tasks > 0) {
        let queue = d.queue + d.tasks;
        let s = d.speed_factor;
        assert!(s.is_finite() && s > 0.0, "{d:?}");
        let share = (queue as f64 * s / (1.0 + s)).ceil() as u64;
        assert!(
            d.tasks <= share.max(1),
            "{d:?}: more than the fair share {share}"
        );
    }
}

/// EFP on processors the balancer is told are equal, one three times slower: its decisions
/// are the rule's given the speeds it measured. (That a worker measured three times faster
/// gets about three times the tasks is the rule's own property, tested on given
/// measurements in `hetlb-core`: `rules::self_scheduling`.)
#[test]
fn efp_decisions_follow_the_speeds_it_measured() {
    let job = waiting_job(600, 300);
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.capacities = Some(vec![1.0; 3]);
    cfg.slowdowns = slowdowns(&[1, 1, 3]);
    let out = run_threads(Arc::clone(&job), 3, &cfg).unwrap();
    assert_eq!(out.outputs, (0..600).collect::<Vec<u64>>());
    check_efp_decisions(&out.report, 600);
}

/// A processor that slows down during the run: every task still once, and every decision
/// still within the bounds of what was measured. (The rule's response to a slowdown is tested
/// on given measurements in `hetlb-core`.)
#[test]
fn a_processor_that_slows_down_during_the_run_changes_no_result() {
    let job = waiting_job(600, 300);
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.capacities = Some(vec![1.0; 3]);
    cfg.slowdowns = vec![
        Slowdown::constant(1),
        Slowdown::constant(1),
        Slowdown::constant(1).then(Duration::from_millis(20), 6),
    ];
    let out = run_threads(Arc::clone(&job), 3, &cfg).unwrap();
    assert_eq!(out.outputs, (0..600).collect::<Vec<u64>>());
    check_efp_decisions(&out.report, 600);
}
