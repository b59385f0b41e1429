//! The layout of rendered PNG charts, checked on their pixels: every kind of chart keeps its
//! legend outside the plot (data) area, its y range close to the data, and its titles apart
//! from everything else and whole.

use hetlb_plot::check::{Rect, check_chart, data_reach};
use hetlb_plot::{
    Axes, Bar, Series, Stack, gantt, line_chart_with, stacked_bar_panels, stacked_bars,
};
use std::path::PathBuf;

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hetlb-plot-layout-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The loads of a ring of 16 nodes balanced from 800 units on node 0: node 0 falls from 800,
/// the others rise towards the mean of 50.
fn ring_like() -> Vec<Series> {
    (0..16)
        .map(|i| {
            let points = (0..=45)
                .map(|r| {
                    let r = f64::from(r);
                    let mean = 50.0;
                    let y = if i == 0 {
                        mean + 750.0 * (-r / 3.0).exp()
                    } else {
                        mean * (1.0 - (-(r - f64::from(i.min(16 - i))).max(0.0) / 6.0).exp())
                    };
                    (r, y)
                })
                .collect();
            Series::new(format!("node {i}"), points)
        })
        .collect()
}

/// The data of every plot area reach its top quarter (the y range is not stretched).
fn assert_reach(p: &hetlb_plot::check::Picture, plots: &[Rect], legends: &[Rect], what: &str) {
    for plot in plots {
        let reach = data_reach(p, plot, legends).unwrap_or(0.0);
        assert!(
            reach >= 0.75,
            "{what}: the data reach {:.0}% of the plot area's height {plot:?}, not its top quarter",
            reach * 100.0
        );
    }
}

#[test]
fn line_chart_legend_outside_the_data_and_y_range_fits_the_data() {
    let dir = scratch("line");
    let path = dir.join("ring.png");
    let title = "dishet on ring:16, 800 units: load of every node";
    line_chart_with(
        &path,
        title,
        &Axes::new("round", "load (units)").integer_x(),
        &ring_like(),
    )
    .unwrap();
    let (p, l) = check_chart(&path, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.plots.len(), 1, "{l:?}");
    assert_reach(&p, &l.plots, &l.legends, "line chart");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn line_chart_with_marks_and_few_series() {
    let dir = scratch("marks");
    let path = dir.join("marks.png");
    let axes = Axes::new("iteration", "ms")
        .integer_x()
        .marks(vec![3.5, 7.5], "rebalance");
    let series = [
        Series::new(
            "cwa",
            (0..12)
                .map(|i| (f64::from(i), f64::from(10 - i % 4)))
                .collect(),
        ),
        Series::new(
            "oem",
            (0..12)
                .map(|i| (f64::from(i), f64::from(3 + i % 3)))
                .collect(),
        ),
    ];
    line_chart_with(&path, "Iteration time", &axes, &series).unwrap();
    let (p, l) = check_chart(&path, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_reach(&p, &l.plots, &l.legends, "line chart with marks");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn stacked_bars_legend_outside_the_bars() {
    let dir = scratch("bars");
    let path = dir.join("bars.png");
    let cats: Vec<String> = (0..4).map(|i| format!("P{i} (worker)")).collect();
    let stacks = [
        Stack::new("T_comp", vec![4.0, 3.5, 2.0, 4.2]),
        Stack::new("T_comm", vec![0.5, 0.4, 0.6, 0.3]),
        Stack::new("T_wait", vec![0.0, 0.6, 2.0, 0.0]),
    ];
    stacked_bars(&path, "Time per processor", &cats, "seconds", &stacks).unwrap();
    let (p, l) = check_chart(&path, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_reach(&p, &l.plots, &l.legends, "stacked bars");
    std::fs::remove_dir_all(&dir).ok();
}

/// The EFP figure: two panels, one title across them, each panel captioned; no title overlaps
/// another or is cut, no legend sits on the bars.
#[test]
fn bar_panels_legends_outside_and_titles_apart() {
    let dir = scratch("panels");
    let path = dir.join("efp.png");
    let cats: Vec<String> = (0..9)
        .map(|i| format!("{i} ({})", if i == 0 { "master" } else { "worker" }))
        .collect();
    let rows = [Stack::new(
        "rows",
        vec![0.0, 400.0, 120.0, 120.0, 125.0, 120.0, 118.0, 122.0, 121.0],
    )];
    let times = [
        Stack::new("T_comp", vec![0.1, 3.0, 2.8, 2.9, 3.0, 2.9, 2.8, 3.0, 2.9]),
        Stack::new("T_comm", vec![0.4, 0.2, 0.2, 0.3, 0.2, 0.2, 0.3, 0.2, 0.2]),
        Stack::new("T_wait", vec![2.7, 0.0, 0.2, 0.0, 0.0, 0.1, 0.1, 0.0, 0.1]),
    ];
    let panels: [(&str, &[Stack]); 2] = [("rows", &rows), ("seconds", &times)];
    let title = "EFP — matmul 1200×1200, 9 processors, slowdowns 1,3,3,3,3,3,3,3,3";
    stacked_bar_panels(&path, title, &cats, &panels).unwrap();
    let (p, l) = check_chart(&path, 2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.plots.len(), 2, "{l:?}");
    assert!(
        l.titles.len() >= 3,
        "the figure's title and two captions: {l:?}"
    );
    assert_reach(&p, &l.plots, &l.legends, "bar panels");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn gantt_key_outside_the_rows() {
    let dir = scratch("gantt");
    let path = dir.join("gantt.png");
    let rows: Vec<String> = (0..8).map(|i| format!("{i} → {}", i ^ 1)).collect();
    let bars: Vec<Bar> = (0..8)
        .flat_map(|row| {
            (0..3).map(move |phase| Bar {
                row,
                start: f64::from(phase * 4 + (row as u32 % 2)),
                len: 3.0,
                color: phase as usize,
            })
        })
        .collect();
    let keys: Vec<(usize, String)> = (0..3).map(|i| (i, format!("phase {}", i + 1))).collect();
    gantt(&path, "Links of the plan", "step", &rows, &bars, &keys).unwrap();
    let (p, l) = check_chart(&path, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_reach(&p, &l.plots, &l.legends, "gantt");
    std::fs::remove_dir_all(&dir).ok();
}
