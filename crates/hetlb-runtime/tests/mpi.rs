//! The runtime on MPI. Run by `cargo test --features mpi --test mpi`: this program starts
//! itself under `mpiexec` (4 ranks for the checks, 3 for the silent-rank cases) and checks the
//! exit status; each rank then runs the same checks as an SPMD program, rank 0 asserting.

mod common;

use common::mpiexec;

use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{FailureKind, FnJob, ProcessorFaults, RunConfig, Slowdown, TaskError, run_mpi};
use hetlb_transport::mpi::Mpi;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const CHILD: &str = "HETLB_MPI_TEST_CHILD";

fn main() -> ExitCode {
    match std::env::var(CHILD).ok().as_deref() {
        Some("checks") => child_checks(),
        Some("silent") => child_silent(),
        Some("silent-master") => child_silent_master(),
        Some("long-tasks") => child_long_tasks(),
        _ => launcher(),
    }
}

fn launcher() -> ExitCode {
    let mut failed = 0;
    let mut passed = 0;
    match mpiexec(4, CHILD, "checks", Duration::from_secs(300)) {
        Ok((true, _)) => passed += 1,
        Ok((false, err)) => {
            eprintln!("mpi checks failed:\n{err}");
            failed += 1;
        }
        Err(e) => {
            eprintln!("{e}");
            failed += 1;
        }
    }
    let mut expect = |mode: &str, ranks: usize, want_ok: bool, needle: &str, what: &str| {
        let start = Instant::now();
        match mpiexec(ranks, CHILD, mode, Duration::from_secs(120)) {
            Ok((ok, err)) if ok == want_ok && err.contains(needle) => {
                println!("{what} after {:.1} s", start.elapsed().as_secs_f64());
                passed += 1;
            }
            Ok((ok, err)) => {
                eprintln!("{mode}: expected success = {want_ok} and '{needle}', got {ok}:\n{err}");
                failed += 1;
            }
            Err(e) => {
                eprintln!("{mode}: {e}");
                failed += 1;
            }
        }
    };
    expect(
        "silent",
        3,
        true,
        "silent worker survived",
        "a silent worker was reported and its tasks done elsewhere",
    );
    expect(
        "silent-master",
        3,
        false,
        "stopped answering",
        "a silent master made every rank give up clearly",
    );
    expect(
        "long-tasks",
        3,
        true,
        "long tasks done",
        "tasks longer than the timeout were not taken for silence",
    );
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn digits(x: &u64) -> Result<u32, TaskError> {
    Ok(x.to_string().len() as u32)
}

fn child_checks() -> ExitCode {
    let mpi = match Mpi::init() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let p = mpi.size();
    let root = mpi.rank() == 0;
    let mut problems = Vec::new();

    // The matrix product is right under every policy.
    let job = MatmulJob::new(120, 30, 9);
    for policy in Policy::ALL {
        let mut cfg = RunConfig::new(policy);
        cfg.slowdowns = (0..p)
            .map(|i| Slowdown::constant(if i == 0 { 1 } else { 2 }))
            .collect();
        cfg.calibration = Duration::from_millis(10);
        match run_mpi(&mpi, &job, &cfg) {
            Ok(Some(out)) => {
                let err = job
                    .assemble(&out.outputs)
                    .map(|c| c.max_abs_diff(&job.reference()))
                    .unwrap_or(f64::INFINITY);
                let rows: u64 = out.report.processors.iter().map(|p| p.rows).sum();
                if err > 1e-9 || rows != 120 || out.report.backend != "mpi" {
                    problems.push(format!("{policy}: error {err}, rows {rows}"));
                } else {
                    println!(
                        "{policy}: matmul 120×120 on {p} ranks right (max error {err:.1e}), \
                         makespan {:.4} s, master rank {}",
                        out.report.makespan, out.report.master
                    );
                }
            }
            Ok(None) => {}
            Err(e) => problems.push(format!("{policy}: {e}")),
        }
    }

    // A registered function on serialisable inputs.
    let job = FnJob::new((0..500u64).collect(), digits);
    match run_mpi(&mpi, &job, &RunConfig::new(Policy::Efp)) {
        Ok(Some(out)) => {
            if out.outputs[99] != 2 || out.outputs[499] != 3 || out.outputs.len() != 500 {
                problems.push("FnJob outputs wrong".into());
            }
        }
        Ok(None) => {}
        Err(e) => problems.push(format!("FnJob: {e}")),
    }

    // Failures: rank 1 panics at its second task, rank 2 fails every third; every result
    // still arrives exactly once.
    let (tasks, cost) = (240, 60_000);
    let job = Synthetic::new(tasks, cost);
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.capacities = Some((0..p).map(|i| if i == 0 { 2.0 } else { 1.0 }).collect());
    cfg.faults = (0..p)
        .map(|i| match i {
            1 => ProcessorFaults {
                panic_on_task: Some(2),
                ..ProcessorFaults::default()
            },
            2 => ProcessorFaults {
                error_every: Some(3),
                ..ProcessorFaults::default()
            },
            _ => ProcessorFaults::default(),
        })
        .collect();
    match run_mpi(&mpi, &job, &cfg) {
        Ok(Some(out)) => {
            let right = out.outputs.len() as u64 == tasks
                && out
                    .outputs
                    .iter()
                    .enumerate()
                    .all(|(i, o)| *o == Synthetic::expected(i as u64, cost));
            let done: u64 = out.report.processors.iter().map(|p| p.tasks).sum();
            let panicked = out
                .report
                .failures
                .iter()
                .any(|f| f.processor == 1 && f.kind == FailureKind::Panic);
            if !right || done != tasks || !panicked {
                problems.push(format!(
                    "faults: right {right}, done {done}, panicked {panicked}"
                ));
            } else {
                println!(
                    "faults: {} failures survived, {} tasks put back, every result once",
                    out.report.failures.len(),
                    out.report.requeued
                );
            }
        }
        Ok(None) => {}
        Err(e) => problems.push(format!("faults: {e}")),
    }

    if root && !problems.is_empty() {
        for p in &problems {
            eprintln!("problem: {p}");
        }
        mpi.abort(2);
    }
    if !problems.is_empty() {
        mpi.abort(2);
    }
    ExitCode::SUCCESS
}

fn init() -> Result<Mpi<'static>, ExitCode> {
    Mpi::init().map_err(|e| {
        eprintln!("{e}");
        ExitCode::FAILURE
    })
}

/// Rank 2 stops answering after one task: the master reports it and the run completes.
fn child_silent() -> ExitCode {
    let mpi = match init() {
        Ok(m) => m,
        Err(code) => return code,
    };
    let p = mpi.size();
    let (tasks, cost) = (300, 100_000);
    let job = Synthetic::new(tasks, cost);
    let mut cfg = RunConfig::new(Policy::SelfScheduling);
    cfg.capacities = Some(vec![1.0; p]);
    cfg.timeout = Duration::from_secs(1);
    cfg.faults = (0..p)
        .map(|i| ProcessorFaults {
            hang_after: (i == 2).then_some(1),
            ..ProcessorFaults::default()
        })
        .collect();
    match run_mpi(&mpi, &job, &cfg) {
        Ok(Some(out)) => {
            let right = out
                .outputs
                .iter()
                .enumerate()
                .all(|(i, o)| *o == Synthetic::expected(i as u64, cost));
            let silent = out
                .report
                .failures
                .iter()
                .any(|f| f.processor == 2 && f.kind == FailureKind::Silent);
            if right && silent && out.outputs.len() as u64 == tasks {
                eprintln!("silent worker survived");
                ExitCode::SUCCESS
            } else {
                eprintln!("wrong outcome: {:?}", out.report.failures);
                mpi.abort(2);
            }
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            mpi.abort(3);
        }
    }
}

/// The master (rank 1) stops answering: every other rank gives up within the timeout.
fn child_silent_master() -> ExitCode {
    let mpi = match init() {
        Ok(m) => m,
        Err(code) => return code,
    };
    let p = mpi.size();
    let job = Synthetic::new(400, 100_000);
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.capacities = Some((0..p).map(|i| if i == 1 { 2.0 } else { 1.0 }).collect());
    cfg.timeout = Duration::from_secs(1);
    cfg.faults = (0..p)
        .map(|i| ProcessorFaults {
            hang_after: (i == 1).then_some(3),
            ..ProcessorFaults::default()
        })
        .collect();
    match run_mpi(&mpi, &job, &cfg) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: rank {}: {e}", mpi.rank());
            mpi.abort(3);
        }
    }
}

/// Every task sleeps three times the timeout: heartbeats keep the workers alive.
fn child_long_tasks() -> ExitCode {
    let mpi = match init() {
        Ok(m) => m,
        Err(code) => return code,
    };
    let p = mpi.size();
    let job = FnJob::new((0..(2 * p as u64)).collect(), |x: &u64| {
        std::thread::sleep(Duration::from_millis(900));
        Ok(*x + 1)
    });
    let mut cfg = RunConfig::new(Policy::StaticEqual);
    cfg.capacities = Some(vec![1.0; p]);
    cfg.timeout = Duration::from_millis(300);
    match run_mpi(&mpi, &job, &cfg) {
        Ok(Some(out)) => {
            if out.report.failures.is_empty()
                && out
                    .outputs
                    .iter()
                    .enumerate()
                    .all(|(i, o)| *o == i as u64 + 1)
            {
                eprintln!("long tasks done");
                ExitCode::SUCCESS
            } else {
                eprintln!("wrong outcome: {:?}", out.report.failures);
                mpi.abort(2);
            }
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            mpi.abort(3);
        }
    }
}
