//! `hetlb run` end to end: the report's fields, and one clear line for every bad argument.

use super::common;

use common::{fails_with, hetlb, json, scratch, stdout_of};

#[test]
fn json_report_has_the_papers_columns() {
    let v = json(&[
        "run",
        "matmul",
        "--size",
        "60",
        "--workers",
        "3",
        "--slowdown",
        "1,2,2",
        "--format",
        "json",
        "--calibration-ms",
        "5",
    ]);
    let procs = v["processors"].as_array().unwrap();
    assert_eq!(procs.len(), 3);
    let mut rows = 0;
    for p in procs {
        for key in ["rows", "t_exec", "t_comp", "t_comm", "t_wait"] {
            assert!(p.get(key).is_some_and(|x| x.is_number()), "{key}");
        }
        rows += p["rows"].as_u64().unwrap();
    }
    assert_eq!(rows, 60);
    assert!(v["makespan"].as_f64().unwrap() > 0.0);
    assert!(v["efficiency"].as_f64().unwrap() > 0.0);
    assert!(v["max_error"].as_f64().unwrap() < 1e-9);
}

#[test]
fn all_policies_print_a_comparison_and_csv_has_every_processor() {
    let out = hetlb(&[
        "run",
        "synthetic",
        "--size",
        "200",
        "--cost",
        "2000",
        "--workers",
        "3",
        "--policy",
        "all",
        "--calibration-ms",
        "5",
    ]);
    let text = stdout_of(&out, &"run synthetic --policy all");
    // The comparison table has one row per policy, each starting with the policy's name.
    for name in ["efp", "static", "proportional", "self"] {
        assert!(
            text.lines()
                .any(|l| l.trim_start_matches(['│', ' ']).starts_with(name)),
            "{name} missing in {text}"
        );
    }
    let v = json(&[
        "run",
        "synthetic",
        "--size",
        "200",
        "--cost",
        "2000",
        "--procs",
        "3",
        "--policy",
        "all",
        "--calibration-ms",
        "5",
        "--format",
        "json",
    ]);
    let runs = v["runs"].as_array().unwrap();
    let policies: Vec<&str> = runs.iter().map(|r| r["policy"].as_str().unwrap()).collect();
    assert_eq!(
        policies,
        [
            "efp",
            "static-equal",
            "static-proportional",
            "self-scheduling"
        ]
    );
    // One ideal for the workload, whichever policy ran it; each run's tasks exactly once.
    let ideal = runs[0]["ideal"].as_f64().unwrap();
    assert!(ideal > 0.0);
    for r in runs {
        assert_eq!(r["ideal"].as_f64(), Some(ideal), "{}", r["policy"]);
        let rows: u64 = r["processors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["rows"].as_u64().unwrap())
            .sum();
        assert_eq!(rows, 200);
        assert_eq!(r["max_error"].as_f64(), Some(0.0));
        let efficiency = r["efficiency"].as_f64().unwrap();
        let makespan = r["makespan"].as_f64().unwrap();
        assert!((efficiency - ideal / makespan).abs() < 1e-9);
    }
    let out = hetlb(&[
        "run",
        "matmul",
        "--size",
        "40",
        "--workers",
        "2",
        "--format",
        "csv",
        "--policy",
        "static",
        "--calibration-ms",
        "5",
    ]);
    let csv = String::from_utf8_lossy(&out.stdout);
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.starts_with("policy,processor,role,slowdown,rows"));
}

#[test]
fn bad_arguments_get_one_clear_line() {
    let base = ["run", "matmul", "--size", "50"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        base.iter().copied().chain(extra.iter().copied()).collect()
    };
    fails_with(&with(&["--workers", "0"]), "--procs");
    fails_with(
        &with(&["--workers", "3", "--slowdown", "1,3"]),
        "--slowdown: 2 values given for 3 processors",
    );
    // Negative numbers parse and get the allowed range.
    fails_with(&with(&["--procs", "-1"]), "allowed 1 to 1024");
    fails_with(
        &["run", "matmul", "--size", "-5"],
        "'--size <N>': -5 is out of range",
    );
    fails_with(&with(&["--grain-n", "9"]), "allowed 1 to 3");
    fails_with(&with(&["--timeout", "1e300"]), "--timeout");
    fails_with(&with(&["--timeout", "-2"]), "--timeout");
    fails_with(&with(&["--procs", "100000"]), "allowed 1 to 1024");
    // Sizes that would exhaust memory are refused before anything is allocated.
    fails_with(
        &["run", "synthetic", "--size", "18446744073709551615"],
        "--size: the run needs about",
    );
    fails_with(
        &["run", "synthetic", "--size", "1000000000"],
        "--max-memory",
    );
    fails_with(
        &["run", "matmul", "--size", "20000"],
        "--size: the run needs about",
    );
    fails_with(&with(&["--slowdown", "1,0,1"]), "--slowdown");
    fails_with(&with(&["--slowdown", "1,x"]), "--slowdown");
    fails_with(&["run", "matmul", "--size", "0"], "--size");
    fails_with(
        &with(&["--policy", "fastest"]),
        "--algorithm: unknown policy 'fastest'",
    );
    fails_with(
        &with(&["--backend", "carrier-pigeon"]),
        "--backend: unknown backend",
    );
    fails_with(&["run", "sorting"], "sorting");
    fails_with(&with(&["--slowdown-change", "1:3"]), "--slowdown-change");
    fails_with(&with(&["--timeout", "0"]), "--timeout");
    fails_with(
        &with(&["--plot", "out.pdf", "--workers", "2", "--no-check"]),
        "--plot",
    );
    if !cfg!(feature = "mpi") {
        fails_with(&with(&["--backend", "mpi"]), "built without MPI");
    }
}

/// With two processors eq. (1) can give one task: G is raised so that both get work, and the
/// efficiency counts every processor's speed; a given G above the size says it was cut.
#[test]
fn granularity_gives_every_processor_work_and_says_what_it_changed() {
    let v = json(&[
        "run",
        "matmul",
        "--size",
        "60",
        "--procs",
        "2",
        "--granularity",
        "1",
        "--format",
        "json",
        "--no-check",
        "--capacities",
        "1,1",
    ]);
    assert_eq!(v["granularity"]["tasks"], 2);
    assert!(
        v["granularity"]["source"]
            .as_str()
            .unwrap()
            .contains("raised from 1 to 2")
    );
    for p in v["processors"].as_array().unwrap() {
        assert!(p["rows"].as_u64().unwrap() > 0, "{p}");
    }
    let out = hetlb(&[
        "run",
        "matmul",
        "--size",
        "40",
        "--procs",
        "2",
        "--granularity",
        "1000",
        "--no-check",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("cut from 1000 to 40"), "{text}");
}

/// `--plot` draws both panels (rows and time) with the processors labelled, in SVG and PNG,
/// and says where in one note.
#[test]
fn the_plot_has_both_panels_and_processor_labels() {
    let dir = scratch("run-plot");
    let svg = dir.join("run.svg");
    let out = hetlb(&[
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
        svg.to_str().unwrap(),
    ]);
    stdout_of(&out, &"run synthetic --plot");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        format!("note: plot written to {}", svg.display())
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("T_comm") && text.contains("tasks"),
        "the time panel is missing"
    );
    for p in 0..3 {
        // Each processor is labelled under its bar in both panels.
        assert_eq!(
            text.matches(&format!("\n{p} (P")).count(),
            2,
            "processor {p}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reproduce_efp_runs_the_tables_and_the_sweep_on_threads() {
    let v = json(&[
        "reproduce",
        "efp",
        "--sizes",
        "60,100",
        "--sweep",
        "2,3",
        "--sweep-size",
        "50",
        "--no-plots",
        "--format",
        "json",
    ]);
    let tables = v["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 4); // 2 orders × static and EFP
    for t in tables {
        let procs = t["processors"].as_array().unwrap();
        assert_eq!(procs.len(), 9);
        let rows: u64 = procs.iter().map(|p| p["rows"].as_u64().unwrap()).sum();
        assert_eq!(rows, t["size"].as_u64().unwrap());
        assert!(t["max_error"].as_f64().unwrap() <= 1e-9);
    }
    assert_eq!(v["sweep_points"].as_array().unwrap().len(), 4);
    // one reference per job (order and number of tasks), every one a run of the same tasks
    let references = v["references"].as_array().unwrap();
    assert!(references.len() >= 3);
    for p in v["sweep_points"].as_array().unwrap() {
        assert!(p["max_error"].as_f64().unwrap() <= 1e-9);
        assert!(
            references
                .iter()
                .any(|r| r["size"] == p["size"] && r["tasks"] == p["tasks"])
        );
    }
    assert!(v["machine"].as_str().unwrap().contains("core"));
    assert!(
        v["paper_figures"]
            .as_str()
            .unwrap()
            .contains("no published numbers")
    );
    for (args, needle) in [
        (vec!["--sizes", "0"], "--sizes"),
        (vec!["--sweep", "1"], "--sweep"),
        (vec!["--backend", "pvm"], "--backend"),
        (vec!["--slow-factor", "-3"], "--slow-factor"),
    ] {
        fails_with(
            &[&["reproduce", "efp", "--no-plots"], &args[..]].concat(),
            needle,
        );
    }
}
