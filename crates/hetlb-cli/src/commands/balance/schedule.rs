//! `hetlb balance --schedule … --gantt …`: transmitting the plan (Rim, Jang & Kim 2003, §§5.2, 6).

use crate::output::{fixed, table};
use crate::plot::{Bar, gantt};
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::Plan;
use hetlb_core::topology::Network;
use hetlb_core::transmission::{Schedule, Transmission, transmit};
use std::path::{Path, PathBuf};

/// The transmissions of `--schedule`, and the charts of `--gantt`.
pub(super) fn transmissions(
    names: &[String],
    gantt_path: Option<&Path>,
    network: &Network,
    plan: &Plan,
) -> Result<Vec<Transmission>> {
    let mut schedules = names
        .iter()
        .map(|s| {
            s.parse::<Schedule>()
                .map_err(|e| anyhow!("--schedule: {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    schedules = crate::input::unique(schedules, "--schedule");
    if schedules.is_empty() && gantt_path.is_some() {
        schedules.push(Schedule::Phased);
    }
    if schedules.is_empty() {
        return Ok(Vec::new());
    }
    if !matches!(network, Network::Hypercube(_)) {
        bail!(
            "--schedule: transmission schedules move hypercube plans; this network is not a hypercube"
        );
    }
    let mut out = Vec::new();
    let mut written = Vec::new();
    for &schedule in &schedules {
        let t = transmit(plan, schedule).map_err(|e| anyhow!("--schedule: {e}"))?;
        if let Some(path) = gantt_path {
            let path = if schedules.len() > 1 {
                suffixed(path, schedule.name())
            } else {
                path.to_path_buf()
            };
            draw_gantt(&path, &t, plan).context("--gantt")?;
            written.push(path);
        }
        out.push(t);
    }
    crate::plot::notice(&written);
    Ok(out)
}

/// `out.svg` → `out-pipeline.svg`.
fn suffixed(path: &std::path::Path, suffix: &str) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{suffix}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{suffix}"),
    };
    path.with_file_name(name)
}

fn draw_gantt(path: &std::path::Path, t: &Transmission, plan: &Plan) -> Result<()> {
    let mut links: Vec<(usize, usize)> = t.bursts.iter().map(|b| (b.from, b.to)).collect();
    links.sort_unstable_by_key(|&(from, to)| ((from ^ to).trailing_zeros(), from, to));
    links.dedup();
    let rows: Vec<String> = links.iter().map(|(a, b)| format!("{a}→{b}")).collect();
    let bars: Vec<Bar> = t
        .bursts
        .iter()
        .map(|b| Bar {
            row: links
                .binary_search_by_key(
                    &((b.from ^ b.to).trailing_zeros(), b.from, b.to),
                    |&(f, to)| ((f ^ to).trailing_zeros(), f, to),
                )
                .unwrap_or(0),
            start: b.start as f64,
            len: b.len as f64,
            color: (b.from ^ b.to).trailing_zeros() as usize,
        })
        .collect();
    let mut dims: Vec<usize> = bars.iter().map(|b| b.color).collect();
    dims.sort_unstable();
    dims.dedup();
    let keys: Vec<(usize, String)> = dims
        .into_iter()
        .map(|d| (d, format!("dimension {d}")))
        .collect();
    gantt(
        path,
        &format!(
            "{} schedule of {} units: {} T_comm, {} links",
            t.schedule,
            plan.initial.iter().map(|&w| u128::from(w)).sum::<u128>(),
            t.steps,
            t.links_used
        ),
        "time (T_comm)",
        &rows,
        &bars,
        &keys,
    )
}

pub(super) fn print_transmissions(ts: &[Transmission]) {
    if ts.is_empty() {
        return;
    }
    let mut t = table([
        "schedule",
        "time (T_comm)",
        "unit-hops",
        "links used",
        "utilisation",
        "rounds",
    ]);
    for x in ts {
        t.add_row(vec![
            x.schedule.to_string(),
            x.steps.to_string(),
            x.units.to_string(),
            x.links_used.to_string(),
            fixed(x.utilisation, 3),
            x.rounds.to_string(),
        ]);
    }
    crate::out!("{t}");
}
