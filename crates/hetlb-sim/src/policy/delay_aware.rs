//! The one-shot delay-aware policy of Mirtaheri & Grandinetti (§§3.2, 4).

use super::{DecisionRecord, Delivery, Order, Policy, PolicyError, PolicyStats, View};
use hetlb_core::rules::delay_aware::{Compensation, LinkEstimate, Member, decide, estimate_load};

/// Whose transfers of the centre's plan are carried out.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum CarryOut {
    /// Only the centre's own transfers (`L_il(i)`); overloaded neighbours balance when load
    /// enters them.
    #[default]
    Centre,
    /// Every transfer of the plan (`L_il(r)` for every overloaded member `r`, e.g. `L_51(4)`
    /// in Mirtaheri & Grandinetti 2017 §4): each overloaded neighbour acts on the centre's plan at once. A sender and
    /// receiver that are not adjacent exchange through the centre (two hops,
    /// [`Delivery::Relay`]), and the plan times such a transfer as two store-and-forward hops.
    Neighbourhood,
}

/// When external load enters a node, that node balances its neighbourhood with
/// [`hetlb_core::rules::delay_aware::decide`] and the transfers are sent over the links.
///
/// The centre knows its own load exactly; a neighbour's load is its last report aged by
/// `λ·Δt` (Mirtaheri & Grandinetti 2017 §4). With [`CarryOut::Centre`] (the default) only the centre's transfers are
/// carried out: other overloaded neighbours balance when load enters them. With
/// [`CarryOut::Neighbourhood`] every overloaded member sends its planned share.
///
/// # Example
/// ```
/// use hetlb_sim::policy::{CarryOut, DelayAware, Policy};
/// use hetlb_core::rules::delay_aware::Compensation;
/// let p = DelayAware::new(Compensation::Factor);
/// assert_eq!(p.name(), "delay-aware");
/// assert_eq!(DelayAware::new(Compensation::None).name(), "delay-aware (k = 1)");
/// let all = DelayAware::new(Compensation::Factor).carry_out(CarryOut::Neighbourhood);
/// assert_eq!(all.name(), "delay-aware (whole plan)");
/// ```
#[derive(Debug, Clone)]
pub struct DelayAware {
    compensation: Compensation,
    carry: CarryOut,
    decisions: Vec<DecisionRecord>,
}

impl DelayAware {
    /// The policy with or without the compensating factor; the centre carries out its own
    /// transfers.
    pub fn new(compensation: Compensation) -> Self {
        Self {
            compensation,
            carry: CarryOut::Centre,
            decisions: Vec::new(),
        }
    }

    /// Whose transfers are carried out.
    pub fn carry_out(mut self, carry: CarryOut) -> Self {
        self.carry = carry;
        self
    }
}

impl Policy for DelayAware {
    fn name(&self) -> String {
        let base = match self.compensation {
            Compensation::Factor => "delay-aware",
            Compensation::None => "delay-aware (k = 1",
        };
        match (self.compensation, self.carry) {
            (Compensation::Factor, CarryOut::Centre) => base.into(),
            (Compensation::None, CarryOut::Centre) => format!("{base})"),
            (Compensation::Factor, CarryOut::Neighbourhood) => format!("{base} (whole plan)"),
            (Compensation::None, CarryOut::Neighbourhood) => format!("{base}, whole plan)"),
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
                // Not adjacent: both are neighbours of the centre, so the transfer goes
                // through it, two store-and-forward hops: L/λ₁ + L/λ₂ = L/(λ₁λ₂/(λ₁+λ₂)).
                None => match (view.link(from, node), view.link(node, to)) {
                    (Some((r1, d1)), Some((r2, d2))) => LinkEstimate {
                        rate: if r1.is_infinite() {
                            r2
                        } else if r2.is_infinite() {
                            r1
                        } else {
                            r1 * r2 / (r1 + r2)
                        },
                        latency: d1 + d2,
                    },
                    _ => LinkEstimate::INSTANT,
                },
            }
        };
        let decision = decide(&members, link, self.compensation)?;
        let carried: Vec<_> = match self.carry {
            CarryOut::Centre => decision.sent_by(node).copied().collect(),
            CarryOut::Neighbourhood => decision.transfers.clone(),
        };
        orders.extend(carried.iter().filter(|t| t.tasks > 0).map(|t| Order {
            from: t.from,
            to: t.to,
            tasks: t.tasks,
            delivery: if t.from == node || view.link(t.from, t.to).is_some() {
                Delivery::Link
            } else {
                Delivery::Relay { via: node }
            },
        }));
        self.decisions.push(DecisionRecord {
            time: now,
            centre: node,
            transfers: carried,
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
