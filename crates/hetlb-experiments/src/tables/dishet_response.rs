//! What `dishet-response` prints: DISHET and its baselines in time (Neelakantan 2012, §5).

use crate::dishet::response::{Cell, ResponseReport};
use hetlb_core::table::{Table, Text, fixed};

/// One line per cell (size, total, distribution) and policy.
pub fn csv(s: &ResponseReport) -> Table {
    let mut t = Table::new([
        "nodes",
        "total",
        "distribution",
        "policy",
        "trials",
        "throughput",
        "response_time",
        "makespan",
        "ideal_makespan",
        "tasks_moved",
        "rounds",
    ]);
    for c in &s.cells {
        t.row([
            c.nodes.to_string(),
            c.total.to_string(),
            c.distribution.name(),
            c.policy.to_string(),
            c.trials.to_string(),
            format!("{:.6}", c.throughput),
            format!("{:.6}", c.response_time),
            format!("{:.6}", c.makespan),
            format!("{:.6}", c.ideal_makespan),
            format!("{:.3}", c.tasks_moved),
            format!("{:.3}", c.rounds),
        ]);
    }
    t
}

/// The setting, the summary per policy, response time and throughput by distribution and
/// by graph size, and how often DISHET does best.
pub fn text(s: &ResponseReport) -> Text {
    let mut text = Text::new();
    let c = &s.setup;
    let list = |v: Vec<String>| v.join(", ");
    text.line("DISHET in time (Neelakantan 2012, §5): throughput and average response time");
    text.line(format!(
        "  instances of `reproduce dishet` (seed {}): sizes {}; totals {}; {} trials per cell; G(n, p) with mean\n  \
         degree {}, capacities uniform on 1..={}",
        c.base_seed,
        list(c.sizes.iter().map(usize::to_string).collect()),
        list(c.totals.iter().map(u64::to_string).collect()),
        c.seeds,
        c.mean_degree,
        c.max_capacity
    ));
    text.line(format!(
        "  node i executes {} x capacity_i tasks/s ({} service); a round every {} s; links {} tasks/s, {} s delay",
        s.rate_per_capacity,
        s.service,
        s.interval,
        if s.link_rate.is_infinite() {
            "inf".to_string()
        } else {
            s.link_rate.to_string()
        },
        s.link_delay
    ));
    text.line("  response time: from time 0 (every task is there at the start) to its completion");
    text.line(format!("  paper: {}\n", s.paper));
    let policies: Vec<&str> = s.policies.iter().map(|p| p.name()).collect();
    text.line("Summary over the whole grid (means over cells)");
    let mut t = Table::new([
        "policy",
        "throughput (tasks/s)",
        "response time (s)",
        "response ÷ none",
        "makespan ÷ ideal",
        "tasks moved",
        "rounds run",
    ]);
    let none_response = s.mean(|x| x.policy == "none", |x| x.response_time);
    for &p in &policies {
        let of = |x: &Cell| x.policy == p;
        let response = s.mean(of, |x| x.response_time);
        t.row(vec![
            p.to_string(),
            fixed(s.mean(of, |x| x.throughput), 2),
            fixed(response, 2),
            if none_response.is_nan() {
                "–".into()
            } else {
                fixed(response / none_response, 3)
            },
            fixed(s.mean(of, |x| x.makespan / x.ideal_makespan), 3),
            fixed(s.mean(of, |x| x.tasks_moved), 0),
            fixed(s.mean(of, |x| x.rounds), 1),
        ]);
    }
    text.table(t);
    text.line("");
    for (title, f) in [
        (
            "Average response time (s) by distribution (means over sizes, totals and trials)",
            (|x: &Cell| x.response_time) as fn(&Cell) -> f64,
        ),
        (
            "Throughput (tasks/s) by distribution (means over sizes, totals and trials)",
            |x: &Cell| x.throughput,
        ),
    ] {
        text.line(title);
        let mut t = Table::new(
            std::iter::once("distribution".to_string())
                .chain(policies.iter().map(|p| p.to_string())),
        );
        for &d in &c.distributions {
            let mut row = vec![d.name()];
            for &p in &policies {
                row.push(fixed(
                    s.mean(|x| x.distribution == d && x.policy == p, f),
                    2,
                ));
            }
            t.row(row);
        }
        text.table(t);
        text.line("");
    }
    text.line(
        "Average response time (s) by graph size (means over totals, distributions and trials)",
    );
    let mut t = Table::new(
        std::iter::once("nodes".to_string()).chain(policies.iter().map(|p| p.to_string())),
    );
    for &n in &c.sizes {
        let mut row = vec![n.to_string()];
        for &p in &policies {
            row.push(fixed(
                s.mean(|x| x.nodes == n && x.policy == p, |x| x.response_time),
                2,
            ));
        }
        t.row(row);
    }
    text.table(t);
    if let Some((best, cells_count)) = s.dishet_best() {
        text.line(format!(
            "\nDISHET has the lowest average response time of the balancing rules in {best} of {cells_count} cells."
        ));
    }
    text
}
