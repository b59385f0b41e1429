//! `hetlb bench` end to end on tiny sizes: every subcommand prints kernel, floor and ratio
//! in JSON (a `<key>_ratio` field per ratio) and in CSV, and refuses bad sizes with one
//! `error:` line. (The figures themselves are measured by running the benchmarks, not here.)

use super::common;

use common::{fails_with, hetlb, json};

/// Every comparison names its kernel and floor with positive medians, and the top level
/// has its `<key>_ratio`.
fn check_report(v: &serde_json::Value, benchmark: &str, keys: &[&str]) {
    assert_eq!(v["benchmark"], benchmark);
    let comparisons = v["comparisons"].as_array().expect("comparisons");
    assert!(!comparisons.is_empty());
    for c in comparisons {
        assert!(c["kernel"].is_string() && c["floor"].is_string(), "{c}");
        let (k, f) = (
            c["kernel_seconds"].as_f64().unwrap(),
            c["floor_seconds"].as_f64().unwrap(),
        );
        assert!(k > 0.0 && f > 0.0, "{c}");
        let ratio = c["kernel_floor_ratio"].as_f64().unwrap();
        assert!((ratio - k / f).abs() <= 1e-9 * ratio, "{c}");
        let key = c["key"].as_str().unwrap();
        assert_eq!(v[format!("{key}_ratio")].as_f64(), Some(ratio), "{key}");
    }
    for key in keys {
        assert!(v[format!("{key}_ratio")].is_number(), "{key}_ratio missing");
    }
}

#[test]
fn every_subcommand_prints_kernel_floor_and_ratio() {
    let v = json(&[
        "bench", "exchange", "--dims", "9", "--repeat", "1", "--format", "json",
    ]);
    check_report(&v, "exchange", &["dem", "oem"]);
    assert!(v["plain_pass_seconds"].is_number() && v["dem_seconds"].is_number());
    let v = json(&[
        "bench",
        "diffusion",
        "--side",
        "12",
        "--repeat",
        "1",
        "--format",
        "json",
    ]);
    check_report(&v, "diffusion", &["diffusion", "dishet"]);
    let v = json(&[
        "bench", "dispatch", "--tasks", "50", "--repeat", "1", "--format", "json",
    ]);
    check_report(&v, "dispatch", &["threads", "efp"]);
    let v = json(&[
        "bench",
        "transmission",
        "--dims",
        "5",
        "--repeat",
        "1",
        "--format",
        "json",
    ]);
    check_report(&v, "transmission", &["dem_pipeline", "oem_pipeline"]);
    let v = json(&[
        "bench",
        "enumeration",
        "--procs",
        "4",
        "--values",
        "4",
        "--repeat",
        "1",
        "--baseline-vectors",
        "10",
        "--format",
        "json",
    ]);
    check_report(&v, "enumeration", &["enumeration"]);
    let v = json(&[
        "bench",
        "simulator",
        "--dims",
        "4,5",
        "--arrivals",
        "3",
        "--repeat",
        "1",
        "--format",
        "json",
    ]);
    check_report(
        &v,
        "simulator",
        &["threshold_5", "delay_aware_4", "diffusion_5"],
    );
}

#[test]
fn csv_has_one_row_per_comparison() {
    let out = hetlb(&[
        "bench",
        "exchange",
        "--dims",
        "8",
        "--repeat",
        "1",
        "--rules",
        "dem,oem,dem-hetero",
        "--format",
        "csv",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("benchmark,key,kernel,kernel_seconds,floor")
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows.iter().all(|r| r.starts_with("exchange,")));
}

#[test]
fn bad_sizes_get_one_error_line() {
    for (args, needle) in [
        (vec!["bench", "exchange", "--repeat", "0"], "--runs"),
        (vec!["bench", "rebalance", "--ranks", "3"], "--ranks"),
        (vec!["bench", "exchange", "--dims", "40"], "--dims"),
        (vec!["bench", "exchange", "--rules", "cwa"], "--rules"),
        (vec!["bench", "exchange", "--threads", "0"], "--threads"),
        (vec!["bench", "diffusion", "--side", "2"], "--side"),
        (vec!["bench", "dispatch", "--tasks", "0"], "--tasks"),
        (vec!["bench", "transmission", "--dims", "30"], "--dims"),
        (vec!["bench", "simulator", "--dims", "0"], "--dims"),
    ] {
        fails_with(&args, needle);
    }
}

/// Every kernel estimates its memory and refuses a size above --max-memory before it
/// allocates anything: one line naming the size's option and --max-memory.
#[test]
fn sizes_above_the_memory_limit_are_refused_before_allocating() {
    for (args, option) in [
        (vec!["bench", "exchange", "--dims", "30"], "--dims"),
        (
            vec!["bench", "exchange", "--dims", "24", "--full-plan"],
            "--dims",
        ),
        (vec!["bench", "diffusion", "--side", "4096"], "--side"),
        (vec!["bench", "dispatch", "--tasks", "100000000"], "--tasks"),
        (vec!["bench", "transmission", "--dims", "22"], "--dims"),
        (vec!["bench", "simulator", "--dims", "20,22"], "--dims"),
        (vec!["bench", "rebalance", "--items", "50000000"], "--items"),
        (vec!["bench", "auto", "--items", "10000000"], "--items"),
        (vec!["bench", "enumeration", "--procs", "1024"], "--procs"),
    ] {
        let mut args = args;
        args.extend(["--max-memory", "1"]);
        let line = common::error_line(&args);
        assert!(line.starts_with(&format!("error: {option}: ")), "{line}");
        assert!(line.contains("--max-memory"), "{line}");
    }
}

/// The default --max-memory follows the process's address-space limit: under `ulimit -v` of
/// 1 GiB it is 80% of that, and a kernel above it is refused rather than aborted.
#[test]
fn the_default_memory_limit_follows_ulimit() {
    if cfg!(not(target_os = "linux")) {
        return;
    }
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" bench exchange --dims 28")
        .arg(env!("CARGO_BIN_EXE_hetlb"))
        .output()
        .expect("run sh");
    let line = common::error_of(&out, &"bench exchange --dims 28 under ulimit -v 1048576");
    assert!(
        line.contains("8.0 GiB of memory, above the limit of 820 MiB"),
        "{line}"
    );
}
