//! What every benchmark shares: interleaved repetitions of a kernel and its floor, medians,
//! ratios, and one typed report.
//!
//! Each repetition runs every case once, starting with a different case each time, so that a
//! burst of load from another process on the shared machine hits kernel and floor alike.
//! A ratio is the kernel's median over the floor's median, both from the same run.

use crate::BenchError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// Runs `f` and returns its result and the seconds it took.
///
/// # Example
/// ```
/// let (x, secs) = hetlb_bench::timing::timed(|| 6 * 7);
/// assert_eq!(x, 42);
/// assert!(secs >= 0.0);
/// ```
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

/// The median of `xs` (the mean of the two middle values for an even count; NaN for none).
///
/// # Complexity
/// `O(n log n)`.
///
/// # Example
/// ```
/// use hetlb_bench::timing::median;
/// assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
/// assert!(median(&[]).is_nan());
/// ```
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

/// Told `(done, total)` after every run of a case: how far a benchmark has come.
pub type Progress<'a> = &'a mut (dyn FnMut(u64, u64) + Send);

/// The function of a [`Case`]: untimed preparation, then the seconds of the timed part.
type CaseFn<'a> = Box<dyn FnMut() -> Result<f64, BenchError> + 'a>;

/// One thing to time: `run` does any untimed preparation and returns the seconds of the timed
/// part.
pub struct Case<'a> {
    name: String,
    run: CaseFn<'a>,
}

impl std::fmt::Debug for Case<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case").field("name", &self.name).finish()
    }
}

impl<'a> Case<'a> {
    /// A case named `name`.
    pub fn new(name: impl Into<String>, run: impl FnMut() -> Result<f64, BenchError> + 'a) -> Self {
        Self {
            name: name.into(),
            run: Box::new(run),
        }
    }
}

/// Seconds of every repetition of every case, by case name.
#[derive(Debug, Clone, Default)]
pub struct Samples(BTreeMap<String, Vec<f64>>);

impl Samples {
    /// The median seconds of case `name` (NaN for a case that was not timed).
    pub fn median(&self, name: &str) -> f64 {
        self.0.get(name).map_or(f64::NAN, |xs| median(xs))
    }

    /// Every timed repetition of case `name`, in order.
    pub fn of(&self, name: &str) -> &[f64] {
        self.0.get(name).map_or(&[], Vec::as_slice)
    }
}

/// Runs `warmup` untimed and then `repeat` timed rounds of all `cases`, interleaved: round
/// `r` starts with case `r mod k`. `progress(done, total)` is told after every run of a case.
///
/// # Errors
/// [`BenchError::Setting`] (`runs`) for a `repeat` of zero; otherwise the first error of a
/// case.
///
/// # Complexity
/// `(warmup + repeat) × k` runs of the `k` cases.
///
/// # Example
/// ```
/// use hetlb_bench::timing::{Case, interleave};
/// let cases = vec![Case::new("kernel", || Ok(3.0)), Case::new("floor", || Ok(1.0))];
/// let samples = interleave(5, 1, cases, &mut |_, _| {}).unwrap();
/// assert_eq!(samples.median("kernel") / samples.median("floor"), 3.0);
/// assert_eq!(samples.of("floor").len(), 5);
/// ```
pub fn interleave(
    repeat: usize,
    warmup: usize,
    mut cases: Vec<Case<'_>>,
    progress: Progress<'_>,
) -> Result<Samples, BenchError> {
    if repeat == 0 {
        return Err(BenchError::setting("runs", "must be at least 1"));
    }
    let total = ((warmup + repeat) * cases.len()) as u64;
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let count = cases.len();
    let mut done = 0;
    for round in 0..warmup + repeat {
        for i in 0..count {
            let case = &mut cases[(round + i) % count];
            let secs = (case.run)()?;
            if round >= warmup {
                samples.entry(case.name.clone()).or_default().push(secs);
            }
            done += 1;
            progress(done, total);
        }
    }
    Ok(Samples(samples))
}

/// The machine a figure was measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
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
            available_parallelism: available_parallelism(),
            threads,
            cpu,
        }
    }
}

/// Hardware threads the operating system offers (1 when it does not tell).
pub fn available_parallelism() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A kernel's median beside its floor's, from the same interleaved run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
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
    /// Kernel `kernel` (case name, description) against floor `floor` (case name,
    /// description) in `samples`.
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::Comparison;
    /// use hetlb_bench::timing::{Case, interleave};
    /// let cases = vec![Case::new("k", || Ok(2.0)), Case::new("f", || Ok(1.0))];
    /// let s = interleave(3, 0, cases, &mut |_, _| {}).unwrap();
    /// let c = Comparison::of(&s, "x", ("k", "the kernel"), ("f", "the floor"), Some(3.0));
    /// assert_eq!(c.kernel_floor_ratio, 2.0);
    /// ```
    pub fn of(
        samples: &Samples,
        key: &str,
        kernel: (&str, &str),
        floor: (&str, &str),
        aim_ratio: Option<f64>,
    ) -> Self {
        let (k, f) = (samples.median(kernel.0), samples.median(floor.0));
        Self::new(key, (kernel.1, k), (floor.1, f), aim_ratio)
    }

    /// Kernel `(description, median seconds)` against floor `(description, median seconds)`.
    pub fn new(key: &str, kernel: (&str, f64), floor: (&str, f64), aim_ratio: Option<f64>) -> Self {
        Self {
            key: key.to_string(),
            kernel: kernel.0.to_string(),
            kernel_seconds: kernel.1,
            floor: floor.0.to_string(),
            floor_seconds: floor.1,
            kernel_floor_ratio: kernel.1 / floor.1,
            aim_ratio,
            items: None,
        }
    }

    /// The same, with `items` work items per run.
    #[must_use]
    pub fn per(mut self, items: u64) -> Self {
        self.items = Some(items);
        self
    }
}

/// What a benchmark reports: where it ran, its parameters and figures (`details`), and every
/// kernel against its floor. Serialised flat: `details`' fields and one `<key>_ratio` per
/// comparison sit at the top level.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Report<P: Serialize> {
    /// The benchmark.
    pub benchmark: &'static str,
    /// Where it ran.
    pub machine: Machine,
    /// Timed repetitions per case.
    pub repeat: usize,
    /// The benchmark's parameters and extra figures.
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
}

/// Runs `f` on a rayon pool of `threads` threads (all available for `None`) and returns its
/// result; `f` is given the pool's size.
///
/// # Errors
/// [`BenchError::Setting`] or [`BenchError::Refused`] (`threads`) when the pool cannot be
/// built; otherwise `f`'s error.
pub fn with_threads<T>(
    threads: Option<usize>,
    f: impl FnOnce(usize) -> Result<T, BenchError> + Send,
) -> Result<T, BenchError>
where
    T: Send,
{
    if threads == Some(0) {
        return Err(BenchError::setting("threads", "must be at least 1"));
    }
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        builder = builder.num_threads(n);
    }
    let pool = builder
        .build()
        .map_err(|e| BenchError::refused("threads", e))?;
    pool.install(|| f(rayon::current_num_threads()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaving_runs_every_case_every_round_and_skips_the_warm_up() {
        let mut log = Vec::new();
        let mut told = Vec::new();
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
            let s = interleave(3, 1, cases, &mut |done, total| told.push((done, total))).unwrap();
            assert_eq!(s.median("a"), 1.0);
            assert_eq!(s.median("b"), 3.0);
            assert!(s.median("c").is_nan());
            let c = Comparison::of(&s, "x", ("b", "b"), ("a", "a"), Some(5.0));
            assert_eq!(c.kernel_floor_ratio, 3.0);
        }
        assert_eq!(log.iter().collect::<String>(), "abbaabba");
        assert_eq!(told.last(), Some(&(8, 8)));
        assert!(matches!(
            interleave(0, 0, Vec::new(), &mut |_, _| {}),
            Err(BenchError::Setting {
                setting: "runs",
                ..
            })
        ));
    }

    #[test]
    fn a_case_error_stops_the_run() {
        let cases = vec![Case::new("bad", || Err(BenchError::Check("wrong".into())))];
        let e = interleave(2, 0, cases, &mut |_, _| {}).unwrap_err();
        assert_eq!(e.to_string(), "wrong");
    }

    #[test]
    fn a_report_has_one_ratio_field_per_comparison() {
        let c = Comparison::new("k", ("kernel", 2.0), ("floor", 0.5), None);
        let r = Report::new("x", Machine::here(1), 1, (), vec![c]);
        assert_eq!(r.ratios.get("k_ratio"), Some(&4.0));
    }

    #[test]
    fn a_pool_of_the_size_asked_for() {
        assert_eq!(with_threads(Some(2), Ok).unwrap(), 2);
        assert!(matches!(
            with_threads(Some(0), Ok),
            Err(BenchError::Setting {
                setting: "threads",
                ..
            })
        ));
    }
}
