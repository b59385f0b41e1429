//! The page's model from a run's JSON: `hetlb run iterative --format json` or `hetlb run
//! scenario --compare --format json`.

use super::grid::{MAX_COLS, MAX_LINES, MAX_ROWS, band_label, bands, stats};
use super::model::{Bands, Decision, Heat, Line, Model, Scenario};
use crate::error::TraceError;
use serde_json::Value;

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

fn field_error(what: &str) -> TraceError {
    TraceError::Format {
        event: None,
        reason: format!("{what}: missing or not of the expected type"),
    }
}

/// The model of `hetlb run iterative --format json`: every balancer's time per iteration
/// and imbalance before and after each rebalance; the per-rank charts of the best balancer
/// (or the first balanced one).
pub(super) fn iterative(doc: &Value, name: &str) -> Result<Model, TraceError> {
    let balancers = doc["balancers"]
        .as_array()
        .ok_or_else(|| field_error("balancers"))?;
    let mut m = Model {
        title: format!("hetlb report: {name}"),
        kind: "run".into(),
        x_label: "iteration".into(),
        ..Model::default()
    };
    for key in [
        "backend",
        "workers",
        "items",
        "iterations",
        "every",
        "schedule",
        "speeds",
        "best",
    ] {
        if !doc[key].is_null() {
            let v = doc[key]
                .as_str()
                .map_or_else(|| doc[key].to_string(), str::to_string);
            m.summary.push([key.to_string(), v]);
        }
    }
    for (i, b) in balancers.iter().enumerate() {
        let label = b["balancer"].as_str().unwrap_or("?").to_string();
        let secs = numbers(&b["iteration_seconds"]);
        m.iteration_seconds.push(Line {
            label: label.clone(),
            points: secs
                .iter()
                .enumerate()
                .map(|(k, &s)| [(k + 1) as f64, s])
                .collect(),
        });
        let steps = b["steps"]
            .as_array()
            .ok_or_else(|| field_error(&format!("balancers[{i}].steps")))?;
        let mut points = Vec::new();
        for s in steps {
            let it = s["iteration"].as_f64().unwrap_or(0.0);
            if let (Some(x), Some(y)) = (
                s["imbalance_before"].as_f64(),
                s["imbalance_after"].as_f64(),
            ) {
                points.push([it, x]);
                points.push([it + 1e-3, y]);
            }
        }
        if !points.is_empty() {
            m.imbalance.push(Line { label, points });
        }
    }
    let best = doc["best"].as_str();
    let balanced = |b: &&Value| b["steps"].as_array().is_some_and(|s| !s.is_empty());
    let chosen = balancers
        .iter()
        .filter(balanced)
        .find(|b| best.is_some() && b["balancer"].as_str() == best)
        .or_else(|| balancers.iter().find(balanced));
    match chosen {
        Some(b) => {
            let label = b["balancer"].as_str();
            if best.is_some() && label != best {
                m.notes.push(format!(
                    "The fastest run, {}, never rebalanced: the per-rank charts are of {}, \
                     the first run that did.",
                    best.unwrap_or("?"),
                    label.unwrap_or("?")
                ));
            }
            per_rank(&mut m, b);
        }
        None => m
            .notes
            .push("No run rebalanced: the per-rank charts need one.".into()),
    }
    m.notes.push(
        "A run's JSON has each rebalance's loads, not its transfers: the migration matrix \
         needs a trace (hetlb run iterative --trace FILE)."
            .into(),
    );
    Ok(m)
}

/// The per-rank charts of one balancer: loads before and after each rebalance, and the
/// trigger's decisions.
fn per_rank(m: &mut Model, b: &Value) {
    let label = b["balancer"].as_str().unwrap_or("?");
    let steps: Vec<&Value> = b["steps"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let n = steps
        .first()
        .map_or(0, |s| numbers(&s["report"]["loads_before"]).len());
    if n == 0 || steps.is_empty() {
        return;
    }
    let bs = bands(n, MAX_LINES);
    let mut x = Vec::new();
    let mut loads: Vec<Vec<f64>> = Vec::new();
    for s in &steps {
        let it = s["iteration"].as_f64().unwrap_or(0.0);
        for (key, dx) in [("loads_before", 0.0), ("loads_after", 1e-3)] {
            let v = numbers(&s["report"][key]);
            if v.len() == n {
                x.push(it + dx);
                loads.push(v);
            }
        }
        let p = &s["report"]["prediction"];
        m.decisions.push(Decision {
            x: it,
            gain: p["gain_per_iteration"].as_f64(),
            cost: p["move_seconds"].as_f64(),
            held: s["report"]["held_back"].as_bool().unwrap_or(false),
        });
    }
    let mut bands_out = Bands {
        x: x.clone(),
        ..Bands::default()
    };
    for &(first, last) in &bs {
        bands_out.labels.push(band_label("rank", (first, last)));
        let per: Vec<_> = loads
            .iter()
            .map(|v| stats((first..=last).map(|i| Some(v[i]))))
            .collect();
        bands_out
            .mean
            .push(per.iter().map(|s| s.map(|s| s.0)).collect());
        bands_out
            .min
            .push(per.iter().map(|s| s.map(|s| s.1)).collect());
        bands_out
            .max
            .push(per.iter().map(|s| s.map(|s| s.2)).collect());
    }
    m.load = Some(bands_out);
    let rows = bands(n, MAX_ROWS);
    let cols: Vec<usize> = (0..loads.len())
        .step_by(loads.len().div_ceil(MAX_COLS).max(1))
        .collect();
    m.heat = Some(Heat {
        title: format!(
            "{label}: load before and after each rebalance (mean over the ranks of a row)"
        ),
        rows: rows.iter().map(|&r| band_label("rank", r)).collect(),
        cols: cols
            .iter()
            .map(|&c| {
                format!(
                    "{:.0}{}",
                    x[c].floor(),
                    if x[c].fract() > 0.0 {
                        " after"
                    } else {
                        " before"
                    }
                )
            })
            .collect(),
        values: rows
            .iter()
            .map(|&(first, last)| {
                cols.iter()
                    .map(|&c| stats((first..=last).map(|i| Some(loads[c][i]))).map(|s| s.0))
                    .collect()
            })
            .collect(),
    });
    m.summary
        .push(["per-rank charts of".into(), label.to_string()]);
}

/// The model of `hetlb run scenario --compare --format json`: simulated against measured
/// finishing times of every node.
pub(super) fn scenario(doc: &Value, name: &str) -> Result<Model, TraceError> {
    let simulated = numbers(&doc["simulated"]["finish"]);
    let measured = numbers(&doc["measured"]["finish"]);
    if simulated.is_empty() || simulated.len() != measured.len() {
        return Err(field_error("simulated.finish and measured.finish"));
    }
    let mut m = Model {
        title: format!("hetlb report: {name}"),
        kind: "scenario".into(),
        x_label: "node".into(),
        ..Model::default()
    };
    for key in ["name", "scenario", "policy", "backend", "time_scale"] {
        if !doc[key].is_null() {
            let v = doc[key]
                .as_str()
                .map_or_else(|| doc[key].to_string(), str::to_string);
            m.summary.push([key.to_string(), v]);
        }
    }
    for key in ["makespan", "total_idle", "tasks_moved"] {
        if let (Some(s), Some(x)) = (
            doc["simulated"][key].as_f64(),
            doc["measured"][key].as_f64(),
        ) {
            m.summary.push([
                format!("{key}: simulated / measured"),
                format!("{s:.4} / {x:.4}"),
            ]);
        }
    }
    if let Some(w) = doc["warnings"].as_array() {
        m.notes
            .extend(w.iter().filter_map(Value::as_str).map(str::to_string));
    }
    m.scenario = Some(Scenario {
        nodes: (0..simulated.len()).map(|i| format!("node {i}")).collect(),
        simulated,
        measured,
    });
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(best: &str) -> Value {
        let step = serde_json::json!({
            "iteration": 3,
            "imbalance_before": 1.5,
            "imbalance_after": 1.0,
            "report": {"loads_before": [30, 10], "loads_after": [20, 20],
                       "prediction": {"gain_per_iteration": 0.1, "move_seconds": 0.01}}
        });
        serde_json::json!({
            "best": best,
            "balancers": [
                {"balancer": "none", "iteration_seconds": [0.1, 0.1], "steps": []},
                {"balancer": "cwa", "iteration_seconds": [0.1, 0.1], "steps": [step]},
            ]
        })
    }

    #[test]
    fn the_per_rank_charts_are_of_a_run_that_rebalanced_even_when_none_was_fastest() {
        for best in ["cwa", "none"] {
            let m = iterative(&run(best), "run.json").unwrap();
            let load = m.load.as_ref().expect("a load chart");
            assert_eq!(load.x, vec![3.0, 3.001], "best {best}");
            assert!(m.heat.is_some() && m.decisions.len() == 1, "best {best}");
            let named = m.notes.iter().any(|n| n.contains("never rebalanced"));
            assert_eq!(named, best == "none", "best {best}: {:?}", m.notes);
        }
    }

    #[test]
    fn a_document_where_no_run_rebalanced_says_so() {
        let mut doc = run("none");
        doc["balancers"][1]["steps"] = serde_json::json!([]);
        let m = iterative(&doc, "run.json").unwrap();
        assert!(m.load.is_none() && m.decisions.is_empty());
        assert!(m.notes.iter().any(|n| n.contains("No run rebalanced")));
    }
}
