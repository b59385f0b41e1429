//! Hostile scenario files through `hetlb run scenario` and `hetlb simulate`, each under an
//! address-space limit (`ulimit -v`) and a time limit: extreme task counts, node counts,
//! rates, times, arrivals, links, topologies and policies, up to four at a time on a small
//! valid scenario, and now and then a file cut short. Every run must end with exit 0, or
//! with exit 1 or 2 and one `error: ...` line (notes and warnings aside): never an abort, a
//! panic, a failed allocation or a hang.
//!
//! `cargo test` runs a seeded sample of 30 files (the README's quick test command; CI runs
//! 300: `HETLB_FUZZ_SCENARIOS=300 cargo test -p hetlb-cli --test commands
//! fuzz_run_scenario`); `scripts/fuzz-run-scenario.sh` (or `HETLB_FUZZ_SCENARIOS=1000`) the
//! full run. `HETLB_FUZZ_SEED`, `HETLB_FUZZ_ULIMIT_KIB`
//! (default 2 GiB) and `HETLB_FUZZ_SECONDS` (default 120) change the seed and the limits;
//! `HETLB_FUZZ_TALLY=1` prints how the runs ended, alike errors grouped; `HETLB_FUZZ_BIN`
//! runs another build of `hetlb`. The files of the failures are kept in the scratch
//! directory.

use super::common;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// A seeded xorshift generator: the same files on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const COUNTS: &[&str] = &[
    "0",
    "-1",
    "257",
    "1024",
    "16777216",
    "16777217",
    "4294967296",
    "18446744073709551615",
    "1e3",
];
const TASKS: &[&str] = &[
    "0",
    "-1",
    "4294967295",
    "4294967296",
    "1099511627776",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "2.5",
    "1000",
    "20000",
];
const RATES: &[&str] = &[
    "0.0", "-1.0", "1e-300", "1e300", "nan", "inf", "-inf", "1e-9", "1e9", "5e-324", "10.0",
    "0.001",
];
const TIMES: &[&str] = &[
    "0.0", "-1.0", "1e-300", "1e300", "nan", "inf", "1e-9", "1e6", "1e15", "0.5", "2.0",
];
const TOPOLOGIES: &[&str] = &[
    "hypercube:40",
    "hypercube:24",
    "hypercube:0",
    "complete:100000",
    "complete:2000",
    "random:1000000:0.5",
    "random:300:1.5",
    "torus:65536x65536",
    "torus:1x1",
    "ring:0",
    "ring:1",
    "star:1",
    "kary:2:40",
    "mesh:4096x4096",
    "file:/dev/zero",
    "file:/nonexistent",
    "path:-3",
    "nonsense",
];
const ALGORITHMS: &[&str] = &[
    "dishet",
    "dishet-tight",
    "diffusion",
    "random-biasing",
    "gdem",
    "oem",
    "dem",
    "cwa",
    "hybrid",
    "bogus",
];

/// The sections of a small valid scenario, which the mutations then change.
struct Draft {
    top: Vec<String>,
    nodes: Vec<String>,
    topology: Vec<String>,
    links: Vec<String>,
    injections: Vec<Vec<String>>,
    arrivals: Option<Vec<String>>,
    policy: Vec<String>,
    output: Vec<String>,
}

fn kv(key: &str, value: impl std::fmt::Display) -> String {
    format!("{key} = {value}")
}

/// A small scenario that runs in well under a second.
fn base(rng: &mut Rng) -> Draft {
    let n: u32 = [1, 2, 3, 4, 6, 8, 16][rng.below(7)];
    let topology = match rng.below(4) {
        0 => vec![kv("spec", format!("\"ring:{}\"", n.max(3)))],
        1 => vec![kv("spec", format!("\"complete:{n}\""))],
        2 if n.is_power_of_two() => vec![kv("kind", "\"hypercube\"")],
        _ => vec![kv("spec", format!("\"path:{n}\""))],
    };
    let n = if topology[0].contains("ring") {
        n.max(3)
    } else {
        n
    };
    let cube = topology[0].contains("hypercube");
    let policy = match rng.below(if cube { 4 } else { 3 }) {
        0 => vec![kv("kind", "\"none\"")],
        1 => vec![kv("kind", "\"delay-aware\""), kv("compensate", "true")],
        2 => vec![
            kv("kind", "\"diffusion\""),
            kv("algorithm", "\"dishet\""),
            kv("interval", "0.5"),
        ],
        _ => vec![
            kv("kind", "\"hypercube\""),
            kv("algorithm", "\"oem\""),
            kv("threshold", 3),
        ],
    };
    Draft {
        top: vec![kv("seed", rng.below(100)), kv("end_time", "20.0")],
        nodes: vec![
            kv("count", n),
            kv("rate", ["1.0", "50.0", "200.0"][rng.below(3)]),
            kv(
                "service",
                ["\"deterministic\"", "\"exponential\""][rng.below(2)],
            ),
            kv("initial", [0, 5, 50][rng.below(3)]),
        ],
        topology,
        links: vec![kv("rate", "100.0"), kv("delay", "0.01")],
        injections: vec![vec![kv("node", 0), kv("time", "0.1"), kv("tasks", 100)]],
        arrivals: rng
            .chance(30)
            .then(|| vec![kv("rate", "2.0"), kv("per_node", 20)]),
        policy,
        output: vec![kv("series", ["true", "false"][rng.below(2)])],
    }
}

/// Sets `key` in `section` (replacing it, or adding it).
fn set(section: &mut Vec<String>, key: &str, value: &str) {
    section.retain(|l| !l.starts_with(&format!("{key} =")));
    section.push(kv(key, value));
}

/// One hostile change.
fn mutate(d: &mut Draft, rng: &mut Rng) {
    match rng.below(16) {
        0 => {
            let count = rng.pick(COUNTS);
            set(&mut d.nodes, "count", count);
            if rng.chance(60) {
                let kind = rng.pick(&["ring", "complete", "path", "star"]);
                d.topology = vec![kv("spec", format!("\"{kind}:{count}\""))];
            }
        }
        1 => set(&mut d.nodes, "initial", rng.pick(TASKS)),
        2 => set(&mut d.nodes, "rate", rng.pick(RATES)),
        3 => {
            let inj = vec![
                kv(
                    "node",
                    rng.pick(&["0", "1", "-1", "1000000", "18446744073709551615"]),
                ),
                kv("time", rng.pick(TIMES)),
                kv("tasks", rng.pick(TASKS)),
            ];
            d.injections.push(inj);
        }
        4 => {
            let extra = 1 + rng.below(3);
            for _ in 0..extra {
                d.injections.push(vec![
                    kv("node", 0),
                    kv("time", "0.0"),
                    kv("tasks", "4294967295"),
                ]);
            }
        }
        5 => {
            let mut a = vec![kv(
                "rate",
                rng.pick(&["0.5", "10.0", "1e9", "1e300", "-1.0", "nan"]),
            )];
            if rng.chance(60) {
                a.push(kv(
                    "per_node",
                    rng.pick(&["0", "1", "100", "4294967295", "-1"]),
                ));
            }
            d.arrivals = Some(a);
        }
        6 => {
            let end = rng.pick(TIMES);
            d.top.retain(|l| !l.starts_with("end_time"));
            if rng.chance(80) {
                d.top.push(kv("end_time", end));
            }
        }
        7 => set(&mut d.links, "rate", rng.pick(RATES)),
        8 => set(&mut d.links, "delay", rng.pick(TIMES)),
        9 => d.topology = vec![kv("spec", format!("\"{}\"", rng.pick(TOPOLOGIES)))],
        10 => {
            d.policy = vec![
                kv("kind", "\"diffusion\""),
                kv("algorithm", format!("\"{}\"", rng.pick(ALGORITHMS))),
                kv("interval", rng.pick(TIMES)),
            ];
            if rng.chance(30) {
                d.policy
                    .push(kv("lambda", rng.pick(&["0.5", "0.0", "1.0", "2.0", "nan"])));
            }
        }
        11 => {
            d.policy = vec![
                kv("kind", "\"hypercube\""),
                kv("algorithm", format!("\"{}\"", rng.pick(ALGORITHMS))),
                kv("threshold", rng.pick(&["0", "1", "3", "4294967295", "-1"])),
            ];
        }
        12 => {
            d.policy = vec![
                kv("kind", "\"delay-aware\""),
                kv("compensate", rng.pick(&["true", "false"])),
                kv(
                    "carry_out",
                    rng.pick(&["\"centre\"", "\"neighbourhood\"", "\"elsewhere\""]),
                ),
                kv("status_interval", rng.pick(TIMES)),
            ];
        }
        13 => set(&mut d.output, "series_interval", rng.pick(TIMES)),
        14 => {
            let n = [1usize, 4, 300, 100_000][rng.below(4)];
            let rates: Vec<&str> = (0..n).map(|_| rng.pick(&["1.0", "0.0", "1e300"])).collect();
            d.nodes
                .retain(|l| !l.starts_with("rate =") && !l.starts_with("count ="));
            d.nodes.push(kv("count", n));
            d.nodes.push(kv("rates", format!("[{}]", rates.join(", "))));
            d.topology = vec![kv("spec", format!("\"path:{n}\""))];
        }
        _ => {
            let n = [2usize, 5, 300][rng.below(3)];
            let loads: Vec<&str> = (0..n)
                .map(|_| rng.pick(&["1", "0", "4294967295"]))
                .collect();
            d.nodes
                .retain(|l| !l.starts_with("initial =") && !l.starts_with("count ="));
            d.nodes.push(kv("count", n));
            d.nodes
                .push(kv("initial_loads", format!("[{}]", loads.join(", "))));
            d.topology = vec![kv("spec", format!("\"path:{n}\""))];
        }
    }
}

fn render(d: &Draft) -> String {
    let mut out = d.top.join("\n");
    let mut table = |name: &str, lines: &[String]| {
        out.push_str(&format!("\n[{name}]\n{}", lines.join("\n")));
    };
    table("nodes", &d.nodes);
    table("topology", &d.topology);
    table("links", &d.links);
    if let Some(a) = &d.arrivals {
        table("arrivals", a);
    }
    table("policy", &d.policy);
    table("output", &d.output);
    for inj in &d.injections {
        out.push_str(&format!("\n[[injections]]\n{}", inj.join("\n")));
    }
    out.push('\n');
    out
}

/// The `i`-th file of the run seeded `seed`.
fn scenario(seed: u64, i: u64) -> String {
    let mut rng = Rng((seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1);
    for _ in 0..4 {
        rng.next();
    }
    let mut d = base(&mut rng);
    let mutations = [0, 0, 1, 1, 1, 2, 3, 4][rng.below(8)];
    for _ in 0..mutations {
        mutate(&mut d, &mut rng);
    }
    let mut text = render(&d);
    if rng.chance(5) {
        text.truncate(rng.below(text.len()));
    }
    text
}

/// The options of the `i`-th `run scenario`.
fn run_options(seed: u64, i: u64) -> Vec<String> {
    let mut rng = Rng((seed.rotate_left(17) ^ i.wrapping_mul(0xD6E8_FEB8_6659_FD93)) | 1);
    let mut args = vec![
        "--target-seconds".to_string(),
        "0.2".into(),
        "--timeout".into(),
        "10".into(),
        "--work".into(),
        rng.pick(&["sleep", "sleep", "share:0.1", "auto"]).into(),
        "--format".into(),
        rng.pick(&["json", "csv", "table"]).into(),
    ];
    if rng.chance(30) {
        args.push("--time-scale".into());
        args.push(rng.pick(&["1e-6", "1e-3", "0.01", "1e6"]).into());
    }
    if rng.chance(40) {
        args.push("--compare".into());
    }
    args
}

/// Why the run of `args` is not a clean end, if it is not.
fn verdict(status: Option<i32>, stderr: &str) -> Option<String> {
    for bad in [
        "panicked",
        "memory allocation",
        "stack overflow",
        "RUST_BACKTRACE",
    ] {
        if stderr.contains(bad) {
            return Some(format!("`{bad}` on stderr"));
        }
    }
    match status {
        Some(0) => None,
        Some(1 | 2) => {
            let errors: Vec<&str> = stderr
                .lines()
                .filter(|l| l.starts_with("error: "))
                .collect();
            let other = stderr.lines().find(|l| {
                !(l.starts_with("error: ") || l.starts_with("note: ") || l.starts_with("warning: "))
            });
            match (errors.len(), other) {
                (1, None) => None,
                (k, other) => Some(format!("{k} error lines, other line {other:?}")),
            }
        }
        Some(137) => Some("killed at the time limit (a hang?)".into()),
        other => Some(format!("exit status {other:?}")),
    }
}

/// How a run ended: its exit status and the first line of its stderr that is neither a
/// note nor a warning.
struct Ending {
    status: Option<i32>,
    line: String,
    failure: Option<String>,
}

/// Runs `hetlb args` under the address-space and time limits.
fn run_limited(args: &[String], kib: u64, seconds: u64) -> Ending {
    let bin = std::env::var("HETLB_FUZZ_BIN").unwrap_or(env!("CARGO_BIN_EXE_hetlb").into());
    let script = format!("ulimit -v {kib} && exec timeout -s KILL {seconds} \"$0\" \"$@\"");
    let out = Command::new("sh")
        .current_dir(common::root())
        .arg("-c")
        .arg(script)
        .arg(bin)
        .args(args)
        .output()
        .expect("run sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let status = out.status.code();
    let failure = verdict(status, &stderr).map(|why| {
        let tail: String = stderr.lines().take(3).collect::<Vec<_>>().join(" | ");
        format!("{why}: {tail}")
    });
    let line = stderr
        .lines()
        .find(|l| !(l.starts_with("note: ") || l.starts_with("warning: ")))
        .unwrap_or("")
        .to_string();
    Ending {
        status,
        line,
        failure,
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What the runs of one file gave: the failures, and a line per run (`exit 0`, or the
/// error's first words).
fn check_file(i: u64, seed: u64, dir: &Path, kib: u64, seconds: u64) -> (Vec<String>, Vec<String>) {
    let path = dir.join(format!("scenario-{i}.toml"));
    std::fs::write(&path, scenario(seed, i)).expect("write a scenario");
    let file = path.to_string_lossy().into_owned();
    let mut run = vec!["run".to_string(), "scenario".into(), file.clone()];
    run.extend(run_options(seed, i));
    let simulate = vec![
        "simulate".to_string(),
        file.clone(),
        "--format".into(),
        "json".into(),
    ];
    let mut failures = Vec::new();
    let mut endings = Vec::new();
    for args in [run, simulate] {
        let end = run_limited(&args, kib, seconds);
        let kind = &args[0];
        endings.push(match end.status {
            Some(0) => format!("{kind}: exit 0"),
            _ => {
                // the error without the file's name and numbers, to group alike ones
                let what = end.line.replace(&file, "FILE");
                let what: String = what.chars().filter(|c| !c.is_ascii_digit()).collect();
                format!("{kind}: {}", what.chars().take(90).collect::<String>())
            }
        });
        if let Some(why) = end.failure {
            failures.push(format!("{}: {why}", args.join(" ")));
        }
    }
    if failures.is_empty() {
        std::fs::remove_file(&path).ok();
    }
    (failures, endings)
}

#[test]
fn hostile_scenarios_end_cleanly_under_memory_and_time_limits() {
    if cfg!(not(target_os = "linux")) {
        return; // `ulimit -v` and `timeout` as on Linux
    }
    let count = env_or("HETLB_FUZZ_SCENARIOS", 30);
    let seed = env_or("HETLB_FUZZ_SEED", 2024);
    let kib = env_or("HETLB_FUZZ_ULIMIT_KIB", 2 << 20);
    let seconds = env_or("HETLB_FUZZ_SECONDS", 120);
    let dir = common::scratch("fuzz-run-scenario");
    let next = Mutex::new(0u64);
    let failures = Mutex::new(Vec::new());
    let endings = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    if i >= count {
                        break;
                    }
                    let (f, e) = check_file(i, seed, &dir, kib, seconds);
                    failures.lock().unwrap().extend(f);
                    endings.lock().unwrap().extend(e);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let mut tally = std::collections::BTreeMap::<String, u64>::new();
    for e in endings.into_inner().unwrap() {
        *tally.entry(e).or_default() += 1;
    }
    if std::env::var_os("HETLB_FUZZ_TALLY").is_some() {
        for (ending, n) in &tally {
            eprintln!("{n:6}  {ending}");
        }
    }
    eprintln!(
        "{count} scenarios (seed {seed}) through run scenario and simulate under ulimit -v {kib}: \
         {} failures",
        failures.len()
    );
    if failures.is_empty() {
        std::fs::remove_dir_all(&dir).ok();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
