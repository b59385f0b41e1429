//! What every `hetlb bench` subcommand shares: interleaved repetitions of a kernel and its
//! floor, medians, ratios, and one report printed as a table, JSON or CSV.
//!
//! Each repetition runs every case once, starting with a different case each time, so that a
//! burst of load from another process on the shared machine hits kernel and floor alike.
//! A ratio is the kernel's median over the floor's median, both from the same run.

use crate::output::{Format, fixed, print_csv, print_json, table};
use anyhow::{Result, bail};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// Runs `f` and returns its result and the seconds it took.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

/// The median of `xs` (the mean of the two middle values for an even count).
///
/// # Panics
/// If `xs` is empty.
pub fn median(xs: &[f64]) -> f64 {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

/// One thing to time: `run` does any untimed preparation and returns the seconds of the timed
/// part.
pub struct Case<'a> {
    name: String,
    run: Box<dyn FnMut() -> Result<f64> + 'a>,
}

impl<'a> Case<'a> {
    /// A case named `name`.
    pub fn new(name: impl Into<String>, run: impl FnMut() -> Result<f64> + 'a) -> Self {
        Self {
            name: name.into(),
            run: Box::new(run),
        }
    }
}

/// Seconds of every repetition of every case, by case name.
pub struct Samples(BTreeMap<String, Vec<f64>>);

impl Samples {
    /// The median seconds of case `name`.
    pub fn median(&self, name: &str) -> f64 {
        self.0.get(name).map_or(f64::NAN, |xs| median(xs))
    }
}

/// Runs `warmup` untimed and then `repeat` timed rounds of all `cases`, interleaved, with a
/// progress bar on a terminal.
///
/// # Errors
/// `--repeat` of zero, or the first error of a case.
pub fn interleave(repeat: usize, warmup: usize, mut cases: Vec<Case<'_>>) -> Result<Samples> {
    if repeat == 0 {
        bail!("--runs: must be at least 1");
    }
    let bar = crate::progress::bar(
        ((warmup + repeat) * cases.len()) as u64,
        "benchmark repetitions",
    );
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let count = cases.len();
    for round in 0..warmup + repeat {
        for i in 0..count {
            let case = &mut cases[(round + i) % count];
            let secs = (case.run)()?;
            if round >= warmup {
                samples.entry(case.name.clone()).or_default().push(secs);
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    Ok(Samples(samples))
}

/// The machine a figure was measured on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// Hardware threads the operating system offers.
    pub available_parallelism: usize,
    /// Threads the kernels (and their floors) ran on.
    pub threads: usize,
    /// The processor's model name, when the system tells.
    pub cpu: Option<String>,
}

impl Machine {
    /// This machine, running on `threads` threads.
    pub fn here(threads: usize) -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        });
        Self {
            available_parallelism: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads,
            cpu,
        }
    }
}

/// A kernel's median beside its floor's, from the same interleaved run.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Short name; the report also has a top-level field `<key>_ratio`.
    pub key: String,
    /// What was timed.
    pub kernel: String,
    /// Median seconds of one run of the kernel.
    pub kernel_seconds: f64,
    /// What it is measured against.
    pub floor: String,
    /// Median seconds of one run of the floor.
    pub floor_seconds: f64,
    /// `kernel_seconds / floor_seconds`.
    pub kernel_floor_ratio: f64,
    /// The ratio the project aims at, where it has one.
    pub aim_ratio: Option<f64>,
    /// Work items per run (tasks, vectors, …), when per-item times make more sense.
    pub items: Option<u64>,
}

impl Comparison {
    /// Kernel `kernel` (case name) against floor `floor` (case name) in `samples`.
    pub fn of(
        samples: &Samples,
        key: &str,
        kernel: (&str, &str),
        floor: (&str, &str),
        aim_ratio: Option<f64>,
    ) -> Self {
        let (k, f) = (samples.median(kernel.0), samples.median(floor.0));
        Self {
            key: key.to_string(),
            kernel: kernel.1.to_string(),
            kernel_seconds: k,
            floor: floor.1.to_string(),
            floor_seconds: f,
            kernel_floor_ratio: k / f,
            aim_ratio,
            items: None,
        }
    }

    /// The same, with `items` work items per run.
    pub fn per(mut self, items: u64) -> Self {
        self.items = Some(items);
        self
    }
}

/// What a `hetlb bench` subcommand prints.
#[derive(Debug, Serialize)]
pub struct Report<P: Serialize> {
    /// The subcommand.
    pub benchmark: &'static str,
    /// Where it ran.
    pub machine: Machine,
    /// Timed repetitions per case.
    pub repeat: usize,
    /// The subcommand's parameters and extra figures.
    #[serde(flatten)]
    pub details: P,
    /// Every kernel against its floor.
    pub comparisons: Vec<Comparison>,
    /// `<key>_ratio` for every comparison.
    #[serde(flatten)]
    pub ratios: BTreeMap<String, f64>,
}

impl<P: Serialize> Report<P> {
    /// A report of `comparisons`.
    pub fn new(
        benchmark: &'static str,
        machine: Machine,
        repeat: usize,
        details: P,
        comparisons: Vec<Comparison>,
    ) -> Self {
        let ratios = comparisons
            .iter()
            .map(|c| (format!("{}_ratio", c.key), c.kernel_floor_ratio))
            .collect();
        Self {
            benchmark,
            machine,
            repeat,
            details,
            comparisons,
            ratios,
        }
    }

    /// Prints the report; `title` and `notes` go around the table in the table format.
    pub fn print(&self, format: Format, title: &str, notes: &[String]) -> Result<()> {
        match format {
            Format::Json => print_json(self),
            Format::Csv => print_csv(
                &[
                    "benchmark",
                    "key",
                    "kernel",
                    "kernel_seconds",
                    "floor",
                    "floor_seconds",
                    "kernel_floor_ratio",
                    "aim_ratio",
                    "items",
                    "threads",
                    "repeat",
                ],
                self.comparisons.iter().map(|c| {
                    vec![
                        self.benchmark.to_string(),
                        c.key.clone(),
                        c.kernel.clone(),
                        c.kernel_seconds.to_string(),
                        c.floor.clone(),
                        c.floor_seconds.to_string(),
                        c.kernel_floor_ratio.to_string(),
                        c.aim_ratio.map_or(String::new(), |a| a.to_string()),
                        c.items.map_or(String::new(), |n| n.to_string()),
                        self.machine.threads.to_string(),
                        self.repeat.to_string(),
                    ]
                }),
            ),
            Format::Table => {
                crate::out!(
                    "{title} ({} threads of {}; medians of {}, interleaved)",
                    self.machine.threads,
                    self.machine.available_parallelism,
                    self.repeat
                );
                let mut t = table(["kernel", "median", "floor", "median", "ratio", "aim"]);
                for c in &self.comparisons {
                    let time = |secs: f64| match c.items {
                        Some(n) => format!("{} µs/item", fixed(secs / n as f64 * 1e6, 3)),
                        None => human_seconds(secs),
                    };
                    t.add_row(vec![
                        c.kernel.clone(),
                        time(c.kernel_seconds),
                        c.floor.clone(),
                        time(c.floor_seconds),
                        format!("{}×", fixed(c.kernel_floor_ratio, 2)),
                        c.aim_ratio
                            .map_or(String::new(), |a| format!("≤ {}×", fixed(a, 0))),
                    ]);
                }
                crate::out!("{t}");
                for n in notes {
                    crate::out!("{n}");
                }
                Ok(())
            }
        }
    }
}

/// Seconds as ms or s, three significant-ish digits.
pub fn human_seconds(secs: f64) -> String {
    if secs < 1.0 {
        format!("{} ms", fixed(secs * 1e3, 2))
    } else {
        format!("{} s", fixed(secs, 3))
    }
}

/// Runs `f` on a rayon pool of `threads` threads (all available for `None`) and returns its
/// result with the pool's size.
///
/// # Errors
/// When the pool cannot be built, or `f` fails.
pub fn with_threads<T>(
    threads: Option<usize>,
    f: impl FnOnce(usize) -> Result<T> + Send,
) -> Result<T>
where
    T: Send,
{
    if threads == Some(0) {
        bail!("--threads: must be at least 1");
    }
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        builder = builder.num_threads(n);
    }
    let pool = builder
        .build()
        .map_err(|e| anyhow::anyhow!("--threads: {e}"))?;
    pool.install(|| f(rayon::current_num_threads()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn interleaving_runs_every_case_every_round_and_skips_the_warm_up() {
        let mut log = Vec::new();
        {
            let log = std::cell::RefCell::new(&mut log);
            let cases = vec![
                Case::new("a", || {
                    log.borrow_mut().push('a');
                    Ok(1.0)
                }),
                Case::new("b", || {
                    log.borrow_mut().push('b');
                    Ok(3.0)
                }),
            ];
            let s = interleave(3, 1, cases).unwrap();
            assert_eq!(s.median("a"), 1.0);
            assert_eq!(s.median("b"), 3.0);
            let c = Comparison::of(&s, "x", ("b", "b"), ("a", "a"), Some(5.0));
            assert_eq!(c.kernel_floor_ratio, 3.0);
        }
        assert_eq!(log.iter().collect::<String>(), "abbaabba");
        assert!(interleave(0, 0, Vec::new()).is_err());
    }
}
