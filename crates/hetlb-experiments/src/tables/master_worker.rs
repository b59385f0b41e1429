//! What `hetlb run matmul|synthetic` prints: each policy's per-processor table (as the
//! paper's Tables 2–6), the comparison of policies, the paper's table beside ours
//! ([`efp::beside_paper`]), and CSV.

use super::efp::{self, seconds};
use crate::efp::{Times, master_ratio};
use crate::paper::efp::PaperTable;
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_core::table::{Table, Text, fixed};
use hetlb_runtime::master_worker::{PolicyReport, ProcessorRow};

/// Every run's table, the comparison when there are several, and, given the paper's table
/// for the run's order (on the paper's nine processors), the EFP run beside it.
pub fn text(docs: &[PolicyReport], paper: Option<&PaperTable>) -> Text {
    let mut text = Text::new();
    for d in docs {
        run(&mut text, d, docs.len() == 1);
    }
    if docs.len() > 1 {
        comparison(&mut text, docs);
    }
    if let Some(paper) = paper
        && let Some(efp) = docs.iter().find(|d| d.policy == Policy::Efp)
    {
        beside_paper(&mut text, efp, paper);
    }
    text
}

/// One line per run and processor: role, slowdown, work and times, with the run's makespan
/// and efficiency.
pub fn csv(docs: &[PolicyReport]) -> Table {
    let mut t = Table::new([
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
    ]);
    for d in docs {
        for p in &d.processors {
            let mut row = vec![d.policy.name().to_string()];
            row.extend(work(p));
            row.extend(
                Times::from(p)
                    .times
                    .into_iter()
                    .chain([d.makespan, d.efficiency])
                    .map(|x| format!("{x:.6}")),
            );
            t.row(row);
        }
    }
    t
}

/// A processor's number, role, slowdown, rows, tasks and batches.
fn work(p: &ProcessorRow) -> [String; 6] {
    [
        p.processor.to_string(),
        p.role.to_string(),
        slowdown_label(p),
        p.rows.to_string(),
        p.tasks.to_string(),
        p.batches.to_string(),
    ]
}

/// `3`, or `3→6` once a `--slowdown-change` took effect.
pub fn slowdown_label(p: &ProcessorRow) -> String {
    match p.slowdown_after {
        Some(after) => format!("{}→{after}", p.slowdown),
        None => p.slowdown.to_string(),
    }
}

fn run(text: &mut Text, d: &PolicyReport, alone: bool) {
    text.line(format!(
        "{} on {}: {}, {} processors, G = {} tasks ({}); capacities {}; master = processor {}",
        d.policy.name().to_uppercase(),
        d.backend,
        d.workload,
        d.workers,
        d.granularity.tasks,
        d.granularity.source,
        if d.calibrated { "calibrated" } else { "given" },
        d.master
    ));
    let mut t = Table::new([
        "proc", "role", "slowdown", "rows", "tasks", "batches", "T_exec", "T_comp", "T_comm",
        "T_wait",
    ]);
    for p in &d.processors {
        let mut row = work(p).to_vec();
        row.extend(seconds(Times::from(p).times));
        t.row(row);
    }
    text.table(t);
    let mut summary = format!(
        "makespan {:.3} s · ideal {:.3} s · efficiency {:.3} · finish spread {:.1}%",
        d.makespan,
        d.ideal,
        d.efficiency,
        100.0 * d.finish_spread
    );
    if let (Some(one), Some(s)) = (d.one_worker, d.speedup) {
        summary += &format!(" · one worker {one:.3} s → speedup {s:.2}");
    }
    text.line(summary);
    match d.max_error {
        Some(e) if d.workload.starts_with("matmul") => text.line(format!(
            "result checked against a single-threaded triple loop: max |C − C_ref| = {e:.2e}"
        )),
        Some(e) => text.line(format!("result checked task by task: {e} wrong")),
        None => {}
    }
    if !d.failures.is_empty() {
        text.line(format!(
            "survived {} failure(s), {} task(s) put back, {} duplicate result(s) dropped:",
            d.failures.len(),
            d.requeued,
            d.duplicates_dropped
        ));
        for f in &d.failures {
            text.line(format!(
                "  processor {}: {:?}: {}",
                f.processor, f.kind, f.message
            ));
        }
    }
    if !alone {
        text.line("");
    }
}

fn comparison(text: &mut Text, docs: &[PolicyReport]) {
    let mut t = Table::new([
        "policy",
        "makespan",
        "ideal",
        "efficiency",
        "finish spread",
        "speedup vs one worker",
        "speedup vs static",
    ]);
    for d in docs {
        t.row(vec![
            d.policy.name().to_string(),
            fixed(d.makespan, 3),
            fixed(d.ideal, 3),
            fixed(d.efficiency, 3),
            format!("{:.1}%", 100.0 * d.finish_spread),
            d.speedup.map_or("–".into(), |s| fixed(s, 2)),
            d.speedup_vs_static.map_or("–".into(), |s| fixed(s, 2)),
        ]);
    }
    text.table(t);
    if let Some(d) = docs.first() {
        text.line(format!("ideal (one for the workload): {}", d.ideal_basis));
    }
}

fn beside_paper(text: &mut Text, d: &PolicyReport, paper: &PaperTable) {
    text.line(format!(
        "\nBeside the paper, Table {} ({}×{}; master PIII 1000 MHz, eight PII 333 MHz, Fast \
         Ethernet, C + MPI):",
        paper.table, paper.size, paper.size
    ));
    let ours: Vec<Times<'_>> = d.processors.iter().map(Times::from).collect();
    text.table(efp::beside_paper(ours.iter().copied(), Some(paper)));
    if let Some(ratio) = master_ratio(&ours, d.master) {
        text.line(format!(
            "master rows ÷ mean worker rows: ours {ratio:.2}, paper {:.2} · finish spread: ours \
             {:.1}%, paper {:.1}%",
            paper.master_ratio(),
            100.0 * d.finish_spread,
            100.0 * paper.finish_spread()
        ));
    }
    text.line(
        "Absolute times are not comparable (2004 hardware and network, naive C kernel; here \
         threads share this machine's cores and the slow processors repeat the kernel).",
    );
}
