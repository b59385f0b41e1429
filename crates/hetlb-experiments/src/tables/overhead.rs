//! What `rim-overhead` prints: the time to transmit a plan (Rim, Jang & Kim 2003, §§5.2 and
//! 6.3) beside the paper's reading.

use crate::overhead::{
    ALGORITHMS, FACTORS, Overhead, OverheadRow, mean_oem_over_cwa, oem_over_cwa, row,
};
use crate::paper::rim::SUM_TMAX_OEM_OVER_CWA;
use hetlb_core::Algorithm;
use hetlb_core::table::{Table, Text, fixed};

/// One line per size, imbalance and rule: the three schedules' times, normalised, and the
/// task-hops.
pub fn csv(rows: &[OverheadRow]) -> Table {
    let mut t = Table::new([
        "procs",
        "imbalance",
        "algorithm",
        "instances",
        "phased",
        "overlap",
        "pipeline",
        "overlap_normalised",
        "pipeline_normalised",
        "task_hops",
    ]);
    for r in rows {
        t.row([
            r.procs.to_string(),
            r.imbalance.to_string(),
            r.algorithm.to_string(),
            r.instances.to_string(),
            format!("{:.3}", r.phased),
            format!("{:.3}", r.overlap),
            format!("{:.3}", r.pipeline),
            format!("{:.4}", r.overlap_normalised),
            format!("{:.4}", r.pipeline_normalised),
            format!("{:.3}", r.task_hops),
        ]);
    }
    t
}

/// Per number of processors `procs`: overlap and pipeline normalised by phased per rule and
/// imbalance, Σ Tmax of CWA and OEM and their ratio beside the paper's. `experiment` holds the
/// settings shared by every size (base, repetitions, seed, imbalances).
pub fn text(experiment: &Overhead, procs: &[usize], rows: &[OverheadRow]) -> Text {
    let mut text = Text::new();
    text.line("Rim, Jang & Kim, §§5.2 and 6.3 — time to transmit the plan, in T_comm");
    text.line(format!(
        "light processors hold {} units, heavy ones k × {} for k in {:?}; {} random heavy sets per (imbalance, k), seed {}",
        experiment.base,
        experiment.base,
        FACTORS,
        experiment.repetitions,
        experiment.seed
    ));
    text.line("overlap and pipeline are normalised by the phased time of the same algorithm (paper: Figs. 22–23)");
    for &procs in procs {
        text.line(format!("\n{procs} processors"));
        let mut t = Table::new([
            "imbalance",
            "cwa overlap",
            "cwa pipeline",
            "dem overlap",
            "dem pipeline",
            "oem overlap",
            "oem pipeline",
            "Σ Tmax cwa",
            "Σ Tmax oem",
            "oem / cwa",
            "task-hops cwa",
            "task-hops oem",
        ]);
        for &imb in &experiment.imbalances {
            let mut line = vec![format!("{imb}%")];
            for alg in ALGORITHMS {
                let r = row(rows, procs, imb, alg);
                line.push(
                    r.map(|r| fixed(r.overlap_normalised, 3))
                        .unwrap_or_default(),
                );
                line.push(
                    r.map(|r| fixed(r.pipeline_normalised, 3))
                        .unwrap_or_default(),
                );
            }
            let (cwa, oem) = (
                row(rows, procs, imb, Algorithm::Cwa),
                row(rows, procs, imb, Algorithm::Oem),
            );
            if let (Some(c), Some(o), Some(ratio)) = (cwa, oem, oem_over_cwa(rows, procs, imb)) {
                line.extend([
                    fixed(c.phased, 1),
                    fixed(o.phased, 1),
                    fixed(ratio, 3),
                    fixed(c.task_hops, 1),
                    fixed(o.task_hops, 1),
                ]);
            }
            t.row(line);
        }
        text.table(t);
        if let Some(mean) = mean_oem_over_cwa(rows, procs, &experiment.imbalances) {
            text.line(format!(
                "Σ Tmax, OEM against CWA (mean over imbalances): {} — paper (§5.2, Figs. 12–13): OEM about {:.0}% lower, i.e. about {:.2}",
                fixed(mean, 3),
                100.0 * (1.0 - SUM_TMAX_OEM_OVER_CWA),
                SUM_TMAX_OEM_OVER_CWA
            ));
        }
    }
    text
}
