//! What `hetlb bench` shows a person: each report as lines and tables, and as CSV, for any
//! face to render (the JSON form is the report itself).

use crate::auto::{AutoReport, Workload};
use crate::diffusion::DiffusionDetails;
use crate::dispatch::DispatchDetails;
use crate::enumeration::EnumerationDetails;
use crate::exchange::ExchangeDetails;
use crate::rebalance::RebalanceReport;
use crate::timing::Report;
use crate::transmission::TransmissionDetails;
use hetlb_core::table::{Table, Text, fixed};
use serde::Serialize;

/// One line per comparison: kernel and floor with their medians, the ratio and its aim, with
/// the machine's threads and the repetitions.
pub fn csv<P: Serialize>(report: &Report<P>) -> Table {
    let mut t = Table::new([
        "benchmark",
        "key",
        "kernel",
        "kernel_seconds",
        "floor",
        "floor_seconds",
        "kernel_floor_ratio",
        "aim_ratio",
        "items",
        "threads",
        "repeat",
    ]);
    for c in &report.comparisons {
        t.row([
            report.benchmark.to_string(),
            c.key.clone(),
            c.kernel.clone(),
            c.kernel_seconds.to_string(),
            c.floor.clone(),
            c.floor_seconds.to_string(),
            c.kernel_floor_ratio.to_string(),
            c.aim_ratio.map_or(String::new(), |a| a.to_string()),
            c.items.map_or(String::new(), |n| n.to_string()),
            report.machine.threads.to_string(),
            report.repeat.to_string(),
        ]);
    }
    t
}

/// `title` with the machine and the repetitions, the comparisons as a table (per item when a
/// comparison counts items), then `notes`.
pub fn text<P: Serialize>(report: &Report<P>, title: &str, notes: &[String]) -> Text {
    let mut text = Text::new();
    text.line(format!(
        "{title} ({} threads of {}; medians of {}, interleaved)",
        report.machine.threads, report.machine.available_parallelism, report.repeat
    ));
    let mut t = Table::new(["kernel", "median", "floor", "median", "ratio", "aim"]);
    for c in &report.comparisons {
        let time = |secs: f64| match c.items {
            Some(n) => format!("{} µs/item", fixed(secs / n as f64 * 1e6, 3)),
            None => human_seconds(secs),
        };
        t.row([
            c.kernel.clone(),
            time(c.kernel_seconds),
            c.floor.clone(),
            time(c.floor_seconds),
            format!("{}×", fixed(c.kernel_floor_ratio, 2)),
            c.aim_ratio
                .map_or(String::new(), |a| format!("≤ {}×", fixed(a, 0))),
        ]);
    }
    text.table(t);
    for n in notes {
        text.line(n.clone());
    }
    text
}

/// Seconds as ms below one second, else as s.
pub fn human_seconds(secs: f64) -> String {
    if secs < 1.0 {
        format!("{} ms", fixed(secs * 1e3, 2))
    } else {
        format!("{} s", fixed(secs, 3))
    }
}

/// The title of [`exchange`](crate::exchange)'s table.
pub fn exchange_title(d: &ExchangeDetails) -> String {
    format!(
        "In-place balance of a {}-cube ({} loads below {}, {} MiB; {} lanes, {})",
        d.dims,
        d.nodes,
        d.max_load,
        (d.nodes * 8) >> 20,
        d.lanes,
        d.simd
    )
}

/// The title of [`diffusion`](crate::diffusion)'s table.
pub fn diffusion_title(d: &DiffusionDetails) -> String {
    format!(
        "One round on a {0} × {0} torus ({1} nodes, loads uniform on 0..=200, {2} capacities)",
        d.side, d.nodes, d.capacities
    )
}

/// The title of [`dispatch`](crate::dispatch)'s table.
pub fn dispatch_title(d: &DispatchDetails) -> String {
    format!(
        "Dispatch of {} empty tasks, a master that only dispatches and one worker",
        d.tasks
    )
}

/// The title of [`transmission`](crate::transmission)'s table.
pub fn transmission_title(d: &TransmissionDetails) -> String {
    format!(
        "Transmission schedules of a {}-cube plan ({} nodes, loads uniform on 0..{})",
        d.dims,
        1usize << d.dims,
        d.max_load
    )
}

/// The title of [`enumeration`](crate::enumeration)'s table and its note on the one-by-one
/// baseline.
pub fn enumeration_title(d: &EnumerationDetails) -> (String, Vec<String>) {
    let title = format!(
        "Exhaustive enumeration, {} processors, loads 0..={}: {} vectors, dem + oem",
        d.procs,
        d.values.saturating_sub(1),
        d.vectors
    );
    let notes = vec![format!(
        "one by one: {} vectors in {} s ({:.3e} vectors/s), so about {} s for all vectors: {}× slower",
        d.baseline_vectors,
        fixed(d.baseline_seconds, 3),
        d.baseline_vectors_per_second,
        fixed(d.baseline_extrapolated_seconds, 1),
        fixed(d.speedup, 1)
    )];
    (title, notes)
}

/// [`rebalance`](crate::rebalance)'s comparisons as CSV: the move, the move with bytes not
/// counted, the call with nothing to do, then one line per rank count of the sweep.
pub fn rebalance_csv(r: &RebalanceReport) -> Table {
    let mut t = Table::new(["kernel", "seconds", "floor", "floor_seconds", "ratio"]);
    for row in [
        vec![
            "cwa move".into(),
            format!("{:.6}", r.move_seconds),
            "direct channel sends".into(),
            format!("{:.6}", r.move_floor_seconds),
            format!("{:.3}", r.move_ratio),
        ],
        vec![
            "cwa move, bytes not counted".into(),
            format!("{:.6}", r.move_uncounted_seconds),
            "direct channel sends".into(),
            format!("{:.6}", r.move_floor_seconds),
            format!("{:.3}", r.move_uncounted_ratio),
        ],
        vec![
            "rebalance, nothing to do".into(),
            format!("{:.9}", r.balanced_seconds),
            "all-reduce of a u64".into(),
            format!("{:.9}", r.balanced_floor_seconds),
            format!("{:.3}", r.balanced_ratio),
        ],
    ] {
        t.row::<Vec<String>, String>(row);
    }
    for x in &r.scale {
        t.row([
            format!("cwa call, {} ranks", x.ranks),
            format!("{:.9}", x.seconds),
            "all-reduce of a u64".into(),
            format!("{:.9}", x.floor_seconds),
            format!("{:.3}", x.ratio),
        ]);
    }
    t
}

/// [`rebalance`](crate::rebalance)'s report as tables: the move and the call with nothing to
/// do against their floors, each schedule of Rim et al.'s Figs. 18–19 (`unit_items` items per
/// unit) beside the model, and the sweep over rank counts.
pub fn rebalance_text(r: &RebalanceReport, unit_items: u64) -> Text {
    let mut text = Text::new();
    text.line(format!(
        "Peer rebalancing on {} threads ({} cores), medians of {} runs, kernel and floor \
         interleaved:",
        r.ranks, r.available_parallelism, r.runs
    ));
    let ms = |s: f64| format!("{} ms", fixed(s * 1e3, 2));
    let mut t = Table::new(["kernel", "median", "floor", "floor median", "ratio"]);
    t.row(vec![
        format!("cwa moving {} items of 64 B", r.items),
        ms(r.move_seconds),
        "direct channel sends".into(),
        ms(r.move_floor_seconds),
        fixed(r.move_ratio, 2),
    ]);
    t.row(vec![
        "the same, bytes not counted".into(),
        ms(r.move_uncounted_seconds),
        "direct channel sends".into(),
        ms(r.move_floor_seconds),
        fixed(r.move_uncounted_ratio, 2),
    ]);
    t.row(vec![
        "rebalance with nothing to do".into(),
        format!("{} µs", fixed(r.balanced_seconds * 1e6, 2)),
        "all-reduce of a u64".into(),
        format!("{} µs", fixed(r.balanced_floor_seconds * 1e6, 2)),
        fixed(r.balanced_ratio, 2),
    ]);
    text.table(t);
    text.line(format!(
        "Rim et al.'s Figs. 18-19 on 8 threads, {} items per unit, dem: the measured move \
         beside the model (steps × the time per unit measured in the same call):",
        unit_items
    ));
    let mut s = Table::new(["schedule", "model steps", "measured", "model prediction"]);
    for x in &r.schedules {
        s.row(vec![
            x.schedule.name().to_string(),
            x.predicted_steps.to_string(),
            ms(x.measured_seconds),
            ms(x.predicted_seconds),
        ]);
    }
    text.table(s);
    if !r.scale.is_empty() {
        text.line(
            "The agreement as the group grows: one cwa call on P threads (a few unit \
             items per rank, random loads) against an all-reduce of a u64 by recursive \
             doubling (log2 P messages per rank):",
        );
        let mut g = Table::new([
            "ranks",
            "log2 P",
            "messages per rank (most)",
            "(mean)",
            "call",
            "all-reduce",
            "ratio",
        ]);
        for x in &r.scale {
            g.row(vec![
                x.ranks.to_string(),
                x.log2_ranks.to_string(),
                x.max_messages_per_rank.to_string(),
                fixed(x.mean_messages_per_rank, 1),
                ms(x.seconds),
                ms(x.floor_seconds),
                fixed(x.ratio, 2),
            ]);
        }
        text.table(g);
    }
    text
}

/// [`auto`](crate::auto)'s rows as CSV: one line per workload and configuration.
pub fn auto_csv(r: &AutoReport) -> Table {
    let mut t = Table::new([
        "workload",
        "balancer",
        "period",
        "seconds",
        "wall_seconds",
        "min_seconds",
        "max_seconds",
        "moves",
        "held_back",
        "units_moved",
    ]);
    for x in &r.rows {
        t.row([
            x.workload.name().to_string(),
            x.balancer.clone(),
            x.period.map_or(String::new(), |p| p.to_string()),
            format!("{:.6}", x.seconds),
            format!("{:.6}", x.wall_seconds),
            format!("{:.6}", x.min_seconds),
            format!("{:.6}", x.max_seconds),
            x.moves.to_string(),
            x.held_back.to_string(),
            x.units_moved.to_string(),
        ]);
    }
    t
}

/// [`auto`](crate::auto)'s report as tables: `auto` beside the best fixed pair and no
/// balancing per workload, the prediction errors of its moves, then every configuration.
pub fn auto_text(r: &AutoReport) -> Text {
    let mut text = Text::new();
    text.line(format!(
        "Rule auto (trigger auto, horizon {}, cost learned on line, called every iteration) \
         beside every fixed (rule, period) pair: {} ranks, {} items, {} iterations, {} µs of \
         sleep per unit; median of {} run(s)",
        r.horizon,
        r.ranks,
        r.items,
        r.iterations,
        fixed(r.sleep_per_unit * 1e6, 0),
        r.runs
    ));
    let mut t = Table::new([
        "workload",
        "best fixed pair",
        "its s",
        "none s",
        "auto s",
        "auto ÷ best",
        "auto ÷ none",
        "aim",
        "met",
    ]);
    for s in &r.summaries {
        let against = if s.workload == Workload::Balanced {
            "÷ none"
        } else {
            "÷ best"
        };
        t.row([
            s.workload.name().to_string(),
            format!("{} every {}", s.best_rule, s.best_period),
            fixed(s.best_seconds, 3),
            fixed(s.none_seconds, 3),
            fixed(s.auto_seconds, 3),
            fixed(s.auto_over_best, 3),
            fixed(s.auto_over_none, 3),
            format!("{against} ≤ {}", fixed(s.aim, 2)),
            if s.met { "yes" } else { "no" }.to_string(),
        ]);
    }
    text.table(t);
    text.line("Auto's predictions against what its moves measured (medians):");
    let opt = |x: Option<f64>, scale: f64, digits| {
        x.map_or("–".to_string(), |v| fixed(v * scale, digits))
    };
    let mut p = Table::new([
        "workload",
        "moves",
        "move time: |error| ÷ measured",
        "predicted ÷ measured",
        "gains measured",
        "gain/iteration: |error| ms",
        "measured gain ms",
    ]);
    for s in &r.summaries {
        p.row([
            s.workload.name().to_string(),
            s.moves_measured.to_string(),
            opt(s.move_time_error, 1.0, 2),
            opt(s.move_time_ratio, 1.0, 2),
            s.gains_measured.to_string(),
            opt(s.gain_error_seconds, 1e3, 3),
            opt(s.gain_measured_seconds, 1e3, 3),
        ]);
    }
    text.table(p);
    text.line(
        "Every configuration: accounted seconds (median; min–max over the runs) and wall seconds:",
    );
    let mut all = Table::new([
        "workload",
        "balancer",
        "period",
        "seconds",
        "min–max",
        "wall s",
        "moves",
        "held back",
        "units moved",
    ]);
    for x in &r.rows {
        all.row([
            x.workload.name().to_string(),
            x.balancer.clone(),
            x.period.map_or("–".to_string(), |p| p.to_string()),
            fixed(x.seconds, 3),
            format!("{}–{}", fixed(x.min_seconds, 3), fixed(x.max_seconds, 3)),
            fixed(x.wall_seconds, 3),
            x.moves.to_string(),
            x.held_back.to_string(),
            x.units_moved.to_string(),
        ]);
    }
    text.table(all);
    text.line(
        "Work sleeps, so speeds and predictions do not depend on the machine's load. Accounted \
         seconds: Σ over iterations of the slowest rank's work + Σ over rebalances of the time \
         the last rank to reach the call spends in it (gather, planning every candidate, \
         moving), as measured; wall seconds add the wake-up delays of a loaded machine.",
    );
    text
}
