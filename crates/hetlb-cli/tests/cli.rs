//! The `hetlb` binary end to end: good runs and every kind of bad input.

use std::process::{Command, Output};

fn hetlb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hetlb"))
        .args(args)
        .output()
        .expect("run hetlb")
}

/// Asserts a failure with exactly one line on stderr, `error: ...` containing `needle`.
fn fails_with(args: &[&str], needle: &str) {
    let out = hetlb(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: one line expected, got {stderr:?}"
    );
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr:?}");
    assert!(
        stderr.contains(needle),
        "{args:?}: {stderr:?} lacks {needle:?}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr:?}");
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = hetlb(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

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
    let dir = std::env::temp_dir().join(format!("hetlb-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
    run(b("1,2,3"), "power of two");
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
    fails_with(&["reproduce", "chau-table1", "--trials", "0"], "--trials");
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
    assert_eq!(rows[0]["n"], 3);
    assert_eq!(rows[0]["algorithm"], "dem-improved");
    assert!(rows[0]["histogram"].is_object() && rows[0]["average"].is_f64());
    assert_eq!(rows[0]["paper"]["histogram"]["1"], 87_483);
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
    let dir = std::env::temp_dir().join(format!("hetlb-gantt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
