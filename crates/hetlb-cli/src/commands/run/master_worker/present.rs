//! What a master-worker run prints: the per-processor table of the paper's Tables 2–6, the
//! comparison of policies, the paper's table beside ours, JSON, CSV and bar charts.

use super::{Args, Setup};
use crate::output::{Format, fixed, print_csv, print_json, table};
use anyhow::{Context, Result};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::master_worker::{self, Checked, Grain, PolicyReport, ProcessorRow, Workload};
use hetlb_runtime::paper::table_for;
use hetlb_runtime::{Outcome, RunReport};
use std::path::PathBuf;

pub(super) fn present<J: Checked>(
    args: &Args,
    setup: &Setup,
    workers: usize,
    grain: &Grain,
    outcomes: &[Outcome<J::Output>],
    job: &J,
) -> Result<()> {
    let settings = &setup.settings;
    let docs = master_worker::assess(
        job,
        (args.size, grain),
        outcomes,
        settings,
        workers,
        !args.no_check,
    )?;
    let runs: Vec<&RunReport> = outcomes.iter().map(|o| &o.report).collect();
    if let Some(c) = settings.change {
        for rep in &runs {
            let q = c.processor;
            if rep
                .processors
                .get(q)
                .is_some_and(|p| settings.changed(p).is_none())
            {
                eprintln!(
                    "note: {}: --slowdown-change at {} s came after processor {q} stopped \
                     ({:.3} s into a run of {:.3} s): its factor never changed",
                    rep.policy, c.at, rep.processors[q].t_exec, rep.makespan
                );
            }
        }
    }
    if let Some(path) = &args.plot {
        let mut written = Vec::new();
        for rep in &runs {
            let target = if runs.len() > 1 {
                suffixed(path, rep.policy.name())
            } else {
                path.clone()
            };
            let slowdowns: Vec<String> = (0..workers)
                .map(|p| settings.slowdown_of(p).to_string())
                .collect();
            plot(
                &target,
                rep,
                &format!(
                    "{}, {workers} processors, slowdowns {}",
                    job.describe(),
                    slowdowns.join(",")
                ),
            )?;
            written.push(target);
        }
        crate::plot::notice(&written);
    }
    match args.format {
        Format::Json => {
            if docs.len() == 1 {
                print_json(&docs[0])
            } else {
                print_json(&serde_json::json!({ "runs": docs }))
            }
        }
        Format::Csv => print_csv(
            &[
                "policy",
                "processor",
                "role",
                "slowdown",
                "rows",
                "tasks",
                "batches",
                "t_exec",
                "t_comp",
                "t_comm",
                "t_wait",
                "makespan",
                "efficiency",
            ],
            docs.iter().flat_map(|d| {
                d.processors.iter().map(move |p| {
                    vec![
                        d.policy.name().to_string(),
                        p.processor.to_string(),
                        p.role.to_string(),
                        slowdown_label(p),
                        p.rows.to_string(),
                        p.tasks.to_string(),
                        p.batches.to_string(),
                        format!("{:.6}", p.t_exec),
                        format!("{:.6}", p.t_comp),
                        format!("{:.6}", p.t_comm),
                        format!("{:.6}", p.t_wait),
                        format!("{:.6}", d.makespan),
                        format!("{:.6}", d.efficiency),
                    ]
                })
            }),
        ),
        Format::Table => {
            for d in &docs {
                print_run(d, runs.len() == 1);
            }
            if docs.len() > 1 {
                print_comparison(&docs);
            }
            if let (Workload::Matmul, Some(paper)) = (setup.workload, table_for(args.size as usize))
            {
                if workers == 9 {
                    if let Some(efp) = docs.iter().find(|d| d.policy == Policy::Efp) {
                        print_paper(efp, paper);
                    }
                }
            }
            Ok(())
        }
    }
}

/// `3`, or `3→6` once a `--slowdown-change` took effect.
fn slowdown_label(p: &ProcessorRow) -> String {
    match p.slowdown_after {
        Some(after) => format!("{}→{after}", p.slowdown),
        None => p.slowdown.to_string(),
    }
}

fn suffixed(path: &std::path::Path, name: &str) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("run");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("svg");
    path.with_file_name(format!("{stem}-{name}.{ext}"))
}

fn plot(path: &std::path::Path, rep: &RunReport, what: &str) -> Result<()> {
    crate::plot::processor_bars(
        path,
        &format!("{} — {what}", rep.policy.name().to_uppercase()),
        &rep.unit,
        &rep.processors,
    )
    .context("--plot")
}

fn print_run(d: &PolicyReport, alone: bool) {
    crate::out!(
        "{} on {}: {}, {} processors, G = {} tasks ({}); capacities {}; master = processor {}",
        d.policy.name().to_uppercase(),
        d.backend,
        d.workload,
        d.workers,
        d.granularity.tasks,
        d.granularity.source,
        if d.calibrated { "calibrated" } else { "given" },
        d.master
    );
    let mut t = table([
        "proc", "role", "slowdown", "rows", "tasks", "batches", "T_exec", "T_comp", "T_comm",
        "T_wait",
    ]);
    for p in &d.processors {
        t.add_row(vec![
            p.processor.to_string(),
            p.role.to_string(),
            slowdown_label(p),
            p.rows.to_string(),
            p.tasks.to_string(),
            p.batches.to_string(),
            fixed(p.t_exec, 3),
            fixed(p.t_comp, 3),
            fixed(p.t_comm, 3),
            fixed(p.t_wait, 3),
        ]);
    }
    crate::out!("{t}");
    let mut line = format!(
        "makespan {:.3} s · ideal {:.3} s · efficiency {:.3} · finish spread {:.1}%",
        d.makespan,
        d.ideal,
        d.efficiency,
        100.0 * d.finish_spread
    );
    if let (Some(one), Some(s)) = (d.one_worker, d.speedup) {
        line += &format!(" · one worker {one:.3} s → speedup {s:.2}");
    }
    crate::out!("{line}");
    match d.max_error {
        Some(e) if d.workload.starts_with("matmul") => crate::out!(
            "result checked against a single-threaded triple loop: max |C − C_ref| = {e:.2e}"
        ),
        Some(e) => crate::out!("result checked task by task: {e} wrong"),
        None => {}
    }
    if !d.failures.is_empty() {
        crate::out!(
            "survived {} failure(s), {} task(s) put back, {} duplicate result(s) dropped:",
            d.failures.len(),
            d.requeued,
            d.duplicates_dropped
        );
        for f in &d.failures {
            crate::out!("  processor {}: {:?}: {}", f.processor, f.kind, f.message);
        }
    }
    if !alone {
        crate::out!();
    }
}

fn print_comparison(docs: &[PolicyReport]) {
    let mut t = table([
        "policy",
        "makespan",
        "ideal",
        "efficiency",
        "finish spread",
        "speedup vs one worker",
        "speedup vs static",
    ]);
    for d in docs {
        t.add_row(vec![
            d.policy.name().to_string(),
            fixed(d.makespan, 3),
            fixed(d.ideal, 3),
            fixed(d.efficiency, 3),
            format!("{:.1}%", 100.0 * d.finish_spread),
            d.speedup.map_or("–".into(), |s| fixed(s, 2)),
            d.speedup_vs_static.map_or("–".into(), |s| fixed(s, 2)),
        ]);
    }
    crate::out!("{t}");
    if let Some(d) = docs.first() {
        crate::out!("ideal (one for the workload): {}", d.ideal_basis);
    }
}

fn print_paper(d: &PolicyReport, paper: &hetlb_runtime::paper::PaperTable) {
    crate::out!(
        "\nBeside the paper, Table {} ({}×{}; master PIII 1000 MHz, eight PII 333 MHz, Fast \
         Ethernet, C + MPI):",
        paper.table,
        paper.size,
        paper.size
    );
    let mut t = table([
        "role",
        "rows",
        "T_exec",
        "T_comp",
        "T_comm",
        "T_wait",
        "paper proc",
        "paper rows",
        "paper T_exec",
        "paper T_comp",
        "paper T_comm",
        "paper T_wait",
    ]);
    // The paper lists its master last (processor 8); ours is P0.
    let mut ours: Vec<&ProcessorRow> = d.processors.iter().collect();
    ours.sort_by_key(|p| {
        p.role
            .trim_start_matches('P')
            .parse::<usize>()
            .unwrap_or(usize::MAX)
    });
    let theirs: Vec<_> = std::iter::once(&paper.rows[8])
        .chain(paper.rows[..8].iter())
        .collect();
    for (o, p) in ours.iter().zip(theirs) {
        t.add_row(vec![
            o.role.to_string(),
            o.rows.to_string(),
            fixed(o.t_exec, 3),
            fixed(o.t_comp, 3),
            fixed(o.t_comm, 3),
            fixed(o.t_wait, 3),
            p.processor.to_string(),
            p.rows.to_string(),
            fixed(p.t_exec, 3),
            fixed(p.t_comp, 3),
            fixed(p.t_comm, 3),
            fixed(p.t_wait, 3),
        ]);
    }
    crate::out!("{t}");
    let master = d.processors.iter().find(|p| p.processor == d.master);
    let others: Vec<u64> = d
        .processors
        .iter()
        .filter(|p| p.processor != d.master)
        .map(|p| p.rows)
        .collect();
    if let Some(m) = master {
        let mean = others.iter().sum::<u64>() as f64 / others.len().max(1) as f64;
        crate::out!(
            "master rows ÷ mean worker rows: ours {:.2}, paper {:.2} · finish spread: ours \
             {:.1}%, paper {:.1}%",
            m.rows as f64 / mean.max(f64::MIN_POSITIVE),
            paper.master_ratio(),
            100.0 * d.finish_spread,
            100.0 * paper.finish_spread()
        );
    }
    crate::out!(
        "Absolute times are not comparable (2004 hardware and network, naive C kernel; here \
         threads share this machine's cores and the slow processors repeat the kernel)."
    );
}
