//! `hetlb simulate` and the simulator's reproductions, end to end.

use super::common;

use common::{command, error_of, fails_with, json, json_of, root, scratch, stdout};
use std::path::PathBuf;

/// The one error line of `hetlb simulate path`.
fn simulate_error(path: &std::path::Path) -> String {
    let out = command().arg("simulate").arg(path).output().unwrap();
    error_of(&out, &path)
}

/// Every example scenario: those that also run on real workers (`examples/scenarios`) and the
/// simulator-only ones (`examples/simulator`).
fn examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["examples/scenarios", "examples/simulator"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root().join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_example_scenario_runs_in_every_format() {
    let dir = scratch("simulate");
    for path in examples() {
        for format in ["table", "json", "csv"] {
            let out = command()
                .arg("simulate")
                .arg(&path)
                .args(["--format", format])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{path:?} {format}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8(out.stdout).unwrap();
            match format {
                "json" => {
                    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                    assert!(v["makespan"].as_f64().unwrap() > 0.0);
                    assert!(v["events"].as_u64().unwrap() > 0);
                }
                "csv" => assert!(text.starts_with("node,finish,busy,idle")),
                _ => assert!(text.contains("makespan (s)")),
            }
        }
        let plot = dir.join(format!(
            "{}.svg",
            path.file_stem().unwrap().to_string_lossy()
        ));
        let out = command()
            .arg("simulate")
            .arg(&path)
            .arg("--plot")
            .arg(&plot)
            .output()
            .unwrap();
        assert!(out.status.success(), "{path:?}");
        assert!(std::fs::read_to_string(&plot).unwrap().contains("<svg"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_scenario_gives_one_line_and_fails() {
    let dir = scratch("bad");
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "[nodes]\ncount = 2\nrate = -5.0\n[topology]\nkind = \"ring\"\n",
    )
    .unwrap();
    let err = simulate_error(&path);
    assert!(
        err.contains("nodes.rate: -5 must be positive and finite (line 3)"),
        "{err}"
    );
    let err = simulate_error(&dir.join("missing.toml"));
    assert!(err.contains("cannot read"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn same_seed_same_output() {
    let path = root().join("examples/scenarios/rim-dynamic.toml");
    let run = |seed: &str| {
        command()
            .arg("simulate")
            .arg(&path)
            .args(["--format", "json", "--seed", seed])
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(run("5"), run("5"));
    assert_ne!(run("5"), run("6"));
}

#[test]
fn reproduce_mirtaheri_prints_the_paper_beside_ours() {
    let v = json(&[
        "reproduce",
        "mirtaheri",
        "--runs",
        "3",
        "--no-plots",
        "--format",
        "json",
    ]);
    let rows = v["scenarios"].as_array().unwrap();
    let fig8 = rows
        .iter()
        .find(|r| r["case"] == "fig8" && r["measure"] == "makespan")
        .unwrap();
    assert_eq!(fig8["paper"], "2.6");
    assert!((fig8["deterministic"].as_f64().unwrap() - 2.6).abs() < 1e-9);
    // The sweep: with compensation never worse than k = 1 at any ratio.
    let sweep = v["sweep"].as_array().unwrap();
    for ratio in [0.1, 0.5, 1.0, 4.0] {
        let at = |policy: &str| {
            sweep
                .iter()
                .find(|r| r["ratio"].as_f64() == Some(ratio) && r["policy"] == policy)
                .unwrap()["makespan"]
                .as_f64()
                .unwrap()
        };
        assert!(at("eq. 25") <= at("k = 1") + 1e-9, "ratio {ratio}");
        assert!(
            at("best single transfer") <= at("eq. 25") + 1e-9,
            "ratio {ratio}"
        );
    }
}

#[test]
fn reproduce_rim_dynamic_runs_small() {
    let text = stdout(&[
        "reproduce",
        "rim-dynamic",
        "--procs",
        "8",
        "--arrivals",
        "200",
        "--runs",
        "2",
        "--no-plots",
        "--format",
        "csv",
    ]);
    // Header plus none, dem, oem, dem-improved, cwa.
    assert_eq!(text.lines().count(), 6, "{text}");
    fails_with(
        &["reproduce", "rim-dynamic", "--procs", "6"],
        "error: --procs: 6",
    );
}

/// A scenario whose tasks would not fit in memory is refused before it runs; a graph file
/// named by a `file:` topology is read beside the scenario.
#[test]
fn memory_and_graph_files() {
    let dir = scratch("simulate-mem");
    let big = dir.join("big.toml");
    std::fs::write(
        &big,
        "topology = \"ring:4\"\n[nodes]\ncount = 4\nrate = 1.0\ninitial = 1000000000000\n",
    )
    .unwrap();
    let stderr = simulate_error(&big);
    assert!(
        stderr.contains("needs about") && stderr.contains("--max-memory"),
        "{stderr}"
    );

    std::fs::write(dir.join("tri.txt"), "0 1\n1 2\n2 0\n").unwrap();
    let tri = dir.join("tri.toml");
    std::fs::write(
        &tri,
        "topology = \"file:tri.txt\"\n[nodes]\ncount = 3\nrate = 10.0\ninitial = 10\n",
    )
    .unwrap();
    let out = command()
        .arg("simulate")
        .arg(&tri)
        .args(["--format", "json"])
        .output()
        .unwrap();
    json_of(&out, &tri);
    std::fs::write(dir.join("tri.txt"), "# nothing\n").unwrap();
    let stderr = simulate_error(&tri);
    assert!(
        stderr.contains("tri.txt") && stderr.contains("no edges"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn dishet_response_measures_throughput_and_response_time() {
    let v = json(&[
        "reproduce",
        "dishet-response",
        "--sizes",
        "8",
        "--totals",
        "1000",
        "--distributions",
        "single,vary-50",
        "--runs",
        "1",
        "--no-plots",
        "--format",
        "json",
    ]);
    let cells = v["cells"].as_array().unwrap();
    // One cell per distribution and policy: none and every diffusion rule by default.
    let policies = 1 + hetlb_core::algorithm::Algorithm::DIFFUSION.len();
    assert_eq!(cells.len(), 2 * policies);
    let single = |p: &str| {
        cells
            .iter()
            .find(|c| c["distribution"] == "single" && c["policy"] == p)
            .unwrap()
            .clone()
    };
    // all the load on one node: any balancing beats none on both measures
    let none = single("none");
    assert_eq!(none["tasks_moved"].as_f64().unwrap(), 0.0);
    for p in ["dishet", "diffusion", "gdem"] {
        let c = single(p);
        assert!(c["response_time"].as_f64().unwrap() < none["response_time"].as_f64().unwrap());
        assert!(c["throughput"].as_f64().unwrap() > none["throughput"].as_f64().unwrap());
        assert!(c["makespan"].as_f64().unwrap() >= c["ideal_makespan"].as_f64().unwrap());
    }
    assert!(v["paper"].as_str().unwrap().contains("nothing published"));
    for (args, needle) in [
        (vec!["--algorithms", "oem"], "--algorithms"),
        (vec!["--interval", "0.000001"], "--interval"),
        (vec!["--interval", "-1"], "--interval"),
        (vec!["--service", "gamma"], "--service"),
    ] {
        fails_with(
            &[&["reproduce", "dishet-response", "--no-plots"], &args[..]].concat(),
            needle,
        );
    }
}

/// The JSON is a summary; the series come on request.
#[test]
fn series_are_in_the_json_only_on_request() {
    let file = "examples/scenarios/mirtaheri-balanced.toml";
    let run = |extra: &[&str]| json(&[&["simulate", file, "--format", "json"], extra].concat());
    assert!(run(&[]).get("series").is_none());
    let with = run(&["--series"]);
    assert_eq!(with["series"].as_array().unwrap().len(), 6);
    assert_eq!(with["makespan"], run(&[])["makespan"]);
}
