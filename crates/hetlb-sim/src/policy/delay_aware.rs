//! The one-shot delay-aware policy of Mirtaheri & Grandinetti (003_… §§3.2, 4).

use super::{DecisionRecord, Delivery, Order, Policy, PolicyError, PolicyStats, View};
use hetlb_core::rules::delay_aware::{Compensation, LinkEstimate, Member, decide, estimate_load};

/// When external load enters a node, that node balances its neighbourhood with
/// [`hetlb_core::rules::delay_aware::decide`] and sends its own share over the links.
///
/// The centre knows its own load exactly; a neighbour's load is its last report aged by
/// `λ·Δt` (003_… §4). Only the centre's transfers are carried out: other overloaded
/// neighbours balance when load enters them.
///
/// # Example
/// ```
/// use hetlb_sim::policy::{DelayAware, Policy};
/// use hetlb_core::rules::delay_aware::Compensation;
/// let p = DelayAware::new(Compensation::Factor);
/// assert_eq!(p.name(), "delay-aware");
/// assert_eq!(DelayAware::new(Compensation::None).name(), "delay-aware (k = 1)");
/// ```
#[derive(Debug, Clone)]
pub struct DelayAware {
    compensation: Compensation,
    decisions: Vec<DecisionRecord>,
}

impl DelayAware {
    /// The policy with or without the compensating factor.
    pub fn new(compensation: Compensation) -> Self {
        Self {
            compensation,
            decisions: Vec::new(),
        }
    }
}

impl Policy for DelayAware {
    fn name(&self) -> String {
        match self.compensation {
            Compensation::Factor => "delay-aware".into(),
            Compensation::None => "delay-aware (k = 1)".into(),
        }
    }

    fn on_injection(
        &mut self,
        view: &dyn View,
        node: usize,
        orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        let now = view.now();
        let mut members = vec![Member {
            node,
            load: view.load(node) as f64,
            rate: view.rate(node),
        }];
        members.extend(view.neighbors(node).iter().map(|&j| {
            let report = view.reported(j);
            Member {
                node: j,
                load: estimate_load(report.load as f64, view.rate(j), now - report.time),
                rate: view.rate(j),
            }
        }));
        let link = |r: usize, l: usize| {
            let (from, to) = (members[r].node, members[l].node);
            match view.link(from, to) {
                Some((rate, latency)) => LinkEstimate { rate, latency },
                // Not adjacent: only the centre's transfers are carried out, and the centre
                // is adjacent to everyone; any estimate serves.
                None => LinkEstimate::INSTANT,
            }
        };
        let decision = decide(&members, link, self.compensation)?;
        let transfers: Vec<_> = decision.sent_by(node).copied().collect();
        orders.extend(transfers.iter().filter(|t| t.tasks > 0).map(|t| Order {
            from: node,
            to: t.to,
            tasks: t.tasks,
            delivery: Delivery::Link,
        }));
        self.decisions.push(DecisionRecord {
            time: now,
            centre: node,
            transfers,
        });
        Ok(())
    }

    fn uses_reports(&self) -> bool {
        true
    }

    fn stats(&self) -> PolicyStats {
        PolicyStats {
            balancings: self.decisions.len() as u64,
            decisions: self.decisions.clone(),
            ..PolicyStats::default()
        }
    }
}
