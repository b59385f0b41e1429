//! `hetlb advise`: predictions before anything moves, and their errors.

use super::common;
use common::{fails_with, json};

#[test]
fn a_balanced_vector_is_left_alone() {
    let v = json(&["advise", "--loads", "5,5,5,5", "--format", "json"]);
    assert!(v["choice"].is_null());
    for c in v["candidates"].as_array().unwrap() {
        assert_eq!(c["moves"], false);
        assert_eq!(c["prediction"]["units_moved"], 0);
        assert_eq!(c["final_loads"], serde_json::json!([5, 5, 5, 5]));
    }
}

#[test]
fn direct_routing_moves_only_the_surplus() {
    // 8 ranks of speeds 1..8 holding 250,000 units each: the capacity-proportional end
    // needs 444,444 units to leave the ranks with a surplus.
    let v = json(&[
        "advise",
        "--loads",
        "250000,250000,250000,250000,250000,250000,250000,250000",
        "--speeds",
        "1,2,3,4,5,6,7,8",
        "--algorithm",
        "cwa,dishet",
        "--format",
        "json",
    ]);
    let c = v["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 4);
    for pair in c.chunks(2) {
        let (paper, direct) = (&pair[0], &pair[1]);
        assert_eq!(paper["routing"], "paper");
        assert_eq!(direct["routing"], "direct");
        assert_eq!(paper["final_loads"], direct["final_loads"]);
        let (p, d) = (
            paper["prediction"]["units_moved"].as_u64().unwrap(),
            direct["prediction"]["units_moved"].as_u64().unwrap(),
        );
        assert!(d <= p, "direct {d} > paper {p}");
        let ends: Vec<u64> = serde_json::from_value(direct["final_loads"].clone()).unwrap();
        let surplus: u64 = ends.iter().map(|&e| 250_000u64.saturating_sub(e)).sum();
        assert_eq!(d, surplus);
    }
    assert!(v["choice"].is_u64());
}

#[test]
fn a_short_horizon_does_not_pay_for_an_expensive_move() {
    let args = |trigger: &'static str| {
        json(&[
            "advise",
            "--loads",
            "12,4",
            "--speeds",
            "1",
            "--algorithm",
            "dem",
            "--routing",
            "paper",
            "--seconds-per-message",
            "0",
            "--seconds-per-byte",
            "0.5",
            "--bytes-per-unit",
            "1",
            "--trigger",
            trigger,
            "--format",
            "json",
        ])
    };
    // Gain 4 s per iteration, move 2 s.
    assert!(args("auto:1:2").get("choice").unwrap().is_null());
    assert_eq!(args("auto:1:1.5")["choice"], 0);
    assert_eq!(args("always")["choice"], 0);
}

#[test]
fn bad_arguments_get_one_clear_line() {
    fails_with(
        &["advise", "--loads", "1,2,3,4", "--trigger", "soon"],
        "--trigger",
    );
    fails_with(
        &["advise", "--loads", "1,2,3,4", "--trigger", "auto:0"],
        "--trigger",
    );
    fails_with(
        &["advise", "--loads", "1,2,3,4", "--speeds", "1,2"],
        "--speeds",
    );
    fails_with(
        &["advise", "--loads", "1,2,3,4", "--speeds", "1,0,1,1"],
        "--speeds: value 2",
    );
    fails_with(
        &["advise", "--loads", "1,2,3,4", "--routing", "teleport"],
        "--routing",
    );
    // three loads: dem runs embedded (complete:3); dishet needs a named network
    fails_with(
        &["advise", "--loads", "1,2,3", "--algorithm", "dishet"],
        "--loads",
    );
    fails_with(
        &["advise", "--loads", "1,2,3,4", "--algorithm", "dem-superb"],
        "--algorithm",
    );
    fails_with(
        &["advise", "--loads", "1,2,3,4", "--seconds-per-byte", "-1"],
        "--seconds-per-byte",
    );
}

#[test]
fn six_nodes_run_every_rule_on_the_complete_network() {
    // cwa on the 8-cube with two virtual nodes: capacity-proportional shares of 600 units.
    let v = json(&[
        "advise",
        "--loads",
        "600,0,0,0,0,0",
        "--speeds",
        "1,1,1,1,1,1",
        "--format",
        "json",
    ]);
    assert_eq!(v["topology"], "complete:6");
    let c = v["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 2 * 13); // every rule, paper and direct routing
    let cwa = c.iter().find(|c| c["algorithm"] == "cwa").unwrap();
    assert_eq!(
        cwa["final_loads"],
        serde_json::json!([100, 100, 100, 100, 100, 100])
    );
}
