//! What `dishet` prints: the DISHET experiment grid (Neelakantan 2012, §5).

use crate::dishet::{Cell, Config, PAPER_FINDINGS, mean_rounds, summarise};
use hetlb_core::table::{Table, Text, fixed};

/// One line per cell (size, total, distribution) and rule.
pub fn csv(cells: &[Cell]) -> Table {
    let mut t = Table::new([
        "nodes",
        "total",
        "distribution",
        "algorithm",
        "trials",
        "converged",
        "rounds_mean",
        "rounds_min",
        "rounds_max",
        "units_moved_mean",
        "task_hops_mean",
        "messages_mean",
        "max_difference_mean",
        "weighted_imbalance_mean",
        "distance_from_optimal_mean",
    ]);
    for c in cells {
        t.row([
            c.nodes.to_string(),
            c.total.to_string(),
            c.distribution.name(),
            c.algorithm.name().to_string(),
            c.trials.to_string(),
            c.converged.to_string(),
            fixed(c.rounds_mean, 2),
            c.rounds_min.to_string(),
            c.rounds_max.to_string(),
            fixed(c.units_moved_mean, 2),
            fixed(c.task_hops_mean, 2),
            fixed(c.messages_mean, 2),
            fixed(c.max_difference_mean, 3),
            fixed(c.weighted_imbalance_mean, 4),
            fixed(c.distance_from_optimal_mean, 3),
        ]);
    }
    t
}

/// The setting, rounds to convergence per distribution and per graph size, and the summary
/// per rule.
pub fn text(config: &Config, cells: &[Cell]) -> Text {
    let mut text = Text::new();
    let capacities = config.capacity_description();
    let graphs = config.graph_description();
    let sizes: Vec<String> = config.sizes.iter().map(usize::to_string).collect();
    text.line("DISHET experiments (Neelakantan 2012, §5), recomputed");
    text.line(format!("  graphs: {graphs}"));
    text.line(format!("  capacities: {capacities}"));
    text.line(format!(
        "  sizes {}; totals {}; {} trials per cell; round limit {}",
        sizes.join(", "),
        config
            .totals
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        config.seeds,
        config.max_rounds
    ));
    text.line(format!("  paper: {PAPER_FINDINGS}"));
    text.line("");
    let algs = &config.algorithms;
    for &d in &config.distributions {
        text.line(format!(
            "Rounds to convergence — {} (mean over {} sizes × {} trials)",
            d.describe(),
            config.sizes.len(),
            config.seeds
        ));
        let mut t = Table::new(
            std::iter::once("total load".to_string()).chain(algs.iter().map(|a| a.to_string())),
        );
        for &w in &config.totals {
            let mut row = vec![w.to_string()];
            for &a in algs {
                let m = mean_rounds(cells, a, |c| c.distribution == d && c.total == w);
                row.push(fixed(m, 1));
            }
            t.row(row);
        }
        text.table(t);
        text.line("");
    }
    text.line("Rounds to convergence by graph size (mean over totals, distributions and trials)");
    let mut t =
        Table::new(std::iter::once("nodes".to_string()).chain(algs.iter().map(|a| a.to_string())));
    for &n in &config.sizes {
        let mut row = vec![n.to_string()];
        for &a in algs {
            row.push(fixed(mean_rounds(cells, a, |c| c.nodes == n), 1));
        }
        t.row(row);
    }
    text.table(t);
    text.line("");
    text.line("Summary over the whole grid (means over cells; imbalance weighted by capacity)");
    let mut t = Table::new([
        "algorithm",
        "converged",
        "rounds",
        "max rounds",
        "units moved",
        "task-hops",
        "messages",
        "weighted imbalance",
        "distance from optimal",
    ]);
    for &a in algs {
        let s = summarise(cells, a);
        t.row(vec![
            a.to_string(),
            format!("{}/{}", s.converged, s.trials),
            fixed(s.rounds, 1),
            s.max_rounds.to_string(),
            fixed(s.units_moved, 0),
            fixed(s.task_hops, 0),
            fixed(s.messages, 0),
            fixed(s.weighted_imbalance, 4),
            fixed(s.distance_from_optimal, 2),
        ]);
    }
    text.table(t);
    text.line("");
    text
}
