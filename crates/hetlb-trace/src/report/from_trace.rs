//! The page's model from a trace (checked beforehand).

use super::grid::{
    MAX_BANDS, MAX_COLS, MAX_LINES, MAX_POINTS, MAX_ROWS, band_label, band_of, bands, even, sample,
    stats, thin,
};
use super::model::{Bands, Decision, Heat, Line, Matrix, Model};
use serde_json::Value;
use std::collections::BTreeMap;

/// What the trace holds, per rank (by process id).
#[derive(Default)]
struct Read {
    names: BTreeMap<u64, String>,
    group: Option<u64>,
    imbalance: Vec<[f64; 2]>,
    load: BTreeMap<u64, Vec<[f64; 2]>>,
    compute: BTreeMap<u64, Vec<f64>>,
    /// Per rank, every compute span's (start, end) on the axis.
    busy: BTreeMap<u64, Vec<(f64, f64)>>,
    /// (from pid, to pid, units, bytes) of every flow's start; flows without `from`/`to`
    /// are resolved by their ids.
    flows: Vec<(u64, u64, f64, f64)>,
    decisions: BTreeMap<u64, Vec<Decision>>,
    pids: std::collections::BTreeSet<u64>,
    end: f64,
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// The first number among an event's arguments.
fn first_number(e: &Value) -> Option<f64> {
    e.get("args")?.as_object()?.values().find_map(Value::as_f64)
}

/// `events` read, times divided by `per_unit` microseconds (seconds, or rounds).
fn read(events: &[Value], per_unit: f64) -> Read {
    let mut r = Read::default();
    let mut flow_pids: BTreeMap<u64, (Option<u64>, Option<u64>, f64, f64)> = BTreeMap::new();
    for e in events {
        let ph = e.get("ph").and_then(Value::as_str).unwrap_or("");
        let name = e.get("name").and_then(Value::as_str).unwrap_or("");
        let pid = e.get("pid").and_then(Value::as_u64).unwrap_or(0);
        let ts = num(e, "ts").unwrap_or(0.0) / per_unit;
        r.end = r.end.max(ts + num(e, "dur").unwrap_or(0.0) / per_unit);
        match (ph, name) {
            ("M", "process_name") => {
                let n = e["args"]["name"].as_str().unwrap_or("").to_string();
                if n == "group" {
                    r.group = Some(pid);
                } else {
                    r.names.insert(pid, n);
                }
            }
            ("M", _) => {}
            ("C", "imbalance") => r.imbalance.extend(first_number(e).map(|v| [ts, v])),
            ("C", "load") => {
                r.pids.insert(pid);
                r.load
                    .entry(pid)
                    .or_default()
                    .extend(first_number(e).map(|v| [ts, v]));
            }
            ("X", "compute") => {
                r.pids.insert(pid);
                let dur = num(e, "dur").unwrap_or(0.0);
                // Compute seconds, whatever the axis.
                r.compute.entry(pid).or_default().push(dur / 1e6);
                r.busy
                    .entry(pid)
                    .or_default()
                    .push((ts, ts + dur / per_unit));
            }
            ("s" | "f", _) => {
                let id = e.get("id").and_then(Value::as_u64).unwrap_or(0);
                let a = &e["args"];
                let slot = flow_pids.entry(id).or_insert((None, None, 0.0, 0.0));
                if ph == "s" {
                    slot.0 = Some(a.get("from").and_then(Value::as_u64).unwrap_or(pid));
                    slot.2 = num(a, "units").unwrap_or(1.0);
                    slot.3 = num(a, "bytes").unwrap_or(0.0);
                } else {
                    slot.1 = Some(a.get("to").and_then(Value::as_u64).unwrap_or(pid));
                }
            }
            ("i" | "I", "decision" | "held back") => {
                let a = &e["args"];
                let margin = num(a, "margin").unwrap_or(0.0);
                let cost = num(a, "predicted_move_s").map(|c| c * margin.max(1.0));
                r.decisions.entry(pid).or_default().push(Decision {
                    x: ts,
                    gain: num(a, "predicted_gain_over_horizon_s"),
                    cost,
                    held: name == "held back",
                });
            }
            _ => {
                if ph != "M" && Some(pid) != r.group {
                    r.pids.insert(pid);
                }
            }
        }
    }
    r.flows = flow_pids
        .into_values()
        .filter_map(|(from, to, units, bytes)| Some((from?, to?, units, bytes)))
        .collect();
    if let Some(g) = r.group {
        r.pids.remove(&g);
    }
    r.pids.extend(r.names.keys().copied());
    r
}

/// The model of a trace `doc`.
pub(super) fn model(doc: &Value, name: &str) -> Model {
    let empty = Vec::new();
    let events = match doc {
        Value::Array(a) => a,
        _ => doc["traceEvents"].as_array().unwrap_or(&empty),
    };
    let other = doc.get("otherData").cloned().unwrap_or(Value::Null);
    let clock = other["clock"].as_str().unwrap_or("wall");
    let (per_unit, x_label) = match clock {
        "simulated" => (1e6, "simulated seconds"),
        c if c.starts_with("rounds") => (1e3, "round"),
        _ => (1e6, "seconds"),
    };
    let r = read(events, per_unit);
    let ranks: Vec<u64> = r.pids.iter().copied().collect();
    let index: BTreeMap<u64, usize> = ranks.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    let prefix = if r.names.values().any(|n| n.starts_with("node")) {
        "node"
    } else {
        "rank"
    };
    let mut m = Model {
        title: format!("hetlb report: {name}"),
        kind: "trace".into(),
        x_label: x_label.into(),
        ..Model::default()
    };
    summary(&mut m, &other, &r, ranks.len(), events.len());
    if !r.imbalance.is_empty() {
        let label = other["rule"]
            .as_str()
            .or(other["policy"].as_str())
            .unwrap_or("imbalance");
        m.imbalance.push(Line {
            label: label.to_string(),
            points: thin(&r.imbalance, MAX_POINTS),
        });
    }
    m.load = load_bands(&r, &ranks, prefix);
    m.heat = heat(&r, &ranks, prefix, m.load.as_ref());
    m.utilisation = utilisation(&r, &ranks, prefix);
    m.migrations = migrations(&r, &index, ranks.len(), prefix);
    // Every rank records the same decisions: the first rank's are drawn, those predicted.
    m.decisions = r
        .decisions
        .values()
        .next()
        .map(|d| {
            d.iter()
                .filter(|d| d.gain.is_some() || d.cost.is_some())
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    for (what, missing) in [
        ("imbalance", m.imbalance.is_empty()),
        ("load", m.load.is_none()),
        ("migrations", m.migrations.is_none()),
        (
            "prediction of the trigger (measured speeds give one)",
            m.decisions.is_empty(),
        ),
    ] {
        if missing {
            m.notes.push(format!("The trace records no {what}."));
        }
    }
    m
}

fn summary(m: &mut Model, other: &Value, r: &Read, ranks: usize, events: usize) {
    let mut row = |k: &str, v: String| m.summary.push([k.to_string(), v]);
    for key in [
        "source", "scenario", "rule", "policy", "topology", "backend", "clock",
    ] {
        if let Some(v) = other[key].as_str() {
            row(key, v.to_string());
        }
    }
    row("ranks", ranks.to_string());
    row("events", events.to_string());
    let units: f64 = r.flows.iter().map(|f| f.2).sum();
    row("transfers", format!("{} ({} units)", r.flows.len(), units));
    if let Some(d) = other["events_dropped"].as_u64().filter(|&d| d > 0) {
        row("events dropped past the limit", d.to_string());
    }
    if let Some(s) = other["counter_stride"].as_u64().filter(|&s| s > 1) {
        row("counter samples kept", format!("one in {s}"));
    }
}

fn load_bands(r: &Read, ranks: &[u64], prefix: &str) -> Option<Bands> {
    if r.load.is_empty() {
        return None;
    }
    let hi = r
        .load
        .values()
        .flatten()
        .map(|p| p[0])
        .fold(0.0, f64::max)
        .max(r.end);
    let grid = even(0.0, hi, MAX_POINTS);
    let bs = bands(ranks.len(), MAX_LINES);
    let sampled: Vec<Vec<Option<f64>>> = ranks
        .iter()
        .map(|p| {
            r.load
                .get(p)
                .map_or(vec![None; grid.len()], |s| sample(s, &grid))
        })
        .collect();
    let mut out = Bands {
        x: grid.clone(),
        ..Bands::default()
    };
    for &(first, last) in &bs {
        out.labels.push(band_label(prefix, (first, last)));
        let band = &sampled[first..=last];
        let per: Vec<_> = (0..grid.len())
            .map(|k| stats(band.iter().map(|s| s[k])))
            .collect();
        out.mean.push(per.iter().map(|s| s.map(|s| s.0)).collect());
        out.min.push(per.iter().map(|s| s.map(|s| s.1)).collect());
        out.max.push(per.iter().map(|s| s.map(|s| s.2)).collect());
    }
    Some(out)
}

/// Compute seconds per step when the trace has steps; the load over time otherwise.
fn heat(r: &Read, ranks: &[u64], prefix: &str, load: Option<&Bands>) -> Option<Heat> {
    let bs = bands(ranks.len(), MAX_ROWS);
    let rows: Vec<String> = bs.iter().map(|&b| band_label(prefix, b)).collect();
    let steps = r.compute.values().map(Vec::len).max().unwrap_or(0);
    if steps > 0 {
        let per = steps.div_ceil(MAX_COLS);
        let cols: Vec<String> = (0..steps)
            .step_by(per)
            .map(|s| {
                if per == 1 {
                    format!("{}", s + 1)
                } else {
                    format!("{}–{}", s + 1, (s + per).min(steps))
                }
            })
            .collect();
        let values = bs
            .iter()
            .map(|&(first, last)| {
                (0..cols.len())
                    .map(|c| {
                        stats((first..=last).flat_map(|i| {
                            let v = r.compute.get(&ranks[i]);
                            (c * per..((c + 1) * per).min(steps))
                                .map(move |s| v.and_then(|v| v.get(s)).copied())
                        }))
                        .map(|s| s.0)
                    })
                    .collect()
            })
            .collect();
        return Some(Heat {
            title: "compute seconds per step (mean over the ranks of a row)".into(),
            rows,
            cols,
            values,
        });
    }
    let grid: Vec<f64> = even(0.0, load?.x.last().copied().unwrap_or(0.0), MAX_COLS);
    let values = bs
        .iter()
        .map(|&(first, last)| {
            let sampled: Vec<Vec<Option<f64>>> = (first..=last)
                .map(|i| {
                    r.load
                        .get(&ranks[i])
                        .map_or(vec![None; grid.len()], |s| sample(s, &grid))
                })
                .collect();
            (0..grid.len())
                .map(|k| stats(sampled.iter().map(|s| s[k])).map(|s| s.0))
                .collect()
        })
        .collect();
    Some(Heat {
        title: "load over time (mean over the ranks of a row)".into(),
        rows,
        cols: grid.iter().map(|x| format!("{x:.3}")).collect(),
        values,
    })
}

fn migrations(r: &Read, index: &BTreeMap<u64, usize>, n: usize, prefix: &str) -> Option<Matrix> {
    if r.flows.is_empty() || n == 0 {
        return None;
    }
    let bs = bands(n, MAX_BANDS);
    let mut units = vec![vec![0.0; bs.len()]; bs.len()];
    let mut out = Matrix {
        labels: bs.iter().map(|&b| band_label(prefix, b)).collect(),
        ..Matrix::default()
    };
    for &(from, to, u, bytes) in &r.flows {
        let (Some(&a), Some(&b)) = (index.get(&from), index.get(&to)) else {
            continue;
        };
        units[band_of(&bs, a)][band_of(&bs, b)] += u;
        out.bytes += bytes;
        out.transfers += 1;
    }
    out.units = units;
    Some(out)
}

/// The share of each time bin that each band of ranks spent computing (steps reported).
fn utilisation(r: &Read, ranks: &[u64], prefix: &str) -> Option<Heat> {
    if r.busy.is_empty() || r.end <= 0.0 {
        return None;
    }
    let bs = bands(ranks.len(), MAX_ROWS);
    let width = r.end / MAX_COLS as f64;
    let mut busy = vec![vec![0.0; MAX_COLS]; ranks.len()];
    for (i, p) in ranks.iter().enumerate() {
        for &(start, end) in r.busy.get(p).map_or(&[][..], Vec::as_slice) {
            let first = ((start / width) as usize).min(MAX_COLS - 1);
            let last = ((end / width) as usize).min(MAX_COLS - 1);
            for (k, cell) in busy[i].iter_mut().enumerate().take(last + 1).skip(first) {
                let (lo, hi) = (k as f64 * width, (k + 1) as f64 * width);
                *cell += (end.min(hi) - start.max(lo)).max(0.0) / width;
            }
        }
    }
    let values = bs
        .iter()
        .map(|&(first, last)| {
            (0..MAX_COLS)
                .map(|k| stats((first..=last).map(|i| Some(busy[i][k].min(1.0)))).map(|s| s.0))
                .collect()
        })
        .collect();
    Some(Heat {
        title: "share of each time bin spent computing (mean over the ranks of a row)".into(),
        rows: bs.iter().map(|&b| band_label(prefix, b)).collect(),
        cols: (0..MAX_COLS)
            .map(|k| format!("{:.3}", k as f64 * width))
            .collect(),
        values,
    })
}
