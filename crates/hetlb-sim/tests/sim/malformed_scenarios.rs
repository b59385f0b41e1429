//! Scenario files as people write them, and as they go wrong: valid scenarios mutated (bytes
//! deleted, duplicated, swapped or inserted, numbers replaced by extreme ones, structure
//! characters spliced in, lines repeated) are refused with an error or accepted; an accepted
//! scenario small enough to run runs to a finite makespan. Each case runs in a child process
//! with a time limit, so a panic, an abort or a hang fails the property, naming the input.
//!
//! `PROPTEST_CASES=20000 cargo test --release -p hetlb-sim --test sim malformed_scenarios` runs a
//! deep search.

use hetlb_sim::Scenario;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::Config;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Scenarios whose run would hold less than this are also run.
const RUN_BELOW_BYTES: u128 = 256 << 10;

/// Hand-made scenarios that use every section of the format.
const HAND_MADE: [&str; 3] = [
    "seed = 3\nend_time = 2.0\ntopology = \"torus:2x3\"\n[nodes]\ncount = 6\nrates = [1.0, \
     2.0, 3.0, 4.0, 5.0, 6.0]\ninitial_loads = [1, 2, 3, 4, 5, 6]\n[links]\nrate = 5.0\n\
     delay = 0.1\ndelay_distribution = \"exponential\"\n[[links.overrides]]\nbetween = [0, \
     1]\nrate = 1.0\n[arrivals]\nrates = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]\n[policy]\nkind = \
     \"delay-aware\"\nstatus_interval = 0.5\n[output]\nseries_interval = 0.1\n",
    "[nodes]\ncount = 4\nrate = 3.0\ninitial = 7\nservice = \"exponential\"\n[topology]\n\
     kind = \"torus\"\nrows = 2\ncols = 2\n[policy]\nkind = \"none\"\n",
    "seed = 1\n[nodes]\ncount = 6\nrate = 200.0\nservice = \"deterministic\"\ninitial = 300\n\
     [topology]\nkind = \"graph\"\nedges = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0], [4, 5]]\n\
     [links]\nrate = 100.0\ndelay = 0.0\n[[injections]]\nnode = 5\ntime = 0.1\ntasks = 1000\n\
     [policy]\nkind = \"delay-aware\"\ncompensate = true\n",
];

/// The seeds: the hand-made scenarios and, in a checkout of the workspace, the shipped
/// examples.
fn seeds() -> &'static [String] {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut seeds: Vec<String> = HAND_MADE.iter().map(|s| s.to_string()).collect();
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        for dir in ["scenarios", "simulator"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
            paths.sort();
            seeds.extend(
                paths
                    .iter()
                    .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                    .filter_map(|p| std::fs::read_to_string(p).ok()),
            );
        }
        seeds
    })
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

/// One change to a scenario's text; positions are fractions of its length, so that a change
/// applies to any text.
#[derive(Debug, Clone)]
enum Edit {
    /// Replace the number (a run of digits and dots) at or after a position.
    Number(Index, &'static str),
    /// Insert a token.
    Token(Index, &'static str),
    /// Insert a byte.
    Byte(Index, u8),
    /// Delete up to this many bytes.
    Delete(Index, usize),
    /// Copy up to this many bytes from one position to another.
    Duplicate(Index, usize, Index),
    /// Swap two bytes.
    Swap(Index, Index),
    /// Repeat a line this many times at a position (long lists, repeated keys and tables).
    RepeatLine(Index, usize, Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        2 => (any::<Index>(), select(NUMBERS)).prop_map(|(i, n)| Edit::Number(i, n)),
        1 => (any::<Index>(), select(TOKENS)).prop_map(|(i, t)| Edit::Token(i, t)),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Byte(i, b)),
        1 => (any::<Index>(), 1usize..20).prop_map(|(i, n)| Edit::Delete(i, n)),
        1 => (any::<Index>(), 1usize..40, any::<Index>())
            .prop_map(|(i, n, at)| Edit::Duplicate(i, n, at)),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Edit::Swap(a, b)),
        1 => (any::<Index>(), 1usize..4, any::<Index>())
            .prop_map(|(l, n, at)| Edit::RepeatLine(l, n, at)),
    ]
}

/// A position in `0..=len`.
fn at(i: &Index, len: usize) -> usize {
    i.index(len + 1)
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut s = text.as_bytes().to_vec();
    for e in edits {
        let len = s.len();
        match e {
            Edit::Number(i, n) => {
                let digits: Vec<usize> = (0..len).filter(|&k| s[k].is_ascii_digit()).collect();
                if digits.is_empty() {
                    continue;
                }
                let start = digits[i.index(digits.len())];
                let mut end = start;
                while end < len && (s[end].is_ascii_digit() || s[end] == b'.') {
                    end += 1;
                }
                s.splice(start..end, n.bytes());
            }
            Edit::Token(i, t) => {
                let p = at(i, len);
                s.splice(p..p, t.bytes());
            }
            Edit::Byte(i, b) => s.insert(at(i, len), *b),
            Edit::Delete(i, n) => {
                let p = at(i, len);
                s.drain(p..(p + n).min(len));
            }
            Edit::Duplicate(i, n, to) => {
                let p = at(i, len);
                let piece = s[p..(p + n).min(len)].to_vec();
                let q = at(to, len);
                s.splice(q..q, piece);
            }
            Edit::Swap(a, b) if len > 1 => s.swap(a.index(len), b.index(len)),
            Edit::Swap(..) => {}
            Edit::RepeatLine(l, copies, to) => {
                let text = String::from_utf8_lossy(&s).into_owned();
                let lines: Vec<&str> = text.lines().collect();
                if lines.is_empty() {
                    continue;
                }
                let extra = format!("\n{}", lines[l.index(lines.len())]).repeat(*copies);
                let q = at(to, len);
                s.splice(q..q, extra.bytes());
            }
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

/// A seed with one to five edits (mostly one or two, so that many inputs get past the
/// syntax into validation).
fn mutated() -> impl Strategy<Value = String> {
    (
        any::<Index>(),
        prop::collection::vec(edit(), 1..=5).prop_flat_map(|edits| {
            let keep = prop_oneof![3 => Just(1usize), 2 => Just(2), 1 => 3usize..=5];
            (Just(edits), keep)
        }),
    )
        .prop_map(|(seed, (edits, keep))| {
            let seeds = seeds();
            let seed = &seeds[seed.index(seeds.len())];
            apply(seed, &edits[..keep.min(edits.len())])
        })
}

proptest! {
    #![proptest_config(Config {
        cases: 1000,
        // Each case in a child process with a time limit: a panic, an abort (an allocation
        // that cannot be served) or a hang fails the case instead of the whole run.
        fork: true,
        timeout: 10_000,
        ..Config::default()
    })]

    #[test]
    fn a_mutated_scenario_is_refused_or_runs(text in mutated()) {
        if let Ok(s) = Scenario::from_toml(&text)
            && s.memory_estimate() < RUN_BELOW_BYTES
            && let Ok(report) = s.run()
        {
            prop_assert!(report.makespan.is_finite(), "makespan {}", report.makespan);
            prop_assert!(report.executed <= report.initial + report.injected + report.arrived);
        }
    }
}

#[test]
fn the_seeds_are_valid_scenarios() {
    for text in seeds() {
        Scenario::from_toml(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    }
    assert!(seeds().len() >= HAND_MADE.len());
}
