//! Bad scenarios give one line naming the field and, where TOML gives it, the line.

use hetlb_sim::Scenario;

const GOOD: &str = r#"seed = 1
[nodes]
count = 3
rate = 10.0
initial = 5
[topology]
kind = "ring"
[links]
rate = 100.0
delay = 0.01
[[injections]]
node = 0
time = 0.5
tasks = 10
[policy]
kind = "delay-aware"
"#;

/// `GOOD` with `from` replaced by `to`; panics if `from` is not there.
fn edit(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

fn error_of(source: &str) -> String {
    let e = Scenario::from_toml(source).expect_err("should be rejected");
    let text = e.to_string();
    assert!(!text.contains('\n'), "not one line: {text}");
    text
}

#[test]
fn the_good_scenario_is_accepted() {
    Scenario::from_toml(GOOD).unwrap().run().unwrap();
}

#[test]
fn unknown_fields_are_named_with_their_line() {
    let e = error_of(&edit("initial = 5\n", "initial = 5\nspeed = 3\n"));
    assert!(e.starts_with("nodes.speed: unknown field `speed`"), "{e}");
    assert!(e.ends_with("(line 6)"), "{e}");
    let e = error_of(&edit("seed = 1\n", "seed = 1\nfoo = 2\n"));
    assert!(e.starts_with("foo: unknown field `foo`"), "{e}");
    let e = error_of(&edit("tasks = 10\n", "tasks = 10\nwhen = 2\n"));
    assert!(e.starts_with("injections[0].when: unknown field"), "{e}");
    let e = error_of(&edit(
        "kind = \"delay-aware\"\n",
        "kind = \"delay-aware\"\nthreshold = 3\n",
    ));
    assert!(e.starts_with("policy.threshold: not used by kind"), "{e}");
}

#[test]
fn missing_fields_are_named() {
    let e = error_of(&edit("count = 3\n", ""));
    assert!(e.starts_with("nodes.count: missing field `count`"), "{e}");
    let e = error_of(&edit("time = 0.5\n", ""));
    assert!(e.starts_with("injections[0].time: missing field"), "{e}");
    let e = error_of(&edit("[topology]\nkind = \"ring\"\n", ""));
    assert!(e.starts_with("topology: missing field `topology`"), "{e}");
}

#[test]
fn zero_and_negative_rates_are_rejected() {
    let e = error_of(&edit("rate = 10.0", "rate = 0.0"));
    assert_eq!(e, "nodes.rate: 0 must be positive and finite (line 4)");
    let e = error_of(&edit("rate = 10.0", "rate = -2.0"));
    assert_eq!(e, "nodes.rate: -2 must be positive and finite (line 4)");
    let e = error_of(&edit("rate = 100.0", "rate = -1.0"));
    assert_eq!(
        e,
        "links.rate: -1 must be positive (inf for instant) (line 9)"
    );
    let e = error_of(&edit("rate = 10.0", "rate = nan"));
    assert!(e.starts_with("nodes.rate: NaN must be positive"), "{e}");
    let e = error_of(&edit("delay = 0.01", "delay = -0.5"));
    assert_eq!(
        e,
        "links.delay: -0.5 must be finite and non-negative (line 10)"
    );
}

#[test]
fn bad_injections_are_rejected() {
    let e = error_of(&edit("node = 0", "node = 3"));
    assert_eq!(
        e,
        "injections[0].node: node 3 does not exist (nodes are 0..2) (line 12)"
    );
    let e = error_of(&edit("node = 0", "node = -1"));
    assert!(e.starts_with("injections[0].node: invalid value"), "{e}");
    let e = error_of(&edit("time = 0.5", "time = -0.1"));
    assert_eq!(
        e,
        "injections[0].time: -0.1 must be finite and non-negative (line 13)"
    );
}

#[test]
fn an_end_time_before_the_last_injection_is_rejected() {
    let e = error_of(&edit("seed = 1\n", "seed = 1\nend_time = 0.25\n"));
    assert_eq!(
        e,
        "end_time: 0.25 is before injection 0 at 0.5; the run must reach every injection (line 2)"
    );
    Scenario::from_toml(&edit("seed = 1\n", "seed = 1\nend_time = 0.5\n")).unwrap();
}

#[test]
fn wrong_kinds_and_types_are_named() {
    let e = error_of(&edit("kind = \"ring\"", "kind = \"star\""));
    assert!(
        e.starts_with("topology.kind: unknown variant `star`"),
        "{e}"
    );
    let e = error_of(&edit("initial = 5", "initial = \"five\""));
    assert!(e.starts_with("nodes.initial: invalid type"), "{e}");
    let e = error_of(&edit(
        "kind = \"ring\"",
        "kind = \"graph\"\nedges = [[0, 1], [1, 7]]",
    ));
    assert!(
        e.starts_with(
            "topology.edges: edge 1: node id 7 is out of range (the graph has nodes 0..3)"
        ),
        "{e}"
    );
    let e = error_of(&edit(
        "kind = \"delay-aware\"",
        "kind = \"hypercube\"\nalgorithm = \"oem\"\nthreshold = 2",
    ));
    assert!(
        e.starts_with("policy.kind: hypercube balancing needs"),
        "{e}"
    );
    let e = error_of(
        "[nodes]\ncount = 4\nrate = 1.0\n[topology]\nkind = \"hypercube\"\n[policy]\nkind = \"hypercube\"\nalgorithm = \"xyz\"\nthreshold = 2\n",
    );
    assert!(
        e.starts_with("policy.algorithm: unknown algorithm 'xyz'"),
        "{e}"
    );
    let e = error_of(
        "[nodes]\ncount = 3\nrate = 1.0\n[topology]\nkind = \"ring\"\n[arrivals]\nrate = 1.0\n",
    );
    assert!(
        e.starts_with("arrivals.per_node: unlimited arrivals need"),
        "{e}"
    );
    let e = error_of("[nodes\ncount = 3\n");
    assert!(e.contains("(line 1)"), "{e}");
}

/// The core's topology specs are accepted, one line or in the table; the old `kind` form is
/// still read; both follow the core's graph rules (no isolated node).
#[test]
fn topologies_use_the_cores_specs_and_rules() {
    let one_line = edit("seed = 1\n", "seed = 1\ntopology = \"ring:3\"\n").replacen(
        "[topology]\nkind = \"ring\"\n",
        "",
        1,
    );
    let a = Scenario::from_toml(&one_line).unwrap();
    let b = Scenario::from_toml(GOOD).unwrap();
    assert_eq!(a.run().unwrap(), b.run().unwrap());
    let table = edit("kind = \"ring\"", "spec = \"complete:3\"");
    assert_eq!(Scenario::from_toml(&table).unwrap().node_count(), 3);
    let e = error_of(&edit("kind = \"ring\"", "spec = \"ring:4\""));
    assert!(
        e.starts_with("topology.spec: ring:4 has 4 nodes but nodes.count is 3"),
        "{e}"
    );
    let e = error_of(&edit("kind = \"ring\"", "spec = \"moebius:3\""));
    assert!(
        e.starts_with("topology.spec: unknown topology 'moebius'"),
        "{e}"
    );
    let e = error_of(&edit(
        "kind = \"ring\"",
        "spec = \"ring:3\"\nkind = \"ring\"",
    ));
    assert!(e.contains("not both"), "{e}");
    // A node with no link: rejected here as in `hetlb balance`.
    let e = error_of(&edit(
        "kind = \"ring\"",
        "kind = \"graph\"\nedges = [[0, 1]]",
    ));
    assert!(
        e.starts_with("topology.edges: the graph is disconnected"),
        "{e}"
    );
    let e = error_of(&edit(
        "kind = \"ring\"",
        "kind = \"graph\"\nedges = [[0, 1], [1, 2], [2, 1]]",
    ));
    assert!(e.contains("duplicate edge 1 - 2"), "{e}");
    let e = error_of(&edit("kind = \"ring\"", "spec = \"file:graph.txt\""));
    assert!(e.contains("Scenario::from_path"), "{e}");
}

/// Counts that size allocations are refused before anything is allocated, and rates and
/// times are bounded so that every computed time is finite.
#[test]
fn sizes_and_rates_that_cannot_run_are_refused() {
    let e = error_of(&edit("count = 3", "count = 1000000000000000000"));
    assert!(
        e.starts_with("nodes.count: 1000000000000000000 is out of range"),
        "{e}"
    );
    let e = error_of(&edit("initial = 5", "initial = 9223372036854775807"));
    assert!(e.starts_with("nodes.initial:"), "{e}");
    let e = error_of(&edit("tasks = 10", "tasks = 18446744073709551615"));
    assert!(e.starts_with("injections[0].tasks:"), "{e}");
    let e = error_of(&edit(
        "[policy]",
        "[arrivals]\nrate = 1.0\nper_node = 9223372036854775807\n[policy]",
    ));
    assert!(e.starts_with("arrivals.per_node:"), "{e}");
    let e = error_of(&edit("rate = 10.0", "rate = 1e-308"));
    assert!(e.starts_with("nodes.rate: 1e-308 is out of range"), "{e}");
    let e = error_of(&edit("time = 0.5", "time = 1e300"));
    assert!(
        e.starts_with("injections[0].time: 1e300 is out of range"),
        "{e}"
    );
    // What is accepted can be estimated before it runs.
    let big = Scenario::from_toml(&edit("initial = 5", "initial = 100000000000")).unwrap();
    assert!(big.memory_estimate() > 3 * 100_000_000_000 * 16);
    let small = Scenario::from_toml(GOOD).unwrap();
    assert!(small.memory_estimate() < 1 << 20);
}

#[test]
fn carry_out_is_named_when_wrong() {
    let e = error_of(&edit(
        "kind = \"delay-aware\"\n",
        "kind = \"delay-aware\"\ncarry_out = \"everyone\"\n",
    ));
    assert!(
        e.starts_with("policy.carry_out: unknown variant `everyone`"),
        "{e}"
    );
    Scenario::from_toml(&edit(
        "kind = \"delay-aware\"\n",
        "kind = \"delay-aware\"\ncarry_out = \"neighbourhood\"\n",
    ))
    .unwrap()
    .run()
    .unwrap();
    let e = error_of(&edit(
        "kind = \"delay-aware\"\n",
        "kind = \"none\"\ncarry_out = \"centre\"\n",
    ));
    assert!(
        e.starts_with("policy.carry_out: not used by kind \"none\""),
        "{e}"
    );
}

#[test]
fn diffusion_fields_are_checked() {
    let diffusion = |extra: &str| {
        edit(
            "kind = \"delay-aware\"\n",
            &format!("kind = \"diffusion\"\n{extra}"),
        )
    };
    Scenario::from_toml(&diffusion(
        "algorithm = \"gdem\"\ninterval = 0.5\nlambda = 0.4\n",
    ))
    .unwrap()
    .run()
    .unwrap();
    let e = error_of(&diffusion("algorithm = \"dishet\"\n"));
    assert!(e.starts_with("policy.interval: missing"), "{e}");
    let e = error_of(&diffusion("interval = 1.0\n"));
    assert!(e.starts_with("policy.algorithm: missing"), "{e}");
    let e = error_of(&diffusion("algorithm = \"oem\"\ninterval = 1.0\n"));
    assert!(
        e.starts_with("policy.algorithm: 'oem' is not a diffusion algorithm"),
        "{e}"
    );
    let e = error_of(&diffusion("algorithm = \"dishet\"\ninterval = -1.0\n"));
    assert!(e.starts_with("policy.interval: -1 must be positive"), "{e}");
    let e = error_of(&diffusion(
        "algorithm = \"dishet\"\ninterval = 1.0\nlambda = 0.5\n",
    ));
    assert!(e.starts_with("policy.lambda: only gdem takes λ"), "{e}");
    let e = error_of(&diffusion(
        "algorithm = \"gdem\"\ninterval = 1.0\nlambda = 1.5\n",
    ));
    assert!(
        e.starts_with("policy.lambda: 1.5 must lie strictly between 0 and 1"),
        "{e}"
    );
    let e = error_of(&diffusion("algorithm = \"dishet\"\ninterval = 1e-12\n"));
    assert!(
        e.starts_with("policy.interval: 0.000000000001 s between rounds could need"),
        "{e}"
    );
    let e = error_of(&diffusion(
        "algorithm = \"dishet\"\ninterval = 1.0\nthreshold = 3\n",
    ));
    assert!(
        e.starts_with("policy.threshold: not used by kind \"diffusion\""),
        "{e}"
    );
}

/// A field missing from the document itself is named without a table, whichever table comes
/// first; one missing from a table is named with it.
#[test]
fn a_missing_field_is_named_where_it_belongs() {
    let e = Scenario::from_toml("[nodes]\ncount = 3\nrate = 1.0\n").unwrap_err();
    assert_eq!(e.field, "topology", "{e}");
    let e = Scenario::from_toml("topology = \"ring:3\"\n[nodes]\nrate = 1.0\n").unwrap_err();
    assert_eq!(e.field, "nodes.count", "{e}");
}

/// A network whose links would not fit is refused before it is built, naming the topology.
#[test]
fn a_network_too_large_for_the_memory_is_refused_before_it_is_built() {
    let s = "topology = \"hypercube:24\"\n[nodes]\ncount = 16777216\nrate = 1.0\n";
    let e = Scenario::from_toml_within(s, 8 << 30).unwrap_err();
    assert_eq!(e.field, "topology");
    // The links of 2^24 nodes of degree 24 alone: 24·2^24 entries.
    assert!(e.message.contains("GiB of memory"), "{e}");
    let small = "topology = \"ring:4\"\n[nodes]\ncount = 4\nrate = 1.0\n";
    assert!(Scenario::from_toml_within(small, 1 << 20).is_ok());
}

#[test]
fn a_node_that_would_hold_more_than_its_queue_counts_is_an_error_not_a_panic() {
    // 2^32 tasks on one node: refused before any of them is allocated
    let s = Scenario::from_toml(&edit("initial = 5", "initial = 4294967296")).unwrap();
    let e = s.run().expect_err("more tasks than a queue holds");
    let text = e.to_string();
    assert!(
        text.contains("node 0 would hold more than 4294967295 tasks"),
        "{text}"
    );
}

/// Status reports so frequent that the run could not end (each refreshes every node's) are
/// refused as rounds are; a reasonable interval runs.
#[test]
fn status_reports_are_bounded_as_rounds_are() {
    let policy = "kind = \"delay-aware\"\n";
    let e = error_of(&edit(
        policy,
        "kind = \"delay-aware\"\nstatus_interval = 1e-9\n",
    ));
    assert!(
        e.starts_with("policy.status_interval: 0.000000001 s between status reports could need"),
        "{e}"
    );
    let ok = edit(policy, "kind = \"delay-aware\"\nstatus_interval = 0.5\n");
    Scenario::from_toml(&ok).unwrap().run().unwrap();
}
