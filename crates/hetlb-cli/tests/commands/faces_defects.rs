//! What users of the command line met and reported: lists given as separate words, the
//! notice naming a plot written, and the unknown-rule message naming the rules once.

use super::common;

use common::{error_line, hetlb, scratch, stdout};

#[test]
fn lists_take_separate_words_as_the_docs_say() {
    let words = stdout(&[
        "balance", "-a", "oem", "--loads", "4", "7", "0", "9", "--format", "json",
    ]);
    let commas = stdout(&[
        "balance", "-a", "oem", "--loads", "4,7,0,9", "--format", "json",
    ]);
    assert_eq!(words, commas);
    let caps = stdout(&[
        "balance",
        "-a",
        "cwa",
        "--loads",
        "4",
        "7",
        "0",
        "9",
        "--capacities",
        "1",
        "2",
        "1",
        "2",
        "--format",
        "json",
    ]);
    let caps: serde_json::Value = serde_json::from_str(&caps).unwrap();
    assert_eq!(caps["capacities"], serde_json::json!([1.0, 2.0, 1.0, 2.0]));
    // A negative value is still this list's error, not a flag.
    assert!(error_line(&["balance", "-a", "oem", "--loads", "4", "-7"]).contains("--loads"));
    let advise = stdout(&[
        "advise", "--loads", "4", "7", "0", "9", "--speeds", "1", "2", "1", "1",
    ]);
    assert!(advise.contains("dem"), "{advise}");
}

#[test]
fn run_iterative_names_the_plot_it_wrote() {
    let dir = scratch("iterative-plot");
    let path = dir.join("iterations.svg");
    let out = hetlb(&[
        "run",
        "iterative",
        "--procs",
        "2",
        "--items",
        "200",
        "--iterations",
        "4",
        "--every",
        "2",
        "--cost",
        "20",
        "--plot",
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("note: plot written to {}", path.display())),
        "{stderr}"
    );
    assert!(path.exists());
}

#[test]
fn an_unknown_rule_lists_the_rules_once() {
    let line = error_line(&["run", "iterative", "--algorithm", "nope"]);
    assert_eq!(line.matches("dishet,").count(), 1, "{line}");
}
