//! The phased schedule: one phase after the other, each as long as its busiest link.

use super::Burst;
use crate::plan::Plan;

/// Returns `(steps, phases, bursts)`.
pub(super) fn run(plan: &Plan) -> (u64, u64, Vec<Burst>) {
    let mut start = 0u64;
    let mut bursts = Vec::new();
    for phase in &plan.phases {
        let mut longest = 0;
        for t in &phase.transfers {
            bursts.push(Burst {
                from: t.from,
                to: t.to,
                start,
                len: t.units,
            });
            longest = longest.max(t.units);
        }
        start = start.saturating_add(longest);
    }
    (start, plan.phases.len() as u64, bursts)
}
