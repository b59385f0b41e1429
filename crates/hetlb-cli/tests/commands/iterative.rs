//! `hetlb run iterative` and `hetlb replay` end to end.

use super::common;

use common::{error_line, fails_with, hetlb, json, json_of, scratch, stdout_of};
use hetlb_core::algorithm::Algorithm;

use serde_json::Value;

const SMALL: [&str; 8] = [
    "--items",
    "256",
    "--iterations",
    "6",
    "--every",
    "2",
    "--cost",
    "20",
];

fn iterative(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["run", "iterative"].iter().map(|s| s.to_string()).collect();
    v.extend(SMALL.iter().map(|s| s.to_string()));
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn json_has_every_balancer_step_and_rank() {
    let v = iterative(&[
        "--balancer",
        "all",
        "--workers",
        "4",
        "--slowdown",
        "1,3,3,3",
        "--format",
        "json",
    ]);
    let d = json(&args(&v));
    let balancers = d["balancers"].as_array().unwrap();
    let names: Vec<&str> = balancers
        .iter()
        .map(|b| b["balancer"].as_str().unwrap())
        .collect();
    // Four ranks are a hypercube: every rule, then none.
    let every: Vec<&str> = Algorithm::all().map(|a| a.name()).chain(["none"]).collect();
    assert_eq!(names, every);
    for b in balancers {
        assert!(b["total_seconds"].as_f64().unwrap() > 0.0);
        let ranks = b["ranks"].as_array().unwrap();
        assert_eq!(ranks.len(), 4);
        let items: u64 = ranks.iter().map(|r| r["items"].as_u64().unwrap()).sum();
        assert_eq!(items, 256, "every item exactly once");
        for r in ranks {
            assert!(r["units"].as_u64().is_some() && r["busy_seconds"].as_f64().is_some());
        }
        let steps = b["steps"].as_array().unwrap();
        let expected = if b["balancer"] == "none" { 0 } else { 2 };
        assert_eq!(steps.len(), expected);
        for s in steps {
            for f in ["imbalance_before", "imbalance_after", "seconds"] {
                assert!(s[f].as_f64().is_some(), "{f}");
            }
            for f in ["items_moved", "bytes"] {
                assert!(s[f].as_u64().is_some(), "{f}");
            }
        }
    }
}

#[test]
fn six_ranks_run_every_rule() {
    let v = iterative(&["--balancer", "all", "--workers", "6", "--format", "json"]);
    let d = json(&args(&v));
    let names: Vec<&str> = d["balancers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["balancer"].as_str().unwrap())
        .collect();
    // Six ranks are no hypercube: the hypercube rules run embedded in one, then the rules
    // that run on any network, then none.
    let every: Vec<&str> = Algorithm::all().map(|a| a.name()).chain(["none"]).collect();
    assert_eq!(names, every);
    // The hypercube rules on complete:6 (embedded in a cube), the others on a ring.
    for b in d["balancers"].as_array().unwrap() {
        let name = b["balancer"].as_str().unwrap();
        let Ok(rule) = name.parse::<Algorithm>() else {
            continue;
        };
        let expected = if rule.needs_hypercube() {
            "complete:6"
        } else {
            "ring:6"
        };
        assert_eq!(b["steps"][0]["report"]["topology"], expected, "{name}");
    }
}

/// The dump records what the rule saw; `hetlb balance` on those inputs gives the recorded plan,
/// and with unit items the ranks hold exactly the plan.
#[test]
fn dumps_agree_with_hetlb_balance_and_replay() {
    let dir = scratch("dump");
    let dump = dir.join("steps.jsonl");
    for (rule, extra) in [
        (
            "dem-hetero",
            vec!["--workers", "4", "--slowdown", "1,2,3,1"],
        ),
        (
            "dishet",
            vec![
                "--workers",
                "6",
                "--topology",
                "ring:6",
                "--drift",
                "hotspot:5",
            ],
        ),
        ("oem", vec!["--workers", "8", "--schedule", "pipeline"]),
    ] {
        let mut e = vec![
            "--balancer",
            rule,
            "--dump",
            dump.to_str().unwrap(),
            "--format",
            "json",
        ];
        e.extend(extra.iter().copied());
        let v = iterative(&e);
        json(&args(&v));
        let text = std::fs::read_to_string(&dump).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{rule}");
        for l in &lines {
            for f in [
                "step",
                "algorithm",
                "topology",
                "capacities",
                "loads_before",
                "planned_after",
                "loads_after",
            ] {
                assert!(!l[f].is_null(), "{rule}: {f}");
            }
            let list = |f: &str| -> String {
                l[f].as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let b = json(&[
                "balance",
                "--algorithm",
                rule,
                "--topology",
                l["topology"].as_str().unwrap(),
                "--loads",
                &list("loads_before"),
                "--capacities",
                &list("capacities"),
                "--format",
                "json",
            ]);
            assert_eq!(b["final"], l["planned_after"], "{rule}: the rule's plan");
            if rule != "dishet" {
                // unit items (no drift): the ranks hold exactly the plan
                assert_eq!(l["loads_after"], l["planned_after"], "{rule}");
            }
        }
        let out = hetlb(&[
            "replay",
            dump.to_str().unwrap(),
            "--algorithm",
            "all",
            "--format",
            "csv",
        ]);
        let csv = stdout_of(&out, &dump);
        assert!(csv.starts_with("step,algorithm,recorded,imbalance_before,imbalance_after"));
        assert!(csv.contains("(recorded)"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_arguments_get_one_clear_line() {
    let base = iterative(&[]);
    let with = |extra: &[&str]| -> Vec<String> {
        let mut v = base.clone();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    fails_with(&args(&with(&["--balancer", "dem-superb"])), "--algorithm");
    fails_with(&args(&with(&["--algorithm", "oem,,cwa"])), "--algorithm");
    fails_with(&args(&with(&["--drift", "hotspot:0"])), "--drift");
    fails_with(&args(&with(&["--drift", "wave"])), "--drift");
    fails_with(&args(&with(&["--schedule", "teleport"])), "--schedule");
    fails_with(&args(&with(&["--speeds", "guessed"])), "--speeds");
    fails_with(&args(&with(&["--every", "0"])), "--every");
    fails_with(&args(&with(&["--iterations", "-1"])), "--iterations");
    fails_with(
        &args(&with(&["--workers", "3", "--slowdown", "1,2"])),
        "--slowdown",
    );
    fails_with(&args(&with(&["--workers", "0"])), "--procs");
    fails_with(&args(&with(&["--procs", "1000000"])), "--procs");
    fails_with(&args(&with(&["--items", "-5"])), "--items");
    fails_with(&args(&with(&["--iterations", "-1"])), "--iterations");
    fails_with(&args(&with(&["--timeout", "0"])), "--timeout");
    fails_with(
        &args(&with(&["--topology", "ring:5", "--balancer", "dishet"])),
        "--topology",
    );
    fails_with(
        &["run", "iterative", "--items", "18446744073709551615"],
        "--items",
    );
    fails_with(
        &[
            "run",
            "iterative",
            "--items",
            "1000000",
            "--item-bytes",
            "100000000",
        ],
        "--item-bytes",
    );
    if !cfg!(feature = "mpi") {
        fails_with(&args(&with(&["--backend", "mpi"])), "built without MPI");
    }
    let missing = hetlb(&["replay", "/nonexistent/steps.jsonl"]);
    assert!(!missing.status.success());
    let dir = scratch("bad-dump");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, "{\"step\": 1}\n").unwrap();
    fails_with(&["replay", bad.to_str().unwrap()], "line 1");
    std::fs::write(
        &bad,
        "{\"step\":1,\"algorithm\":\"oem\",\"topology\":\"hypercube:1\",\"capacities\":[1,0],\"loads_before\":[1,2],\"loads_after\":[2,1]}\n",
    )
    .unwrap();
    fails_with(&["replay", bad.to_str().unwrap()], "capacities");
    std::fs::write(&bad, "").unwrap();
    fails_with(&["replay", bad.to_str().unwrap()], "no recorded rebalance");
    std::fs::remove_dir_all(&dir).ok();
}

/// A dump may come from someone else: a topology file it names is read bounded and never
/// echoed; devices, FIFOs and endless lines are refused at once, each with one line.
#[test]
fn replay_reads_dumps_and_the_files_they_name_within_bounds() {
    let dir = scratch("replay-bounds");
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "root:x:0:0:the-first-line-of-a-private-file\n").unwrap();
    let dump = dir.join("steps.jsonl");
    std::fs::write(
        &dump,
        format!(
            "{{\"step\":1,\"algorithm\":\"dishet\",\"topology\":\"file:{}\",\"capacities\":[1,1],\
             \"loads_before\":[3,1],\"loads_after\":[3,1]}}\n",
            secret.display()
        ),
    )
    .unwrap();
    let err = error_line(&["replay", dump.to_str().unwrap()]);
    assert!(
        err.contains("not a graph file") && err.contains("line 1"),
        "{err}"
    );
    assert!(
        !err.contains("private"),
        "the file's contents were echoed: {err}"
    );
    fails_with(&["replay", "/dev/zero"], "regular files only");
    let long = dir.join("long.jsonl");
    std::fs::write(&long, "a".repeat(65 << 20)).unwrap();
    fails_with(&["replay", long.to_str().unwrap()], "longer than 64 MiB");
    let fifo = dir.join("fifo");
    if std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        fails_with(&["replay", fifo.to_str().unwrap()], "FIFO");
        fails_with(
            &[
                "balance",
                "-a",
                "dem",
                "--loads",
                &format!("@{}", fifo.display()),
            ],
            "FIFO",
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Counts have ranges that negative numbers and lists report too; repeated values run once.
#[test]
fn every_count_has_a_range_and_repeats_run_once() {
    fails_with(
        &["balance", "-a", "oem", "--loads", "1,2", "--seed", "-1"],
        "-1 is out of range",
    );
    fails_with(
        &[
            "balance",
            "-a",
            "diffusion",
            "-t",
            "ring:3",
            "-l",
            "1,2,3",
            "--max-rounds",
            "-5",
        ],
        "-5 is out of range",
    );
    fails_with(
        &[
            "run",
            "matmul",
            "--size",
            "10",
            "--procs",
            "2",
            "--slowdown",
            "-1,1",
        ],
        "--slowdown: value 1 ('-1')",
    );
    fails_with(
        &["reproduce", "chau-table1", "--runs", "18446744073709551615"],
        "out of range",
    );
    fails_with(
        &["run", "synthetic", "--cost", "18446744073709551615"],
        "out of range",
    );
    fails_with(
        &["reproduce", "dishet", "--mean-degree", "0"],
        "--mean-degree",
    );
    let out = hetlb(&[
        "balance",
        "-a",
        "dem",
        "-l",
        "4,4",
        "--schedule",
        "overlap,overlap",
        "-f",
        "json",
    ]);
    let v = json_of(&out, &"--schedule overlap,overlap");
    assert_eq!(v["transmission"].as_array().unwrap().len(), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("given more than once"));
    let help = String::from_utf8_lossy(&hetlb(&["--help"]).stdout).to_string();
    assert!(
        help.lines().next().unwrap_or("").contains("replay"),
        "{help}"
    );
}

#[test]
fn a_move_priced_above_its_gain_is_held_back_and_a_free_one_is_not() {
    // Measured speeds make every rebalance carry a prediction; a move priced at 10 s per
    // unit never pays within 2 iterations, a free one always moves (the slowdowns make the
    // group unbalanced).
    let run = |cost: &str| {
        let v = iterative(&[
            "--algorithm",
            "cwa",
            "--workers",
            "4",
            "--slowdown",
            "1,3,3,3",
            "--trigger",
            "auto:2:1",
            "--move-cost",
            cost,
            "--format",
            "json",
        ]);
        json(&args(&v))["balancers"][0].clone()
    };
    let dear = run("0,10");
    let steps = dear["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    for s in steps {
        assert_eq!(s["report"]["held_back"], true);
        assert!(s["report"]["prediction"]["move_seconds"].as_f64().unwrap() > 0.0);
        assert_eq!(s["items_moved"], 0);
    }
    let items: u64 = dear["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["items"].as_u64().unwrap())
        .sum();
    assert_eq!(items, 256, "every item exactly once");
    let free = run("0,0");
    let steps = free["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s["report"]["held_back"] == false));
    let moved: u64 = steps
        .iter()
        .map(|s| s["items_moved"].as_u64().unwrap())
        .sum();
    assert!(moved > 0, "a free move of an unbalanced group goes ahead");
}

#[test]
fn trigger_errors_name_their_flag() {
    let with = |extra: &[&str]| {
        let mut v = iterative(&["--algorithm", "cwa", "--workers", "4"]);
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    fails_with(&args(&with(&["--trigger", "soon"])), "--trigger");
    fails_with(
        &args(&with(&["--trigger", "auto", "--speeds", "equal"])),
        "--trigger",
    );
    fails_with(&args(&with(&["--move-cost", "1"])), "--move-cost");
    fails_with(&args(&with(&["--move-cost", "-1,0"])), "--move-cost");
}
