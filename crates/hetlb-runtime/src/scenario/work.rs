//! How a rank spends a task's service time: real CPU work calibrated to the node's rate, or a
//! timed wait.

use crate::workload::synthetic::Synthetic;
use std::time::{Duration, Instant};

/// What a task does on its rank for its service time.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Work {
    /// CPU work: a synthetic kernel run for as many rounds as the service time is worth on
    /// this machine (calibrated at the start). Ranks that compute at the same time share the
    /// cores, as real programs would.
    #[default]
    Cpu,
    /// A timed wait of the service time: a machine with a core per rank, emulated.
    Sleep,
    /// CPU work for this fraction of the service time, then a wait until the task is due:
    /// with `cores ÷ ranks`, every rank can be busy at once and the ranks still never need
    /// more cores than the machine has.
    Share(f64),
}

impl Work {
    /// The fraction of a service time spent computing.
    pub fn cpu_fraction(self) -> f64 {
        match self {
            Work::Cpu => 1.0,
            Work::Sleep => 0.0,
            Work::Share(f) => f.clamp(0.0, 1.0),
        }
    }

    /// `auto`: CPU work when every one of `nodes` ranks has a core of this machine, else the
    /// share of CPU work that fits the cores (`cores ÷ nodes`).
    pub fn auto(nodes: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if nodes <= cores {
            Work::Cpu
        } else {
            Work::Share(cores as f64 / nodes as f64)
        }
    }

    /// A short description for reports.
    pub fn describe(self) -> String {
        match self {
            Work::Cpu => "CPU work".into(),
            Work::Sleep => "timed waits".into(),
            Work::Share(f) => format!("{:.0}% CPU work, then a timed wait", 100.0 * f),
        }
    }
}

/// Kernel rounds per second of one core, measured once.
#[derive(Debug, Clone, Copy)]
pub struct Calibration {
    /// Rounds per second.
    pub rounds_per_second: f64,
}

impl Calibration {
    /// Runs the kernel for about `duration` and measures its rate.
    pub fn measure(duration: Duration) -> Self {
        let start = Instant::now();
        let mut rounds = 0u64;
        let mut batch = 1_000u64;
        let mut sink = 0u64;
        while start.elapsed() < duration {
            sink ^= Synthetic::expected(rounds, std::hint::black_box(batch));
            rounds += batch;
            batch = (batch * 2).min(200_000);
        }
        std::hint::black_box(sink);
        let s = start.elapsed().as_secs_f64().max(1e-9);
        Self {
            rounds_per_second: rounds as f64 / s,
        }
    }

    /// Rounds worth `seconds` of one core.
    pub fn rounds(&self, seconds: f64) -> u64 {
        (seconds * self.rounds_per_second).max(0.0).round() as u64
    }
}

/// Runs `rounds` rounds of the kernel (a slice of a task).
pub(crate) fn spin(rounds: u64, seed: u64) -> u64 {
    Synthetic::expected(seed, std::hint::black_box(rounds))
}
