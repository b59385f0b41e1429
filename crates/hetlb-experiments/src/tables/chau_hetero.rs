//! What `chau-hetero` prints: dem-hetero against the optimal allocation (Chau & Fu's §5
//! claim), per cube dimension and per load scale.

use crate::chau_hetero::{
    CLASSES, CONDITION, ChauHetero, ChauHeteroReport, Kind, MAX_SIZE, MAX_SPEED, Row,
    SHARCNET_SIZES, ScaleRow,
};
use hetlb_core::table::{Table, Text, fixed};

/// The comparison with the optimum per `n`, the classes of excess, the worst case found, and
/// the pass rate per load scale.
pub fn text(experiment: &ChauHetero, out: &ChauHeteroReport) -> Text {
    let args = experiment;
    let mut text = Text::new();
    let rows = &out.rows;
    text.line(format!(
        "dem-hetero leaves {:.1}% of the mean load per processing unit above the optimal \
         allocation, on average over {} trials of random clusters (loads to {}).\n",
        100.0 * out.mean_relative_excess,
        out.total_trials(),
        args.max_load
    ));
    text.line(format!(
        "Chau & Fu §5: \"the maximum load difference between any two computing clusters can be at most\n\
         one more than the optimal solution\". The paper has no experiment for clusters of different sizes; these\n\
         numbers are ours. Per trial: 2^n clusters, sizes from Sharcnet's (§1: {:?}) half of the time, otherwise\n\
         uniform on 1..={MAX_SIZE} processors; relative speeds uniform on 1..={MAX_SPEED}; capacity p = processors x speed;\n\
         loads uniform on 0..={} tasks; {} trials per n, seed {}. Balanced by dem-hetero (Fig. 5). Difference = max w/p -\n\
         min w/p (tasks per processing unit); optimal = the smallest difference of any integer allocation of the\n\
         same total; excess = dem-hetero's minus the optimal. All exact fractions.",
        SHARCNET_SIZES,
        args.max_load,
        args.trials,
        args.seed
    ));
    let mut t = Table::new([
        "n",
        "clusters",
        "excess / mean load per unit",
        "dem-hetero difference",
        "optimal",
        "excess (mean)",
        "excess <= 1",
        "worst excess",
        "equal clusters: excess <= 1",
        "equal clusters: worst",
    ]);
    for r in rows {
        t.row(vec![
            r.n.to_string(),
            (1u64 << r.n).to_string(),
            format!("{:.2}%", 100.0 * r.mean_relative_excess),
            fixed(r.mean_dem_hetero, 3),
            fixed(r.mean_optimal, 4),
            fixed(r.mean_excess, 3),
            percent(r.within_claim, r.trials),
            fixed(r.worst.excess, 3),
            percent(r.equal_within_claim, r.trials),
            r.equal_worst_excess.to_string(),
        ]);
    }
    text.table(t);

    text.line("\nExcess of dem-hetero over the optimal difference (trials per class):");
    let mut header = vec!["n".to_string()];
    header.extend(CLASSES.iter().map(|c| c.0.to_string()));
    let mut t = Table::new(header);
    for r in rows {
        let mut line = vec![r.n.to_string()];
        line.extend(r.classes.iter().map(u64::to_string));
        t.row(line);
    }
    text.table(t);

    if let Some(w) = out.worst() {
        text.line(format!(
            "\nWorst case found: n = {}, trial {} (seed {}): dem-hetero leaves a difference of {} tasks per unit, the\n\
             optimal allocation {}: an excess of {} against the claimed 1 (mean load {} per unit; before balancing\n\
             the difference was {}). `--format json` gives its sizes, speeds and loads.",
            w.n,
            w.worst.trial,
            args.seed,
            fixed(w.worst.dem_hetero, 3),
            fixed(w.worst.optimal, 4),
            fixed(w.worst.excess, 3),
            fixed(w.worst.mean_level, 1),
            fixed(w.worst.initial_spread(), 1)
        ));
    }
    let all = out.total_trials();
    let within = out.within_claim();
    let equal_within = out.equal_within_claim();
    text.line(format!(
        "\nThe claim holds in {} of {all} heterogeneous trials ({}) and in {} of {all} trials of the same loads on\n\
         equal clusters ({}). On clusters of different capacities, the dimension exchange equalises each pair but\n\
         not the subcubes it joins (a pair's new level mixes the two clusters' capacities in their own ratio), so\n\
         the difference left grows with the load, not with the rounding.",
        within,
        percent(within, all),
        equal_within,
        percent(equal_within, all)
    ));
    pass_rates(&mut text, experiment, &out.pass_rates, &experiment.scales);
    text
}

/// One line per cube dimension: the means, the share within the claim, the worst excess, and
/// the trials per class of excess.
pub fn csv(rows: &[Row]) -> Table {
    let mut header = vec![
        "n".to_string(),
        "trials".into(),
        "mean_dem_hetero".into(),
        "mean_optimal".into(),
        "mean_excess".into(),
        "mean_relative_excess".into(),
        "within_claim".into(),
        "worst_excess".into(),
        "equal_within_claim".into(),
        "equal_worst_excess".into(),
    ];
    header.extend(CLASSES.iter().map(|c| format!("excess {}", c.0)));
    let mut t = Table::new(header);
    for r in rows {
        let mut line = vec![
            r.n.to_string(),
            r.trials.to_string(),
            r.mean_dem_hetero.to_string(),
            r.mean_optimal.to_string(),
            r.mean_excess.to_string(),
            r.mean_relative_excess.to_string(),
            r.within_claim.to_string(),
            r.worst.excess.to_string(),
            r.equal_within_claim.to_string(),
            r.equal_worst_excess.to_string(),
        ];
        line.extend(r.classes.iter().map(u64::to_string));
        t.row(line);
    }
    t
}

/// The share within the claim per load scale: random clusters against product form.
fn pass_rates(text: &mut Text, args: &ChauHetero, rates: &[ScaleRow], scales: &[u64]) {
    text.line(format!(
        "\nTrials within one of the optimum, by load scale ({} trials per cell; loads uniform on \
         0..=scale):",
        args.scale_trials
    ));
    let mut header = vec!["n".to_string()];
    for kind in [Kind::Random, Kind::ProductForm] {
        for s in scales {
            header.push(format!("{}, to {s}", kind.name()));
        }
    }
    let mut t = Table::new(header);
    let mut dims: Vec<u32> = rates.iter().map(|r| r.n).collect();
    dims.dedup();
    for n in dims {
        let mut line = vec![n.to_string()];
        for kind in [Kind::Random, Kind::ProductForm] {
            for &s in scales {
                line.push(
                    find_rate(rates, n, kind, s)
                        .map_or("–".into(), |r| format!("{}/{}", r.within_claim, r.trials)),
                );
            }
        }
        t.row(line);
    }
    text.table(t);
    text.line(CONDITION);
}

fn find_rate(rates: &[ScaleRow], n: u32, kind: Kind, max_load: u64) -> Option<&ScaleRow> {
    rates
        .iter()
        .find(|r| r.n == n && r.kind == kind && r.max_load == max_load)
}

fn percent(part: u64, whole: u64) -> String {
    format!("{:.2}%", 100.0 * part as f64 / whole.max(1) as f64)
}
