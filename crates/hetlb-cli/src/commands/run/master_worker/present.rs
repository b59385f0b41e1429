//! What a master-worker run prints: the per-processor table of the paper's Tables 2–6, the
//! comparison of policies, the paper's table beside ours, JSON, CSV and bar charts.

use super::{Args, Setup};
use crate::output::{Format, print_json, print_report};
use anyhow::{Context, Result};
use hetlb_experiments::paper::efp::table_for;
use hetlb_experiments::tables::master_worker as tables;
use hetlb_runtime::master_worker::{self, Checked, Grain, Workload};
use hetlb_runtime::{RunOutcome, RunReport};
use std::path::PathBuf;

pub(super) fn present<J: Checked>(
    args: &Args,
    setup: &Setup,
    workers: usize,
    grain: &Grain,
    outcomes: &[RunOutcome<J::Output>],
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
        if runs.len() > 1 {
            // The path asked for holds every run side by side; the files above, one each.
            let by_run: Vec<(String, &[_])> = runs
                .iter()
                .map(|r| (r.policy.name().to_uppercase(), &r.processors[..]))
                .collect();
            crate::plot::processor_times_by_run(
                path,
                &format!("{}, {workers} processors", job.describe()),
                &by_run,
            )
            .context("--plot")?;
            written.insert(0, path.clone());
        }
        crate::plot::notice(&written);
    }
    // The paper's table for this order, on its nine processors.
    let paper = table_for(args.size as usize)
        .filter(|_| setup.workload == Workload::Matmul && workers == 9);
    match (args.format, docs.as_slice()) {
        (Format::Json, [one]) => print_json(one),
        (Format::Json, _) => print_json(&serde_json::json!({ "runs": docs })),
        (format, _) => print_report(
            format,
            &docs,
            || tables::csv(&docs),
            || tables::text(&docs, paper),
        ),
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
