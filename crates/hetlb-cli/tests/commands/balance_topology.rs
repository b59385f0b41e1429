//! `hetlb balance --topology`: every algorithm on every kind of network, and one clear line
//! for every bad graph input.

use super::common;

use common::{error_line, hetlb, json, json_of, scratch};
use std::path::PathBuf;

fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = scratch("topology").join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn bad_graph_files_give_one_line_naming_the_problem() {
    for (name, text, expected) in [
        (
            "self.txt",
            "0 1\n1 2\n2 2\n2 3\n",
            "line 3: self loop at node 2",
        ),
        (
            "dup.txt",
            "0 1\n1 2\n2 1\n2 3\n",
            "line 3: duplicate edge 1 - 2",
        ),
        (
            "range.txt",
            "0 1\n1 2\n2 7\n",
            "line 3: node id 7 is out of range",
        ),
        ("disc.txt", "0 1\n2 3\n", "disconnected"),
        ("syntax.txt", "0 1\n1\n", "line 2: expected two node ids"),
        ("bad.json", "{\"edges\": [[0, 1]", "not a JSON graph"),
        (
            "count.json",
            "{\"nodes\": 5, \"edges\": [[0, 1]]}",
            "declares 5 nodes",
        ),
    ] {
        let path = temp_file(name, text);
        let spec = format!("file:{}", path.display());
        let line = error_line(&["balance", "-a", "dishet", "-t", &spec, "-l", "1,2,3,4"]);
        assert!(line.starts_with("error: --topology: "), "{line}");
        assert!(line.contains(expected), "{name}: {line}");
    }
    // An empty or comment-only file is an empty graph, even for a single load.
    for (name, text) in [
        ("empty.txt", ""),
        ("comments.txt", "# nothing\n\n"),
        ("empty.json", "[]"),
    ] {
        let path = temp_file(name, text);
        let spec = format!("file:{}", path.display());
        for loads in ["5", "1,2,3"] {
            let line = error_line(&["balance", "-a", "diffusion", "-t", &spec, "-l", loads]);
            assert!(line.contains("no edges"), "{name}: {line}");
        }
    }
    let line = error_line(&[
        "balance",
        "-a",
        "dishet",
        "-t",
        "file:/nonexistent/graph.txt",
        "-l",
        "1,2",
    ]);
    assert!(line.contains("cannot read"), "{line}");
}

#[test]
fn bad_specs_and_mismatches_give_one_line_naming_the_option() {
    for (args, option) in [
        (
            vec!["-a", "dishet", "-t", "ring:2", "-l", "1,2"],
            "--topology",
        ),
        (
            vec!["-a", "dishet", "-t", "mesh:4", "-l", "1"],
            "--topology",
        ),
        (
            vec!["-a", "dishet", "-t", "torus:0x3", "-l", "1"],
            "--topology",
        ),
        (
            vec!["-a", "dishet", "-t", "random:8:1.5", "-l", "1"],
            "--topology",
        ),
        (
            vec!["-a", "dishet", "-t", "complete:50000", "-l", "1"],
            "--topology",
        ),
        (
            vec!["-a", "dishet", "-t", "ring:8", "-l", "1,2,3"],
            "--loads",
        ),
        (vec!["-a", "dishet", "-l", "1,2,3"], "--loads"),
        (
            vec!["-a", "dishet", "-t", "ring:4", "-l", "1,2,3,4", "-c", "1,2"],
            "--capacities",
        ),
        (
            vec![
                "-a", "dishet", "-t", "ring:4", "-l", "1,2,3,4", "-c", "1,0,1,1",
            ],
            "--capacities",
        ),
        (
            vec!["-a", "dem", "-t", "ring:4", "-l", "1,2,3,4"],
            "--algorithm",
        ),
        (
            vec![
                "-a", "gdem", "-t", "ring:4", "-l", "1,2,3,4", "--lambda", "1",
            ],
            "--lambda",
        ),
        (
            vec![
                "-a", "dishet", "-t", "ring:4", "-l", "1,2,3,4", "--lambda", "0.6",
            ],
            "--lambda",
        ),
        (
            vec!["-a", "oem", "-l", "1,2,3,4", "--max-rounds", "9"],
            "--max-rounds",
        ),
        (
            vec![
                "-a",
                "diffusion",
                "-t",
                "ring:4",
                "-l",
                "1,2,3,4",
                "--seed",
                "1",
            ],
            "--seed",
        ),
    ] {
        let mut full = vec!["balance"];
        full.extend(args.iter().copied());
        let line = error_line(&full);
        assert!(
            line.starts_with(&format!("error: {option}: ")),
            "{args:?}: {line}"
        );
    }
}

#[test]
fn every_algorithm_runs_on_every_topology_kind() {
    let file = temp_file(
        "square.txt",
        "# a square with a diagonal\n0 1\n1 2\n2 3\n3 0\n0 2\n",
    );
    let file_spec = format!("file:{}", file.display());
    let specs = [
        ("path:5", 5),
        ("ring:6", 6),
        ("mesh:2x3", 6),
        ("torus:3x3", 9),
        ("kary:2:3", 8),
        ("star:5", 5),
        ("complete:4", 4),
        ("hypercube:3", 8),
        ("random:7:0.3:2", 7),
        (file_spec.as_str(), 4),
    ];
    let cube_only = [
        "dem",
        "dem-fixed",
        "dem-improved",
        "dem-hetero",
        "oem",
        "cwa",
        "hybrid",
    ];
    let diffusion = [
        "dishet",
        "dishet-tight",
        "diffusion",
        "random-biasing",
        "dynamic-biasing",
        "gdem",
    ];
    for (spec, n) in specs {
        let loads: Vec<String> = (0..n).map(|i| ((i * 17) % 23).to_string()).collect();
        let loads = loads.join(",");
        let caps: Vec<String> = (0..n).map(|i| (1 + i % 3).to_string()).collect();
        let caps = caps.join(",");
        for alg in cube_only.iter().chain(&diffusion) {
            let out = hetlb(&[
                "balance", "-a", alg, "-t", spec, "-l", &loads, "-c", &caps, "-f", "json",
                "--rounds",
            ]);
            let embeds = spec.starts_with("hypercube") || spec.starts_with("complete");
            if cube_only.contains(alg) && !embeds {
                assert!(!out.status.success(), "{alg} on {spec}");
                continue;
            }
            let report = json_of(&out, &format!("{alg} on {spec}"));
            let sum = |key: &str| -> u64 {
                report[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .sum()
            };
            assert_eq!(sum("initial"), sum("final"), "{alg} on {spec}");
            assert_eq!(report["converged"], true, "{alg} on {spec}");
            let per_round = report["loads_per_round"].as_array().unwrap();
            assert_eq!(per_round.len() as u64, report["rounds"].as_u64().unwrap());
            for key in [
                "max_difference",
                "weighted_imbalance",
                "units_moved",
                "task_hops",
            ] {
                assert!(report["metrics"][key].is_number(), "{key}");
            }
        }
    }
}

#[test]
fn without_a_topology_the_hypercube_is_used_as_before() {
    let report = json(&[
        "balance",
        "-a",
        "oem",
        "-l",
        "4,7,0,9,2,2,8,1",
        "-f",
        "json",
    ]);
    assert_eq!(report["topology"], "hypercube:3");
    assert_eq!(report["phase_dimensions"], serde_json::json!([0, 1, 2]));
    assert_eq!(report["final"], serde_json::json!([4, 4, 5, 4, 4, 4, 4, 4]));
    let report = json(&["balance", "-a", "dishet", "-l", "16,0,0,0", "-f", "json"]);
    assert_eq!(report["final"], serde_json::json!([4, 4, 4, 4]));
}

#[test]
fn the_plot_option_writes_a_chart() {
    let path = std::env::temp_dir().join(format!("hetlb-plot-{}.svg", std::process::id()));
    let out = hetlb(&[
        "balance",
        "-a",
        "dishet",
        "-t",
        "path:4",
        "-l",
        "40,0,0,0",
        "--plot",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("<svg") && svg.contains("node 3"));
    std::fs::remove_file(&path).ok();
}

/// Per-round output only on request, refused above --max-output before anything is written;
/// by default JSON keeps the summary and the final loads, and CSV adds them to the transfers.
#[test]
fn per_round_output_is_bounded_and_on_request() {
    let mut loads = vec!["0".to_string(); 200];
    loads[0] = "1000000000000".into();
    let loads = loads.join(",");
    let base = ["balance", "-a", "diffusion", "-t", "path:200", "-l", &loads];
    let args = [&base[..], &["-f", "json", "--max-rounds", "2000"]].concat();
    let out = hetlb(&args);
    let v = json_of(&out, &args);
    assert!(v.get("loads_per_round").is_none());
    assert_eq!(v["final"].as_array().unwrap().len(), 200);
    let omitted: Vec<&str> = v["omitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(omitted.contains(&"loads_per_round"));
    // The plan's transfers are more than the document lists by default.
    assert!(omitted.contains(&"phases") && v.get("phases").is_none());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rounds"));
    // Asked for, above the output limit: refused before anything is written.
    let out = hetlb(
        &[
            &base[..],
            &[
                "-f",
                "json",
                "--max-rounds",
                "2000",
                "--rounds",
                "--max-output",
                "1",
            ],
        ]
        .concat(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.stdout.is_empty(), "{err}");
    assert!(err.contains("--max-output"), "{err}");
    // CSV: the transfers, then every node's final load and the metrics.
    let out = hetlb(&["balance", "-a", "oem", "-l", "4,7,0,9,2,2,8,1", "-f", "csv"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[0].starts_with("phase,dimension,from,to,units,record"));
    assert_eq!(rows.iter().filter(|r| r.contains(",final,")).count(), 8);
    assert!(
        rows.iter()
            .any(|r| r.contains(",metric,") && r.contains("max_difference"))
    );
    let finals: u64 = rows
        .iter()
        .filter(|r| r.contains(",final,"))
        .map(|r| r.split(',').nth(7).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(finals, 33);
}

/// A plan kept whole (`--rounds`) that outgrows --max-memory stops with one line naming it;
/// summarised while its rounds run, the same balance needs no memory for its transfers.
#[test]
fn a_plan_that_outgrows_the_memory_limit_is_stopped() {
    let mut loads = vec!["0".to_string(); 4096];
    loads[0] = "1000000000000".into();
    let loads = loads.join(",");
    let args = [
        "--max-memory",
        "0.002",
        "balance",
        "-a",
        "dishet",
        "-t",
        "ring:4096",
        "-l",
        &loads,
        "--max-rounds",
        "3000",
    ];
    let out = hetlb(&[&args[..], &["--rounds", "--format", "json"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: --max-memory:"), "{err}");
    let summary = json(&[&args[..], &["--format", "json"]].concat());
    assert!(summary["metrics"]["task_messages"].as_u64().unwrap() > 100_000);
    assert_eq!(
        summary["omitted"],
        serde_json::json!(["phases", "loads_per_round"])
    );
}
