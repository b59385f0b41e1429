//! `hetlb run scenario` end to end.

use super::common;

use common::{fails_with, json, scratch};

#[test]
fn compare_prints_simulated_measured_and_errors() {
    let d = json(&[
        "run",
        "scenario",
        "examples/scenarios/mirtaheri-compensated.toml",
        "--compare",
        "--work",
        "sleep",
        "--target-seconds",
        "0.5",
        "--format",
        "json",
    ]);
    for side in ["simulated", "measured", "relative_error"] {
        for f in ["makespan", "total_idle", "tasks_moved"] {
            assert!(d[side][f].as_f64().is_some(), "{side}.{f}");
        }
        assert_eq!(
            d[side]["finish"].as_array().unwrap().len(),
            6,
            "{side}.finish"
        );
    }
    assert!(d["time_scale"].as_f64().unwrap() > 0.0);
    assert_eq!(d["tasks_completed"], 2800);
    assert_eq!(d["tasks_arrived"], 0);
    // The paper's figure is printed for the paper's scenarios (by name) and for no other.
    assert!(d["paper_makespan"].as_f64().is_some());
    assert_eq!(d["links"].as_array().unwrap().len(), 12);
    // The run says how much CPU its ranks got and how late its events were, whatever the
    // machine; whether it warns depends on the machine, so only its form is checked.
    let timing = &d["timing"];
    assert!(timing["mean_event_lateness"].as_f64().is_some());
    assert!(timing["comparison_meaningful"].is_boolean());
    assert!(d["warnings"].is_array());
}

#[test]
fn bad_input_gets_one_clear_line() {
    let file = "examples/scenarios/mirtaheri-balanced.toml";
    fails_with(
        &["run", "scenario", "/nonexistent.toml"],
        "nonexistent.toml",
    );
    fails_with(&["run", "scenario", file, "--work", "lazy"], "--work");
    fails_with(&["run", "scenario", file, "--work", "share:2"], "--work");
    fails_with(
        &["run", "scenario", file, "--time-scale", "0"],
        "--time-scale",
    );
    fails_with(
        &["run", "scenario", file, "--time-scale", "1e9"],
        "--time-scale",
    );
    fails_with(
        &["run", "scenario", file, "--algorithm", "oem"],
        "--algorithm",
    );
    fails_with(
        &["run", "scenario", file, "--backend", "pigeon"],
        "--backend",
    );
    fails_with(
        &["run", "scenario", file, "--time-scale", "5000"],
        "at most 3600",
    );
    let dir = scratch("run-scenario");
    let big = dir.join("big.toml");
    std::fs::write(
        &big,
        "topology = \"ring:300\"\n[nodes]\ncount = 300\nrate = 100.0\ninitial = 1\n",
    )
    .unwrap();
    fails_with(&["run", "scenario", big.to_str().unwrap()], "nodes.count");
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[nodes]\ncount = 3\nrate = -1.0\n").unwrap();
    fails_with(&["run", "scenario", bad.to_str().unwrap()], "line");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn simulator_only_policies_are_refused_on_real_workers() {
    fails_with(
        &[
            "run",
            "scenario",
            "examples/simulator/mirtaheri-neighbourhood.toml",
        ],
        "policy.carry_out",
    );
}

#[test]
fn diffusion_rounds_run_on_real_workers() {
    let d = json(&[
        "run",
        "scenario",
        "examples/scenarios/dishet-random.toml",
        "--compare",
        "--work",
        "sleep",
        "--target-seconds",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(d["tasks_completed"], 2000);
    // Round 0 comes at time 0, when one node holds every task: it sends, on any machine.
    assert!(d["measured"]["tasks_moved"].as_f64().unwrap() > 0.0);
    assert_eq!(d["measured"]["finish"].as_array().unwrap().len(), 16);
    assert_eq!(d["simulated"]["finish"].as_array().unwrap().len(), 16);
    // Not one of the paper's scenarios: nothing published to print beside it.
    assert!(d["paper_makespan"].is_null());
}

/// A scenario whose tasks would exhaust the memory is refused before the prediction or the
/// real run allocates anything, as `simulate` refuses it: one line naming --max-memory.
#[test]
fn a_scenario_above_the_memory_limit_is_refused_before_it_runs() {
    let dir = scratch("run-scenario-memory");
    let huge = dir.join("huge.toml");
    std::fs::write(
        &huge,
        "topology = \"ring:4\"\n[nodes]\ncount = 4\nrate = 1.0\n\
         [[injections]]\nnode = 0\ntime = 0.0\ntasks = 4294967295\n",
    )
    .unwrap();
    let path = huge.to_str().unwrap();
    fails_with(&["run", "scenario", path], "--max-memory");
    fails_with(&["simulate", path], "--max-memory");
    // Under the limit but above what real workers hold: refused before the prediction.
    let many = dir.join("many.toml");
    std::fs::write(
        &many,
        "topology = \"ring:4\"\n[nodes]\ncount = 4\nrate = 1.0\ninitial = 50000000\n",
    )
    .unwrap();
    fails_with(
        &[
            "--max-memory",
            "100",
            "run",
            "scenario",
            many.to_str().unwrap(),
        ],
        "at most 20000000 run on real workers",
    );
    std::fs::remove_dir_all(&dir).ok();
}
