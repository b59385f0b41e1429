//! Charts: the primitives of `hetlb-plot` under the names the commands use, the notice that
//! names the files written, and the per-processor bars of a master-worker run.

use anyhow::Result;
use hetlb_runtime::ProcessorReport;
use std::path::{Path, PathBuf};

pub use hetlb_plot::{Axes, Bar, Downsampler, Series, Stack};

/// [`hetlb_plot::line_chart`].
pub fn line_chart(path: &Path, title: &str, x: &str, y: &str, series: &[Series]) -> Result<()> {
    Ok(hetlb_plot::line_chart(path, title, x, y, series)?)
}

/// [`hetlb_plot::line_chart_with`].
pub fn line_chart_with(path: &Path, title: &str, axes: &Axes, series: &[Series]) -> Result<()> {
    Ok(hetlb_plot::line_chart_with(path, title, axes, series)?)
}

/// [`hetlb_plot::gantt`].
pub fn gantt(
    path: &Path,
    title: &str,
    x_label: &str,
    rows: &[String],
    bars: &[Bar],
    keys: &[(usize, String)],
) -> Result<()> {
    Ok(hetlb_plot::gantt(path, title, x_label, rows, bars, keys)?)
}

/// The one notice, on stderr, that names the plot files a command wrote.
pub fn notice(paths: &[PathBuf]) {
    match paths {
        [] => {}
        [one] => eprintln!("note: plot written to {}", one.display()),
        many => {
            let dirs: std::collections::BTreeSet<_> =
                many.iter().filter_map(|p| p.parent()).collect();
            match dirs.iter().next() {
                Some(dir) if dirs.len() == 1 && !dir.as_os_str().is_empty() => notice_dir(dir),
                _ => eprintln!(
                    "note: plots written to {}",
                    many.iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
    }
}

/// The notice for a command that wrote its plots into `dir`.
pub fn notice_dir(dir: &Path) {
    eprintln!("note: plots written to {}/", dir.display());
}

/// Several runs' time per processor side by side, one panel each (captioned by the run's
/// name): the computation, communication and wait of every processor.
pub fn processor_times_by_run(
    path: &Path,
    title: &str,
    runs: &[(String, &[ProcessorReport])],
) -> Result<()> {
    let Some((_, first)) = runs.first() else {
        return Ok(());
    };
    let cats: Vec<String> = first
        .iter()
        .map(|p| format!("{} ({})", p.processor, p.role))
        .collect();
    let stacks: Vec<[Stack; 3]> = runs
        .iter()
        .map(|(_, processors)| {
            let pick = |f: fn(&ProcessorReport) -> f64| processors.iter().map(f).collect();
            [
                Stack::new("T_comp", pick(|p| p.t_comp)),
                Stack::new("T_comm", pick(|p| p.t_comm)),
                Stack::new("T_wait", pick(|p| p.t_wait)),
            ]
        })
        .collect();
    let labels: Vec<String> = runs
        .iter()
        .map(|(name, _)| format!("{name}: seconds"))
        .collect();
    let panels: Vec<(&str, &[Stack])> = labels
        .iter()
        .zip(&stacks)
        .map(|(l, s)| (l.as_str(), &s[..]))
        .collect();
    Ok(hetlb_plot::stacked_bar_panels(path, title, &cats, &panels)?)
}

/// The per-processor bar charts of Aldasht, Ortega & Puntonet (Figs. 4–8): work done and the
/// time split into computation, communication and wait, one bar per processor.
pub fn processor_bars(
    path: &Path,
    title: &str,
    unit: &str,
    processors: &[ProcessorReport],
) -> Result<()> {
    let cats: Vec<String> = processors
        .iter()
        .map(|p| format!("{} ({})", p.processor, p.role))
        .collect();
    let pick = |f: fn(&ProcessorReport) -> f64| processors.iter().map(f).collect();
    let times = [
        Stack::new("T_comp", pick(|p| p.t_comp)),
        Stack::new("T_comm", pick(|p| p.t_comm)),
        Stack::new("T_wait", pick(|p| p.t_wait)),
    ];
    let work = [Stack::new(unit, pick(|p| p.rows as f64))];
    let panels: [(&str, &[Stack]); 2] = [(unit, &work), ("seconds", &times)];
    Ok(hetlb_plot::stacked_bar_panels(path, title, &cats, &panels)?)
}
