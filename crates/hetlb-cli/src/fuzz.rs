//! Seeded fuzzing of the parsers people feed: scenario files (parsed, validated, estimated and,
//! when small, run), graph files (edge lists and JSON) and load lists.
//!
//! Each input is a seed input (the shipped examples and some hand-made ones) mutated a few
//! times: bytes deleted, duplicated, swapped or inserted, numbers replaced by extreme ones
//! (`-1`, `0`, `1e308`, `nan`, 2^64, …), structure characters spliced in. The test runs the
//! inputs in a child process started under `ulimit -v` (the memory limit) with a watchdog
//! that fails the run when one input takes longer than [`PER_INPUT`] (the time limit), so a
//! panic, an abort, an allocation that exhausts memory or a hang all fail the test, naming
//! the input.
//!
//! `cargo test -p hetlb-cli fuzz` runs [`DEFAULT_INPUTS`] inputs (a few seconds);
//! `HETLB_FUZZ_INPUTS=200000 HETLB_FUZZ_SEED=7 cargo test --release -p hetlb-cli fuzz` runs a
//! deep one.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Inputs per parser in a plain `cargo test`.
const DEFAULT_INPUTS: u64 = 4000;
/// The longest one input may take.
const PER_INPUT: Duration = Duration::from_secs(10);
/// The child's address-space limit, in KiB (`ulimit -v`): 3 GiB.
const MEMORY_KIB: u64 = 3 << 20;
/// Scenarios whose run would hold less than this are also run.
const RUN_BELOW_BYTES: u128 = 256 << 10;

fn scenario_seeds() -> Vec<String> {
    let mut seeds: Vec<String> = [
        include_str!("../../../examples/scenarios/mirtaheri-balanced.toml"),
        include_str!("../../../examples/scenarios/mirtaheri-compensated.toml"),
        include_str!("../../../examples/scenarios/mirtaheri-delayed.toml"),
        include_str!("../../../examples/scenarios/mirtaheri-no-balancing.toml"),
        include_str!("../../../examples/scenarios/rim-dynamic.toml"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    seeds.push(
        "seed = 3\nend_time = 2.0\ntopology = \"torus:2x3\"\n[nodes]\ncount = 6\nrates = [1.0, \
         2.0, 3.0, 4.0, 5.0, 6.0]\ninitial_loads = [1, 2, 3, 4, 5, 6]\n[links]\nrate = 5.0\n\
         delay = 0.1\ndelay_distribution = \"exponential\"\n[[links.overrides]]\nbetween = [0, \
         1]\nrate = 1.0\n[arrivals]\nrates = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]\n[policy]\nkind = \
         \"delay-aware\"\nstatus_interval = 0.5\n[output]\nseries_interval = 0.1\n"
            .into(),
    );
    seeds.push(
        "[nodes]\ncount = 4\nrate = 3.0\ninitial = 7\nservice = \"exponential\"\n[topology]\n\
         kind = \"torus\"\nrows = 2\ncols = 2\n[policy]\nkind = \"none\"\n"
            .into(),
    );
    seeds
}

fn graph_seeds() -> Vec<String> {
    vec![
        "0 1\n1 2\n2 3\n3 0\n".into(),
        "# a comment\n0 1 # trailing\n\n1 2\n2,0\n".into(),
        "{\"nodes\": 4, \"edges\": [[0, 1], [1, 2], [2, 3]]}".into(),
        "[[0, 1], [1, 2], [2, 0], [2, 3]]".into(),
    ]
}

fn load_seeds() -> Vec<String> {
    vec![
        "4,7,0,9,2,2,8,1".into(),
        "5 0 3".into(),
        "18446744073709551615,0".into(),
        "1, 2 ,3,,4".into(),
    ]
}

const NUMBERS: &[&str] = &[
    "-1",
    "0",
    "1",
    "2",
    "3",
    "-0.0",
    "1e308",
    "1e-308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "4294967296",
    "16777217",
    "1000000000000",
    "0.5",
    "2.5e3",
    "99999999999999999999999999",
];

const TOKENS: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    "\"",
    "=",
    ",",
    "\n",
    "#",
    ":",
    "x",
    "[[",
    "]]",
    ".",
    "'",
    "\\",
    "ring:",
    "file:",
    "hypercube:",
    "random:",
    "kind",
    "count",
    "\u{0}",
    "é",
];

/// A mutated copy of `seed`.
fn mutate(rng: &mut Pcg64, seed: &str) -> String {
    let mut s: Vec<u8> = seed.as_bytes().to_vec();
    // Mostly one or two mutations, so that many inputs get past the syntax into validation.
    let rounds = [1, 1, 1, 2, 2, 3, 5][rng.random_range(0..7)];
    for _ in 0..rounds {
        let len = s.len();
        let at = if len == 0 {
            0
        } else {
            rng.random_range(0..=len)
        };
        match rng.random_range(0..8) {
            // Replace a number (a run of digits) with an extreme one.
            0 | 1 => {
                let digits: Vec<usize> = (0..len).filter(|&i| s[i].is_ascii_digit()).collect();
                if digits.is_empty() {
                    continue;
                }
                let start = digits[rng.random_range(0..digits.len())];
                let mut end = start;
                while end < len && (s[end].is_ascii_digit() || s[end] == b'.') {
                    end += 1;
                }
                let n = NUMBERS[rng.random_range(0..NUMBERS.len())];
                s.splice(start..end, n.bytes());
            }
            2 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                s.splice(at..at, t.bytes());
            }
            3 if len > 0 => {
                let end = (at + rng.random_range(1..20)).min(len);
                s.drain(at.min(len)..end);
            }
            4 if len > 0 => {
                let start = rng.random_range(0..len);
                let end = (start + rng.random_range(1..40)).min(len);
                let piece = s[start..end].to_vec();
                s.splice(at..at, piece);
            }
            5 => {
                let b: u8 = rng.random();
                s.insert(at, b);
            }
            6 if len > 1 => {
                let (a, b) = (rng.random_range(0..len), rng.random_range(0..len));
                s.swap(a, b);
            }
            _ => {
                // Repeat a line: long lists, duplicated keys and tables.
                let text = String::from_utf8_lossy(&s).to_string();
                let lines: Vec<&str> = text.lines().collect();
                if let Some(line) = lines.get(rng.random_range(0..lines.len().max(1))) {
                    let copies = rng.random_range(1..4);
                    let extra = format!("\n{line}").repeat(copies);
                    s.splice(at..at, extra.bytes());
                }
            }
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

/// Inputs accepted by each parser, and scenarios run.
static ACCEPTED: [AtomicU64; 4] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];

fn scenario(text: &str) {
    let Ok(s) = hetlb_sim::Scenario::from_toml(text) else {
        return;
    };
    ACCEPTED[0].fetch_add(1, Ordering::Relaxed);
    if s.memory_estimate() < RUN_BELOW_BYTES {
        ACCEPTED[3].fetch_add(1, Ordering::Relaxed);
        if let Ok(report) = s.run() {
            assert!(
                report.makespan.is_finite(),
                "makespan {} from {text:?}",
                report.makespan
            );
        }
    }
}

fn graph(text: &str, nodes: Option<usize>) {
    if let Ok(g) = hetlb_core::topology::Graph::parse(text, nodes) {
        use hetlb_core::topology::Topology;
        ACCEPTED[1].fetch_add(1, Ordering::Relaxed);
        assert!(g.node_count() >= 1 && g.edge_count() >= 1, "{text:?}");
    }
}

fn loads(text: &str) {
    let text = text.trim_start_matches('@'); // never a file
    if let Ok(v) = crate::input::parse_loads(text, "--loads") {
        ACCEPTED[2].fetch_add(1, Ordering::Relaxed);
        assert!(!v.is_empty());
    }
    let _ = crate::input::parse_capacities(text, "--capacities");
    let _ = crate::input::parse_list::<u32>(text, "--slowdown", Some("a whole number"));
}

/// Runs `count` mutated inputs of every parser from `seed`, with a watchdog.
fn run_inputs(seed: u64, count: u64) {
    static STARTED: AtomicU64 = AtomicU64::new(0);
    static CURRENT: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
    let base = Instant::now();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let started = Duration::from_nanos(STARTED.load(Ordering::Relaxed));
            if base.elapsed().saturating_sub(started) > PER_INPUT {
                let input = CURRENT.lock().map(|c| c.clone()).unwrap_or_default();
                eprintln!("hang: one input took more than {PER_INPUT:?}: {input:?}");
                std::process::exit(3);
            }
        }
    });
    let mut rng = Pcg64::seed_from_u64(seed);
    let (scenarios, graphs, load_lists) = (scenario_seeds(), graph_seeds(), load_seeds());
    for i in 0..count {
        for kind in 0..3 {
            let pool = match kind {
                0 => &scenarios,
                1 => &graphs,
                _ => &load_lists,
            };
            let pick = rng.random_range(0..pool.len());
            let input = mutate(&mut rng, &pool[pick]);
            if let Ok(mut c) = CURRENT.lock() {
                c.clone_from(&input);
            }
            let nodes = [None, Some(4), Some(1)][(i % 3) as usize];
            STARTED.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
            let outcome = std::panic::catch_unwind(|| match kind {
                0 => scenario(&input),
                1 => graph(&input, nodes),
                _ => loads(&input),
            });
            if outcome.is_err() {
                eprintln!("panic on input {i} of kind {kind}: {input:?}");
                std::process::exit(4);
            }
        }
    }
    let n = |i: usize| ACCEPTED[i].load(Ordering::Relaxed);
    println!(
        "accepted: {} scenarios ({} run), {} graphs, {} load lists of {count} each",
        n(0),
        n(3),
        n(1),
        n(2)
    );
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The child: runs the inputs. [`parsers_survive_mutated_inputs`] starts it in a process of
/// its own under the memory limit; run alone (`--ignored`), it runs them in this process.
#[test]
#[ignore = "run by parsers_survive_mutated_inputs in a child process under a memory limit"]
fn fuzz_child() {
    run_inputs(
        env_u64("HETLB_FUZZ_SEED", 2026),
        env_u64("HETLB_FUZZ_INPUTS", DEFAULT_INPUTS),
    );
}

#[test]
fn parsers_survive_mutated_inputs() {
    let me = std::env::current_exe().expect("the test binary");
    let started = Instant::now();
    // `ulimit -v` bounds the child's memory; where there is no shell the limit is skipped.
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {MEMORY_KIB} && exec \"$0\" fuzz::fuzz_child --exact --ignored --test-threads 1 --nocapture"
        ))
        .arg(&me)
        .output()
        .or_else(|_| {
            std::process::Command::new(&me)
                .args(["fuzz::fuzz_child", "--exact", "--ignored", "--nocapture"])
                .output()
        })
        .expect("start the fuzzing child");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the parsers failed on a mutated input ({:?}): {stderr}",
        out.status
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 passed"),
        "the child ran nothing: {stdout}"
    );
    let accepted = stdout
        .lines()
        .find_map(|l| l.find("accepted:").map(|i| &l[i..]))
        .unwrap_or_default();
    assert!(!accepted.is_empty(), "the child ran no input: {stdout}");
    eprintln!(
        "fuzzing: {} inputs per parser in {:.1} s; {accepted}",
        env_u64("HETLB_FUZZ_INPUTS", DEFAULT_INPUTS),
        started.elapsed().as_secs_f64()
    );
}
