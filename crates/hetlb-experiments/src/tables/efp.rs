//! What `efp` prints: Aldasht, Ortega & Puntonet's EFP on real workers beside the paper's
//! Tables 2–6, Fig. 3 and Figs. 9–11; and the per-processor table of Tables 2–6, ours beside
//! the paper's, which `hetlb run matmul` prints too ([`beside_paper`]).

use crate::efp::{EfpReport as Report, Point, Times};
use crate::paper::efp::{PROCESSORS, PaperRow, PaperTable, table_for};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_core::table::{Table, Text, fixed};

/// The four times with three decimals.
pub(crate) fn seconds(times: [f64; 4]) -> [String; 4] {
    times.map(|t| fixed(t, 3))
}

/// Our processors as the rows of the paper's Tables 2–6, master first (`P0`, `P1`, … by
/// speed), each beside the paper's processor in the same place when the paper's table is
/// given (the paper lists its master, processor 8, last).
pub fn beside_paper<'a>(
    ours: impl IntoIterator<Item = Times<'a>>,
    paper: Option<&PaperTable>,
) -> Table {
    let mut header = vec!["role", "rows", "T_exec", "T_comp", "T_comm", "T_wait"];
    if paper.is_some() {
        header.extend([
            "paper proc",
            "paper rows",
            "paper T_exec",
            "paper T_comp",
            "paper T_comm",
            "paper T_wait",
        ]);
    }
    let mut t = Table::new(header);
    let mut ours: Vec<Times<'a>> = ours.into_iter().collect();
    ours.sort_by_key(|p| {
        p.role
            .trim_start_matches('P')
            .parse::<usize>()
            .unwrap_or(usize::MAX)
    });
    let theirs: Vec<&PaperRow> = paper
        .map(|t| {
            std::iter::once(&t.rows[8])
                .chain(t.rows[..8].iter())
                .collect()
        })
        .unwrap_or_default();
    for (i, o) in ours.iter().enumerate() {
        let mut row = vec![o.role.to_string(), o.rows.to_string()];
        row.extend(seconds(o.times));
        if let Some(p) = theirs.get(i) {
            row.extend([p.processor.to_string(), p.rows.to_string()]);
            row.extend(seconds([p.t_exec, p.t_comp, p.t_comm, p.t_wait]));
        }
        t.row(row);
    }
    t
}

/// One line per run (the tables', then the sweep's) and processor: its role, rows and times.
pub fn csv(report: &Report) -> Table {
    let mut t = Table::new([
        "part",
        "size",
        "procs",
        "policy",
        "processor",
        "role",
        "rows",
        "t_exec",
        "t_comp",
        "t_comm",
        "t_wait",
        "makespan",
    ]);
    let parts = report
        .tables
        .iter()
        .map(|p| ("table", p))
        .chain(report.sweep_points.iter().map(|p| ("sweep", p)));
    for (part, p) in parts {
        for q in &p.processors {
            t.row([
                part.to_string(),
                p.size.to_string(),
                p.procs.to_string(),
                p.policy.name().to_string(),
                q.processor.to_string(),
                q.role.clone(),
                q.rows.to_string(),
                format!("{:.6}", q.t_exec),
                format!("{:.6}", q.t_comp),
                format!("{:.6}", q.t_comm),
                format!("{:.6}", q.t_wait),
                format!("{:.6}", p.makespan),
            ]);
        }
    }
    t
}

/// The setting, each order's EFP run beside the paper's table (Tables 2–6), Fig. 3 and
/// Figs. 9–11 as tables, and the paper's figures as it reports them.
pub fn text(report: &Report) -> Text {
    let mut text = Text::new();
    text.line("Aldasht, Ortega & Puntonet, \"Dynamic load balancing in heterogeneous clusters\": EFP on real workers, beside the paper's Tables 2–6");
    text.line(format!("  machine: {}", report.machine));
    text.line(format!(
        "  backend {}: {} processors, the master fast, the others {} times slower (they repeat their kernel);\n  \
         capacities {}; G by eq. (1); the run with the median makespan of {} per point",
        report.backend,
        report.procs,
        report.slow_factor,
        report.capacities,
        report.runs
    ));
    text.line("  paper: 1 PIII 1000 MHz + 8 PII 333 MHz on Fast Ethernet, C + MPI; absolute times are not comparable");
    for &size in &report.sizes {
        let Some(efp) = report.table_point(size, Policy::Efp) else {
            continue;
        };
        let paper = table_for(size as usize).filter(|_| report.procs == PROCESSORS);
        size_table(&mut text, report, efp, paper);
    }
    fig3(&mut text, report);
    sweep(&mut text, report);
    text.line(format!("\n{}", report.paper_figures));
    text
}

fn size_table(text: &mut Text, report: &Report, efp: &Point, paper: Option<&PaperTable>) {
    let size = efp.size;
    match paper {
        Some(t) => text.line(format!(
            "\nTable {} — {size}×{size}, EFP, G = {} tasks ({})",
            t.table, efp.tasks, efp.granularity
        )),
        None => text.line(format!(
            "\n{size}×{size}, EFP, G = {} tasks ({}) — the paper has no table for this order",
            efp.tasks, efp.granularity
        )),
    }
    text.table(beside_paper(efp.processors.iter().map(Times::from), paper));
    let ratio = efp.master_ratio();
    let spread = efp.finish_spread();
    let mut ratios = format!("master rows ÷ mean worker rows: {}", fixed(ratio, 2));
    if let Some(t) = paper {
        ratios += &format!(" (paper {})", fixed(t.master_ratio(), 2));
    }
    ratios += &format!(" · finish spread {:.1}%", 100.0 * spread);
    if let Some(t) = paper {
        ratios += &format!(" (paper {:.1}%)", 100.0 * t.finish_spread());
    }
    text.line(ratios);
    let static_run = report.table_point(size, Policy::StaticEqual);
    text.line(format!(
        "makespan: EFP {} s{}; ideal {} s (efficiency {}){}",
        fixed(efp.makespan, 3),
        static_run.map_or(String::new(), |s| format!(
            ", static split {} s",
            fixed(s.makespan, 3)
        )),
        fixed(efp.ideal, 3),
        fixed(efp.efficiency_vs_ideal, 3),
        efp.max_error.map_or(String::new(), |e| format!(
            "; product checked against one processor: max |C − C_1| = {e:.1e}"
        ))
    ));
}

fn fig3(text: &mut Text, report: &Report) {
    text.line(format!(
        "\nFig. 3 — time against the matrix order ({} processors; seconds)",
        report.procs
    ));
    let mut t = Table::new([
        "order",
        "static split",
        "EFP",
        "EFP ÷ static",
        "one processor, same tasks",
        "speedup EFP",
        "one processor, one call",
    ]);
    for &size in &report.sizes {
        let s = report.table_point(size, Policy::StaticEqual);
        let e = report.table_point(size, Policy::Efp);
        let one = e.and_then(|e| report.reference(e));
        t.row(vec![
            size.to_string(),
            s.map_or("–".into(), |p| fixed(p.makespan, 3)),
            e.map_or("–".into(), |p| fixed(p.makespan, 3)),
            match (s, e) {
                (Some(s), Some(e)) => fixed(e.makespan / s.makespan, 3),
                _ => "–".into(),
            },
            one.map_or("–".into(), |x| fixed(x.0, 3)),
            match (one, e) {
                (Some(x), Some(e)) => fixed(x.0 / e.makespan, 2),
                _ => "–".into(),
            },
            one.map_or("–".into(), |x| fixed(x.1, 3)),
        ]);
    }
    text.table(t);
}

fn sweep(text: &mut Text, report: &Report) {
    text.line(format!(
        "\nFigs. 9–11 — {n}×{n} against the number of processors (the master fast, the others {f} times slower)",
        n = report.sweep_size,
        f = report.slow_factor
    ));
    text.line(format!(
        "  speedup = the time of the fast processor alone running the same tasks ÷ the run's; efficiency =\n  \
         speedup ÷ P, and ÷ the processors' relative power (1 + (P − 1)/{}), the most a perfect balance reaches",
        report.slow_factor
    ));
    let mut t = Table::new([
        "P",
        "time static",
        "time EFP",
        "speedup static",
        "speedup EFP",
        "efficiency static",
        "efficiency EFP",
        "EFP ÷ power",
        "EFP: ideal ÷ time",
    ]);
    let mut procs: Vec<usize> = report.sweep_points.iter().map(|p| p.procs).collect();
    procs.sort_unstable();
    procs.dedup();
    for p in procs {
        let s = report.sweep_point(p, Policy::StaticEqual);
        let e = report.sweep_point(p, Policy::Efp);
        let speedup = |x: Option<&Point>| x.and_then(|x| report.speedup(x));
        let (ss, se) = (speedup(s), speedup(e));
        let f = |x: Option<f64>, d: usize| x.map_or("–".into(), |v| fixed(v, d));
        t.row(vec![
            p.to_string(),
            f(s.map(|x| x.makespan), 3),
            f(e.map(|x| x.makespan), 3),
            f(ss, 2),
            f(se, 2),
            f(ss.map(|v| v / p as f64), 3),
            f(se.map(|v| v / p as f64), 3),
            f(se.map(|v| v / report.power(p)), 3),
            f(e.map(|x| x.efficiency_vs_ideal), 3),
        ]);
    }
    text.table(t);
    text.line(format!(
        "  On this machine the P processors share {} core(s); a slow processor's slowdown is real CPU work\n  \
         (it repeats its kernel), so the total CPU time grows with P and speedups against one processor measure\n  \
         this machine more than EFP; \"ideal ÷ time\" compares each run with W ÷ Σ(measured speeds) of its own\n  \
         processors.",
        report.cores
    ));
    if !report.sweep_skipped.is_empty() {
        text.line(format!(
            "  not run: P = {:?} (on MPI the number of processors is the number of ranks: launch once per P)",
            report.sweep_skipped
        ));
    }
}
