//! `hetlb run` end to end: the report's fields, and one clear line for every bad argument.

use std::process::{Command, Output};

fn hetlb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hetlb"))
        .args(args)
        .output()
        .expect("run hetlb")
}

fn fails_with(args: &[&str], needle: &str) {
    let out = hetlb(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr:?}");
    assert!(
        stderr.contains(needle),
        "{args:?}: {stderr:?} lacks {needle:?}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr:?}");
}

#[test]
fn json_report_has_the_papers_columns() {
    let out = hetlb(&[
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for name in ["efp", "static", "proportional", "self", "speedup vs static"] {
        assert!(text.contains(name), "{name} missing in {text}");
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
    fails_with(&with(&["--workers", "0"]), "--workers");
    fails_with(
        &with(&["--workers", "3", "--slowdown", "1,3"]),
        "--slowdown: 2 values given for 3 workers",
    );
    fails_with(&with(&["--slowdown", "1,0,1"]), "--slowdown");
    fails_with(&with(&["--slowdown", "1,x"]), "--slowdown");
    fails_with(&["run", "matmul", "--size", "0"], "--size");
    fails_with(
        &with(&["--policy", "fastest"]),
        "--policy: unknown policy 'fastest'",
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
