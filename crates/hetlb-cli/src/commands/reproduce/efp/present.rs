//! What `hetlb reproduce efp` prints and draws.

use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::{Axes, Series, line_chart, line_chart_with};
use anyhow::{Context, Result};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_experiments::efp::{EfpReport as Report, Point};
use hetlb_experiments::paper::efp::{PROCESSORS, PaperTable, table_for};
use std::path::{Path, PathBuf};

/// Prints the report in `format`.
pub(super) fn print(format: Format, report: &Report) -> Result<()> {
    match format {
        Format::Json => print_json(report),
        Format::Csv => print_csv(
            &[
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
            ],
            report
                .tables
                .iter()
                .map(|p| ("table", p))
                .chain(report.sweep_points.iter().map(|p| ("sweep", p)))
                .flat_map(|(part, p)| {
                    p.processors.iter().map(move |q| {
                        vec![
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
                        ]
                    })
                }),
        ),
        Format::Table => {
            print_tables(report);
            Ok(())
        }
    }
}

fn print_tables(report: &Report) {
    crate::out!(
        "Aldasht, Ortega & Puntonet, \"Dynamic load balancing in heterogeneous clusters\": EFP on real workers, beside the paper's Tables 2–6"
    );
    crate::out!("  machine: {}", report.machine);
    crate::out!(
        "  backend {}: {} processors, the master fast, the others {} times slower (they repeat their kernel);\n  \
         capacities {}; G by eq. (1); the run with the median makespan of {} per point",
        report.backend,
        report.procs,
        report.slow_factor,
        report.capacities,
        report.runs
    );
    crate::out!(
        "  paper: 1 PIII 1000 MHz + 8 PII 333 MHz on Fast Ethernet, C + MPI; absolute times are not comparable"
    );
    for &size in &report.sizes {
        let Some(efp) = report.table_point(size, Policy::Efp) else {
            continue;
        };
        let paper = table_for(size as usize).filter(|_| report.procs == PROCESSORS);
        print_size(report, efp, paper);
    }
    print_fig3(report);
    print_sweep(report);
    crate::out!("\n{}", report.paper_figures);
}

fn print_size(report: &Report, efp: &Point, paper: Option<&PaperTable>) {
    let size = efp.size;
    match paper {
        Some(t) => crate::out!(
            "\nTable {} — {size}×{size}, EFP, G = {} tasks ({})",
            t.table,
            efp.tasks,
            efp.granularity
        ),
        None => crate::out!(
            "\n{size}×{size}, EFP, G = {} tasks ({}) — the paper has no table for this order",
            efp.tasks,
            efp.granularity
        ),
    }
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
    let mut t = table(header);
    // The paper lists its master last (processor 8); ours is P0.
    let mut ours: Vec<_> = efp.processors.iter().collect();
    ours.sort_by_key(|p| {
        p.role
            .trim_start_matches('P')
            .parse::<usize>()
            .unwrap_or(usize::MAX)
    });
    let theirs: Vec<_> = paper
        .map(|t| {
            std::iter::once(&t.rows[8])
                .chain(t.rows[..8].iter())
                .collect()
        })
        .unwrap_or_default();
    for (i, o) in ours.iter().enumerate() {
        let mut row = vec![
            o.role.clone(),
            o.rows.to_string(),
            fixed(o.t_exec, 3),
            fixed(o.t_comp, 3),
            fixed(o.t_comm, 3),
            fixed(o.t_wait, 3),
        ];
        if let Some(p) = theirs.get(i) {
            row.extend([
                p.processor.to_string(),
                p.rows.to_string(),
                fixed(p.t_exec, 3),
                fixed(p.t_comp, 3),
                fixed(p.t_comm, 3),
                fixed(p.t_wait, 3),
            ]);
        }
        t.add_row(row);
    }
    crate::out!("{t}");
    let ratio = efp.master_ratio();
    let spread = efp.finish_spread();
    let mut line = format!("master rows ÷ mean worker rows: {}", fixed(ratio, 2));
    if let Some(t) = paper {
        line += &format!(" (paper {})", fixed(t.master_ratio(), 2));
    }
    line += &format!(" · finish spread {:.1}%", 100.0 * spread);
    if let Some(t) = paper {
        line += &format!(" (paper {:.1}%)", 100.0 * t.finish_spread());
    }
    crate::out!("{line}");
    let static_run = report.table_point(size, Policy::StaticEqual);
    crate::out!(
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
    );
}

fn print_fig3(report: &Report) {
    crate::out!(
        "\nFig. 3 — time against the matrix order ({} processors; seconds)",
        report.procs
    );
    let mut t = table([
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
        t.add_row(vec![
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
    crate::out!("{t}");
}

fn print_sweep(report: &Report) {
    crate::out!(
        "\nFigs. 9–11 — {n}×{n} against the number of processors (the master fast, the others {f} times slower)",
        n = report.sweep_size,
        f = report.slow_factor
    );
    crate::out!(
        "  speedup = the time of the fast processor alone running the same tasks ÷ the run's; efficiency =\n  \
         speedup ÷ P, and ÷ the processors' relative power (1 + (P − 1)/{}), the most a perfect balance reaches",
        report.slow_factor
    );
    let mut t = table([
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
        t.add_row(vec![
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
    crate::out!("{t}");
    crate::out!(
        "  On this machine the P processors share {} core(s); a slow processor's slowdown is real CPU work\n  \
         (it repeats its kernel), so the total CPU time grows with P and speedups against one processor measure\n  \
         this machine more than EFP; \"ideal ÷ time\" compares each run with W ÷ Σ(measured speeds) of its own\n  \
         processors.",
        report.cores
    );
    if !report.sweep_skipped.is_empty() {
        crate::out!(
            "  not run: P = {:?} (on MPI the number of processors is the number of ranks: launch once per P)",
            report.sweep_skipped
        );
    }
}

/// Draws Fig. 3, Figs. 9–11 and, per order, the EFP run's rows and times per processor (as
/// the paper's Figs. 4–8).
pub(super) fn plots(dir: &Path, report: &Report) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let series = |points: &[Point], x: fn(&Point) -> f64, y: &dyn Fn(&Point) -> Option<f64>| {
        [Policy::StaticEqual, Policy::Efp]
            .iter()
            .map(|&policy| Series {
                label: if policy == Policy::Efp {
                    "EFP".into()
                } else {
                    "static".into()
                },
                points: points
                    .iter()
                    .filter(|p| p.policy == policy)
                    .filter_map(|p| y(p).map(|v| (x(p), v)))
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let tables: Vec<Point> = report
        .tables
        .iter()
        .filter(|p| p.procs == report.procs)
        .cloned()
        .collect();
    let path = dir.join("fig3-time-vs-order.svg");
    line_chart(
        &path,
        &format!(
            "Fig. 3 — time against the matrix order, {} processors, slow ×{}, median of {} runs",
            report.procs, report.slow_factor, report.runs
        ),
        "matrix order",
        "seconds",
        &series(&tables, |p| p.size as f64, &|p| Some(p.makespan)),
    )
    .context("--out-dir")?;
    written.push(path);
    let one = |p: &Point| report.reference(p).map(|(one, _)| one);
    let sweep = &report.sweep_points;
    for (file, title, label, y) in [
        (
            "fig9-time-vs-procs.svg",
            "Fig. 9 — time against the number of processors",
            "seconds",
            Box::new(|p: &Point| Some(p.makespan)) as Box<dyn Fn(&Point) -> Option<f64>>,
        ),
        (
            "fig10-efficiency-vs-procs.svg",
            "Fig. 10 — efficiency (speedup ÷ P)",
            "efficiency",
            Box::new(move |p: &Point| one(p).map(|o| o / p.makespan / p.procs as f64)),
        ),
        (
            "fig11-speedup-vs-procs.svg",
            "Fig. 11 — speedup against one processor",
            "speedup",
            Box::new(move |p: &Point| one(p).map(|o| o / p.makespan)),
        ),
    ] {
        let path = dir.join(file);
        line_chart_with(
            &path,
            &format!(
                "{title}, {n}×{n}, slow ×{}, median of {} runs",
                report.slow_factor,
                report.runs,
                n = report.sweep_size
            ),
            &Axes::new("processors", label).integer_x(),
            &series(sweep, |p| p.procs as f64, &*y),
        )
        .context("--out-dir")?;
        written.push(path);
    }
    for p in tables.iter().filter(|p| p.policy == Policy::Efp) {
        let path = dir.join(format!("efp-{}.svg", p.size));
        crate::plot::processor_bars(
            &path,
            &format!(
                "EFP — {n}×{n} on {} processors, slow ×{}",
                p.procs,
                report.slow_factor,
                n = p.size
            ),
            "rows",
            &p.processors,
        )
        .context("--out-dir")?;
        written.push(path);
    }
    Ok(written)
}
