//! `--trace FILE`, `hetlb trace` and `hetlb report`, end to end: the traces pass the Trace
//! Event format check, the reports are whole pages, and bad paths and damaged inputs give
//! one line `error: …` and leave nothing behind.

use super::common;

use common::{command, error_of, fails_with, hetlb, root, scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn scenario() -> String {
    root()
        .join("examples/scenarios/mirtaheri-compensated.toml")
        .display()
        .to_string()
}

fn checked(path: &Path) -> hetlb_trace::Summary {
    let text = std::fs::read_to_string(path).unwrap();
    hetlb_trace::check(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run_ok(args: &[&str]) {
    let out = hetlb(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const SMALL_RUN: [&str; 12] = [
    "run",
    "iterative",
    "--procs",
    "4",
    "--slowdown",
    "1,3,3,3",
    "--iterations",
    "10",
    "--cost",
    "20",
    "--items",
    "512",
];

#[test]
fn simulate_writes_a_trace_in_simulated_time() {
    let dir = scratch("trace-sim");
    let path = dir.join("sim.json");
    run_ok(&["simulate", &scenario(), "--trace", path.to_str().unwrap()]);
    let s = checked(&path);
    assert_eq!(s.processes, 7, "six nodes and the group: {s:?}");
    assert!(s.flows > 0 && s.counters > 0);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["otherData"]["clock"], "simulated");
}

#[test]
fn tracing_leaves_the_simulators_output_unchanged() {
    let dir = scratch("trace-sim-same");
    let plain = hetlb(&["simulate", &scenario(), "--format", "json"]);
    let traced = hetlb(&[
        "simulate",
        &scenario(),
        "--format",
        "json",
        "--trace",
        dir.join("t.json").to_str().unwrap(),
    ]);
    assert!(plain.status.success() && traced.status.success());
    assert_eq!(plain.stdout, traced.stdout);
}

#[test]
fn run_iterative_writes_one_trace_per_balancer() {
    let dir = scratch("trace-run");
    let path = dir.join("run.json");
    let mut args = SMALL_RUN.to_vec();
    args.extend([
        "--algorithm",
        "cwa,dem,none",
        "--trace",
        path.to_str().unwrap(),
    ]);
    run_ok(&args);
    for rule in ["cwa", "dem"] {
        let part = dir.join(format!("run-{rule}.json"));
        let s = checked(&part);
        assert_eq!(s.processes, 5, "{rule}: {s:?}");
        assert!(s.spans > 0 && s.counters > 0, "{rule}: {s:?}");
    }
    assert!(
        !path.exists(),
        "one file per balancer, none by the plain name"
    );
}

#[test]
fn bad_trace_paths_are_refused_before_the_run() {
    let dir = scratch("trace-bad");
    let missing = dir.join("no/such/dir/t.json");
    let mut cases = vec![
        dir.to_str().unwrap().to_string(),
        missing.to_str().unwrap().to_string(),
    ];
    if Path::new("/dev/full").exists() {
        cases.push("/dev/full".into());
    }
    for bad in &cases {
        fails_with(
            &["simulate", &scenario(), "--trace", bad],
            "--trace: cannot write the trace",
        );
        let mut args = SMALL_RUN.to_vec();
        args.extend(["--algorithm", "cwa", "--trace", bad]);
        fails_with(&args, "--trace: cannot write the trace");
    }
    fails_with(
        &[
            "--max-output",
            "1",
            "simulate",
            &scenario(),
            "--trace",
            dir.join("big.json").to_str().unwrap(),
        ],
        "--trace",
    );
    assert!(!dir.join("big.json").exists());
}

#[test]
fn trace_check_and_merge() {
    let dir = scratch("trace-merge");
    let path = dir.join("sim.json");
    run_ok(&["simulate", &scenario(), "--trace", path.to_str().unwrap()]);
    let out = hetlb(&["trace", "check", path.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("7 processes"));
    let merged = dir.join("merged.json");
    run_ok(&[
        "trace",
        "merge",
        path.to_str().unwrap(),
        path.to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ]);
    // The same part twice: its flow ids start twice.
    assert!(hetlb_trace::check(&std::fs::read_to_string(&merged).unwrap()).is_err());
}

fn report(input: &Path, output: &Path) -> std::process::Output {
    command()
        .args([
            "report",
            input.to_str().unwrap(),
            "-o",
            output.to_str().unwrap(),
        ])
        .output()
        .unwrap()
}

fn page(path: &Path) -> String {
    let html = std::fs::read_to_string(path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    html
}

#[test]
fn reports_of_a_trace_and_of_a_runs_json() {
    let dir = scratch("report");
    let trace = dir.join("t.json");
    let mut args = SMALL_RUN.to_vec();
    args.extend(["--algorithm", "cwa", "--trace", trace.to_str().unwrap()]);
    run_ok(&args);
    let html = dir.join("t.html");
    assert!(report(&trace, &html).status.success());
    let p = page(&html);
    for id in [
        "chart-imbalance",
        "chart-load",
        "chart-heat",
        "chart-matrix",
        "chart-arrows",
    ] {
        assert!(p.contains(&format!("id=\"{id}\"")), "{id}");
    }
    let mut args = SMALL_RUN.to_vec();
    args.extend(["--algorithm", "cwa,none", "--format", "json"]);
    let out = hetlb(&args);
    let run_json = dir.join("run.json");
    std::fs::write(&run_json, &out.stdout).unwrap();
    let html = dir.join("run.html");
    assert!(report(&run_json, &html).status.success());
    assert!(page(&html).contains("\"iteration_seconds\":[{"));
}

#[test]
fn a_damaged_input_gives_one_line_and_no_page() {
    let dir = scratch("report-bad");
    let trace = dir.join("t.json");
    run_ok(&["simulate", &scenario(), "--trace", trace.to_str().unwrap()]);
    let text = std::fs::read_to_string(&trace).unwrap();
    let cases: Vec<(PathBuf, String, &str)> = vec![
        (
            dir.join("cut.json"),
            text[..text.len() / 3].to_string(),
            "at byte",
        ),
        (
            dir.join("event.json"),
            r#"{"traceEvents":[{"ph":"C","ts":0,"pid":0,"tid":0}]}"#.into(),
            "event 0: no \"name\"",
        ),
        (
            dir.join("other.json"),
            "{\"x\": 1}".into(),
            "neither a trace",
        ),
        (dir.join("empty.json"), String::new(), "at byte 0"),
    ];
    for (path, body, needle) in cases {
        std::fs::write(&path, body).unwrap();
        let html = dir.join("out.html");
        let out = report(&path, &html);
        let line = error_of(&out, &path);
        assert!(line.contains(needle), "{line}");
        assert!(!html.exists(), "{}: a page was left", path.display());
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    let out = report(&trace, &dir);
    assert!(error_of(&out, &dir).contains("--output"));
}

#[test]
fn balance_trace_is_a_file_and_rounds_keeps_the_vectors() {
    let dir = scratch("trace-balance");
    let path = dir.join("plan.json");
    let loads = ["--loads", "10,0,0,0,5,3,2,8", "--algorithm", "dem"];
    let mut args = vec!["balance"];
    args.extend(loads);
    let plain = hetlb(&args);
    args.extend(["--trace", path.to_str().unwrap()]);
    let traced = hetlb(&args);
    assert_eq!(plain.stdout, traced.stdout, "the table does not change");
    let s = checked(&path);
    assert_eq!(s.processes, 9, "eight nodes and the group");
    assert_eq!(s.flows, 7);
    let mut rounds = vec!["balance", "--format", "json", "--rounds"];
    rounds.extend(loads);
    let out = common::json(&rounds);
    assert!(out["loads_per_round"].is_array());
}
