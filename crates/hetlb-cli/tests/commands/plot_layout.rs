//! The layout of the PNG charts the commands write, checked on their pixels
//! (`hetlb_plot::check`): the legend outside the plot area, the y axis spanning the data,
//! titles apart and whole.

use super::common;

use common::{hetlb, scratch, stdout_of};
use hetlb_plot::check::{Picture, check_chart, data_reach, layout};

/// `balance --plot` on a ring of 16 nodes, 800 units on node 0: the y axis ends near 800 (it
/// went up to 2000 to make room for a legend drawn over the data), and the legend sits
/// outside the plot area.
#[test]
fn balance_plot_keeps_the_legend_off_the_data_and_the_axis_near_it() {
    let dir = scratch("plot-layout-balance");
    let path = dir.join("ring.png");
    let mut loads = vec!["0"; 16];
    loads[0] = "800";
    let loads = loads.join(",");
    let args = [
        "balance",
        "-a",
        "dishet",
        "-t",
        "ring:16",
        "--loads",
        &loads,
        "--plot",
        path.to_str().unwrap(),
    ];
    stdout_of(&hetlb(&args), &args);
    let p = Picture::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let l = layout(&p);
    assert_eq!(l.plots.len(), 1, "{l:?}");
    let reach = data_reach(&p, &l.plots[0], &l.legends).unwrap_or(0.0);
    assert!(
        reach >= 0.75,
        "the highest load reaches {:.0}% of the plot area's height, not its top quarter: {l:?}",
        reach * 100.0
    );
    check_chart(&path, 1).unwrap_or_else(|e| panic!("{e}"));
    std::fs::remove_dir_all(&dir).ok();
}

/// `run --plot` draws two panels of bars under one title: each panel's legend outside its
/// bars, no title over another or cut at the edge.
#[test]
fn run_plot_panels_keep_legends_and_titles_apart() {
    let dir = scratch("plot-layout-run");
    let path = dir.join("run.png");
    let args = [
        "run",
        "synthetic",
        "--size",
        "60",
        "--cost",
        "1000",
        "--procs",
        "3",
        "--no-check",
        "--plot",
        path.to_str().unwrap(),
    ];
    stdout_of(&hetlb(&args), &args);
    let (_, l) = check_chart(&path, 2).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.plots.len(), 2, "{l:?}");
    assert!(l.titles.len() >= 3, "the title and two captions: {l:?}");
    std::fs::remove_dir_all(&dir).ok();
}
