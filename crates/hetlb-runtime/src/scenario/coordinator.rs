//! Rank 0's other job: knowing when the run is over.
//!
//! Every rank tells rank 0 when it becomes idle — nothing queued, nothing on its way to it —
//! with the tasks it has executed and received from outside so far, and whether more will
//! come from outside. The run is over when every rank's latest word is "idle, nothing more to
//! come" and the tasks executed add up to every task that ever entered the system: then none
//! can be on a link either.

use hetlb_sim::Scenario;

pub(crate) struct Coordinator {
    /// Per rank: (executed, arrived, arrivals done) at its last idle report.
    idle: Vec<Option<(u64, u64, bool)>>,
    /// Initial and injected tasks of the whole scenario.
    fixed: u64,
}

impl Coordinator {
    pub(crate) fn new(scenario: &Scenario, size: usize) -> Self {
        let setup = &scenario.setup;
        let fixed = setup.initial.iter().sum::<u64>()
            + setup.injections.iter().map(|i| i.tasks).sum::<u64>();
        Self {
            idle: vec![None; size],
            fixed,
        }
    }

    pub(crate) fn idle(&mut self, rank: usize, executed: u64, arrived: u64, done: bool) {
        if let Some(slot) = self.idle.get_mut(rank) {
            *slot = Some((executed, arrived, done));
        }
    }

    pub(crate) fn finished(&self) -> bool {
        let mut executed = 0u64;
        let mut arrived = 0u64;
        for s in &self.idle {
            match s {
                Some((e, a, true)) => {
                    executed += e;
                    arrived += a;
                }
                _ => return false,
            }
        }
        executed == self.fixed + arrived
    }
}
