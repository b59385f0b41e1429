//! The `hetlb` binary end to end: good runs and every kind of bad input.

use super::common;

use common::{command, fails_with, hetlb, json, scratch};

#[test]
fn balance_json_has_the_documented_fields() {
    let v = json(&[
        "balance",
        "--algorithm",
        "oem",
        "--loads",
        "4,7,0,9,2,2,8,1",
        "--format",
        "json",
    ]);
    assert_eq!(v["final"].as_array().unwrap().len(), 8);
    assert_eq!(
        v["final"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .sum::<u64>(),
        33
    );
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 3);
    let t = &phases[0][0];
    assert!(t["from"].is_u64() && t["to"].is_u64() && t["units"].is_u64());
    for key in [
        "max_difference",
        "weighted_imbalance",
        "units_moved",
        "task_hops",
        "messages",
        "sum_tmax",
        "phases",
    ] {
        assert!(v["metrics"].get(key).is_some(), "metrics.{key}");
    }
}

#[test]
fn balance_reads_loads_from_files_and_takes_capacities() {
    let dir = scratch("cli");
    let file = dir.join("loads.json");
    std::fs::write(&file, "[640, 960, 640, 960]").unwrap();
    let spec = format!("@{}", file.display());
    let v = json(&[
        "balance",
        "-a",
        "dem-hetero",
        "-l",
        &spec,
        "-c",
        "64,32,64,32",
        "-f",
        "json",
    ]);
    assert_eq!(v["phases"][0][0]["units"], 427);
    let out = hetlb(&["balance", "-a", "cwa", "-l", &spec, "-f", "csv"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("phase,dimension,from,to,units"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_bad_input_gets_one_line() {
    let b = |loads: &str| {
        vec!["balance", "--algorithm", "dem", "--loads", loads]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let run = |args: Vec<String>, needle: &str| {
        fails_with(&args.iter().map(String::as_str).collect::<Vec<_>>(), needle)
    };
    let dishet = |loads: &str| -> Vec<String> {
        ["balance", "--algorithm", "dishet", "--loads", loads]
            .map(String::from)
            .to_vec()
    };
    run(dishet("1,2,3"), "give --topology for other networks");
    run(b(""), "no values");
    run(b("1,-2"), "negative");
    run(b("1,2.5"), "whole number");
    run(b("1,abc"), "not a non-negative integer");
    run(b("@/definitely/not/here"), "cannot read");
    run(b("18446744073709551615,1"), "add up to more than");
    run(b("18446744073709551616,1"), "larger than");
    for bad in ["0", "-1", "nan", "inf"] {
        let mut args = b("1,2");
        args.extend(["--capacities".into(), format!("1,{bad}")]);
        run(args, "--capacities");
    }
    let mut args = b("1,2,3,4");
    args.extend(["--capacities".into(), "1,2".into()]);
    run(args, "2 capacities given for 4 nodes");
    let mut args = b("1,2");
    args.extend(["--capacities".into(), "1,x".into()]);
    run(args, "not a number");
    fails_with(
        &["balance", "-a", "magic", "-l", "1,2"],
        "unknown algorithm",
    );
    fails_with(
        &[
            "balance",
            "-a",
            "hybrid",
            "-l",
            "1,2,3,4",
            "--procs-per-group",
            "3",
        ],
        "--procs-per-group",
    );
    fails_with(
        &[
            "balance",
            "-a",
            "hybrid",
            "-l",
            "1,2,3,4",
            "--procs-per-group",
            "8",
        ],
        "--procs-per-group",
    );
    fails_with(
        &[
            "balance",
            "-a",
            "oem",
            "-l",
            "1,2,3,4",
            "--procs-per-group",
            "2",
        ],
        "only applies to hybrid",
    );
    fails_with(&["balance", "-a", "oem"], "--loads");
    fails_with(&["reproduce", "rim-table1", "--procs", "12"], "--procs");
    fails_with(
        &["reproduce", "chau-table1", "--trials", "0"],
        "--runs <N>': 0 is out of range",
    );
    fails_with(&["reproduce", "chau-table1", "--dims", "30"], "--dims");
    fails_with(&["enumerate", "-a", "oem", "-p", "6", "-v", "3"], "--procs");
    fails_with(
        &["enumerate", "-a", "oem", "-p", "8", "-v", "500"],
        "--values",
    );
    fails_with(
        &["enumerate", "-a", "oem", "-p", "1024", "-v", "100"],
        "--values",
    );
}

#[test]
fn rim_table1_oem_matches_the_paper_for_8_processors() {
    let v = json(&[
        "reproduce",
        "rim-table1",
        "--procs",
        "8",
        "--format",
        "json",
    ]);
    let rows = v.as_array().unwrap();
    let oem = rows.iter().find(|r| r["algorithm"] == "oem").unwrap();
    assert_eq!(oem["procs"], 8);
    assert_eq!(oem["matches_paper"], true);
    assert_eq!(oem["histogram"]["2"], 68_802);
    assert!(oem["paper"]["histogram"].is_object());
}

#[test]
fn rim_table1_accepts_64_processors_and_checks_memory_first() {
    // The 64-processor enumeration runs in seconds in release builds (docs/results.md); here
    // only its memory check, which comes before anything is allocated.
    fails_with(
        &[
            "--max-memory",
            "0.01",
            "reproduce",
            "rim-table1",
            "--procs",
            "64",
        ],
        "--procs: enumerating 1329890705 vectors of 64 processors",
    );
    fails_with(&["reproduce", "rim-table1", "--procs", "128"], "--procs");
}

#[test]
fn chau_hetero_measures_the_claim_against_the_optimum() {
    let v = json(&[
        "reproduce",
        "chau-hetero",
        "--dims",
        "2-3",
        "--runs",
        "40",
        "--no-plots",
        "--format",
        "json",
    ]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        let classes: u64 = r["classes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(classes, 40);
        assert!(r["mean_optimal"].as_f64().unwrap() <= r["mean_dem_hetero"].as_f64().unwrap());
        let worst = &r["worst"]["clusters"];
        assert_eq!(
            worst["loads"].as_array().unwrap().len(),
            1 << r["n"].as_u64().unwrap()
        );
    }
    fails_with(&["reproduce", "chau-hetero", "--dims", "0-3"], "--dims");
    fails_with(&["reproduce", "chau-hetero", "--runs", "-1"], "--runs");
}

#[test]
fn chau_json_rows_carry_ours_and_the_papers() {
    let v = json(&[
        "reproduce",
        "chau-table2",
        "--trials",
        "2000",
        "--dims",
        "3-4",
        "--format",
        "json",
    ]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // Parse a histogram object {"d": count} into (d, count) pairs.
    let histogram = |h: &serde_json::Value| -> Vec<(f64, f64)> {
        h.as_object()
            .unwrap()
            .iter()
            .map(|(d, c)| (d.parse::<f64>().unwrap(), c.as_f64().unwrap()))
            .collect()
    };
    for (row, n) in rows.iter().zip([3, 4]) {
        assert_eq!(row["n"], n);
        assert_eq!(row["algorithm"], "dem-improved");
        // Ours: every trial counted once, the average that of the histogram.
        let ours = histogram(&row["histogram"]);
        let trials: f64 = ours.iter().map(|x| x.1).sum();
        assert_eq!(trials, 2000.0);
        let mean = ours.iter().map(|(d, c)| d * c).sum::<f64>() / trials;
        assert!(
            (row["average"].as_f64().unwrap() - mean).abs() < 1e-9,
            "{row}"
        );
        // The paper's row is the one of the same n (its printed average is its histogram's,
        // to the two decimals printed), and |z| compares the two histograms.
        let paper = histogram(&row["paper"]["histogram"]);
        let paper_trials: f64 = paper.iter().map(|x| x.1).sum();
        let paper_mean = paper.iter().map(|(d, c)| d * c).sum::<f64>() / paper_trials;
        assert!((row["paper"]["average"].as_f64().unwrap() - paper_mean).abs() <= 0.0051);
        let count = |h: &[(f64, f64)], d: f64| h.iter().find(|x| x.0 == d).map_or(0.0, |x| x.1);
        let z = (0..8)
            .map(|d| {
                let (c1, c2) = (count(&ours, d as f64), count(&paper, d as f64));
                let p = (c1 + c2) / (trials + paper_trials);
                let sigma = (p * (1.0 - p) * (1.0 / trials + 1.0 / paper_trials)).sqrt();
                if sigma == 0.0 {
                    0.0
                } else {
                    ((c1 / trials - c2 / paper_trials) / sigma).abs()
                }
            })
            .fold(0.0, f64::max);
        assert!(
            (row["max_abs_z"].as_f64().unwrap() - z).abs() < 1e-9,
            "{row}"
        );
    }
}

#[test]
fn balance_transmits_the_plan_under_each_schedule() {
    let v = json(&[
        "balance",
        "-a",
        "dem",
        "-l",
        "15,1,1,1,1,1,1,1",
        "--schedule",
        "phased,overlap,pipeline",
        "-f",
        "json",
    ]);
    let steps: Vec<u64> = v["transmission"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["steps"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, vec![12, 10, 7]);
    let dir = scratch("gantt");
    let gantt = dir.join("links.svg");
    let out = hetlb(&[
        "balance",
        "-a",
        "oem",
        "-l",
        "9,0,0,3",
        "--schedule",
        "pipeline",
        "--gantt",
        gantt.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&gantt).unwrap().contains("<svg"));
    std::fs::remove_dir_all(&dir).ok();
    fails_with(
        &["balance", "-a", "dem", "-l", "1,2", "--schedule", "fast"],
        "--schedule",
    );
    fails_with(
        &[
            "balance",
            "-a",
            "diffusion",
            "-t",
            "ring:4",
            "-l",
            "1,2,3,4",
            "--schedule",
            "phased",
        ],
        "--schedule",
    );
    fails_with(
        &["balance", "-a", "dem", "-l", "1,2", "--gantt", "/tmp/x.pdf"],
        "--gantt",
    );
}

/// Writing to a full disk ends in one `error:` line and a non-zero exit, in every format of
/// every command; a closed pipe stays quiet.
#[test]
fn a_full_disk_is_one_error_line_and_a_closed_pipe_is_quiet() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // not a Linux machine
    };
    let commands: &[&[&str]] = &[
        &["balance", "-a", "oem", "--loads", "4,7,0,9,2,2,8,1"],
        &["enumerate", "-a", "oem", "--procs", "4", "--values", "5"],
        &["reproduce", "chau-table1", "--runs", "50", "--dims", "3"],
        &["simulate", "examples/scenarios/mirtaheri-balanced.toml"],
        &[
            "run",
            "synthetic",
            "--size",
            "30",
            "--cost",
            "10",
            "--procs",
            "2",
        ],
        &["bench", "transmission", "--dims", "4", "--runs", "1"],
        &[
            "run",
            "iterative",
            "--items",
            "64",
            "--iterations",
            "2",
            "--every",
            "1",
            "--cost",
            "1",
            "--balancer",
            "cwa",
        ],
        &[
            "run",
            "scenario",
            "examples/scenarios/mirtaheri-no-balancing.toml",
            "--work",
            "sleep",
            "--target-seconds",
            "0.1",
        ],
        &[
            "bench",
            "rebalance",
            "--items",
            "1000",
            "--runs",
            "1",
            "--unit-items",
            "10",
            "--calls",
            "5",
        ],
    ];
    for args in commands {
        for format in ["table", "json", "csv"] {
            let out = command()
                .args(*args)
                .args(["--format", format])
                .stdout(full.try_clone().unwrap())
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let errors: Vec<&str> = stderr
                .lines()
                .filter(|l| !l.starts_with("note:") && !l.starts_with("warning:"))
                .collect();
            assert!(!out.status.success(), "{args:?} {format}: {stderr}");
            assert_eq!(errors.len(), 1, "{args:?} {format}: {stderr}");
            assert!(
                errors[0].starts_with("error: cannot write to stdout"),
                "{args:?} {format}: {stderr}"
            );
        }
    }
    // A reader that goes away: quiet, successful.
    let mut child = command()
        .args(["enumerate", "-a", "oem", "--procs", "8", "--values", "6"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One name per idea, the old names kept; lists as the help shows them; negative numbers
/// get their range.
#[test]
fn one_command_line() {
    for args in [
        &[
            "reproduce",
            "rim-overhead",
            "--procs",
            "8",
            "16",
            "--runs",
            "2",
            "--no-plots",
        ][..],
        &[
            "reproduce",
            "rim-overhead",
            "--procs",
            "8,16",
            "--repetitions",
            "2",
            "--no-plots",
        ],
        &["bench", "transmission", "--dims", "4", "--repeat", "1"],
        &["bench", "transmission", "--dims", "4", "--runs", "1"],
    ] {
        let out = hetlb(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    fails_with(
        &["enumerate", "-a", "oem", "--procs", "-4", "--values", "3"],
        "-4 is out of range: allowed 1 to",
    );
    fails_with(
        &["enumerate", "-a", "oem", "--procs", "3", "--values", "3"],
        "--procs: 3 processors given, but a hypercube needs a power of two",
    );
    fails_with(
        &["enumerate", "-a", "oem", "--procs", "64", "--values", "10"],
        "--procs: enumerating",
    );
    let csv = hetlb(&[
        "bench",
        "transmission",
        "--dims",
        "8",
        "--runs",
        "1",
        "--format",
        "csv",
    ]);
    assert!(csv.status.success(), "bench prints CSV");
    fails_with(
        &["reproduce", "rim-overhead", "--base", "0", "--no-plots"],
        "--base <BASE>': 0 is out of range",
    );
    let help = String::from_utf8_lossy(&hetlb(&["--help"]).stdout).to_string();
    for command in [
        "balance",
        "reproduce",
        "enumerate",
        "bench",
        "simulate",
        "run",
    ] {
        assert!(help.contains(&format!("  {command} ")), "{help}");
    }
}

/// CWA's promise holds for every total the input accepts: each node within one unit of its
/// share, computed exactly from the decimal capacities typed.
#[test]
fn cwa_shares_are_exact_for_huge_totals() {
    let v = json(&[
        "balance",
        "-a",
        "cwa",
        "--loads",
        "100000000000000000,0,0,0",
        "--capacities",
        "0.1,1000,3,0.3",
        "--format",
        "json",
    ]);
    let w: [u128; 4] = [1, 10_000, 30, 3]; // the capacities × 10
    let den: u128 = w.iter().sum();
    let total: u128 = 100_000_000_000_000_000;
    for (f, wi) in v["final"].as_array().unwrap().iter().zip(w) {
        let f = u128::from(f.as_u64().unwrap());
        assert!(
            (f * den).abs_diff(total * wi) < den,
            "{f} vs {}",
            total * wi / den
        );
    }
}
