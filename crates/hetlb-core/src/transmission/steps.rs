//! The state of a schedule simulated step by step (Rim, Jang & Kim 2003, §6.2), shared by the
//! per-processor reading and the stepwise reference of the pipeline.

use super::{Burst, Schedule, Togo, TransmissionError};

/// A schedule simulated step by step, one unit per link and step at most: what each node holds,
/// what reaches it in this step (it can leave in the next), the dimension it served last, and
/// the bursts of consecutive steps on each link. the per-processor reading of Rim et al.
/// (`per_processor`) and the stepwise reference of the pipeline (`stepwise`, in tests) differ
/// only in which units a node sends in a step.
pub(super) struct Steps {
    /// The cube's dimension.
    pub(super) n: usize,
    /// Units still to send over each link.
    pub(super) togo: Togo,
    /// Units each node holds.
    pub(super) current: Vec<u64>,
    /// The dimension each node served last.
    pub(super) last: Vec<usize>,
    /// Unit-hops still to send.
    pub(super) pending: u128,
    /// Units arriving at each node in this step.
    incoming: Vec<u64>,
    /// `open[k * n + m]`: the burst on link (k, dimension m) still being extended, if any.
    open: Vec<Option<usize>>,
    bursts: Vec<Burst>,
    step: u64,
    sent: bool,
}

impl Steps {
    /// Nodes holding `initial` units, with `togo` to send.
    pub(super) fn new(initial: &[u64], togo: Togo) -> Self {
        let n = togo.n as usize;
        let nodes = initial.len();
        Self {
            n,
            pending: togo.total(),
            togo,
            current: initial.to_vec(),
            last: vec![n.saturating_sub(1); nodes],
            incoming: vec![0; nodes],
            open: vec![None; nodes * n],
            bursts: Vec::new(),
            step: 0,
            sent: false,
        }
    }

    /// True while node `k` has units to send over some link.
    pub(super) fn sending(&self, k: usize) -> bool {
        self.togo.units[k * self.n..(k + 1) * self.n]
            .iter()
            .any(|&u| u > 0)
    }

    /// Node `k` sends one unit over dimension `m` in this step; true when that link has no
    /// more to carry.
    pub(super) fn send(&mut self, k: usize, m: usize) -> bool {
        let slot = k * self.n + m;
        self.togo.units[slot] -= 1;
        self.current[k] -= 1;
        self.pending -= 1;
        self.sent = true;
        self.last[k] = m;
        let to = k ^ (1 << m);
        self.incoming[to] += 1;
        let step = self.step;
        match self.open[slot] {
            Some(b) if self.bursts[b].start + self.bursts[b].len == step => {
                self.bursts[b].len += 1;
            }
            _ => {
                self.open[slot] = Some(self.bursts.len());
                self.bursts.push(Burst {
                    from: k,
                    to,
                    start: step,
                    len: 1,
                });
            }
        }
        self.togo.units[slot] == 0
    }

    /// Ends the step: what arrived can leave in the next.
    ///
    /// # Errors
    /// [`TransmissionError::Stalled`] when no unit moved in the step.
    pub(super) fn end_step(&mut self, schedule: Schedule) -> Result<(), TransmissionError> {
        if !std::mem::take(&mut self.sent) {
            return Err(TransmissionError::Stalled {
                schedule,
                step: self.step,
                pending: self.pending,
            });
        }
        for (held, inc) in self.current.iter_mut().zip(self.incoming.iter_mut()) {
            *held += std::mem::take(inc);
        }
        self.step += 1;
        Ok(())
    }

    /// `(steps, steps, bursts)`.
    pub(super) fn finish(self) -> (u64, u64, Vec<Burst>) {
        (self.step, self.step, self.bursts)
    }
}
